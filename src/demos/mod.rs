//! The attention exercises E1–E10 (docs/attention-exercises.md) as numbers for the page's demos and
//! for tests/it/demos.rs: `c = Σᵢ αᵢ vᵢ`, `α = softmax(β·Kq)` computed with the crate's own kernels (the
//! strided matmul and the softmax, causal or unmasked), each result carrying an f64 CPU reference
//! beside it.

pub mod heads;
pub mod kqv;
pub mod mask;
pub mod multi;
pub mod single;

use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::matmul::{matmul, Spec, View};
use crate::ops::softmax::{causal_softmax, softmax};
use crate::tensor::Tensor;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::rc::Rc;

/// A seeded generator for the demos' random keys, values and scores (the same seed gives the same
/// numbers natively and in the browser, so a shared link shows the same picture).
pub struct DemoRng(SmallRng);

impl DemoRng {
    pub fn new(seed: u64) -> DemoRng {
        DemoRng(SmallRng::seed_from_u64(seed))
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0.gen_range(lo..hi)
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1: f64 = self.0.gen_range(f64::MIN_POSITIVE..1.0);
        let u2: f64 = self.0.gen_range(0.0..1.0);
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A constant (no-gradient) tensor on the tape from f64 values.
pub fn konst(dev: &Rc<Device>, shape: &[usize], x: &[f64]) -> Result<Var> {
    let v: Vec<f32> = x.iter().map(|&a| a as f32).collect();
    Ok(Var::leaf(Tensor::from_f32(dev, shape, &v)?, false))
}

/// Read a tensor back as f64 (async: works in the browser).
pub async fn fetch(t: &Var) -> Result<Vec<f64>> {
    Ok(t.value()
        .to_vec_f32()
        .await?
        .into_iter()
        .map(f64::from)
        .collect())
}

/// Sizes of Z independent attention problems: M queries, N keys of width D, values of width DV.
/// An operand whose tensor holds one problem's worth is shared by all Z.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub z: usize,
    pub m: usize,
    pub n: usize,
    pub d: usize,
    pub dv: usize,
}

/// `α = softmax(β·q·kᵀ)` (Z, M, N) and `c = α·v` (Z, M, DV) for q (Z|1, M, D), k (Z|1, N, D),
/// v (Z|1, N, DV). `causal` needs M = N and masks keys j > i (the decoder's mask).
pub fn attend(
    tape: &Tape,
    q: &Var,
    k: &Var,
    v: &Var,
    dm: Dims,
    beta: f32,
    causal: bool,
) -> Result<(Var, Var)> {
    let Dims { z, m, n, d, dv } = dm;
    let stride = |t: &Var, per: usize, what: &str| -> Result<usize> {
        match t.value().numel() {
            x if x == per && z != 1 => Ok(0),
            x if x == z * per => Ok(per),
            _ => Err(Error::Shape(format!(
                "attend: {what} has shape {:?}, expected {per} or {} elements for {dm:?}",
                t.shape(),
                z * per
            ))),
        }
    };
    let (sq, sk, sv) = (
        stride(q, m * d, "q")?,
        stride(k, n * d, "k")?,
        stride(v, n * dv, "v")?,
    );
    if causal && m != n {
        return Err(Error::Shape(format!(
            "attend: a causal mask needs as many queries as keys, got M = {m}, N = {n}"
        )));
    }
    let scores_spec = Spec {
        z: (z, 1),
        m,
        n,
        k: d,
        a: View {
            outer: sq,
            inner: 0,
            row: d,
            col: 1,
        },
        // kᵀ: element (dim, key) of key j sits at j·D + dim.
        b: View {
            outer: sk,
            inner: 0,
            row: 1,
            col: d,
        },
        c: View::contiguous(m, n),
        alpha: 1.0,
    };
    let scores = matmul(tape, q, k, None, scores_spec, &[z, m, n])?;
    let alpha = if causal {
        causal_softmax(tape, &scores, beta)?
    } else {
        softmax(tape, &scores, beta)?
    };
    let out_spec = Spec {
        z: (z, 1),
        m,
        n: dv,
        k: n,
        a: View::contiguous(m, n),
        b: View {
            outer: sv,
            inner: 0,
            row: dv,
            col: 1,
        },
        c: View::contiguous(m, dv),
        alpha: 1.0,
    };
    let out = matmul(tape, &alpha, v, None, out_spec, &[z, m, dv])?;
    Ok((alpha, out))
}

/// The device's α and c (either backend) for Z problems given as f64 slices (shared operands hold one problem).
pub async fn attend_values(
    dev: &Rc<Device>,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    dm: Dims,
    beta: f64,
    causal: bool,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let tape = Tape::new();
    let (qv, kv, vv) = (
        konst(dev, &[q.len()], q)?,
        konst(dev, &[k.len()], k)?,
        konst(dev, &[v.len()], v)?,
    );
    let (a, c) = attend(&tape, &qv, &kv, &vv, dm, beta as f32, causal)?;
    Ok((fetch(&a).await?, fetch(&c).await?))
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// `softmax(beta · s)` of one row; with `visible` < len only the first `visible` entries count
/// (the others get exactly 0, as the causal mask gives).
pub fn softmax_cpu(s: &[f64], beta: f64, visible: usize) -> Vec<f64> {
    let vis = visible.min(s.len());
    let m = s[..vis]
        .iter()
        .map(|x| beta * x)
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = s
        .iter()
        .enumerate()
        .map(|(j, x)| if j < vis { (beta * x - m).exp() } else { 0.0 })
        .collect();
    let total: f64 = e.iter().sum();
    e.into_iter().map(|x| x / total).collect()
}

/// [`attend`] in f64: returns (α (Z, M, N), c (Z, M, DV)).
pub fn attend_cpu(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    dm: Dims,
    beta: f64,
    causal: bool,
) -> (Vec<f64>, Vec<f64>) {
    let Dims { z, m, n, d, dv } = dm;
    let off = |t: &[f64], per: usize, zi: usize| if t.len() == per { 0 } else { zi * per };
    let mut alpha = vec![0.0; z * m * n];
    let mut out = vec![0.0; z * m * dv];
    for zi in 0..z {
        let (qo, ko, vo) = (off(q, m * d, zi), off(k, n * d, zi), off(v, n * dv, zi));
        for i in 0..m {
            let s: Vec<f64> = (0..n)
                .map(|j| (0..d).map(|x| q[qo + i * d + x] * k[ko + j * d + x]).sum())
                .collect();
            let a = softmax_cpu(&s, beta, if causal { i + 1 } else { n });
            for j in 0..n {
                alpha[(zi * m + i) * n + j] = a[j];
                for x in 0..dv {
                    out[(zi * m + i) * dv + x] += a[j] * v[vo + j * dv + x];
                }
            }
        }
    }
    (alpha, out)
}

/// Euclidean distance of two equal-length slices.
pub fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Shannon entropy (nats) of a distribution.
pub fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| x * x.ln())
        .sum::<f64>()
}
