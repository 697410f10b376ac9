//! The Python values a state_dict's pickle builds: the few kinds a state_dict needs, containers
//! that drop without recursion, and torch's storages and tensor views.

use std::cell::RefCell;
use std::rc::Rc;

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

    pub(super) fn usize(&self) -> Option<usize> {
        match self {
            Value::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }

    pub(super) fn usizes(&self) -> Option<Vec<usize>> {
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
