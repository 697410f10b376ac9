//! Row gather between two layouts of the same rows: x (R, C), idx (S) u32 → y (S, C) with
//! `y[o] = x[idx[o]]`, or 0 where `idx[o]` is [`NONE`]. The packed batches use it to move the
//! (N, C) activations of N real tokens into per-row attention blocks (B·T, C) and back.
//!
//! The map must be one-to-one on the rows it names, and `inv` (R) its inverse (`inv[idx[o]] = o`,
//! NONE for rows of x that no output reads): then the backward `dx[i] += dy[inv[i]]` is again a
//! gather, exact, with no two contributions to one row. [`inverse`] builds `inv` and checks the map.

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;

/// The index that names no row.
pub const NONE: u32 = u32::MAX;

const SRC: &str = include_str!("../../../shaders/gather.wgsl");
const FWD: Kernel = Kernel {
    family: "gather",
    src: SRC,
    entry: "gather",
};
const BWD: Kernel = Kernel {
    family: "gather",
    src: SRC,
    entry: "gather_backward",
};
const WG: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    c: u32,
    src_rows: u32,
    _pad: u32,
}

/// Params for writing `rows` rows of width `c` from a source of `src_rows` rows.
fn params(what: &str, idx: &Tensor, src: &Tensor, dst: &Tensor) -> Result<Params> {
    let (s, d) = (src.shape(), dst.shape());
    if idx.shape().len() != 1
        || s.len() != 2
        || d.len() != 2
        || s[1] != d[1]
        || idx.shape()[0] != d[0]
    {
        return Err(shape_err(
            what,
            "index (S), source (R, C) and destination (S, C)",
            s,
            d,
        ));
    }
    let big = |x: usize| {
        u32::try_from(x)
            .map_err(|_| Error::Msg(format!("{what}: size {x} does not fit in 32 bits")))
    };
    big(d[0] * d[1])?;
    big(s[0] * s[1])?;
    Ok(Params {
        rows: big(d[0])?,
        c: big(d[1])?,
        src_rows: big(s[0])?,
        _pad: 0,
    })
}

/// The inverse of a one-to-one map `idx` into `src_rows` rows (NONE entries allowed); an index out
/// of range or named twice is an error.
pub fn inverse(idx: &[u32], src_rows: usize) -> Result<Vec<u32>> {
    let mut inv = vec![NONE; src_rows];
    for (o, &r) in idx.iter().enumerate() {
        if r == NONE {
            continue;
        }
        match inv.get_mut(r as usize) {
            Some(slot) if *slot == NONE => *slot = o as u32,
            Some(_) => {
                return Err(Error::Msg(format!(
                    "gather: row {r} is named twice (the map must be one-to-one)"
                )))
            }
            None => {
                return Err(Error::Msg(format!(
                    "gather: index[{o}] = {r} is not below the source's {src_rows} rows"
                )))
            }
        }
    }
    Ok(inv)
}

/// Rows of lengths `lens` packed one after another, and their blocks of width `t`: the block
/// position of each packed row (`to_tokens`) and the packed row of each block position (`to_blocks`).
pub fn block_maps(lens: &[usize], t: usize) -> (Vec<u32>, Vec<u32>) {
    let mut to_blocks = vec![NONE; lens.len() * t];
    let mut to_tokens = vec![];
    for (r, &l) in lens.iter().enumerate() {
        for i in 0..l {
            to_blocks[r * t + i] = to_tokens.len() as u32;
            to_tokens.push((r * t + i) as u32);
        }
    }
    (to_blocks, to_tokens)
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `y[o, :] = x[idx[o], :]` (0 where the index is NONE); y is (S, C).
pub fn gather_into(idx: &Tensor, x: &Tensor, y: &Tensor) -> Result<()> {
    let p = params("gather", idx, x, y)?;
    let Some(gpu) = idx.device().as_gpu() else {
        cpu::gather(&idx.u32s()?, &x.f32s()?, &mut y.f32s_mut()?, p.c as usize);
        return Ok(());
    };
    let grid = grid_1d(
        (p.rows * p.c).div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    gpu.dispatch(&FWD, &p, &[idx, x, y], grid)
}

/// `dx[i, :] += dy[inv[i], :]` (nothing where the index is NONE).
pub fn gather_backward_into(inv: &Tensor, dy: &Tensor, dx: &Tensor) -> Result<()> {
    let p = params("gather backward", inv, dy, dx)?;
    let Some(gpu) = inv.device().as_gpu() else {
        cpu::gather_backward(&inv.u32s()?, &dy.f32s()?, &mut dx.f32s_mut()?, p.c as usize);
        return Ok(());
    };
    let grid = grid_1d(
        (p.rows * p.c).div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    gpu.dispatch(&BWD, &p, &[inv, dy, dx], grid)
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// `y[o, :] = x[idx[o], :]` for x of width c; rows for NONE (or out-of-range) indices are 0.
pub fn gather_ref(idx: &[u32], x: &[f64], c: usize) -> Vec<f64> {
    let rows = x.len() / c.max(1);
    let mut y = vec![0.0; idx.len() * c];
    for (row, &r) in y.chunks_mut(c.max(1)).zip(idx) {
        if r != NONE && (r as usize) < rows {
            row.copy_from_slice(&x[r as usize * c..(r as usize + 1) * c]);
        }
    }
    y
}

/// The gradient of [`gather_ref`] written as a scatter through `idx` (not through the inverse, so
/// that the two backends' gather through `inv` is checked against an independent formula):
/// `dx[idx[o], :] += dy[o, :]`.
pub fn gather_backward_ref(idx: &[u32], dy: &[f64], c: usize, dx: &mut [f64]) {
    let rows = dx.len() / c.max(1);
    for (o, &r) in idx.iter().enumerate() {
        if r != NONE && (r as usize) < rows {
            for k in 0..c {
                dx[r as usize * c + k] += dy[o * c + k];
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// The rows of `x` (R, C) named by `idx` (S): (S, C). `inv` (R) is the inverse map from
/// [`inverse`], used by the backward.
pub fn gather(tape: &Tape, x: &Var, idx: &Tensor, inv: &Tensor) -> Result<Var> {
    let (s, r) = (idx.numel(), x.shape().first().copied().unwrap_or(0));
    if inv.numel() != r {
        return Err(shape_err(
            "gather",
            "inverse map (R) for x (R, C)",
            inv.shape(),
            x.shape(),
        ));
    }
    let c = x.value().numel() / r.max(1);
    let y = Tensor::uninit(idx.device(), &[s, c])?;
    let xv = x.value().reshape(&[r, c])?;
    gather_into(idx, &xv, &y)?;
    let (inv, xc) = (inv.clone(), x.clone());
    Ok(tape.push("gather", &[x], y, move |y| {
        if !xc.requires_grad() {
            return Ok(());
        }
        let dx = xc.grad_or_zeros()?.reshape(&[r, c])?;
        gather_backward_into(&inv, &y.grad_or_zeros()?, &dx)
    }))
}
