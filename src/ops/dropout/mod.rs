//! Inverted dropout: y = x · mask / (1 − p), same shape as x. x is read as rows of `cols` elements,
//! one u32 key per row (`keys`, R), and mask[r, j] = (u(seed, keys[r], j) ≥ p) from a counter-based
//! hash, so the backward `dx += dy · mask / (1 − p)` recomputes the mask instead of storing it.
//! Keys name rows independently of the layout (the GPT keys a token's row by (example, position)),
//! so the same token drops the same features however the batch is laid out. p = 0 is an exact
//! identity; p must be in [0, 1).

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/dropout.wgsl");
const FWD: Kernel = Kernel {
    family: "dropout",
    src: SRC,
    entry: "dropout",
};
const BWD: Kernel = Kernel {
    family: "dropout",
    src: SRC,
    entry: "dropout_backward",
};
const BITS: Kernel = Kernel {
    family: "dropout",
    src: SRC,
    entry: "dropout_bits",
};
const WG: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    cols: u32,
    seed: u32,
    p: f32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

/// Params for `n` elements in rows keyed by `keys` (R rows of n / R elements).
fn params(n: usize, keys: &Tensor, p: f32, seed: u32) -> Result<Params> {
    if !(0.0..1.0).contains(&p) {
        return Err(Error::Msg(format!("dropout: p = {p} must be in [0, 1)")));
    }
    let rows = keys.numel();
    if keys.shape().len() != 1 || rows == 0 || !n.is_multiple_of(rows) {
        return Err(Error::Shape(format!(
            "dropout: {n} elements cannot be read as rows of the {rows} row keys (shape {:?})",
            keys.shape()
        )));
    }
    let n = u32::try_from(n)
        .map_err(|_| Error::Msg(format!("dropout: {n} elements do not fit in 32 bits")))?;
    Ok(Params {
        n,
        cols: n / rows as u32,
        seed,
        p,
        scale: scale(p),
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
    })
}

/// The factor kept values are multiplied by, 1 / (1 − p), as an f32.
pub fn scale(p: f32) -> f32 {
    (1.0 / (1.0 - p as f64)) as f32
}

// ---------------------------------------------------------------------------------------------
// The hash (twin of the WGSL one, in the CPU backend's file)

pub use cpu::{dropout_hash, dropout_keep, element_hash};

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `y = x · mask · scale(p)`, x read as rows keyed by `keys`.
pub fn dropout_into(x: &Tensor, y: &Tensor, keys: &Tensor, p: f32, seed: u32) -> Result<()> {
    if x.numel() != y.numel() {
        return Err(crate::error::shape_err(
            "dropout",
            "input and output",
            x.shape(),
            y.shape(),
        ));
    }
    let pr = params(x.numel(), keys, p, seed)?;
    let Some(gpu) = x.device().as_gpu() else {
        let cols = pr.cols as usize;
        cpu::dropout(
            &keys.u32s()?,
            &x.f32s()?,
            &mut y.f32s_mut()?,
            cols,
            p,
            seed,
            pr.scale,
        );
        return Ok(());
    };
    gpu.dispatch(
        &FWD,
        &pr,
        &[keys, x, y],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// `dx += dy · mask · scale(p)` with the mask recomputed from `seed` and `keys`.
pub fn dropout_backward_into(
    dy: &Tensor,
    dx: &Tensor,
    keys: &Tensor,
    p: f32,
    seed: u32,
) -> Result<()> {
    if dx.numel() != dy.numel() {
        return Err(crate::error::shape_err(
            "dropout backward",
            "dy and dx",
            dy.shape(),
            dx.shape(),
        ));
    }
    let pr = params(dy.numel(), keys, p, seed)?;
    let Some(gpu) = dy.device().as_gpu() else {
        let (keys, cols) = (keys.u32s()?, pr.cols as usize);
        cpu::dropout_backward(
            &keys,
            &dy.f32s()?,
            &mut dx.f32s_mut()?,
            cols,
            p,
            seed,
            pr.scale,
        );
        return Ok(());
    };
    gpu.dispatch(
        &BWD,
        &pr,
        &[keys, dy, dx],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// The raw element hashes of `out` (a u32 tensor read as rows keyed by `keys`), to test that the
/// two hash twins agree.
pub fn dropout_bits_into(out: &Tensor, keys: &Tensor, seed: u32) -> Result<()> {
    let pr = params(out.numel(), keys, 0.0, seed)?;
    let Some(gpu) = out.device().as_gpu() else {
        let mut o = out.f32s_mut()?;
        cpu::dropout_bits(
            &keys.u32s()?,
            bytemuck::cast_slice_mut(&mut o),
            pr.cols as usize,
            seed,
        );
        return Ok(());
    };
    gpu.dispatch(
        &BITS,
        &pr,
        &[keys, out],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64, with the same f32 mask and scale)

pub fn dropout_ref(x: &[f64], keys: &[u32], p: f32, seed: u32) -> Vec<f64> {
    let s = scale(p) as f64;
    let cols = x.len() / keys.len().max(1);
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            if dropout_keep(seed, keys[i / cols], (i % cols) as u32, p) {
                v * s
            } else {
                0.0
            }
        })
        .collect()
}

/// `dx += dy · mask · scale(p)`.
pub fn dropout_backward_ref(dy: &[f64], keys: &[u32], p: f32, seed: u32, dx: &mut [f64]) {
    let s = scale(p) as f64;
    let cols = dy.len() / keys.len().max(1);
    for (i, (d, g)) in dx.iter_mut().zip(dy).enumerate() {
        if dropout_keep(seed, keys[i / cols], (i % cols) as u32, p) {
            *d += g * s;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// Dropout with drop probability `p`, mask seed `seed` and one key per row of x (`keys`, R; x is
/// read as R rows). p = 0 returns `x` itself (same value and gradient buffer, no kernel, no tape
/// entry).
pub fn dropout(tape: &Tape, x: &Var, keys: &Tensor, p: f32, seed: u32) -> Result<Var> {
    params(x.value().numel(), keys, p, seed)?;
    if p == 0.0 {
        return x.reshape(x.shape());
    }
    let y = Tensor::uninit(x.device(), x.shape())?;
    dropout_into(x.value(), &y, keys, p, seed)?;
    let (xv, keys) = (x.clone(), keys.clone());
    Ok(tape.push("dropout", &[x], y, move |out| {
        if !xv.requires_grad() {
            return Ok(());
        }
        dropout_backward_into(&out.grad_or_zeros()?, &xv.grad_or_zeros()?, &keys, p, seed)
    }))
}
