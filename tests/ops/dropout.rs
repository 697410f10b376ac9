//! Dropout on both backends: the same hash (so the CPU backend and the GPU drop the same
//! elements), forward and backward vs the f64 reference, the rate, exact scaling, backward mask =
//! forward mask, seeds, p = 0 identity, bad p.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::dropout as dr;
use attnlab::Tensor;

const SIZES: &[usize] = &[1, 3, 17, 127, 1000, 70001];

/// Row keys for n elements: rows of 10 when n allows it, else rows of 1; scattered key values.
fn keys_for(n: usize) -> Vec<u32> {
    let rows = if n.is_multiple_of(10) { n / 10 } else { n };
    (0..rows as u32)
        .map(|r| r.wrapping_mul(2_654_435_761) ^ 5)
        .collect()
}

fn keys_on(g: &std::rc::Rc<attnlab::device::Device>, keys: &[u32]) -> Tensor {
    Tensor::from_u32(g, &[keys.len()], keys).unwrap()
}

/// On the GPU this is the WGSL port of the hash against the Rust one; on the CPU backend, its
/// kernel's indexing. Together: both backends draw the same masks.
#[test]
fn dropout_hash_should_agree_bit_for_bit_on_both_backends() {
    for g in devices() {
        let kind = g.kind();
        for seed in [0u32, 1, 12345, u32::MAX] {
            let (n, cols) = (100_000, 10);
            let keys = keys_for(n);
            let t = Tensor::uninit(&g, &[n]).unwrap();
            dr::dropout_bits_into(&t, &keys_on(&g, &keys), seed).unwrap();
            let got = pollster::block_on(t.to_vec_u32()).unwrap();
            let want: Vec<u32> = (0..n)
                .map(|i| dr::element_hash(seed, keys[i / cols], (i % cols) as u32))
                .collect();
            assert!(got == want, "{kind} seed {seed}: hashes differ");
        }
    }
}

#[test]
fn dropout_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            for (p, seed) in [(0.1f32, 7u32), (0.5, 8)] {
                let x = uniform(1, n);
                let keys = keys_for(n);
                let cols = n / keys.len();
                let y = Tensor::uninit(&g, &[n]).unwrap();
                dr::dropout_into(&upload(&g, &[n], &x), &y, &keys_on(&g, &keys), p, seed).unwrap();
                let got = y.read().unwrap();
                // Exactly x_f32 · scale_f32 where kept, 0 elsewhere.
                let s = dr::scale(p);
                let want: Vec<f32> = to_f32(&x)
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        if dr::dropout_keep(seed, keys[i / cols], (i % cols) as u32, p) {
                            v * s
                        } else {
                            0.0
                        }
                    })
                    .collect();
                assert!(got == want, "{kind} n={n} p={p}");
                assert_close(
                    &format!("{kind} dropout vs f64"),
                    &to_f64(&got),
                    &dr::dropout_ref(&x, &keys, p, seed),
                    1e-6,
                    0.0,
                );
            }
        }
    }
}

#[test]
fn dropout_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let (p, seed) = (0.3f32, 99u32);
            let (x, dy, pre) = (uniform(2, n), uniform(3, n), uniform(4, n));
            let keys = keys_for(n);
            let mut want = pre.clone();
            dr::dropout_backward_ref(&dy, &keys, p, seed, &mut want);
            let tape = Tape::new();
            let vx = Var::leaf(upload(&g, &[n], &x), true);
            vx.grad_or_zeros()
                .unwrap()
                .write_f32(&to_f32(&pre))
                .unwrap();
            let y = dr::dropout(&tape, &vx, &keys_on(&g, &keys), p, seed).unwrap();
            y.grad_or_zeros().unwrap().write_f32(&to_f32(&dy)).unwrap();
            tape.backward(&Var::leaf(Tensor::zeros(&g, &[1]).unwrap(), true))
                .unwrap();
            assert_close(
                &format!("{kind} dx n={n}"),
                &download(&vx.grad().unwrap()),
                &want,
                1e-6,
                1e-6,
            );
        }
    }
}

#[test]
fn dropout_backward_should_match_finite_differences() {
    for &n in &SIZES[..5] {
        let (x, dy, keys) = (uniform(5, n), uniform(6, n), keys_for(n));
        let mut dx = vec![0.0; n];
        dr::dropout_backward_ref(&dy, &keys, 0.25, 3, &mut dx);
        check_fd(
            "dx",
            &x,
            &dx,
            |x| dot(&dr::dropout_ref(x, &keys, 0.25, 3), &dy),
            60,
        );
    }
}

#[test]
fn dropout_rate_scaling_mask_and_seeds() {
    for g in devices() {
        let kind = g.kind();
        let n = 100_000;
        // Inputs bounded away from 0 so "output is 0" means "dropped".
        let x: Vec<f64> = uniform(7, n)
            .iter()
            .map(|v| if *v >= 0.0 { v + 0.5 } else { v - 0.5 })
            .collect();
        let tape = Tape::new();
        let keys = keys_on(&g, &keys_for(n));
        let vx = Var::leaf(upload(&g, &[n], &x), true);
        let y = dr::dropout(&tape, &vx, &keys, 0.1, 42).unwrap();
        let yv = y.value().read().unwrap();
        let dropped = yv.iter().filter(|&&v| v == 0.0).count() as f64 / n as f64;
        assert!(
            (dropped - 0.1).abs() <= 0.005,
            "{kind}: dropped fraction {dropped}"
        );
        let s = dr::scale(0.1);
        let xf = to_f32(&x);
        assert!(
            yv.iter().zip(&xf).all(|(&y, &x)| y == 0.0 || y == x * s),
            "{kind}: kept values not scaled exactly"
        );
        // Backward with dy = 1: the gradient is 0 exactly where the output is 0, scale elsewhere.
        y.grad_or_zeros().unwrap().write_f32(&vec![1.0; n]).unwrap();
        tape.backward(&Var::leaf(Tensor::zeros(&g, &[1]).unwrap(), true))
            .unwrap();
        let dx = vx.grad().unwrap().read().unwrap();
        assert!(
            dx.iter()
                .zip(&yv)
                .all(|(&d, &y)| (y == 0.0 && d == 0.0) || (y != 0.0 && d == s)),
            "{kind}: the backward mask is not the forward one"
        );
        // Another seed gives another mask.
        let y2 = Tensor::uninit(&g, &[n]).unwrap();
        dr::dropout_into(vx.value(), &y2, &keys, 0.1, 43).unwrap();
        let differ = y2
            .read()
            .unwrap()
            .iter()
            .zip(&yv)
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            differ > n / 20,
            "{kind}: seeds 42 and 43 differ in only {differ} places"
        );
    }
}

#[test]
fn dropout_p_zero_is_identity_and_bad_p_is_an_error() {
    for g in devices() {
        let kind = g.kind();
        let x = uniform(8, 127);
        let tape = Tape::new();
        let keys = keys_on(&g, &keys_for(127));
        let vx = Var::leaf(upload(&g, &[127], &x), true);
        let y = dr::dropout(&tape, &vx, &keys, 0.0, 1).unwrap();
        assert!(y.value().read().unwrap() == to_f32(&x), "{kind}: p = 0");
        let yk = Tensor::uninit(&g, &[127]).unwrap();
        dr::dropout_into(vx.value(), &yk, &keys, 0.0, 1).unwrap();
        assert!(yk.read().unwrap() == to_f32(&x), "{kind}: p = 0 kernel");
        for p in [1.0f32, -0.1, 1.5, f32::NAN] {
            let err = dr::dropout(&tape, &vx, &keys, p, 1)
                .unwrap_err()
                .to_string();
            assert!(err.contains("must be in [0, 1)"), "{kind} p={p}: {err}");
        }
        // Keys that do not divide the elements into rows are refused.
        let three = keys_on(&g, &[1, 2, 3]);
        let err = dr::dropout(&tape, &vx, &three, 0.1, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("row keys"), "{kind}: {err}");
    }
}

/// The point of the keys: a row drops the same elements wherever it sits and whatever the other
/// rows are (the GPT's padded, trimmed and packed batches lay the same tokens out differently).
#[test]
fn dropout_masks_should_follow_the_row_keys_not_the_layout() {
    for g in devices() {
        let kind = g.kind();
        let (cols, p, seed) = (33usize, 0.5f32, 77u32);
        let rows_a: Vec<u32> = vec![10, 11, 12, 200, 201];
        // Layout b: the same rows in another order, with two rows that layout a does not have.
        let rows_b: Vec<u32> = vec![201, 999, 12, 10, 500, 11, 200];
        let run = |keys: &[u32]| -> Vec<f32> {
            let x = vec![1.0f32; keys.len() * cols];
            let y = Tensor::uninit(&g, &[x.len()]).unwrap();
            let tx = Tensor::from_f32(&g, &[x.len()], &x).unwrap();
            dr::dropout_into(&tx, &y, &keys_on(&g, keys), p, seed).unwrap();
            y.read().unwrap()
        };
        let (a, b) = (run(&rows_a), run(&rows_b));
        for (i, k) in rows_a.iter().enumerate() {
            let j = rows_b.iter().position(|v| v == k).unwrap();
            assert_eq!(
                &a[i * cols..(i + 1) * cols],
                &b[j * cols..(j + 1) * cols],
                "{kind}: row key {k}"
            );
        }
    }
}
