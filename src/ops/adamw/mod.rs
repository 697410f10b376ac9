//! AdamW as `torch.optim.AdamW`, with `clip_grad_norm_` folded in: for a parameter w (any shape) with
//! gradient g, state m, v (same shape) and step t (1 after the first step):
//! `g ← g·min(1, max_norm/(‖g‖ + 1e-6))`, `w ← w − lr·wd·w` (only where `decay`),
//! `m ← β1 m + (1−β1) g`, `v ← β2 v + (1−β2) g²`, `w ← w − lr·m̂/(√v̂ + eps)` with
//! `m̂ = m/(1−β1^t)`, `v̂ = v/(1−β2^t)`.
//! ‖g‖ is the global norm over all parameters, read from a 1-element GPU tensor (no readback).
//!
//! Two ways to step many parameters: `adamw_step_into` per parameter (a dispatch each, its own
//! `AdamState`), or an `AdamGroup`, whose moments live in one arena each: `adamw_arena_step_into`
//! steps every parameter in one dispatch when the values and gradients are arenas laid out alike
//! (`spans`), `adamw_each_step_into` a dispatch per parameter wherever they live.

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::Var;
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::{Tensor, VIEW_ALIGN};
use std::rc::Rc;

const ADAMW: Kernel = Kernel {
    family: "adamw",
    src: include_str!("../../../shaders/adamw.wgsl"),
    entry: "adamw_step",
};
const ADAMW_ARENA: Kernel = Kernel {
    family: "adamw",
    src: include_str!("../../../shaders/adamw.wgsl"),
    entry: "adamw_arena_step",
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
    /// Entries of the span table (`adamw_arena_step`; 0 for `adamw_step`).
    spans: u32,
    _pad: [u32; 2],
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
    let t = state.step.saturating_add(1);
    let one = One {
        param,
        grad,
        m: &state.m,
        v: &state.v,
        decay,
    };
    step_one(opt, &one, t, norm, max_norm)?;
    state.step = t;
    Ok(())
}

/// One parameter's tensors for a step.
struct One<'a> {
    param: &'a Tensor,
    grad: &'a Tensor,
    m: &'a Tensor,
    v: &'a Tensor,
    decay: bool,
}

fn check_norm(norm: &Tensor, max_norm: f32) -> Result<bool> {
    if norm.numel() != 1 {
        return Err(shape_err(
            "adamw",
            "norm must hold one element",
            norm.shape(),
            &[1],
        ));
    }
    clip_on(max_norm)
}

fn n32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Msg(format!("adamw: {n} elements do not fit in 32 bits")))
}

/// The params of a step `t` (the count after it), decay as asked.
fn params_for(opt: &AdamW, t: u32, decay: bool, n: u32, clip: bool, max_norm: f32) -> Params {
    let (decay_mul, step_size, bc2_sqrt) = scalars(opt, t, decay);
    Params {
        n,
        clip: clip as u32,
        beta1: opt.beta1,
        beta2: opt.beta2,
        eps: opt.eps,
        decay_mul: decay_mul as f32,
        step_size: step_size as f32,
        bc2_sqrt: bc2_sqrt as f32,
        max_norm: if clip { max_norm } else { 0.0 },
        spans: 0,
        _pad: [0; 2],
    }
}

/// The CPU kernel's scalars for `p`, with the clip factor for the norm value `nv`.
fn cpu_scalars(p: &Params, nv: f32) -> cpu::AdamScalars {
    cpu::AdamScalars {
        beta1: p.beta1,
        beta2: p.beta2,
        eps: p.eps,
        decay_mul: p.decay_mul,
        step_size: p.step_size,
        bc2_sqrt: p.bc2_sqrt,
        clip: if p.clip != 0 {
            (p.max_norm / (nv + 1e-6)).min(1.0)
        } else {
            1.0
        },
    }
}

/// Record one parameter's step `t` (the count after it) on its device.
fn step_one(opt: &AdamW, one: &One, t: u32, norm: &Tensor, max_norm: f32) -> Result<()> {
    if one.grad.shape() != one.param.shape() {
        return Err(shape_err(
            "adamw",
            "parameter and gradient",
            one.param.shape(),
            one.grad.shape(),
        ));
    }
    // A group's moments are flat views of its arenas: their length must match.
    for (what, x) in [("first moment", one.m), ("second moment", one.v)] {
        if x.numel() != one.param.numel() {
            return Err(shape_err(
                "adamw",
                &format!("parameter and {what}"),
                one.param.shape(),
                x.shape(),
            ));
        }
    }
    let clip = check_norm(norm, max_norm)?;
    let n = n32(one.param.numel())?;
    let p = params_for(opt, t, one.decay, n, clip, max_norm);
    let Some(gpu) = one.param.device().as_gpu() else {
        let s = cpu_scalars(&p, norm.f32s()?[0]);
        let (mut m, mut v) = (one.m.f32s_mut()?, one.v.f32s_mut()?);
        cpu::adamw_step(
            &mut one.param.f32s_mut()?,
            &one.grad.f32s()?,
            &mut m,
            &mut v,
            &s,
        );
        return Ok(());
    };
    gpu.dispatch(
        &ADAMW,
        &p,
        &[one.param, one.grad, one.m, one.v, norm],
        grid_1d(
            n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
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
// Many parameters: the moments in arenas

/// Where one parameter lies in an arena: its first element, its length, whether it decays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub at: usize,
    pub len: usize,
    pub decay: bool,
}

/// Whether a trainer should keep its parameters, gradients and moments in arenas, for the one
/// AdamW dispatch over all of them: on the GPU that replaces a dispatch per parameter; the CPU
/// backend has no dispatches to save and keeps each tensor on its own.
pub fn arenas_pay(dev: &crate::Device) -> bool {
    dev.as_gpu().is_some()
}

/// Lay parameters of `(length, decay)` end to end, each starting at a multiple of `VIEW_ALIGN`
/// (so each is a view that a kernel can bind): their spans and the arena's length.
pub fn spans(params: &[(usize, bool)]) -> (Vec<Span>, usize) {
    let mut at = 0;
    let spans = params
        .iter()
        .map(|&(len, decay)| {
            let s = Span { at, len, decay };
            at += len.next_multiple_of(VIEW_ALIGN);
            s
        })
        .collect();
    (spans, at.max(VIEW_ALIGN))
}

/// AdamW's state for many parameters: both moments in one arena each (every parameter's at its
/// span, the alignment gaps zero), the spans (also on the device, as the one-dispatch step's
/// table of `[at, len, decay, 0]`) and the step count they share.
pub struct AdamGroup {
    m: Tensor,
    v: Tensor,
    table: Tensor,
    spans: Vec<Span>,
    len: usize,
    step: u32,
}

impl AdamGroup {
    /// Zero moments and step 0 for parameters at `spans` of an arena of `len` elements (as
    /// `spans()` lays them out: ascending, aligned, not overlapping).
    pub fn new(dev: &Rc<crate::Device>, spans: Vec<Span>, len: usize) -> Result<AdamGroup> {
        let mut end = 0;
        for (i, s) in spans.iter().enumerate() {
            if s.at < end || !s.at.is_multiple_of(VIEW_ALIGN) || s.len == 0 || s.at + s.len > len {
                return Err(Error::Msg(format!(
                    "adamw: span {i} ({s:?}) of an arena of {len} elements is empty, unaligned, \
                     overlaps the one before or runs past the end; lay parameters out with \
                     adamw::spans"
                )));
            }
            end = s.at + s.len;
        }
        let mut table = Vec::with_capacity(4 * spans.len().max(1));
        for s in &spans {
            table.extend([n32(s.at)?, n32(s.len)?, s.decay as u32, 0]);
        }
        if table.is_empty() {
            table = vec![0; 4];
        }
        Ok(AdamGroup {
            m: Tensor::zeros(dev, &[len])?,
            v: Tensor::zeros(dev, &[len])?,
            table: Tensor::from_u32(dev, &[table.len()], &table)?,
            spans,
            len,
            step: 0,
        })
    }

    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// The arena's length in elements: what the values and gradients arenas must hold.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Steps taken so far.
    pub fn step(&self) -> u32 {
        self.step
    }

    /// Parameter `i`'s first moment (a view into the arena, not bias-corrected).
    pub fn m(&self, i: usize) -> Result<Tensor> {
        self.view(&self.m, i)
    }

    /// Parameter `i`'s second moment (a view into the arena, not bias-corrected).
    pub fn v(&self, i: usize) -> Result<Tensor> {
        self.view(&self.v, i)
    }

    fn view(&self, arena: &Tensor, i: usize) -> Result<Tensor> {
        let s = self.spans.get(i).ok_or_else(|| {
            Error::Msg(format!(
                "adamw: no parameter {i} in a group of {}",
                self.spans.len()
            ))
        })?;
        arena.view(s.at, &[s.len])
    }

    /// Both moment arenas read back, whole (one readback each; parameter `i`'s at its span).
    pub async fn moments(&self) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((self.m.to_vec_f32().await?, self.v.to_vec_f32().await?))
    }

    /// Restore parameter `i`'s saved moments (its length each).
    pub fn restore(&mut self, i: usize, m: &[f32], v: &[f32]) -> Result<()> {
        self.m(i)?.write_f32(m)?;
        self.v(i)?.write_f32(v)
    }

    /// Set the step count (a restored run's).
    pub fn set_step(&mut self, step: u32) {
        self.step = step;
    }
}

/// Record one AdamW step of every parameter of `group`, the values in the arena `params` and the
/// gradients in the arena `grads`, each parameter at its span of both (the arenas hold
/// `group.len()` elements). Clipping as `adamw_step_into`. On the GPU, one dispatch binds the
/// four arenas, the norm and the span table, whatever the number of parameters.
pub fn adamw_arena_step_into(
    opt: &AdamW,
    params: &Tensor,
    grads: &Tensor,
    group: &mut AdamGroup,
    norm: &Tensor,
    max_norm: f32,
) -> Result<()> {
    for (what, x) in [("parameters", params), ("gradients", grads)] {
        if x.numel() != group.len {
            return Err(shape_err(
                "adamw",
                &format!("the group's arena and the {what}' arena"),
                &[group.len],
                x.shape(),
            ));
        }
    }
    if params.same_buffer(grads) {
        return Err(Error::Msg(
            "adamw: the parameters' and the gradients' arenas must be two tensors".into(),
        ));
    }
    let clip = check_norm(norm, max_norm)?;
    let t = group.step.saturating_add(1);
    // decay_mul for the decayed spans; the kernel uses 1 for the others.
    let mut p = params_for(opt, t, true, n32(group.len)?, clip, max_norm);
    let Some(gpu) = params.device().as_gpu() else {
        let nv = norm.f32s()?[0];
        let on = cpu_scalars(&p, nv);
        let off = cpu_scalars(&params_for(opt, t, false, p.n, clip, max_norm), nv);
        let (mut w, g) = (params.f32s_mut()?, grads.f32s()?);
        let (mut m, mut v) = (group.m.f32s_mut()?, group.v.f32s_mut()?);
        for s in &group.spans {
            let r = s.at..s.at + s.len;
            let sc = if s.decay { &on } else { &off };
            cpu::adamw_step(
                &mut w[r.clone()],
                &g[r.clone()],
                &mut m[r.clone()],
                &mut v[r],
                sc,
            );
        }
        drop((w, m, v));
        group.step = t;
        return Ok(());
    };
    p.spans = n32(group.spans.len())?;
    gpu.dispatch(
        &ADAMW_ARENA,
        &p,
        &[params, grads, &group.m, &group.v, norm, &group.table],
        grid_1d(
            p.n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )?;
    group.step = t;
    Ok(())
}

/// The same step as `adamw_arena_step_into` with the values and gradients anywhere: a dispatch
/// per parameter (`params[i]`, `grads[i]` of span `i`'s length), the moments views of the
/// group's arenas. For the CPU backend's models and any whose tensors are not in arenas.
pub fn adamw_each_step_into(
    opt: &AdamW,
    params: &[&Tensor],
    grads: &[&Tensor],
    group: &mut AdamGroup,
    norm: &Tensor,
    max_norm: f32,
) -> Result<()> {
    if params.len() != group.spans.len() || grads.len() != group.spans.len() {
        return Err(Error::Msg(format!(
            "adamw: a group of {} parameters was given {} values and {} gradients",
            group.spans.len(),
            params.len(),
            grads.len()
        )));
    }
    let t = group.step.saturating_add(1);
    for (i, (param, grad)) in params.iter().zip(grads).enumerate() {
        let (m, v) = (group.m(i)?, group.v(i)?);
        let decay = group.spans[i].decay;
        let one = One {
            param,
            grad,
            m: &m,
            v: &v,
            decay,
        };
        step_one(opt, &one, t, norm, max_norm)?;
    }
    group.step = t;
    Ok(())
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
