//! The page's one model registry (wasm32 only): one finished model per attention variant, with
//! the vocabulary it was trained with, for evaluating, asking, finetuning and the demos' E8/E9
//! (`demos.rs`). A run's model arrives through `page_finish`, a file through `page_load_model`,
//! a checkpoint handed to the demos through `demo_set_model`.

use super::engine::{self, Loaded};
use super::js::{err, to_js};
use super::{device, lost_or};
use crate::data::Vocab;
use crate::model::memory::{self, MemoryLimit};
use crate::model::{checkpoint, torch_params, Gpt, Variant};
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Make `loaded` its variant's current model.
pub(crate) fn keep(loaded: Loaded) {
    let name = loaded.model.cfg.variant.name();
    engine::with(|e| e.models.insert(name, loaded));
}

/// Forget the variant's model.
pub(crate) fn forget(v: Variant) {
    engine::with(|e| e.models.remove(v.name()));
}

/// The variants that have a model, sorted.
pub(crate) fn variants() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = engine::with(|e| e.models.keys().copied().collect());
    v.sort();
    v
}

/// The variant's current model and vocabulary, if there is one.
pub(crate) fn current(v: Variant) -> Option<(Rc<Gpt>, Vocab)> {
    engine::with(|e| {
        e.models
            .get(v.name())
            .map(|l| (l.model.clone(), l.vocab.clone()))
    })
}

/// The label of the variant's current model ("trained here", a file name), if there is one.
pub(crate) fn label_of(variant: &str) -> Option<String> {
    engine::with(|e| e.models.get(variant).map(|l| l.label.clone()))
}

/// The model to evaluate or ask: the variant's current model.
pub(crate) fn model_for(variant: &str) -> Result<(Rc<Gpt>, Vocab), JsError> {
    let v = Variant::from_name(variant).map_err(err)?;
    current(v).ok_or_else(|| {
        err(format!(
            "there is no {} model yet; train one (Pretrain or Finetune) or load a checkpoint",
            v.name()
        ))
    })
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
        (model, Vocab::from_itos(&header.vocab, &name).map_err(err)?)
    };
    let loaded = Loaded {
        model: Rc::new(model),
        vocab,
        label: name,
    };
    let out = info(&loaded);
    keep(loaded);
    to_js(&out)
}

/// The variant's current model as a checkpoint file (the CLI's format).
#[wasm_bindgen]
pub async fn page_model_bytes(variant: String) -> Result<Vec<u8>, JsError> {
    let (model, vocab) = model_for(&variant)?;
    checkpoint::to_bytes(&model, &vocab.itos_string())
        .await
        .map_err(|e| err(lost_or(e)))
}

/// `[{variant, ...}]` for every loaded model.
#[wasm_bindgen]
pub fn page_models() -> Result<JsValue, JsError> {
    let list: Vec<ModelInfo> = engine::with(|e| {
        ["vanilla", "synthesizer"]
            .iter()
            .filter_map(|v| e.models.get(v).map(info))
            .collect()
    });
    to_js(&list)
}

/// A copy of the variant's current model to finetune, made through the checkpoint format exactly
/// as the CLI's --reading_params_path reads one, with its vocabulary.
pub(crate) async fn copy_to_finetune(
    dev: &Rc<crate::device::Device>,
    v: Variant,
) -> Result<(Gpt, Vocab), JsError> {
    let (model, vocab) = current(v).ok_or_else(|| {
        err(format!(
            "there is no {} model to finetune; pretrain one, load a checkpoint, or finetune from \
             scratch",
            v.name()
        ))
    })?;
    let bytes = checkpoint::to_bytes(&model, &vocab.itos_string())
        .await
        .map_err(err)?;
    let (copy, _) =
        checkpoint::from_bytes(dev, &bytes, None, "the pretrained model").map_err(err)?;
    Ok((copy, vocab))
}
