//! One optimisation step as the reference trainer does it: zero the gradients, forward, backward,
//! clip the global gradient norm at 1.0, AdamW with name-based decay, then move the learning rate on
//! by the counted tokens. The whole step is recorded without waiting for the GPU; the loss comes
//! back as a GPU tensor that the caller reads when it wants to. On the GPU the parameters' values
//! and gradients live in one arena each, so zeroing the gradients, their norm and AdamW take a few
//! dispatches whatever the number of parameters.

use super::schedule::TrainConfig;
use crate::autograd::Tape;
use crate::autograd::Var;
use crate::error::Result;
use crate::model::layout::{pack, target_lengths, Layout};
use crate::model::{Gpt, Pass};
use crate::ops::adamw::{self, adamw_arena_step_into, adamw_each_step_into, AdamGroup, AdamW};
use crate::ops::reduce::global_norm_into;
use crate::tensor::Tensor;
use std::collections::HashMap;

mod micro;
mod state;
pub use micro::MicroStep;

pub struct Trainer {
    pub model: Gpt,
    pub cfg: TrainConfig,
    opt: AdamW,
    group: AdamGroup,
    /// On the GPU: the arenas of the parameters' values and gradients, each parameter at its
    /// span of `group` (`Var`s are views into them).
    arenas: Option<(Tensor, Tensor)>,
    norm: Tensor,
    batches: HashMap<(usize, usize), (Tensor, Tensor)>,
    /// Counted tokens so far (every target position, PAD included, as the reference counts).
    pub tokens: f64,
    /// Optimisation steps taken.
    pub steps: u64,
    /// The learning rate the next step will use.
    pub lr: f64,
    pub seed: u32,
    /// Metadata a front end records in every training state (the CLI: the run's kind and batch
    /// size, checked when the state is resumed); `state_to_bytes` writes it.
    pub run_meta: Vec<(String, String)>,
}

impl Trainer {
    pub fn new(mut model: Gpt, cfg: TrainConfig, seed: u32) -> Result<Trainer> {
        let dev = model.params[0].var.device().clone();
        let (spans, len) = adamw::spans(
            &model
                .params
                .iter()
                .map(|p| (p.var.value().numel(), p.decay))
                .collect::<Vec<_>>(),
        );
        let group = AdamGroup::new(&dev, spans, len)?;
        let opt = AdamW {
            lr: cfg.learning_rate as f32,
            beta1: cfg.betas.0 as f32,
            beta2: cfg.betas.1 as f32,
            eps: 1e-8,
            weight_decay: cfg.weight_decay as f32,
        };
        // Create every gradient now, so the first step records the same dispatches as later ones
        // (its bind groups are then all reused) instead of also zero-filling new gradients.
        let arenas = if crate::ops::adamw::arenas_pay(&dev) {
            Some(into_arenas(&mut model, &group)?)
        } else {
            for p in &model.params {
                p.var.grad_or_zeros()?;
            }
            None
        };
        // The reference builds its optimizer with `config.learning_rate` and only updates the rate
        // after each step, so the first step runs at the full rate, not at lr_at(0) = 0.
        let lr = cfg.learning_rate;
        Ok(Trainer {
            norm: Tensor::zeros(&dev, &[1])?,
            model,
            cfg,
            opt,
            group,
            arenas,
            batches: HashMap::new(),
            tokens: 0.0,
            steps: 0,
            lr,
            seed,
            run_meta: vec![],
        })
    }

    /// The device the trainer runs on.
    pub fn device(&self) -> &std::rc::Rc<crate::Device> {
        self.norm.device()
    }

    /// Record one step on a batch of `rows` sequences of length `t` (x and y row-major token ids).
    /// Returns the batch's mean loss as a one-element GPU tensor (no readback).
    pub fn step(&mut self, x: &[u32], y: &[u32], rows: usize, t: usize) -> Result<Tensor> {
        self.step_counting(x, y, rows, t, rows * t)
    }

    /// `step` on a padded batch of `rows` × `t` (possibly cut short), counting `counted` tokens
    /// for the learning-rate schedule: the reference counts every position of the full 127-long
    /// rows.
    pub fn step_counting(
        &mut self,
        x: &[u32],
        y: &[u32],
        rows: usize,
        t: usize,
        counted: usize,
    ) -> Result<Tensor> {
        let dev = self.norm.device().clone();
        let (tx, ty) = match self.batches.entry((rows, t)) {
            std::collections::hash_map::Entry::Occupied(e) => e.get().clone(),
            std::collections::hash_map::Entry::Vacant(e) => e
                .insert((
                    Tensor::uninit(&dev, &[rows * t])?,
                    Tensor::uninit(&dev, &[rows * t])?,
                ))
                .clone(),
        };
        let layout = self.model.dense_layout(rows, t)?;
        tx.write_u32(x)?;
        ty.write_u32(y)?;
        self.step_on(&layout, &tx, &ty, counted)
    }

    /// The same step on the batch's real tokens only (see `model::layout`): each row up to its
    /// last non-PAD target, packed one after another. The same loss, gradients and update as
    /// `step_counting` on the padded batch, up to float rounding, with dropout on or off.
    pub fn step_packed(
        &mut self,
        x: &[u32],
        y: &[u32],
        rows: usize,
        t: usize,
        counted: usize,
    ) -> Result<Tensor> {
        let lens = target_lengths(y, rows, t);
        let (layout, tx, ty) = self.upload_packed(x, y, &lens, t, 0)?;
        self.step_on(&layout, &tx, &ty, counted)
    }

    /// The packed layout of rows of lengths `lens` (rows `first_row..` of their batch) and their
    /// real tokens uploaded.
    fn upload_packed(
        &self,
        x: &[u32],
        y: &[u32],
        lens: &[usize],
        t: usize,
        first_row: usize,
    ) -> Result<(Layout, Tensor, Tensor)> {
        let dev = self.norm.device();
        let c = &self.model.cfg;
        let layout = Layout::packed_from(dev, lens, first_row, c.n_head, c.block_size)?;
        let (px, py) = (pack(x, lens, t), pack(y, lens, t));
        let tx = Tensor::from_u32(dev, &[px.len()], &px)?;
        let ty = Tensor::from_u32(dev, &[py.len()], &py)?;
        Ok((layout, tx, ty))
    }

    /// Zero the gradients, forward and backward on the uploaded batch, clip, AdamW, move on.
    fn step_on(
        &mut self,
        layout: &Layout,
        tx: &Tensor,
        ty: &Tensor,
        counted: usize,
    ) -> Result<Tensor> {
        self.zero_grads()?;
        let loss = self.backward_on(layout, tx, ty, 1.0)?;
        self.update(counted)?;
        Ok(loss)
    }

    fn zero_grads(&self) -> Result<()> {
        if let Some((_, grads)) = self.arenas.as_ref().filter(|_| self.in_arenas()) {
            // The alignment gaps stay zero too, as the norm over the whole arena needs.
            return grads.fill(0.0);
        }
        for p in &self.model.params {
            p.var.zero_grad()?;
        }
        Ok(())
    }

    /// Whether every parameter's value and gradient are still the views of the arenas (a kept
    /// model's gradients may have been dropped and made anew).
    fn in_arenas(&self) -> bool {
        let Some((values, grads)) = &self.arenas else {
            return false;
        };
        self.model
            .params
            .iter()
            .zip(self.group.spans())
            .all(|(p, s)| {
                p.var.value().is_view_of(values, s.at)
                    && p.var.grad().is_some_and(|g| g.is_view_of(grads, s.at))
            })
    }

    /// Forward and backward on an uploaded batch (or micro-batch), its mean loss weighted by
    /// `weight` before the backward; the gradients add to what the parameters hold. Returns the
    /// unweighted mean loss (no readback).
    fn backward_on(
        &mut self,
        layout: &Layout,
        tx: &Tensor,
        ty: &Tensor,
        weight: f32,
    ) -> Result<Tensor> {
        let tape = Tape::new();
        let pass = Pass::train(self.seed.wrapping_add(self.steps as u32));
        let (_, loss) = self
            .model
            .forward_layout(&tape, tx, layout, Some(ty), &pass)?;
        let loss = loss.ok_or_else(|| crate::Error::Msg("forward returned no loss".into()))?;
        if weight == 1.0 {
            tape.backward(&loss)?;
        } else {
            let weighted = crate::ops::elementwise::scale(&tape, &loss, weight)?;
            tape.backward(&weighted)?;
        }
        Ok(loss.value().clone())
    }

    /// Clip the gradients the parameters hold, AdamW, then move the schedule on by `counted`.
    fn update(&mut self, counted: usize) -> Result<()> {
        let opt = AdamW {
            lr: self.lr as f32,
            ..self.opt
        };
        let clip = self.cfg.grad_norm_clip as f32;
        match self.arenas.as_ref().filter(|_| self.in_arenas()) {
            Some((values, grads)) => {
                global_norm_into(&[grads], &self.norm)?;
                adamw_arena_step_into(&opt, values, grads, &mut self.group, &self.norm, clip)?;
            }
            None => {
                let grads = self
                    .model
                    .params
                    .iter()
                    .map(|p| p.var.grad_or_zeros())
                    .collect::<Result<Vec<_>>>()?;
                let grads = grads.iter().collect::<Vec<_>>();
                global_norm_into(&grads, &self.norm)?;
                let values = self.model.params.iter().map(|p| p.var.value());
                let values = values.collect::<Vec<_>>();
                adamw_each_step_into(&opt, &values, &grads, &mut self.group, &self.norm, clip)?;
            }
        }
        self.steps += 1;
        self.tokens += counted as f64;
        self.lr = self.cfg.lr_at(self.tokens);
        Ok(())
    }
}

/// Move `model`'s parameters into a values arena laid out as `group`'s spans (a copy on the
/// device) and give each a gradient view into a zeroed gradients arena: the arenas.
fn into_arenas(model: &mut Gpt, group: &AdamGroup) -> Result<(Tensor, Tensor)> {
    let dev = model.params[0].var.device().clone();
    let values = Tensor::zeros(&dev, &[group.len()])?;
    let grads = Tensor::zeros(&dev, &[group.len()])?;
    for (p, s) in model.params.iter_mut().zip(group.spans()) {
        let old = p.var.value();
        let value = values.view(s.at, old.shape())?;
        value.copy_from(0, old, 0, s.len)?;
        let var = Var::leaf(value, true);
        var.set_grad(grads.view(s.at, old.shape())?)?;
        p.var = var;
    }
    Ok((values, grads))
}
