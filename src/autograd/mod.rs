//! Reverse-mode autograd over tensors: ops append a backward closure to a tape as they run
//! forward; `backward` replays the tape in reverse. The recording order is a topological order, so
//! no sort is needed. Gradients live beside the values and every backward kernel accumulates into
//! them, so a tensor used twice gets the sum of both contributions.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

struct VarInner {
    value: Tensor,
    grad: Rc<RefCell<Option<Tensor>>>,
    requires_grad: bool,
}

/// A tensor on the tape: its value, and its gradient once backward has reached it.
#[derive(Clone)]
pub struct Var(Rc<VarInner>);

impl std::fmt::Debug for Var {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Var({:?}, grad={})", self.0.value, self.0.requires_grad)
    }
}

impl Var {
    /// A leaf: a parameter (`requires_grad = true`) or an input.
    pub fn leaf(value: Tensor, requires_grad: bool) -> Var {
        Var(Rc::new(VarInner {
            value,
            grad: Rc::new(RefCell::new(None)),
            requires_grad,
        }))
    }

    /// The same value and the same gradient buffer under another shape of equal size (no copy,
    /// no tape entry: gradients written through either name land in one buffer).
    pub fn reshape(&self, shape: &[usize]) -> Result<Var> {
        let value = self.0.value.reshape(shape)?;
        Ok(Var(Rc::new(VarInner {
            value,
            grad: self.0.grad.clone(),
            requires_grad: self.0.requires_grad,
        })))
    }

    pub fn value(&self) -> &Tensor {
        &self.0.value
    }

    pub fn shape(&self) -> &[usize] {
        self.0.value.shape()
    }

    pub fn device(&self) -> &Rc<Device> {
        self.0.value.device()
    }

    pub fn requires_grad(&self) -> bool {
        self.0.requires_grad
    }

    /// The gradient accumulated so far, if any reached this variable.
    pub fn grad(&self) -> Option<Tensor> {
        self.0
            .grad
            .borrow()
            .as_ref()
            .and_then(|g| g.reshape(self.shape()).ok())
    }

    /// The gradient buffer, created as zeros the first time: backward kernels accumulate into it.
    pub fn grad_or_zeros(&self) -> Result<Tensor> {
        if let Some(g) = self.grad() {
            return Ok(g);
        }
        let g = Tensor::zeros(self.device(), self.shape())?;
        *self.0.grad.borrow_mut() = Some(g.clone());
        Ok(g)
    }

    /// Accumulate this variable's gradient in `g` from now on (a view into a gradient arena),
    /// which must have the variable's number of elements.
    pub fn set_grad(&self, g: Tensor) -> Result<()> {
        if g.numel() != self.0.value.numel() {
            return Err(crate::error::shape_err(
                "set_grad",
                "the gradient must match the value",
                self.shape(),
                g.shape(),
            ));
        }
        *self.0.grad.borrow_mut() = Some(g);
        Ok(())
    }

    /// Set the gradient to zero (keeping its buffer, so a training loop allocates nothing).
    pub fn zero_grad(&self) -> Result<()> {
        if let Some(g) = self.0.grad.borrow().as_ref() {
            g.fill(0.0)?;
        }
        Ok(())
    }

    /// Free the gradient buffer (a model kept after its run): the next backward makes a new one.
    pub fn drop_grad(&self) {
        *self.0.grad.borrow_mut() = None;
    }

    /// Whether two variables are the same node.
    pub fn same(&self, other: &Var) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

type Backward = Box<dyn FnOnce() -> Result<()>>;

/// The record of one forward pass.
#[derive(Default)]
pub struct Tape {
    nodes: RefCell<Vec<(&'static str, Backward)>>,
    disabled: Cell<u32>,
}

impl Tape {
    pub fn new() -> Tape {
        Tape::default()
    }

    /// Whether ops called now are recorded.
    pub fn enabled(&self) -> bool {
        self.disabled.get() == 0
    }

    /// Run `f` without recording anything (evaluation, sampling).
    pub fn no_grad<R>(&self, f: impl FnOnce() -> R) -> R {
        self.disabled.set(self.disabled.get() + 1);
        let r = f();
        self.disabled.set(self.disabled.get() - 1);
        r
    }

    /// Wrap an op's output: it needs a gradient when recording is on and any input needs one;
    /// then `backward` is kept for the reverse pass.
    pub fn push(
        &self,
        name: &'static str,
        inputs: &[&Var],
        out: Tensor,
        backward: impl FnOnce(&Var) -> Result<()> + 'static,
    ) -> Var {
        let needs = self.enabled() && inputs.iter().any(|v| v.requires_grad());
        let out = Var::leaf(out, needs);
        if needs {
            let o = out.clone();
            self.nodes.borrow_mut().push((
                name,
                Box::new(move || {
                    if o.grad().is_some() {
                        backward(&o)
                    } else {
                        Ok(())
                    }
                }),
            ));
        }
        out
    }

    /// Number of recorded ops.
    pub fn len(&self) -> usize {
        self.nodes.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Back-propagate from a scalar `loss` (its gradient is set to 1) through every recorded op,
    /// newest first, then forget the tape. Gradients add to what the leaves already hold.
    pub fn backward(&self, loss: &Var) -> Result<()> {
        if loss.value().numel() != 1 {
            return Err(Error::Shape(format!(
                "backward needs a scalar loss, got shape {:?}",
                loss.shape()
            )));
        }
        loss.grad_or_zeros()?.fill(1.0)?;
        let nodes = std::mem::take(&mut *self.nodes.borrow_mut());
        for (_, f) in nodes.into_iter().rev() {
            f()?;
        }
        Ok(())
    }

    /// Forget everything recorded (and so free the saved activations).
    pub fn clear(&self) {
        self.nodes.borrow_mut().clear();
    }
}
