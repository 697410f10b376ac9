//! Training and using the ViT: one optimisation step (zero-grad, forward, backward, global-norm
//! clip at 1.0, AdamW) with a linear warm-up then linear decay of the learning rate, batched
//! prediction under `no_grad`, and accuracy with a confusion matrix. Async where it reads the device
//! back, so the page runs the same code.

use super::config::{patchify, VitConfig};
use super::model::Vit;
use crate::autograd::Tape;
use crate::error::{Error, Result};
use crate::ops::adamw::{adamw_step_into, AdamState, AdamW};
use crate::ops::reduce::global_norm_into;
use crate::tensor::Tensor;
use std::collections::HashMap;

/// Optimiser settings and the schedule's length.
#[derive(Clone, Debug, PartialEq)]
pub struct VitTrainConfig {
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub batch: usize,
    /// Total steps of the schedule (the rate reaches 0 at the last one).
    pub steps: u64,
    pub warmup: u64,
}

impl VitTrainConfig {
    pub fn default_for(steps: u64) -> VitTrainConfig {
        VitTrainConfig {
            learning_rate: 2e-3,
            weight_decay: 0.05,
            batch: 64,
            steps,
            warmup: (steps / 20).max(1),
        }
    }

    /// The rate at step `s` (0-based): linear warm-up over `warmup` steps, then linear decay to 0.
    pub fn lr_at(&self, s: u64) -> f64 {
        let lr = self.learning_rate;
        if s < self.warmup {
            return lr * (s + 1) as f64 / self.warmup as f64;
        }
        let left = self.steps.saturating_sub(s) as f64;
        let span = self.steps.saturating_sub(self.warmup).max(1) as f64;
        lr * (left / span).clamp(0.0, 1.0)
    }
}

pub struct VitTrainer {
    pub model: Vit,
    pub cfg: VitTrainConfig,
    states: Vec<AdamState>,
    norm: Tensor,
    /// Per batch size: the patch-rows and labels tensors, rewritten each step.
    batches: HashMap<usize, (Tensor, Tensor)>,
    pub steps: u64,
}

impl VitTrainer {
    pub fn new(model: Vit, cfg: VitTrainConfig) -> Result<VitTrainer> {
        let dev = model.device().clone();
        let states = model
            .params
            .iter()
            .map(|p| AdamState::new(&dev, p.var.shape()))
            .collect::<Result<Vec<_>>>()?;
        for p in &model.params {
            p.var.grad_or_zeros()?;
        }
        Ok(VitTrainer {
            norm: Tensor::zeros(&dev, &[1])?,
            model,
            cfg,
            states,
            batches: HashMap::new(),
            steps: 0,
        })
    }

    /// Record one step on row-major images (B, image²) with digit labels (B). Returns the batch's
    /// mean loss as a one-element device tensor (no readback).
    pub fn step(&mut self, pixels: &[f32], labels: &[u8]) -> Result<Tensor> {
        let b = labels.len();
        let (tx, ty) = self.batch_tensors(b)?;
        self.model.prepare(b)?;
        tx.write_f32(&patchify(&self.model.cfg, pixels, b)?)?;
        ty.write_u32(&targets(&self.model.cfg, labels)?)?;
        for p in &self.model.params {
            p.var.zero_grad()?;
        }
        let tape = Tape::new();
        let out = self.model.forward(&tape, &tx, b, Some(&ty), false)?;
        let loss = out
            .loss
            .ok_or_else(|| Error::Msg("ViT forward returned no loss".into()))?;
        tape.backward(&loss)?;
        let grads = self
            .model
            .params
            .iter()
            .map(|p| p.var.grad_or_zeros())
            .collect::<Result<Vec<_>>>()?;
        global_norm_into(&grads.iter().collect::<Vec<_>>(), &self.norm)?;
        let opt = AdamW {
            lr: self.cfg.lr_at(self.steps) as f32,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: self.cfg.weight_decay as f32,
        };
        for ((p, g), st) in self.model.params.iter().zip(&grads).zip(&mut self.states) {
            adamw_step_into(&opt, p.var.value(), g, st, p.decay, &self.norm, 1.0)?;
        }
        self.steps += 1;
        Ok(loss.value().clone())
    }

    fn batch_tensors(&mut self, b: usize) -> Result<(Tensor, Tensor)> {
        if let Some(t) = self.batches.get(&b) {
            return Ok(t.clone());
        }
        let cfg = &self.model.cfg;
        let dev = self.model.device();
        let t = (
            Tensor::uninit(dev, &[b * cfg.tokens(), cfg.patch_dim()])?,
            Tensor::uninit(dev, &[b])?,
        );
        self.batches.insert(b, t.clone());
        Ok(t)
    }
}

/// Labels as the loss's targets: digit d is class d + 1 (see `config::logit_rows`).
pub fn targets(cfg: &VitConfig, labels: &[u8]) -> Result<Vec<u32>> {
    labels
        .iter()
        .map(|&d| {
            if (d as usize) < cfg.classes {
                Ok(d as u32 + 1)
            } else {
                Err(Error::Msg(format!(
                    "label {d} is not a class of this model (0..{})",
                    cfg.classes
                )))
            }
        })
        .collect()
}

/// One image's answer: class probabilities (softmax over the class logits) and, when asked for,
/// every layer's attention (NH, T, T) flattened, in layer order.
pub struct Prediction {
    pub probs: Vec<f32>,
    pub attention: Vec<Vec<f32>>,
}

impl Prediction {
    pub fn class(&self) -> usize {
        argmax(&self.probs)
    }
}

pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// Predict images (B, image²) in chunks of at most `chunk`, without recording gradients.
pub async fn predict(
    model: &Vit,
    pixels: &[f32],
    chunk: usize,
    attention: bool,
) -> Result<Vec<Prediction>> {
    let cfg = &model.cfg;
    let side2 = cfg.image * cfg.image;
    if side2 == 0 || !pixels.len().is_multiple_of(side2) {
        return Err(Error::Shape(format!(
            "predict: {} pixels are not whole {}×{} images",
            pixels.len(),
            cfg.image,
            cfg.image
        )));
    }
    let (k, t, nh) = (cfg.classes, cfg.tokens(), cfg.n_head);
    let mut out = vec![];
    for imgs in pixels.chunks(side2 * chunk.max(1)) {
        let b = imgs.len() / side2;
        let x = Tensor::from_f32(
            model.device(),
            &[b * t, cfg.patch_dim()],
            &patchify(cfg, imgs, b)?,
        )?;
        let tape = Tape::new();
        let o = tape.no_grad(|| model.forward(&tape, &x, b, None, attention))?;
        let logits = o.logits.value().to_vec_f32().await?;
        let mut maps = vec![];
        for a in &o.attention {
            maps.push(a.to_vec_f32().await?);
        }
        for (i, row) in logits.chunks(k + 1).enumerate() {
            let cls = &row[1..];
            let m = cls.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let e: Vec<f64> = cls.iter().map(|&v| ((v - m) as f64).exp()).collect();
            let z: f64 = e.iter().sum();
            let per = nh * t * t;
            out.push(Prediction {
                probs: e.iter().map(|v| (v / z) as f32).collect(),
                attention: maps
                    .iter()
                    .map(|m| m[i * per..(i + 1) * per].to_vec())
                    .collect(),
            });
        }
    }
    Ok(out)
}

/// Accuracy and the confusion matrix (`confusion[true][predicted]`) of `model` on labelled images.
pub async fn evaluate(model: &Vit, pixels: &[f32], labels: &[u8]) -> Result<(f64, Vec<Vec<u32>>)> {
    let preds = predict(model, pixels, 256, false).await?;
    if preds.len() != labels.len() {
        return Err(Error::Shape(format!(
            "evaluate: {} images but {} labels",
            preds.len(),
            labels.len()
        )));
    }
    let k = model.cfg.classes;
    let mut confusion = vec![vec![0u32; k]; k];
    let mut correct = 0usize;
    for (p, &l) in preds.iter().zip(labels) {
        let c = p.class();
        if (l as usize) < k {
            confusion[l as usize][c] += 1;
        }
        correct += (c == l as usize) as usize;
    }
    Ok((correct as f64 / labels.len().max(1) as f64, confusion))
}
