//! Reductions to one value: `sum(a)` and `mean(a)` of a tensor of any shape, giving shape [1], and
//! the global gradient norm `‖(t₁, …, t_k)‖₂ = sqrt(Σᵢ Σ tᵢ²)` written into a [1] tensor on the GPU
//! (no readback) for gradient clipping. Deterministic: fixed-order multi-pass tree reductions of
//! 1024 values per workgroup (see the shader).

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/reduce.wgsl");
const REDUCE: Kernel = Kernel {
    family: "reduce",
    src: SRC,
    entry: "reduce",
};
const SUM_BACKWARD: Kernel = Kernel {
    family: "reduce",
    src: SRC,
    entry: "sum_backward",
};
/// Threads per workgroup, and values each workgroup folds into one (`WG`, `CHUNK` in the shader).
const WG: u32 = 256;
const CHUNK: u32 = 1024;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    square: u32,
    out_offset: u32,
    take_sqrt: u32,
    scale: f32,
    _pad: [u32; 3],
}

/// What the last pass does with the total, and where it goes.
#[derive(Clone, Copy)]
struct Finish {
    square: bool,
    scale: f32,
    take_sqrt: bool,
    offset: u32,
}

fn n32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Msg(format!("reduce: {n} elements do not fit in 32 bits")))
}

/// Reduce all of `x` into `out[f.offset]`: the first pass squares when asked, the last one scales,
/// takes the root and writes at the offset; passes in between only add.
fn reduce_into(x: &Tensor, out: &Tensor, f: Finish) -> Result<()> {
    let Some(gpu) = x.device().as_gpu() else {
        let v = cpu::reduce(&x.f32s()?, f.square, f.scale, f.take_sqrt);
        let mut o = out.f32s_mut()?;
        let slot = o
            .get_mut(f.offset as usize)
            .ok_or_else(|| Error::Shape("reduce: output slot out of range".into()))?;
        *slot = v;
        return Ok(());
    };
    let maxd = gpu.limits.max_compute_workgroups_per_dimension;
    let mut n = n32(x.numel())?;
    let mut src = x.clone();
    let mut first = true;
    loop {
        let groups = n.div_ceil(CHUNK).max(1);
        let last = groups == 1;
        let p = Params {
            n,
            square: (first && f.square) as u32,
            out_offset: if last { f.offset } else { 0 },
            take_sqrt: (last && f.take_sqrt) as u32,
            scale: if last { f.scale } else { 1.0 },
            _pad: [0; 3],
        };
        if last {
            return gpu.dispatch(&REDUCE, &p, &[&src, out], grid_1d(groups, maxd));
        }
        let partial = Tensor::uninit(x.device(), &[groups as usize])?;
        gpu.dispatch(&REDUCE, &p, &[&src, &partial], grid_1d(groups, maxd))?;
        src = partial;
        n = groups;
        first = false;
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `out[0] = scale · Σ x` (scale 1 for the sum, 1/n for the mean).
pub fn sum_into(x: &Tensor, scale: f32, out: &Tensor) -> Result<()> {
    if out.numel() < 1 || out.same_buffer(x) {
        return Err(Error::Shape(format!(
            "sum: output needs one element of its own, got shape {:?}",
            out.shape()
        )));
    }
    reduce_into(
        x,
        out,
        Finish {
            square: false,
            scale,
            take_sqrt: false,
            offset: 0,
        },
    )
}

/// `dx += scale · dy[0]` for every element: the backward of [`sum_into`].
pub fn sum_backward_into(dy: &Tensor, scale: f32, dx: &Tensor) -> Result<()> {
    let Some(gpu) = dx.device().as_gpu() else {
        let d = *dy
            .f32s()?
            .first()
            .ok_or_else(|| Error::Shape("sum backward: empty dy".into()))?;
        cpu::sum_backward(d, scale, &mut dx.f32s_mut()?);
        return Ok(());
    };
    let n = n32(dx.numel())?;
    let p = Params {
        n,
        square: 0,
        out_offset: 0,
        take_sqrt: 0,
        scale,
        _pad: [0; 3],
    };
    gpu.dispatch(
        &SUM_BACKWARD,
        &p,
        &[dy, dx],
        grid_1d(
            n.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// `out[0] = sqrt(Σ over tensors of Σ x²)`, all on the GPU: each tensor's sum of squares lands in
/// its own slot of a partials tensor (no two dispatches write one element), then one more
/// reduction adds the slots and takes the root.
pub fn global_norm_into(ts: &[&Tensor], out: &Tensor) -> Result<()> {
    if out.numel() < 1 || ts.iter().any(|t| t.same_buffer(out)) {
        return Err(Error::Shape(format!(
            "global_norm: output needs one element of its own, got shape {:?}",
            out.shape()
        )));
    }
    let Some(first) = ts.first() else {
        return out.fill(0.0);
    };
    let partials = Tensor::uninit(first.device(), &[ts.len()])?;
    for (i, t) in ts.iter().enumerate() {
        reduce_into(
            t,
            &partials,
            Finish {
                square: true,
                scale: 1.0,
                take_sqrt: false,
                offset: n32(i)?,
            },
        )?;
    }
    reduce_into(
        &partials,
        out,
        Finish {
            square: false,
            scale: 1.0,
            take_sqrt: true,
            offset: 0,
        },
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

pub fn sum_ref(x: &[f64]) -> f64 {
    x.iter().sum()
}

/// The mean; 0 for an empty input (the GPU's scale is 1/max(n, 1)).
pub fn mean_ref(x: &[f64]) -> f64 {
    sum_ref(x) / x.len().max(1) as f64
}

/// `dx += scale · dy`: the backward of `scale · Σ x`.
pub fn sum_backward_ref(dy: f64, scale: f64, dx: &mut [f64]) {
    for d in dx {
        *d += scale * dy;
    }
}

pub fn global_norm_ref(ts: &[&[f64]]) -> f64 {
    ts.iter()
        .flat_map(|t| t.iter())
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt()
}

// ---------------------------------------------------------------------------------------------
// Autograd

fn reduce_op(tape: &Tape, name: &'static str, a: &Var, scale: f32) -> Result<Var> {
    let out = Tensor::uninit(a.device(), &[1])?;
    sum_into(a.value(), scale, &out)?;
    let a2 = a.clone();
    Ok(tape.push(name, &[a], out, move |out| {
        if a2.requires_grad() {
            sum_backward_into(&out.grad_or_zeros()?, scale, &a2.grad_or_zeros()?)?;
        }
        Ok(())
    }))
}

/// `Σ a`, shape [1]; its gradient is ones (times the upstream value).
pub fn sum(tape: &Tape, a: &Var) -> Result<Var> {
    reduce_op(tape, "sum", a, 1.0)
}

/// `Σ a / n`, shape [1]; its gradient is 1/n everywhere.
pub fn mean(tape: &Tape, a: &Var) -> Result<Var> {
    reduce_op(tape, "mean", a, 1.0 / a.value().numel().max(1) as f32)
}
