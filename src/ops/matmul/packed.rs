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
        // Grown, never shrunk: a small product between two large ones would have the next
        // large one zero the whole buffer again.
        let (need_b, need_a) = (panels * NR * KC.min(k), MC * KC.min(k));
        if bp.len() < need_b {
            bp.resize(need_b, 0.0);
        }
        if ap.len() < need_a {
            ap.resize(need_a, 0.0);
        }
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
    static SCRATCH: std::cell::RefCell<(Vec<f32>, Vec<f32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
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

/// B's rows `0..kc` packed as `[panel][kk][8 columns]`, zero past column n. Whole panels of a
/// row-major B copy 8 floats a row; of a transposed B (each column contiguous) move 4 × 4 blocks.
unsafe fn pack_b(bp: &mut [f32], b: *const f32, bv: View, kc: usize, n: usize) {
    for p in 0..n.div_ceil(NR) {
        let dst = &mut bp[p * NR * kc..(p + 1) * NR * kc];
        let cols = NR.min(n - p * NR);
        let first = b.add(p * NR * bv.col);
        let mut done = 0;
        if cols == NR && bv.col == 1 {
            for kk in 0..kc {
                let src = std::slice::from_raw_parts(first.add(kk * bv.row), NR);
                dst[kk * NR..(kk + 1) * NR].copy_from_slice(src);
            }
            done = kc;
        } else if cols == NR && bv.row == 1 {
            done = kc - kc % 4;
            for half in 0..NR / 4 {
                let col = |j: usize| first.add((half * 4 + j) * bv.col);
                let src = [col(0), col(1), col(2), col(3)];
                for kk in (0..done).step_by(4) {
                    transpose4(src.map(|c| c.add(kk)), &mut dst[kk * NR + half * 4..], NR);
                }
            }
        }
        for kk in done..kc {
            let src = first.add(kk * bv.row);
            let row = &mut dst[kk * NR..(kk + 1) * NR];
            for (j, x) in row.iter_mut().enumerate() {
                *x = if j < cols { *src.add(j * bv.col) } else { 0.0 };
            }
        }
    }
}

/// A's rows `0..mc` packed as `[panel of 4 rows][kk][4 rows]`, zero past row mc. Whole panels of
/// a row-major A move 4 × 4 blocks; of a transposed A (its 4 rows side by side) copy 4 floats.
unsafe fn pack_a(ap: &mut [f32], a: *const f32, av: View, mc: usize, kc: usize) {
    for r0 in (0..mc).step_by(MR) {
        let dst = &mut ap[r0 * kc..(r0 + MR) * kc];
        let first = a.add(r0 * av.row);
        let mut done = 0;
        if r0 + MR <= mc && av.row == 1 {
            for kk in 0..kc {
                let src = std::slice::from_raw_parts(first.add(kk * av.col), MR);
                dst[kk * MR..(kk + 1) * MR].copy_from_slice(src);
            }
            done = kc;
        } else if r0 + MR <= mc && av.col == 1 {
            done = kc - kc % 4;
            let row = |i: usize| first.add(i * av.row);
            let src = [row(0), row(1), row(2), row(3)];
            for kk in (0..done).step_by(4) {
                transpose4(src.map(|r| r.add(kk)), &mut dst[kk * MR..], MR);
            }
        }
        for kk in done..kc {
            for i in 0..MR {
                dst[kk * MR + i] = if r0 + i < mc {
                    *first.add(i * av.row + kk * av.col)
                } else {
                    0.0
                };
            }
        }
    }
}

/// Four runs of 4 floats (at `src[i]`) written transposed: `dst[j·step + i] = src[i][j]`.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
#[inline(always)]
unsafe fn transpose4(src: [*const f32; 4], dst: &mut [f32], step: usize) {
    use core::arch::wasm32::*;
    assert!(dst.len() >= 3 * step + 4);
    let r = src.map(|p| v128_load(p as *const v128));
    let lo01 = i32x4_shuffle::<0, 4, 1, 5>(r[0], r[1]);
    let hi01 = i32x4_shuffle::<2, 6, 3, 7>(r[0], r[1]);
    let lo23 = i32x4_shuffle::<0, 4, 1, 5>(r[2], r[3]);
    let hi23 = i32x4_shuffle::<2, 6, 3, 7>(r[2], r[3]);
    let d = dst.as_mut_ptr();
    v128_store(d as *mut v128, i64x2_shuffle::<0, 2>(lo01, lo23));
    v128_store(d.add(step) as *mut v128, i64x2_shuffle::<1, 3>(lo01, lo23));
    v128_store(
        d.add(2 * step) as *mut v128,
        i64x2_shuffle::<0, 2>(hi01, hi23),
    );
    v128_store(
        d.add(3 * step) as *mut v128,
        i64x2_shuffle::<1, 3>(hi01, hi23),
    );
}

/// The same in plain Rust (native builds, where the packed kernel is only tested).
#[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
unsafe fn transpose4(src: [*const f32; 4], dst: &mut [f32], step: usize) {
    for (i, p) in src.iter().enumerate() {
        for j in 0..4 {
            dst[j * step + i] = *p.add(j);
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
    if cols == NR && cv.col == 1 {
        // Whole rows of a row-major C: contiguous, so these loops vectorise.
        for (i, line) in tile.iter().enumerate().take(rows) {
            let d = std::slice::from_raw_parts_mut(dst.add(i * cv.row), NR);
            if add {
                d.iter_mut().zip(line).for_each(|(d, &v)| *d += alpha * v);
            } else {
                d.iter_mut().zip(line).for_each(|(d, &v)| *d = alpha * v);
            }
        }
        return;
    }
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
    // SAFETY: a v128 is four f32 lanes in order, so the two arrays have the same 128 bytes.
    unsafe { core::mem::transmute::<[[v128; 2]; MR], [[f32; NR]; MR]>(acc) }
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
#[path = "packed_tests.rs"]
mod tests;
