//! Matmul checks: plain, both operands transposed, batched with a broadcast weight, attention head
//! views, shapes the vec4 kernels read as vec4 (with a K tail); on a GPU under every kernel.

use crate::device::Device;
use crate::error::Result;
use crate::gpu::MatmulKernel;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::matmul::{
    matmul_backward_into, matmul_backward_ref, matmul_into, matmul_ref, Spec, View,
};
use crate::tensor::Tensor;
use std::rc::Rc;

/// The cases on the CPU backend, or on a GPU once per kernel (the device's choice put back after).
pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let Some(gpu) = dev.as_gpu() else {
        return check_cases(dev, "").await;
    };
    let before = gpu.matmul_kernel();
    let mut out = vec![];
    for k in MatmulKernel::ALL {
        gpu.set_matmul_kernel(k);
        let rows = check_cases(dev, &format!(" [{}]", k.name())).await;
        match rows {
            Ok(rows) => out.extend(rows),
            Err(e) => {
                gpu.set_matmul_kernel(before);
                return Err(e);
            }
        }
    }
    gpu.set_matmul_kernel(before);
    Ok(out)
}

async fn check_cases(dev: &Rc<Device>, kernel: &str) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    // (B, NH, T, HS) = (2, 2, 12, 8) heads of (B·T, 16) activations: q·kᵀ's operands.
    let head = View {
        outer: 12 * 16,
        inner: 8,
        row: 16,
        col: 1,
    };
    let cases = [
        ("17x33 · 33x5", Spec::plain(17, 33, 5)),
        // Whole 64 x 64 tiles and K a multiple of 16: the tiled kernel without bounds checks.
        ("whole tiles 128x32 · 32x64", Spec::plain(128, 32, 64)),
        // Every product of the forward and backward at least 16 on each side, K over 256: the
        // relaxed-SIMD build's packed kernel (src/ops/matmul/packed.rs) with a tail everywhere.
        ("linear size 67x300 · 300x71", Spec::plain(67, 300, 71)),
        // The tiled choice's large products: 128 x 128 tiles, whole and ragged, and a long K
        // over few tiles split into parts (on the 64 x 64 and on the 128 x 128 tiles).
        ("large 256x40 · 40x128", Spec::plain(256, 40, 128)),
        ("large ragged 300x33 · 33x130", Spec::plain(300, 33, 130)),
        ("long K 64x1040 · 1040x128", Spec::plain(64, 1040, 128)),
        (
            "large, long K 256x520 · 520x128",
            Spec::plain(256, 520, 128),
        ),
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
        // Read as vec4 by the vec4 kernels: rows along k and j, not whole tiles.
        ("vec4 36x44 · 44x20", Spec::plain(36, 44, 20)),
        (
            "vec4 Aᵀ·B 20x7 · 7x12 (K tail)",
            Spec {
                a: View::contiguous(7, 20).t(),
                ..Spec::plain(20, 7, 12)
            },
        ),
        (
            "heads q·kᵀ (2,2)x(12x8 · 8x12)",
            Spec {
                z: (2, 2),
                a: head,
                b: head.t(),
                c: View {
                    outer: 2 * 144,
                    inner: 144,
                    row: 12,
                    col: 1,
                },
                ..Spec::plain(12, 8, 12)
            },
        ),
    ];
    for (i, (name, s)) in cases.iter().enumerate() {
        let name = format!("{name}{kernel}");
        let extent = |v: &View, rows: usize, cols: usize| {
            v.offset(s.z.0 - 1, s.z.1 - 1, rows - 1, cols - 1) + 1
        };
        let (alen, blen) = (extent(&s.a, s.m, s.k), extent(&s.b, s.k, s.n));
        let clen = extent(&s.c, s.m, s.n);
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
