//! Matmul on both backends (and every GPU kernel): plain, transposed, batched with head views,
//! broadcast weights, bias, accumulate, vs the f64 reference.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::gpu::MatmulKernel;
use attnlab::ops::matmul::{self, Spec, View};
use attnlab::{Device, Tensor};
use std::rc::Rc;

/// All the shapes the checks run over: (Z1, Z2, M, N, K).
const SHAPES: &[(usize, usize, usize, usize, usize)] = &[
    (1, 1, 1, 1, 1),
    (1, 1, 3, 17, 5),
    (1, 1, 127, 65, 33),
    (2, 3, 17, 1, 127),
    (1, 2, 64, 64, 16),
    (2, 1, 128, 64, 32), // whole tiles: `matmul_exact` on the tiled path
    (3, 1, 70, 3, 129),
    (2, 2, 127, 16, 33),
    // vec4-able in every orientation but not whole tiles of either vec4 kernel.
    (1, 1, 36, 20, 44),
    // vec4-able only as Aᵀ·B (read along i and j), with a K % 4 tail.
    (2, 3, 20, 12, 7),
    // Long K over few tiles: split along K on the tiled kernels (exact, then with bounds checks).
    (1, 1, 64, 128, 1040),
    (1, 1, 70, 33, 700),
    // Many rows: dB is split along K and the bias gradient sums its rows in two passes, also
    // across batches.
    (1, 1, 600, 40, 24),
    (2, 3, 100, 20, 8),
    // Large products: the tiled choice's 128 x 128 tiles (whole, with a split K, then ragged).
    (1, 1, 256, 128, 40),
    (1, 1, 256, 128, 520),
    (1, 1, 300, 130, 33),
];

/// The views to try for one shape: every combination of transposed A, transposed B, and (when
/// batched) a broadcast B.
pub fn specs(z: (usize, usize), m: usize, n: usize, k: usize) -> Vec<(Spec, usize, usize)> {
    let zz = z.0 * z.1;
    let mut out = vec![];
    for ta in [false, true] {
        for tb in [false, true] {
            for bcast in [false, true] {
                if bcast && zz == 1 {
                    continue;
                }
                let a = if ta {
                    View {
                        outer: z.1 * m * k,
                        inner: m * k,
                        row: 1,
                        col: m,
                    }
                } else {
                    View {
                        outer: z.1 * m * k,
                        inner: m * k,
                        row: k,
                        col: 1,
                    }
                };
                let mut b = if tb {
                    View {
                        outer: z.1 * k * n,
                        inner: k * n,
                        row: 1,
                        col: k,
                    }
                } else {
                    View {
                        outer: z.1 * k * n,
                        inner: k * n,
                        row: n,
                        col: 1,
                    }
                };
                let blen = if bcast {
                    b.outer = 0;
                    b.inner = 0;
                    k * n
                } else {
                    zz * k * n
                };
                let c = View {
                    outer: z.1 * m * n,
                    inner: m * n,
                    row: n,
                    col: 1,
                };
                out.push((
                    Spec {
                        z,
                        m,
                        n,
                        k,
                        a,
                        b,
                        c,
                        alpha: 0.75,
                    },
                    zz * m * k,
                    blen,
                ));
            }
        }
    }
    out
}

/// Runs `f` once per matmul kernel, with the device and a label for the messages: the CPU
/// backend's, then every GPU kernel (`MatmulKernel::ALL`; a vec4 kernel takes the products it can
/// read as vec4 and leaves the rest to the adapter's default). Choosing the GPU kernel has no CPU
/// counterpart, so that part is GPU-only. The device's own choice is put back afterwards.
fn each_kernel(mut f: impl FnMut(&Rc<Device>, &str)) {
    for g in devices() {
        match g.as_gpu() {
            None => f(&g, g.kind()),
            Some(gpu) => {
                let before = gpu.matmul_kernel();
                for k in MatmulKernel::ALL {
                    gpu.set_matmul_kernel(k);
                    f(&g, &format!("gpu {}", k.name()));
                }
                gpu.set_matmul_kernel(before);
            }
        }
    }
}

#[test]
fn matmul_forward_should_match_reference() {
    each_kernel(|g, kernel| {
        for &(z1, z2, m, n, k) in SHAPES {
            for (s, alen, blen) in specs((z1, z2), m, n, k) {
                let (a, b, bias, c0) = (
                    uniform(1, alen),
                    uniform(2, blen),
                    uniform(3, n),
                    uniform(4, z1 * z2 * m * n),
                );
                for (with_bias, acc) in [(false, false), (true, false), (true, true)] {
                    let mut want = c0.clone();
                    matmul::matmul_ref(&a, &b, with_bias.then_some(&bias[..]), &mut want, &s, acc);
                    let (ta, tb, tbias, tc) = (
                        upload(g, &[alen], &a),
                        upload(g, &[blen], &b),
                        upload(g, &[n], &bias),
                        upload(g, &[c0.len()], &c0),
                    );
                    matmul::matmul_into(&ta, &tb, with_bias.then_some(&tbias), &tc, &s, acc)
                        .unwrap();
                    assert_close(
                        &format!("{kernel}: matmul {s:?} bias={with_bias} acc={acc}"),
                        &download(&tc),
                        &want,
                        1e-4,
                        1e-4,
                    );
                }
            }
        }
    });
}

#[test]
fn matmul_backward_should_match_reference() {
    each_kernel(|g, kernel| {
        for &(z1, z2, m, n, k) in SHAPES {
            for (s, alen, blen) in specs((z1, z2), m, n, k) {
                let (a, b, dc) = (
                    uniform(5, alen),
                    uniform(6, blen),
                    uniform(7, z1 * z2 * m * n),
                );
                let (mut da, mut db, mut dbias) =
                    (uniform(8, alen), uniform(9, blen), uniform(10, n));
                let (da0, db0, dbias0) = (da.clone(), db.clone(), dbias.clone());
                matmul::matmul_backward_ref(&a, &b, &dc, &s, &mut da, &mut db, Some(&mut dbias));
                let (ta, tb, tdc) = (
                    upload(g, &[alen], &a),
                    upload(g, &[blen], &b),
                    upload(g, &[dc.len()], &dc),
                );
                let (tda, tdb, tdbias) = (
                    upload(g, &[alen], &da0),
                    upload(g, &[blen], &db0),
                    upload(g, &[n], &dbias0),
                );
                matmul::matmul_backward_into(
                    &ta,
                    &tb,
                    &tdc,
                    &s,
                    Some(&tda),
                    Some(&tdb),
                    Some(&tdbias),
                )
                .unwrap();
                let what = format!("{kernel}: {s:?}");
                assert_close(&format!("dA {what}"), &download(&tda), &da, 1e-4, 1e-4);
                assert_close(&format!("dB {what}"), &download(&tdb), &db, 1e-4, 1e-4);
                assert_close(
                    &format!("dbias {what}"),
                    &download(&tdbias),
                    &dbias,
                    1e-4,
                    1e-4,
                );
            }
        }
    });
}

#[test]
fn matmul_backward_should_match_finite_differences() {
    for &(z1, z2, m, n, k) in &SHAPES[..4] {
        for (s, alen, blen) in specs((z1, z2), m, n, k) {
            let (a, b, bias, dc) = (
                uniform(11, alen),
                uniform(12, blen),
                uniform(13, n),
                uniform(14, z1 * z2 * m * n),
            );
            let loss = |a: &[f64], b: &[f64], bias: &[f64]| {
                let mut c = vec![0.0; dc.len()];
                matmul::matmul_ref(a, b, Some(bias), &mut c, &s, false);
                dot(&c, &dc)
            };
            let (mut da, mut db, mut dbias) = (vec![0.0; alen], vec![0.0; blen], vec![0.0; n]);
            matmul::matmul_backward_ref(&a, &b, &dc, &s, &mut da, &mut db, Some(&mut dbias));
            check_fd("dA", &a, &da, |x| loss(x, &b, &bias), 40);
            check_fd("dB", &b, &db, |x| loss(&a, x, &bias), 40);
            check_fd("dbias", &bias, &dbias, |x| loss(&a, &b, x), 40);
        }
    }
}

#[test]
fn matmul_rejects_views_outside_the_buffer() {
    for g in devices() {
        let kind = g.kind();
        let a = Tensor::zeros(&g, &[3, 4]).unwrap();
        let b = Tensor::zeros(&g, &[3, 2]).unwrap();
        let c = Tensor::zeros(&g, &[3, 2]).unwrap();
        let err = matmul::matmul_into(&a, &b, None, &c, &Spec::plain(3, 4, 2), false).unwrap_err();
        assert!(
            err.to_string()
                .contains("operand B needs 8 elements but its tensor has 6"),
            "{kind}: {err}"
        );
        let tape = Tape::new();
        let x = Var::leaf(Tensor::zeros(&g, &[7, 3]).unwrap(), false);
        let w = Var::leaf(Tensor::zeros(&g, &[5, 4]).unwrap(), true);
        let err = matmul::linear(&tape, &x, &w, None).unwrap_err().to_string();
        assert!(
            err.contains("[7, 3]") && err.contains("[5, 4]"),
            "{kind}: {err}"
        );
    }
}

#[test]
fn linear_gradients_flow_through_the_tape() {
    for g in devices() {
        let kind = g.kind();
        let (n, k, o) = (5, 7, 3);
        let (x, w, b) = (uniform(20, n * k), uniform(21, o * k), uniform(22, o));
        let tape = Tape::new();
        let (vx, vw, vb) = (
            Var::leaf(upload(&g, &[n, k], &x), true),
            Var::leaf(upload(&g, &[o, k], &w), true),
            Var::leaf(upload(&g, &[o], &b), true),
        );
        let y = matmul::linear(&tape, &vx, &vw, Some(&vb)).unwrap();
        assert_eq!(y.shape(), &[n, o], "{kind}");
        // L = Σ_n (y·u)[n], so dL/dy[n, o] = u[o].
        let ones = Var::leaf(Tensor::full(&g, &[1, n], 1.0).unwrap(), false);
        let u = uniform(23, o);
        let vu = Var::leaf(upload(&g, &[o, 1], &u), false);
        let yu = matmul::matmul(&tape, &y, &vu, None, Spec::plain(n, o, 1), &[n, 1]).unwrap();
        let l1 = matmul::matmul(&tape, &ones, &yu, None, Spec::plain(1, n, 1), &[1, 1]).unwrap();
        tape.backward(&l1).unwrap();
        let dw1 = download(&vw.grad().unwrap());
        // dL/dW[o,k] = Σ_n u[o] x[n,k].
        let mut want = vec![0.0; o * k];
        for oi in 0..o {
            for ki in 0..k {
                want[oi * k + ki] = (0..n).map(|ni| u[oi] * x[ni * k + ki]).sum();
            }
        }
        assert_close(&format!("{kind} dW"), &dw1, &want, 1e-4, 1e-5);
        let db = download(&vb.grad().unwrap());
        assert_close(
            &format!("{kind} db"),
            &db,
            &u.iter().map(|ui| ui * n as f64).collect::<Vec<_>>(),
            1e-4,
            1e-5,
        );
    }
}

/// The attention's products through head views of (B, T, C) tensors (`bench::attention`: q·kᵀ and
/// att·v, strided and batched over (B, NH)), forward and backward, on every kernel; T = 12 lets the
/// vec4 kernels take both products, T = 13 only q·kᵀ.
#[test]
fn matmul_head_views_should_match_reference() {
    each_kernel(|g, kernel| {
        for t in [12, 13] {
            for case in attnlab::bench::attention(2, 3, t, 8) {
                let (s, [alen, blen, clen]) = (case.spec, case.lens);
                let (a, b, dc) = (uniform(30, alen), uniform(31, blen), uniform(32, clen));
                let mut want = vec![0.0; clen];
                matmul::matmul_ref(&a, &b, None, &mut want, &s, false);
                let (ta, tb) = (upload(g, &[alen], &a), upload(g, &[blen], &b));
                let tc = Tensor::zeros(g, &[clen]).unwrap();
                matmul::matmul_into(&ta, &tb, None, &tc, &s, false).unwrap();
                let what = format!("{kernel}: {}", case.name);
                assert_close(&what, &download(&tc), &want, 1e-4, 1e-4);
                let (mut da, mut db) = (vec![0.0; alen], vec![0.0; blen]);
                matmul::matmul_backward_ref(&a, &b, &dc, &s, &mut da, &mut db, None);
                let (tda, tdb) = (
                    Tensor::zeros(g, &[alen]).unwrap(),
                    Tensor::zeros(g, &[blen]).unwrap(),
                );
                let tdc = upload(g, &[clen], &dc);
                matmul::matmul_backward_into(&ta, &tb, &tdc, &s, Some(&tda), Some(&tdb), None)
                    .unwrap();
                assert_close(&format!("dA {what}"), &download(&tda), &da, 1e-4, 1e-4);
                assert_close(&format!("dB {what}"), &download(&tdb), &db, 1e-4, 1e-4);
            }
        }
    });
}
