//! Softmax over the last axis, two variants of one kernel:
//! - causal (the GPT): scores (.., T, T) → P (.., T, T), `P[i, :] = softmax(scale·S[i, :])` with keys
//!   j > i masked (PyTorch's `masked_fill(-1e10)` after the scale, so masked P is exactly 0);
//! - unmasked (the ViT's bidirectional attention): scores (.., T) → P (.., T), every key visible.
//!
//! Backward, both: `dS = scale · P ⊙ (dP − Σ_j P dP)`, exactly 0 where masked.

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, RowKernel};
use crate::tensor::Tensor;

/// The shader after the row reductions it uses: workgroup trees, or subgroup operations.
const SRCS: [&str; 2] = [
    concat!(
        include_str!("../../../shaders/rows.wgsl"),
        include_str!("../../../shaders/softmax.wgsl")
    ),
    concat!(
        enable_subgroups!(),
        include_str!("../../../shaders/rows_subgroup.wgsl"),
        include_str!("../../../shaders/softmax.wgsl")
    ),
];
const FAMILIES: [&str; 2] = ["softmax", "softmax+subgroups"];
const FWD: RowKernel = RowKernel::new(FAMILIES, SRCS, "softmax");
const BWD: RowKernel = RowKernel::new(FAMILIES, SRCS, "softmax_backward");

/// The value PyTorch writes into masked scores before the softmax.
pub const MASK_VALUE: f64 = -1e10;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    t: u32,
    scale: f32,
    /// 1: keys after the row's query (`row % t`) are masked; 0: every key is visible.
    causal: u32,
}

/// (rows, T) of a (.., T, T) shape (causal) or a (.., T) shape (unmasked), or a shape error.
fn rows_t(shape: &[usize], causal: bool) -> Result<(usize, usize)> {
    let n = shape.len();
    if !causal {
        let Some(&t) = shape.last() else {
            return Err(Error::Shape(
                "softmax: scores need at least one axis, got a scalar shape []".into(),
            ));
        };
        return Ok((
            shape.iter().product::<usize>().checked_div(t).unwrap_or(0),
            t,
        ));
    }
    if n < 2 || shape[n - 1] != shape[n - 2] {
        return Err(Error::Shape(format!(
            "causal_softmax: scores must be (.., T, T) with equal last two dims, got {shape:?}"
        )));
    }
    let t = shape[n - 1];
    Ok((
        shape.iter().product::<usize>().checked_div(t).unwrap_or(0),
        t,
    ))
}

fn params(rows: usize, t: usize, scale: f32, causal: bool) -> Result<Params> {
    let fits = |v: usize, what: &str| {
        u32::try_from(v)
            .map_err(|_| Error::Msg(format!("softmax: {v} {what} do not fit in 32 bits")))
    };
    Ok(Params {
        rows: fits(rows, "rows")?,
        t: fits(t, "keys per row")?,
        scale,
        causal: causal as u32,
    })
}

fn op_name(causal: bool) -> &'static str {
    if causal {
        "causal_softmax"
    } else {
        "softmax"
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `out = causal_softmax(scale · scores)`; `out` has the shape of `scores`.
pub fn causal_softmax_into(scores: &Tensor, out: &Tensor, scale: f32) -> Result<()> {
    softmax_variant_into(scores, out, scale, true)
}

/// `out = softmax(scale · scores)` over the last axis, no mask; `out` has the shape of `scores`.
pub fn softmax_into(scores: &Tensor, out: &Tensor, scale: f32) -> Result<()> {
    softmax_variant_into(scores, out, scale, false)
}

fn softmax_variant_into(scores: &Tensor, out: &Tensor, scale: f32, causal: bool) -> Result<()> {
    let name = op_name(causal);
    if scores.shape() != out.shape() {
        return Err(shape_err(
            name,
            "scores and output",
            scores.shape(),
            out.shape(),
        ));
    }
    let (rows, t) = rows_t(scores.shape(), causal)?;
    let p = params(rows, t, scale, causal)?;
    let Some(gpu) = scores.device().as_gpu() else {
        cpu::softmax(&scores.f32s()?, &mut out.f32s_mut()?, t, scale, causal);
        return Ok(());
    };
    gpu.dispatch(
        gpu.row_kernel(&FWD),
        &p,
        &[scores, out],
        grid_1d(p.rows, gpu.limits.max_compute_workgroups_per_dimension),
    )
}

/// `dscores += scale · P ⊙ (dP − Σ_j P dP)` row by row (causal: P is (.., T, T)).
pub fn causal_softmax_backward_into(
    prob: &Tensor,
    dprob: &Tensor,
    dscores: &Tensor,
    scale: f32,
) -> Result<()> {
    softmax_variant_backward_into(prob, dprob, dscores, scale, true)
}

/// `dscores += scale · P ⊙ (dP − Σ_j P dP)` row by row, every key visible.
pub fn softmax_backward_into(
    prob: &Tensor,
    dprob: &Tensor,
    dscores: &Tensor,
    scale: f32,
) -> Result<()> {
    softmax_variant_backward_into(prob, dprob, dscores, scale, false)
}

fn softmax_variant_backward_into(
    prob: &Tensor,
    dprob: &Tensor,
    dscores: &Tensor,
    scale: f32,
    causal: bool,
) -> Result<()> {
    let name = format!("{} backward", op_name(causal));
    for (what, t) in [("P and dP", dprob), ("P and dscores", dscores)] {
        if t.shape() != prob.shape() {
            return Err(shape_err(&name, what, prob.shape(), t.shape()));
        }
    }
    let (rows, t) = rows_t(prob.shape(), causal)?;
    let p = params(rows, t, scale, causal)?;
    let Some(gpu) = prob.device().as_gpu() else {
        let (pr, dp) = (prob.f32s()?, dprob.f32s()?);
        cpu::softmax_backward(&pr, &dp, &mut dscores.f32s_mut()?, t, scale, causal);
        return Ok(());
    };
    gpu.dispatch(
        gpu.row_kernel(&BWD),
        &p,
        &[prob, dprob, dscores],
        grid_1d(p.rows, gpu.limits.max_compute_workgroups_per_dimension),
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// The literal PyTorch recipe: scale, `masked_fill(j > i, -1e10)`, subtract the row max, softmax.
/// `scores` is `rows·t` values, rows being queries `i = row % t`.
pub fn causal_softmax_ref(scores: &[f64], t: usize, scale: f64) -> Vec<f64> {
    softmax_variant_ref(scores, t, scale, true)
}

/// The unmasked softmax: scale, subtract the row max, softmax; rows of `t` values.
pub fn softmax_ref(scores: &[f64], t: usize, scale: f64) -> Vec<f64> {
    softmax_variant_ref(scores, t, scale, false)
}

fn softmax_variant_ref(scores: &[f64], t: usize, scale: f64, causal: bool) -> Vec<f64> {
    let mut out = vec![0.0; scores.len()];
    if t == 0 {
        return out;
    }
    for (r, (x, y)) in scores.chunks(t).zip(out.chunks_mut(t)).enumerate() {
        let i = r % t;
        let s: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(j, &v)| {
                if causal && j > i {
                    MASK_VALUE
                } else {
                    scale * v
                }
            })
            .collect();
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
        let z: f64 = e.iter().sum();
        for (yj, ej) in y.iter_mut().zip(&e) {
            *yj = ej / z;
        }
    }
    out
}

/// `dscores += scale · P ⊙ (dP − Σ_j P dP)`; the same formula serves both variants (a masked P is 0,
/// so its entry gets 0).
pub fn softmax_backward_ref(
    prob: &[f64],
    dprob: &[f64],
    t: usize,
    scale: f64,
    dscores: &mut [f64],
) {
    if t == 0 {
        return;
    }
    for ((p, dp), ds) in prob
        .chunks(t)
        .zip(dprob.chunks(t))
        .zip(dscores.chunks_mut(t))
    {
        let d: f64 = p.iter().zip(dp).map(|(a, b)| a * b).sum();
        for j in 0..t {
            ds[j] += scale * p[j] * (dp[j] - d);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// Causal softmax of `scale · scores` for scores (.., T, T); backward reuses the saved output.
pub fn causal_softmax(tape: &Tape, scores: &Var, scale: f32) -> Result<Var> {
    softmax_variant(tape, scores, scale, true)
}

/// Unmasked softmax of `scale · scores` over the last axis; backward reuses the saved output.
pub fn softmax(tape: &Tape, scores: &Var, scale: f32) -> Result<Var> {
    softmax_variant(tape, scores, scale, false)
}

fn softmax_variant(tape: &Tape, scores: &Var, scale: f32, causal: bool) -> Result<Var> {
    let out = Tensor::uninit(scores.device(), scores.shape())?;
    softmax_variant_into(scores.value(), &out, scale, causal)?;
    let s = scores.clone();
    Ok(tape.push(op_name(causal), &[scores], out, move |out| {
        if !s.requires_grad() {
            return Ok(());
        }
        softmax_variant_backward_into(
            out.value(),
            &out.grad_or_zeros()?,
            &s.grad_or_zeros()?,
            scale,
            causal,
        )
    }))
}
