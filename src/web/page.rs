//! The training page's entry points (wasm32 only). All state lives here, in thread-locals: at most
//! one training run (a `Trainer` with its dataset), and one finished model per attention variant for
//! evaluating and asking. JS drives a run in short chunks (`page_train(n)` runs up to n steps through
//! the library's `pretrain`/`finetune` by moving `TrainConfig::max_steps` forward), so pausing is
//! simply not asking for the next chunk and the page stays responsive between chunks.
//!
//! Every input (file text, form values, uploaded checkpoints) is checked here and refused with a
//! message naming the file, line and fix; nothing the user gives can panic.

use super::{device, to_js};
use crate::autograd::Tape;
use crate::data::{
    self, london_baseline, parse_tsv_str, prediction_from_completion, prompt_for,
    CharCorruptionDataset, NameDataset, TsvMode, Vocab, MASK_CHAR,
};
use crate::model::memory::{self, MemoryLimit};
use crate::model::{checkpoint, torch_params, Gpt, GptConfig, Pass, Variant};
use crate::tensor::Tensor;
use crate::train::{self, run, Hooks, Progress, TrainConfig, Trainer};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The data a run trains on.
enum RunData {
    Pretrain(CharCorruptionDataset),
    Finetune(NameDataset),
}

/// The one training run in progress (or paused).
struct Run {
    trainer: Trainer,
    data: RunData,
    vocab: Vocab,
    /// The run's own step limit (the form's "max steps"), kept while `cfg.max_steps` moves by chunks.
    max_steps: Option<u64>,
    total: u64,
}

/// A model ready for evaluation and questions, with the vocabulary it was trained with.
struct Loaded {
    model: Rc<Gpt>,
    vocab: Vocab,
    /// Where it came from, for the page ("trained here", a file name).
    label: String,
}

thread_local! {
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
    static MODELS: RefCell<HashMap<&'static str, Loaded>> = RefCell::new(HashMap::new());
}

fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn variant_of(name: &str) -> Result<Variant, JsError> {
    match name {
        "vanilla" => Ok(Variant::Vanilla),
        "synthesizer" => Ok(Variant::Synthesizer),
        v => Err(err(format!(
            "unknown attention variant '{v}'; choose vanilla or synthesizer"
        ))),
    }
}

/// The vocabulary a checkpoint was trained with (its metadata keeps `itos` as one string).
fn vocab_from_header(vocab: &str, what: &str) -> Result<Vocab, JsError> {
    let itos: Vec<char> = vocab.chars().collect();
    if itos.len() < 2 || itos[0] != data::PAD_CHAR || itos[1] != MASK_CHAR {
        return Err(err(format!(
            "{what}: the vocabulary in its metadata does not start with PAD and MASK; not a \
             checkpoint written by attnlab"
        )));
    }
    let stoi: HashMap<char, u32> = itos
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i as u32))
        .collect();
    if stoi.len() != itos.len() {
        return Err(err(format!(
            "{what}: the vocabulary in its metadata repeats a character"
        )));
    }
    Ok(Vocab {
        stoi,
        itos,
        source: format!("the vocabulary of {what}"),
    })
}

fn vocab_string(v: &Vocab) -> String {
    v.itos.iter().collect()
}

/// Take the run out for an async call and put it back afterwards (also on an error), so no
/// `RefCell` borrow is held across an await.
struct RunGuard(Option<Run>);

impl RunGuard {
    fn take() -> Result<RunGuard, JsError> {
        match RUN.with(|r| r.borrow_mut().take()) {
            Some(r) => Ok(RunGuard(Some(r))),
            None => Err(err(
                "there is no training run; press Pretrain or Finetune first",
            )),
        }
    }
    fn run(&mut self) -> &mut Run {
        self.0
            .as_mut()
            .expect("the guard holds its run until dropped")
    }
    /// Drop the run instead of putting it back (after a failed step its weights are unusable).
    fn discard(mut self) {
        self.0 = None;
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            RUN.with(|slot| *slot.borrow_mut() = Some(r));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Data

/// The embedded generated corpus as the course's four files: `{wiki, train, dev, test}`.
#[wasm_bindgen]
pub fn page_default_corpus() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Files {
        wiki: String,
        train: String,
        dev: String,
        test: String,
    }
    let c = run::default_corpus(false);
    to_js(&Files {
        wiki: c.wiki,
        train: c.train_tsv,
        dev: c.dev_tsv,
        test: c.test_tsv,
    })
}

#[derive(Serialize)]
struct CorpusInfo {
    chars: usize,
    vocab_size: usize,
    documents: usize,
}

/// Check a wiki.txt-style pretraining text: `{chars, vocab_size, documents}`, or an error naming
/// the line and column of a reserved character.
#[wasm_bindgen]
pub fn page_check_corpus(name: &str, text: &str) -> Result<JsValue, JsError> {
    let vocab = Vocab::from_text(text, name).map_err(err)?;
    if text.trim().is_empty() {
        return Err(err(format!(
            "{name}: the file is empty; give a text with one biography per line"
        )));
    }
    to_js(&CorpusInfo {
        chars: text.chars().count(),
        vocab_size: vocab.len(),
        documents: data::universal_newlines(text).split('\n').count(),
    })
}

#[derive(Serialize)]
struct TsvInfo {
    rows: usize,
    answers: bool,
}

/// Check a birth-place TSV: `{rows, answers}` (answers: whether it has the gold column), or an
/// error naming the line and what is wrong. `require_answers` for training files.
#[wasm_bindgen]
pub fn page_check_tsv(name: &str, text: &str, require_answers: bool) -> Result<JsValue, JsError> {
    let mode = if require_answers {
        TsvMode::RequireAnswers
    } else {
        TsvMode::AnswersOptional
    };
    let rows = parse_tsv_str(text, name, mode).map_err(err)?;
    to_js(&TsvInfo {
        rows: rows.len(),
        answers: rows.first().is_some_and(|r| r.answer.is_some()),
    })
}

// ---------------------------------------------------------------------------------------------
// Presets

#[derive(Serialize)]
struct Hyper {
    epochs: usize,
    batch: usize,
    lr: f64,
}

impl From<TrainConfig> for Hyper {
    fn from(c: TrainConfig) -> Hyper {
        Hyper {
            epochs: c.max_epochs,
            batch: c.batch_size,
            lr: c.learning_rate,
        }
    }
}

#[derive(Serialize)]
struct Dims {
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
}

impl From<GptConfig> for Dims {
    fn from(c: GptConfig) -> Dims {
        Dims {
            n_layer: c.n_layer,
            n_head: c.n_head,
            n_embd: c.n_embd,
        }
    }
}

/// The library's configurations, so the page's "full assignment" preset is the CLI's:
/// `{pretrain, finetune_scratch, finetune_pretrained: {epochs, batch, lr}, assignment, tiny: {n_layer, n_head, n_embd}}`.
#[wasm_bindgen]
pub fn page_presets() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Presets {
        pretrain: Hyper,
        finetune_scratch: Hyper,
        finetune_pretrained: Hyper,
        assignment: Dims,
        tiny: Dims,
        /// The assignment's dropout probability (every dropout layer; the CLI's `--dropout`).
        dropout: f64,
    }
    to_js(&Presets {
        pretrain: TrainConfig::pretrain().into(),
        finetune_scratch: TrainConfig::finetune_scratch().into(),
        finetune_pretrained: TrainConfig::finetune_pretrained().into(),
        assignment: GptConfig::assignment(Variant::Vanilla, 2).into(),
        tiny: GptConfig::tiny(Variant::Vanilla, 2).into(),
        // Through its shortest decimal form, so the form shows 0.1 rather than f32's 0.100000001.
        dropout: GptConfig::assignment(Variant::Vanilla, 2)
            .embd_pdrop
            .to_string()
            .parse()
            .unwrap_or(0.1),
    })
}

// ---------------------------------------------------------------------------------------------
// Training

/// What `page_start` needs from the form.
#[derive(Deserialize)]
struct StartSpec {
    /// "pretrain" or "finetune".
    kind: String,
    variant: String,
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
    epochs: usize,
    batch: usize,
    lr: f64,
    max_steps: Option<u64>,
    seed: u32,
    /// The probability of every dropout layer (the CLI's `--dropout`); absent in runs saved before
    /// the form had the field, which then get the assignment's 0.1.
    #[serde(default)]
    dropout: Option<f64>,
    /// Finetune only: start from the variant's current model (a pretrained one) instead of scratch.
    from_model: bool,
}

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
}

fn check_spec(s: &StartSpec) -> Result<(), JsError> {
    if s.epochs == 0 || s.batch == 0 {
        return Err(err(format!(
            "epochs ({}) and batch size ({}) must both be at least 1",
            s.epochs, s.batch
        )));
    }
    if s.max_steps == Some(0) {
        return Err(err("max steps must be at least 1 (or empty for no limit)"));
    }
    if !(s.lr.is_finite() && s.lr > 0.0) {
        return Err(err(format!(
            "learning rate {} must be a positive number such as 6e-4",
            s.lr
        )));
    }
    if let Some(p) = s.dropout {
        if !(p.is_finite() && (0.0..1.0).contains(&p)) {
            return Err(err(format!(
                "dropout {p} must be at least 0 and below 1 (0 turns dropout off; the assignment \
                 uses 0.1)"
            )));
        }
    }
    if s.n_layer == 0 || s.n_layer > 64 || s.n_embd == 0 || s.n_embd > 4096 || s.n_head == 0 {
        return Err(err(format!(
            "model size {} layers × width {} with {} heads is out of range (1–64 layers, width \
             1–4096, at least one head)",
            s.n_layer, s.n_embd, s.n_head
        )));
    }
    Ok(())
}

/// Start a run (or continue one): `spec` is the form, `wiki`/`tsv` the pretraining text and the
/// finetuning TSV with their names; `resume` a saved training state (`Trainer::state_to_bytes`) to
/// continue exactly. Replaces any run in progress. Returns `{params, steps, total_steps, per_epoch,
/// lr, vocab_size, final_tokens, dropout}`.
#[wasm_bindgen]
pub async fn page_start(
    spec: JsValue,
    wiki_name: String,
    wiki: String,
    tsv_name: String,
    tsv: String,
    resume: Option<Vec<u8>>,
) -> Result<JsValue, JsError> {
    let spec: StartSpec = serde_wasm_bindgen::from_value(spec)
        .map_err(|e| err(format!("the training form is incomplete: {e}")))?;
    check_spec(&spec)?;
    let variant = variant_of(&spec.variant)?;
    let pretraining = match spec.kind.as_str() {
        "pretrain" => true,
        "finetune" => false,
        k => return Err(err(format!("unknown run kind '{k}'"))),
    };
    RUN.with(|r| r.borrow_mut().take());
    let g = device().await?;
    // The vocabulary: from the saved state when resuming, from the model a finetune starts from,
    // else from the pretraining text (as run.py always does).
    let (mut base, vocab): (Option<Gpt>, Vocab) = match (&resume, spec.from_model && !pretraining) {
        (Some(bytes), _) => {
            let (_, h) =
                checkpoint::from_bytes(&g, bytes, None, "the saved training state").map_err(err)?;
            (
                None,
                vocab_from_header(&h.vocab, "the saved training state")?,
            )
        }
        (None, true) => {
            let (model, vocab) = MODELS
                .with(|m| {
                    m.borrow()
                        .get(variant.name())
                        .map(|l| (l.model.clone(), l.vocab.clone()))
                })
                .ok_or_else(|| {
                    err(format!(
                        "there is no {} model to finetune; pretrain one, load a checkpoint, or \
                         finetune from scratch",
                        variant.name()
                    ))
                })?;
            // A copy through the checkpoint format, exactly as the CLI's --reading_params_path.
            let bytes = checkpoint::to_bytes(&model, &vocab_string(&vocab))
                .await
                .map_err(err)?;
            let (copy, _) =
                checkpoint::from_bytes(&g, &bytes, None, "the pretrained model").map_err(err)?;
            (Some(copy), vocab)
        }
        (None, false) => (None, Vocab::from_text(&wiki, &wiki_name).map_err(err)?),
    };
    let mut cfg = match &base {
        Some(m) => m.cfg.clone(),
        None => GptConfig {
            n_layer: spec.n_layer,
            n_head: spec.n_head,
            n_embd: spec.n_embd,
            ..GptConfig::assignment(variant, vocab.len())
        },
    };
    // Dropout comes from the form for every run, a finetune of a loaded model included, as the
    // CLI's --dropout (default: the assignment's) applies to the model it reads.
    let p = spec
        .dropout
        .map_or(GptConfig::assignment(variant, 2).embd_pdrop, |p| p as f32);
    (cfg.embd_pdrop, cfg.resid_pdrop, cfg.attn_pdrop) = (p, p, p);
    if let Some(m) = base.as_mut() {
        m.cfg = cfg.clone();
    }
    cfg.validate().map_err(err)?;
    let mut tc = if pretraining {
        TrainConfig::pretrain()
    } else if base.is_some() || resume.is_some() && spec.from_model {
        TrainConfig::finetune_pretrained()
    } else {
        TrainConfig::finetune_scratch()
    };
    tc.max_epochs = spec.epochs;
    tc.batch_size = spec.batch;
    tc.learning_rate = spec.lr;
    tc.max_steps = spec.max_steps;
    // run.py's final_tokens counts the pretraining corpus's documents, also when finetuning (the
    // CLI does the same with the corpus it is given).
    let tc = tc.with_corpus_docs(data::universal_newlines(&wiki).split('\n').count());
    // Refuse what cannot fit before anything is allocated: in wasm32 running out of memory is a
    // trap that kills the page. Examples are block_size - 1 tokens long; count the whole block.
    let est = memory::estimate_training(&cfg, tc.batch_size, cfg.block_size);
    memory::check_fits(&est, &MemoryLimit::of_device(&g)).map_err(err)?;
    let data = if pretraining {
        RunData::Pretrain(
            CharCorruptionDataset::new(&wiki, &wiki_name, &vocab, spec.seed as u64).map_err(err)?,
        )
    } else {
        RunData::Finetune(NameDataset::new(tsv.as_bytes(), &tsv_name, &vocab).map_err(err)?)
    };
    let n = match &data {
        RunData::Pretrain(d) => d.len(),
        RunData::Finetune(d) => d.len(),
    };
    let per_epoch = run::steps_per_epoch(n, tc.batch_size);
    let total = ((per_epoch * tc.max_epochs) as u64).min(tc.max_steps.unwrap_or(u64::MAX));
    let trainer = match resume {
        Some(bytes) => {
            let (model, _) =
                checkpoint::from_bytes(&g, &bytes, Some(&cfg), "the saved training state")
                    .map_err(err)?;
            Trainer::resume(model, tc.clone(), &bytes, "the saved training state").map_err(err)?
        }
        None => {
            let model = match base {
                Some(m) => m,
                None => Gpt::new(&g, cfg, spec.seed as u64).map_err(err)?,
            };
            Trainer::new(model, tc.clone(), spec.seed).map_err(err)?
        }
    };
    let started = Started {
        params: trainer.model.num_params(),
        steps: trainer.steps,
        total_steps: total,
        per_epoch,
        lr: trainer.lr,
        vocab_size: vocab.len(),
        final_tokens: tc.final_tokens,
        dropout: trainer.model.cfg.attn_pdrop,
    };
    RUN.with(|r| {
        *r.borrow_mut() = Some(Run {
            trainer,
            data,
            vocab,
            max_steps: tc.max_steps,
            total,
        })
    });
    to_js(&started)
}

#[derive(Serialize)]
struct Report {
    epoch: usize,
    epochs: usize,
    step: u64,
    total_steps: u64,
    loss: f32,
    lr: f64,
    tokens_per_s: f64,
}

#[derive(Serialize)]
struct Chunk {
    reports: Vec<Report>,
    steps: u64,
    total_steps: u64,
    done: bool,
    /// The learning rate the next step will use.
    lr: f64,
}

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// Run up to `steps` more optimisation steps, reading the loss every `every` steps. Returns
/// `{reports: [{epoch, epochs, step, total_steps, loss, lr, tokens_per_s}], steps, total_steps, done, lr}`.
/// A non-finite loss or a lost device ends the run with an error (the page keeps its last saved state).
#[wasm_bindgen]
pub async fn page_train(steps: u32, every: u32) -> Result<JsValue, JsError> {
    let mut guard = RunGuard::take()?;
    let r = guard.run();
    let target = (r.trainer.steps + steps.max(1) as u64).min(r.total);
    r.trainer.cfg.max_steps = Some(target);
    let mut reports = vec![];
    let mut on_progress = |p: Progress| {
        reports.push(Report {
            epoch: p.epoch,
            epochs: p.epochs,
            step: p.step,
            total_steps: p.total_steps,
            loss: p.loss,
            lr: p.lr,
            tokens_per_s: p.tokens_per_s,
        })
    };
    let clock = now_s;
    let mut hooks = Hooks {
        every: every.max(1) as u64,
        clock: &clock,
        on_progress: &mut on_progress,
        on_epoch_end: None,
    };
    let result = match &r.data {
        RunData::Pretrain(d) => train::pretrain(&mut r.trainer, d, &mut hooks).await,
        RunData::Finetune(d) => train::finetune(&mut r.trainer, d, &mut hooks).await,
    };
    r.trainer.cfg.max_steps = r.max_steps;
    let total = r.total;
    if let Err(e) = result {
        guard.discard();
        return Err(err(lost_or(e)));
    }
    // The library reports the chunk's end as its total; the page wants the run's.
    for rep in &mut reports {
        rep.total_steps = total;
    }
    let r = guard.run();
    to_js(&Chunk {
        reports,
        steps: r.trainer.steps,
        total_steps: total,
        done: r.trainer.steps >= total,
        lr: r.trainer.lr,
    })
}

/// An error message, replaced by the device-lost reason when the device is gone (the error is then
/// only a consequence).
fn lost_or(e: impl std::fmt::Display) -> String {
    match super::unseen_loss() {
        Some(why) => format!(
            "the GPU device was lost ({why}); training stopped. Reload the saved checkpoint to \
             continue"
        ),
        None => e.to_string(),
    }
}

/// The run's exact training state (model, AdamW moments, step, tokens, seed) as safetensors bytes;
/// the page keeps it in IndexedDB so a reload can continue with `page_start(.., resume)`.
#[wasm_bindgen]
pub async fn page_run_state() -> Result<Vec<u8>, JsError> {
    let mut guard = RunGuard::take()?;
    let r = guard.run();
    let v = vocab_string(&r.vocab);
    r.trainer
        .state_to_bytes(&v)
        .await
        .map_err(|e| err(lost_or(e)))
}

/// End the run: its model becomes the variant's current model (for evaluating, asking and finetuning)
/// and its checkpoint bytes (the CLI's format) are returned.
#[wasm_bindgen]
pub async fn page_finish(label: String) -> Result<Vec<u8>, JsError> {
    let guard = RunGuard::take()?;
    let mut guard = guard;
    let run = guard.0.take().expect("taken just now");
    drop(guard);
    let vocab = run.vocab;
    let bytes = checkpoint::to_bytes(&run.trainer.model, &vocab_string(&vocab))
        .await
        .map_err(|e| err(lost_or(e)))?;
    let model = run.trainer.model;
    let name = model.cfg.variant.name();
    MODELS.with(|m| {
        m.borrow_mut().insert(
            name,
            Loaded {
                model: Rc::new(model),
                vocab,
                label,
            },
        )
    });
    Ok(bytes)
}

/// Drop the run and the models (the device they live on is being replaced).
pub(crate) fn drop_all() {
    RUN.with(|r| r.borrow_mut().take());
    MODELS.with(|m| m.borrow_mut().clear());
}

/// Refuse a checkpoint too big to load next to its own bytes on the CPU backend in wasm32 (the
/// tensors it becomes are a second copy).
pub(crate) fn check_checkpoint_size(
    dev: &crate::device::Device,
    bytes: usize,
    what: &str,
) -> Result<(), JsError> {
    if let Some((max, name)) = MemoryLimit::of_device(dev).device_total {
        let need = 2 * bytes as u64;
        if need > max {
            return Err(err(format!(
                "{what} is {}; loading it needs about {}, more than {name} ({})",
                memory::fmt_bytes(bytes as u64),
                memory::fmt_bytes(need),
                memory::fmt_bytes(max)
            )));
        }
    }
    Ok(())
}

/// Forget the run without keeping its model.
#[wasm_bindgen]
pub fn page_drop_run() {
    RUN.with(|r| r.borrow_mut().take());
}

// ---------------------------------------------------------------------------------------------
// Models

#[derive(Serialize)]
struct ModelInfo {
    variant: &'static str,
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
    params: usize,
    vocab_size: usize,
    label: String,
}

fn info(l: &Loaded) -> ModelInfo {
    let c = &l.model.cfg;
    ModelInfo {
        variant: c.variant.name(),
        n_layer: c.n_layer,
        n_head: c.n_head,
        n_embd: c.n_embd,
        params: l.model.num_params(),
        vocab_size: l.vocab.len(),
        label: l.label.clone(),
    }
}

/// Load a checkpoint (the CLI's safetensors file, or one the page saved) as its variant's current
/// model. Returns `{variant, n_layer, n_head, n_embd, params, vocab_size, label}`.
///
/// A course `.params` file (`torch.save(model.state_dict())` from run.py) is accepted too: it
/// holds no vocabulary, so the vocabulary is built from `corpus` (the pretraining text the page
/// has selected, named `corpus_name` in messages) as run.py builds it, and a vanilla model's head
/// count (not visible in its shapes) is `n_head` (the form's; `None`: the assignment's 8). A
/// refused file changes nothing already loaded.
#[wasm_bindgen]
pub async fn page_load_model(
    bytes: Vec<u8>,
    name: String,
    corpus_name: Option<String>,
    corpus: Option<String>,
    n_head: Option<u32>,
) -> Result<JsValue, JsError> {
    let g = device().await?;
    check_checkpoint_size(&g, bytes.len(), &name)?;
    let (model, vocab) = if torch_params::is_torch_file(&bytes) {
        let corpus_name = corpus_name.unwrap_or_else(|| "wiki.txt".into());
        let text = corpus.ok_or_else(|| {
            err(format!(
                "{name} is a PyTorch .params file, which holds no vocabulary; load the \
                 pretraining corpus it was trained with (wiki.txt) or use the built-in corpus"
            ))
        })?;
        let vocab = Vocab::from_text(&text, &corpus_name).map_err(err)?;
        let want = torch_params::Expected {
            variant: None,
            n_head: n_head.map(|h| h as usize),
            vocab: Some((vocab.len(), &corpus_name)),
        };
        let model = torch_params::from_bytes(&g, &bytes, &want, &name).map_err(err)?;
        (model, vocab)
    } else {
        let (model, header) = checkpoint::from_bytes(&g, &bytes, None, &name).map_err(err)?;
        (model, vocab_from_header(&header.vocab, &name)?)
    };
    let variant = model.cfg.variant.name();
    let loaded = Loaded {
        model: Rc::new(model),
        vocab,
        label: name,
    };
    let out = info(&loaded);
    MODELS.with(|m| m.borrow_mut().insert(variant, loaded));
    to_js(&out)
}

/// The variant's current model as a checkpoint file (the CLI's format).
#[wasm_bindgen]
pub async fn page_model_bytes(variant: String) -> Result<Vec<u8>, JsError> {
    let (model, vocab) = model_for(&variant)?;
    checkpoint::to_bytes(&model, &vocab_string(&vocab))
        .await
        .map_err(|e| err(lost_or(e)))
}

/// `[{variant, ...}]` for every loaded model.
#[wasm_bindgen]
pub fn page_models() -> Result<JsValue, JsError> {
    let list: Vec<ModelInfo> = MODELS.with(|m| {
        let m = m.borrow();
        ["vanilla", "synthesizer"]
            .iter()
            .filter_map(|v| m.get(v).map(info))
            .collect()
    });
    to_js(&list)
}

/// The model to evaluate or ask: the variant's current model.
fn model_for(variant: &str) -> Result<(Rc<Gpt>, Vocab), JsError> {
    let v = variant_of(variant)?;
    MODELS
        .with(|m| {
            m.borrow()
                .get(v.name())
                .map(|l| (l.model.clone(), l.vocab.clone()))
        })
        .ok_or_else(|| {
            err(format!(
                "there is no {} model yet; train one (Pretrain or Finetune) or load a checkpoint",
                v.name()
            ))
        })
}

// ---------------------------------------------------------------------------------------------
// Evaluation and questions

#[derive(Serialize)]
struct EvalRow {
    line: usize,
    question: String,
    gold: Option<String>,
    prediction: String,
    correct: Option<bool>,
}

#[derive(Serialize)]
struct EvalReport {
    rows: Vec<EvalRow>,
    /// (correct, total) when the file has answers.
    score: Option<(usize, usize)>,
    london: Option<(usize, usize)>,
    /// The CLI's line, `Correct: c out of t: p%`.
    line: String,
    london_line: String,
}

/// Evaluate the variant's model on a TSV (the first `max_questions` rows when given) by greedy
/// decoding, as the CLI does; `progress(done, total)` after each batch.
#[wasm_bindgen]
pub async fn page_evaluate(
    variant: String,
    name: String,
    text: String,
    max_questions: Option<u32>,
    progress: js_sys::Function,
) -> Result<JsValue, JsError> {
    let (model, vocab) = model_for(&variant)?;
    let mut rows = parse_tsv_str(&text, &name, TsvMode::AnswersOptional).map_err(err)?;
    if let Some(n) = max_questions {
        rows.truncate((n as usize).max(1));
    }
    let mut report = |done: usize, total: usize| {
        let _ = progress.call2(
            &JsValue::NULL,
            &(done as f64).into(),
            &(total as f64).into(),
        );
    };
    let ev = run::evaluate(&model, &vocab, &rows, &name, &mut report)
        .await
        .map_err(|e| err(lost_or(e)))?;
    let has_answers = rows.first().is_some_and(|r| r.answer.is_some());
    let london = if has_answers {
        Some(london_baseline(&rows).map_err(err)?)
    } else {
        None
    };
    let out = EvalReport {
        rows: rows
            .iter()
            .zip(&ev.predictions)
            .map(|(r, p)| EvalRow {
                line: r.line,
                question: r.question.clone(),
                gold: r.answer.clone(),
                prediction: p.clone(),
                correct: r.answer.as_ref().map(|a| a.trim_end() == p),
            })
            .collect(),
        score: ev.score,
        london,
        line: data::format_accuracy(ev.score.map_or(0, |s| s.0), ev.score.map_or(0, |s| s.1)),
        london_line: london.map_or(String::new(), |(c, t)| data::format_accuracy(c, t)),
    };
    to_js(&out)
}

#[derive(Serialize)]
struct Answer {
    question: String,
    prediction: String,
    /// The characters the maps are drawn over: the prompt, then the answer the model wrote.
    tokens: Vec<String>,
    /// How many of `tokens` are the prompt (question + ⁇).
    prompt_len: usize,
    n_layer: usize,
    n_head: usize,
    /// Per layer: n_head × T × T attention probabilities, row = query position.
    maps: Vec<Vec<f32>>,
}

/// The question for what was typed: a whole question is kept, a bare name becomes
/// "Where was NAME born?".
fn question_for(text: &str) -> Result<String, JsError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(err(
            "type a name (or a whole question such as \"Where was Ada Lovelace born?\")",
        ));
    }
    if t.contains('\t') || t.contains('\n') {
        return Err(err("the question must be one line without tabs"));
    }
    if t.ends_with('?') || t.to_lowercase().starts_with("where was ") {
        Ok(t.to_string())
    } else {
        Ok(format!("Where was {t} born?"))
    }
}

/// Ask the variant's model where someone was born: greedy decoding as in evaluation, then one more
/// forward over prompt + answer that keeps every layer's attention probabilities.
#[wasm_bindgen]
pub async fn page_ask(variant: String, text: String) -> Result<JsValue, JsError> {
    let (model, vocab) = model_for(&variant)?;
    let question = question_for(&text)?;
    let prompt = vocab
        .encode_in(&prompt_for(&question), "your question")
        .map_err(err)?;
    let max_t = crate::train::sample::max_context(&model);
    if prompt.len() >= max_t {
        return Err(err(format!(
            "the question is {} characters long; the model reads at most {} (shorten the name)",
            prompt.len() - 1,
            max_t - 2
        )));
    }
    let out = train::sample_greedy(&model, &prompt, run::EVAL_STEPS)
        .await
        .map_err(|e| err(lost_or(e)))?;
    let completion = vocab.decode(&out).map_err(err)?;
    let prediction = prediction_from_completion(&completion);
    // The sequence the maps show: prompt, the answer, and its closing ⁇ when the model wrote one.
    let mut seq = prompt.clone();
    let answer_ids = &out[prompt.len()..];
    let close = answer_ids.iter().position(|&t| t == data::MASK_ID);
    let keep = close.map_or(answer_ids.len(), |i| i + 1);
    seq.extend_from_slice(&answer_ids[..keep]);
    seq.truncate(max_t);
    let t = seq.len();
    let g = device().await?;
    let idx = Tensor::from_u32(&g, &[t], &seq).map_err(err)?;
    let pass = Pass::eval_capturing();
    let tape = Tape::new();
    tape.no_grad(|| model.forward(&tape, &idx, 1, t, None, &pass))
        .map_err(err)?;
    let mut maps = vec![];
    for m in pass.attention_maps() {
        maps.push(m.to_vec_f32().await.map_err(|e| err(lost_or(e)))?);
    }
    let tokens = seq
        .iter()
        .map(|&id| {
            vocab
                .itos
                .get(id as usize)
                .map_or("?".to_string(), |c| c.to_string())
        })
        .collect();
    to_js(&Answer {
        question,
        prediction,
        tokens,
        prompt_len: prompt.len(),
        n_layer: model.cfg.n_layer,
        n_head: model.cfg.n_head,
        maps,
    })
}

// ---------------------------------------------------------------------------------------------
// Faults

/// Destroy the GPU device (for the browser test of the device-lost path). Everything on it is gone:
/// the run and the models are dropped; the next call opens a new device. On the CPU backend there
/// is no device to lose: only the run and the models are dropped.
#[wasm_bindgen]
pub fn page_debug_destroy_device() {
    RUN.with(|r| r.borrow_mut().take());
    MODELS.with(|m| m.borrow_mut().clear());
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
    RUN.with(|r| r.borrow_mut().take());
    MODELS.with(|m| m.borrow_mut().clear());
    super::forget_device();
    super::acknowledge_loss();
}
