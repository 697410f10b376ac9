//! The SynthesizerAttention score projection: x (B, T, C), w1 (C, C), b1 (C), w2 (HS, L), b2 (L)
//! with HS = C / n_head and T ≤ L → scores (B, NH, T, T):
//! `a = relu(x·w1ᵀ + b1)` seen as (B, NH, T, HS), `scores[b,h,i,j] = Σ_d a[b,h,i,d]·w2[d,j] + b2[j]`
//! for j < T (PyTorch's `w2[:, :T]`, `b2[:T]`). Built from the strided matmul and the elementwise ReLU,
//! so it has no kernel of its own on either backend.

pub(crate) mod check;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::ops::elementwise::{relu, relu_backward_ref, relu_ref};
use crate::ops::matmul::{linear, matmul, Spec, View};

/// The sizes of one synthesizer projection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthDims {
    pub b: usize,
    pub t: usize,
    pub c: usize,
    pub n_head: usize,
    /// block_size − 1: the number of columns of w2.
    pub l: usize,
}

impl SynthDims {
    pub fn hs(&self) -> usize {
        self.c / self.n_head
    }
}

/// Check every shape against x (B, T, C) and return the sizes.
pub fn synth_dims(
    x: &[usize],
    w1: &[usize],
    b1: &[usize],
    w2: &[usize],
    b2: &[usize],
    n_head: usize,
) -> Result<SynthDims> {
    if x.len() != 3 {
        return Err(shape_err("synth_scores", "x must be (B, T, C)", x, &[]));
    }
    let (b, t, c) = (x[0], x[1], x[2]);
    if n_head == 0 || !c.is_multiple_of(n_head) {
        return Err(Error::Shape(format!(
            "synth_scores: C = {c} is not a multiple of n_head = {n_head}"
        )));
    }
    if w1 != [c, c] {
        return Err(shape_err(
            "synth_scores",
            "x (B, T, C) and w1 (C, C)",
            x,
            w1,
        ));
    }
    if b1 != [c] {
        return Err(shape_err("synth_scores", "w1 (C, C) and b1 (C)", w1, b1));
    }
    let hs = c / n_head;
    if w2.len() != 2 || w2[0] != hs {
        return Err(shape_err(
            "synth_scores",
            "x (B, T, C) and w2 (C / n_head, L)",
            x,
            w2,
        ));
    }
    let l = w2[1];
    if b2 != [l] {
        return Err(shape_err("synth_scores", "w2 (HS, L) and b2 (L)", w2, b2));
    }
    if t > l {
        return Err(Error::Shape(format!(
            "synth_scores: sequence length T = {t} exceeds the \
             synthesizer's L = block_size − 1 = {l} (x {x:?}, w2 {w2:?})"
        )));
    }
    Ok(SynthDims { b, t, c, n_head, l })
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// `h = x·w1ᵀ + b1` (B·T, C), row-major.
fn hidden_cpu(x: &[f64], w1: &[f64], b1: &[f64], d: &SynthDims) -> Vec<f64> {
    let c = d.c;
    let mut h = vec![0.0; d.b * d.t * c];
    for r in 0..d.b * d.t {
        for o in 0..c {
            h[r * c + o] = b1[o] + (0..c).map(|k| x[r * c + k] * w1[o * c + k]).sum::<f64>();
        }
    }
    h
}

/// The scores (B, NH, T, T), row-major.
pub fn synth_scores_ref(
    x: &[f64],
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    b2: &[f64],
    d: &SynthDims,
) -> Vec<f64> {
    let a = relu_ref(&hidden_cpu(x, w1, b1, d));
    let (t, c, hs) = (d.t, d.c, d.hs());
    let mut s = vec![0.0; d.b * d.n_head * t * t];
    for b in 0..d.b {
        for h in 0..d.n_head {
            for i in 0..t {
                for j in 0..t {
                    let dot: f64 = (0..hs)
                        .map(|k| a[(b * t + i) * c + h * hs + k] * w2[k * d.l + j])
                        .sum();
                    s[((b * d.n_head + h) * t + i) * t + j] = dot + b2[j];
                }
            }
        }
    }
    s
}

/// Gradients of the scores with respect to every input, accumulated into `grads` in the order
/// (dx, dw1, db1, dw2, db2).
pub fn synth_scores_backward_ref(
    x: &[f64],
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    ds: &[f64],
    d: &SynthDims,
    grads: [&mut [f64]; 5],
) {
    let [dx, dw1, db1, dw2, db2] = grads;
    let hpre = hidden_cpu(x, w1, b1, d);
    let a = relu_ref(&hpre);
    let (t, c, hs) = (d.t, d.c, d.hs());
    let mut da = vec![0.0; hpre.len()];
    for b in 0..d.b {
        for h in 0..d.n_head {
            for i in 0..t {
                for j in 0..t {
                    let g = ds[((b * d.n_head + h) * t + i) * t + j];
                    db2[j] += g;
                    for k in 0..hs {
                        let ai = (b * t + i) * c + h * hs + k;
                        da[ai] += g * w2[k * d.l + j];
                        dw2[k * d.l + j] += g * a[ai];
                    }
                }
            }
        }
    }
    let mut dh = vec![0.0; hpre.len()];
    relu_backward_ref(&hpre, &da, &mut dh);
    for r in 0..d.b * t {
        for o in 0..c {
            let g = dh[r * c + o];
            db1[o] += g;
            for k in 0..c {
                dx[r * c + k] += g * w1[o * c + k];
                dw1[o * c + k] += g * x[r * c + k];
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// The synthesizer's attention scores (B, NH, T, T) before masking and softmax.
pub fn synth_scores(
    tape: &Tape,
    x: &Var,
    w1: &Var,
    b1: &Var,
    w2: &Var,
    b2: &Var,
    n_head: usize,
) -> Result<Var> {
    let d = synth_dims(
        x.shape(),
        w1.shape(),
        b1.shape(),
        w2.shape(),
        b2.shape(),
        n_head,
    )?;
    let a = relu(tape, &linear(tape, x, w1, Some(b1))?)?;
    let (t, c, hs) = (d.t, d.c, d.hs());
    let s = Spec {
        z: (d.b, d.n_head),
        m: t,
        n: t,
        k: hs,
        // Head h of a (B, T, C) activation: rows t at stride C, head offset h·HS.
        a: View {
            outer: t * c,
            inner: hs,
            row: c,
            col: 1,
        },
        // w2[:, :T], shared by every batch and head: row stride L, only the first T columns read.
        b: View {
            outer: 0,
            inner: 0,
            row: d.l,
            col: 1,
        },
        c: View {
            outer: d.n_head * t * t,
            inner: t * t,
            row: t,
            col: 1,
        },
        alpha: 1.0,
    };
    matmul(tape, &a, w2, Some(b2), s, &[d.b, d.n_head, t, t])
}
