//! Synthesizer scores on both backends (through the tape) vs the f64 reference, backward, finite
//! differences, T > L error.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::synth::{self, SynthDims};
use attnlab::Tensor;

const DIMS: &[SynthDims] = &[
    SynthDims {
        b: 2,
        t: 1,
        c: 16,
        n_head: 4,
        l: 20,
    },
    SynthDims {
        b: 2,
        t: 3,
        c: 16,
        n_head: 4,
        l: 20,
    },
    SynthDims {
        b: 2,
        t: 17,
        c: 16,
        n_head: 4,
        l: 20,
    },
    SynthDims {
        b: 1,
        t: 127,
        c: 32,
        n_head: 8,
        l: 127,
    },
];

struct Inputs {
    x: Vec<f64>,
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: Vec<f64>,
}

fn inputs(seed: u64, d: &SynthDims) -> Inputs {
    Inputs {
        x: uniform(seed, d.b * d.t * d.c),
        w1: uniform(seed + 1, d.c * d.c),
        b1: uniform(seed + 2, d.c),
        w2: uniform(seed + 3, d.hs() * d.l),
        b2: uniform(seed + 4, d.l),
    }
}

fn shapes(d: &SynthDims) -> [Vec<usize>; 5] {
    [
        vec![d.b, d.t, d.c],
        vec![d.c, d.c],
        vec![d.c],
        vec![d.hs(), d.l],
        vec![d.l],
    ]
}

#[test]
fn synth_scores_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for d in DIMS {
            let i = inputs(1, d);
            let sh = shapes(d);
            let vars: Vec<Var> = [&i.x, &i.w1, &i.b1, &i.w2, &i.b2]
                .iter()
                .zip(&sh)
                .map(|(v, s)| Var::leaf(upload(&g, s, v), false))
                .collect();
            let tape = Tape::new();
            let s = synth::synth_scores(
                &tape, &vars[0], &vars[1], &vars[2], &vars[3], &vars[4], d.n_head,
            )
            .unwrap();
            assert_eq!(s.shape(), &[d.b, d.n_head, d.t, d.t], "{kind}");
            assert_close(
                &format!("{kind} {d:?}"),
                &download(s.value()),
                &synth::synth_scores_ref(&i.x, &i.w1, &i.b1, &i.w2, &i.b2, d),
                1e-4,
                1e-4,
            );
        }
    }
}

#[test]
fn synth_scores_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for d in DIMS {
            let i = inputs(2, d);
            let sh = shapes(d);
            let ds = uniform(9, d.b * d.n_head * d.t * d.t);
            let vals = [&i.x, &i.w1, &i.b1, &i.w2, &i.b2];
            let pre: Vec<Vec<f64>> = vals
                .iter()
                .enumerate()
                .map(|(k, v)| uniform(20 + k as u64, v.len()))
                .collect();
            let mut want = pre.clone();
            {
                let [a, b, c, e, f] = &mut want[..] else {
                    unreachable!()
                };
                synth::synth_scores_backward_ref(
                    &i.x,
                    &i.w1,
                    &i.b1,
                    &i.w2,
                    &ds,
                    d,
                    [a, b, c, e, f],
                );
            }
            let vars: Vec<Var> = vals
                .iter()
                .zip(&sh)
                .map(|(v, s)| Var::leaf(upload(&g, s, v), true))
                .collect();
            for (v, p) in vars.iter().zip(&pre) {
                v.grad_or_zeros().unwrap().write_f32(&to_f32(p)).unwrap();
            }
            let tape = Tape::new();
            let s = synth::synth_scores(
                &tape, &vars[0], &vars[1], &vars[2], &vars[3], &vars[4], d.n_head,
            )
            .unwrap();
            s.grad_or_zeros().unwrap().write_f32(&to_f32(&ds)).unwrap();
            tape.backward(&Var::leaf(Tensor::zeros(&g, &[1]).unwrap(), true))
                .unwrap();
            for (k, name) in ["dx", "dw1", "db1", "dw2", "db2"].iter().enumerate() {
                assert_close(
                    &format!("{kind} {name} {d:?}"),
                    &download(&vars[k].grad().unwrap()),
                    &want[k],
                    1e-4,
                    1e-4,
                );
            }
        }
    }
}

#[test]
fn synth_scores_backward_should_match_finite_differences() {
    for d in &DIMS[..3] {
        let i = inputs(3, d);
        let ds = uniform(10, d.b * d.n_head * d.t * d.t);
        let mut g: Vec<Vec<f64>> = [&i.x, &i.w1, &i.b1, &i.w2, &i.b2]
            .iter()
            .map(|v| vec![0.0; v.len()])
            .collect();
        {
            let [a, b, c, e, f] = &mut g[..] else {
                unreachable!()
            };
            synth::synth_scores_backward_ref(&i.x, &i.w1, &i.b1, &i.w2, &ds, d, [a, b, c, e, f]);
        }
        let f = |x: &[f64], w1: &[f64], b1: &[f64], w2: &[f64], b2: &[f64]| {
            dot(&synth::synth_scores_ref(x, w1, b1, w2, b2, d), &ds)
        };
        check_fd("dx", &i.x, &g[0], |v| f(v, &i.w1, &i.b1, &i.w2, &i.b2), 40);
        check_fd("dw1", &i.w1, &g[1], |v| f(&i.x, v, &i.b1, &i.w2, &i.b2), 40);
        check_fd("db1", &i.b1, &g[2], |v| f(&i.x, &i.w1, v, &i.w2, &i.b2), 40);
        check_fd("dw2", &i.w2, &g[3], |v| f(&i.x, &i.w1, &i.b1, v, &i.b2), 40);
        check_fd("db2", &i.b2, &g[4], |v| f(&i.x, &i.w1, &i.b1, &i.w2, v), 40);
    }
}

#[test]
fn synth_scores_rejects_t_longer_than_l_and_bad_shapes() {
    for g in devices() {
        let kind = g.kind();
        let d = SynthDims {
            b: 1,
            t: 21,
            c: 16,
            n_head: 4,
            l: 20,
        };
        let sh = shapes(&d);
        let vars: Vec<Var> = sh
            .iter()
            .map(|s| Var::leaf(Tensor::zeros(&g, s).unwrap(), true))
            .collect();
        let tape = Tape::new();
        let err = synth::synth_scores(&tape, &vars[0], &vars[1], &vars[2], &vars[3], &vars[4], 4)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("T = 21") && err.contains("L = block_size − 1 = 20"),
            "{kind}: {err}"
        );
        let err = synth::synth_scores(&tape, &vars[0], &vars[1], &vars[2], &vars[3], &vars[4], 3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("n_head = 3"), "{kind}: {err}");
        let err = synth::synth_scores(&tape, &vars[0], &vars[3], &vars[2], &vars[3], &vars[4], 4)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[1, 21, 16]") && err.contains("[4, 20]"),
            "{kind}: {err}"
        );
    }
}
