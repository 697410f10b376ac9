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
//! unmaintained or part of a whole ML framework), so a small pickle machine here runs exactly the
//! opcodes `torch.save` emits. It calls nothing: unknown classes become opaque objects that are
//! only named in messages. Every malformed input is an `Error` naming the file; nothing is
//! allocated beyond what the file's own length justifies.
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
use crate::device::Device;
use crate::error::{Error, Result};
use std::cell::RefCell;
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
                let mut shown: Vec<&str> = names.iter().take(6).map(String::as_str).collect();
                if names.len() > 6 {
                    shown.push("...");
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
                        .map(|s| s.as_str())
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
        let (what, full) = (self.what, format!("{}{name}", self.prefix));
        let mut f = match self.zip.by_name(&full) {
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
// The pickle machine.

/// A storage named by a persistent id: its element type (`FloatStorage`, ...), its entry key and
/// its length in elements.
#[derive(Debug)]
struct Storage {
    kind: String,
    key: String,
    numel: usize,
}

#[derive(Debug)]
struct TensorRef {
    storage: Rc<Storage>,
    offset: usize,
    size: Vec<usize>,
    stride: Vec<usize>,
}

/// The items of a tuple or list, and the entries of a dict. Both drop their contents without
/// recursion (`unnest`): a hostile pickle can nest a million tuples in a megabyte (one TUPLE1
/// each), and dropping them recursively would overflow the stack.
#[derive(Default)]
struct Items(Vec<Value>);

#[derive(Default)]
struct Pairs(Vec<(Value, Value)>);

impl Drop for Items {
    fn drop(&mut self) {
        unnest(std::mem::take(&mut self.0));
    }
}

impl Drop for Pairs {
    fn drop(&mut self) {
        unnest(self.0.drain(..).flat_map(|(k, v)| [k, v]).collect());
    }
}

/// Drop `pending` depth-first with an explicit stack: the contents of every container that is
/// dropped for good move onto the stack, so no drop goes deeper than one level.
fn unnest(mut pending: Vec<Value>) {
    while let Some(v) = pending.pop() {
        match v {
            Value::Tuple(rc) => {
                if let Some(mut items) = Rc::into_inner(rc) {
                    pending.append(&mut items.0);
                }
            }
            Value::List(rc) => {
                if let Some(cell) = Rc::into_inner(rc) {
                    pending.append(&mut cell.into_inner().0);
                }
            }
            Value::Dict(rc) => {
                if let Some(cell) = Rc::into_inner(rc) {
                    let mut pairs = cell.into_inner();
                    pending.extend(pairs.0.drain(..).flat_map(|(k, v)| [k, v]));
                }
            }
            _ => {}
        }
    }
}

/// A Python value, as far as a state_dict needs. Lists and dicts are shared and mutable as in
/// Python (the memo and the stack may hold the same one).
#[derive(Clone)]
enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<Items>),
    List(Rc<RefCell<Items>>),
    Dict(Rc<RefCell<Pairs>>),
    /// A class or function named by GLOBAL ("module.name"); never called.
    Global(Rc<str>),
    /// What calling or instantiating an unknown global gave: only its class name is kept.
    Object(Rc<str>),
    Storage(Rc<Storage>),
    Tensor(Rc<TensorRef>),
}

impl Value {
    /// What it is, for messages ("an int", "a parity.GPT object").
    fn describe(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(b) => format!("a bool ({})", if *b { "True" } else { "False" }),
            Value::Int(i) => format!("an int ({i})"),
            Value::Float(f) => format!("a float ({f})"),
            Value::Str(s) => format!("a str ({:?})", truncate(s, 40)),
            Value::Tuple(t) => format!("a tuple of {}", t.0.len()),
            Value::List(l) => format!("a list of {}", l.borrow().0.len()),
            Value::Dict(d) => format!("a dict of {} entries", d.borrow().0.len()),
            Value::Global(g) => format!("the class or function {g}"),
            Value::Object(c) => format!("a {c} object"),
            Value::Storage(_) => "a bare storage".into(),
            Value::Tensor(_) => "a tensor".into(),
        }
    }

    fn usize(&self) -> Option<usize> {
        match self {
            Value::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }

    fn usizes(&self) -> Option<Vec<usize>> {
        match self {
            Value::Tuple(t) => t.0.iter().map(Value::usize).collect(),
            _ => None,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

struct Vm<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<Value>,
    /// Stack lengths at each MARK.
    marks: Vec<usize>,
    memo: HashMap<u32, Value>,
    what: &'a str,
    entry: &'a str,
}

impl<'a> Vm<'a> {
    fn err(&self, m: impl std::fmt::Display) -> Error {
        msg(format!(
            "{}: {} is not a pickle of a state_dict this reader understands: {m} (at byte {})",
            self.what, self.entry, self.pos
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.err("it ends in the middle of an instruction (truncated?)"))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn le<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn len_u32(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.le()?) as usize)
    }

    fn string(&mut self, n: usize) -> Result<Value> {
        let b = self.take(n)?;
        let s = std::str::from_utf8(b).map_err(|_| self.err("a string is not UTF-8"))?;
        Ok(Value::Str(s.into()))
    }

    /// A GLOBAL operand: one line of at most 256 bytes.
    fn line(&mut self) -> Result<String> {
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .take(257)
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.err("a GLOBAL name is unterminated or too long"))?;
        let s = std::str::from_utf8(&rest[..n])
            .map_err(|_| self.err("a GLOBAL name is not UTF-8"))?
            .to_string();
        self.pos += n + 1;
        Ok(s)
    }

    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn pop(&mut self) -> Result<Value> {
        if self.stack.len() > self.floor() {
            if let Some(v) = self.stack.pop() {
                return Ok(v);
            }
        }
        Err(self.err("an instruction takes a value from an empty stack"))
    }

    fn pop_mark(&mut self) -> Result<Vec<Value>> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.err("an instruction needs a MARK that is not there"))?;
        Ok(self.stack.split_off(m))
    }

    fn top(&self) -> Result<&Value> {
        self.stack
            .get(self.floor()..)
            .and_then(|above_mark| above_mark.last())
            .ok_or_else(|| self.err("an instruction needs a value on an empty stack"))
    }

    fn push_items(&mut self, items: Vec<Value>) -> Result<()> {
        match self.top()?.clone() {
            Value::List(l) => l.borrow_mut().0.extend(items),
            Value::Object(_) => {} // a list subclass we do not model: its items are not needed
            other => return Err(self.err(format!("APPEND to {}", other.describe()))),
        }
        Ok(())
    }

    fn set_items(&mut self, items: Vec<Value>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err("SETITEMS with an odd number of values"));
        }
        let mut it = items.into_iter();
        let pairs: Vec<(Value, Value)> =
            std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect();
        match self.top()?.clone() {
            Value::Dict(d) => d.borrow_mut().0.extend(pairs),
            Value::Object(_) => {} // a dict subclass we do not model
            other => return Err(self.err(format!("SETITEM on {}", other.describe()))),
        }
        Ok(())
    }

    fn memo_put(&mut self, i: u32) -> Result<()> {
        let v = self.top()?.clone();
        self.memo.insert(i, v);
        Ok(())
    }

    fn memo_get(&mut self, i: u32) -> Result<()> {
        let v = self.memo.get(&i).cloned().ok_or_else(|| {
            self.err(format!(
                "it refers to memo entry {i}, which was never stored"
            ))
        })?;
        self.stack.push(v);
        Ok(())
    }

    /// REDUCE: the few callables a state_dict uses; anything else gives an opaque object.
    fn call(&self, f: Value, args: Value) -> Result<Value> {
        let Value::Global(name) = f else {
            return Err(self.err(format!("it calls {}", f.describe())));
        };
        let Value::Tuple(args) = args else {
            return Err(self.err(format!("{name} is called with {}", args.describe())));
        };
        Ok(match &*name {
            "collections.OrderedDict" | "builtins.dict" | "__builtin__.dict"
                if args.0.is_empty() =>
            {
                Value::Dict(Rc::default())
            }
            "torch._utils._rebuild_tensor_v2" | "torch._utils._rebuild_tensor" => {
                self.tensor(&args.0)?
            }
            "torch._utils._rebuild_parameter" | "torch._utils._rebuild_parameter_with_state" => {
                match args.0.first() {
                    Some(t @ Value::Tensor(_)) => t.clone(),
                    _ => return Err(self.err(format!("{name} is not given a tensor"))),
                }
            }
            _ => Value::Object(name),
        })
    }

    /// `_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[,
    /// metadata])`; only the first four matter.
    fn tensor(&self, args: &[Value]) -> Result<Value> {
        let bad =
            || self.err("_rebuild_tensor_v2 is not given (storage, offset, size, stride, ...)");
        if !(4..=7).contains(&args.len()) {
            return Err(bad());
        }
        let Value::Storage(storage) = &args[0] else {
            return Err(bad());
        };
        let offset = args[1].usize().ok_or_else(bad)?;
        let size = args[2].usizes().ok_or_else(bad)?;
        let stride = args[3].usizes().ok_or_else(bad)?;
        if size.len() != stride.len() {
            return Err(bad());
        }
        Ok(Value::Tensor(Rc::new(TensorRef {
            storage: storage.clone(),
            offset,
            size,
            stride,
        })))
    }

    /// BINPERSID: `('storage', torch.<Kind>Storage, key, location, numel)`.
    fn persistent(&self, pid: Value) -> Result<Value> {
        let bad = |what: String| {
            self.err(format!(
                "a persistent id is {what}, expected ('storage', type, key, location, numel)"
            ))
        };
        let Value::Tuple(t) = &pid else {
            return Err(bad(pid.describe()));
        };
        match &t.0[..] {
            [tag, Value::Global(kind), key, _location, numel] if tag.str() == Some("storage") => {
                let key = key
                    .str()
                    .ok_or_else(|| bad("a tuple whose key is not a str".into()))?;
                let numel = numel
                    .usize()
                    .ok_or_else(|| bad("a tuple whose numel is not a count".into()))?;
                Ok(Value::Storage(Rc::new(Storage {
                    kind: kind.strip_prefix("torch.").unwrap_or(kind).to_string(),
                    key: key.to_string(),
                    numel,
                })))
            }
            _ => Err(bad(format!("{} of other items", pid.describe()))),
        }
    }

    fn run(mut self) -> Result<Value> {
        loop {
            let op = self.byte()?;
            match op {
                0x80 => {
                    let v = self.byte()?;
                    if v > 5 {
                        return Err(self.err(format!("pickle protocol {v} is unknown")));
                    }
                }
                0x95 => {
                    self.take(8)?; // FRAME: a length hint
                }
                b'.' => return self.pop(),
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'N' => self.stack.push(Value::None),
                0x88 => self.stack.push(Value::Bool(true)),
                0x89 => self.stack.push(Value::Bool(false)),
                b'J' => {
                    let v = i32::from_le_bytes(self.le()?);
                    self.stack.push(Value::Int(v as i64));
                }
                b'K' => {
                    let v = self.byte()?;
                    self.stack.push(Value::Int(v as i64));
                }
                b'M' => {
                    let v = u16::from_le_bytes(self.le()?);
                    self.stack.push(Value::Int(v as i64));
                }
                0x8a => {
                    // LONG1: a little-endian two's-complement integer of n bytes.
                    let n = self.byte()? as usize;
                    if n > 8 {
                        return Err(self.err(format!("an integer of {n} bytes is too large")));
                    }
                    let b = self.take(n)?;
                    let mut a = if b.last().is_some_and(|&x| x & 0x80 != 0) {
                        [0xffu8; 8]
                    } else {
                        [0u8; 8]
                    };
                    a[..n].copy_from_slice(b);
                    self.stack.push(Value::Int(i64::from_le_bytes(a)));
                }
                b'G' => {
                    let v = f64::from_be_bytes(self.le()?);
                    self.stack.push(Value::Float(v));
                }
                b'X' => {
                    let n = self.len_u32()?;
                    let v = self.string(n)?;
                    self.stack.push(v);
                }
                0x8c => {
                    let n = self.byte()? as usize;
                    let v = self.string(n)?;
                    self.stack.push(v);
                }
                0x8d => {
                    let n = u64::from_le_bytes(self.le()?);
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    let v = self.string(n)?;
                    self.stack.push(v);
                }
                b')' => self.stack.push(Value::Tuple(Rc::default())),
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::Tuple(Rc::new(Items(items))));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    let mut items = vec![];
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    self.stack.push(Value::Tuple(Rc::new(Items(items))));
                }
                b']' => self.stack.push(Value::List(Rc::default())),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.stack
                        .push(Value::List(Rc::new(RefCell::new(Items(items)))));
                }
                b'a' => {
                    let v = self.pop()?;
                    self.push_items(vec![v])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    self.push_items(items)?;
                }
                b'}' => self.stack.push(Value::Dict(Rc::default())),
                b'd' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::Dict(Rc::default()));
                    self.set_items(items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.set_items(vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    self.set_items(items)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.stack
                        .push(Value::Global(format!("{module}.{name}").into()));
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    match (module.str(), name.str()) {
                        (Some(m), Some(n)) => {
                            self.stack.push(Value::Global(format!("{m}.{n}").into()))
                        }
                        _ => return Err(self.err("STACK_GLOBAL is not given two strings")),
                    }
                }
                b'R' => {
                    let args = self.pop()?;
                    let f = self.pop()?;
                    let v = self.call(f, args)?;
                    self.stack.push(v);
                }
                0x81 => {
                    let _args = self.pop()?;
                    let cls = self.pop()?;
                    let Value::Global(name) = cls else {
                        return Err(self.err(format!("NEWOBJ of {}", cls.describe())));
                    };
                    self.stack.push(Value::Object(name));
                }
                b'b' => {
                    // BUILD sets attributes (a state_dict's `_metadata`, a module's __dict__):
                    // none of them is needed.
                    self.pop()?;
                    self.top()?;
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let v = self.persistent(pid)?;
                    self.stack.push(v);
                }
                b'q' => {
                    let i = self.byte()? as u32;
                    self.memo_put(i)?;
                }
                b'r' => {
                    let i = u32::from_le_bytes(self.le()?);
                    self.memo_put(i)?;
                }
                0x94 => {
                    let i = self.memo.len() as u32;
                    self.memo_put(i)?;
                }
                b'h' => {
                    let i = self.byte()? as u32;
                    self.memo_get(i)?;
                }
                b'j' => {
                    let i = u32::from_le_bytes(self.le()?);
                    self.memo_get(i)?;
                }
                _ => {
                    self.pos -= 1;
                    return Err(self.err(format!(
                        "opcode 0x{op:02x} ({:?}) is not one torch.save writes",
                        op as char
                    )));
                }
            }
        }
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
                "{what} holds a {c} object, not a state_dict: torch.save(model, path) pickles the \
                 whole model; {expected}"
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
                            d.borrow().0.len()
                        ))
                    }
                    _ => None,
                });
                return Err(msg(format!(
                    "{what} holds a dict whose entry '{}' is {}, not a tensor; {expected}{}",
                    truncate(name, 60),
                    other.describe(),
                    inner.unwrap_or_default()
                )));
            }
        }
    }
    Ok(out)
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
    let pkl_name = format!("{}data.pkl", ar.prefix);
    let pkl = ar
        .entry("data.pkl", None)?
        .ok_or_else(|| msg(format!("{what}: cannot read {pkl_name}")))?;
    let vm = Vm {
        data: &pkl,
        pos: 0,
        stack: vec![],
        marks: vec![],
        memo: HashMap::new(),
        what,
        entry: &pkl_name,
    };
    let top = vm.run()?;
    let mut tensors = tensors_of(top, what)?;
    // A model wrapped in nn.DataParallel saves every name under "module.".
    if !tensors.is_empty() && tensors.iter().all(|(n, _)| n.starts_with("module.")) {
        for (n, _) in &mut tensors {
            n.drain(..7);
        }
    }
    let mut seen = HashSet::new();
    let mut storages: HashMap<String, Rc<Vec<u8>>> = HashMap::new();
    let mut out = vec![];
    for (name, t) in tensors {
        if !seen.insert(name.clone()) {
            return Err(msg(format!("{what} holds the tensor '{name}' twice")));
        }
        let s = &t.storage;
        let (dtype, elem) = dtype_of(&s.kind);
        if s.kind != "FloatStorage" {
            return Err(msg(format!(
                "{what}: tensor '{name}' is {dtype} (torch.{}), expected float32; save a float32 \
                 model (model.float()) as the course's code does",
                s.kind
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
        let data = match storages.get(&s.key) {
            Some(d) => d.clone(),
            None => {
                let bytes_needed = s
                    .numel
                    .checked_mul(elem)
                    .filter(|&n| n <= bytes.len())
                    .ok_or_else(|| {
                        msg(format!(
                            "{what}: storage {} claims {} elements, more than the file holds",
                            s.key, s.numel
                        ))
                    })?;
                let d = ar
                    .entry(&format!("data/{}", s.key), Some(bytes_needed))?
                    .ok_or_else(|| {
                        msg(format!(
                            "{what} has no {}data/{} for tensor '{name}' (truncated or not \
                             written by torch.save?)",
                            ar.prefix, s.key
                        ))
                    })?;
                let d = Rc::new(d);
                storages.insert(s.key.clone(), d.clone());
                d
            }
        };
        if data.len() != s.numel * elem {
            return Err(msg(format!(
                "{what}: storage {} is used with {} and with {} elements",
                s.key,
                data.len() / elem,
                s.numel
            )));
        }
        let values = data[t.offset * 4..end * 4]
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

fn list(names: &[String]) -> String {
    let mut s: Vec<&str> = names.iter().take(6).map(String::as_str).collect();
    let more = names.len().saturating_sub(6);
    if more > 0 {
        s.push("...");
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

/// Read a `torch.save(model.state_dict())` file into a model on `gpu`: the state_dict is read and
/// every check of `config_of` passes before anything is uploaded, so a refused file changes
/// nothing the caller holds.
pub fn from_bytes(gpu: &Rc<Device>, bytes: &[u8], want: &Expected, what: &str) -> Result<Gpt> {
    let sd = read_state_dict(bytes, what)?;
    let cfg = config_of(&sd, want, what)?;
    let mut by_name: HashMap<String, TorchTensor> = sd.into_iter().collect();
    checkpoint::build(gpu, cfg, what, |name, _| {
        by_name
            .remove(name)
            .map(|t| t.values)
            .ok_or_else(|| msg(format!("{what} has no tensor '{name}'")))
    })
}
