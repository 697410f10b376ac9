//! What the machine builds when a pickle calls a global (REDUCE) or names a persistent id
//! (BINPERSID): empty dicts, torch's tensors and storages; any other callable gives an opaque
//! object, and nothing is ever called.

use super::value::{Storage, TensorRef, Value};
use super::Vm;
use crate::error::Result;
use std::rc::Rc;

impl Vm<'_> {
    /// REDUCE: the few callables a state_dict uses; anything else gives an opaque object.
    pub(super) fn call(&self, f: Value, args: Value) -> Result<Value> {
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
    pub(super) fn persistent(&self, pid: Value) -> Result<Value> {
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
}
