//! One optimisation step as the reference trainer does it: zero the gradients, forward, backward,
//! clip the global gradient norm at 1.0, AdamW with name-based decay, then move the learning rate on
//! by the counted tokens. The whole step is recorded without waiting for the GPU; the loss comes
//! back as a GPU tensor that the caller reads when it wants to.

use super::schedule::TrainConfig;
use crate::autograd::Tape;
use crate::error::Result;
use crate::model::layout::{pack, target_lengths, Layout};
use crate::model::{Gpt, Pass};
use crate::ops::adamw::{adamw_step_into, AdamState, AdamW};
use crate::ops::reduce::global_norm_into;
use crate::tensor::Tensor;
use std::collections::HashMap;

/// A training step in progress as micro-batches (`Trainer::micro_begin`).
#[derive(Debug)]
pub struct MicroStep {
    x: Vec<u32>,
    y: Vec<u32>,
    t: usize,
    lens: Vec<usize>,
    /// Non-PAD targets of the whole batch (the mean loss's denominator).
    total: usize,
    next_row: usize,
    /// Rows left to another engine (`Trainer::micro_skip`): this step's gradients are then only
    /// a part, and `micro_finish` refuses it.
    partial: bool,
    counted: usize,
    /// The whole step's mean loss, summed micro-batch by micro-batch.
    loss: Tensor,
}

impl MicroStep {
    /// Rows done and rows in all.
    pub fn progress(&self) -> (usize, usize) {
        (self.next_row, self.lens.len())
    }

    /// The weighted loss summed so far (a one-element tensor; the whole step's mean loss once
    /// every row is done).
    pub fn loss(&self) -> &Tensor {
        &self.loss
    }

    /// The batch's rows cut into `n` consecutive parts of about equal real tokens (each row's
    /// length up to its last target), for `n` engines that each take one part; the same cut for
    /// the same batch and `n`. A part may be empty (`first == end`) when rows are fewer than `n`.
    pub fn parts(&self, n: usize) -> Vec<(usize, usize)> {
        let n = n.max(1);
        let rows = self.lens.len();
        let mut prefix = vec![0usize];
        for &l in &self.lens {
            prefix.push(prefix.last().copied().unwrap_or(0) + l.max(1));
        }
        let total = prefix[rows];
        // Cut k goes after the first row where the running total reaches k/n of all, kept so
        // that every part has a row while there are rows enough.
        let mut cuts = vec![0];
        for k in 1..n {
            let want = (1..=rows)
                .find(|&c| prefix[c] * n >= total * k)
                .unwrap_or(rows);
            let prev = cuts[k - 1];
            let (lo, hi) = if rows >= n {
                (prev + 1, rows - (n - k))
            } else {
                (prev, rows)
            };
            cuts.push(want.clamp(lo, hi.max(lo)));
        }
        cuts.push(rows);
        cuts.windows(2).map(|w| (w[0], w[1])).collect()
    }
}

pub struct Trainer {
    pub model: Gpt,
    pub cfg: TrainConfig,
    opt: AdamW,
    states: Vec<AdamState>,
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
    pub fn new(model: Gpt, cfg: TrainConfig, seed: u32) -> Result<Trainer> {
        let dev = model.params[0].var.device().clone();
        let states = model
            .params
            .iter()
            .map(|p| AdamState::new(p.var.device(), p.var.shape()))
            .collect::<Result<Vec<_>>>()?;
        let opt = AdamW {
            lr: cfg.learning_rate as f32,
            beta1: cfg.betas.0 as f32,
            beta2: cfg.betas.1 as f32,
            eps: 1e-8,
            weight_decay: cfg.weight_decay as f32,
        };
        // Create every gradient now, so the first step records the same dispatches as later ones
        // (its bind groups are then all reused) instead of also zero-filling new gradients.
        for p in &model.params {
            p.var.grad_or_zeros()?;
        }
        // The reference builds its optimizer with `config.learning_rate` and only updates the rate
        // after each step, so the first step runs at the full rate, not at lr_at(0) = 0.
        let lr = cfg.learning_rate;
        Ok(Trainer {
            norm: Tensor::zeros(&dev, &[1])?,
            model,
            cfg,
            opt,
            states,
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
        for p in &self.model.params {
            p.var.zero_grad()?;
        }
        Ok(())
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
        let grads = self
            .model
            .params
            .iter()
            .map(|p| p.var.grad_or_zeros())
            .collect::<Result<Vec<_>>>()?;
        global_norm_into(&grads.iter().collect::<Vec<_>>(), &self.norm)?;
        let opt = AdamW {
            lr: self.lr as f32,
            ..self.opt
        };
        for ((p, g), st) in self
            .model
            .params
            .iter()
            .zip(&grads)
            .zip(self.states.iter_mut())
        {
            adamw_step_into(
                &opt,
                p.var.value(),
                g,
                st,
                p.decay,
                &self.norm,
                self.cfg.grad_norm_clip as f32,
            )?;
        }
        self.steps += 1;
        self.tokens += counted as f64;
        self.lr = self.cfg.lr_at(self.tokens);
        Ok(())
    }

    /// Begin `step_packed`'s step on the same batch as micro-batches (`micro_next` each, then
    /// `micro_finish`): the gradients are zeroed here and accumulated, each micro-batch's mean
    /// loss weighted by its share of the batch's non-PAD targets, so the update equals the whole
    /// step's up to float summation order (dropout keyed by the whole batch's rows). A front end
    /// that must answer between the parts of a large step (the page's Pause) runs them as
    /// separate calls.
    pub fn micro_begin(
        &mut self,
        x: &[u32],
        y: &[u32],
        rows: usize,
        t: usize,
        counted: usize,
    ) -> Result<MicroStep> {
        if x.len() != rows * t || y.len() != rows * t {
            return Err(crate::Error::Msg(format!(
                "a micro-batched step needs {rows} x {t} inputs and targets, got {} and {}",
                x.len(),
                y.len()
            )));
        }
        let lens = target_lengths(y, rows, t);
        let targets = |r: usize| {
            y[r * t..r * t + lens[r]]
                .iter()
                .filter(|&&v| v != 0)
                .count()
        };
        let total: usize = (0..rows).map(targets).sum();
        self.zero_grads()?;
        Ok(MicroStep {
            x: x.to_vec(),
            y: y.to_vec(),
            t,
            lens,
            total,
            next_row: 0,
            partial: false,
            counted,
            loss: Tensor::zeros(self.norm.device(), &[1])?,
        })
    }

    /// Forward and backward on the next `micro_rows` rows of the step (rows without a target are
    /// skipped). Returns whether rows remain.
    pub fn micro_next(&mut self, m: &mut MicroStep, micro_rows: usize) -> Result<bool> {
        let first = m.next_row;
        let end = (first + micro_rows.max(1)).min(m.lens.len());
        m.next_row = end;
        let lens = &m.lens[first..end];
        let targets: usize = (first..end)
            .map(|r| {
                m.y[r * m.t..r * m.t + m.lens[r]]
                    .iter()
                    .filter(|&&v| v != 0)
                    .count()
            })
            .sum();
        if targets > 0 {
            let span = first * m.t..end * m.t;
            let (layout, tx, ty) =
                self.upload_packed(&m.x[span.clone()], &m.y[span], lens, m.t, first)?;
            let w = targets as f32 / m.total as f32;
            let loss = self.backward_on(&layout, &tx, &ty, w)?;
            crate::ops::elementwise::axpy_into(&loss, w, &m.loss)?;
        }
        Ok(m.next_row < m.lens.len())
    }

    /// Leave the rows up to `to` to another engine (data-parallel training: each engine takes
    /// one of `MicroStep::parts` and only the first one finishes the step, after `micro_add`ing
    /// the others' gradients). This step's own gradients are then a part only: `micro_finish`
    /// refuses it.
    pub fn micro_skip(&mut self, m: &mut MicroStep, to: usize) -> Result<()> {
        if to < m.next_row || to > m.lens.len() {
            return Err(crate::Error::Msg(format!(
                "cannot skip from row {} to row {to} of a {}-row step",
                m.next_row,
                m.lens.len()
            )));
        }
        m.next_row = to;
        m.partial = true;
        Ok(())
    }

    /// Add the gradients of rows `first..end`, computed by another engine with the same weights
    /// (`grads`: every parameter's gradient, in `model.params` order, as `grads_to_vec` gives
    /// them; `loss`: that engine's weighted loss, `MicroStep::loss`). The parts must come in row
    /// order, each starting where the last ended, so the sum has one fixed order.
    pub fn micro_add(
        &mut self,
        m: &mut MicroStep,
        first: usize,
        end: usize,
        grads: &[f32],
        loss: f32,
    ) -> Result<()> {
        if first != m.next_row || end < first || end > m.lens.len() {
            return Err(crate::Error::Msg(format!(
                "gradients of rows {first}..{end} do not continue this step at row {} of {}",
                m.next_row,
                m.lens.len()
            )));
        }
        let want = self.model.num_params();
        if grads.len() != want {
            return Err(crate::Error::Msg(format!(
                "the gradients of rows {first}..{end} hold {} numbers; this model has {want} \
                 parameters",
                grads.len()
            )));
        }
        let dev = self.norm.device().clone();
        let mut at = 0;
        for p in &self.model.params {
            let n = p.var.value().numel();
            let part = Tensor::from_f32(&dev, p.var.shape(), &grads[at..at + n])?;
            crate::ops::elementwise::axpy_into(&part, 1.0, &p.var.grad_or_zeros()?)?;
            at += n;
        }
        let l = Tensor::from_f32(&dev, &[1], &[loss])?;
        crate::ops::elementwise::axpy_into(&l, 1.0, &m.loss)?;
        m.next_row = end;
        Ok(())
    }

    /// Every parameter's gradient, in `model.params` order, one after another.
    pub async fn grads_to_vec(&self) -> Result<Vec<f32>> {
        let mut out = vec![];
        for p in &self.model.params {
            out.extend(p.var.grad_or_zeros()?.to_vec_f32().await?);
        }
        Ok(out)
    }

    /// Every parameter's value, in `model.params` order, one after another.
    pub async fn weights_to_vec(&self) -> Result<Vec<f32>> {
        let mut out = vec![];
        for p in &self.model.params {
            out.extend(p.var.value().to_vec_f32().await?);
        }
        Ok(out)
    }

    /// Set every parameter's value from `weights_to_vec`'s layout (another engine's copy of the
    /// same model after its update).
    pub fn weights_from_slice(&self, w: &[f32]) -> Result<()> {
        let want = self.model.num_params();
        if w.len() != want {
            return Err(crate::Error::Msg(format!(
                "the weights hold {} numbers; this model has {want} parameters",
                w.len()
            )));
        }
        let mut at = 0;
        for p in &self.model.params {
            let n = p.var.value().numel();
            p.var.value().write_f32(&w[at..at + n])?;
            at += n;
        }
        Ok(())
    }

    /// Clip, AdamW and move the schedule on after the last micro-batch; returns the step's mean
    /// loss (no readback). Refused while rows remain.
    pub fn micro_finish(&mut self, m: MicroStep) -> Result<Tensor> {
        if m.partial {
            return Err(crate::Error::Msg(
                "this step left rows to another engine; only the engine that adds every part \
                 (micro_add) finishes it"
                    .into(),
            ));
        }
        if m.next_row < m.lens.len() {
            return Err(crate::Error::Msg(format!(
                "the step has {} rows left; run micro_next until it returns false",
                m.lens.len() - m.next_row
            )));
        }
        self.update(m.counted)?;
        Ok(m.loss)
    }

    /// Everything needed to continue this run exactly: the model checkpoint (readable as a plain
    /// checkpoint) plus both AdamW moments of every parameter as `optim.m.NAME` / `optim.v.NAME`,
    /// and the step count, counted tokens and dropout seed in the metadata. The data position
    /// follows from the step count (no shuffling; each example's corruption depends only on its
    /// index and epoch), and each step's dropout seed from `seed + steps`.
    pub async fn state_to_bytes(&self, vocab: &str) -> Result<Vec<u8>> {
        let mut extra = vec![];
        for (p, st) in self.model.params.iter().zip(&self.states) {
            let shape = p.var.shape().to_vec();
            extra.push((
                format!("optim.m.{}", p.name),
                shape.clone(),
                st.m().to_vec_f32().await?,
            ));
            extra.push((
                format!("optim.v.{}", p.name),
                shape,
                st.v().to_vec_f32().await?,
            ));
        }
        let adam_step = self.states.first().map_or(0, |s| s.step());
        let meta: Vec<(String, String)> = vec![
            (STATE_KEY.to_string(), "1".to_string()),
            ("steps".to_string(), self.steps.to_string()),
            // Rust prints the shortest decimal that parses back to the same f64.
            ("tokens".to_string(), self.tokens.to_string()),
            ("seed".to_string(), self.seed.to_string()),
            ("adam_step".to_string(), adam_step.to_string()),
        ]
        .into_iter()
        .chain(self.run_meta.iter().cloned())
        .collect();
        crate::model::checkpoint::to_bytes_with(&self.model, vocab, extra, meta).await
    }

    /// A trainer that continues the run saved by `state_to_bytes`. `model` must have been loaded
    /// from the same bytes (`checkpoint::from_bytes`); `cfg` is the run's configuration (a changed
    /// learning rate or epoch count applies from here on). `what` names the file in messages.
    pub fn resume(model: Gpt, cfg: TrainConfig, bytes: &[u8], what: &str) -> Result<Trainer> {
        use crate::model::checkpoint::{metadata_of, Extras};
        let meta = metadata_of(bytes, what)?;
        if meta.get(STATE_KEY).map(String::as_str) != Some("1") {
            return Err(crate::Error::Msg(format!(
                "{what} is a model checkpoint without training state; it can start a finetune \
                 (--reading_params_path) but cannot resume a run"
            )));
        }
        let num = |k: &str| -> Result<f64> {
            meta.get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    crate::Error::Msg(format!("{what}: training state has no valid '{k}'"))
                })
        };
        let (steps, tokens, seed, adam_step) = (
            num("steps")?,
            num("tokens")?,
            num("seed")?,
            num("adam_step")?,
        );
        let extras = Extras::open(bytes, what)?;
        let mut tr = Trainer::new(model, cfg, seed as u32)?;
        for (p, st) in tr.model.params.iter().zip(tr.states.iter_mut()) {
            let n = p.var.value().numel();
            let m = extras.get(&format!("optim.m.{}", p.name), n)?;
            let v = extras.get(&format!("optim.v.{}", p.name), n)?;
            st.restore(&m, &v, adam_step as u32)?;
        }
        tr.steps = steps as u64;
        tr.tokens = tokens;
        tr.lr = if steps == 0.0 {
            tr.cfg.learning_rate
        } else {
            tr.cfg.lr_at(tokens)
        };
        Ok(tr)
    }
}

/// Metadata key that marks a checkpoint carrying the trainer's state.
const STATE_KEY: &str = "train_state";
