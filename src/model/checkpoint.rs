//! Checkpoints as safetensors files with the tensor names and shapes of the assignment's PyTorch
//! `state_dict` (the attention `mask` buffers included, so `load_state_dict` takes them as they are),
//! and the config and vocabulary in the header metadata.

use super::config::{GptConfig, Variant};
use super::gpt::Gpt;
use super::params::{decays, layout, Param};
use crate::autograd::Var;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::HashMap;
use std::rc::Rc;

use super::file_kind::{self, GPT_FORMAT as FORMAT};

fn metadata(cfg: &GptConfig, vocab: &str) -> HashMap<String, String> {
    let mut m = HashMap::new();
    m.insert("format".into(), FORMAT.into());
    m.insert("variant".into(), cfg.variant.name().into());
    for (k, v) in [
        ("vocab_size", cfg.vocab_size),
        ("block_size", cfg.block_size),
        ("n_layer", cfg.n_layer),
        ("n_head", cfg.n_head),
        ("n_embd", cfg.n_embd),
    ] {
        m.insert(k.into(), v.to_string());
    }
    m.insert("vocab".into(), vocab.into());
    m
}

/// Serialise the model's parameters (read back from the device, GPU or CPU) and `vocab` (the itos characters in
/// order, as one string) into safetensors bytes.
pub async fn to_bytes(model: &Gpt, vocab: &str) -> Result<Vec<u8>> {
    to_bytes_with(model, vocab, vec![], vec![]).await
}

/// A named f32 tensor stored beside the model's (the trainer's optimizer moments).
pub type Extra = (String, Vec<usize>, Vec<f32>);

/// `to_bytes` plus extra tensors and metadata entries. Readers of plain checkpoints (this crate,
/// and PyTorch through `load_state_dict` after dropping the extras) see the same model.
pub async fn to_bytes_with(
    model: &Gpt,
    vocab: &str,
    extra: Vec<Extra>,
    extra_meta: Vec<(String, String)>,
) -> Result<Vec<u8>> {
    serialize(model, vocab, extra, extra_meta, Dtype::F32).await
}

/// `to_bytes` with the model's tensors stored as f16 (IEEE half, round to nearest): half the file,
/// for shipping a model to the page. Readers widen them back to f32 (`from_bytes`). Whether the
/// rounding changes a prediction is for the caller to check (`attnlab evaluate` on both files).
pub async fn to_bytes_f16(model: &Gpt, vocab: &str) -> Result<Vec<u8>> {
    serialize(model, vocab, vec![], vec![], Dtype::F16).await
}

/// The bytes of `vals` as `dtype` (F32 or F16).
fn encode(vals: &[f32], dtype: Dtype) -> Vec<u8> {
    match dtype {
        Dtype::F16 => vals
            .iter()
            .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
            .collect(),
        _ => bytemuck::cast_slice(vals).to_vec(),
    }
}

async fn serialize(
    model: &Gpt,
    vocab: &str,
    extra: Vec<Extra>,
    extra_meta: Vec<(String, String)>,
    dtype: Dtype,
) -> Result<Vec<u8>> {
    let mut blobs: Vec<(String, Vec<usize>, Vec<u8>)> = vec![];
    for p in &model.params {
        let v = p.var.value().to_vec_f32().await?;
        if dtype == Dtype::F16 {
            if let Some(x) = v.iter().find(|x| x.abs() > f32::from(half::f16::MAX)) {
                return Err(Error::Msg(format!(
                    "tensor '{}' holds {x}, beyond f16's range (±65504): keep this checkpoint f32",
                    p.name
                )));
            }
        }
        blobs.push((p.name.clone(), p.var.shape().to_vec(), encode(&v, dtype)));
    }
    let t = model.cfg.block_size;
    let tril: Vec<f32> = (0..t * t)
        .map(|i| if i % t <= i / t { 1.0 } else { 0.0 })
        .collect();
    for l in 0..model.cfg.n_layer {
        blobs.push((
            format!("blocks.{l}.attn.mask"),
            vec![1, 1, t, t],
            encode(&tril, dtype),
        ));
    }
    // The model's tensors (as `dtype`), then the trainer's extras (AdamW moments), which stay f32
    // and are viewed in place: a copy of them would hold the moments twice while the file is built.
    let model_views = blobs
        .iter()
        .map(|(n, s, b)| TensorView::new(dtype, s.clone(), b).map(|v| (n.clone(), v)));
    let extra_views = extra.iter().map(|(n, s, vals)| {
        TensorView::new(Dtype::F32, s.clone(), bytemuck::cast_slice(vals)).map(|v| (n.clone(), v))
    });
    let views = model_views
        .chain(extra_views)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Msg(format!("could not build the checkpoint: {e}")))?;
    let mut meta = metadata(&model.cfg, vocab);
    meta.extend(extra_meta);
    safetensors::tensor::serialize(views, Some(meta.into_iter().collect()))
        .map_err(|e| Error::Msg(format!("could not write the checkpoint: {e}")))
}

/// The header metadata of checkpoint bytes (empty when there is none).
pub fn metadata_of(bytes: &[u8], what: &str) -> Result<HashMap<String, String>> {
    let (_, meta) = SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::Msg(file_kind::unreadable(what, bytes, e)))?;
    Ok(meta
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default())
}

/// The variant, sizes and vocabulary a checkpoint says it holds, without reading its tensors.
pub fn header_of(bytes: &[u8], what: &str) -> Result<Header> {
    let meta = metadata_of(bytes, what)?;
    read_header(&(!meta.is_empty()).then_some(meta), what)
}

/// The extra tensors of a checkpoint (the trainer's AdamW moments), read from one parse of its
/// header: parsing it once per tensor made resuming in the page block the main thread for 200 ms.
pub struct Extras<'a> {
    st: SafeTensors<'a>,
    what: String,
}

impl<'a> Extras<'a> {
    /// Parse the checkpoint's header once.
    pub fn open(bytes: &'a [u8], what: &str) -> Result<Extras<'a>> {
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::Msg(file_kind::unreadable(what, bytes, e)))?;
        Ok(Extras {
            st,
            what: what.to_string(),
        })
    }

    /// An f32 tensor of `len` finite elements, by name.
    pub fn get(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        let what = &self.what;
        let t = self
            .st
            .tensor(name)
            .map_err(|_| Error::Msg(format!("{what} has no tensor '{name}'")))?;
        if t.dtype() != Dtype::F32 || t.data().len() != 4 * len {
            return Err(Error::Msg(format!(
                "{what}: tensor '{name}' is {:?} {:?}, expected {len} f32 values",
                t.dtype(),
                t.shape()
            )));
        }
        let vals: Vec<f32> = bytemuck::pod_collect_to_vec(t.data());
        if let Some(i) = vals.iter().position(|v| !v.is_finite()) {
            return Err(Error::Msg(format!(
                "{what}: tensor '{name}' holds a non-finite value ({}) at element {i}",
                vals[i]
            )));
        }
        Ok(vals)
    }
}

/// What a checkpoint says about itself.
pub struct Header {
    pub cfg: GptConfig,
    pub vocab: String,
}

fn read_header(st_meta: &Option<HashMap<String, String>>, what: &str) -> Result<Header> {
    let bad = |m: String| Error::Msg(format!("{what}: {m}"));
    let meta = st_meta
        .as_ref()
        .ok_or_else(|| bad("no metadata; not a checkpoint written by attnlab".into()))?;
    let get = |k: &str| {
        meta.get(k)
            .ok_or_else(|| bad(format!("metadata has no '{k}'")))
    };
    if get("format")? != FORMAT {
        return Err(Error::Msg(file_kind::other_format(
            what,
            get("format")?,
            FORMAT,
        )));
    }
    let variant = match get("variant")?.as_str() {
        "vanilla" => Variant::Vanilla,
        "synthesizer" => Variant::Synthesizer,
        v => return Err(bad(format!("unknown variant '{}'", v.escape_debug()))),
    };
    let num = |k: &str| -> Result<usize> {
        get(k)?
            .parse()
            .map_err(|_| bad(format!("'{k}' is not a number")))
    };
    let cfg = GptConfig {
        variant,
        vocab_size: num("vocab_size")?,
        block_size: num("block_size")?,
        n_layer: num("n_layer")?,
        n_head: num("n_head")?,
        n_embd: num("n_embd")?,
        ..GptConfig::assignment(variant, 0)
    };
    cfg.validate().map_err(|e| bad(e.to_string()))?;
    Ok(Header {
        cfg,
        vocab: get("vocab")?.clone(),
    })
}

/// Read a checkpoint. When `expect` is given, a checkpoint of another variant or size is refused
/// with a message saying what it is and what was expected. `what` names the file in messages.
pub fn from_bytes(
    dev: &Rc<Device>,
    bytes: &[u8],
    expect: Option<&GptConfig>,
    what: &str,
) -> Result<(Gpt, Header)> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| Error::Msg(file_kind::unreadable(what, bytes, e)))?;
    let (_, meta) =
        SafeTensors::read_metadata(bytes).map_err(|e| Error::Msg(format!("{what}: {e}")))?;
    let meta: Option<HashMap<String, String>> = meta
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    let header = read_header(&meta, what)?;
    if let Some(want) = expect {
        let c = &header.cfg;
        if (
            c.variant,
            c.vocab_size,
            c.block_size,
            c.n_layer,
            c.n_head,
            c.n_embd,
        ) != (
            want.variant,
            want.vocab_size,
            want.block_size,
            want.n_layer,
            want.n_head,
            want.n_embd,
        ) {
            return Err(Error::Msg(format!(
                "{what} holds a {} model (vocab {}, block {}, {} layers, {} heads, width {}) but a \
                 {} model (vocab {}, block {}, {} layers, {} heads, width {}) was expected",
                c.variant.name(), c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd,
                want.variant.name(), want.vocab_size, want.block_size, want.n_layer, want.n_head, want.n_embd
            )));
        }
    }
    let mut cfg = header.cfg.clone();
    if let Some(want) = expect {
        cfg = want.clone();
    }
    let model = build(dev, cfg, what, |name, shape| {
        let t = st
            .tensor(name)
            .map_err(|_| Error::Msg(format!("{what} has no tensor '{name}'")))?;
        if !matches!(t.dtype(), Dtype::F32 | Dtype::F16) || t.shape() != shape {
            return Err(Error::Msg(format!(
                "{what}: tensor '{name}' is {:?} {:?}, expected F32 (or F16) {shape:?}",
                t.dtype(),
                t.shape()
            )));
        }
        Ok(match t.dtype() {
            Dtype::F16 => t
                .data()
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            _ => bytemuck::pod_collect_to_vec(t.data()),
        })
    })?;
    Ok((model, header))
}

/// A model of `cfg` whose every parameter (`params::layout` order) comes from `fetch(name, shape)`,
/// which returns the values after checking the name and shape exist in its source. Non-finite
/// values are refused. Shared by the safetensors reader above and `torch_params`.
pub(crate) fn build(
    dev: &Rc<Device>,
    cfg: GptConfig,
    what: &str,
    mut fetch: impl FnMut(&str, &[usize]) -> Result<Vec<f32>>,
) -> Result<Gpt> {
    let mut params = vec![];
    for (name, shape, _) in layout(&cfg) {
        let vals = fetch(&name, &shape)?;
        if let Some(i) = vals.iter().position(|v| !v.is_finite()) {
            return Err(Error::Msg(format!(
                "{what}: tensor '{name}' holds a non-finite value ({}) at \
                 element {i}; the checkpoint is unusable",
                vals[i]
            )));
        }
        let value = Tensor::from_f32(dev, &shape, &vals)?;
        params.push(Param {
            decay: decays(&name),
            name,
            var: Var::leaf(value, true),
        });
    }
    Ok(Gpt::from_params(dev, cfg, params))
}
