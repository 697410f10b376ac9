//! The course's own checkpoints: `.params` files written by `torch.save(model.state_dict(), path)`.
//!
//! Since PyTorch 1.6 such a file is an uncompressed zip archive: `<prefix>/data.pkl` is a pickle
//! (protocol 2) of an `OrderedDict` of name → tensor, each tensor rebuilt by
//! `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)` from a
//! storage named by a persistent id `('storage', torch.FloatStorage, key, location, numel)`, whose
//! raw little-endian values are the entry `<prefix>/data/<key>`.
//!
//! The zip is read with the `zip` crate (stored entries only: torch never compresses). No
//! maintained Rust crate reads torch's pickles (serde-pickle refuses persistent ids; the others are
//! unmaintained or part of a whole ML framework), so a small pickle machine (`pickle.rs`) runs
//! exactly the opcodes `torch.save` emits. It calls nothing: unknown classes become opaque objects
//! that are only named in messages. Every malformed input is an `Error` naming the file; nothing is
//! allocated beyond what the file's own length justifies: each storage is read once, all of them
//! together at most the file's size, and the tensors copied out of them at most twice that.
//!
//! A state_dict carries no configuration, so the GPT's is inferred from the names and shapes
//! (`config_of`): the variant from the attention's parameters, the sizes from `tok_emb` and
//! `pos_emb`, the layers from `blocks.N`. The number of heads is not visible in a vanilla model's
//! shapes and comes from the caller; a synthesizer's is checked against `w2`. The vocabulary is
//! not in the file either: it is rebuilt from the pretraining corpus, and only its size can be
//! checked (`tok_emb.weight`'s rows).

use super::checkpoint;
use super::config::{GptConfig, Variant};
use super::gpt::Gpt;
use super::params::layout;
use super::pickle::{truncate, TensorRef, Value, Vm};
use crate::device::Device;
use crate::error::{Error, Result};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{Cursor, Read};
use std::rc::Rc;

/// The first bytes of a zip archive (and so of every `torch.save` file since PyTorch 1.6).
pub const ZIP_MAGIC: [u8; 4] = *b"PK\x03\x04";

/// The first bytes of a file written by `torch.save` before PyTorch 1.6 (a pickle of its magic
/// number), which is recognised only to say so.
const LEGACY_MAGIC: [u8; 4] = [0x80, 0x02, 0x8a, 0x0a];

/// Whether `bytes` look like a `torch.save` zip rather than a safetensors checkpoint.
pub fn is_torch_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZIP_MAGIC)
}

/// Whether `bytes` come from `torch.save`: a zip, or the pre-1.6 format (which `read_state_dict`
/// refuses with a message saying how to re-save it). A safetensors file starts with its header's
/// length, which never looks like either.
pub fn is_torch_file(bytes: &[u8]) -> bool {
    is_torch_zip(bytes) || bytes.starts_with(&LEGACY_MAGIC)
}

/// One float32 tensor of a state_dict, its values in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct TorchTensor {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

fn msg(m: String) -> Error {
    Error::Msg(m)
}

/// A name from the file as a message shows it: control characters, quotes and backslashes
/// escaped, so a hostile name cannot rewrite the terminal or fake another line.
pub fn escape(s: &str) -> String {
    s.escape_debug().to_string()
}

// ---------------------------------------------------------------------------------------------
// The zip archive.

struct Archive<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// The folder every entry is in (torch names it after the file).
    prefix: String,
    len: usize,
    what: &'a str,
}

impl<'a> Archive<'a> {
    fn open(bytes: &'a [u8], what: &'a str) -> Result<Archive<'a>> {
        if !is_torch_zip(bytes) {
            if bytes.starts_with(&LEGACY_MAGIC) {
                return Err(msg(format!(
                    "{what} is a PyTorch file in the legacy format of PyTorch before 1.6, which this \
                     reader does not take; load it in PyTorch and save it again with torch.save \
                     (a zip archive)"
                )));
            }
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            return Err(msg(format!(
                "{what} is not a PyTorch .params file: torch.save writes a zip archive, starting \
                 with the bytes 50 4b 03 04 (\"PK\"), and this file starts with {}",
                if head.is_empty() {
                    "nothing (it is empty)".to_string()
                } else {
                    head.join(" ")
                }
            )));
        }
        let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            msg(format!(
                "{what} is not a complete zip archive (truncated or corrupted?): {e}; a .params \
                 file from torch.save must be copied whole"
            ))
        })?;
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        let pickles: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_suffix("/data.pkl")
                    .is_some_and(|p| !p.is_empty() && !p.contains('/'))
            })
            .collect();
        let prefix = match pickles.as_slice() {
            [one] => one.trim_end_matches("data.pkl").to_string(),
            [] => {
                let mut shown: Vec<String> = names.iter().take(6).map(|n| escape(n)).collect();
                if names.len() > 6 {
                    shown.push("...".into());
                }
                return Err(msg(format!(
                    "{what} is a zip archive but not one written by torch.save: it has no \
                     <name>/data.pkl (it holds {}); expected the state_dict saved by \
                     torch.save(model.state_dict(), path)",
                    if shown.is_empty() {
                        "nothing".to_string()
                    } else {
                        shown.join(", ")
                    }
                )));
            }
            many => {
                return Err(msg(format!(
                    "{what} holds {} pickles ({}); torch.save writes one <name>/data.pkl",
                    many.len(),
                    many.iter()
                        .map(|s| escape(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        };
        Ok(Archive {
            zip,
            prefix,
            len: bytes.len(),
            what,
        })
    }

    /// The entry `<prefix><name>`, which must hold `expect` bytes when given; `Ok(None)` when the
    /// archive has no such entry.
    fn entry(&mut self, name: &str, expect: Option<usize>) -> Result<Option<Vec<u8>>> {
        let (what, full) = (self.what, escape(&format!("{}{name}", self.prefix)));
        let mut f = match self.zip.by_name(&format!("{}{name}", self.prefix)) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(msg(format!("{what}: cannot read {full}: {e}"))),
        };
        let size = f.size();
        if size > self.len as u64 {
            return Err(msg(format!(
                "{what}: {full} claims {size} bytes, more than the whole file ({} bytes); the \
                 archive is corrupted",
                self.len
            )));
        }
        if let Some(n) = expect {
            if size != n as u64 {
                return Err(msg(format!(
                    "{what}: {full} has {size} bytes but its tensors need {n}; the archive is \
                     corrupted or was not written by torch.save"
                )));
            }
        }
        let mut buf = Vec::with_capacity(size as usize);
        f.read_to_end(&mut buf).map_err(|e| {
            msg(format!(
                "{what}: cannot read {full} (truncated or corrupted?): {e}"
            ))
        })?;
        if buf.len() as u64 != size {
            return Err(msg(format!(
                "{what}: {full} ends after {} of its {size} bytes (truncated?)",
                buf.len()
            )));
        }
        Ok(Some(buf))
    }
}

// ---------------------------------------------------------------------------------------------
// The state_dict.

/// Python's element type name and size for a storage kind.
fn dtype_of(kind: &str) -> (&str, usize) {
    match kind {
        "FloatStorage" => ("float32", 4),
        "DoubleStorage" => ("float64", 8),
        "HalfStorage" => ("float16", 2),
        "BFloat16Storage" => ("bfloat16", 2),
        "LongStorage" => ("int64", 8),
        "IntStorage" => ("int32", 4),
        "ShortStorage" => ("int16", 2),
        "CharStorage" => ("int8", 1),
        "ByteStorage" => ("uint8", 1),
        "BoolStorage" => ("bool", 1),
        other => (other, 0),
    }
}

/// The tensors of a state_dict: the pickle's top value must be a dict of str → tensor.
fn tensors_of(top: Value, what: &str) -> Result<Vec<(String, Rc<TensorRef>)>> {
    let expected = "expected a state_dict (parameter name -> tensor), as \
                    torch.save(model.state_dict(), path) writes";
    let dict = match &top {
        Value::Dict(d) => d.clone(),
        Value::Object(c) => {
            return Err(msg(format!(
                "{what} holds a {} object, not a state_dict: torch.save(model, path) pickles the \
                 whole model; {expected}",
                escape(c)
            )))
        }
        other => {
            return Err(msg(format!(
                "{what} holds {}; {expected}",
                other.describe()
            )))
        }
    };
    let dict = dict.borrow();
    let mut out = vec![];
    for (k, v) in dict.0.iter() {
        let Some(name) = k.str() else {
            return Err(msg(format!(
                "{what} holds a dict with a key that is {}; {expected}",
                k.describe()
            )));
        };
        match v {
            Value::Tensor(t) => out.push((name.to_string(), t.clone())),
            other => {
                // A training checkpoint often wraps the state_dict: point at it.
                let inner = dict.0.iter().find_map(|(k, v)| match (k.str(), v) {
                    (Some(k), Value::Dict(d))
                        if !d.borrow().0.is_empty()
                            && d.borrow()
                                .0
                                .iter()
                                .all(|(_, v)| matches!(v, Value::Tensor(_))) =>
                    {
                        Some(format!(
                            "; its entry '{k}' is a dict of {} tensors, perhaps the model's \
                             state_dict: save that alone, torch.save(checkpoint['{k}'], path)",
                            d.borrow().0.len(),
                            k = escape(k)
                        ))
                    }
                    _ => None,
                });
                return Err(msg(format!(
                    "{what} holds a dict whose entry '{}' is {}, not a tensor; {expected}{}",
                    escape(&truncate(name, 60)),
                    other.describe(),
                    inner.unwrap_or_default()
                )));
            }
        }
    }
    Ok(out)
}

/// The most bytes of storage `read_state_dict` reads from one file: the course's model is 13 MB.
pub const MAX_STORAGE_BYTES: usize = 1 << 30;

/// Check a tensor's header: float32, a possible size, contiguous, inside its storage. Returns the
/// elements of the storage it reads.
fn check_view(name: &str, t: &TensorRef, what: &str) -> Result<(usize, usize)> {
    let name = name.escape_debug();
    let s = &t.storage;
    let (dtype, _) = dtype_of(&s.kind);
    if s.kind != "FloatStorage" {
        return Err(msg(format!(
            "{what}: tensor '{name}' is {dtype} (torch.{}), expected float32; save a float32 \
             model (model.float()) as the course's code does",
            s.kind.escape_debug()
        )));
    }
    let numel = t
        .size
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| {
            msg(format!(
                "{what}: tensor '{name}' has an impossible size {:?}",
                t.size
            ))
        })?;
    // Row-major strides; a dimension of size 1 may have any stride.
    let mut want = 1usize;
    for (&d, &st) in t.size.iter().zip(&t.stride).rev() {
        if d != 1 && st != want && numel != 0 {
            return Err(msg(format!(
                "{what}: tensor '{name}' is not contiguous (size {:?}, stride {:?}); save \
                 contiguous tensors ({{k: v.contiguous() for k, v in sd.items()}}), as \
                 model.state_dict() gives",
                t.size, t.stride
            )));
        }
        want = want.saturating_mul(d);
    }
    let end = t
        .offset
        .checked_add(numel)
        .filter(|&e| e <= s.numel)
        .ok_or_else(|| {
            msg(format!(
                "{what}: tensor '{name}' reads elements {}..{} of a storage of {}; the file is \
                 corrupted",
                t.offset,
                t.offset.saturating_add(numel),
                s.numel
            ))
        })?;
    Ok((t.offset, end))
}

/// Read the state_dict of a `torch.save` file: name → float32 tensor, in the file's order.
/// Tensors must be float32 and contiguous (every tensor of an ordinary model's state_dict is);
/// views into a shared storage at an offset are read as such. `what` names the file in messages.
pub fn read_state_dict(bytes: &[u8], what: &str) -> Result<Vec<(String, TorchTensor)>> {
    let mut ar = Archive::open(bytes, what)?;
    if let Some(order) = ar.entry("byteorder", None)? {
        if order.trim_ascii() != b"little" {
            return Err(msg(format!(
                "{what} was written on a big-endian machine (byteorder '{}'); only little-endian \
                 files are read",
                String::from_utf8_lossy(&order).trim()
            )));
        }
    }
    let pkl_name = escape(&format!("{}data.pkl", ar.prefix));
    let pkl = ar
        .entry("data.pkl", None)?
        .ok_or_else(|| msg(format!("{what}: cannot read {pkl_name}")))?;
    let vm = Vm::new(&pkl, what, &pkl_name);
    let top = vm.run()?;
    let mut tensors = tensors_of(top, what)?;
    // A model wrapped in nn.DataParallel saves every name under "module.".
    if !tensors.is_empty() && tensors.iter().all(|(n, _)| n.starts_with("module.")) {
        for (n, _) in &mut tensors {
            n.drain(..7);
        }
    }
    // First every tensor's header, and the sizes: nothing is read or allocated until the
    // storages together fit in the file and the limit, and the tensors' views in twice that.
    let mut seen = HashSet::new();
    let mut storages: HashMap<&str, usize> = HashMap::new();
    let mut views = 0usize;
    let mut spans = Vec::with_capacity(tensors.len());
    for (name, t) in &tensors {
        if !seen.insert(name.as_str()) {
            return Err(msg(format!(
                "{what} holds the tensor '{}' twice",
                escape(name)
            )));
        }
        let span = check_view(name, t, what)?;
        let s = &t.storage;
        match storages.insert(&s.key, s.numel) {
            Some(n) if n != s.numel => {
                return Err(msg(format!(
                    "{what}: storage {} is used with {n} and with {} elements; the file is \
                     corrupted",
                    s.key.escape_debug(),
                    s.numel
                )))
            }
            _ => {}
        }
        views = views.saturating_add(span.1 - span.0);
        spans.push(span);
    }
    let total = storages
        .values()
        .try_fold(0usize, |a, &n| a.checked_add(n.checked_mul(4)?))
        .unwrap_or(usize::MAX);
    if total > bytes.len() || total > MAX_STORAGE_BYTES {
        return Err(msg(format!(
            "{what}: its storages claim {total} bytes, more than {}; the file is corrupted",
            if total > bytes.len() {
                format!("the whole file ({} bytes)", bytes.len())
            } else {
                format!("the {} MiB this reader takes", MAX_STORAGE_BYTES >> 20)
            }
        )));
    }
    if views.saturating_mul(4) > total.saturating_mul(2) {
        return Err(msg(format!(
            "{what}: its {} tensors view {} bytes of storages that hold {total}; a model's \
             state_dict does not reuse its storages that much, so the file is corrupted or not a \
             state_dict",
            tensors.len(),
            views.saturating_mul(4)
        )));
    }
    // Then each storage once, and each tensor copied out of it.
    let mut read: HashMap<String, Rc<Vec<u8>>> = HashMap::new();
    let mut out = Vec::with_capacity(tensors.len());
    for ((name, t), (start, end)) in tensors.into_iter().zip(spans) {
        let s = &t.storage;
        let data = match read.get(&s.key) {
            Some(d) => d.clone(),
            None => {
                let d = ar
                    .entry(&format!("data/{}", s.key), Some(s.numel * 4))?
                    .ok_or_else(|| {
                        msg(format!(
                            "{what} has no {}data/{} for tensor '{}' (truncated or not written \
                             by torch.save?)",
                            escape(&ar.prefix),
                            s.key.escape_debug(),
                            name.escape_debug()
                        ))
                    })?;
                let d = Rc::new(d);
                read.insert(s.key.clone(), d.clone());
                d
            }
        };
        let values = data[start * 4..end * 4]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        out.push((
            name,
            TorchTensor {
                shape: t.size.clone(),
                values,
            },
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The GPT in it.

/// What the caller knows about the model a file should hold. `Default` expects nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expected<'a> {
    /// The attention variant asked for; `None` takes the file's.
    pub variant: Option<Variant>,
    /// The number of heads. A vanilla model's shapes do not show it: `None` means the
    /// assignment's 8. A synthesizer's is checked against `w2` (`None`: taken from `w2`).
    pub n_head: Option<usize>,
    /// The size of the vocabulary built from the corpus, and the corpus's name for messages.
    pub vocab: Option<(usize, &'a str)>,
}

/// Up to six names (escaped: they come from the file), and how many more.
fn list(names: &[String]) -> String {
    let mut s: Vec<String> = names.iter().take(6).map(|n| escape(n)).collect();
    let more = names.len().saturating_sub(6);
    if more > 0 {
        s.push("...".into());
    }
    format!(
        "{}{}",
        s.join(", "),
        if more > 0 {
            format!(" ({more} more)")
        } else {
            String::new()
        }
    )
}

/// The GPT configuration a state_dict implies, checked against `want` and against every name and
/// shape of `params::layout` (plus the optional causal `mask` buffers). Dropout is the
/// assignment's 0.1; set it on the model's `cfg` to train with another.
pub fn config_of(sd: &[(String, TorchTensor)], want: &Expected, what: &str) -> Result<GptConfig> {
    let by_name: HashMap<&str, &TorchTensor> = sd.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let shape = |n: &str| by_name.get(n).map(|t| t.shape.as_slice());
    let first: Vec<String> = sd.iter().map(|(n, _)| n.clone()).collect();
    let not_gpt = |why: String| {
        msg(format!(
            "{what} is a state_dict but not of the assignment's GPT: {why} (its names: {}); \
             expected tok_emb.weight, pos_emb, blocks.0.ln1.weight, ..., head.weight",
            list(&first)
        ))
    };
    let (vocab_size, n_embd) = match shape("tok_emb.weight") {
        Some(&[v, c]) if v > 0 && c > 0 => (v, c),
        Some(s) => {
            return Err(not_gpt(format!(
                "tok_emb.weight is {s:?}, not (vocab, width)"
            )))
        }
        None => return Err(not_gpt("it has no tok_emb.weight".into())),
    };
    let block_size = match shape("pos_emb") {
        Some(&[1, t, c]) if c == n_embd => t,
        Some(s) => {
            return Err(not_gpt(format!(
                "pos_emb is {s:?}, not (1, block, {n_embd}) as tok_emb.weight's width says"
            )))
        }
        None => return Err(not_gpt("it has no pos_emb".into())),
    };
    let blocks: BTreeSet<usize> = sd
        .iter()
        .filter_map(|(n, _)| n.strip_prefix("blocks.")?.split('.').next()?.parse().ok())
        .collect();
    let n_layer = blocks.len();
    if n_layer == 0 || blocks.last() != Some(&(n_layer - 1)) {
        return Err(not_gpt(format!(
            "its blocks are numbered {:?}, expected 0, 1, ...",
            blocks
        )));
    }
    let vanilla = by_name.contains_key("blocks.0.attn.key.weight");
    let synth = by_name.contains_key("blocks.0.attn.w2");
    let variant =
        match (vanilla, synth) {
            (true, false) => Variant::Vanilla,
            (false, true) => Variant::Synthesizer,
            (true, true) => {
                return Err(not_gpt(
                    "it has both vanilla (attn.key) and synthesizer (attn.w2) attention".into(),
                ))
            }
            (false, false) => return Err(not_gpt(
                "its attention has neither key/query/value (vanilla) nor w1/w2/b2 (synthesizer)"
                    .into(),
            )),
        };
    if let Some(v) = want.variant {
        if v != variant {
            let how = match variant {
                Variant::Vanilla => "attn.key/query/value",
                Variant::Synthesizer => "attn.w1/w2/b2",
            };
            return Err(msg(format!(
                "{what} holds a {} model (its blocks have {how}) but a {} model was asked for; \
                 give the variant it was trained as",
                variant.name(),
                v.name()
            )));
        }
    }
    let n_head = match variant {
        Variant::Vanilla => want.n_head.unwrap_or(8),
        Variant::Synthesizer => {
            let hs = match shape("blocks.0.attn.w2") {
                Some(&[hs, _]) if hs > 0 => hs,
                s => {
                    return Err(not_gpt(format!(
                        "blocks.0.attn.w2 is {s:?}, not (head size, block - 1)"
                    )))
                }
            };
            if n_embd % hs != 0 {
                return Err(msg(format!(
                    "{what}: blocks.0.attn.w2 has {hs} rows (the head size), which does not divide \
                     the width {n_embd}"
                )));
            }
            let h = n_embd / hs;
            if let Some(asked) = want.n_head {
                if asked != h {
                    return Err(msg(format!(
                        "{what} holds a synthesizer model with {h} heads (w2 has {hs} rows = \
                         width {n_embd} / {h}) but {asked} heads were asked for"
                    )));
                }
            }
            h
        }
    };
    let cfg = GptConfig {
        variant,
        vocab_size,
        block_size,
        n_layer,
        n_head,
        n_embd,
        ..GptConfig::assignment(variant, vocab_size)
    };
    cfg.validate()
        .map_err(|e| msg(format!("{what}: the model it holds is not usable: {e}")))?;
    if let Some((v, corpus)) = want.vocab {
        if v != vocab_size {
            return Err(msg(format!(
                "{what} was trained with a vocabulary of {vocab_size} characters (tok_emb.weight \
                 has {vocab_size} rows), but the corpus {corpus} gives {v}; pass the pretraining \
                 corpus it was trained with (the course's wiki.txt): a .params file does not \
                 store the vocabulary"
            )));
        }
    }
    let expected = layout(&cfg);
    let mut known: HashSet<String> = expected.iter().map(|(n, _, _)| n.clone()).collect();
    let masks: Vec<String> = (0..n_layer)
        .map(|l| format!("blocks.{l}.attn.mask"))
        .collect();
    known.extend(masks.iter().cloned());
    let missing: Vec<String> = expected
        .iter()
        .filter(|(n, _, _)| !by_name.contains_key(n.as_str()))
        .map(|(n, _, _)| n.clone())
        .collect();
    let extra: Vec<String> = sd
        .iter()
        .filter(|(n, _)| !known.contains(n))
        .map(|(n, _)| n.clone())
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        let mut parts = vec![];
        if !missing.is_empty() {
            parts.push(format!("it lacks {}", list(&missing)));
        }
        if !extra.is_empty() {
            parts.push(format!("it has {} that the model does not", list(&extra)));
        }
        return Err(msg(format!(
            "{what} does not hold the parameters of a {} GPT ({n_layer} layers, width {n_embd}, \
             block {block_size}): {}",
            variant.name(),
            parts.join("; and ")
        )));
    }
    for (name, want_shape, _) in &expected {
        let have = &by_name[name.as_str()].shape;
        if have != want_shape {
            return Err(msg(format!(
                "{what}: tensor '{name}' has shape {have:?}, expected {want_shape:?} for a {} GPT \
                 with vocab {vocab_size}, block {block_size}, {n_layer} layers, {n_head} heads, \
                 width {n_embd}",
                variant.name()
            )));
        }
    }
    // The causal mask buffers are not parameters; when present they must be the causal mask,
    // which is what the model here always applies.
    let t = block_size;
    for m in &masks {
        if let Some(mask) = by_name.get(m.as_str()) {
            if mask.shape != [1, 1, t, t] {
                return Err(msg(format!(
                    "{what}: buffer '{m}' has shape {:?}, expected [1, 1, {t}, {t}]",
                    mask.shape
                )));
            }
            let causal = mask
                .values
                .iter()
                .enumerate()
                .all(|(i, &v)| v == if i % t <= i / t { 1.0 } else { 0.0 });
            if !causal {
                return Err(msg(format!(
                    "{what}: buffer '{m}' is not the causal (lower-triangular) mask; this model \
                     attends differently and cannot be run here"
                )));
            }
        }
    }
    Ok(cfg)
}

/// Read a `torch.save(model.state_dict())` file into a model on `dev`: the state_dict is read and
/// every check of `config_of` passes before anything is uploaded, so a refused file changes
/// nothing the caller holds.
pub fn from_bytes(dev: &Rc<Device>, bytes: &[u8], want: &Expected, what: &str) -> Result<Gpt> {
    let sd = read_state_dict(bytes, what)?;
    let cfg = config_of(&sd, want, what)?;
    let mut by_name: HashMap<String, TorchTensor> = sd.into_iter().collect();
    checkpoint::build(dev, cfg, what, |name, _| {
        by_name
            .remove(name)
            .map(|t| t.values)
            .ok_or_else(|| msg(format!("{what} has no tensor '{name}'")))
    })
}
