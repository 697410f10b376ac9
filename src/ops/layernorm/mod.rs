//! LayerNorm over the last dim: x (.., C), w (C), b (C) → y (.., C) with
//! `y = (x − mean)·rstd·w + b`, `rstd = 1/sqrt(var + 1e-5)`, biased variance (as PyTorch). The
//! forward saves mean and rstd (rows) for the backward, which gives dx, dw and db (accumulated).

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel, RowKernel};
use crate::tensor::Tensor;

/// The shader after the row reductions it uses: workgroup trees, or subgroup operations.
const SRCS: [&str; 2] = [
    concat!(
        include_str!("../../../shaders/rows.wgsl"),
        include_str!("../../../shaders/layernorm.wgsl")
    ),
    concat!(
        enable_subgroups!(),
        include_str!("../../../shaders/rows_subgroup.wgsl"),
        include_str!("../../../shaders/layernorm.wgsl")
    ),
];
const FAMILIES: [&str; 2] = ["layernorm", "layernorm+subgroups"];
const FORWARD: RowKernel = RowKernel::new(FAMILIES, SRCS, "layernorm");
const BACKWARD_DX: RowKernel = RowKernel::new(FAMILIES, SRCS, "layernorm_backward_dx");
/// The dw/db kernels reduce nothing across threads: one build.
const DWDB_PARTIAL: Kernel = RowKernel::new(FAMILIES, SRCS, "layernorm_backward_dwdb_partial").tree;
const DWDB_SUM: Kernel = RowKernel::new(FAMILIES, SRCS, "layernorm_backward_dwdb_sum").tree;
/// Threads per workgroup (`WG` in the shader).
const WG: u32 = 256;
/// Rows per block of dw/db partial sums (more when the blocks would exceed the grid limit).
const BLOCK_ROWS: u32 = 32;
pub const EPS: f32 = 1e-5;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    c: u32,
    eps: f32,
    block_rows: u32,
    nblocks: u32,
    _pad: [u32; 3],
}

/// (rows, C) for x against w and b, or a shape error naming the shapes.
fn dims(x: &[usize], w: &[usize], b: &[usize]) -> Result<(usize, usize)> {
    let c = *x
        .last()
        .ok_or_else(|| shape_err("layernorm", "input must have a last dim", x, w))?;
    if w != [c] {
        return Err(shape_err("layernorm", "input (.., C) and weight (C)", x, w));
    }
    if b != [c] {
        return Err(shape_err("layernorm", "input (.., C) and bias (C)", x, b));
    }
    let rows = x.iter().product::<usize>().checked_div(c).unwrap_or(0);
    Ok((rows, c))
}

fn params(rows: usize, c: usize, block_rows: u32, nblocks: u32) -> Result<Params> {
    let u = |v: usize| {
        u32::try_from(v).map_err(|_| Error::Msg(format!("layernorm: {v} does not fit in 32 bits")))
    };
    Ok(Params {
        rows: u(rows)?,
        c: u(c)?,
        eps: EPS,
        block_rows,
        nblocks,
        _pad: [0; 3],
    })
}

/// No buffer may fill two slots of a layernorm dispatch: a written slot must not alias any other
/// (WebGPU refuses it), and one rule for all slots gives one clear message on both backends.
fn distinct(ts: &[&Tensor]) -> Result<()> {
    for (i, a) in ts.iter().enumerate() {
        if ts[i + 1..].iter().any(|b| a.same_buffer(b)) {
            return Err(Error::Msg(
                "layernorm: the same buffer is passed in two roles (input, \
                 weight, bias, output and saved stats must be distinct tensors)"
                    .into(),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `y = layernorm(x; w, b)`, writing `mean` and `rstd` (one per row) for the backward.
pub fn layernorm_into(
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    y: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
) -> Result<()> {
    let (rows, c) = dims(x.shape(), w.shape(), b.shape())?;
    if y.numel() != rows * c || mean.numel() != rows || rstd.numel() != rows {
        return Err(shape_err(
            "layernorm",
            "output / mean / rstd sizes for input",
            x.shape(),
            &[y.numel(), mean.numel(), rstd.numel()],
        ));
    }
    distinct(&[x, w, b, y, mean, rstd])?;
    let Some(gpu) = x.device().as_gpu() else {
        let (mut m, mut s) = (mean.f32s_mut()?, rstd.f32s_mut()?);
        let (xs, ws, bs) = (x.f32s()?, w.f32s()?, b.f32s()?);
        cpu::layernorm(&xs, &ws, &bs, &mut y.f32s_mut()?, (&mut m, &mut s), c, EPS);
        return Ok(());
    };
    let p = params(rows, c, BLOCK_ROWS, 0)?;
    gpu.dispatch(
        gpu.row_kernel(&FORWARD),
        &p,
        &[x, w, b, y, mean, rstd],
        grid_1d(p.rows, gpu.limits.max_compute_workgroups_per_dimension),
    )
}

/// Accumulate the gradients of layernorm into whichever of `dx`, `dw`, `db` are given.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_backward_into(
    x: &Tensor,
    w: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    dy: &Tensor,
    dx: Option<&Tensor>,
    dw: Option<&Tensor>,
    db: Option<&Tensor>,
) -> Result<()> {
    let (rows, c) = dims(x.shape(), w.shape(), w.shape())?;
    if dy.numel() != rows * c || mean.numel() != rows || rstd.numel() != rows {
        return Err(shape_err(
            "layernorm backward",
            "dy / mean / rstd sizes for input",
            x.shape(),
            &[dy.numel(), mean.numel(), rstd.numel()],
        ));
    }
    let Some(gpu) = x.device().as_gpu() else {
        return layernorm_backward_cpu(x, w, mean, rstd, dy, dx, dw, db, c);
    };
    let maxd = gpu.limits.max_compute_workgroups_per_dimension;
    if let Some(dx) = dx {
        if dx.numel() != rows * c {
            return Err(shape_err(
                "layernorm backward",
                "input and dx",
                x.shape(),
                dx.shape(),
            ));
        }
        distinct(&[x, w, dy, dx, mean, rstd])?;
        let p = params(rows, c, BLOCK_ROWS, 0)?;
        gpu.dispatch(
            gpu.row_kernel(&BACKWARD_DX),
            &p,
            &[x, w, dy, dx, mean, rstd],
            grid_1d(p.rows, maxd),
        )?;
    }
    if dw.is_none() && db.is_none() {
        return Ok(());
    }
    // Blocks of rows → partial sums (2, nblocks, C) → one in-order sum per channel.
    let block_rows =
        BLOCK_ROWS.max(u32::try_from(rows.div_ceil(maxd as usize)).unwrap_or(u32::MAX));
    let nblocks = u32::try_from(rows.div_ceil(block_rows as usize))
        .unwrap_or(u32::MAX)
        .max(1);
    let p = params(rows, c, block_rows, nblocks)?;
    let partials = Tensor::uninit(x.device(), &[2, nblocks as usize, c])?;
    distinct(&[x, dy, mean, rstd, &partials])?;
    gpu.dispatch(
        &DWDB_PARTIAL,
        &p,
        &[x, dy, mean, rstd, &partials],
        [p.c.div_ceil(WG), nblocks, 1],
    )?;
    // A gradient that is not wanted still gets summed, into scratch.
    let scratch;
    let (dw, db) = match (dw, db) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) | (None, Some(a)) => {
            scratch = Tensor::uninit(x.device(), &[c])?;
            if db.is_none() {
                (a, &scratch)
            } else {
                (&scratch, a)
            }
        }
        (None, None) => return Ok(()),
    };
    if dw.numel() != c || db.numel() != c {
        return Err(shape_err(
            "layernorm backward",
            "dw and db must have C elements",
            dw.shape(),
            db.shape(),
        ));
    }
    distinct(&[&partials, dw, db])?;
    gpu.dispatch(
        &DWDB_SUM,
        &p,
        &[&partials, dw, db],
        grid_1d(p.c.div_ceil(WG), maxd),
    )
}

/// The backward on the CPU backend: the same checks, then the row kernels.
#[allow(clippy::too_many_arguments)]
fn layernorm_backward_cpu(
    x: &Tensor,
    w: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    dy: &Tensor,
    dx: Option<&Tensor>,
    dw: Option<&Tensor>,
    db: Option<&Tensor>,
    c: usize,
) -> Result<()> {
    let (xs, dys, m, s) = (x.f32s()?, dy.f32s()?, mean.f32s()?, rstd.f32s()?);
    if let Some(dx) = dx {
        if dx.numel() != xs.len() {
            return Err(shape_err(
                "layernorm backward",
                "input and dx",
                x.shape(),
                dx.shape(),
            ));
        }
        cpu::layernorm_backward_dx(&xs, &w.f32s()?, &dys, &mut dx.f32s_mut()?, &m, &s, c);
    }
    let mut scratch = (vec![0.0; c], vec![0.0; c]);
    let mut dwm = match dw {
        Some(t) if t.numel() == c => Some(t.f32s_mut()?),
        Some(t) => {
            return Err(shape_err(
                "layernorm backward",
                "dw must have C elements",
                t.shape(),
                &[c],
            ))
        }
        None => None,
    };
    let mut dbm = match db {
        Some(t) if t.numel() == c => Some(t.f32s_mut()?),
        Some(t) => {
            return Err(shape_err(
                "layernorm backward",
                "db must have C elements",
                t.shape(),
                &[c],
            ))
        }
        None => None,
    };
    if dwm.is_some() || dbm.is_some() {
        let dwr: &mut [f32] = dwm.as_deref_mut().unwrap_or(&mut scratch.0);
        let dbr: &mut [f32] = dbm.as_deref_mut().unwrap_or(&mut scratch.1);
        cpu::layernorm_backward_dwdb(&xs, &dys, &m, &s, dwr, dbr, c);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// Returns (y, mean, rstd) for x (rows, C).
pub fn layernorm_ref(x: &[f64], w: &[f64], b: &[f64], c: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let rows = x.len().checked_div(c).unwrap_or(0);
    let (mut y, mut mean, mut rstd) = (vec![0.0; rows * c], vec![0.0; rows], vec![0.0; rows]);
    for r in 0..rows {
        let row = &x[r * c..(r + 1) * c];
        let m = row.iter().sum::<f64>() / c as f64;
        let v = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / c as f64;
        let s = 1.0 / (v + EPS as f64).sqrt();
        for j in 0..c {
            y[r * c + j] = (row[j] - m) * s * w[j] + b[j];
        }
        mean[r] = m;
        rstd[r] = s;
    }
    (y, mean, rstd)
}

/// Accumulate dx, dw, db given dy (rows, C), recomputing the statistics in f64.
pub fn layernorm_backward_ref(
    x: &[f64],
    w: &[f64],
    dy: &[f64],
    c: usize,
    dx: &mut [f64],
    dw: &mut [f64],
    db: &mut [f64],
) {
    let (_, mean, rstd) = layernorm_ref(x, w, &vec![0.0; c], c);
    for r in 0..mean.len() {
        let o = r * c;
        let xhat: Vec<f64> = (0..c).map(|j| (x[o + j] - mean[r]) * rstd[r]).collect();
        let g: Vec<f64> = (0..c).map(|j| dy[o + j] * w[j]).collect();
        let mg = g.iter().sum::<f64>() / c as f64;
        let mgx = g.iter().zip(&xhat).map(|(g, h)| g * h).sum::<f64>() / c as f64;
        for j in 0..c {
            dx[o + j] += rstd[r] * (g[j] - mg - xhat[j] * mgx);
            dw[j] += dy[o + j] * xhat[j];
            db[j] += dy[o + j];
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// LayerNorm of x (.., C) with weight and bias (C), on the tape.
pub fn layernorm(tape: &Tape, x: &Var, w: &Var, b: &Var) -> Result<Var> {
    let (rows, _) = dims(x.shape(), w.shape(), b.shape())?;
    let dev = x.device();
    let y = Tensor::uninit(dev, x.shape())?;
    let (mean, rstd) = (Tensor::uninit(dev, &[rows])?, Tensor::uninit(dev, &[rows])?);
    layernorm_into(x.value(), w.value(), b.value(), &y, &mean, &rstd)?;
    let (x2, w2, b2) = (x.clone(), w.clone(), b.clone());
    Ok(tape.push("layernorm", &[x, w, b], y, move |out| {
        let dy = out.grad_or_zeros()?;
        let grad = |v: &Var| {
            if v.requires_grad() {
                v.grad_or_zeros().map(Some)
            } else {
                Ok(None)
            }
        };
        let (dx, dw, db) = (grad(&x2)?, grad(&w2)?, grad(&b2)?);
        layernorm_backward_into(
            x2.value(),
            w2.value(),
            &mean,
            &rstd,
            &dy,
            dx.as_ref(),
            dw.as_ref(),
            db.as_ref(),
        )
    }))
}
