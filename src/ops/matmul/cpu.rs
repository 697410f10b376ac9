//! The batched strided matmul on the CPU. Each batch is one call of the `gemm` crate's SIMD kernel,
//! which takes any row and column strides, so our views (transposes, heads, the synthesizer's
//! `w2[:, :T]`) are read in place as on the GPU. One big product is split over the threads inside
//! `gemm`; many small ones (attention: one per batch and head) are split over the threads by batch.

use gemm::Parallelism;
use std::ops::Range;

/// Where a batched matrix lives: element (z1, z2, i, j) is at `z1*outer + z2*inner + i*row + j*col`.
#[derive(Clone, Copy, Debug)]
pub struct Strides {
    pub outer: usize,
    pub inner: usize,
    pub row: usize,
    pub col: usize,
}

impl Strides {
    fn base(&self, z1: usize, z2: usize) -> usize {
        z1 * self.outer + z2 * self.inner
    }

    /// Whether every element of a (z.0, z.1, rows, cols) view has its own offset. Sufficient test:
    /// taken by increasing stride, each dimension of extent > 1 must step past everything the
    /// smaller ones reach. Contiguous batches and the attention heads' interleaved column blocks
    /// pass; a stride of 0 or a partial overlap fails.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // wasm32 runs batches on one thread
    fn disjoint(&self, z: (usize, usize), rows: usize, cols: usize) -> bool {
        let mut dims = [
            (self.col, cols),
            (self.row, rows),
            (self.inner, z.1),
            (self.outer, z.0),
        ];
        dims.sort_unstable();
        let mut reach = 0usize;
        for (stride, extent) in dims {
            if extent <= 1 {
                continue;
            }
            if stride <= reach {
                return false;
            }
            reach = reach.saturating_add(stride.saturating_mul(extent - 1));
        }
        true
    }
}

/// A batched product `C[z] (+)= alpha·A[z]·B[z]`; the caller checked every view stays in bounds.
pub struct Product {
    pub z: (usize, usize),
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Strides,
    pub b: Strides,
    pub c: Strides,
    pub alpha: f32,
    pub accumulate: bool,
}

#[derive(Clone, Copy)]
struct Ptr(*mut f32);
// SAFETY: batches run on several threads only when C's view gives every element its own offset
// (`Strides::disjoint`), so no two threads write one element; any other C runs its batches in
// order. The pointer is only shared to hand each thread its own batches.
unsafe impl Send for Ptr {}
unsafe impl Sync for Ptr {}

/// Run the product. `bias` (N values) is added to every row when given.
pub fn matmul(
    a: &[f32],
    b: &[f32],
    bias: Option<&[f32]>,
    c: &mut [f32],
    p: &Product,
    threads: usize,
) {
    let (z1, z2) = p.z;
    let batches = z1 * z2;
    if batches == 0 || p.m == 0 || p.n == 0 {
        return;
    }
    let cp = Ptr(c.as_mut_ptr());
    let one = move |z: usize, par: Parallelism| {
        block(a, b, bias, cp, p, (z / z2, z % z2), (0..p.m, 0..p.n), par);
    };
    let shared_c = p.c.outer == 0 && p.c.inner == 0;
    #[cfg(not(target_arch = "wasm32"))]
    if batches == 1 && threads > 1 {
        split_one(a, b, bias, cp, p, threads);
        return;
    }
    if batches == 1 || shared_c || threads <= 1 {
        // One product, or batches that all add into one C (a shared operand's gradient): in order.
        let par = if threads > 1 {
            Parallelism::Rayon(threads)
        } else {
            Parallelism::None
        };
        for z in 0..batches {
            one(z, par);
        }
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    if p.c.disjoint(p.z, p.m, p.n) {
        use rayon::prelude::*;
        (0..batches)
            .into_par_iter()
            .for_each(|z| one(z, Parallelism::None));
        return;
    }
    // One thread (wasm32), or batches whose parts of C overlap: the same per-batch work, in order.
    for z in 0..batches {
        one(z, Parallelism::None);
    }
}

/// The block `rows × cols` of batch `z`'s product: `C[rows, cols] (+)= alpha·A[rows, :]·B[:, cols]`
/// (+ bias[cols]). Blocks that do not overlap touch disjoint elements of C.
#[allow(clippy::too_many_arguments)]
fn block(
    a: &[f32],
    b: &[f32],
    bias: Option<&[f32]>,
    cp: Ptr,
    p: &Product,
    (i1, i2): (usize, usize),
    (rows, cols): (Range<usize>, Range<usize>),
    par: Parallelism,
) {
    let (m, n) = (rows.len(), cols.len());
    if m == 0 || n == 0 {
        return;
    }
    let (r0, c0) = (rows.start, cols.start);
    // SAFETY: the op file checked that every view of every batch lies inside its slice, and the
    // block lies inside the batch.
    unsafe {
        let dst = cp.0.add(p.c.base(i1, i2) + r0 * p.c.row + c0 * p.c.col);
        if let (Some(bias), 1, false) = (bias, p.c.col, p.accumulate) {
            // Rows of C are contiguous: one copy per row (the strided loop below does not vectorise).
            let bias = &bias[c0..c0 + n];
            for i in 0..m {
                std::slice::from_raw_parts_mut(dst.add(i * p.c.row), n).copy_from_slice(bias);
            }
        } else if let Some(bias) = bias {
            let bias = &bias[c0..c0 + n];
            for i in 0..m {
                for (j, &b) in bias.iter().enumerate() {
                    let d = dst.add(i * p.c.row + j * p.c.col);
                    *d = if p.accumulate { *d + b } else { b };
                }
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
        if super::packed::pays((m, n, p.k)) {
            use super::packed::{matmul, View};
            let a = a.as_ptr().add(p.a.base(i1, i2) + r0 * p.a.row);
            let b = b.as_ptr().add(p.b.base(i1, i2) + c0 * p.b.col);
            let (av, bv) = (
                View {
                    row: p.a.row,
                    col: p.a.col,
                },
                View {
                    row: p.b.row,
                    col: p.b.col,
                },
            );
            let cv = View {
                row: p.c.row,
                col: p.c.col,
            };
            let add = p.accumulate || bias.is_some();
            matmul((m, n, p.k), p.alpha, add, a, av, b, bv, dst, cv);
            return;
        }
        gemm::gemm(
            m,
            n,
            p.k,
            dst,
            p.c.col as isize,
            p.c.row as isize,
            p.accumulate || bias.is_some(),
            a.as_ptr().add(p.a.base(i1, i2) + r0 * p.a.row),
            p.a.col as isize,
            p.a.row as isize,
            b.as_ptr().add(p.b.base(i1, i2) + c0 * p.b.col),
            p.b.col as isize,
            p.b.row as isize,
            1.0,
            p.alpha,
            false,
            false,
            false,
            par,
        );
    }
}

/// One product over the threads: the longer of M and N cut into one slab per thread (rows in
/// whole 64-row micro-tiles), each a single-threaded gemm. At the GPT's M = 1016 this beats gemm's
/// own split, which synchronises its threads once per K chunk. (Slabs of 128 handed out by work
/// stealing measured slower at M = 16256: each gemm call packs B and sets up its workspace anew.)
#[cfg(not(target_arch = "wasm32"))]
fn split_one(a: &[f32], b: &[f32], bias: Option<&[f32]>, cp: Ptr, p: &Product, threads: usize) {
    use rayon::prelude::*;
    let by_rows = p.m >= p.n;
    let len = if by_rows { p.m } else { p.n };
    let step = if by_rows { 64 } else { 16 };
    let per = len.div_ceil(threads).div_ceil(step).max(1) * step;
    (0..len.div_ceil(per)).into_par_iter().for_each(|t| {
        let part = t * per..((t + 1) * per).min(len);
        let ranges = if by_rows {
            (part, 0..p.n)
        } else {
            (0..p.m, part)
        };
        block(a, b, bias, cp, p, (0, 0), ranges, Parallelism::None);
    });
}

/// `dst[j·d_col (+ row of j)] (+)= Σ over batches and rows of src[z, i, j]`: the bias gradient and
/// the sum of per-batch slices. `dn` is the number of destination columns (j = r·dn + col).
#[allow(clippy::too_many_arguments)]
pub fn sum_rows(
    src: &[f32],
    sv: &Strides,
    z: (usize, usize),
    m: usize,
    n: usize,
    dst: &mut [f32],
    dv: (usize, usize, usize),
    accumulate: bool,
) {
    let (dn, d_row, d_col) = (dv.0.max(1), dv.1, dv.2);
    // Row by row into one accumulator per column: for every j the same order as the shader's
    // (batches, then rows), but reading memory in order.
    let mut acc = vec![0.0f32; n];
    for z1 in 0..z.0 {
        for z2 in 0..z.1 {
            for i in 0..m {
                let base = sv.base(z1, z2) + i * sv.row;
                if sv.col == 1 {
                    acc.iter_mut()
                        .zip(&src[base..base + n])
                        .for_each(|(a, s)| *a += s);
                } else {
                    acc.iter_mut()
                        .enumerate()
                        .for_each(|(j, a)| *a += src[base + j * sv.col]);
                }
            }
        }
    }
    for (j, s) in acc.into_iter().enumerate() {
        let d = &mut dst[(j / dn) * d_row + (j % dn) * d_col];
        *d = if accumulate { *d + s } else { s };
    }
}

#[cfg(test)]
mod tests {
    use super::Strides;

    fn s(outer: usize, inner: usize, row: usize, col: usize) -> Strides {
        Strides {
            outer,
            inner,
            row,
            col,
        }
    }

    /// C = 0.5·A·B + bias by the definition, A (m, k) row-major, B (k, n) column-major.
    fn naive(a: &[f32], b: &[f32], bias: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|l| a[i * k + l] as f64 * b[j * k + l] as f64)
                    .sum();
                c[i * n + j] = (0.5 * dot) as f32 + bias[j];
            }
        }
        c
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn slabs_over_threads_give_the_whole_product() {
        // Tall (split by rows into several slabs) and wide (split by columns), with a bias and a
        // transposed B, against the loop; then accumulating on top doubles the product.
        for (m, n, k) in [(300, 70, 33), (40, 290, 17), (129, 129, 8)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
            let b: Vec<f32> = (0..n * k).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
            let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.25).collect();
            let want = naive(&a, &b, &bias, m, n, k);
            for threads in [2, 3] {
                let mut p = super::Product {
                    z: (1, 1),
                    m,
                    n,
                    k,
                    a: s(0, 0, k, 1),
                    b: s(0, 0, 1, k),
                    c: s(0, 0, n, 1),
                    alpha: 0.5,
                    accumulate: false,
                };
                let mut c = vec![f32::NAN; m * n];
                super::matmul(&a, &b, Some(&bias), &mut c, &p, threads);
                assert_eq!(c, want, "{m}x{n}x{k} on {threads} threads");
                p.accumulate = true;
                super::matmul(&a, &b, None, &mut c, &p, threads);
                for (idx, (got, w)) in c.iter().zip(&want).enumerate() {
                    let expect = w + (w - bias[idx % n]);
                    assert!(
                        (got - expect).abs() <= 1e-4 * expect.abs().max(1.0),
                        "{idx}"
                    );
                }
            }
        }
    }

    #[test]
    fn disjoint_views_are_told_from_overlapping_ones() {
        // Contiguous (2, 3) batches of (4, 5) matrices, and their transpose.
        assert!(s(60, 20, 5, 1).disjoint((2, 3), 4, 5));
        assert!(s(60, 20, 1, 4).disjoint((2, 3), 4, 5));
        // Attention heads written into (B·T, C): B = 2, NH = 4, T = 7, HS = 8, C = 32.
        assert!(s(7 * 32, 8, 32, 1).disjoint((2, 4), 7, 8));
        // Heads one column too wide overlap their neighbours; a zero batch stride shares C.
        assert!(!s(7 * 32, 8, 32, 1).disjoint((2, 4), 7, 9));
        assert!(!s(0, 20, 5, 1).disjoint((2, 3), 4, 5));
        // Extents of 1 do not matter, whatever their stride.
        assert!(s(0, 0, 5, 1).disjoint((1, 1), 4, 5));
    }
}
