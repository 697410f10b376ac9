//! The packed kernel's blocking and packing against an f64 product, natively (its tile is plain
//! Rust here; the page's checks run the SIMD one).

use super::*;

fn naive((m, n, k): (usize, usize, usize), a: &[f32], av: View, b: &[f32], bv: View) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|kk| a[i * av.row + kk * av.col] as f64 * b[kk * bv.row + j * bv.col] as f64)
                .sum();
        }
    }
    c
}

fn data(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
        .collect()
}

/// Awkward sizes (tails in every dimension, K over one block, K not a multiple of 4), transposed
/// views, alpha, and both set and accumulate: every element within float rounding of the f64 product.
#[test]
fn packed_matmul_should_match_the_f64_product() {
    for &(m, n, k) in &[
        (1, 1, 1),
        (3, 5, 7),
        (4, 8, 16),
        (67, 9, 300),
        (5, 130, 513),
        // Whole panels with K tails past the 4 × 4 blocks (K blocks of 256 and 7).
        (8, 16, 18),
        (12, 24, 263),
        (64, 64, 0),
    ] {
        for &(ta, tb) in &[(false, false), (true, false), (false, true), (true, true)] {
            let a = data(m * k, 1);
            let b = data(k * n, 2);
            let av = if ta {
                View { row: 1, col: m }
            } else {
                View { row: k, col: 1 }
            };
            let bv = if tb {
                View { row: 1, col: k }
            } else {
                View { row: n, col: 1 }
            };
            // C is written with a row stride wider than n, to check the store's strides.
            let cv = View { row: n + 3, col: 1 };
            let want = naive((m, n, k), &a, av, &b, bv);
            for accumulate in [false, true] {
                let mut c = data(m * (n + 3), 3);
                let before = c.clone();
                // SAFETY: the views above cover exactly the vectors made for them.
                unsafe {
                    matmul(
                        (m, n, k),
                        0.5,
                        accumulate,
                        a.as_ptr(),
                        av,
                        b.as_ptr(),
                        bv,
                        c.as_mut_ptr(),
                        cv,
                    );
                }
                for i in 0..m {
                    for j in 0..n {
                        let base = if accumulate {
                            before[i * (n + 3) + j] as f64
                        } else {
                            0.0
                        };
                        let w = base + 0.5 * want[i * n + j];
                        let got = c[i * (n + 3) + j] as f64;
                        assert!(
                            (got - w).abs() <= 1e-5 * (1.0 + k as f64),
                            "{m}x{n}x{k} ta={ta} tb={tb} acc={accumulate} ({i},{j}): {got} vs {w}"
                        );
                    }
                    // The padding columns of C are untouched.
                    for j in n..n + 3 {
                        assert_eq!(c[i * (n + 3) + j], before[i * (n + 3) + j]);
                    }
                }
            }
        }
    }
}
