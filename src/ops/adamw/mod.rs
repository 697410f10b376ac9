//! AdamW as `torch.optim.AdamW`, with `clip_grad_norm_` folded in: for a parameter w (any shape) with
//! gradient g, state m, v (same shape) and step t (1 after the first step):
//! `g ← g·min(1, max_norm/(‖g‖ + 1e-6))`, `w ← w − lr·wd·w` (only where `decay`), `m ← β1 m + (1−β1) g`,
//! `v ← β2 v + (1−β2) g²`, `w ← w − lr·m̂/(√v̂ + eps)` with `m̂ = m/(1−β1^t)`, `v̂ = v/(1−β2^t)`.
//! ‖g‖ is the global norm over all parameters, read from a 1-element GPU tensor (no readback).

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::Var;
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;
use std::rc::Rc;

const ADAMW: Kernel = Kernel {
    family: "adamw",
    src: include_str!("../../../shaders/adamw.wgsl"),
    entry: "adamw_step",
};
const WG: u32 = 256;

/// The added constant in `clip_grad_norm_`'s `max_norm / (total_norm + 1e-6)`.
pub const CLIP_EPS: f64 = 1e-6;

/// Hyper-parameters. `lr` may change between steps (a schedule): it is sent with every dispatch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamW {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
}

impl Default for AdamW {
    /// PyTorch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01.
    fn default() -> AdamW {
        AdamW {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.01,
        }
    }
}

/// The optimizer state of one parameter: first and second moments (its shape) and the step count.
pub struct AdamState {
    m: Tensor,
    v: Tensor,
    step: u32,
}

impl AdamState {
    /// Zero moments and step 0 for a parameter of shape `shape`.
    pub fn new(dev: &Rc<crate::Device>, shape: &[usize]) -> Result<AdamState> {
        Ok(AdamState {
            m: Tensor::zeros(dev, shape)?,
            v: Tensor::zeros(dev, shape)?,
            step: 0,
        })
    }
    /// The first moment m (not bias-corrected).
    pub fn m(&self) -> &Tensor {
        &self.m
    }
    /// The second moment v (not bias-corrected).
    pub fn v(&self) -> &Tensor {
        &self.v
    }
    /// Steps taken so far.
    pub fn step(&self) -> u32 {
        self.step
    }
    /// Restore a saved state: moments `m`, `v` (the parameter's length each) and the step count.
    pub fn restore(&mut self, m: &[f32], v: &[f32], step: u32) -> Result<()> {
        self.m.write_f32(m)?;
        self.v.write_f32(v)?;
        self.step = step;
        Ok(())
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    clip: u32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    decay_mul: f32,
    step_size: f32,
    bc2_sqrt: f32,
    max_norm: f32,
    _pad: [u32; 3],
}

/// The step-dependent scalars torch computes in Python floats: `1 − lr·wd` (or 1),
/// `lr / (1 − β1^t)` and `√(1 − β2^t)`.
fn scalars(opt: &AdamW, t: u32, decay: bool) -> (f64, f64, f64) {
    let (lr, b1, b2) = (opt.lr as f64, opt.beta1 as f64, opt.beta2 as f64);
    let t = t.min(i32::MAX as u32) as i32;
    let decay_mul = if decay {
        1.0 - lr * opt.weight_decay as f64
    } else {
        1.0
    };
    (
        decay_mul,
        lr / (1.0 - b1.powi(t)),
        (1.0 - b2.powi(t)).sqrt(),
    )
}

/// Whether `max_norm` asks for clipping: a finite positive bound does, infinity means "off".
fn clip_on(max_norm: f32) -> Result<bool> {
    if max_norm.is_nan() || max_norm <= 0.0 {
        return Err(Error::Msg(format!(
            "adamw: max_norm must be positive (or infinite for no clipping), got {max_norm}"
        )));
    }
    Ok(max_norm.is_finite())
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// Record one AdamW step of `param` with gradient `grad` on the GPU, clipping by the global norm
/// held in `norm` (1 element) against `max_norm` (`f32::INFINITY`: no clipping). Increments the step.
pub fn adamw_step_into(
    opt: &AdamW,
    param: &Tensor,
    grad: &Tensor,
    state: &mut AdamState,
    decay: bool,
    norm: &Tensor,
    max_norm: f32,
) -> Result<()> {
    for (what, t) in [
        ("gradient", grad),
        ("first moment", &state.m),
        ("second moment", &state.v),
    ] {
        if t.shape() != param.shape() {
            return Err(shape_err(
                "adamw",
                &format!("parameter and {what}"),
                param.shape(),
                t.shape(),
            ));
        }
    }
    if norm.numel() != 1 {
        return Err(shape_err(
            "adamw",
            "norm must hold one element",
            norm.shape(),
            &[1],
        ));
    }
    let clip = clip_on(max_norm)?;
    let n = u32::try_from(param.numel()).map_err(|_| {
        Error::Msg(format!(
            "adamw: {} elements do not fit in 32 bits",
            param.numel()
        ))
    })?;
    let t = state.step.saturating_add(1);
    let (decay_mul, step_size, bc2_sqrt) = scalars(opt, t, decay);
    let p = Params {
        n,
        clip: clip as u32,
        beta1: opt.beta1,
        beta2: opt.beta2,
        eps: opt.eps,
        decay_mul: decay_mul as f32,
        step_size: step_size as f32,
        bc2_sqrt: bc2_sqrt as f32,
        max_norm: if clip { max_norm } else { 0.0 },
        _pad: [0; 3],
    };
    let Some(gpu) = param.device().as_gpu() else {
        let nv = norm.f32s()?[0];
        let s = cpu::AdamScalars {
            beta1: p.beta1,
            beta2: p.beta2,
            eps: p.eps,
            decay_mul: p.decay_mul,
            step_size: p.step_size,
            bc2_sqrt: p.bc2_sqrt,
            clip: if clip {
                (p.max_norm / (nv + 1e-6)).min(1.0)
            } else {
                1.0
            },
        };
        let (mut m, mut v) = (state.m.f32s_mut()?, state.v.f32s_mut()?);
        cpu::adamw_step(&mut param.f32s_mut()?, &grad.f32s()?, &mut m, &mut v, &s);
        drop((m, v));
        state.step = t;
        return Ok(());
    };
    gpu.dispatch(
        &ADAMW,
        &p,
        &[param, grad, &state.m, &state.v, norm],
        grid_1d(
            n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )?;
    state.step = t;
    Ok(())
}

/// One step for a parameter on the tape, using its accumulated gradient. Like torch, a parameter
/// that received no gradient is skipped (and its step count does not advance).
pub fn adamw_step(
    opt: &AdamW,
    param: &Var,
    state: &mut AdamState,
    decay: bool,
    norm: &Tensor,
    max_norm: f32,
) -> Result<()> {
    match param.grad() {
        Some(g) => adamw_step_into(opt, param.value(), &g, state, decay, norm, max_norm),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// `clip_grad_norm_`'s factor: `min(1, max_norm / (norm + 1e-6))`; 1 for an infinite `max_norm`.
pub fn clip_factor_ref(norm: f64, max_norm: f64) -> f64 {
    if max_norm.is_finite() {
        (max_norm / (norm + CLIP_EPS)).min(1.0)
    } else {
        1.0
    }
}

/// One AdamW step in f64 on slices of equal length; `step` is the count before this step and is
/// incremented. Same operation order as the kernel.
#[allow(clippy::too_many_arguments)]
pub fn adamw_step_ref(
    opt: &AdamW,
    param: &mut [f64],
    grad: &[f64],
    m: &mut [f64],
    v: &mut [f64],
    step: &mut u32,
    decay: bool,
    norm: f64,
    max_norm: f64,
) {
    *step = step.saturating_add(1);
    let (decay_mul, step_size, bc2_sqrt) = scalars(opt, *step, decay);
    let (b1, b2, eps) = (opt.beta1 as f64, opt.beta2 as f64, opt.eps as f64);
    let c = clip_factor_ref(norm, max_norm);
    for i in 0..param.len() {
        let g = grad[i] * c;
        m[i] = b1 * m[i] + (1.0 - b1) * g;
        v[i] = b2 * v[i] + (1.0 - b2) * g * g;
        param[i] *= decay_mul;
        param[i] -= step_size * m[i] / (v[i].sqrt() / bc2_sqrt + eps);
    }
}
