//! The page's engine (wasm32 only): one `Engine` object, made by the worker
//! (web/engine-worker.js) with `new Engine()`, whose methods are the page's whole API
//! (`#[wasm_bindgen] impl Engine` blocks, one per concern file). It owns everything that lives on
//! the device (the device itself, the training run, the models, the evaluation going on, the ViT,
//! the section 2 demos' models and caches) in one `State`, so a lost or replaced device drops all
//! of it in one place (`State::drop_all`). `Engine::with` lends the state for a moment and never
//! across an `await` (every async method takes what it needs out and puts it back).
//!
//! The types of what it holds are here too, so the engine depends on none of the files that use it.

use super::js::err;
use super::s2_state::S2State;
use crate::data::{DefaultCorpus, Row, Vocab};
use crate::device::{Device, DeviceChoice};
use crate::model::vit::VitTrainer;
use crate::model::Gpt;
use crate::train::{run, Session, StepParts};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A model ready for evaluation and questions, with the vocabulary it was trained with
/// (`models.rs`).
pub(crate) struct Loaded {
    pub model: Rc<Gpt>,
    pub vocab: Vocab,
    /// Where it came from, for the page ("trained here", a file name).
    pub label: String,
}

/// An evaluation going on (`ask.rs`): the model it started with (None once its device is lost),
/// the questions and the predictions so far.
pub(crate) struct Evaluation {
    pub model: Option<Rc<Gpt>>,
    pub vocab: Vocab,
    pub name: String,
    pub rows: Vec<Row>,
    pub predictions: Vec<String>,
    pub skipped: Vec<run::Skipped>,
}

/// A model the section 2 demos keep apart from the registry (`section2.rs`), with its vocabulary
/// and where it came from.
#[derive(Clone)]
pub(crate) struct Kept {
    pub model: Rc<Gpt>,
    pub vocab: Vocab,
    pub label: String,
}

/// The ViT card's model, its trainer and where it came from (`vit.rs`).
pub(crate) struct VitRun {
    pub trainer: VitTrainer,
    /// Training images come from set 2·seed, the held-out set is 2·seed + 1 (as in the CLI).
    pub seed: u64,
    /// Where the model came from, for the page ("shipped", "trained here").
    pub origin: String,
}

/// The Train card's step in progress when it is taken in parts (`steps.rs`), and when it began
/// (seconds, for its tokens per second).
pub(crate) struct PartStep {
    pub parts: StepParts,
    pub t0: f64,
}

/// All of the page's engine state.
pub(crate) struct State {
    /// The page opens one device and keeps it: pipelines and pooled buffers are reused across runs.
    pub device: Option<Rc<Device>>,
    /// What the page asked for (`open_device`); a device reopened after a loss uses it again.
    pub choice: DeviceChoice,
    /// Set when the page destroyed the device itself (the lost callback may come later).
    pub destroyed: bool,
    /// The reason of a loss that the page has not acknowledged yet (`reset_device`): a demo
    /// may open a new device in between, and the training page must still learn why its run died.
    pub unseen_loss: Option<String>,
    /// The Train card's run (`train.rs`).
    pub run: Option<Session>,
    /// Its step in progress, when taken in parts (`steps.rs`).
    pub step: Option<PartStep>,
    /// The finished models by slot (`models.rs`): each attention variant's current model under
    /// its name ("vanilla"), and one kept beside it for comparison under "vanilla:kept".
    pub models: HashMap<String, Loaded>,
    /// The evaluation asked for in parts (`ask.rs`).
    pub eval: Option<Evaluation>,
    /// The ViT card's model and trainer (`vit.rs`).
    pub vit: Option<VitRun>,
    /// The section 2 demos' model finetuned without pretraining, and the pretrained-only model
    /// for the probe (`section2.rs`).
    pub no_pretrain: Option<Kept>,
    pub pretrained: Option<Kept>,
    /// The built-in corpus the section 2 demos ask about (made once; not on the device, so a
    /// device loss keeps it).
    pub corpus: Option<Rc<DefaultCorpus>>,
    /// Every character of the built-in corpus and its dev set (tab and newline aside), once.
    builtin_chars: Option<Rc<[char]>>,
    /// The section 2 demos' texts and caches (`section2.rs`).
    pub s2: S2State,
    /// Device calls running now, and how often one started while another ran (the worker serves
    /// one call at a time, so this stays 0; `debug_engine` shows it to the browser tests).
    busy: u32,
    overlaps: u32,
}

impl State {
    fn new() -> State {
        State {
            device: None,
            choice: DeviceChoice::Auto,
            destroyed: false,
            unseen_loss: None,
            run: None,
            step: None,
            models: HashMap::new(),
            eval: None,
            vit: None,
            no_pretrain: None,
            pretrained: None,
            corpus: None,
            builtin_chars: None,
            s2: Default::default(),
            busy: 0,
            overlaps: 0,
        }
    }

    /// Drop everything that lives on the device (it is lost or being replaced); the device itself
    /// and the loss bookkeeping are `mod.rs`'s.
    pub fn drop_all(&mut self) {
        self.run = None;
        self.step = None;
        self.models.clear();
        // An evaluation keeps what it answered (plain text, not on the device), so the page can
        // still show it; only its model goes.
        if let Some(ev) = self.eval.as_mut() {
            ev.model = None;
        }
        self.vit = None;
        self.no_pretrain = None;
        self.pretrained = None;
    }
}

/// The page's engine: the one object the worker makes and calls (web/engine-worker.js).
#[wasm_bindgen]
pub struct Engine {
    st: RefCell<State>,
}

#[wasm_bindgen]
impl Engine {
    /// An engine with no device yet: `open_device` opens one.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Engine {
        Engine {
            st: RefCell::new(State::new()),
        }
    }
}

impl Engine {
    /// Lend the state to `f`. Never call it from inside `f`, and never hold what it lends across
    /// an await: take values out (`Option::take`) and put them back.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.st.borrow_mut())
    }

    /// The built-in corpus (made on first use, then kept).
    pub(crate) fn builtin_corpus(&self) -> Rc<DefaultCorpus> {
        self.with(|e| {
            e.corpus
                .get_or_insert_with(|| Rc::new(run::default_corpus(false)))
                .clone()
        })
    }

    /// Whether a vocabulary holds every character of the built-in corpus and dev set: a model of
    /// that text (its biographies or birth notes) does, one of the course's files does not. What
    /// the page takes as "this model read about the built-in people".
    pub(crate) fn reads_builtin(&self, vocab: &Vocab) -> bool {
        let chars = match self.with(|e| e.builtin_chars.clone()) {
            Some(c) => c,
            None => {
                let c = self.builtin_corpus();
                let mut all: Vec<char> = c
                    .wiki
                    .chars()
                    .chain(c.dev_tsv.chars())
                    .filter(|&ch| ch != '\t' && ch != '\n')
                    .collect();
                all.sort_unstable();
                all.dedup();
                let all: Rc<[char]> = all.into();
                self.with(|e| e.builtin_chars = Some(all.clone()));
                all
            }
        };
        chars.iter().all(|&ch| vocab.id(ch).is_some())
    }

    /// Held for the length of a device call: counts a call that starts while another one runs.
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.with(|e| {
            if e.busy > 0 {
                e.overlaps += 1;
            }
            e.busy += 1;
        });
        Busy(self)
    }

    /// Take the run out for an async call; the guard puts it back afterwards (also on an error).
    pub(crate) fn take_run(&self) -> Result<RunGuard<'_>, JsError> {
        match self.with(|e| e.run.take()) {
            Some(r) => Ok(RunGuard(self, Some(r))),
            None => Err(err(
                "there is no training run; press Pretrain or Finetune first",
            )),
        }
    }

    /// What the engine holds, for the browser tests (`debug_engine`).
    pub(crate) fn held(&self) -> Held {
        self.with(|e| {
            let mut models: Vec<String> = e.models.keys().cloned().collect();
            models.sort();
            Held {
                device: e.device.is_some(),
                run: e.run.is_some(),
                models,
                evaluation: e.eval.as_ref().is_some_and(|ev| ev.model.is_some()),
                vit: e.vit.is_some(),
                section2: [
                    ("nopretrain", &e.no_pretrain),
                    ("pretrained", &e.pretrained),
                ]
                .into_iter()
                .filter_map(|(n, k)| k.as_ref().map(|_| n))
                .collect(),
                overlaps: e.overlaps,
            }
        })
    }
}

/// Held for the length of a device call (training chunk, kernel checks, an evaluation part):
/// counts a call that starts while another one runs (`Engine::busy`).
pub(crate) struct Busy<'a>(&'a Engine);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.with(|e| e.busy = e.busy.saturating_sub(1));
    }
}

/// What the engine holds, for the browser tests (`Engine::debug_engine`).
#[derive(Serialize)]
pub(crate) struct Held {
    device: bool,
    run: bool,
    models: Vec<String>,
    /// An evaluation holding a model on the device (a lost device leaves its answers only).
    evaluation: bool,
    vit: bool,
    /// The section 2 demos' models: `[nopretrain, pretrained]` as far as held.
    section2: Vec<&'static str>,
    overlaps: u32,
}

/// The run, taken out for an async call and put back afterwards (also on an error), so no
/// `RefCell` borrow is held across an await (`Engine::take_run`).
pub(crate) struct RunGuard<'a>(&'a Engine, Option<Session>);

impl RunGuard<'_> {
    pub(crate) fn run(&mut self) -> &mut Session {
        self.1
            .as_mut()
            .expect("the guard holds its run until dropped")
    }
    /// Take the run for good (after a failed step its weights are unusable; at the end it is done).
    pub(crate) fn keep_out(mut self) -> Option<Session> {
        self.1.take()
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.1.take() {
            self.0.with(|e| e.run = Some(r));
        }
    }
}
