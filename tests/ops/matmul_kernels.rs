//! Which GPU matmul kernel each product takes (about the WGSL entries alone, so on the GPU only):
//! the vec4 kernels only on vec4-able views, big tiles on large products, split-K on long ones,
//! two-pass bias sums on long ones.

use super::common::*;
use super::matmul::specs;
use attnlab::gpu::MatmulKernel;
use attnlab::ops::matmul::{self, Spec, View};

/// The kernel each product takes (GPU only: it is about which WGSL entry runs). A vec4 kernel
/// takes every orientation of a vec4-able shape, its bounds-check-free form only on whole tiles,
/// and leaves to the adapter's default a view with a row stride or batch offset that is not a
/// multiple of 4, a non-unit inner stride, or a vec4 axis whose length is not a multiple of 4.
#[test]
fn vec4_kernels_take_only_vec4_able_views() {
    let g = gpu();
    let gpu = g.as_gpu().unwrap();
    let before = gpu.matmul_kernel();
    let entry_with = |k: MatmulKernel, s: &Spec| {
        gpu.set_matmul_kernel(k);
        matmul::gpu::entry_for(gpu, s)
    };
    for (k, entry, tile) in [
        (MatmulKernel::Vec4x4, "matmul_v4", (32, 32)),
        (MatmulKernel::Vec8x4, "matmul_v8", (64, 32)),
    ] {
        for (s, _, _) in specs((1, 1), 36, 20, 44) {
            assert_eq!(entry_with(k, &s), (entry, false), "{s:?}");
        }
        let whole = Spec::plain(tile.0 * 2, 12, tile.1);
        assert_eq!(entry_with(k, &whole), (entry, true), "{whole:?}");
        // Of the 8 views of a K = 7 product only Aᵀ·B (A read along i, B along j, with and
        // without a broadcast B) keeps K off the vec4 axes.
        let tail = specs((2, 3), 20, 12, 7);
        let took = tail.iter().filter(|(s, _, _)| entry_with(k, s).0 == entry);
        assert_eq!(took.count(), 2, "{k:?}");
        let plain = Spec::plain(36, 44, 20);
        let not_vec4 = [
            Spec {
                a: View { row: 46, ..plain.a },
                ..plain
            },
            Spec {
                b: View { col: 2, ..plain.b },
                ..plain
            },
            Spec {
                z: (1, 2),
                a: View {
                    inner: 1582,
                    ..plain.a
                },
                ..plain
            },
            Spec::plain(36, 43, 20),
            Spec::plain(36, 44, 19),
        ];
        for s in not_vec4 {
            let want = entry_with(gpu.matmul_fallback(), &s);
            assert_eq!(entry_with(k, &s), want, "{k:?} {s:?}");
        }
    }
    gpu.set_matmul_kernel(before);
}

/// Which passes a product takes on the GPU's tiled choice (the reference checks above run the same
/// shapes): large products take the 128 x 128 tiles; a long K over few output tiles is split (the
/// exact kernel's partial products, then `sum_rows` over them) and a bias gradient over many rows
/// sums in two passes (`sum_rows_partial`); short products take neither. Each check uses a fresh
/// device, whose compiled pipelines name the entries that ran.
#[test]
fn large_products_take_big_tiles_long_ones_split_along_k_and_long_bias_sums_two_passes() {
    let ran = |m: usize, n: usize, k: usize, bias_grad: bool| {
        let g = gpu();
        let gpu = g.as_gpu().unwrap();
        gpu.set_matmul_kernel(MatmulKernel::Tiled);
        let s = Spec::plain(m, k, n);
        let (a, b, c) = (
            upload(&g, &[m * k], &uniform(1, m * k)),
            upload(&g, &[k * n], &uniform(2, k * n)),
            upload(&g, &[m * n], &uniform(3, m * n)),
        );
        if bias_grad {
            let (da, db, dbias) = (
                upload(&g, &[m * k], &uniform(4, m * k)),
                upload(&g, &[k * n], &uniform(5, k * n)),
                upload(&g, &[n], &uniform(6, n)),
            );
            matmul::matmul_backward_into(&a, &b, &c, &s, Some(&da), Some(&db), Some(&dbias))
                .unwrap();
            download(&dbias);
        } else {
            matmul::matmul_into(&a, &b, None, &c, &s, true).unwrap();
            download(&c);
        }
        gpu.pipelines()
    };
    let has = |p: &[String], e: &str| p.iter().any(|x| x == e);
    let split = ran(64, 128, 1040, false);
    assert!(
        has(&split, "matmul::matmul_exact") && has(&split, "matmul::sum_rows"),
        "{split:?}"
    );
    let short = ran(64, 128, 256, false);
    assert!(!has(&short, "matmul::sum_rows"), "{short:?}");
    let long_bias = ran(600, 40, 24, true);
    assert!(has(&long_bias, "matmul::sum_rows_partial"), "{long_bias:?}");
    let short_bias = ran(100, 40, 24, true);
    assert!(
        !has(&short_bias, "matmul::sum_rows_partial"),
        "{short_bias:?}"
    );
    let big = ran(256, 128, 40, false);
    assert!(has(&big, "matmul_big::matmul_big_exact"), "{big:?}");
    let ragged = ran(300, 130, 33, false);
    assert!(has(&ragged, "matmul_big::matmul_big"), "{ragged:?}");
    let big_split = ran(256, 128, 520, false);
    assert!(
        has(&big_split, "matmul_big::matmul_big_exact") && has(&big_split, "matmul::sum_rows"),
        "{big_split:?}"
    );
}
