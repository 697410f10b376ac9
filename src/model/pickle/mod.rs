//! A small pickle machine for the pickles `torch.save` writes (protocol 2): it runs exactly the
//! opcodes torch emits and calls nothing. Unknown classes become opaque objects that are only
//! named in messages; `torch._utils._rebuild_tensor_v2` becomes a `TensorRef` into a `Storage`
//! named by a persistent id. Every malformed input is an `Error` naming the file and the byte.
//! The state_dict and the GPT in it are `torch_params.rs`'s business. Here: the machine and its
//! opcodes; `value.rs`: the values it builds; `calls.rs`: what a call or a persistent id gives.

mod calls;
mod value;

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use value::Items;

pub(crate) use value::{truncate, TensorRef, Value};

fn msg(m: String) -> Error {
    Error::Msg(m)
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
