//! A packed matmul for the page's relaxed-SIMD build: `C (+)= alpha·A·B` on any strides, with a
//! 4 × 8 register tile whose inner step is a fused multiply-add (`f32x4_relaxed_madd`), which
//! SIMD128, and so the `gemm` crate's wasm kernel, lacks (it multiplies, then adds).
//!
//! The blocking and packing are plain Rust, the same on every target, so they are tested natively
//! against a naive product (tests at the bottom); only the tile's four operations are SIMD, chosen
//! by target: `f32x4_relaxed_madd` on wasm32 with `relaxed-simd`, arrays of four lanes elsewhere.
//! B is packed a K block at a time into panels of 8 columns, A into panels of 4 rows, both padded
//! with zeros, so the tile never checks bounds; only the store back to C does.

/// K is taken in blocks of this many (a block of B's panels then stays in the cache).
const KC: usize = 256;
/// Rows of A packed at once.
const MC: usize = 64;
const MR: usize = 4;
const NR: usize = 8;

/// A view: element (i, j) at `i*row + j*col` from the pointer it comes with.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub row: usize,
    pub col: usize,
}

/// `C[m×n] = alpha·A[m×k]·B[k×n] (+ C when accumulate)`.
///
/// # Safety
/// Every element of each view (`a` over m × k, `b` over k × n, `c` over m × n) lies inside the
/// memory its pointer points into, and C's elements do not alias A's or B's.
#[allow(clippy::too_many_arguments)]
pub unsafe fn matmul(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    accumulate: bool,
    a: *const f32,
    av: View,
    b: *const f32,
    bv: View,
    c: *mut f32,
    cv: View,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                for j in 0..n {
                    *c.add(i * cv.row + j * cv.col) = 0.0;
                }
            }
        }
        return;
    }
    let panels = n.div_ceil(NR);
    SCRATCH.with(|s| {
        let (bp, ap) = &mut *s.borrow_mut();
        bp.resize(panels * NR * KC.min(k), 0.0);
        ap.resize(MC * KC.min(k), 0.0);
        blocks(
            (m, n, k),
            alpha,
            accumulate,
            (a, av),
            (b, bv),
            (c, cv),
            bp,
            ap,
        );
    });
}

thread_local! {
    /// The packed panels of B and A, kept between calls (the step makes hundreds of products).
    static SCRATCH: std::cell::RefCell<(Vec<f32>, Vec<f32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Whether a product is large enough for the packed kernel to pay for its packing: every side at
/// least 16, so the linear layers and the attention's per-head products (K or N = 32 at the
/// assignment's size), where it measured 1.4-1.5x and 1.2-1.3x `gemm`'s SIMD128 speed
/// (BENCHMARKS.md); thinner ones stay with `gemm`.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // natively only the tests build this file
pub fn pays((m, n, k): (usize, usize, usize)) -> bool {
    m >= 16 && n >= 16 && k >= 16
}

#[allow(clippy::too_many_arguments)]
unsafe fn blocks(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    accumulate: bool,
    (a, av): (*const f32, View),
    (b, bv): (*const f32, View),
    (c, cv): (*mut f32, View),
    bp: &mut [f32],
    ap: &mut [f32],
) {
    let panels = n.div_ceil(NR);
    for k0 in (0..k).step_by(KC) {
        let kc = KC.min(k - k0);
        pack_b(bp, b.add(k0 * bv.row), bv, kc, n);
        // The first K block sets or adds to C as asked; the later ones add to it.
        let add = accumulate || k0 > 0;
        for i0 in (0..m).step_by(MC) {
            let mc = MC.min(m - i0);
            pack_a(ap, a.add(i0 * av.row + k0 * av.col), av, mc, kc);
            for p in 0..panels {
                let j0 = p * NR;
                let bpanel = &bp[p * NR * kc..(p + 1) * NR * kc];
                for r in (0..mc).step_by(MR) {
                    let apanel = &ap[r * kc..(r + MR) * kc];
                    let tile = tile(apanel, bpanel, kc);
                    let dst = c.add((i0 + r) * cv.row + j0 * cv.col);
                    store(&tile, dst, cv, MR.min(mc - r), NR.min(n - j0), alpha, add);
                }
            }
        }
    }
}

/// B's rows `0..kc` packed as `[panel][kk][8 columns]`, zero past column n.
unsafe fn pack_b(bp: &mut [f32], b: *const f32, bv: View, kc: usize, n: usize) {
    for p in 0..n.div_ceil(NR) {
        let dst = &mut bp[p * NR * kc..(p + 1) * NR * kc];
        let cols = NR.min(n - p * NR);
        for kk in 0..kc {
            let src = b.add(kk * bv.row + p * NR * bv.col);
            let row = &mut dst[kk * NR..(kk + 1) * NR];
            for (j, x) in row.iter_mut().enumerate() {
                *x = if j < cols { *src.add(j * bv.col) } else { 0.0 };
            }
        }
    }
}

/// A's rows `0..mc` packed as `[panel of 4 rows][kk][4 rows]`, zero past row mc.
unsafe fn pack_a(ap: &mut [f32], a: *const f32, av: View, mc: usize, kc: usize) {
    for r0 in (0..mc).step_by(MR) {
        let dst = &mut ap[r0 * kc..(r0 + MR) * kc];
        for kk in 0..kc {
            for i in 0..MR {
                let r = r0 + i;
                dst[kk * MR + i] = if r < mc {
                    *a.add(r * av.row + kk * av.col)
                } else {
                    0.0
                };
            }
        }
    }
}

/// Scale the tile by alpha and set or add it into C's `rows × cols` corner at `dst`.
unsafe fn store(
    tile: &[[f32; NR]; MR],
    dst: *mut f32,
    cv: View,
    rows: usize,
    cols: usize,
    alpha: f32,
    add: bool,
) {
    for (i, line) in tile.iter().enumerate().take(rows) {
        for (j, &v) in line.iter().enumerate().take(cols) {
            let d = dst.add(i * cv.row + j * cv.col);
            *d = if add { *d + alpha * v } else { alpha * v };
        }
    }
}

/// The 4 × 8 tile of a packed A panel times a packed B panel over kc.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
fn tile(ap: &[f32], bp: &[f32], kc: usize) -> [[f32; NR]; MR] {
    use core::arch::wasm32::*;
    assert!(ap.len() >= MR * kc && bp.len() >= NR * kc);
    let z = f32x4_splat(0.0);
    let mut acc = [[z; 2]; MR];
    // SAFETY: the assert above keeps every load inside the two panels; wasm32 loads need no
    // alignment.
    unsafe {
        let (a, b) = (ap.as_ptr(), bp.as_ptr());
        for kk in 0..kc {
            let b0 = v128_load(b.add(kk * NR) as *const v128);
            let b1 = v128_load(b.add(kk * NR + 4) as *const v128);
            for (i, acc) in acc.iter_mut().enumerate() {
                let x = v128_load32_splat(a.add(kk * MR + i) as *const u32);
                acc[0] = f32x4_relaxed_madd(x, b0, acc[0]);
                acc[1] = f32x4_relaxed_madd(x, b1, acc[1]);
            }
        }
    }
    let mut out = [[0f32; NR]; MR];
    for (o, acc) in out.iter_mut().zip(acc) {
        for (h, v) in acc.iter().enumerate() {
            for l in 0..4 {
                o[h * 4 + l] = lane(*v, l);
            }
        }
    }
    out
}

#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
fn lane(v: core::arch::wasm32::v128, l: usize) -> f32 {
    use core::arch::wasm32::f32x4_extract_lane as x;
    match l {
        0 => x::<0>(v),
        1 => x::<1>(v),
        2 => x::<2>(v),
        _ => x::<3>(v),
    }
}

/// The same tile in plain Rust (native builds, where it is only tested; the order of the adds is
/// the SIMD tile's, one multiply-add per k, so the two differ only by the fused rounding).
#[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
fn tile(ap: &[f32], bp: &[f32], kc: usize) -> [[f32; NR]; MR] {
    let mut acc = [[0f32; NR]; MR];
    for kk in 0..kc {
        let b = &bp[kk * NR..(kk + 1) * NR];
        for (i, row) in acc.iter_mut().enumerate() {
            let x = ap[kk * MR + i];
            for (c, &bj) in row.iter_mut().zip(b) {
                *c = x.mul_add(bj, *c);
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(
        (m, n, k): (usize, usize, usize),
        a: &[f32],
        av: View,
        b: &[f32],
        bv: View,
    ) -> Vec<f64> {
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|kk| {
                        a[i * av.row + kk * av.col] as f64 * b[kk * bv.row + j * bv.col] as f64
                    })
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

    /// Awkward sizes (tails in every dimension, K over one block), transposed views, alpha, and
    /// both set and accumulate: every element within float rounding of the f64 product.
    #[test]
    fn packed_matmul_should_match_the_f64_product() {
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 5, 7),
            (4, 8, 16),
            (67, 9, 300),
            (5, 130, 513),
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
                            assert!((got - w).abs() <= 1e-5 * (1.0 + k as f64), "{m}x{n}x{k} ta={ta} tb={tb} acc={accumulate} ({i},{j}): {got} vs {w}");
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
}
