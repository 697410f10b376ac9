//! Multi-head attention's two products, shared by the GPT and the ViT: a (B·T, C) activation is read
//! as (B, NH, T, HS) through strided views (no copies), scores are `q·kᵀ/√HS` (B, NH, T, T), and the
//! probabilities mix the values straight back into (B·T, C), heads merged.

use crate::autograd::{Tape, Var};
use crate::error::Result;
use crate::ops::matmul::{self, Spec, View};

/// The sizes of one attention layer's batch.
#[derive(Clone, Copy, Debug)]
pub struct Heads {
    pub b: usize,
    pub t: usize,
    pub c: usize,
    pub nh: usize,
}

impl Heads {
    fn hs(&self) -> usize {
        self.c / self.nh
    }

    /// (B·T, C) seen as (B, NH, T, HS): batch strides T·C and HS, row C, column 1.
    fn heads(&self) -> View {
        View {
            outer: self.t * self.c,
            inner: self.hs(),
            row: self.c,
            col: 1,
        }
    }

    /// (B, NH, T, T), contiguous.
    fn square(&self) -> View {
        let t = self.t;
        View {
            outer: self.nh * t * t,
            inner: t * t,
            row: t,
            col: 1,
        }
    }

    /// `q·kᵀ/√HS` per batch and head: (B, NH, T, T).
    pub fn scores(&self, tape: &Tape, q: &Var, k: &Var) -> Result<Var> {
        let (b, nh, t, hs) = (self.b, self.nh, self.t, self.hs());
        let s = Spec {
            z: (b, nh),
            m: t,
            n: t,
            k: hs,
            a: self.heads(),
            b: self.heads().t(),
            c: self.square(),
            alpha: 1.0 / (hs as f32).sqrt(),
        };
        matmul::matmul(tape, q, k, None, s, &[b, nh, t, t])
    }

    /// `att·v` per batch and head, written into (B·T, C) with the heads merged.
    pub fn mix(&self, tape: &Tape, att: &Var, v: &Var) -> Result<Var> {
        let s = Spec {
            z: (self.b, self.nh),
            m: self.t,
            n: self.hs(),
            k: self.t,
            a: self.square(),
            b: self.heads(),
            c: self.heads(),
            alpha: 1.0,
        };
        matmul::matmul(tape, att, v, None, s, &[self.b * self.t, self.c])
    }
}
