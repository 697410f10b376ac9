//! How a run is set up, written once for both front ends (the CLI and the page): the kind of run
//! and run.py's presets for it, the values the user overrides, their validation in the front
//! end's own words, and the model and training configurations that follow.

use super::schedule::TrainConfig;
use crate::error::{Error, Result};
use crate::model::{GptConfig, Variant};

/// Pretraining (span corruption on the corpus) or finetuning (the birth-place questions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    Pretrain,
    Finetune,
}

impl RunKind {
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Pretrain => "pretrain",
            RunKind::Finetune => "finetune",
        }
    }

    /// The kind a user named ("pretrain" or "finetune").
    pub fn from_name(name: &str) -> Result<RunKind> {
        match name {
            "pretrain" => Ok(RunKind::Pretrain),
            "finetune" => Ok(RunKind::Finetune),
            k => Err(Error::Msg(format!(
                "unknown run kind '{k}'; choose pretrain or finetune"
            ))),
        }
    }
}

/// How a front end names each setting, so that a refusal speaks of what the user typed: the CLI
/// says `--max_epochs`, the page "epochs".
#[derive(Clone, Copy, Debug)]
pub struct Words {
    pub epochs: &'static str,
    pub batch: &'static str,
    pub lr: &'static str,
    pub max_steps: &'static str,
    pub dropout: &'static str,
    pub decay_epochs: &'static str,
    /// The settings a model configuration comes from (its sizes and dropout), named when the
    /// configuration does not hold.
    pub model: &'static str,
}

/// The most layers and the widest model a run accepts (far beyond the assignment's 4 × 256; the
/// memory estimate refuses what does not fit long before).
pub const MAX_LAYERS: usize = 64;
pub const MAX_WIDTH: usize = 4096;
/// The most epochs a run or its schedule's floor may name: run.py's runs take 650 at most, and a
/// bound keeps the step count (epochs × steps an epoch) far from overflowing.
pub const MAX_EPOCHS: usize = 1_000_000;

/// Values the user set; `None` keeps the preset's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    pub epochs: Option<usize>,
    pub batch: Option<usize>,
    pub lr: Option<f64>,
    /// Stop after this many optimizer steps; the schedule stays the full run's.
    pub max_steps: Option<u64>,
    pub n_layer: Option<usize>,
    pub n_head: Option<usize>,
    pub n_embd: Option<usize>,
    /// The probability of every dropout layer (0 turns dropout off).
    pub dropout: Option<f64>,
    /// Where the learning rate's cosine reaches its floor, in epochs' worth of the pretraining
    /// corpus's tokens: run.py's `final_tokens` is 200 of them (not in run.py as a setting; a
    /// run that ends at this epoch ends at the floor instead of wherever the unclamped cosine
    /// has climbed back to).
    pub decay_epochs: Option<usize>,
}

/// Everything that decides a run before any file is read: what to run, on which preset, with
/// which overrides and seed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub kind: RunKind,
    pub variant: Variant,
    /// The tiny model (2 layers, 4 heads, width 64; the CLI's `--tiny`) instead of the assignment's.
    pub tiny: bool,
    /// A finetune of a pretrained model (run.py's 10 epochs) rather than from scratch (75).
    pub pretrained: bool,
    pub overrides: Overrides,
    /// Seed of the initial weights, the dropout masks and the corruption draws.
    pub seed: u64,
}

impl RunSpec {
    /// Refuse values no run can use, in this order, naming them as `w` does.
    pub fn check(&self, w: &Words) -> Result<()> {
        match self.refusal() {
            None => Ok(()),
            Some(r) => Err(Error::Msg(r.in_words(w))),
        }
    }

    /// The first value no run can use (the rules of `check`, which words them for a front end).
    pub fn refusal(&self) -> Option<Refusal> {
        let o = &self.overrides;
        let refuse = |setting, value: String| Some(Refusal { setting, value });
        if let Some(e) = o.epochs.filter(|&e| e == 0 || e > MAX_EPOCHS) {
            return refuse(Setting::Epochs, e.to_string());
        }
        if let Some(0) = o.batch {
            return refuse(Setting::Batch, "0".into());
        }
        if o.max_steps == Some(0) {
            return refuse(Setting::MaxSteps, "0".into());
        }
        if let Some(e) = o.decay_epochs.filter(|&e| e == 0 || e > MAX_EPOCHS) {
            return refuse(Setting::DecayEpochs, e.to_string());
        }
        if let Some(lr) = o.lr {
            // Training runs in f32: a rate above f32::MAX becomes infinity there.
            if !(lr.is_finite() && lr > 0.0 && lr <= f64::from(f32::MAX)) {
                // 1e39, not forty digits.
                let shown = if lr.abs() >= 1e9 {
                    format!("{lr:e}")
                } else {
                    lr.to_string()
                };
                return refuse(Setting::Lr, shown);
            }
        }
        if let Some(p) = o.dropout {
            if !(p.is_finite() && (0.0..1.0).contains(&p)) {
                return refuse(Setting::Dropout, p.to_string());
            }
        }
        let c = self.model_config(2);
        if c.n_layer == 0
            || c.n_layer > MAX_LAYERS
            || c.n_embd == 0
            || c.n_embd > MAX_WIDTH
            || c.n_head == 0
        {
            let size = format!(
                "model size {} layers × width {} with {} heads is out of range (1–{MAX_LAYERS} \
                 layers, width 1–{MAX_WIDTH}, at least one head)",
                c.n_layer, c.n_embd, c.n_head
            );
            return refuse(Setting::ModelSize, size);
        }
        None
    }

    /// run.py's hyperparameters for this kind of run, before overrides.
    pub fn preset(&self) -> TrainConfig {
        match (self.kind, self.pretrained) {
            (RunKind::Pretrain, _) => TrainConfig::pretrain(),
            (RunKind::Finetune, true) => TrainConfig::finetune_pretrained(),
            (RunKind::Finetune, false) => TrainConfig::finetune_scratch(),
        }
    }

    /// The run's hyperparameters: the preset with the overrides, its schedule ending at run.py's
    /// `final_tokens` for a pretraining corpus of `corpus_docs` documents (`data::documents`;
    /// run.py counts the pretraining corpus also when finetuning), or at `decay_epochs` of it.
    pub fn train_config(&self, corpus_docs: usize) -> TrainConfig {
        let o = &self.overrides;
        let mut tc = self.preset().with_corpus_docs(corpus_docs);
        if let Some(e) = o.decay_epochs {
            tc = tc.with_decay_epochs(e, corpus_docs);
        }
        tc.max_epochs = o.epochs.unwrap_or(tc.max_epochs);
        tc.batch_size = o.batch.unwrap_or(tc.batch_size);
        tc.learning_rate = o.lr.unwrap_or(tc.learning_rate);
        tc.max_steps = o.max_steps;
        tc
    }

    /// The dropout probability of every dropout layer: the override, else the preset's.
    pub fn dropout(&self) -> f32 {
        let preset = GptConfig::assignment(self.variant, 2).embd_pdrop;
        self.overrides.dropout.map_or(preset, |p| p as f32)
    }

    /// A new model's configuration: the size preset with the overrides (not validated; see
    /// `validate_model`).
    pub fn model_config(&self, vocab_size: usize) -> GptConfig {
        let o = &self.overrides;
        let mut c = if self.tiny {
            GptConfig::tiny(self.variant, vocab_size)
        } else {
            GptConfig::assignment(self.variant, vocab_size)
        };
        c.n_layer = o.n_layer.unwrap_or(c.n_layer);
        c.n_head = o.n_head.unwrap_or(c.n_head);
        c.n_embd = o.n_embd.unwrap_or(c.n_embd);
        self.set_dropout(&mut c);
        c
    }

    /// Give a model read from a file this run's dropout (it applies to every run, a finetune of a
    /// loaded model included).
    pub fn set_dropout(&self, c: &mut GptConfig) {
        let p = self.dropout();
        (c.embd_pdrop, c.resid_pdrop, c.attn_pdrop) = (p, p, p);
    }
}

/// A setting `RunSpec::refusal` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Epochs,
    Batch,
    MaxSteps,
    Lr,
    Dropout,
    /// Where the cosine reaches its floor, in epochs.
    DecayEpochs,
    /// The layers, heads and width together.
    ModelSize,
}

impl Setting {
    /// What a value of this setting must be, as a noun and its range (empty when the noun says
    /// it all): "a whole number" "at least 1".
    pub fn demand(self) -> (&'static str, &'static str) {
        match self {
            Setting::Epochs | Setting::DecayEpochs => (
                "a whole number",
                "at least 1 and at most 1,000,000 (the assignment's runs take 650 at most)",
            ),
            Setting::Batch | Setting::MaxSteps => ("a whole number", "at least 1"),
            Setting::Lr => (
                "a positive number",
                "a positive number of at most 3.4e38 (it is used as an f32; the assignment uses \
                 6e-3 to pretrain and 6e-4 to finetune)",
            ),
            Setting::Dropout => (
                "a probability",
                "at least 0 and below 1 (0 turns dropout off; the assignment uses 0.1)",
            ),
            Setting::ModelSize => ("a model size", ""),
        }
    }

    /// "{name} is “{raw}”; give {noun} of {range}": how a form refuses what was typed into one of
    /// its fields (the page says this also of text that is not a number).
    pub fn refuse_field(self, name: &str, raw: &str) -> String {
        match self.demand() {
            (noun, "") => format!("{name} is “{raw}”; give {noun}"),
            // The range already starts with the noun ("a positive number of at most 3.4e38").
            (noun, range) if range.starts_with(noun) => format!("{name} is “{raw}”; give {range}"),
            (noun, range) => format!("{name} is “{raw}”; give {noun} of {range}"),
        }
    }
}

/// A value no run can use: which setting, and the value as the run holds it (for the model size,
/// the whole message).
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub setting: Setting,
    pub value: String,
}

impl Refusal {
    /// The refusal naming the setting as `w` does ("--dropout 1 must be at least 0 and below 1 …").
    pub fn in_words(&self, w: &Words) -> String {
        let must = match self.setting.demand() {
            (noun, "") => noun,
            (_, range) => range,
        };
        match self.setting {
            Setting::Epochs => format!("{} {} must be {must}", w.epochs, self.value),
            Setting::Batch => format!("{} must be {must}", w.batch),
            Setting::MaxSteps => format!("{} must be {must}", w.max_steps),
            Setting::DecayEpochs => format!("{} {} must be {must}", w.decay_epochs, self.value),
            Setting::Lr => format!("{} {} must be {must}", w.lr, self.value),
            Setting::Dropout => format!("{} {} must be {must}", w.dropout, self.value),
            Setting::ModelSize => format!("{} (from {})", self.value, w.model),
        }
    }
}

/// `GptConfig::validate`, its message ending with the settings the configuration came from.
pub fn validate_model(c: &GptConfig, w: &Words) -> Result<()> {
    c.validate()
        .map_err(|e| Error::Msg(format!("{e} (from {})", w.model)))
}
