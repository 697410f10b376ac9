//! The GPU side of matmul: the kernels' `Params`, which kernel a product takes (the device's choice,
//! `Gpu::matmul_kernel`, or its fallback when the choice cannot take the views) and the dispatches.

use super::{Spec, View};
use crate::error::{Error, Result};
use crate::gpu::{grid_1d, Gpu, Kernel, MatmulKernel};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/matmul.wgsl");
const VEC4: &str = include_str!("../../../shaders/matmul_vec4.wgsl");
const BIG: &str = include_str!("../../../shaders/matmul_big.wgsl");

const fn kernel(src: &'static str, family: &'static str, entry: &'static str) -> Kernel {
    Kernel { family, src, entry }
}

const MATMUL: Kernel = kernel(SRC, "matmul", "matmul");
/// The tiled kernel without bounds checks, for shapes that are whole tiles.
const MATMUL_EXACT: Kernel = kernel(SRC, "matmul", "matmul_exact");
/// The register-blocked variant for CPU adapters (same bindings, same 64 x 64 grid).
const MATMUL_REG: Kernel = kernel(SRC, "matmul", "matmul_reg");
/// The CPU-adapter variant for N <= 16: 64 x 16 tiles.
const MATMUL_REG16: Kernel = kernel(SRC, "matmul", "matmul_reg16");
/// vec4 reads, 4 x 4 outputs per thread, 32 x 32 per workgroup.
const MATMUL_V4: Kernel = kernel(VEC4, "matmul_vec4", "matmul_v4");
/// vec4 reads, 8 x 4 outputs per thread, 64 x 32 per workgroup.
const MATMUL_V8: Kernel = kernel(VEC4, "matmul_vec4", "matmul_v8");
/// The tiled choice for large products: 128 x 128 tiles, 8 x 8 outputs a thread.
const MATMUL_BIG: Kernel = kernel(BIG, "matmul_big", "matmul_big");
const MATMUL_BIG_EXACT: Kernel = kernel(BIG, "matmul_big", "matmul_big_exact");
/// Products with at least this many rows and columns take the 128 x 128 tiles on the tiled choice
/// (the GPT's linear layers); smaller ones (the attention's per-head products) the 64 x 64.
const BIG_ROWS: usize = 256;
const BIG_COLS: usize = 128;
const SUM_ROWS: Kernel = kernel(SRC, "matmul", "sum_rows");
/// The first pass of a column sum over many rows: partial sums of row chunks.
const SUM_ROWS_PARTIAL: Kernel = kernel(SRC, "matmul", "sum_rows_partial");

/// A column sum over at least this many rows takes two passes (`sum_rows_partial`, then
/// `sum_rows` over the chunks): one thread a column walking thousands of rows alone left most of
/// a hardware GPU idle (21% of a training step in a profile on an H100 80GB,
/// results/gpu-h100/).
const TWO_PASS_ROWS: usize = 512;
/// Rows a workgroup of `sum_rows_partial` adds up.
const SUM_CHUNK: usize = 128;

/// A product of one batch with fewer output tiles than this and a K of at least `SPLIT_MIN_K`
/// is split along K into partial products summed afterwards (the weight gradients: 256 x 768
/// outputs over thousands of tokens are 48 tiles, each walking every token).
const SPLIT_BELOW_TILES: usize = 64;
const SPLIT_MIN_K: usize = 512;
/// The K of one part is at least this, so each workgroup still does a fair share of work.
const SPLIT_MIN_PART: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    m: u32,
    n: u32,
    k: u32,
    nb_inner: u32,
    a: [u32; 4],
    b: [u32; 4],
    c: [u32; 4],
    alpha: f32,
    accumulate: u32,
    has_bias: u32,
    reads: u32,
    k_chunk: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SumParams {
    m: u32,
    n: u32,
    nb_outer: u32,
    nb_inner: u32,
    src: [u32; 4],
    accumulate: u32,
    dn: u32,
    d_row: u32,
    d_col: u32,
    chunk: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

pub(super) fn u(x: usize, what: &str) -> Result<u32> {
    u32::try_from(x)
        .map_err(|_| Error::Msg(format!("matmul: {what} = {x} does not fit in 32 bits")))
}

fn view32(v: &View) -> Result<[u32; 4]> {
    Ok([
        u(v.outer, "stride")?,
        u(v.inner, "stride")?,
        u(v.row, "stride")?,
        u(v.col, "stride")?,
    ])
}

/// How the vec4 kernels can read a product, as `matmul_vec4.wgsl`'s `p.reads` bits 0 and 1 (A
/// along k, B along j), or `None` when an operand is not vec4-able: neither axis contiguous, the
/// contiguous axis not a multiple of 4 long, or another stride (a batch offset included) not a
/// multiple of 4, so a vec4 read would straddle rows or sit off a 16-byte boundary.
pub(super) fn vec4_reads(s: &Spec) -> Option<u32> {
    let aligned = |v: &View, other: usize| {
        [v.outer, v.inner, other]
            .iter()
            .all(|&x| x.is_multiple_of(4))
    };
    let four = |x: usize| x.is_multiple_of(4);
    let (m4, n4, k4) = (four(s.m), four(s.n), four(s.k));
    let a_along_k = s.a.col == 1 && k4 && aligned(&s.a, s.a.row);
    let a_along_i = s.a.row == 1 && m4 && aligned(&s.a, s.a.col);
    let b_along_j = s.b.col == 1 && n4 && aligned(&s.b, s.b.row);
    let b_along_k = s.b.row == 1 && k4 && aligned(&s.b, s.b.col);
    if s.m == 0 || s.n == 0 || s.k == 0 || !(a_along_k || a_along_i) || !(b_along_j || b_along_k) {
        return None;
    }
    Some(a_along_k as u32 | (b_along_j as u32) << 1)
}

/// The entry point, its grid tile (columns, rows) and `p.reads` for a product on this device.
fn pick(gpu: &Gpu, s: &Spec) -> (&'static Kernel, (usize, usize), u32) {
    let mut choice = gpu.matmul_kernel();
    let reads = vec4_reads(s);
    if reads.is_none() && matches!(choice, MatmulKernel::Vec4x4 | MatmulKernel::Vec8x4) {
        choice = gpu.matmul_fallback();
    }
    let whole = |rows: usize, cols: usize| s.m.is_multiple_of(rows) && s.n.is_multiple_of(cols);
    let reads = reads.unwrap_or(0);
    match choice {
        MatmulKernel::Tiled if s.m >= BIG_ROWS && s.n >= BIG_COLS => {
            if whole(128, 128) && s.k.is_multiple_of(8) {
                (&MATMUL_BIG_EXACT, (128, 128), 0)
            } else {
                (&MATMUL_BIG, (128, 128), 0)
            }
        }
        MatmulKernel::Tiled if whole(64, 64) && s.k.is_multiple_of(16) => {
            (&MATMUL_EXACT, (64, 64), 0)
        }
        MatmulKernel::Tiled => (&MATMUL, (64, 64), 0),
        MatmulKernel::Registers if s.n <= 16 => (&MATMUL_REG16, (16, 64), 0),
        MatmulKernel::Registers => (&MATMUL_REG, (64, 64), 0),
        MatmulKernel::Vec4x4 => (&MATMUL_V4, (32, 32), reads | (whole(32, 32) as u32) << 2),
        MatmulKernel::Vec8x4 => (&MATMUL_V8, (32, 64), reads | (whole(64, 32) as u32) << 2),
    }
}

/// The WGSL entry point a product takes on this device, and whether it is the bounds-check-free
/// form (tests use it to prove that each kernel ran where it should).
pub fn entry_for(gpu: &Gpu, s: &Spec) -> (&'static str, bool) {
    let (k, _, reads) = pick(gpu, s);
    let exact = k.entry == MATMUL_EXACT.entry || k.entry == MATMUL_BIG_EXACT.entry;
    (k.entry, exact || reads & 4 != 0)
}

/// Record `C (+)= alpha·A·B (+ bias)`; the views are checked by the caller.
pub(super) fn matmul(
    gpu: &Gpu,
    [a, b, bias, c]: [&Tensor; 4],
    s: &Spec,
    has_bias: bool,
    accumulate: bool,
) -> Result<()> {
    let (k, (tile_n, tile_m), reads) = pick(gpu, s);
    if let Some(parts) = split_k(k, (tile_n, tile_m), s, has_bias) {
        return matmul_split(gpu, (k, (tile_n, tile_m)), [a, b, c], s, accumulate, parts);
    }
    let p = Params {
        m: u(s.m, "M")?,
        n: u(s.n, "N")?,
        k: u(s.k, "K")?,
        nb_inner: u(s.z.1.max(1), "Z2")?,
        a: view32(&s.a)?,
        b: view32(&s.b)?,
        c: view32(&s.c)?,
        alpha: s.alpha,
        accumulate: accumulate as u32,
        has_bias: has_bias as u32,
        reads,
        k_chunk: 0,
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
    };
    let groups = [
        u(s.n.div_ceil(tile_n), "N tiles")?,
        u(s.m.div_ceil(tile_m), "M tiles")?,
        u(s.batches(), "batch")?,
    ];
    gpu.dispatch(k, &p, &[a, b, bias, c], groups)
}

/// How many K parts a product is split into (None: not split). Only the tiled kernels split (the
/// CPU adapters' register kernels gain nothing from more workgroups), only one batch without a
/// bias, and only when few output tiles would each walk a long K.
fn split_k(
    k: &Kernel,
    (tile_n, tile_m): (usize, usize),
    s: &Spec,
    has_bias: bool,
) -> Option<usize> {
    let tiled = [&MATMUL, &MATMUL_EXACT, &MATMUL_BIG, &MATMUL_BIG_EXACT]
        .iter()
        .any(|t| t.entry == k.entry);
    let tiles = s.m.div_ceil(tile_m) * s.n.div_ceil(tile_n);
    if !tiled || has_bias || s.batches() != 1 || tiles >= SPLIT_BELOW_TILES || s.k < SPLIT_MIN_K {
        return None;
    }
    let parts = (2 * SPLIT_BELOW_TILES)
        .div_ceil(tiles)
        .min(s.k / SPLIT_MIN_PART);
    (parts >= 2).then_some(parts)
}

/// `C (+)= alpha·A·B` as `parts` products over consecutive K ranges (multiples of 16, so the exact
/// kernels stay exact) written to a scratch `[parts, M·N]`, then summed in order into C's view.
fn matmul_split(
    gpu: &Gpu,
    (k, (tile_n, tile_m)): (&Kernel, (usize, usize)),
    [a, b, c]: [&Tensor; 3],
    s: &Spec,
    accumulate: bool,
    parts: usize,
) -> Result<()> {
    let chunk = s.k.div_ceil(parts).next_multiple_of(16);
    let parts = s.k.div_ceil(chunk);
    let mn = s.m * s.n;
    let scratch = Tensor::uninit(c.device(), &[parts, mn])?;
    let zero_batch =
        |v: &View| -> Result<[u32; 4]> { Ok([0, 0, u(v.row, "stride")?, u(v.col, "stride")?]) };
    let p = Params {
        m: u(s.m, "M")?,
        n: u(s.n, "N")?,
        k: u(s.k, "K")?,
        nb_inner: 1,
        a: zero_batch(&s.a)?,
        b: zero_batch(&s.b)?,
        c: [u(mn, "M·N")?, 0, u(s.n, "N")?, 1],
        alpha: s.alpha,
        accumulate: 0,
        has_bias: 0,
        reads: 0,
        k_chunk: u(chunk, "K part")?,
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
    };
    let groups = [
        u(s.n.div_ceil(tile_n), "N tiles")?,
        u(s.m.div_ceil(tile_m), "M tiles")?,
        u(parts, "K parts")?,
    ];
    gpu.dispatch(k, &p, &[a, b, c, &scratch], groups)?;
    let sv = View {
        outer: 0,
        inner: 0,
        row: mn,
        col: 1,
    };
    sum_rows(
        gpu,
        &scratch,
        &sv,
        (1, 1),
        parts,
        mn,
        c,
        (s.n, s.c.row, s.c.col),
        accumulate,
    )
}

/// `dst (+)= Σ over (z, i) of src[z, i, j]`, dst a view with `dv.0` columns (see the shader).
#[allow(clippy::too_many_arguments)]
pub(super) fn sum_rows(
    gpu: &Gpu,
    src: &Tensor,
    sv: &View,
    z: (usize, usize),
    m: usize,
    n: usize,
    dst: &Tensor,
    dv: (usize, usize, usize),
    acc: bool,
) -> Result<()> {
    let rows = z.0 * z.1 * m;
    if rows >= TWO_PASS_ROWS {
        let chunk =
            SUM_CHUNK.max(rows.div_ceil(gpu.limits.max_compute_workgroups_per_dimension as usize));
        let chunks = rows.div_ceil(chunk);
        let partial = Tensor::uninit(src.device(), &[chunks, n])?;
        let p = SumParams {
            m: u(m, "M")?,
            n: u(n, "N")?,
            nb_outer: u(z.0, "Z1")?,
            nb_inner: u(z.1, "Z2")?,
            src: view32(sv)?,
            accumulate: 0,
            dn: u(n.max(1), "columns")?,
            d_row: 0,
            d_col: 1,
            chunk: u(chunk, "rows per chunk")?,
            _pad0: 0,
            _pad1: 0,
            _pad2: 0,
        };
        gpu.dispatch(
            &SUM_ROWS_PARTIAL,
            &p,
            &[src, &partial],
            [
                u(n.div_ceil(64), "column blocks")?,
                u(chunks, "row chunks")?,
                1,
            ],
        )?;
        let pv = View {
            outer: 0,
            inner: 0,
            row: n,
            col: 1,
        };
        return sum_rows(gpu, &partial, &pv, (1, 1), chunks, n, dst, dv, acc);
    }
    let p = SumParams {
        m: u(m, "M")?,
        n: u(n, "N")?,
        nb_outer: u(z.0, "Z1")?,
        nb_inner: u(z.1, "Z2")?,
        src: view32(sv)?,
        accumulate: acc as u32,
        dn: u(dv.0.max(1), "columns")?,
        d_row: u(dv.1, "stride")?,
        d_col: u(dv.2, "stride")?,
        chunk: 0,
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
    };
    let groups = grid_1d(
        p.n.div_ceil(64),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    gpu.dispatch(&SUM_ROWS, &p, &[src, dst], groups)
}
