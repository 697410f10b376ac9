//! The page's one model registry (wasm32 only): one current finished model per attention variant,
//! with the vocabulary it was trained with, for evaluating, asking, finetuning and the demos' E8/E9
//! (`demos.rs`), and beside it one model of the same variant kept for comparison (pretrained vs
//! not, yours vs the shipped one), which Ask and Evaluate offer too. A run's model arrives through
//! `finish`, a file through `load_model`, a checkpoint handed to the demos through
//! `demo_set_model`; each becomes its variant's current model. Slots are named "vanilla",
//! "synthesizer" (current) and "vanilla:kept", "synthesizer:kept".

use super::engine::{Engine, Loaded};
use super::js::{err, to_js};
use crate::data::Vocab;
use crate::model::memory::{self, MemoryLimit};
use crate::model::{checkpoint, torch_params, Gpt, GptConfig, Variant};
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The slot of a variant's model kept for comparison.
fn kept_slot(v: Variant) -> String {
    format!("{}:kept", v.name())
}

impl Engine {
    /// Make `loaded` its variant's current model.
    pub(crate) fn keep(&self, loaded: Loaded) {
        let name = loaded.model.cfg.variant.name().to_string();
        self.with(|e| e.models.insert(name, loaded));
    }

    /// Forget the variant's current model.
    pub(crate) fn forget(&self, v: Variant) {
        self.with(|e| e.models.remove(v.name()));
    }

    /// The variants that have a current model, sorted.
    pub(crate) fn variants(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.with(|e| {
            [Variant::Vanilla, Variant::Synthesizer]
                .iter()
                .filter(|v| e.models.contains_key(v.name()))
                .map(|v| v.name())
                .collect()
        });
        v.sort();
        v
    }

    /// The variant's current model and vocabulary, if there is one.
    pub(crate) fn current(&self, v: Variant) -> Option<(Rc<Gpt>, Vocab)> {
        self.with(|e| {
            e.models
                .get(v.name())
                .map(|l| (l.model.clone(), l.vocab.clone()))
        })
    }

    /// The label of the variant's current model ("trained here", a file name), if there is one.
    pub(crate) fn label_of(&self, variant: &str) -> Option<String> {
        self.with(|e| e.models.get(variant).map(|l| l.label.clone()))
    }

    /// The model to evaluate or ask: a slot's, "vanilla" (the current vanilla model) or
    /// "vanilla:kept" (the one kept beside it).
    pub(crate) fn model_for(&self, slot: &str) -> Result<(Rc<Gpt>, Vocab), JsError> {
        let (name, kept) = match slot.strip_suffix(":kept") {
            Some(name) => (name, true),
            None => (slot, false),
        };
        let v = Variant::from_name(name).map_err(err)?;
        let found = self.with(|e| {
            e.models
                .get(slot)
                .map(|l| (l.model.clone(), l.vocab.clone()))
        });
        found.ok_or_else(|| {
            err(if kept {
                format!(
                    "no {} model is kept for comparison; press “Keep for comparison” on one in the \
                     Models card",
                    v.name()
                )
            } else {
                format!(
                    "there is no {} model yet; train one (Pretrain or Finetune) or load a checkpoint",
                    v.name()
                )
            })
        })
    }

    /// The variant's current model as checkpoint bytes to finetune (read exactly as the CLI's
    /// --reading_params_path reads a file), with its configuration and vocabulary. The run makes its
    /// device copy from these bytes only after its memory check, which counts the copy's weights in its
    /// estimate: a copy made before it was counted twice, as a loaded model too, and a finetune at the
    /// batch `fit` offered was refused.
    pub(crate) async fn to_finetune(
        &self,
        v: Variant,
    ) -> Result<(Vec<u8>, GptConfig, Vocab), JsError> {
        let (model, vocab) = self.current(v).ok_or_else(|| {
            err(format!(
                "there is no {} model to finetune; pretrain one, load a checkpoint, or finetune from \
                 scratch",
                v.name()
            ))
        })?;
        let bytes = checkpoint::to_bytes(&model, &vocab.itos_string())
            .await
            .map_err(err)?;
        Ok((bytes, model.cfg.clone(), vocab))
    }
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

#[derive(Serialize)]
struct ModelInfo {
    /// Its slot in the registry ("vanilla", "vanilla:kept"), what evaluation and Ask take.
    slot: String,
    /// Whether it is the model kept for comparison, and then whether it is still the very model
    /// that is current (kept, and no new one came yet).
    kept: bool,
    same_as_current: bool,
    variant: &'static str,
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
    params: usize,
    vocab_size: usize,
    label: String,
    /// Whether it reads the built-in corpus (its vocabulary holds all of it): Ask then says when a
    /// name is not one of the built-in people, and the other way round for a model of another text.
    builtin_text: bool,
}

fn info(slot: &str, l: &Loaded, current: Option<&Loaded>, builtin_text: bool) -> ModelInfo {
    let c = &l.model.cfg;
    let kept = slot.ends_with(":kept");
    ModelInfo {
        slot: slot.to_string(),
        kept,
        same_as_current: kept && current.is_some_and(|m| Rc::ptr_eq(&m.model, &l.model)),
        variant: c.variant.name(),
        n_layer: c.n_layer,
        n_head: c.n_head,
        n_embd: c.n_embd,
        params: l.model.num_params(),
        vocab_size: l.vocab.len(),
        label: l.label.clone(),
        builtin_text,
    }
}

#[wasm_bindgen]
impl Engine {
    /// Keep the variant's current model for comparison (replacing the one kept before): it stays in
    /// the registry when a new model of the variant becomes current. Until then the two slots hold the
    /// same model.
    pub fn keep_model(&self, variant: String) -> Result<(), JsError> {
        let v = Variant::from_name(&variant).map_err(err)?;
        let l = self
            .with(|e| {
                e.models.get(v.name()).map(|l| Loaded {
                    model: l.model.clone(),
                    vocab: l.vocab.clone(),
                    label: l.label.clone(),
                })
            })
            .ok_or_else(|| err(format!("there is no {} model to keep", v.name())))?;
        self.with(|e| e.models.insert(kept_slot(v), l));
        Ok(())
    }

    /// Drop the variant's model kept for comparison.
    pub fn forget_kept(&self, variant: String) -> Result<(), JsError> {
        let v = Variant::from_name(&variant).map_err(err)?;
        self.with(|e| e.models.remove(&kept_slot(v)));
        Ok(())
    }

    /// Load a checkpoint (the CLI's safetensors file, or one the page saved) as its variant's current
    /// model. Returns `{variant, n_layer, n_head, n_embd, params, vocab_size, label}`.
    ///
    /// A course `.params` file (`torch.save(model.state_dict())` from run.py) is accepted too: it
    /// holds no vocabulary, so the vocabulary is built from `corpus` (the pretraining text the page
    /// has selected, named `corpus_name` in messages) as run.py builds it, and a vanilla model's head
    /// count (not visible in its shapes) is `n_head` (the form's; `None`: the assignment's 8). A
    /// refused file changes nothing already loaded.
    pub async fn load_model(
        &self,
        bytes: Vec<u8>,
        name: String,
        corpus_name: Option<String>,
        corpus: Option<String>,
        n_head: Option<u32>,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
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
            (model, Vocab::from_itos(&header.vocab, &name).map_err(err)?)
        };
        let loaded = Loaded {
            model: Rc::new(model),
            vocab,
            label: name,
        };
        let builtin = self.reads_builtin(&loaded.vocab);
        let out = info(loaded.model.cfg.variant.name(), &loaded, None, builtin);
        self.keep(loaded);
        to_js(&out)
    }

    /// A slot's model ("vanilla", "vanilla:kept", …) as a checkpoint file (the CLI's format).
    pub async fn model_bytes(&self, slot: String) -> Result<Vec<u8>, JsError> {
        let (model, vocab) = self.model_for(&slot)?;
        checkpoint::to_bytes(&model, &vocab.itos_string())
            .await
            .map_err(|e| self.lost_err(e))
    }

    /// `[{slot, kept, same_as_current, variant, ...}]` for every loaded model: the current ones
    /// (vanilla, synthesizer), then those kept for comparison.
    pub fn models(&self) -> Result<JsValue, JsError> {
        const SLOTS: [&str; 4] = ["vanilla", "synthesizer", "vanilla:kept", "synthesizer:kept"];
        // Whether each model reads the built-in corpus, asked outside the borrow below (it lends
        // the state itself).
        let vocabs: Vec<Option<Vocab>> = self.with(|e| {
            SLOTS
                .iter()
                .map(|slot| e.models.get(*slot).map(|l| l.vocab.clone()))
                .collect()
        });
        let builtin: Vec<bool> = vocabs
            .iter()
            .map(|v| v.as_ref().is_some_and(|v| self.reads_builtin(v)))
            .collect();
        let list: Vec<ModelInfo> = self.with(|e| {
            SLOTS
                .iter()
                .zip(builtin)
                .filter_map(|(slot, b)| {
                    let current = e.models.get(slot.trim_end_matches(":kept"));
                    e.models.get(*slot).map(|l| info(slot, l, current, b))
                })
                .collect()
        });
        to_js(&list)
    }
}
