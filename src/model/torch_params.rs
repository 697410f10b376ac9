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

mod archive;
mod gpt;

pub use gpt::{config_of, from_bytes, Expected};

use super::pickle::{truncate, TensorRef, Value, Vm};
use crate::error::{Error, Result};
use archive::Archive;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::file_kind::LEGACY_MAGIC;
pub use super::file_kind::{is_torch_file, is_torch_zip, ZIP_MAGIC};

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
    // Byte counts in u64: in wasm32 a usize sum stops at 4 GiB and the message then says so.
    let mut views = 0u64;
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
        views = views.saturating_add((span.1 - span.0) as u64);
        spans.push(span);
    }
    let total = storages
        .values()
        .try_fold(0u64, |a, &n| a.checked_add((n as u64).checked_mul(4)?))
        .unwrap_or(u64::MAX);
    if total > bytes.len() as u64 || total > MAX_STORAGE_BYTES as u64 {
        return Err(msg(format!(
            "{what}: its storages claim {total} bytes, more than {}; the file is corrupted",
            if total > bytes.len() as u64 {
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
