//! The row kernels' subgroup builds (softmax, layernorm, cross-entropy over
//! `shaders/rows_subgroup.wgsl`): where the adapter offers subgroups they are the ones that run,
//! give the same bits run after run on one device, and agree with the workgroup-tree builds. Each
//! family's tests compare both builds with the f64 references (`common::row_devices`).

use crate::common::*;
use attnlab::ops::{cross_entropy, layernorm, softmax};
use attnlab::{Device, Tensor};
use std::rc::Rc;

/// Every row kernel forward and backward once, on seeded inputs of awkward sizes; their outputs.
fn run_rows(g: &Rc<Device>) -> Vec<Vec<f32>> {
    let (z, t, rows, c) = (3, 37, 45, 77);
    let f = |seed, shape: &[usize]| upload(g, shape, &uniform(seed, shape.iter().product()));
    let scores = f(40, &[z, t, t]);
    let (prob, dprob) = (Tensor::zeros(g, &[z, t, t]).unwrap(), f(41, &[z, t, t]));
    softmax::causal_softmax_into(&scores, &prob, 0.3).unwrap();
    let dscores = Tensor::zeros(g, &[z, t, t]).unwrap();
    softmax::causal_softmax_backward_into(&prob, &dprob, &dscores, 0.3).unwrap();
    let (x, w, b) = (f(42, &[rows, c]), f(43, &[c]), f(44, &[c]));
    let y = Tensor::zeros(g, &[rows, c]).unwrap();
    let (mean, rstd) = (
        Tensor::zeros(g, &[rows]).unwrap(),
        Tensor::zeros(g, &[rows]).unwrap(),
    );
    layernorm::layernorm_into(&x, &w, &b, &y, &mean, &rstd).unwrap();
    let (dy, dx) = (f(45, &[rows, c]), Tensor::zeros(g, &[rows, c]).unwrap());
    layernorm::layernorm_backward_into(&x, &w, &mean, &rstd, &dy, Some(&dx), None, None).unwrap();
    let targets: Vec<u32> = (0..rows as u32).map(|r| (r * 7) % c as u32).collect();
    let targets = Tensor::from_u32(g, &[rows], &targets).unwrap();
    let (loss, stats) = (
        Tensor::zeros(g, &[1]).unwrap(),
        Tensor::zeros(g, &[3 * rows + 1]).unwrap(),
    );
    cross_entropy::cross_entropy_into(&y, &targets, &loss, &stats).unwrap();
    let (dloss, dlogits) = (f(46, &[1]), Tensor::zeros(g, &[rows, c]).unwrap());
    cross_entropy::cross_entropy_backward_into(&y, &targets, &stats, &dloss, &dlogits).unwrap();
    [&prob, &dscores, &y, &mean, &rstd, &dx, &loss, &dlogits]
        .iter()
        .map(|t| t.read().unwrap())
        .collect()
}

#[test]
fn the_subgroup_row_kernels_run_where_offered_same_bits_every_run() {
    let devs = row_devices();
    let Some((sub, _)) = devs.iter().find(|(_, label)| label == "gpu subgroups") else {
        return; // row_devices said why (and fails on lavapipe)
    };
    let (tree, _) = &devs[1];
    let first = run_rows(sub);
    assert_eq!(first, run_rows(sub), "two runs on one device differ");
    let other = run_rows(tree);
    for (i, (a, b)) in first.iter().zip(&other).enumerate() {
        let got: Vec<f64> = a.iter().map(|&v| v as f64).collect();
        let want: Vec<f64> = b.iter().map(|&v| v as f64).collect();
        assert_close(
            &format!("output {i}, subgroups vs tree"),
            &got,
            &want,
            1e-5,
            1e-6,
        );
    }
    let g = sub.as_gpu().unwrap();
    let ran = g.pipelines();
    for want in [
        "softmax+subgroups::softmax",
        "softmax+subgroups::softmax_backward",
        "layernorm+subgroups::layernorm",
        "layernorm+subgroups::layernorm_backward_dx",
        "cross_entropy+subgroups::cross_entropy_rows",
        "cross_entropy+subgroups::cross_entropy_reduce",
    ] {
        assert!(ran.iter().any(|p| p == want), "{want} did not run: {ran:?}");
    }
    let tree_rows = [
        "softmax::softmax",
        "layernorm::layernorm",
        "cross_entropy::cross_entropy_rows",
    ];
    assert!(
        !ran.iter().any(|p| tree_rows.contains(&p.as_str())),
        "a tree build ran on the subgroup device: {ran:?}"
    );
}
