//! A step run as micro-batches (the page answers between them) or split over several engines
//! (each takes a part of the rows; the first adds the others' gradients in row order).

use super::Trainer;
use crate::error::Result;
use crate::model::layout::target_lengths;
use crate::tensor::Tensor;

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

impl Trainer {
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
        let total: usize = (0..rows).map(|r| row_targets(y, t, &lens, r)).sum();
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
            .map(|r| row_targets(&m.y, m.t, &m.lens, r))
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
}

/// Non-PAD targets of row `r` of a `t`-wide batch, up to its length in `lens`.
fn row_targets(y: &[u32], t: usize, lens: &[usize], r: usize) -> usize {
    y[r * t..r * t + lens[r]]
        .iter()
        .filter(|&&v| v != 0)
        .count()
}
