//! Causal softmax on both backends: forward and backward vs the f64 reference, finite differences,
//! exact zeros above the diagonal.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::softmax;
use attnlab::Tensor;

/// (leading batch, T, scale).
const CASES: &[(usize, usize, f64)] = &[
    (1, 1, 1.0),
    (2, 3, 0.5),
    (3, 17, 0.25),
    (2, 127, 0.125),
    (1, 300, 1.0),
];

#[test]
fn causal_softmax_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &(z, t, scale) in CASES {
            // Scores spread over ±8 so the max subtraction matters.
            let x: Vec<f64> = randn(1 + t as u64, z * t * t)
                .iter()
                .map(|v| 8.0 * v)
                .collect();
            let want = softmax::causal_softmax_ref(&x, t, scale);
            let tx = upload(&g, &[z, t, t], &x);
            let out = Tensor::uninit(&g, &[z, t, t]).unwrap();
            softmax::causal_softmax_into(&tx, &out, scale as f32).unwrap();
            let got = download(&out);
            assert_close(
                &format!("{kind} softmax z={z} t={t}"),
                &got,
                &want,
                1e-4,
                1e-6,
            );
            for r in 0..z * t {
                for j in (r % t + 1)..t {
                    assert!(
                        got[r * t + j] == 0.0,
                        "{kind}: masked P[{r},{j}] = {}",
                        got[r * t + j]
                    );
                }
            }
        }
    }
}

#[test]
fn causal_softmax_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &(z, t, scale) in CASES {
            let n = z * t * t;
            let x: Vec<f64> = randn(2 + t as u64, n).iter().map(|v| 4.0 * v).collect();
            let (dp, ds0) = (randn(3, n), randn(4, n));
            // The device's own P, so the comparison isolates the backward kernel.
            let tx = upload(&g, &[z, t, t], &x);
            let tp = Tensor::uninit(&g, &[z, t, t]).unwrap();
            softmax::causal_softmax_into(&tx, &tp, scale as f32).unwrap();
            let p = download(&tp);
            let mut want = ds0.clone();
            softmax::causal_softmax_backward_ref(&p, &dp, t, scale, &mut want);
            let tds = upload(&g, &[z, t, t], &ds0);
            softmax::causal_softmax_backward_into(
                &tp,
                &upload(&g, &[z, t, t], &dp),
                &tds,
                scale as f32,
            )
            .unwrap();
            assert_close(
                &format!("{kind} dS z={z} t={t}"),
                &download(&tds),
                &want,
                1e-4,
                1e-5,
            );
        }
    }
}

#[test]
fn causal_softmax_backward_should_match_finite_differences() {
    for &(z, t, scale) in &CASES[..4] {
        let n = z * t * t;
        let (x, dp) = (randn(5 + t as u64, n), randn(6, n));
        let p = softmax::causal_softmax_ref(&x, t, scale);
        let mut ds = vec![0.0; n];
        softmax::causal_softmax_backward_ref(&p, &dp, t, scale, &mut ds);
        check_fd(
            "dS",
            &x,
            &ds,
            |x| dot(&softmax::causal_softmax_ref(x, t, scale), &dp),
            60,
        );
    }
}

#[test]
fn causal_softmax_masked_gradients_are_exactly_zero_through_the_tape() {
    for g in devices() {
        let kind = g.kind();
        let (z, t) = (2, 17);
        let tape = Tape::new();
        let s = Var::leaf(upload(&g, &[z, t, t], &randn(7, z * t * t)), true);
        let p = softmax::causal_softmax(&tape, &s, 0.5).unwrap();
        // Seed dP directly (a non-scalar output), then run the op's backward via the tape.
        p.grad_or_zeros()
            .unwrap()
            .write_f32(&to_f32(&randn(8, z * t * t)))
            .unwrap();
        // backward() needs a scalar; any scalar leaf will do, the tape replays every recorded op.
        let ones = Var::leaf(Tensor::full(&g, &[1], 1.0).unwrap(), true);
        tape.backward(&ones).unwrap();
        let ds = download(&s.grad().unwrap());
        for r in 0..z * t {
            for j in 0..t {
                let v = ds[r * t + j];
                if j > r % t {
                    assert!(v == 0.0, "{kind}: masked dS[{r},{j}] = {v}");
                } else if r % t > 0 {
                    // Row 0 has one key, P = 1, and its gradient is exactly 0 too.
                    assert!(v != 0.0, "{kind}: visible dS[{r},{j}] is 0");
                }
            }
        }
    }
}

#[test]
fn causal_softmax_rejects_non_square_scores() {
    for g in devices() {
        let kind = g.kind();
        let tape = Tape::new();
        let s = Var::leaf(Tensor::zeros(&g, &[2, 3, 4]).unwrap(), true);
        let err = softmax::causal_softmax(&tape, &s, 1.0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("[2, 3, 4]"), "{kind}: {err}");
    }
}
