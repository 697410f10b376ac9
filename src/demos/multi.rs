//! E8 (multi-head shapes) and E9 (synthesizer vs dot-product scores): small seeded examples built
//! exactly as the GPT builds its attention (strided head views, causal softmax), and the attention
//! maps of a loaded model for a question the user types. See docs/attention-exercises.md, E8 and E9.

use super::{fetch, konst, DemoRng};
use crate::autograd::Tape;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::model::{Gpt, Pass, Variant};
use crate::ops::matmul::{linear, matmul, Spec, View};
use crate::ops::softmax::{causal_softmax, causal_softmax_ref};
use crate::ops::synth::{synth_dims, synth_scores, synth_scores_ref};
use crate::tensor::Tensor;
use serde::Serialize;
use std::rc::Rc;

/// Per-head causal maps (H, T, T) and the merged output (T, C) of one multi-head layer.
#[derive(Clone, Debug, Serialize)]
pub struct Heads {
    pub t: usize,
    pub c: usize,
    pub h: usize,
    pub maps_gpu: Vec<f64>,
    pub maps_cpu: Vec<f64>,
    pub out_gpu: Vec<f64>,
    pub out_cpu: Vec<f64>,
}

/// E8: x (T, C) and Wq, Wk, Wv (C, C) seeded; q = x·Wqᵀ (T, C) seen as (T, H, C/H) and read per
/// head through a strided view as (H, T, C/H); scores q_h·k_hᵀ/√(C/H), causal softmax, α_h·v_h
/// written back into columns h·C/H… of (T, C): the concatenation is a view, not a copy.
pub async fn heads(dev: &Rc<Device>, t: usize, c: usize, h: usize, seed: u64) -> Result<Heads> {
    if h == 0 || !c.is_multiple_of(h) || !(1..=32).contains(&t) || c > 64 {
        return Err(Error::Msg(format!(
            "heads: need H | C, C ≤ 64, 1 ≤ T ≤ 32; got T {t}, C {c}, H {h}"
        )));
    }
    let hs = c / h;
    let mut r = DemoRng::new(seed);
    let mut draw = |n: usize| -> Vec<f64> { (0..n).map(|_| r.normal()).collect() };
    let (x, wq, wk, wv) = (draw(t * c), draw(c * c), draw(c * c), draw(c * c));
    let tape = Tape::new();
    let xv = konst(dev, &[t, c], &x)?;
    let proj = |w: &[f64]| -> Result<_> { linear(&tape, &xv, &konst(dev, &[c, c], w)?, None) };
    let (q, k, v) = (proj(&wq)?, proj(&wk)?, proj(&wv)?);
    let head = View {
        outer: 0,
        inner: hs,
        row: c,
        col: 1,
    };
    let square = View {
        outer: 0,
        inner: t * t,
        row: t,
        col: 1,
    };
    let scale = 1.0 / (hs as f64).sqrt();
    let s = Spec {
        z: (1, h),
        m: t,
        n: t,
        k: hs,
        a: head,
        b: head.t(),
        c: square,
        alpha: scale as f32,
    };
    let scores = matmul(&tape, &q, &k, None, s, &[h, t, t])?;
    let att = causal_softmax(&tape, &scores, 1.0)?;
    let s = Spec {
        z: (1, h),
        m: t,
        n: hs,
        k: t,
        a: square,
        b: head,
        c: head,
        alpha: 1.0,
    };
    let y = matmul(&tape, &att, &v, None, s, &[t, c])?;
    // CPU: per head, the plain loops.
    let pr = |w: &[f64]| -> Vec<f64> {
        (0..t * c)
            .map(|i| {
                (0..c)
                    .map(|j| x[(i / c) * c + j] * w[(i % c) * c + j])
                    .sum()
            })
            .collect()
    };
    let (qc, kc, vc) = (pr(&wq), pr(&wk), pr(&wv));
    let mut sc = vec![0.0; h * t * t];
    for hh in 0..h {
        for i in 0..t {
            for j in 0..t {
                sc[(hh * t + i) * t + j] = scale
                    * (0..hs)
                        .map(|d| qc[i * c + hh * hs + d] * kc[j * c + hh * hs + d])
                        .sum::<f64>();
            }
        }
    }
    let maps_cpu = causal_softmax_ref(&sc, t, 1.0);
    let mut out_cpu = vec![0.0; t * c];
    for hh in 0..h {
        for i in 0..t {
            for d in 0..hs {
                out_cpu[i * c + hh * hs + d] = (0..t)
                    .map(|j| maps_cpu[(hh * t + i) * t + j] * vc[j * c + hh * hs + d])
                    .sum();
            }
        }
    }
    Ok(Heads {
        t,
        c,
        h,
        maps_gpu: fetch(&att).await?,
        maps_cpu,
        out_gpu: fetch(&y).await?,
        out_cpu,
    })
}

/// E9's comparison: the maps of a dot-product head and a synthesizer head for x and for x with
/// row j changed, and how much each row of each map moved.
#[derive(Clone, Debug, Serialize)]
pub struct SynthVsDot {
    pub t: usize,
    pub j: usize,
    pub dot_before: Vec<f64>,
    pub dot_after: Vec<f64>,
    pub synth_before: Vec<f64>,
    pub synth_after: Vec<f64>,
    /// max_k |after − before| for each row i (T values), per map.
    pub dot_row_change: Vec<f64>,
    pub synth_row_change: Vec<f64>,
    /// The synthesizer's scores before the change from the f64 reference, to compare with the kernels'.
    pub synth_scores_ref: Vec<f64>,
    pub synth_scores_gpu: Vec<f64>,
}

/// E9: one head of width C over T positions; position j's content is moved by `delta` along a
/// seeded direction. A dot-product head's rows i ≥ j see the change through k_j; the synthesizer's
/// row i is ReLU(xᵢA + b₁)B + b₂, a function of xᵢ alone, so only row j can move.
pub async fn synth_vs_dot(
    dev: &Rc<Device>,
    t: usize,
    j: usize,
    delta: f64,
    seed: u64,
) -> Result<SynthVsDot> {
    let c = 8;
    if !(2..=16).contains(&t) || j >= t {
        return Err(Error::Msg(format!(
            "synth_vs_dot: need 2 ≤ T ≤ 16 and j < T, got T {t}, j {j}"
        )));
    }
    let mut r = DemoRng::new(seed);
    let mut draw = |n: usize, sd: f64| -> Vec<f64> { (0..n).map(|_| sd * r.normal()).collect() };
    let x = draw(t * c, 1.0);
    let dir = draw(c, 1.0);
    let (wq, wk) = (draw(c * c, 0.3), draw(c * c, 0.3));
    let (w1, b1, w2, b2) = (
        draw(c * c, 0.5),
        draw(c, 0.3),
        draw(c * t, 0.15),
        draw(t, 0.2),
    );
    let mut x2 = x.clone();
    for d in 0..c {
        x2[j * c + d] += delta * dir[d];
    }
    let tape = Tape::new();
    let dot = |x: &[f64]| -> Result<_> {
        let xv = konst(dev, &[t, c], x)?;
        let q = linear(&tape, &xv, &konst(dev, &[c, c], &wq)?, None)?;
        let k = linear(&tape, &xv, &konst(dev, &[c, c], &wk)?, None)?;
        let s = Spec {
            b: View::contiguous(t, c).t(),
            alpha: 1.0 / (c as f32).sqrt(),
            ..Spec::plain(t, c, t)
        };
        causal_softmax(&tape, &matmul(&tape, &q, &k, None, s, &[1, t, t])?, 1.0)
    };
    let synth = |x: &[f64]| -> Result<_> {
        let s = synth_scores(
            &tape,
            &konst(dev, &[1, t, c], x)?,
            &konst(dev, &[c, c], &w1)?,
            &konst(dev, &[c], &b1)?,
            &konst(dev, &[c, t], &w2)?,
            &konst(dev, &[t], &b2)?,
            1,
        )?;
        Ok((causal_softmax(&tape, &s, 1.0)?, s))
    };
    let (d0, d1) = (fetch(&dot(&x)?).await?, fetch(&dot(&x2)?).await?);
    let ((s0, sc0), (s1, _)) = (synth(&x)?, synth(&x2)?);
    let (s0, s1, sc0) = (fetch(&s0).await?, fetch(&s1).await?, fetch(&sc0).await?);
    let dims = synth_dims(&[1, t, c], &[c, c], &[c], &[c, t], &[t], 1)?;
    let change = |a: &[f64], b: &[f64]| -> Vec<f64> {
        a.chunks(t)
            .zip(b.chunks(t))
            .map(|(p, q)| {
                p.iter()
                    .zip(q)
                    .map(|(u, v)| (u - v).abs())
                    .fold(0.0, f64::max)
            })
            .collect()
    };
    Ok(SynthVsDot {
        t,
        j,
        dot_row_change: change(&d0, &d1),
        synth_row_change: change(&s0, &s1),
        synth_scores_ref: synth_scores_ref(&x, &w1, &b1, &w2, &b2, &dims),
        synth_scores_gpu: sc0,
        dot_before: d0,
        dot_after: d1,
        synth_before: s0,
        synth_after: s1,
    })
}

/// A loaded model's attention for one input: tokens (as characters) and maps (L, NH, T, T).
#[derive(Clone, Debug, Serialize)]
pub struct ModelMaps {
    pub variant: String,
    pub tokens: Vec<String>,
    pub layers: usize,
    pub heads: usize,
    pub t: usize,
    pub maps: Vec<f64>,
}

/// Run `text` (encoded with `vocab`, the checkpoint's itos characters in order, truncated to what
/// the model accepts) through `model` in eval mode and keep every layer's attention.
pub async fn model_maps(model: &Gpt, vocab: &str, text: &str) -> Result<ModelMaps> {
    let itos: Vec<char> = vocab.chars().collect();
    let limit = model.cfg.block_size - (model.cfg.variant == Variant::Synthesizer) as usize;
    let mut ids = Vec::new();
    for ch in text.chars().take(limit) {
        match itos.iter().position(|&v| v == ch) {
            Some(i) => ids.push(i as u32),
            None => {
                return Err(Error::Msg(format!(
                    "the model's vocabulary has no character '{ch}'; \
                     use characters from its training text"
                )))
            }
        }
    }
    if ids.is_empty() {
        return Err(Error::Msg(
            "type a question first (the input is empty)".into(),
        ));
    }
    let t = ids.len();
    let dev = model.param("tok_emb.weight")?.device().clone();
    model.prepare(1, t)?;
    let idx = Tensor::from_u32(&dev, &[t], &ids)?;
    let tape = Tape::new();
    let pass = Pass::eval_capturing();
    tape.no_grad(|| model.forward(&tape, &idx, 1, t, None, &pass))?;
    let mut maps = Vec::new();
    for m in pass.attention_maps() {
        maps.extend(m.to_vec_f32().await?.into_iter().map(f64::from));
    }
    Ok(ModelMaps {
        variant: model.cfg.variant.name().into(),
        tokens: ids.iter().map(|&i| itos[i as usize].to_string()).collect(),
        layers: model.cfg.n_layer,
        heads: model.cfg.n_head,
        t,
        maps,
    })
}
