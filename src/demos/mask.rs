//! E7, the causal mask: the T×T weights with and without it, the gradient through the masked
//! softmax (exactly 0 above the diagonal), and a toy next-token model trained with and without the
//! mask, whose loss collapses when it may read the answer at position t + 1. See
//! docs/attention-exercises.md, E7.

use super::{fetch, konst, softmax_cpu, DemoRng};
use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::adamw::{adamw_step, AdamState, AdamW};
use crate::ops::matmul::{matmul, matmul_into, Spec, View};
use crate::ops::reduce::global_norm_into;
use crate::ops::softmax::{causal_softmax, softmax, softmax_backward_ref};
use crate::ops::{cross_entropy::cross_entropy, embedding::embedding};
use crate::tensor::Tensor;
use serde::Serialize;
use std::rc::Rc;

/// The weights and gradients of one (T, T) score matrix.
#[derive(Clone, Debug, Serialize)]
pub struct MaskView {
    pub t: usize,
    pub scores: Vec<f64>,
    pub masked_gpu: Vec<f64>,
    pub masked_cpu: Vec<f64>,
    pub open_gpu: Vec<f64>,
    pub open_cpu: Vec<f64>,
    /// dL/dscores for L = Σ P ⊙ U with a random U, through the masked softmax.
    pub grad_gpu: Vec<f64>,
    pub grad_cpu: Vec<f64>,
    /// The same gradient through the softmax without the mask (nothing above the diagonal is 0).
    pub open_grad_gpu: Vec<f64>,
    pub open_grad_cpu: Vec<f64>,
    /// Largest |weight| and |gradient| above the diagonal (the check: both exactly 0).
    pub max_masked_weight: f64,
    pub max_masked_grad: f64,
}

/// E7's matrices for seeded N(0, 1) scores of size T.
pub async fn mask_view(dev: &Rc<Device>, t: usize, seed: u64) -> Result<MaskView> {
    if !(1..=64).contains(&t) {
        return Err(Error::Msg(format!("mask: T = {t} is outside 1..=64")));
    }
    let mut r = DemoRng::new(seed);
    let scores: Vec<f64> = (0..t * t).map(|_| r.normal()).collect();
    let up: Vec<f64> = (0..t * t).map(|_| r.normal()).collect();
    let (masked_gpu, grad_gpu) = through_softmax(dev, &scores, &up, t, true).await?;
    let (open_gpu, open_grad_gpu) = through_softmax(dev, &scores, &up, t, false).await?;
    let masked_cpu = crate::ops::softmax::causal_softmax_ref(&scores, t, 1.0);
    let open_cpu: Vec<f64> = scores
        .chunks(t)
        .flat_map(|row| softmax_cpu(row, 1.0, t))
        .collect();
    let mut grad_cpu = vec![0.0; t * t];
    softmax_backward_ref(&masked_cpu, &up, t, 1.0, &mut grad_cpu);
    let mut open_grad_cpu = vec![0.0; t * t];
    softmax_backward_ref(&open_cpu, &up, t, 1.0, &mut open_grad_cpu);
    let above = |x: &[f64]| {
        (0..t * t)
            .filter(|i| i % t > i / t)
            .map(|i| x[i].abs())
            .fold(0.0, f64::max)
    };
    Ok(MaskView {
        t,
        max_masked_weight: above(&masked_gpu),
        max_masked_grad: above(&grad_gpu),
        open_gpu,
        masked_gpu,
        masked_cpu,
        open_cpu,
        grad_gpu,
        grad_cpu,
        open_grad_gpu,
        open_grad_cpu,
        scores,
    })
}

/// The weights P = softmax(S) (causal or not) on the device and dL/dS for L = Σ P ⊙ U.
async fn through_softmax(
    dev: &Rc<Device>,
    scores: &[f64],
    up: &[f64],
    t: usize,
    causal: bool,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let tape = Tape::new();
    let s = Var::leaf(
        Tensor::from_f32(
            dev,
            &[1, t, t],
            &scores.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        )?,
        true,
    );
    let p = if causal {
        causal_softmax(&tape, &s, 1.0)?
    } else {
        softmax(&tape, &s, 1.0)?
    };
    // L = Σ P ⊙ U as a (1×T²)·(T²×1) matmul, so the upstream gradient of P is exactly U.
    let u = konst(dev, &[t * t, 1], up)?;
    let loss = matmul(&tape, &p, &u, None, Spec::plain(1, t * t, 1), &[1])?;
    tape.backward(&loss)?;
    let grad: Vec<f64> = match s.grad() {
        Some(g) => g.to_vec_f32().await?.into_iter().map(f64::from).collect(),
        None => return Err(Error::Msg("mask: no gradient reached the scores".into())),
    };
    Ok((fetch(&p).await?, grad))
}

/// A training run of the toy model: loss per step and the learned (T, T) attention.
#[derive(Clone, Debug, Serialize)]
pub struct Training {
    pub masked: bool,
    pub losses: Vec<f64>,
    /// ln V: the best a model that cannot see the next (uniformly random) token can do.
    pub floor: f64,
    pub attention: Vec<f64>,
    pub t: usize,
}

/// Toy next-token model: position-only attention `P = softmax(Q·Kᵀ)` (Q, K learned (T, T)), and
/// logits at t = Σ_j P[t, j]·E[x_j] (E learned (V+1, V+1)). Tokens are i.i.d. uniform over 1..=V,
/// targets are the next token. With the mask the best loss is ln V; without it the model learns
/// P[t, t+1] ≈ 1 and E ≈ a scaled identity, and the loss goes to 0.
pub async fn train_toy(
    dev: &Rc<Device>,
    masked: bool,
    steps: usize,
    seed: u64,
) -> Result<Training> {
    const T: usize = 8;
    const V: usize = 6;
    const B: usize = 16;
    if steps == 0 || steps > 1000 {
        return Err(Error::Msg(format!(
            "train_toy: steps = {steps} is outside 1..=1000"
        )));
    }
    let mut r = DemoRng::new(seed);
    let mut init =
        |n: usize, sd: f64| -> Vec<f32> { (0..n).map(|_| (sd * r.normal()) as f32).collect() };
    let q = Var::leaf(Tensor::from_f32(dev, &[T, T], &init(T * T, 0.1))?, true);
    let k = Var::leaf(Tensor::from_f32(dev, &[T, T], &init(T * T, 0.1))?, true);
    let e = Var::leaf(
        Tensor::from_f32(dev, &[V + 1, V + 1], &init((V + 1) * (V + 1), 0.1))?,
        true,
    );
    let params = [&q, &k, &e];
    let mut states = params
        .iter()
        .map(|p| AdamState::new(dev, p.shape()))
        .collect::<Result<Vec<_>>>()?;
    let opt = AdamW {
        lr: 0.1,
        weight_decay: 0.0,
        ..AdamW::default()
    };
    let norm = Tensor::uninit(dev, &[1])?;
    let ids = Tensor::uninit(dev, &[B * T])?;
    let targets = Tensor::uninit(dev, &[B * T])?;
    // Each step's loss is added into slot `step` of one tensor (e_step · loss, a K = 1 matmul), so
    // the whole run reads back once: a readback per step would cost more than the step itself.
    let losses = Tensor::zeros(dev, &[steps])?;
    let slot = Tensor::uninit(dev, &[steps])?;
    let mut attention = vec![];
    for step in 0..steps {
        let x: Vec<u32> = (0..B * T)
            .map(|_| 1 + (r.uniform(0.0, V as f64) as u32).min(V as u32 - 1))
            .collect();
        let y: Vec<u32> = (0..B * T)
            .map(|i| if i % T == T - 1 { 0 } else { x[i + 1] })
            .collect();
        ids.write_u32(&x)?;
        targets.write_u32(&y)?;
        let onehot: Vec<f32> = (0..steps).map(|i| (i == step) as u32 as f32).collect();
        slot.write_f32(&onehot)?;
        let tape = Tape::new();
        let s = matmul(
            &tape,
            &q,
            &k,
            None,
            Spec {
                b: View::contiguous(T, T).t(),
                ..Spec::plain(T, T, T)
            },
            &[T, T],
        )?;
        let p = if masked {
            causal_softmax(&tape, &s.reshape(&[1, T, T])?, 1.0)?.reshape(&[T, T])?
        } else {
            softmax(&tape, &s, 1.0)?
        };
        let vals = embedding(&tape, &ids, &e)?;
        // (B, T, V+1) = P (shared) · vals[b].
        let mix = Spec {
            z: (B, 1),
            m: T,
            n: V + 1,
            k: T,
            a: View {
                outer: 0,
                inner: 0,
                row: T,
                col: 1,
            },
            b: View {
                outer: T * (V + 1),
                inner: 0,
                row: V + 1,
                col: 1,
            },
            c: View::contiguous(T, V + 1),
            alpha: 1.0,
        };
        let logits = matmul(&tape, &p, &vals, None, mix, &[B * T, V + 1])?;
        let loss = cross_entropy(&tape, &logits, &targets)?;
        for pv in params {
            pv.zero_grad()?;
        }
        tape.backward(&loss)?;
        let grads: Vec<Tensor> = params.iter().filter_map(|p| p.grad()).collect();
        global_norm_into(&grads.iter().collect::<Vec<_>>(), &norm)?;
        for (pv, st) in params.iter().zip(states.iter_mut()) {
            adamw_step(&opt, pv, st, false, &norm, f32::INFINITY)?;
        }
        matmul_into(
            &slot,
            loss.value(),
            None,
            &losses,
            &Spec::plain(steps, 1, 1),
            true,
        )?;
        if step + 1 == steps {
            attention = fetch(&p).await?;
        }
    }
    let losses = losses
        .to_vec_f32()
        .await?
        .into_iter()
        .map(f64::from)
        .collect();
    Ok(Training {
        masked,
        losses,
        floor: (V as f64).ln(),
        attention,
        t: T,
    })
}
