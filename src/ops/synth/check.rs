//! Synthesizer score checks: forward and the w2 / x gradients through the tape, against the f64
//! reference.

use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::synth::{synth_scores, synth_scores_backward_ref, synth_scores_ref, SynthDims};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    for (n, d) in [
        SynthDims {
            b: 2,
            t: 17,
            c: 16,
            n_head: 4,
            l: 20,
        },
        SynthDims {
            b: 1,
            t: 63,
            c: 32,
            n_head: 8,
            l: 127,
        },
    ]
    .iter()
    .enumerate()
    {
        let shapes = [
            vec![d.b, d.t, d.c],
            vec![d.c, d.c],
            vec![d.c],
            vec![d.hs(), d.l],
            vec![d.l],
        ];
        let vals: Vec<Vec<f64>> = shapes
            .iter()
            .enumerate()
            .map(|(k, s)| rand_vec(100 + 10 * n as u64 + k as u64, s.iter().product()))
            .collect();
        let mut vars = vec![];
        for (v, s) in vals.iter().zip(&shapes) {
            vars.push(Var::leaf(Tensor::from_f32(dev, s, &f32s(v))?, true));
        }
        let ds = rand_vec(150 + n as u64, d.b * d.n_head * d.t * d.t);
        let tape = Tape::new();
        let s = synth_scores(
            &tape, &vars[0], &vars[1], &vars[2], &vars[3], &vars[4], d.n_head,
        )?;
        let want = synth_scores_ref(&vals[0], &vals[1], &vals[2], &vals[3], &vals[4], d);
        let case = format!(
            "(B={}, T={}, C={}, nh={}, L={})",
            d.b, d.t, d.c, d.n_head, d.l
        );
        out.push(CheckResult::compare(
            "synth",
            format!("forward {case}"),
            &s.value().to_vec_f32().await?,
            &want,
            1e-4,
        ));
        s.grad_or_zeros()?.write_f32(&f32s(&ds))?;
        tape.backward(&Var::leaf(Tensor::zeros(dev, &[1])?, true))?;
        let mut g: Vec<Vec<f64>> = vals.iter().map(|v| vec![0.0; v.len()]).collect();
        if let [a, b, c, e, f] = &mut g[..] {
            synth_scores_backward_ref(
                &vals[0],
                &vals[1],
                &vals[2],
                &vals[3],
                &ds,
                d,
                [a, b, c, e, f],
            );
        }
        for (k, name) in ["dx", "dw1", "db1", "dw2", "db2"].iter().enumerate() {
            if let Some(gt) = vars[k].grad() {
                out.push(CheckResult::compare(
                    "synth",
                    format!("backward {name} {case}"),
                    &gt.to_vec_f32().await?,
                    &g[k],
                    1e-4,
                ));
            }
        }
    }
    Ok(out)
}
