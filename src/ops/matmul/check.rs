//! Matmul checks: plain, both operands transposed, batched head views with a broadcast weight.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::matmul::{
    matmul_backward_into, matmul_backward_ref, matmul_into, matmul_ref, Spec, View,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    let cases = [
        ("17x33 · 33x5", Spec::plain(17, 33, 5)),
        // Whole 64 x 64 tiles and K a multiple of 16: the tiled kernel without bounds checks.
        ("whole tiles 128x32 · 32x64", Spec::plain(128, 32, 64)),
        // Every product of the forward and backward at least 16 on each side, K over 256: the
        // relaxed-SIMD build's packed kernel (src/ops/matmul/packed.rs) with a tail everywhere.
        ("linear size 67x300 · 300x71", Spec::plain(67, 300, 71)),
        (
            "Aᵀ·Bᵀ 65x3 · 3x127",
            Spec {
                a: View::contiguous(3, 65).t(),
                b: View::contiguous(127, 3).t(),
                ..Spec::plain(65, 3, 127)
            },
        ),
        (
            "(2,3) batches, broadcast B",
            Spec {
                z: (2, 3),
                a: View {
                    outer: 3 * 19 * 7,
                    inner: 19 * 7,
                    row: 7,
                    col: 1,
                },
                b: View {
                    outer: 0,
                    inner: 0,
                    row: 11,
                    col: 1,
                },
                c: View {
                    outer: 3 * 19 * 11,
                    inner: 19 * 11,
                    row: 11,
                    col: 1,
                },
                ..Spec::plain(19, 7, 11)
            },
        ),
    ];
    for (i, (name, s)) in cases.iter().enumerate() {
        let z = s.batches();
        let alen = if s.a.broadcast() {
            s.m * s.k
        } else {
            z * s.m * s.k
        };
        let blen = if s.b.broadcast() {
            s.k * s.n
        } else {
            z * s.k * s.n
        };
        let clen = z * s.m * s.n;
        let (a, b, dc) = (
            rand_vec(i as u64 * 3, alen),
            rand_vec(i as u64 * 3 + 1, blen),
            rand_vec(i as u64 * 3 + 2, clen),
        );
        let mut c = vec![0.0; clen];
        matmul_ref(&a, &b, None, &mut c, s, false);
        let (ta, tb) = (
            Tensor::from_f32(dev, &[alen], &f32s(&a))?,
            Tensor::from_f32(dev, &[blen], &f32s(&b))?,
        );
        let tc = Tensor::uninit(dev, &[clen])?;
        matmul_into(&ta, &tb, None, &tc, s, false)?;
        out.push(CheckResult::compare(
            "matmul",
            format!("forward {name}"),
            &tc.to_vec_f32().await?,
            &c,
            1e-4,
        ));
        let (mut da, mut db) = (vec![0.0; alen], vec![0.0; blen]);
        matmul_backward_ref(&a, &b, &dc, s, &mut da, &mut db, None);
        let tdc = Tensor::from_f32(dev, &[clen], &f32s(&dc))?;
        let (tda, tdb) = (Tensor::zeros(dev, &[alen])?, Tensor::zeros(dev, &[blen])?);
        matmul_backward_into(&ta, &tb, &tdc, s, Some(&tda), Some(&tdb), None)?;
        out.push(CheckResult::compare(
            "matmul",
            format!("backward dA {name}"),
            &tda.to_vec_f32().await?,
            &da,
            1e-4,
        ));
        out.push(CheckResult::compare(
            "matmul",
            format!("backward dB {name}"),
            &tdb.to_vec_f32().await?,
            &db,
            1e-4,
        ));
    }
    Ok(out)
}
