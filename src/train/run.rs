//! The reference's runs as library functions: the epoch loops of pretraining and finetuning (which
//! `Session` drives for the CLI and the page), and evaluation by greedy decoding.
//!
//! The loops follow torch's DataLoader as run.py sets it up: no shuffle, `drop_last = False` (the
//! last batch of an epoch may be short), examples 127 tokens long, one `Trainer::step` per batch.
//! Steps are recorded without waiting for the GPU; the loss is read back (asynchronously, so the
//! page stays responsive) only every `Hooks::every` steps and at the end of each epoch.

pub use super::report::{cropped_line, skipped_line, Skipped};
use super::sample::sample_greedy_batch_until;
use super::trainer::Trainer;
use crate::data::{
    evaluate_places, prediction_from_completion, prompt_for, Row, Vocab, BLOCK_SIZE, MASK_ID,
};
use crate::error::{Error, Result};
use crate::model::Gpt;
use crate::tensor::Tensor;

/// Tokens the reference generates per question.
pub const EVAL_STEPS: usize = 32;

/// Where a run stands, reported at each loss readback.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// 1-based epoch.
    pub epoch: usize,
    pub epochs: usize,
    /// Steps done so far (1-based: the step just taken).
    pub step: u64,
    pub total_steps: u64,
    /// Mean loss of the step just taken.
    pub loss: f32,
    /// Learning rate that step used.
    pub lr: f64,
    /// Counted tokens (PAD included, as the schedule counts) per second since the start.
    pub tokens_per_s: f64,
    pub elapsed_s: f64,
    /// Whether this report closes an epoch.
    pub epoch_end: bool,
}

/// The per-epoch callback of `Hooks`.
pub type EpochEnd<'a> = dyn FnMut(&Trainer) -> Result<()> + 'a;

/// How a run reports: read the loss every `every` steps; `clock` gives seconds (any origin; the
/// page has no `Instant`); `on_progress` receives each report.
pub struct Hooks<'a> {
    pub every: u64,
    pub clock: &'a dyn Fn() -> f64,
    pub on_progress: &'a mut dyn FnMut(Progress),
    /// Called after each epoch's last step has been read back (the loss was finite), with the
    /// trainer, e.g. to save a resumable state; an error stops training.
    pub on_epoch_end: Option<&'a mut EpochEnd<'a>>,
}

/// Steps per epoch with `drop_last = False`.
pub fn steps_per_epoch(examples: usize, batch_size: usize) -> usize {
    examples.div_ceil(batch_size.max(1))
}

/// The steps of a whole run on `examples` examples: every epoch's, or `max_steps` if fewer.
pub fn total_steps(cfg: &super::TrainConfig, examples: usize) -> u64 {
    let per_epoch = steps_per_epoch(examples, cfg.batch_size) as u64;
    per_epoch
        .saturating_mul(cfg.max_epochs as u64)
        .min(cfg.max_steps.unwrap_or(u64::MAX).max(1))
}

/// Lengths a trimmed batch is rounded up to, so that a run sees at most a handful of shapes (and
/// the buffer pool keeps a handful of sizes).
pub const TRIM_MULTIPLE: usize = 8;

/// Cut a batch of `rows` sequences of length `t` after its longest real sequence: the columns after
/// the last non-PAD target of every row only feed ignored targets, and attention is causal, so no
/// kept position reads them. Returns (x, y, new length), the length rounded up to `TRIM_MULTIPLE`.
/// The loss and gradients are the same as on the full batch (up to summation order); dropout masks
/// are keyed by (row, position), so with dropout on they are the same too. Training packs its
/// batches instead (`Trainer::step_packed`); this stays as the benchmark's previous step.
pub fn trim_batch(x: &[u32], y: &[u32], rows: usize, t: usize) -> (Vec<u32>, Vec<u32>, usize) {
    let last = (0..rows)
        .filter_map(|r| y[r * t..(r + 1) * t].iter().rposition(|&v| v != 0))
        .max()
        .map_or(1, |i| i + 1);
    let keep = last.div_ceil(TRIM_MULTIPLE).max(1) * TRIM_MULTIPLE;
    let keep = keep.min(t);
    if keep == t {
        return (x.to_vec(), y.to_vec(), t);
    }
    let cut = |v: &[u32]| -> Vec<u32> {
        (0..rows)
            .flat_map(|r| v[r * t..r * t + keep].iter().copied())
            .collect()
    };
    (cut(x), cut(y), keep)
}

/// Batch `s` of epoch `epoch` (0-based) of `n` examples in batches of `bs`: (x, y, rows), each row
/// BLOCK_SIZE − 1 tokens, built by `get(idx, epoch)`.
pub(super) fn batch_of(
    get: &dyn Fn(usize, u64) -> Result<(Vec<u32>, Vec<u32>)>,
    n: usize,
    bs: usize,
    epoch: usize,
    s: usize,
) -> Result<(Vec<u32>, Vec<u32>, usize)> {
    let t = BLOCK_SIZE - 1;
    let (lo, hi) = (s * bs, ((s + 1) * bs).min(n));
    let rows = hi.saturating_sub(lo);
    let (mut x, mut y) = (Vec::with_capacity(rows * t), Vec::with_capacity(rows * t));
    for idx in lo..hi {
        let (xi, yi) = get(idx, epoch as u64)?;
        if xi.len() != t || yi.len() != t {
            return Err(Error::Msg(format!(
                "example {idx} has {} / {} tokens, expected {t}",
                xi.len(),
                yi.len()
            )));
        }
        x.extend_from_slice(&xi);
        y.extend_from_slice(&yi);
    }
    Ok((x, y, rows))
}

/// The error that ends a run whose loss stopped being finite (`epoch` 1-based).
/// A step's loss read back from the device; an error saying where the run stopped when it is not
/// finite (`epoch` counted from 1).
pub(super) async fn finite_loss(loss: &Tensor, epoch: usize, step: u64, lr: f64) -> Result<f32> {
    let l = loss
        .to_vec_f32()
        .await?
        .first()
        .copied()
        .unwrap_or(f32::NAN);
    if !l.is_finite() {
        return Err(Error::Msg(format!(
            "training stopped: the loss became {l} at epoch {epoch}, step {step} (learning rate \
             {lr:.3e}); lower the learning rate or check the data"
        )));
    }
    Ok(l)
}

/// The shared epoch loop; `get(idx, epoch)` builds one (x, y) example of BLOCK_SIZE − 1 tokens.
/// Runs from the trainer's step count to the run's end, or only up to step `until` when given (a
/// chunk of the run: the loss is also read back there, but `Progress::epoch_end` and
/// `Hooks::on_epoch_end` still mean the end of an epoch or of the whole run). Returns the last
/// loss read back (NaN when no step was taken).
pub(super) async fn train_epochs(
    trainer: &mut Trainer,
    n: usize,
    get: &dyn Fn(usize, u64) -> Result<(Vec<u32>, Vec<u32>)>,
    hooks: &mut Hooks<'_>,
    until: Option<u64>,
) -> Result<f32> {
    let t = BLOCK_SIZE - 1;
    let bs = trainer.cfg.batch_size;
    let epochs = trainer.cfg.max_epochs;
    if n == 0 {
        return Err(Error::Msg(
            "the training data has no examples; give a file with at least one line".into(),
        ));
    }
    if bs == 0 || epochs == 0 {
        return Err(Error::Msg(format!(
            "batch size ({bs}) and epochs ({epochs}) must both be at least 1"
        )));
    }
    let per_epoch = steps_per_epoch(n, bs);
    let total = total_steps(&trainer.cfg, n);
    let stop = until.map_or(total, |u| u.min(total));
    let (t0, tokens0) = ((hooks.clock)(), trainer.tokens);
    // A resumed trainer continues where its step count says (see `Trainer::state_to_bytes`).
    let done = trainer.steps.min(total);
    let mut step = done;
    let mut last = f32::NAN;
    if done >= stop {
        return Ok(last);
    }
    let first_epoch = (done / per_epoch as u64) as usize;
    for epoch in first_epoch..epochs {
        let first_step = if epoch == first_epoch {
            (done % per_epoch as u64) as usize
        } else {
            0
        };
        for s in first_step..per_epoch {
            let (x, y, rows) = batch_of(get, n, bs, epoch, s)?;
            let lr = trainer.lr;
            // Only the rows' real tokens, packed; the schedule still counts full rows.
            let loss = trainer.step_packed(&x, &y, rows, t, rows * t)?;
            step += 1;
            let last_step = step == stop;
            let epoch_end = s + 1 == per_epoch || step == total;
            if !step.is_multiple_of(hooks.every.max(1)) && !epoch_end && !last_step {
                continue;
            }
            let l = finite_loss(&loss, epoch + 1, step, lr).await?;
            last = l;
            let elapsed = ((hooks.clock)() - t0).max(1e-9);
            (hooks.on_progress)(Progress {
                epoch: epoch + 1,
                epochs,
                step,
                total_steps: total,
                loss: l,
                lr,
                tokens_per_s: (trainer.tokens - tokens0) / elapsed,
                elapsed_s: elapsed,
                epoch_end,
            });
            if epoch_end {
                if let Some(f) = hooks.on_epoch_end.as_mut() {
                    f(trainer)?;
                }
            }
            if last_step {
                return Ok(last);
            }
        }
    }
    Ok(last)
}

/// Predictions for an eval file, and the score when the file has answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// One per eval row, in order (empty for a skipped question).
    pub predictions: Vec<String>,
    /// (correct, total), None when the file has no answer column.
    pub score: Option<(usize, usize)>,
    /// The questions not asked because the model's vocabulary lacks one of their characters
    /// (they count as wrong); [`skipped_line`] says them.
    pub skipped: Vec<Skipped>,
}

/// Greedy-decode `EVAL_STEPS` tokens after `question⁇` for every row and keep the text between
/// the first two ⁇. The question is used raw (non-ASCII kept), as the reference does, and a
/// question-only row keeps its line's newline (`Row::prompt_text`). A question with a character
/// outside the vocabulary is not asked (the reference would stop with a KeyError): its prediction
/// is empty, it counts as wrong, and it is listed (`predict_known`). The CLI and the page both
/// evaluate through this (the page in parts, `predict_known` on each part).
pub async fn evaluate(
    model: &Gpt,
    vocab: &Vocab,
    rows: &[Row],
    file: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Evaluation> {
    let (predictions, skipped) = predict_known(model, vocab, rows, file, progress).await?;
    let score = score(rows, &predictions)?;
    Ok(Evaluation {
        predictions,
        score,
        skipped,
    })
}

/// The predictions of [`evaluate`] alone, one per row (the page asks for a file in parts, so other
/// work can run between them).
pub async fn predict(
    model: &Gpt,
    vocab: &Vocab,
    rows: &[Row],
    file: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<String>> {
    let prompts = rows
        .iter()
        .map(|r| vocab.encode_in(&prompt_for(&r.prompt_text()), &format!("{file}:{}", r.line)))
        .collect::<Result<Vec<_>>>()?;
    // Each prediction ends at the answer's closing ⁇ (see `prediction_from_completion`): a chunk
    // whose rows have all closed needs none of its remaining steps.
    let outs =
        sample_greedy_batch_until(model, &prompts, EVAL_STEPS, Some(MASK_ID), progress).await?;
    outs.iter()
        .map(|ids| vocab.decode(ids).map(|c| prediction_from_completion(&c)))
        .collect()
}

/// [`predict`] for a model whose vocabulary may lack some characters of the questions (the page's
/// shipped models on the course's files): such a question is not asked, its prediction is empty
/// (it counts as wrong), and it is listed; the others are predicted as `predict` does.
pub async fn predict_known(
    model: &Gpt,
    vocab: &Vocab,
    rows: &[Row],
    file: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<String>, Vec<Skipped>)> {
    let mut skipped = vec![];
    let mut asked = vec![];
    for (i, r) in rows.iter().enumerate() {
        let mut missing: Vec<(usize, char)> = vec![];
        for (at, c) in prompt_for(&r.prompt_text()).chars().enumerate() {
            if vocab.id(c).is_none() && !missing.iter().any(|&(_, m)| m == c) {
                missing.push((at + 1, c));
            }
        }
        match missing.split_first() {
            Some((&(col, ch), more)) => skipped.push(Skipped {
                line: r.line,
                col,
                ch,
                more: more.to_vec(),
            }),
            None => asked.push(i),
        }
    }
    let chosen: Vec<Row> = asked.iter().map(|&i| rows[i].clone()).collect();
    let got = predict(model, vocab, &chosen, file, progress).await?;
    let mut out = vec![String::new(); rows.len()];
    for (&i, p) in asked.iter().zip(got) {
        out[i] = p;
    }
    Ok((out, skipped))
}

/// The score of [`evaluate`]: (correct, total) when the rows have answers, else None.
pub fn score(rows: &[Row], predictions: &[String]) -> Result<Option<(usize, usize)>> {
    if rows.first().is_some_and(|r| r.answer.is_some()) {
        Ok(Some(evaluate_places(rows, predictions)?))
    } else {
        Ok(None)
    }
}

/// Seed of the embedded default corpus (fixed, so every run and the page see the same people).
pub const DEFAULT_CORPUS_SEED: u64 = 0;

/// The embedded default corpus used when no files are given: 800 people split 545/136/119 (the
/// course's 2000:500:437 ratio), or the 200/50/20 CI split when `tiny`.
pub fn default_corpus(tiny: bool) -> crate::data::DefaultCorpus {
    let sizes = if tiny {
        crate::data::CorpusSizes::TINY
    } else {
        crate::data::CorpusSizes::DEFAULT
    };
    crate::data::generate_sized(DEFAULT_CORPUS_SEED, sizes)
}
