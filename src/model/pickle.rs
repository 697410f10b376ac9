//! A small pickle machine for the pickles `torch.save` writes (protocol 2): it runs exactly the
//! opcodes torch emits and calls nothing. Unknown classes become opaque objects that are only
//! named in messages; `torch._utils._rebuild_tensor_v2` becomes a `TensorRef` into a `Storage`
//! named by a persistent id. Every malformed input is an `Error` naming the file and the byte.
//! The state_dict and the GPT in it are `torch_params.rs`'s business.

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

fn msg(m: String) -> Error {
    Error::Msg(m)
}

/// A storage named by a persistent id: its element type (`FloatStorage`, ...), its entry key and
/// its length in elements.
#[derive(Debug)]
pub(crate) struct Storage {
    pub kind: String,
    pub key: String,
    pub numel: usize,
}

#[derive(Debug)]
pub(crate) struct TensorRef {
    pub storage: Rc<Storage>,
    pub offset: usize,
    pub size: Vec<usize>,
    pub stride: Vec<usize>,
}

/// The items of a tuple or list, and the entries of a dict. Both drop their contents without
/// recursion (`unnest`): a hostile pickle can nest a million tuples in a megabyte (one TUPLE1
/// each), and dropping them recursively would overflow the stack.
#[derive(Default)]
pub(crate) struct Items(pub Vec<Value>);

#[derive(Default)]
pub(crate) struct Pairs(pub Vec<(Value, Value)>);

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
pub(crate) enum Value {
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
    pub fn describe(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(b) => format!("a bool ({})", if *b { "True" } else { "False" }),
            Value::Int(i) => format!("an int ({i})"),
            Value::Float(f) => format!("a float ({f})"),
            Value::Str(s) => format!("a str ({:?})", truncate(s, 40)),
            Value::Tuple(t) => format!("a tuple of {}", t.0.len()),
            Value::List(l) => format!("a list of {}", l.borrow().0.len()),
            Value::Dict(d) => format!("a dict of {} entries", d.borrow().0.len()),
            Value::Global(g) => format!("the class or function {}", g.escape_debug()),
            Value::Object(c) => format!("a {} object", c.escape_debug()),
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

    pub fn str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

pub(crate) fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

pub(crate) struct Vm<'a> {
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
    /// A machine for the pickle `data`, the entry `entry` of the file `what` (both for messages).
    pub fn new(data: &'a [u8], what: &'a str, entry: &'a str) -> Vm<'a> {
        Vm {
            data,
            pos: 0,
            stack: vec![],
            marks: vec![],
            memo: HashMap::new(),
            what,
            entry,
        }
    }

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
            return Err(self.err(format!(
                "{} is called with {}",
                name.escape_debug(),
                args.describe()
            )));
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
                    _ => {
                        return Err(
                            self.err(format!("{} is not given a tensor", name.escape_debug()))
                        )
                    }
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

    pub fn run(mut self) -> Result<Value> {
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
