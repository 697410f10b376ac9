//! Softmax, causal and unmasked, on both backends: forward and backward vs the f64 reference, finite
//! differences, exact zeros above the diagonal (causal), shape errors.

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
    for (g, kind) in row_devices() {
        for &(z, t, scale) in CASES {
            // Scores spread over ±8 so the max subtraction matters.
            let x: Vec<f64> = uniform(1 + t as u64, z * t * t)
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
    for (g, kind) in row_devices() {
        for &(z, t, scale) in CASES {
            let n = z * t * t;
            let x: Vec<f64> = uniform(2 + t as u64, n).iter().map(|v| 4.0 * v).collect();
            let (dp, ds0) = (uniform(3, n), uniform(4, n));
            // The device's own P, so the comparison isolates the backward kernel.
            let tx = upload(&g, &[z, t, t], &x);
            let tp = Tensor::uninit(&g, &[z, t, t]).unwrap();
            softmax::causal_softmax_into(&tx, &tp, scale as f32).unwrap();
            let p = download(&tp);
            let mut want = ds0.clone();
            softmax::softmax_backward_ref(&p, &dp, t, scale, &mut want);
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
        let (x, dp) = (uniform(5 + t as u64, n), uniform(6, n));
        let p = softmax::causal_softmax_ref(&x, t, scale);
        let mut ds = vec![0.0; n];
        softmax::softmax_backward_ref(&p, &dp, t, scale, &mut ds);
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
    for (g, kind) in row_devices() {
        let (z, t) = (2, 17);
        let tape = Tape::new();
        let s = Var::leaf(upload(&g, &[z, t, t], &uniform(7, z * t * t)), true);
        let p = softmax::causal_softmax(&tape, &s, 0.5).unwrap();
        // Seed dP directly (a non-scalar output), then run the op's backward via the tape.
        p.grad_or_zeros()
            .unwrap()
            .write_f32(&to_f32(&uniform(8, z * t * t)))
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
    for (g, kind) in row_devices() {
        let tape = Tape::new();
        let s = Var::leaf(Tensor::zeros(&g, &[2, 3, 4]).unwrap(), true);
        let err = softmax::causal_softmax(&tape, &s, 1.0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("[2, 3, 4]"), "{kind}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// The unmasked variant (the ViT's bidirectional attention): rows of T keys, all visible.

/// (rows, T, scale): rows need not be square.
const UNMASKED: &[(usize, usize, f64)] = &[
    (1, 1, 1.0),
    (5, 3, 0.5),
    (34, 17, 0.25),
    (4, 127, 0.125),
    (3, 300, 1.0),
];

#[test]
fn softmax_forward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &(rows, t, scale) in UNMASKED {
            let x: Vec<f64> = uniform(11 + t as u64, rows * t)
                .iter()
                .map(|v| 8.0 * v)
                .collect();
            let want = softmax::softmax_ref(&x, t, scale);
            let tx = upload(&g, &[rows, t], &x);
            let out = Tensor::uninit(&g, &[rows, t]).unwrap();
            softmax::softmax_into(&tx, &out, scale as f32).unwrap();
            let got = download(&out);
            assert_close(
                &format!("{kind} unmasked softmax rows={rows} t={t}"),
                &got,
                &want,
                1e-4,
                1e-6,
            );
            // Every key is visible: every probability is positive and each row sums to 1.
            for (r, row) in got.chunks(t).enumerate() {
                let s: f64 = row.iter().sum();
                assert!((s - 1.0).abs() < 1e-5, "{kind}: row {r} sums to {s}");
                assert!(
                    row.iter().all(|&p| p > 0.0),
                    "{kind}: row {r} has a zero: {row:?}"
                );
            }
        }
    }
}

#[test]
fn softmax_reference_should_differ_from_causal_only_by_the_mask() {
    // A (T, T) score matrix: row T-1 sees every key in both variants, so it must agree; row 0
    // sees one key under the mask (P = 1) but all of them unmasked.
    let t = 5;
    let x = uniform(12, t * t);
    let (u, c) = (
        softmax::softmax_ref(&x, t, 0.7),
        softmax::causal_softmax_ref(&x, t, 0.7),
    );
    assert_close("last row", &u[(t - 1) * t..], &c[(t - 1) * t..], 1e-14, 0.0);
    assert_eq!(c[0], 1.0);
    assert!(
        u[0] < 0.9 && u[1] > 0.0,
        "first row unmasked: {:?}",
        &u[..t]
    );
}

#[test]
fn softmax_backward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &(rows, t, scale) in UNMASKED {
            let n = rows * t;
            let x: Vec<f64> = uniform(13 + t as u64, n).iter().map(|v| 4.0 * v).collect();
            let (dp, ds0) = (uniform(14, n), uniform(15, n));
            let tx = upload(&g, &[rows, t], &x);
            let tp = Tensor::uninit(&g, &[rows, t]).unwrap();
            softmax::softmax_into(&tx, &tp, scale as f32).unwrap();
            let p = download(&tp);
            let mut want = ds0.clone();
            softmax::softmax_backward_ref(&p, &dp, t, scale, &mut want);
            let tds = upload(&g, &[rows, t], &ds0);
            softmax::softmax_backward_into(&tp, &upload(&g, &[rows, t], &dp), &tds, scale as f32)
                .unwrap();
            assert_close(
                &format!("{kind} unmasked dS rows={rows} t={t}"),
                &download(&tds),
                &want,
                1e-4,
                1e-5,
            );
        }
    }
}

#[test]
fn softmax_backward_should_match_finite_differences() {
    for &(rows, t, scale) in &UNMASKED[..4] {
        let n = rows * t;
        let (x, dp) = (uniform(16 + t as u64, n), uniform(17, n));
        let p = softmax::softmax_ref(&x, t, scale);
        let mut ds = vec![0.0; n];
        softmax::softmax_backward_ref(&p, &dp, t, scale, &mut ds);
        check_fd(
            "unmasked dS",
            &x,
            &ds,
            |x| dot(&softmax::softmax_ref(x, t, scale), &dp),
            60,
        );
    }
}

#[test]
fn softmax_through_the_tape_should_give_every_score_a_gradient() {
    for (g, kind) in row_devices() {
        let (rows, t) = (6, 9);
        let tape = Tape::new();
        let x = uniform(18, rows * t);
        let s = Var::leaf(upload(&g, &[rows, t], &x), true);
        let p = softmax::softmax(&tape, &s, 0.5).unwrap();
        let dp = uniform(19, rows * t);
        p.grad_or_zeros().unwrap().write_f32(&to_f32(&dp)).unwrap();
        let ones = Var::leaf(Tensor::full(&g, &[1], 1.0).unwrap(), true);
        tape.backward(&ones).unwrap();
        let mut want = vec![0.0; rows * t];
        let pr = softmax::softmax_ref(&to_f64(&to_f32(&x)), t, 0.5);
        softmax::softmax_backward_ref(&pr, &to_f64(&to_f32(&dp)), t, 0.5, &mut want);
        assert_close(
            &format!("{kind} tape dS"),
            &download(&s.grad().unwrap()),
            &want,
            1e-4,
            1e-6,
        );
    }
}

#[test]
fn softmax_rejects_a_scalar_and_mismatched_output() {
    for (g, kind) in row_devices() {
        let tape = Tape::new();
        let s = Var::leaf(Tensor::zeros(&g, &[]).unwrap(), true);
        let err = softmax::softmax(&tape, &s, 1.0).unwrap_err().to_string();
        assert!(err.contains("scalar"), "{kind}: {err}");
        let a = Tensor::zeros(&g, &[2, 3]).unwrap();
        let b = Tensor::zeros(&g, &[3, 2]).unwrap();
        let err = softmax::softmax_into(&a, &b, 1.0).unwrap_err().to_string();
        assert!(err.contains("[2, 3]"), "{kind}: {err}");
    }
}
