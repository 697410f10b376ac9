//! The Train card's runs (wasm32 only; the engine's training methods). At most one run lives in the
//! engine's state: a library `Session`, set up from the form through a `RunSpec` exactly as the CLI
//! sets one up from its flags. JS drives it in short chunks (`train(n)` is
//! `Session::run_steps(n)`), so pausing is simply not asking for the next chunk and the page stays
//! responsive between chunks. A finished run's model goes to the page's models (`models.rs`), which
//! evaluation and questions (`ask.rs`) use; the input files are checked in `inputs.rs`.
//!
//! Every input (file text, form values, uploaded checkpoints) is checked and refused with a message
//! naming the file, line and fix; nothing the user gives can panic.

use super::engine::{Engine, Loaded};
use super::js::{err, from_js, to_js};
use super::spec::{StartSpec, WORDS};
use crate::data::Vocab;
use crate::model::checkpoint;
use crate::train::{vocab_of_checkpoint, Begin, Hooks, Progress, RunData, RunStart};
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

// ---------------------------------------------------------------------------------------------
// Training

/// The name of a saved training state in messages.
const STATE: &str = "the saved training state";

#[derive(Serialize)]
struct Started {
    params: usize,
    steps: u64,
    total_steps: u64,
    per_epoch: usize,
    lr: f64,
    vocab_size: usize,
    /// The schedule's end (run.py's 200 · documents of the pretraining corpus · block size).
    final_tokens: f64,
    /// The model's dropout probability for this run.
    dropout: f32,
    /// Where the run's learning rate warms up, reaches its floor and climbs again (steps from 1),
    /// and the same in words for under the loss chart.
    phases: crate::train::phases::Phases,
    schedule: String,
    /// Rows per engine call when a step is taken in parts (`step_*`), or null when a whole
    /// step is one call (`steps.rs`).
    micro_rows: Option<usize>,
    /// At most this many engines share a step (`steps.rs`).
    max_engines: usize,
}

#[derive(Serialize)]
pub(crate) struct Report {
    epoch: usize,
    epochs: usize,
    step: u64,
    total_steps: u64,
    loss: f32,
    lr: f64,
    tokens_per_s: f64,
}

impl Report {
    pub(crate) fn of(p: &Progress) -> Report {
        Report {
            epoch: p.epoch,
            epochs: p.epochs,
            step: p.step,
            total_steps: p.total_steps,
            loss: p.loss,
            lr: p.lr,
            tokens_per_s: p.tokens_per_s,
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Chunk {
    pub reports: Vec<Report>,
    pub steps: u64,
    pub total_steps: u64,
    pub done: bool,
    /// The learning rate the next step will use.
    pub lr: f64,
}

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

// ---------------------------------------------------------------------------------------------
// Faults

#[wasm_bindgen]
impl Engine {
    /// Start a run (or continue one): `spec` is the form, `wiki`/`tsv` the pretraining text and the
    /// finetuning TSV with their names; `resume` a saved training state (`run_state`) to continue
    /// exactly. Replaces any run in progress. Returns `{params, steps, total_steps, per_epoch, lr,
    /// vocab_size, final_tokens, dropout, phases, schedule, micro_rows, max_engines}`.
    pub async fn start(
        &self,
        spec: JsValue,
        wiki_name: String,
        wiki: String,
        tsv_name: String,
        tsv: String,
        resume: Option<Vec<u8>>,
    ) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let form: StartSpec = from_js(spec, "the training form is incomplete")?;
        let spec = form.run_spec()?;
        self.with(|e| {
            e.run = None;
            e.step = None;
        });
        let g = self.device().await?;
        // The vocabulary: from the saved state when resuming, from the model a finetune starts from,
        // else from the pretraining text (as run.py always does).
        // A finetune's copy of the model is made from its bytes after the memory check (`to_finetune`).
        let (base, vocab) = match (&resume, spec.pretrained) {
            (Some(bytes), _) => (None, vocab_of_checkpoint(&g, bytes, STATE).map_err(err)?),
            (None, true) => {
                let (bytes, cfg, vocab) = self.to_finetune(spec.variant).await?;
                (Some((bytes, cfg)), vocab)
            }
            (None, false) => (None, Vocab::from_text(&wiki, &wiki_name).map_err(err)?),
        };
        // A finetuned model keeps its sizes; dropout comes from the form for every run, as the CLI's
        // --dropout (default: the assignment's) applies to the model it reads.
        let start = RunStart {
            spec: &spec,
            words: &WORDS,
            corpus: (&wiki, &wiki_name),
            questions: (tsv.as_bytes(), &tsv_name),
            vocab,
            base: base.as_ref().map(|(_, cfg)| cfg.clone()),
        };
        let session = start
            .start(&g, |cfg| {
                Ok(match (resume, base) {
                    (Some(bytes), _) => Begin::Resume {
                        model: checkpoint::from_bytes(&g, &bytes, Some(cfg), STATE)?.0,
                        bytes,
                        what: STATE.into(),
                    },
                    (None, Some((bytes, _))) => {
                        let (mut model, _) =
                            checkpoint::from_bytes(&g, &bytes, None, "the pretrained model")?;
                        model.cfg = cfg.clone();
                        Begin::Model(model)
                    }
                    (None, None) => Begin::Fresh,
                })
            })
            .map_err(err)?;
        let phases = session.phases();
        let started = Started {
            params: session.trainer.model.num_params(),
            steps: session.steps(),
            total_steps: session.total_steps(),
            per_epoch: session.steps_per_epoch(),
            lr: session.trainer.lr,
            vocab_size: session.vocab.len(),
            final_tokens: session.trainer.cfg.final_tokens,
            dropout: session.trainer.model.cfg.attn_pdrop,
            schedule: session.schedule_text(&phases),
            phases,
            micro_rows: super::cut::micro_rows(
                &g,
                &session.trainer.model.cfg,
                session.trainer.model.num_params(),
                session.trainer.cfg.batch_size,
            ),
            max_engines: super::cut::max_engines(
                &session.trainer.model.cfg,
                session.trainer.model.num_params(),
                session.trainer.cfg.batch_size,
            ),
        };
        self.with(|e| e.run = Some(session));
        to_js(&started)
    }

    /// Run up to `steps` more optimisation steps, reading the loss every `every` steps. Returns
    /// `{reports: [{epoch, epochs, step, total_steps, loss, lr, tokens_per_s}], steps, total_steps, done, lr}`.
    /// A non-finite loss or a lost device ends the run with an error (the page keeps its last saved state).
    pub async fn train(&self, steps: u32, every: u32) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        // A step begun in parts and not finished is dropped: this chunk takes it whole.
        self.with(|e| e.step = None);
        let mut reports = vec![];
        let mut on_progress = |p: Progress| reports.push(Report::of(&p));
        let clock = now_s;
        let mut hooks = Hooks {
            every: every.max(1) as u64,
            clock: &clock,
            on_progress: &mut on_progress,
            on_epoch_end: None,
        };
        let result = guard.run().run_steps(steps.max(1) as u64, &mut hooks).await;
        if let Err(e) = result {
            guard.keep_out();
            return Err(self.lost_err(e));
        }
        let r = guard.run();
        to_js(&Chunk {
            reports,
            steps: r.steps(),
            total_steps: r.total_steps(),
            done: r.done(),
            lr: r.trainer.lr,
        })
    }

    /// The run's exact training state (model, AdamW moments, step, tokens, seed) as safetensors bytes;
    /// the page keeps it in IndexedDB so a reload can continue with `start(.., resume)`.
    pub async fn run_state(&self) -> Result<Vec<u8>, JsError> {
        let mut guard = self.take_run()?;
        guard
            .run()
            .state_bytes()
            .await
            .map_err(|e| self.lost_err(e))
    }

    /// End the run: its model becomes the variant's current model (for evaluating, asking and finetuning)
    /// and its checkpoint bytes (the CLI's format) are returned.
    pub async fn finish(&self, label: String) -> Result<Vec<u8>, JsError> {
        self.with(|e| e.step = None);
        let run = self.take_run()?.keep_out().expect("taken just now");
        let bytes = run.checkpoint_bytes().await.map_err(|e| self.lost_err(e))?;
        let pretrained = matches!(run.data, RunData::Pretrain(_));
        let (model, vocab) = run.into_model();
        let model = Rc::new(model);
        if pretrained {
            self.keep_pretrained(model.clone(), vocab.clone(), label.clone());
        }
        self.keep(Loaded {
            model,
            vocab,
            label,
        });
        Ok(bytes)
    }

    /// Drop the run without keeping a model (it was stopped before its first step: a model of zero
    /// steps would replace the one the student has).
    pub fn drop_run(&self) -> Result<(), JsError> {
        self.with(|e| e.step = None);
        self.take_run()?.keep_out();
        Ok(())
    }

    /// Destroy the WebGPU device (for the browser test of the device-lost path). Everything on it is gone:
    /// the run, the models, the evaluation and the ViT are dropped; the next call opens a new device.
    /// On the CPU backend there is no device to lose: only the engine's state is dropped.
    pub fn debug_destroy_device(&self) {
        self.destroy_device();
    }

    /// Why the device was lost, or undefined while it is fine.
    pub fn device_lost(&self) -> Option<String> {
        self.unseen_loss()
    }

    /// After a lost device: forget everything that lived on it, so the next call opens a new one.
    pub fn reset_device(&self) {
        self.forget_device();
        self.acknowledge_loss();
    }
}
