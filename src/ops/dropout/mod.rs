//! Inverted dropout: y = x · mask / (1 − p), same shape as x, mask[i] = (u(seed, i) ≥ p) from a
//! counter-based hash, so the backward `dx += dy · mask / (1 − p)` recomputes the mask instead of
//! storing it. p = 0 is an exact identity; p must be in [0, 1).

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
    seed: u32,
    p: f32,
    scale: f32,
}

fn params(n: usize, p: f32, seed: u32) -> Result<Params> {
    if !(0.0..1.0).contains(&p) {
        return Err(Error::Msg(format!("dropout: p = {p} must be in [0, 1)")));
    }
    let n = u32::try_from(n)
        .map_err(|_| Error::Msg(format!("dropout: {n} elements do not fit in 32 bits")))?;
    Ok(Params {
        n,
        seed,
        p,
        scale: scale(p),
    })
}

/// The factor kept values are multiplied by, 1 / (1 − p), as an f32.
pub fn scale(p: f32) -> f32 {
    (1.0 / (1.0 - p as f64)) as f32
}

// ---------------------------------------------------------------------------------------------
// The hash (twin of the WGSL one, in the CPU backend's file)

pub use cpu::{dropout_hash, dropout_keep};

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `y = x · mask · scale(p)`.
pub fn dropout_into(x: &Tensor, y: &Tensor, p: f32, seed: u32) -> Result<()> {
    if x.numel() != y.numel() {
        return Err(crate::error::shape_err(
            "dropout",
            "input and output",
            x.shape(),
            y.shape(),
        ));
    }
    let pr = params(x.numel(), p, seed)?;
    let Some(gpu) = x.device().as_gpu() else {
        cpu::dropout(&x.f32s()?, &mut y.f32s_mut()?, p, seed, pr.scale);
        return Ok(());
    };
    gpu.dispatch(
        &FWD,
        &pr,
        &[x, y],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// `dx += dy · mask · scale(p)` with the mask recomputed from `seed`.
pub fn dropout_backward_into(dy: &Tensor, dx: &Tensor, p: f32, seed: u32) -> Result<()> {
    if dx.numel() != dy.numel() {
        return Err(crate::error::shape_err(
            "dropout backward",
            "dy and dx",
            dy.shape(),
            dx.shape(),
        ));
    }
    let pr = params(dy.numel(), p, seed)?;
    let Some(gpu) = dy.device().as_gpu() else {
        cpu::dropout_backward(&dy.f32s()?, &mut dx.f32s_mut()?, p, seed, pr.scale);
        return Ok(());
    };
    gpu.dispatch(
        &BWD,
        &pr,
        &[dy, dx],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// The raw hashes of indices 0..len(out) (a u32 tensor), to test the two hash twins agree.
pub fn dropout_bits_into(out: &Tensor, seed: u32) -> Result<()> {
    let pr = params(out.numel(), 0.0, seed)?;
    let Some(gpu) = out.device().as_gpu() else {
        let mut o = out.f32s_mut()?;
        cpu::dropout_bits(bytemuck::cast_slice_mut(&mut o), seed);
        return Ok(());
    };
    gpu.dispatch(
        &BITS,
        &pr,
        &[out],
        grid_1d(
            pr.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64, with the same f32 mask and scale)

pub fn dropout_ref(x: &[f64], p: f32, seed: u32) -> Vec<f64> {
    let s = scale(p) as f64;
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            if dropout_keep(seed, i as u32, p) {
                v * s
            } else {
                0.0
            }
        })
        .collect()
}

/// `dx += dy · mask · scale(p)`.
pub fn dropout_backward_ref(dy: &[f64], p: f32, seed: u32, dx: &mut [f64]) {
    let s = scale(p) as f64;
    for (i, (d, g)) in dx.iter_mut().zip(dy).enumerate() {
        if dropout_keep(seed, i as u32, p) {
            *d += g * s;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// Dropout with drop probability `p` and mask seed `seed`. p = 0 returns `x` itself (same value
/// and gradient buffer, no kernel, no tape entry).
pub fn dropout(tape: &Tape, x: &Var, p: f32, seed: u32) -> Result<Var> {
    params(x.value().numel(), p, seed)?;
    if p == 0.0 {
        return x.reshape(x.shape());
    }
    let y = Tensor::uninit(x.device(), x.shape())?;
    dropout_into(x.value(), &y, p, seed)?;
    let xv = x.clone();
    Ok(tape.push("dropout", &[x], y, move |out| {
        if !xv.requires_grad() {
            return Ok(());
        }
        dropout_backward_into(&out.grad_or_zeros()?, &xv.grad_or_zeros()?, p, seed)
    }))
}
