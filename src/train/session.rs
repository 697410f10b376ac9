//! A training run in progress, for both front ends: the trainer with its data and vocabulary,
//! started fresh, from a model, or from a saved training state, and driven `n` steps at a time
//! (`run_steps`) or to its end. The CLI runs it to the end behind a progress bar; the page runs
//! short chunks so that it stays responsive, and pausing is not asking for the next chunk.

use super::run::{self, Hooks};
use super::spec::{RunKind, RunSpec};
use super::trainer::MicroStep;
use super::{Progress, TrainConfig, Trainer};
use crate::data::{CharCorruptionDataset, NameDataset, Vocab};
use crate::device::Device;
use crate::error::Result;
use crate::model::memory::{self, MemoryLimit};
use crate::model::{checkpoint, Gpt, GptConfig};
use std::rc::Rc;

/// The examples a run trains on.
pub enum RunData {
    Pretrain(CharCorruptionDataset),
    Finetune(NameDataset),
}

impl RunData {
    /// The run's dataset: span corruption of the pretraining text, or the finetuning TSV's
    /// questions (`tsv`: its bytes and name), encoded with `vocab`.
    pub fn new(
        spec: &RunSpec,
        text: &str,
        text_name: &str,
        tsv: (&[u8], &str),
        vocab: &Vocab,
    ) -> Result<RunData> {
        Ok(match spec.kind {
            RunKind::Pretrain => RunData::Pretrain(CharCorruptionDataset::new(
                text, text_name, vocab, spec.seed,
            )?),
            RunKind::Finetune => RunData::Finetune(NameDataset::new(tsv.0, tsv.1, vocab)?),
        })
    }

    /// Examples per epoch.
    pub fn len(&self) -> usize {
        match self {
            RunData::Pretrain(d) => d.len(),
            RunData::Finetune(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Batch `s` of epoch `epoch` (0-based) in batches of `bs`: (x, y, rows), each row
    /// BLOCK_SIZE − 1 tokens: the batch a run takes at that step.
    pub fn batch(&self, bs: usize, epoch: usize, s: usize) -> Result<(Vec<u32>, Vec<u32>, usize)> {
        let n = self.len();
        match self {
            RunData::Pretrain(d) => run::batch_of(&|i, e| d.get(i, e), n, bs, epoch, s),
            RunData::Finetune(d) => run::batch_of(&|i, _| d.get(i), n, bs, epoch, s),
        }
    }

    /// The share of a batch's token positions a packed step runs (each row up to its last real
    /// target, `Trainer::step_packed`), over the first epoch's first `max` examples: about half
    /// for pretraining, a fifth for finetuning. A step of a packed run costs about this share of a
    /// step of full 127-token rows; the page scales its measured full-row steps by it.
    pub fn packed_fill(&self, max: usize) -> Result<f64> {
        let n = self.len().min(max.max(1));
        let (mut real, mut all) = (0usize, 0usize);
        for i in 0..n {
            let (_, y) = match self {
                RunData::Pretrain(d) => d.get(i, 0)?,
                RunData::Finetune(d) => d.get(i)?,
            };
            // The length the packed step runs for this row (`layout::target_lengths`).
            real += crate::model::layout::target_lengths(&y, 1, y.len())[0];
            all += y.len();
        }
        Ok(if all == 0 {
            1.0
        } else {
            real as f64 / all as f64
        })
    }
}

/// Where a run's weights start.
pub enum Begin {
    /// A new model drawn from the spec's seed.
    Fresh,
    /// A model read from a file (a finetune of a pretrained model).
    Model(Gpt),
    /// The training state `bytes` saved by `Session::state_bytes` (or `Trainer::state_to_bytes`),
    /// continued exactly; `model` was read from the same bytes. `what` names them in messages.
    Resume {
        model: Gpt,
        bytes: Vec<u8>,
        what: String,
    },
}

/// One step of a run taken in parts (`Session::step_begin`): the micro-batched step on the run's
/// next batch, with what its report needs.
#[derive(Debug)]
pub struct StepParts {
    pub micro: MicroStep,
    /// The learning rate the step uses.
    lr: f64,
    /// 0-based epoch of the batch.
    epoch: usize,
    /// Rows of the batch (the schedule counts each as a whole block).
    rows: usize,
}

impl StepParts {
    pub fn rows(&self) -> usize {
        self.rows
    }
}

pub struct Session {
    pub trainer: Trainer,
    pub data: RunData,
    /// The vocabulary the model reads (kept in its checkpoints).
    pub vocab: Vocab,
}

impl Session {
    /// Start a run of model `cfg` with hyperparameters `tc` on `data`: first refuse a model or batch
    /// that does not fit the device (in wasm32 running out of memory is a trap that kills the
    /// page), then take the weights `begin` gives (called only after that check, so nothing is read
    /// or allocated for a run that cannot fit). Front ends start runs through `RunStart`.
    pub(crate) fn start(
        dev: &Rc<Device>,
        spec: &RunSpec,
        cfg: &GptConfig,
        tc: TrainConfig,
        data: RunData,
        vocab: Vocab,
        begin: impl FnOnce() -> Result<Begin>,
    ) -> Result<Session> {
        // Examples are block_size - 1 tokens long; count the whole block.
        let est = memory::estimate_training_on(dev, cfg, tc.batch_size, cfg.block_size);
        memory::check_fits(&est, &MemoryLimit::of_device(dev))?;
        let seed = spec.seed as u32;
        let trainer = match begin()? {
            Begin::Fresh => Trainer::new(Gpt::new(dev, cfg.clone(), spec.seed)?, tc, seed)?,
            Begin::Model(model) => Trainer::new(model, tc, seed)?,
            Begin::Resume { model, bytes, what } => Trainer::resume(model, tc, &bytes, &what)?,
        };
        Ok(Session {
            trainer,
            data,
            vocab,
        })
    }

    /// Optimizer steps per epoch.
    pub fn steps_per_epoch(&self) -> usize {
        run::steps_per_epoch(self.data.len(), self.trainer.cfg.batch_size)
    }

    /// Steps of the whole run (every epoch's, or `max_steps` if fewer).
    pub fn total_steps(&self) -> u64 {
        run::total_steps(&self.trainer.cfg, self.data.len())
    }

    /// Where the whole run's learning rate warms up, reaches its floor and climbs again.
    pub fn phases(&self) -> super::phases::Phases {
        self.trainer.cfg.phases(self.data.len(), self.total_steps())
    }

    /// The run's learning rate in words, from its `phases` (pretraining adds why its first
    /// steps' loss can jump).
    pub fn schedule_text(&self, phases: &super::phases::Phases) -> String {
        // Only a pretraining that starts from random weights can meet the full rate fresh: a
        // resumed one is past its first steps.
        let fresh = matches!(self.data, RunData::Pretrain(_)) && self.steps() == 0;
        phases.describe(self.steps_per_epoch(), fresh)
    }

    /// Steps taken so far (a resumed run counts the steps before its state was saved).
    pub fn steps(&self) -> u64 {
        self.trainer.steps
    }

    pub fn done(&self) -> bool {
        self.steps() >= self.total_steps()
    }

    /// Take up to `n` more steps (fewer at the run's end), reporting through `hooks`; the loss is
    /// also read back after the last of them. Returns that loss (NaN when no step was left). Running
    /// a run in chunks takes exactly the steps one call to `run_to_end` takes.
    pub async fn run_steps(&mut self, n: u64, hooks: &mut Hooks<'_>) -> Result<f32> {
        let until = Some(self.trainer.steps.saturating_add(n));
        self.run_until(until, hooks).await
    }

    /// Take every step left.
    pub async fn run_to_end(&mut self, hooks: &mut Hooks<'_>) -> Result<f32> {
        self.run_until(None, hooks).await
    }

    async fn run_until(&mut self, until: Option<u64>, hooks: &mut Hooks<'_>) -> Result<f32> {
        let t = &mut self.trainer;
        match &self.data {
            RunData::Pretrain(d) => {
                run::train_epochs(t, d.len(), &|i, e| d.get(i, e), hooks, until).await
            }
            RunData::Finetune(d) => {
                run::train_epochs(t, d.len(), &|i, _| d.get(i), hooks, until).await
            }
        }
    }

    /// Begin the run's next step in parts (None when the run is done): the same batch and step
    /// as `run_steps(1)` would take, as `Trainer::micro_begin` on it, so a front end can run its
    /// rows as separate calls (`Trainer::micro_next`) or on several engines (`MicroStep::parts`,
    /// `Trainer::micro_skip` / `micro_add`), then `step_end`. Dropping the parts before `step_end`
    /// leaves the run as it was (the weights change only at the end).
    pub fn step_begin(&mut self) -> Result<Option<StepParts>> {
        if self.done() {
            return Ok(None);
        }
        let steps = self.trainer.steps;
        let bs = self.trainer.cfg.batch_size.max(1);
        let per_epoch = self.steps_per_epoch().max(1) as u64;
        let (epoch, s) = ((steps / per_epoch) as usize, (steps % per_epoch) as usize);
        let (x, y, rows) = self.data.batch(bs, epoch, s)?;
        let t = crate::data::BLOCK_SIZE - 1;
        let lr = self.trainer.lr;
        let micro = self.trainer.micro_begin(&x, &y, rows, t, rows * t)?;
        Ok(Some(StepParts {
            micro,
            lr,
            epoch,
            rows,
        }))
    }

    /// Finish a step begun by `step_begin` whose rows are all done (here or added from other
    /// engines): clip, AdamW, move on; read the loss back (an error when it is not finite) and
    /// report it, with the tokens per second over `elapsed_s`.
    pub async fn step_end(&mut self, p: StepParts, elapsed_s: f64) -> Result<Progress> {
        let loss = self.trainer.micro_finish(p.micro)?;
        let step = self.trainer.steps;
        let l = run::finite_loss(&loss, p.epoch + 1, step, p.lr).await?;
        let (total, per_epoch) = (self.total_steps(), self.steps_per_epoch().max(1) as u64);
        let elapsed = elapsed_s.max(1e-9);
        Ok(Progress {
            epoch: p.epoch + 1,
            epochs: self.trainer.cfg.max_epochs,
            step,
            total_steps: total,
            loss: l,
            lr: p.lr,
            tokens_per_s: (p.rows * (crate::data::BLOCK_SIZE - 1)) as f64 / elapsed,
            elapsed_s: elapsed,
            epoch_end: step.is_multiple_of(per_epoch) || step == total,
        })
    }

    /// The exact training state (model, AdamW moments, step, tokens, seed) to continue from with
    /// `Begin::Resume`; also readable as a plain checkpoint.
    pub async fn state_bytes(&self) -> Result<Vec<u8>> {
        self.trainer.state_to_bytes(&self.vocab.itos_string()).await
    }

    /// The model as a checkpoint (safetensors with the vocabulary in its metadata).
    pub async fn checkpoint_bytes(&self) -> Result<Vec<u8>> {
        checkpoint::to_bytes(&self.trainer.model, &self.vocab.itos_string()).await
    }

    /// The trained model and its vocabulary.
    pub fn into_model(self) -> (Gpt, Vocab) {
        // The gradients go with the run: a kept model holds its weights only.
        for p in &self.trainer.model.params {
            p.var.drop_grad();
        }
        (self.trainer.model, self.vocab)
    }
}

/// The vocabulary kept in a checkpoint or training state written by attnlab (`what` names it).
pub fn vocab_of_checkpoint(dev: &Rc<Device>, bytes: &[u8], what: &str) -> Result<Vocab> {
    let (_, header) = checkpoint::from_bytes(dev, bytes, None, what)?;
    Vocab::from_itos(&header.vocab, what)
}
