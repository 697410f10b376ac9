//! Gather on both backends: packed rows into blocks and back vs the f64 reference (exact), the
//! backward through the inverse map vs the scatter reference, finite differences, the tape, and
//! the map checks.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::gather::{self as ga, NONE};
use attnlab::Tensor;

/// (row lengths, block width, C)
const CASES: &[(&[usize], usize, usize)] = &[
    (&[1], 1, 1),
    (&[3, 1, 4], 4, 5),
    (&[127, 1, 60], 127, 17),
    (&[0, 9, 2, 9], 9, 300),
];

#[test]
fn gather_both_ways_should_match_reference_exactly() {
    for g in devices() {
        let kind = g.kind();
        for &(lens, t, c) in CASES {
            let (to_blocks, to_tokens) = ga::block_maps(lens, t);
            let n = to_tokens.len();
            for (idx, src) in [(&to_blocks, n), (&to_tokens, lens.len() * t)] {
                let x = uniform(3, src * c);
                let y = Tensor::uninit(&g, &[idx.len(), c]).unwrap();
                let ti = Tensor::from_u32(&g, &[idx.len()], idx).unwrap();
                ga::gather_into(&ti, &upload(&g, &[src, c], &x), &y).unwrap();
                let want = to_f64(&to_f32(&ga::gather_ref(idx, &x, c)));
                assert_close(
                    &format!("{kind} gather {lens:?}"),
                    &download(&y),
                    &want,
                    0.0,
                    0.0,
                );
            }
        }
    }
}

#[test]
fn gather_backward_through_the_inverse_should_match_the_scatter_reference() {
    for g in devices() {
        let kind = g.kind();
        for &(lens, t, c) in CASES {
            let (to_blocks, to_tokens) = ga::block_maps(lens, t);
            let n = to_tokens.len();
            for (idx, src) in [(&to_blocks, n), (&to_tokens, lens.len() * t)] {
                let inv = ga::inverse(idx, src).unwrap();
                let (dy, dx0) = (uniform(4, idx.len() * c), uniform(5, src * c));
                let mut want = dx0.clone();
                ga::gather_backward_ref(idx, &dy, c, &mut want);
                let dx = upload(&g, &[src, c], &dx0);
                let tinv = Tensor::from_u32(&g, &[src], &inv).unwrap();
                ga::gather_backward_into(&tinv, &upload(&g, &[idx.len(), c], &dy), &dx).unwrap();
                assert_close(
                    &format!("{kind} dx {lens:?}"),
                    &download(&dx),
                    &want,
                    1e-6,
                    1e-6,
                );
            }
        }
    }
}

#[test]
fn gather_backward_ref_should_match_finite_differences() {
    let (lens, t, c) = (&[2usize, 3][..], 3, 4);
    let (to_blocks, _) = ga::block_maps(lens, t);
    let n = 5;
    let (x, dy) = (uniform(6, n * c), uniform(7, to_blocks.len() * c));
    let mut grad = vec![0.0; n * c];
    ga::gather_backward_ref(&to_blocks, &dy, c, &mut grad);
    check_fd(
        "gather",
        &x,
        &grad,
        |x| dot(&ga::gather_ref(&to_blocks, x, c), &dy),
        usize::MAX,
    );
}

#[test]
fn gather_on_the_tape_should_give_the_gradient_of_a_tensor_used_twice() {
    for g in devices() {
        let (lens, t, c) = (&[2usize, 1][..], 2, 3);
        let (to_blocks, _) = ga::block_maps(lens, t);
        let inv = ga::inverse(&to_blocks, 3).unwrap();
        let x = Var::leaf(upload(&g, &[3, c], &uniform(8, 3 * c)), true);
        let (ti, tinv) = (
            Tensor::from_u32(&g, &[4], &to_blocks).unwrap(),
            Tensor::from_u32(&g, &[3], &inv).unwrap(),
        );
        let tape = Tape::new();
        let a = ga::gather(&tape, &x, &ti, &tinv).unwrap();
        let b = ga::gather(&tape, &x, &ti, &tinv).unwrap();
        let s = attnlab::ops::elementwise::add(&tape, &a, &b).unwrap();
        let loss = attnlab::ops::reduce::sum(&tape, &s).unwrap();
        tape.backward(&loss).unwrap();
        // Every real row is read once by each gather: its gradient is 2 everywhere.
        assert_close(
            &format!("{} twice", g.kind()),
            &download(&x.grad().unwrap()),
            &[2.0; 9],
            0.0,
            0.0,
        );
    }
}

#[test]
fn inverse_should_refuse_a_map_that_is_not_one_to_one() {
    assert_eq!(ga::inverse(&[2, NONE, 0], 3).unwrap(), vec![2, NONE, 0]);
    let twice = ga::inverse(&[1, 1], 3).unwrap_err().to_string();
    assert!(twice.contains("named twice"), "{twice}");
    let out = ga::inverse(&[3], 3).unwrap_err().to_string();
    assert!(out.contains("not below"), "{out}");
}

#[test]
fn gather_should_refuse_mismatched_shapes() {
    let g = devices().remove(0);
    let idx = Tensor::from_u32(&g, &[2], &[0, 1]).unwrap();
    let x = Tensor::zeros(&g, &[2, 3]).unwrap();
    let err = ga::gather_into(&idx, &x, &Tensor::zeros(&g, &[2, 4]).unwrap()).unwrap_err();
    assert!(err.to_string().contains("gather"), "{err}");
}
