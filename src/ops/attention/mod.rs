//! Causal attention with dropout over q, k, v (B·T, C) read as (B, NH, T, HS) → o (B·T, C), heads
//! merged: `S = scale · q kᵀ` (keys j > i masked), `P = softmax(S)`, `O = (P ⊙ M / (1 − p)) V`,
//! the dropout mask M the dropout op's for keys (B·NH·T) and `seed` (row `(b·NH + h)·T + i`,
//! column j). [`causal_attention`] is the entry point: on a hardware GPU (HS ≤ [`HS_MAX`]) the
//! fused kernels; on the CPU backend, a software GPU adapter (or any GPU after
//! `Device::set_fused_attention(false)`) the composition [`scores`], `causal_softmax`, `dropout`,
//! [`mix`], which is faster there (the matmuls are the CPU backend's tuned kernels) and gives the
//! same numbers bit for bit as the model's path before the fused kernels existed.
//!
//! The fused kernels (GPU only) keep no (B, NH, T, T) tensor: the forward keeps the row logsumexp
//! `L = log Σ_j exp(S_ij)` in `stats` (B·T, NH, 2), slot 0. Backward (P recomputed as
//! `exp(S − L)`): `D = rowsum(dO ⊙ O)` into stats slot 1, `dP = (dO Vᵀ) ⊙ M / (1 − p)`,
//! `dS = P ⊙ (dP − D)`, `dQ += scale · dS K`, `dK += scale · dSᵀ Q`, `dV += (P ⊙ M / (1 − p))ᵀ dO`:
//! one pass per query row for dQ (and D), then one per key row for dK and dV: each output row has
//! one writer, no atomics, every sum in key or query order.

pub(crate) mod check;

use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::ops::matmul::{self, Spec, View};
use crate::ops::{dropout, elementwise, softmax};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/attention.wgsl");
const FWD: Kernel = Kernel {
    family: "attention",
    src: SRC,
    entry: "attention",
};
const BWD_DQ: Kernel = Kernel {
    family: "attention",
    src: SRC,
    entry: "attention_backward_dq",
};
const BWD_DKV: Kernel = Kernel {
    family: "attention",
    src: SRC,
    entry: "attention_backward_dkv",
};
/// Rows (queries in the forward and dQ, keys in dK/dV) per workgroup: `ROWS` in the shader.
const ROWS: usize = 64;
/// The largest head size the kernels hold in registers (`HS_MAX` in the shader).
pub const HS_MAX: usize = 64;

/// The sizes of one attention call: B rows of T positions, NH heads of HS = C / NH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub b: usize,
    pub t: usize,
    pub nh: usize,
    pub hs: usize,
}

impl Dims {
    pub fn c(&self) -> usize {
        self.nh * self.hs
    }
    /// `1/√HS` as an f32, the scale the GPT's score matmul uses.
    pub fn scale(&self) -> f32 {
        1.0 / (self.hs as f32).sqrt()
    }
    /// Elements of the stats tensor: (B·T, NH, 2).
    pub fn stats_len(&self) -> usize {
        self.b * self.t * self.nh * 2
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    b: u32,
    t: u32,
    nh: u32,
    hs: u32,
    scale: f32,
    /// Drop probability; 0: no dropout (keys unread).
    drop_p: f32,
    /// 1 / (1 − p), the dropout op's f32 factor.
    keep_scale: f32,
    seed: u32,
}

/// Check the sizes against q, k, v (and o) (B·T, C), keys and stats; give the kernels' params.
fn params(
    what: &str,
    d: Dims,
    qkv: &[&Tensor],
    keys: &Tensor,
    p: f32,
    seed: u32,
) -> Result<Params> {
    if d.b == 0 || d.t == 0 || d.nh == 0 || d.hs == 0 {
        return Err(Error::Shape(format!(
            "{what}: B, T, NH and HS must be positive, got {d:?}"
        )));
    }
    if d.hs > HS_MAX {
        return Err(Error::Shape(format!(
            "{what}: head size {} is over the fused kernel's {HS_MAX}; causal_attention takes the \
             unfused path (matmul, causal_softmax, dropout, matmul) for it",
            d.hs
        )));
    }
    let want = [d.b * d.t, d.c()];
    for t in qkv {
        if t.shape() != want {
            return Err(shape_err(
                what,
                "q, k, v, o and dO as (B·T, C)",
                t.shape(),
                &want,
            ));
        }
    }
    if !(0.0..1.0).contains(&p) {
        return Err(Error::Msg(format!(
            "{what}: dropout p = {p} must be in [0, 1)"
        )));
    }
    let rows = d.b * d.nh * d.t;
    if (p > 0.0 && keys.numel() != rows) || keys.numel() == 0 {
        return Err(shape_err(
            what,
            "dropout keys (B·NH·T) (any non-empty keys when p = 0)",
            keys.shape(),
            &[rows],
        ));
    }
    let fits = |v: usize| {
        u32::try_from(v)
            .map_err(|_| Error::Msg(format!("{what}: size {v} does not fit in 32 bits")))
    };
    fits(d.b * d.t * d.c())?;
    fits(d.stats_len())?;
    Ok(Params {
        b: fits(d.b)?,
        t: fits(d.t)?,
        nh: fits(d.nh)?,
        hs: fits(d.hs)?,
        scale: d.scale(),
        drop_p: p,
        keep_scale: dropout::scale(p),
        seed,
    })
}

fn check_stats(what: &str, d: Dims, stats: &Tensor) -> Result<()> {
    if stats.numel() != d.stats_len() {
        return Err(shape_err(
            what,
            "stats as (B·T, NH, 2)",
            stats.shape(),
            &[d.b * d.t, d.nh, 2],
        ));
    }
    Ok(())
}

/// Refuse an output that is also an input (the kernels read inputs while writing outputs).
fn distinct(what: &str, outs: &[&Tensor], ins: &[&Tensor]) -> Result<()> {
    for (i, o) in outs.iter().enumerate() {
        if ins.iter().chain(&outs[i + 1..]).any(|x| x.same_buffer(o)) {
            return Err(Error::Msg(format!(
                "{what}: an output shares its buffer with an input or another output; give each \
                 output its own tensor"
            )));
        }
    }
    Ok(())
}

/// Whether `dev` has fused kernels for heads of `hs`: the GPU backend, up to [`HS_MAX`].
pub fn has_fused_kernels(dev: &Device, hs: usize) -> bool {
    dev.as_gpu().is_some() && hs <= HS_MAX
}

/// Whether [`causal_attention`] runs the fused kernels for heads of `hs` on `dev`: where it has
/// them and `Device::fused_attention` is on (by default on a hardware GPU, not a software one).
/// Elsewhere it composes matmul, causal_softmax, dropout and matmul, which keep (B, NH, T, T)
/// tensors (the memory estimate asks here).
pub fn fuses(dev: &Device, hs: usize) -> bool {
    has_fused_kernels(dev, hs) && dev.fused_attention()
}

/// The GPU that runs the fused kernels on `q`'s device, or an error naming the entry point to use.
fn fused_gpu<'a>(what: &str, q: &'a Tensor) -> Result<&'a crate::gpu::Gpu> {
    q.device().as_gpu().ok_or_else(|| {
        Error::Msg(format!(
            "{what}: the fused kernels run on the GPU backend only; on the CPU backend use \
             attention::causal_attention (matmul, causal_softmax, dropout, matmul)"
        ))
    })
}

/// Workgroups for `B·NH` (batch row, head) pairs of `⌈T / ROWS⌉` row tiles each.
fn grid(gpu: &crate::gpu::Gpu, d: Dims) -> [u32; 3] {
    let groups = (d.b * d.nh * d.t.div_ceil(ROWS)) as u32;
    grid_1d(groups, gpu.limits.max_compute_workgroups_per_dimension)
}

// ---------------------------------------------------------------------------------------------
// The fused kernels (GPU backend)

/// `o = attention(q, k, v)` (B·T, C) and the row logsumexp into `stats` (B·T, NH, 2) slot 0.
#[allow(clippy::too_many_arguments)]
pub fn attention_into(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    keys: &Tensor,
    o: &Tensor,
    stats: &Tensor,
    d: Dims,
    p: f32,
    seed: u32,
) -> Result<()> {
    let pr = params("attention", d, &[q, k, v, o], keys, p, seed)?;
    check_stats("attention", d, stats)?;
    distinct("attention", &[o, stats], &[q, k, v])?;
    let gpu = fused_gpu("attention", q)?;
    gpu.dispatch(&FWD, &pr, &[keys, q, k, v, o, stats], grid(gpu, d))
}

/// The backward: D into stats slot 1, then `dq`, `dk`, `dv` (B·T, C) accumulated.
#[allow(clippy::too_many_arguments)]
pub fn attention_backward_into(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    o: &Tensor,
    dout: &Tensor,
    keys: &Tensor,
    stats: &Tensor,
    dq: &Tensor,
    dk: &Tensor,
    dv: &Tensor,
    d: Dims,
    p: f32,
    seed: u32,
) -> Result<()> {
    let what = "attention backward";
    let pr = params(what, d, &[q, k, v, o, dout, dq, dk, dv], keys, p, seed)?;
    check_stats(what, d, stats)?;
    distinct(what, &[dq, dk, dv, stats], &[q, k, v, o, dout])?;
    let gpu = fused_gpu(what, q)?;
    gpu.dispatch(
        &BWD_DQ,
        &pr,
        &[keys, q, k, v, o, dout, stats, dq],
        grid(gpu, d),
    )?;
    gpu.dispatch(
        &BWD_DKV,
        &pr,
        &[keys, q, k, v, dout, stats, dk, dv],
        grid(gpu, d),
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64, with the dropout op's f32 mask and scale)

/// Whether attention element (row, j) is kept, row = (b·NH + h)·T + i.
fn keep_ref(keys: &[u32], p: f32, seed: u32, row: usize, j: usize) -> bool {
    p == 0.0 || dropout::dropout_keep(seed, keys[row], j as u32, p)
}

/// The probabilities P (B, NH, T, T) the literal way: scale, causal mask, softmax (f64).
pub fn probs_ref(q: &[f64], k: &[f64], d: Dims) -> Vec<f64> {
    let (t, c, hs) = (d.t, d.c(), d.hs);
    let scale = d.scale() as f64;
    let mut out = vec![0.0; d.b * d.nh * t * t];
    for b in 0..d.b {
        for h in 0..d.nh {
            for i in 0..t {
                let row = &mut out[((b * d.nh + h) * t + i) * t..][..t];
                let qi = &q[(b * t + i) * c + h * hs..][..hs];
                for (j, s) in row.iter_mut().enumerate().take(i + 1) {
                    let kj = &k[(b * t + j) * c + h * hs..][..hs];
                    *s = scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>();
                }
                let m = row[..=i].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = row[..=i].iter().map(|s| (s - m).exp()).sum();
                for (j, s) in row.iter_mut().enumerate() {
                    *s = if j <= i { (*s - m).exp() / z } else { 0.0 };
                }
            }
        }
    }
    out
}

/// `(o, lse)`: o (B·T, C) and the row logsumexp (B·T, NH).
pub fn attention_ref(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    keys: &[u32],
    d: Dims,
    p: f32,
    seed: u32,
) -> (Vec<f64>, Vec<f64>) {
    let (t, c, hs) = (d.t, d.c(), d.hs);
    let ks = dropout::scale(p) as f64;
    let scale = d.scale() as f64;
    let prob = probs_ref(q, k, d);
    let mut o = vec![0.0; d.b * t * c];
    let mut lse = vec![0.0; d.b * t * d.nh];
    for b in 0..d.b {
        for h in 0..d.nh {
            for i in 0..t {
                let qi = &q[(b * t + i) * c + h * hs..][..hs];
                let s: Vec<f64> = (0..=i)
                    .map(|j| {
                        let kj = &k[(b * t + j) * c + h * hs..][..hs];
                        scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
                    })
                    .collect();
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                lse[(b * t + i) * d.nh + h] = m + s.iter().map(|s| (s - m).exp()).sum::<f64>().ln();
                let pr = &prob[((b * d.nh + h) * t + i) * t..][..t];
                for j in 0..=i {
                    if keep_ref(keys, p, seed, (b * d.nh + h) * t + i, j) {
                        let w = pr[j] * ks;
                        for e in 0..hs {
                            o[(b * t + i) * c + h * hs + e] += w * v[(b * t + j) * c + h * hs + e];
                        }
                    }
                }
            }
        }
    }
    (o, lse)
}

/// `dq, dk, dv += …` for the upstream `dout` (B·T, C), through the full P (not the saved L or D,
/// so it checks the kernels' shortcuts against the plain chain rule).
#[allow(clippy::too_many_arguments)]
pub fn attention_backward_ref(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    dout: &[f64],
    keys: &[u32],
    d: Dims,
    p: f32,
    seed: u32,
    dq: &mut [f64],
    dk: &mut [f64],
    dv: &mut [f64],
) {
    let (t, c, hs) = (d.t, d.c(), d.hs);
    let ks = dropout::scale(p) as f64;
    let scale = d.scale() as f64;
    let prob = probs_ref(q, k, d);
    let at = |b: usize, i: usize, h: usize| (b * t + i) * c + h * hs;
    for b in 0..d.b {
        for h in 0..d.nh {
            for i in 0..t {
                let pr = &prob[((b * d.nh + h) * t + i) * t..][..t];
                // dP̃ = dO Vᵀ; dV += P̃ᵀ dO; dP = dP̃ ⊙ M · ks.
                let mut dp = vec![0.0; t];
                for j in 0..=i {
                    if !keep_ref(keys, p, seed, (b * d.nh + h) * t + i, j) {
                        continue;
                    }
                    let mut g = 0.0;
                    for e in 0..hs {
                        g += dout[at(b, i, h) + e] * v[at(b, j, h) + e];
                        dv[at(b, j, h) + e] += pr[j] * ks * dout[at(b, i, h) + e];
                    }
                    dp[j] = g * ks;
                }
                let dsum: f64 = (0..=i).map(|j| pr[j] * dp[j]).sum();
                for j in 0..=i {
                    let ds = pr[j] * (dp[j] - dsum) * scale;
                    for e in 0..hs {
                        dq[at(b, i, h) + e] += ds * k[at(b, j, h) + e];
                        dk[at(b, j, h) + e] += ds * q[at(b, i, h) + e];
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// Causal attention of q, k, v (B·T, C) in `d`'s shape with attention dropout `p` (0: none) keyed
/// by `keys` (B·NH·T) and `seed`: (B·T, C), heads merged. The fused kernels where [`fuses`] says
/// so (the GPU backend), otherwise [`scores`] then [`attend`].
#[allow(clippy::too_many_arguments)]
pub fn causal_attention(
    tape: &Tape,
    q: &Var,
    k: &Var,
    v: &Var,
    keys: &Tensor,
    d: Dims,
    p: f32,
    seed: u32,
) -> Result<Var> {
    if fuses(q.device(), d.hs) {
        return attention(tape, q, k, v, keys, d, p, seed);
    }
    let s = scores(tape, q, k, d)?;
    Ok(attend(tape, &s, v, d, keys, p, seed)?.0)
}

/// The unfused tail from scores (B, NH, T, T): `causal_softmax`, `dropout` (when p > 0), then
/// [`mix`] with v (B·T, C). Returns the output (B·T, C) and the probabilities before dropout.
#[allow(clippy::too_many_arguments)]
pub fn attend(
    tape: &Tape,
    scores: &Var,
    v: &Var,
    d: Dims,
    keys: &Tensor,
    p: f32,
    seed: u32,
) -> Result<(Var, Tensor)> {
    let mut att = softmax::causal_softmax(tape, scores, 1.0)?;
    let probs = att.value().clone();
    if p > 0.0 {
        att = dropout::dropout(tape, &att, keys, p, seed)?;
    }
    Ok((mix(tape, &att, v, d)?, probs))
}

/// (B·T, C) seen as (B, NH, T, HS): batch strides T·C and HS, row C, column 1.
fn head_view(d: Dims) -> View {
    View {
        outer: d.t * d.c(),
        inner: d.hs,
        row: d.c(),
        col: 1,
    }
}

/// (B, NH, T, T), contiguous.
fn square_view(d: Dims) -> View {
    View {
        outer: d.nh * d.t * d.t,
        inner: d.t * d.t,
        row: d.t,
        col: 1,
    }
}

/// `q·kᵀ/√HS` per batch row and head, q and k (B·T, C) read through strided views (no copies):
/// (B, NH, T, T).
pub fn scores(tape: &Tape, q: &Var, k: &Var, d: Dims) -> Result<Var> {
    let s = Spec {
        z: (d.b, d.nh),
        m: d.t,
        n: d.t,
        k: d.hs,
        a: head_view(d),
        b: head_view(d).t(),
        c: square_view(d),
        alpha: d.scale(),
    };
    matmul::matmul(tape, q, k, None, s, &[d.b, d.nh, d.t, d.t])
}

/// `att·v` per batch row and head, att (B, NH, T, T) and v (B·T, C), written into (B·T, C) with
/// the heads merged.
pub fn mix(tape: &Tape, att: &Var, v: &Var, d: Dims) -> Result<Var> {
    let s = Spec {
        z: (d.b, d.nh),
        m: d.t,
        n: d.hs,
        k: d.t,
        a: square_view(d),
        b: head_view(d),
        c: head_view(d),
        alpha: 1.0,
    };
    matmul::matmul(tape, att, v, None, s, &[d.b * d.t, d.c()])
}

/// Fused causal attention (the GPU backend's kernels) of q, k, v (B·T, C) in `d`'s shape, with
/// attention dropout `p` (0: none) keyed by `keys` (B·NH·T) and `seed`: (B·T, C), heads merged.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    tape: &Tape,
    q: &Var,
    k: &Var,
    v: &Var,
    keys: &Tensor,
    d: Dims,
    p: f32,
    seed: u32,
) -> Result<Var> {
    let dev = q.device();
    let o = Tensor::uninit(dev, &[d.b * d.t, d.c()])?;
    let stats = Tensor::uninit(dev, &[d.b * d.t, d.nh, 2])?;
    attention_into(
        q.value(),
        k.value(),
        v.value(),
        keys,
        &o,
        &stats,
        d,
        p,
        seed,
    )?;
    let (qv, kv, vv, keys) = (q.clone(), k.clone(), v.clone(), keys.clone());
    Ok(tape.push("attention", &[q, k, v], o, move |out| {
        let (dq, dk, dv) = (
            qv.grad_or_zeros()?,
            kv.grad_or_zeros()?,
            vv.grad_or_zeros()?,
        );
        let shared = dq.same_buffer(&dk) || dq.same_buffer(&dv) || dk.same_buffer(&dv);
        let (o, dout) = (out.value(), out.grad_or_zeros()?);
        let (q, k, v) = (qv.value(), kv.value(), vv.value());
        if !shared {
            return attention_backward_into(
                q, k, v, o, &dout, &keys, &stats, &dq, &dk, &dv, d, p, seed,
            );
        }
        // A tensor passed twice: each gradient into its own buffer, then added.
        let fresh = || Tensor::zeros(q.device(), q.shape());
        let (tq, tk, tv) = (fresh()?, fresh()?, fresh()?);
        attention_backward_into(q, k, v, o, &dout, &keys, &stats, &tq, &tk, &tv, d, p, seed)?;
        for (t, g) in [(&tq, &dq), (&tk, &dk), (&tv, &dv)] {
            elementwise::axpy_into(t, 1.0, g)?;
        }
        Ok(())
    }))
}
