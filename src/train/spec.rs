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
    /// The settings a model configuration comes from (its sizes and dropout), named when the
    /// configuration does not hold.
    pub model: &'static str,
}

/// The most layers and the widest model a run accepts (far beyond the assignment's 4 × 256; the
/// memory estimate refuses what does not fit long before).
pub const MAX_LAYERS: usize = 64;
pub const MAX_WIDTH: usize = 4096;

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
        let o = &self.overrides;
        let bad = |m: String| Err(Error::Msg(m));
        if o.epochs == Some(0) || o.batch == Some(0) {
            return bad(format!("{} and {} must be at least 1", w.epochs, w.batch));
        }
        if o.max_steps == Some(0) {
            return bad(format!("{} must be at least 1", w.max_steps));
        }
        if let Some(lr) = o.lr {
            if !(lr.is_finite() && lr > 0.0) {
                return bad(format!("{} {lr} must be a positive number", w.lr));
            }
        }
        if let Some(p) = o.dropout {
            if !(p.is_finite() && (0.0..1.0).contains(&p)) {
                return bad(format!(
                    "{} {p} must be at least 0 and below 1 (0 turns dropout off; the assignment \
                     uses 0.1)",
                    w.dropout
                ));
            }
        }
        let c = self.model_config(2);
        if c.n_layer == 0
            || c.n_layer > MAX_LAYERS
            || c.n_embd == 0
            || c.n_embd > MAX_WIDTH
            || c.n_head == 0
        {
            return bad(format!(
                "model size {} layers × width {} with {} heads is out of range (1–{MAX_LAYERS} \
                 layers, width 1–{MAX_WIDTH}, at least one head) (from {})",
                c.n_layer, c.n_embd, c.n_head, w.model
            ));
        }
        Ok(())
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
    /// run.py counts the pretraining corpus also when finetuning).
    pub fn train_config(&self, corpus_docs: usize) -> TrainConfig {
        let o = &self.overrides;
        let mut tc = self.preset().with_corpus_docs(corpus_docs);
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

/// `GptConfig::validate`, its message ending with the settings the configuration came from.
pub fn validate_model(c: &GptConfig, w: &Words) -> Result<()> {
    c.validate()
        .map_err(|e| Error::Msg(format!("{e} (from {})", w.model)))
}
