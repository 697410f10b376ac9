//! The Train card's form and the library's run setup (wasm32 only): the presets the form fills
//! in and the reading of what the user typed into a run spec, checked by the library's
//! `RunSpec::check` rules. The page's JS keeps no copy of either (web/page/form.js calls these).

use super::engine::Engine;
use super::js::{err, from_js, to_js};
use crate::model::{GptConfig, Variant};
use crate::train::{
    validate_model, Overrides, RunKind, RunSpec, Setting, TrainConfig, Words, MAX_LAYERS,
    MAX_WIDTH, RUN_PY_DECAY_EPOCHS,
};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The form's fields, as messages about their values name them.
pub(super) const WORDS: Words = Words {
    epochs: "epochs",
    batch: "batch size",
    lr: "learning rate",
    max_steps: "max steps (empty for no limit)",
    dropout: "dropout",
    decay_epochs: "learning rate's floor at epoch",
    model: "layers, heads, width or dropout",
};

/// The run the form describes, as `read_form` gives it and `start` takes it (saved runs
/// keep it, so its fields stay as they are).
#[derive(Serialize, Deserialize)]
pub(super) struct StartSpec {
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
    /// Pretrain only: the epoch where the learning rate's cosine reaches its floor (the CLI's
    /// `--lr_decay_epochs`); `None` (and runs saved before the form had the field) run.py's 200.
    #[serde(default)]
    decay_epochs: Option<usize>,
    /// Finetune only: start from the variant's current model (a pretrained one) instead of scratch.
    from_model: bool,
}

impl StartSpec {
    /// The library's spec for this form (not checked).
    fn unchecked(&self) -> Result<RunSpec, JsError> {
        let kind = RunKind::from_name(&self.kind).map_err(err)?;
        Ok(RunSpec {
            kind,
            variant: Variant::from_name(&self.variant).map_err(err)?,
            tiny: false,
            pretrained: kind == RunKind::Finetune && self.from_model,
            overrides: Overrides {
                epochs: Some(self.epochs),
                batch: Some(self.batch),
                lr: Some(self.lr),
                max_steps: self.max_steps,
                n_layer: Some(self.n_layer),
                n_head: Some(self.n_head),
                n_embd: Some(self.n_embd),
                dropout: self.dropout,
                decay_epochs: self.decay_epochs,
            },
            seed: self.seed as u64,
        })
    }

    /// The run the form describes, checked.
    pub(super) fn run_spec(&self) -> Result<RunSpec, JsError> {
        let spec = self.unchecked()?;
        spec.check(&WORDS).map_err(err)?;
        Ok(spec)
    }
}

/// What the user typed into the form, every field as text (`h-<field>` in index.html).
#[derive(Deserialize)]
struct FormText {
    n_layer: String,
    n_head: String,
    n_embd: String,
    dropout: String,
    seed: String,
    epochs: String,
    batch: String,
    lr: String,
    max_steps: String,
    /// Pretrain only (empty for run.py's 200, and for a finetune).
    #[serde(default)]
    decay: String,
}

/// A number typed into a field, or the field's refusal: `whole` asks for a whole number from 0 to
/// u32::MAX (wasm32's usize; the library's rules refuse 0 where it does not fit), so that no value
/// is cut to fit its type.
fn number(raw: &str, whole: bool, refuse: impl Fn() -> String) -> Result<f64, JsError> {
    let whole_ok = |x: f64| x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64;
    match raw.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (!whole || whole_ok(x)) => Ok(x),
        _ => Err(JsError::new(&refuse())),
    }
}

/// Why a width cannot be split into that many heads, with the nearest values that can (each head
/// gets width ÷ heads of the width).
fn heads_apart(width: usize, heads: usize) -> String {
    let below = width / heads * heads;
    let widths = match below {
        0 => format!("{}", below + heads),
        b => format!("{b} or {}", b + heads),
    };
    let fewer = (1..heads)
        .rev()
        .find(|h| width.is_multiple_of(*h))
        .unwrap_or(1);
    format!(
        "width {width} cannot be split into {heads} heads: each head gets width ÷ heads, so the width \
         must be a multiple of the heads; choose width {widths}, or {fewer} heads"
    )
}

/// The middle preset: half the shipped model's depth (web/models/builtin-vanilla.json has 4 layers,
/// 8 heads, width 128; this 2) and the assignment's settings but for three: the pretraining's
/// epochs, its learning rate's floor at the run's end (run.py's cosine floors at 200 epochs' worth
/// and, not clamped, climbs back), and 30 finetuning epochs instead of 10 (the built-in question
/// file has 545 rows to the course's 2,000, so 30 epochs at batch 256 take about the course's 80
/// steps). The page pretrains it on the built-in people's birth notes (`DefaultCorpus::notes`: two
/// short lines a person, 1,599 lines). Its dev accuracy, and why these values: results/middle-preset/.
pub(super) const MIDDLE: (usize, usize, usize) = (2, 8, 128);
pub(super) const MIDDLE_PRE_EPOCHS: usize = 440;
/// Where the middle preset's learning rate reaches its floor, in epochs: its own end.
pub(super) const MIDDLE_PRE_DECAY: usize = MIDDLE_PRE_EPOCHS;
/// The middle preset's finetuning epochs from its pretrained model (run.py's 10 on 2,000 questions).
pub(super) const MIDDLE_FT_EPOCHS: usize = 30;

/// An f32 through its shortest decimal form, so the form shows 0.1 rather than 0.100000001.
fn shortest(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(x as f64)
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

#[wasm_bindgen]
impl Engine {
    /// Read the form into a run spec for `start`, refusing what no run can use with the field's
    /// name and what was typed: the library's rules (`RunSpec::check`, the model's own checks), said
    /// the way a form says them ("dropout is “1”; give a probability of at least 0 and below 1 …").
    /// `kind` is "pretrain" or "finetune"; `from_model` a finetune of the variant's current model.
    pub fn read_form(
        &self,
        kind: String,
        variant: String,
        from_model: bool,
        form: JsValue,
    ) -> Result<JsValue, JsError> {
        let f: FormText = from_js(form, "the training form is incomplete")?;
        let name = |setting: Setting| match setting {
            Setting::Epochs => format!("{kind} epochs"),
            Setting::Batch => format!("{kind} batch"),
            Setting::Lr => format!("{kind} learning rate"),
            Setting::MaxSteps => "max steps".into(),
            Setting::Dropout => "dropout".into(),
            Setting::DecayEpochs => format!("{kind} learning rate's floor at epoch"),
            Setting::ModelSize => "the model size".into(),
        };
        let raw = |setting: Setting| match setting {
            Setting::Epochs => f.epochs.trim(),
            Setting::Batch => f.batch.trim(),
            Setting::Lr => f.lr.trim(),
            Setting::MaxSteps => f.max_steps.trim(),
            Setting::Dropout => f.dropout.trim(),
            Setting::DecayEpochs => f.decay.trim(),
            Setting::ModelSize => "",
        };
        let refuse = |s: Setting| move || s.refuse_field(&name(s), raw(s));
        let setting = |s: Setting, whole: bool| number(raw(s), whole, refuse(s));
        // The model's sizes, refused by field with the range the library takes (`RunSpec::check`
        // says the same of the three together).
        let size = |label: &str, raw: &str, range: &str, max: usize| {
            let said = match raw.trim() {
                "" => format!("{label} is empty"),
                t => format!("{label} is “{t}”"),
            };
            let refuse = || format!("{said}; give a whole number {range}");
            match number(raw, true, refuse)? as usize {
                n if (1..=max).contains(&n) => Ok(n),
                _ => Err(err(refuse())),
            }
        };
        let seed_raw = match f.seed.trim() {
            "" => "0",
            s => s,
        };
        let seed = match seed_raw.parse::<u32>() {
            Ok(s) => s,
            Err(_) => {
                return Err(err(format!(
                    "seed is “{seed_raw}”; give a whole number from 0 to {}",
                    u32::MAX
                )))
            }
        };
        let form = StartSpec {
            kind: kind.clone(),
            variant: variant.clone(),
            n_layer: size(
                "layers",
                &f.n_layer,
                &format!("from 1 to {MAX_LAYERS}"),
                MAX_LAYERS,
            )?,
            n_head: size(
                "heads",
                &f.n_head,
                "of at least 1 that divides the width",
                MAX_WIDTH,
            )?,
            n_embd: size(
                "width",
                &f.n_embd,
                &format!("from 1 to {MAX_WIDTH}"),
                MAX_WIDTH,
            )?,
            epochs: setting(Setting::Epochs, true)? as usize,
            batch: setting(Setting::Batch, true)? as usize,
            lr: setting(Setting::Lr, false)?,
            max_steps: match raw(Setting::MaxSteps) {
                "" => None,
                _ => Some(setting(Setting::MaxSteps, true)? as u64),
            },
            seed,
            dropout: Some(setting(Setting::Dropout, false)?),
            decay_epochs: match raw(Setting::DecayEpochs) {
                "" => None,
                _ => Some(setting(Setting::DecayEpochs, true)? as usize),
            },
            from_model,
        };
        if !form.n_embd.is_multiple_of(form.n_head) {
            return Err(err(heads_apart(form.n_embd, form.n_head)));
        }
        let spec = form.unchecked()?;
        if let Some(r) = spec.refusal() {
            return Err(err(match r.setting {
                Setting::ModelSize => r.in_words(&WORDS),
                s => refuse(s)(),
            }));
        }
        validate_model(&spec.model_config(2), &WORDS).map_err(err)?;
        to_js(&form)
    }

    /// The form's values for a preset: "full" (the assignment's run.py settings; `from_scratch`
    /// picks the finetune's epochs), "middle" (half the shipped model's depth,
    /// [`MIDDLE_PRE_EPOCHS`] pretraining epochs, run on the birth notes by the page) or "quick"
    /// (the tiny model; its epochs, batch and max steps are sized to the device by
    /// web/page/sizing.js, these are the assignment's). Field names as the form's (`h-<field>`);
    /// max steps empty (no limit).
    pub fn preset_form(&self, name: &str, from_scratch: bool) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Form {
            n_layer: usize,
            n_head: usize,
            n_embd: usize,
            dropout: f64,
            seed: u32,
            pre_epochs: usize,
            pre_batch: usize,
            pre_lr: f64,
            /// Where the pretraining's cosine reaches its floor (run.py: 200 epochs' worth).
            pre_decay: usize,
            max_steps: &'static str,
            ft_epochs: usize,
            ft_batch: usize,
            ft_lr: f64,
        }
        let tiny = match name {
            "quick" => true,
            "full" | "middle" => false,
            n => {
                return Err(err(format!(
                    "unknown preset '{n}'; choose quick, middle or full"
                )))
            }
        };
        let spec = |kind, pretrained| RunSpec {
            kind,
            variant: Variant::Vanilla,
            tiny,
            pretrained,
            overrides: Overrides::default(),
            seed: 0,
        };
        let pre = spec(RunKind::Pretrain, false);
        let mut fine = spec(RunKind::Finetune, !from_scratch).preset();
        let mut model = pre.model_config(2);
        let mut pre = pre.preset();
        let mut decay = RUN_PY_DECAY_EPOCHS;
        if name == "middle" {
            (model.n_layer, model.n_head, model.n_embd) = MIDDLE;
            pre.max_epochs = MIDDLE_PRE_EPOCHS;
            decay = MIDDLE_PRE_DECAY;
            if !from_scratch {
                fine.max_epochs = MIDDLE_FT_EPOCHS;
            }
        }
        to_js(&Form {
            n_layer: model.n_layer,
            n_head: model.n_head,
            n_embd: model.n_embd,
            dropout: shortest(model.embd_pdrop),
            seed: 0,
            pre_epochs: pre.max_epochs,
            pre_batch: pre.batch_size,
            pre_lr: pre.learning_rate,
            pre_decay: decay,
            max_steps: "",
            ft_epochs: fine.max_epochs,
            ft_batch: fine.batch_size,
            ft_lr: fine.learning_rate,
        })
    }

    /// The library's configurations (web/page/sizing.js sizes the quick preset from them):
    /// `{pretrain, finetune_scratch, finetune_pretrained: {epochs, batch, lr}, assignment, tiny:
    /// {n_layer, n_head, n_embd}}`.
    pub fn presets(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Presets {
            pretrain: Hyper,
            finetune_scratch: Hyper,
            finetune_pretrained: Hyper,
            assignment: Dims,
            tiny: Dims,
            /// The middle preset's model (half the shipped model's depth).
            middle: Dims,
            /// The assignment's dropout probability (every dropout layer; the CLI's `--dropout`).
            dropout: f64,
        }
        to_js(&Presets {
            pretrain: TrainConfig::pretrain().into(),
            finetune_scratch: TrainConfig::finetune_scratch().into(),
            finetune_pretrained: TrainConfig::finetune_pretrained().into(),
            assignment: GptConfig::assignment(Variant::Vanilla, 2).into(),
            tiny: GptConfig::tiny(Variant::Vanilla, 2).into(),
            middle: Dims {
                n_layer: MIDDLE.0,
                n_head: MIDDLE.1,
                n_embd: MIDDLE.2,
            },
            dropout: shortest(GptConfig::assignment(Variant::Vanilla, 2).embd_pdrop),
        })
    }
}
