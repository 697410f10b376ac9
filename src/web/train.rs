//! The Train card's runs (wasm32 only; the page's `page_*` training exports). At most one run lives here, in a thread-local: a
//! library `Session`, set up from the form through a `RunSpec` exactly as the CLI sets one up from
//! its flags. JS drives it in short chunks (`page_train(n)` is `Session::run_steps(n)`), so pausing
//! is simply not asking for the next chunk and the page stays responsive between chunks. A
//! finished run's model goes to the page's models (`models.rs`), which evaluation and questions
//! (`ask.rs`) use; the input files are checked in `inputs.rs`.
//!
//! Every input (file text, form values, uploaded checkpoints) is checked and refused with a message
//! naming the file, line and fix; nothing the user gives can panic.

use super::engine::Loaded;
use super::engine::{self, Busy, RunGuard};
use super::js::{err, from_js, to_js};
use super::models;
use super::spec::{StartSpec, WORDS};
use super::{device, lost_or};
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
    /// Rows per engine call when a step is taken in parts (`page_step_*`), or null when a whole
    /// step is one call (`steps.rs`).
    micro_rows: Option<usize>,
    /// At most this many engines share a step (`steps.rs`).
    max_engines: usize,
}

/// Start a run (or continue one): `spec` is the form, `wiki`/`tsv` the pretraining text and the
/// finetuning TSV with their names; `resume` a saved training state (`page_run_state`) to continue
/// exactly. Replaces any run in progress. Returns `{params, steps, total_steps, per_epoch, lr,
/// vocab_size, final_tokens, dropout, phases, schedule, micro_rows, max_engines}`.
#[wasm_bindgen]
pub async fn page_start(
    spec: JsValue,
    wiki_name: String,
    wiki: String,
    tsv_name: String,
    tsv: String,
    resume: Option<Vec<u8>>,
) -> Result<JsValue, JsError> {
    let _busy = Busy::enter();
    let form: StartSpec = from_js(spec, "the training form is incomplete")?;
    let spec = form.run_spec()?;
    engine::with(|e| {
        e.run = None;
        e.step = None;
    });
    let g = device().await?;
    // The vocabulary: from the saved state when resuming, from the model a finetune starts from,
    // else from the pretraining text (as run.py always does).
    // A finetune's copy of the model is made from its bytes after the memory check (`to_finetune`).
    let (base, vocab) = match (&resume, spec.pretrained) {
        (Some(bytes), _) => (None, vocab_of_checkpoint(&g, bytes, STATE).map_err(err)?),
        (None, true) => {
            let (bytes, cfg, vocab) = models::to_finetune(spec.variant).await?;
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
    engine::with(|e| e.run = Some(session));
    to_js(&started)
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

/// Run up to `steps` more optimisation steps, reading the loss every `every` steps. Returns
/// `{reports: [{epoch, epochs, step, total_steps, loss, lr, tokens_per_s}], steps, total_steps, done, lr}`.
/// A non-finite loss or a lost device ends the run with an error (the page keeps its last saved state).
#[wasm_bindgen]
pub async fn page_train(steps: u32, every: u32) -> Result<JsValue, JsError> {
    let _busy = Busy::enter();
    let mut guard = RunGuard::take()?;
    // A step begun in parts and not finished is dropped: this chunk takes it whole.
    engine::with(|e| e.step = None);
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
        return Err(err(lost_or(e)));
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
/// the page keeps it in IndexedDB so a reload can continue with `page_start(.., resume)`.
#[wasm_bindgen]
pub async fn page_run_state() -> Result<Vec<u8>, JsError> {
    let mut guard = RunGuard::take()?;
    guard.run().state_bytes().await.map_err(|e| err(lost_or(e)))
}

/// End the run: its model becomes the variant's current model (for evaluating, asking and finetuning)
/// and its checkpoint bytes (the CLI's format) are returned.
#[wasm_bindgen]
pub async fn page_finish(label: String) -> Result<Vec<u8>, JsError> {
    engine::with(|e| e.step = None);
    let run = RunGuard::take()?.keep_out().expect("taken just now");
    let bytes = run.checkpoint_bytes().await.map_err(|e| err(lost_or(e)))?;
    let pretrained = matches!(run.data, RunData::Pretrain(_));
    let (model, vocab) = run.into_model();
    let model = Rc::new(model);
    if pretrained {
        super::section2::keep_pretrained(model.clone(), vocab.clone(), label.clone());
    }
    models::keep(Loaded {
        model,
        vocab,
        label,
    });
    Ok(bytes)
}

/// Drop the run without keeping a model (it was stopped before its first step: a model of zero
/// steps would replace the one the student has).
#[wasm_bindgen]
pub fn page_drop_run() -> Result<(), JsError> {
    engine::with(|e| e.step = None);
    RunGuard::take()?.keep_out();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Faults

/// Destroy the WebGPU device (for the browser test of the device-lost path). Everything on it is gone:
/// the run, the models, the evaluation and the ViT are dropped; the next call opens a new device.
/// On the CPU backend there is no device to lose: only the engine's state is dropped.
#[wasm_bindgen]
pub fn page_debug_destroy_device() {
    super::destroy_device();
}

/// Why the device was lost, or undefined while it is fine.
#[wasm_bindgen]
pub fn page_device_lost() -> Option<String> {
    super::unseen_loss()
}

/// After a lost device: forget everything that lived on it, so the next call opens a new one.
#[wasm_bindgen]
pub fn page_reset_device() {
    super::forget_device();
    super::acknowledge_loss();
}
