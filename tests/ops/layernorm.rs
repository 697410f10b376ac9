//! LayerNorm on both backends: forward with saved statistics and backward dx/dw/db (accumulating)
//! vs the f64 reference, finite differences.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::layernorm as ln;
use attnlab::Tensor;

const CS: &[usize] = &[1, 3, 17, 127, 256, 300];
const ROWS: &[usize] = &[1, 5, 33];

/// Rows with an offset and a spread, so the mean and variance are not trivially 0 and 1/3.
fn data(seed: u64, rows: usize, c: usize) -> Vec<f64> {
    uniform(seed, rows * c)
        .iter()
        .enumerate()
        .map(|(i, v)| 0.5 + 2.0 * v + (i / c.max(1)) as f64 * 0.1)
        .collect()
}

#[test]
fn layernorm_forward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &c in CS {
            for &rows in ROWS {
                let x = to_f64(&to_f32(&data(1, rows, c)));
                let (w, b) = (uniform(2, c), uniform(3, c));
                let (ty, tm, ts) = (
                    Tensor::uninit(&g, &[rows, c]).unwrap(),
                    Tensor::uninit(&g, &[rows]).unwrap(),
                    Tensor::uninit(&g, &[rows]).unwrap(),
                );
                ln::layernorm_into(
                    &upload(&g, &[rows, c], &x),
                    &upload(&g, &[c], &w),
                    &upload(&g, &[c], &b),
                    &ty,
                    &tm,
                    &ts,
                )
                .unwrap();
                let (y, mean, rstd) =
                    ln::layernorm_ref(&x, &to_f64(&to_f32(&w)), &to_f64(&to_f32(&b)), c);
                let what = format!("rows={rows} C={c}");
                assert_close(&format!("{kind} y {what}"), &download(&ty), &y, 1e-4, 1e-5);
                assert_close(
                    &format!("{kind} mean {what}"),
                    &download(&tm),
                    &mean,
                    1e-5,
                    1e-6,
                );
                assert_close(
                    &format!("{kind} rstd {what}"),
                    &download(&ts),
                    &rstd,
                    1e-4,
                    1e-5,
                );
            }
        }
    }
}

#[test]
fn layernorm_backward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &c in CS {
            for &rows in ROWS {
                let x = to_f64(&to_f32(&data(4, rows, c)));
                let (w, b, dy) = (
                    to_f64(&to_f32(&uniform(5, c))),
                    uniform(6, c),
                    uniform(7, rows * c),
                );
                let (mut dx, mut dw, mut db) =
                    (uniform(8, rows * c), uniform(9, c), uniform(10, c));
                let (tdx, tdw, tdb) = (
                    upload(&g, &[rows, c], &dx),
                    upload(&g, &[c], &dw),
                    upload(&g, &[c], &db),
                );
                let (tx, tw) = (upload(&g, &[rows, c], &x), upload(&g, &[c], &w));
                let (ty, tm, ts) = (
                    Tensor::uninit(&g, &[rows, c]).unwrap(),
                    Tensor::uninit(&g, &[rows]).unwrap(),
                    Tensor::uninit(&g, &[rows]).unwrap(),
                );
                ln::layernorm_into(&tx, &tw, &upload(&g, &[c], &b), &ty, &tm, &ts).unwrap();
                ln::layernorm_backward_into(
                    &tx,
                    &tw,
                    &tm,
                    &ts,
                    &upload(&g, &[rows, c], &dy),
                    Some(&tdx),
                    Some(&tdw),
                    Some(&tdb),
                )
                .unwrap();
                ln::layernorm_backward_ref(&x, &w, &dy, c, &mut dx, &mut dw, &mut db);
                let what = format!("rows={rows} C={c}");
                // C = 1 normalises to exactly 0: dx is then rstd·(g − g) = 0 up to rounding.
                assert_close(
                    &format!("{kind} dx {what}"),
                    &download(&tdx),
                    &dx,
                    1e-4,
                    1e-4,
                );
                assert_close(
                    &format!("{kind} dw {what}"),
                    &download(&tdw),
                    &dw,
                    1e-4,
                    1e-4,
                );
                assert_close(
                    &format!("{kind} db {what}"),
                    &download(&tdb),
                    &db,
                    1e-4,
                    1e-4,
                );
            }
        }
    }
}

#[test]
fn layernorm_backward_should_match_finite_differences() {
    for &c in &[1, 3, 17] {
        for &rows in &[1, 5] {
            let (x, w, b, dy) = (
                data(11, rows, c),
                uniform(12, c),
                uniform(13, c),
                uniform(14, rows * c),
            );
            let (mut dx, mut dw, mut db) = (vec![0.0; rows * c], vec![0.0; c], vec![0.0; c]);
            ln::layernorm_backward_ref(&x, &w, &dy, c, &mut dx, &mut dw, &mut db);
            let loss = |x: &[f64], w: &[f64], b: &[f64]| dot(&ln::layernorm_ref(x, w, b, c).0, &dy);
            check_fd("dx", &x, &dx, |x| loss(x, &w, &b), 40);
            check_fd("dw", &w, &dw, |w| loss(&x, w, &b), 40);
            check_fd("db", &b, &db, |b| loss(&x, &w, b), 40);
        }
    }
}

#[test]
fn layernorm_many_rows_use_several_partial_blocks() {
    // 1000 rows → 32 blocks of dw/db partials on the GPU; compare against the f64 reference.
    for (g, kind) in row_devices() {
        let (rows, c) = (1000, 65);
        let x = to_f64(&to_f32(&data(15, rows, c)));
        let (w, dy) = (to_f64(&to_f32(&uniform(16, c))), uniform(17, rows * c));
        let tape = Tape::new();
        let (vx, vw, vb) = (
            Var::leaf(upload(&g, &[10, 100, c], &x), false),
            Var::leaf(upload(&g, &[c], &w), true),
            Var::leaf(Tensor::zeros(&g, &[c]).unwrap(), true),
        );
        let y = ln::layernorm(&tape, &vx, &vw, &vb).unwrap();
        assert_eq!(y.shape(), &[10, 100, c], "{kind}");
        y.grad_or_zeros().unwrap().write_f32(&to_f32(&dy)).unwrap();
        // Only the layernorm node is on the tape: run it by hand through a zero-weight scalar loss.
        let loss = attnlab::ops::reduce::sum(
            &tape,
            &attnlab::ops::elementwise::scale(&tape, &y, 0.0).unwrap(),
        )
        .unwrap();
        tape.backward(&loss).unwrap();
        let (mut dx, mut dw, mut db) = (vec![0.0; rows * c], vec![0.0; c], vec![0.0; c]);
        ln::layernorm_backward_ref(&x, &w, &dy, c, &mut dx, &mut dw, &mut db);
        assert!(
            vx.grad().is_none(),
            "{kind}: an input that needs no gradient gets none"
        );
        assert_close(
            &format!("{kind} dw"),
            &download(&vw.grad().unwrap()),
            &dw,
            1e-4,
            1e-4,
        );
        assert_close(
            &format!("{kind} db"),
            &download(&vb.grad().unwrap()),
            &db,
            1e-4,
            1e-4,
        );
    }
}

#[test]
fn layernorm_used_twice_sums_gradients_and_rejects_bad_shapes() {
    // y = ln(x) + ln(x) with shared w, b: every gradient doubles.
    for (g, kind) in row_devices() {
        let (rows, c) = (5, 17);
        let (x, w, b, u) = (
            to_f64(&to_f32(&data(18, rows, c))),
            to_f64(&to_f32(&uniform(19, c))),
            uniform(20, c),
            uniform(21, rows * c),
        );
        let tape = Tape::new();
        let (vx, vw, vb) = (
            Var::leaf(upload(&g, &[rows, c], &x), true),
            Var::leaf(upload(&g, &[c], &w), true),
            Var::leaf(upload(&g, &[c], &b), true),
        );
        let y1 = ln::layernorm(&tape, &vx, &vw, &vb).unwrap();
        let y2 = ln::layernorm(&tape, &vx, &vw, &vb).unwrap();
        let y = attnlab::ops::elementwise::add(&tape, &y1, &y2).unwrap();
        // L = Σ y·u through sum(y ⊙ u) is not available here, so seed y's gradient and back-propagate
        // through a zero-weight loss.
        y.grad_or_zeros().unwrap().write_f32(&to_f32(&u)).unwrap();
        let loss = attnlab::ops::reduce::sum(
            &tape,
            &attnlab::ops::elementwise::scale(&tape, &y, 0.0).unwrap(),
        )
        .unwrap();
        tape.backward(&loss).unwrap();
        let (mut dx, mut dw, mut db) = (vec![0.0; rows * c], vec![0.0; c], vec![0.0; c]);
        ln::layernorm_backward_ref(&x, &w, &u, c, &mut dx, &mut dw, &mut db);
        let twice = |v: &[f64]| v.iter().map(|a| 2.0 * a).collect::<Vec<_>>();
        assert_close(
            &format!("{kind} dx"),
            &download(&vx.grad().unwrap()),
            &twice(&dx),
            1e-4,
            1e-4,
        );
        assert_close(
            &format!("{kind} dw"),
            &download(&vw.grad().unwrap()),
            &twice(&dw),
            1e-4,
            1e-4,
        );
        assert_close(
            &format!("{kind} db"),
            &download(&vb.grad().unwrap()),
            &twice(&db),
            1e-4,
            1e-4,
        );

        let bad = Var::leaf(Tensor::zeros(&g, &[c + 1]).unwrap(), true);
        let err = ln::layernorm(&tape, &vx, &bad, &vb)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("{:?}", [rows, c])) && err.contains(&format!("{:?}", [c + 1])),
            "{kind}: {err}"
        );
    }
}
