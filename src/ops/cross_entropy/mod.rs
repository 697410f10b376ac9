//! Cross-entropy with `ignore_index = 0`: logits (N, V), targets (N) u32 → loss (1) =
//! mean over rows with target ≠ 0 of `logsumexp(logits[n]) − logits[n, target]`. With every target
//! ignored the loss and its gradient are 0 (PyTorch would give NaN). Targets ≥ V are ignored by the
//! kernels (never read out of bounds); [`check_targets`] rejects them where the ids are on the CPU.

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
        include_str!("../../../shaders/cross_entropy.wgsl")
    ),
    concat!(
        enable_subgroups!(),
        include_str!("../../../shaders/rows_subgroup.wgsl"),
        include_str!("../../../shaders/cross_entropy.wgsl")
    ),
];
const FAMILIES: [&str; 2] = ["cross_entropy", "cross_entropy+subgroups"];
const ROWS: RowKernel = RowKernel::new(FAMILIES, SRCS, "cross_entropy_rows");
const REDUCE: RowKernel = RowKernel::new(FAMILIES, SRCS, "cross_entropy_reduce");
/// One thread per element, no reduction: one build.
const BWD: Kernel = RowKernel::new(FAMILIES, SRCS, "cross_entropy_backward").tree;
const WG: u32 = 256;

/// The target id that marks a row as padding.
pub const IGNORE_INDEX: u32 = 0;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    v: u32,
    _pad: [u32; 2],
}

fn params(logits: &[usize], targets: &[usize]) -> Result<Params> {
    if logits.len() != 2 || targets != [logits[0]] {
        return Err(shape_err(
            "cross_entropy",
            "logits (N, V) and targets (N)",
            logits,
            targets,
        ));
    }
    let big = |x: usize| {
        u32::try_from(x)
            .map_err(|_| Error::Msg(format!("cross_entropy: size {x} does not fit in 32 bits")))
    };
    big(logits[0] * logits[1])?;
    Ok(Params {
        n: big(logits[0])?,
        v: big(logits[1])?,
        _pad: [0; 2],
    })
}

/// Reject target ids ≥ V when the caller has them on the CPU (the GPU kernels ignore such rows).
pub fn check_targets(targets: &[u32], v: usize) -> Result<()> {
    match targets.iter().position(|&t| t as usize >= v) {
        Some(i) => Err(Error::Msg(format!(
            "cross_entropy: target[{i}] = {} is not below the vocabulary size {v}",
            targets[i]
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// Forward: writes the mean loss into `loss` (1 element) and the per-row statistics the backward
/// needs into `stats` (3N + 1 elements: row lse, row loss, row valid, count).
pub fn cross_entropy_into(
    logits: &Tensor,
    targets: &Tensor,
    loss: &Tensor,
    stats: &Tensor,
) -> Result<()> {
    let p = params(logits.shape(), targets.shape())?;
    let n = p.n as usize;
    if stats.numel() < 3 * n + 1 || loss.numel() != 1 {
        return Err(shape_err(
            "cross_entropy",
            "stats (3N+1) and loss (1)",
            stats.shape(),
            loss.shape(),
        ));
    }
    let Some(gpu) = logits.device().as_gpu() else {
        let (v, t) = (p.v as usize, targets.u32s()?);
        let l = cpu::cross_entropy(&logits.f32s()?, &t, &mut stats.f32s_mut()?, n, v);
        loss.f32s_mut()?[0] = l;
        return Ok(());
    };
    gpu.dispatch(
        gpu.row_kernel(&ROWS),
        &p,
        &[logits, targets, stats],
        grid_1d(p.n, gpu.limits.max_compute_workgroups_per_dimension),
    )?;
    gpu.dispatch(gpu.row_kernel(&REDUCE), &p, &[stats, loss], [1, 1, 1])
}

/// Backward: `dlogits += dloss · (softmax − onehot) / count` on rows with a valid target.
pub fn cross_entropy_backward_into(
    logits: &Tensor,
    targets: &Tensor,
    stats: &Tensor,
    dloss: &Tensor,
    dlogits: &Tensor,
) -> Result<()> {
    let p = params(logits.shape(), targets.shape())?;
    if dlogits.shape() != logits.shape() {
        return Err(shape_err(
            "cross_entropy backward",
            "logits and dlogits",
            logits.shape(),
            dlogits.shape(),
        ));
    }
    let Some(gpu) = logits.device().as_gpu() else {
        let (n, v) = (p.n as usize, p.v as usize);
        let (l, t, st) = (logits.f32s()?, targets.u32s()?, stats.f32s()?);
        let d = *dloss
            .f32s()?
            .first()
            .ok_or_else(|| Error::Shape("cross_entropy backward: empty dloss".into()))?;
        cpu::cross_entropy_backward(&l, &t, &st, d, &mut dlogits.f32s_mut()?, n, v);
        return Ok(());
    };
    let groups = grid_1d(
        (p.n * p.v).div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    gpu.dispatch(&BWD, &p, &[logits, targets, stats, dloss, dlogits], groups)
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

fn lse(row: &[f64]) -> f64 {
    let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + row.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

fn valid(t: u32, v: usize) -> bool {
    t != IGNORE_INDEX && (t as usize) < v
}

/// The mean loss over rows with a valid target (0 when there are none).
pub fn cross_entropy_ref(logits: &[f64], targets: &[u32], v: usize) -> f64 {
    let (mut s, mut c) = (0.0, 0usize);
    for (row, &t) in logits.chunks(v).zip(targets) {
        if valid(t, v) {
            s += lse(row) - row[t as usize];
            c += 1;
        }
    }
    if c == 0 {
        0.0
    } else {
        s / c as f64
    }
}

/// `dlogits += dloss · (softmax − onehot) / count` for valid rows.
pub fn cross_entropy_backward_ref(
    logits: &[f64],
    targets: &[u32],
    v: usize,
    dloss: f64,
    dlogits: &mut [f64],
) {
    let c = targets.iter().filter(|&&t| valid(t, v)).count();
    for ((row, &t), d) in logits.chunks(v).zip(targets).zip(dlogits.chunks_mut(v)) {
        if !valid(t, v) {
            continue;
        }
        let l = lse(row);
        for j in 0..v {
            let onehot = if j == t as usize { 1.0 } else { 0.0 };
            d[j] += dloss * ((row[j] - l).exp() - onehot) / c as f64;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// The mean cross-entropy of `logits` (N, V) against `targets` (N) u32, ignoring target 0.
pub fn cross_entropy(tape: &Tape, logits: &Var, targets: &Tensor) -> Result<Var> {
    let p = params(logits.shape(), targets.shape())?;
    let dev = logits.device();
    let loss = Tensor::uninit(dev, &[1])?;
    let stats = Tensor::uninit(dev, &[3 * p.n as usize + 1])?;
    cross_entropy_into(logits.value(), targets, &loss, &stats)?;
    let (l, t) = (logits.clone(), targets.clone());
    Ok(tape.push("cross_entropy", &[logits], loss, move |out| {
        if !l.requires_grad() {
            return Ok(());
        }
        cross_entropy_backward_into(
            l.value(),
            &t,
            &stats,
            &out.grad_or_zeros()?,
            &l.grad_or_zeros()?,
        )
    }))
}
