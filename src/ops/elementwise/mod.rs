//! Elementwise ops on tensors of any shape: `add(a, b)` (same shapes), `scale(a, s) = s·a`,
//! `relu(a) = max(a, 0)`, `gelu(a) = a·Φ(a) = 0.5·a·(1 + erf(a/√2))` (PyTorch's exact form), their
//! backward passes (accumulating), the GPU helpers `add_into` and `axpy_into` (y += α·x), and f64
//! CPU references including an accurate `erf`/`erfc` (libm's).

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/elementwise.wgsl");
const ADD: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "add",
};
const SCALE: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "scale",
};
const AXPY: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "axpy",
};
const RELU: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "relu",
};
const RELU_BACKWARD: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "relu_backward",
};
const GELU: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "gelu",
};
const GELU_BACKWARD: Kernel = Kernel {
    family: "elementwise",
    src: SRC,
    entry: "gelu_backward",
};
/// Threads per workgroup (`WG` in the shader).
const WG: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    alpha: f32,
    _pad: [u32; 2],
}

fn same_len(op: &str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.numel() != b.numel() {
        return Err(shape_err(
            op,
            "operands must have the same number of elements",
            a.shape(),
            b.shape(),
        ));
    }
    Ok(())
}

fn no_alias(op: &str, input: &Tensor, out: &Tensor) -> Result<()> {
    if input.same_buffer(out) {
        return Err(Error::Msg(format!(
            "{op}: the output must not share a buffer with an input (a \
             read-write binding cannot alias a read one)"
        )));
    }
    Ok(())
}

/// One dispatch over `n` elements: `a` at binding 1, `y` at 2, optional `b` at 3.
fn launch(k: &Kernel, a: &Tensor, y: &Tensor, b: Option<&Tensor>, alpha: f32) -> Result<()> {
    let Some(gpu) = a.device().as_gpu() else {
        let (a, b) = (a.f32s()?, b.map(|b| b.f32s()).transpose()?);
        cpu::run(k.entry, &a, &mut y.f32s_mut()?, b.as_deref(), alpha);
        return Ok(());
    };
    let n = u32::try_from(y.numel()).map_err(|_| {
        Error::Msg(format!(
            "{}: {} elements do not fit in 32 bits",
            k.entry,
            y.numel()
        ))
    })?;
    let p = Params {
        n,
        alpha,
        _pad: [0; 2],
    };
    let groups = grid_1d(
        n.div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    match b {
        Some(b) => gpu.dispatch(k, &p, &[a, y, b], groups),
        None => gpu.dispatch(k, &p, &[a, y], groups),
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `out = a + b` (all three the same number of elements; `out` distinct from both).
pub fn add_into(a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    same_len("add", a, b)?;
    same_len("add", a, out)?;
    no_alias("add", a, out)?;
    no_alias("add", b, out)?;
    launch(&ADD, a, out, Some(b), 1.0)
}

/// `out = s·a`.
pub fn scale_into(a: &Tensor, s: f32, out: &Tensor) -> Result<()> {
    same_len("scale", a, out)?;
    no_alias("scale", a, out)?;
    launch(&SCALE, a, out, None, s)
}

/// `y += alpha·x`. When `x` and `y` are one buffer the update goes through a scratch copy.
pub fn axpy_into(x: &Tensor, alpha: f32, y: &Tensor) -> Result<()> {
    same_len("axpy", x, y)?;
    if x.same_buffer(y) {
        let tmp = Tensor::uninit(x.device(), x.shape())?;
        scale_into(x, alpha, &tmp)?;
        return launch(&AXPY, &tmp, y, None, 1.0);
    }
    launch(&AXPY, x, y, None, alpha)
}

/// `out = max(x, 0)`.
pub fn relu_into(x: &Tensor, out: &Tensor) -> Result<()> {
    same_len("relu", x, out)?;
    no_alias("relu", x, out)?;
    launch(&RELU, x, out, None, 1.0)
}

/// `dx += dout · [x > 0]`.
pub fn relu_backward_into(x: &Tensor, dout: &Tensor, dx: &Tensor) -> Result<()> {
    same_len("relu backward", x, dout)?;
    same_len("relu backward", x, dx)?;
    no_alias("relu backward", x, dx)?;
    no_alias("relu backward", dout, dx)?;
    launch(&RELU_BACKWARD, x, dx, Some(dout), 1.0)
}

/// `out = x·Φ(x)`.
pub fn gelu_into(x: &Tensor, out: &Tensor) -> Result<()> {
    same_len("gelu", x, out)?;
    no_alias("gelu", x, out)?;
    launch(&GELU, x, out, None, 1.0)
}

/// `dx += dout · (Φ(x) + x·φ(x))`.
pub fn gelu_backward_into(x: &Tensor, dout: &Tensor, dx: &Tensor) -> Result<()> {
    same_len("gelu backward", x, dout)?;
    same_len("gelu backward", x, dx)?;
    no_alias("gelu backward", x, dx)?;
    no_alias("gelu backward", dout, dx)?;
    launch(&GELU_BACKWARD, x, dx, Some(dout), 1.0)
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// erf(x), from libm (a port of musl's, accurate to about 1 ulp).
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// erfc(x), from libm, with relative accuracy in the tail.
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// Φ(x) = 0.5·erfc(−x/√2), the standard normal CDF.
fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

pub fn add_ref(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

pub fn scale_ref(a: &[f64], s: f64) -> Vec<f64> {
    a.iter().map(|x| s * x).collect()
}

pub fn relu_ref(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| v.max(0.0)).collect()
}

/// `dx += dout · [x > 0]` (zero gradient at x ≤ 0, as PyTorch).
pub fn relu_backward_ref(x: &[f64], dout: &[f64], dx: &mut [f64]) {
    for ((d, &v), &g) in dx.iter_mut().zip(x).zip(dout) {
        if v > 0.0 {
            *d += g;
        }
    }
}

pub fn gelu_ref(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| v * phi(v)).collect()
}

/// `dx += dout · (Φ(x) + x·e^(−x²/2)/√(2π))`.
pub fn gelu_backward_ref(x: &[f64], dout: &[f64], dx: &mut [f64]) {
    let inv_sqrt_2pi = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    for ((d, &v), &g) in dx.iter_mut().zip(x).zip(dout) {
        *d += g * (phi(v) + v * (-0.5 * v * v).exp() * inv_sqrt_2pi);
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// `a + b` for two tensors of one shape; the gradient goes to both (twice to one used twice).
pub fn add(tape: &Tape, a: &Var, b: &Var) -> Result<Var> {
    if a.shape() != b.shape() {
        return Err(shape_err(
            "add",
            "operands must have the same shape",
            a.shape(),
            b.shape(),
        ));
    }
    let out = Tensor::uninit(a.device(), a.shape())?;
    add_into(a.value(), b.value(), &out)?;
    let (a2, b2) = (a.clone(), b.clone());
    Ok(tape.push("add", &[a, b], out, move |out| {
        let g = out.grad_or_zeros()?;
        for v in [&a2, &b2] {
            if v.requires_grad() {
                axpy_into(&g, 1.0, &v.grad_or_zeros()?)?;
            }
        }
        Ok(())
    }))
}

/// `s·a`.
pub fn scale(tape: &Tape, a: &Var, s: f32) -> Result<Var> {
    let out = Tensor::uninit(a.device(), a.shape())?;
    scale_into(a.value(), s, &out)?;
    let a2 = a.clone();
    Ok(tape.push("scale", &[a], out, move |out| {
        if a2.requires_grad() {
            axpy_into(&out.grad_or_zeros()?, s, &a2.grad_or_zeros()?)?;
        }
        Ok(())
    }))
}

/// `max(a, 0)`, gradient 0 at a ≤ 0.
pub fn relu(tape: &Tape, a: &Var) -> Result<Var> {
    let out = Tensor::uninit(a.device(), a.shape())?;
    relu_into(a.value(), &out)?;
    let a2 = a.clone();
    Ok(tape.push("relu", &[a], out, move |out| {
        if a2.requires_grad() {
            relu_backward_into(a2.value(), &out.grad_or_zeros()?, &a2.grad_or_zeros()?)?;
        }
        Ok(())
    }))
}

/// `0.5·a·(1 + erf(a/√2))`, PyTorch's default (exact) GELU.
pub fn gelu(tape: &Tape, a: &Var) -> Result<Var> {
    let out = Tensor::uninit(a.device(), a.shape())?;
    gelu_into(a.value(), &out)?;
    let a2 = a.clone();
    Ok(tape.push("gelu", &[a], out, move |out| {
        if a2.requires_grad() {
            gelu_backward_into(a2.value(), &out.grad_or_zeros()?, &a2.grad_or_zeros()?)?;
        }
        Ok(())
    }))
}
