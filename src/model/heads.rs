//! Multi-head attention's two products, shared by the GPT and the ViT: a (B·T, C) activation is read
//! as (B, NH, T, HS) through strided views (no copies), scores are `q·kᵀ/√HS` (B, NH, T, T), and the
//! probabilities mix the values straight back into (B·T, C), heads merged. The products are the
//! attention op's ([`attention::scores`], [`attention::mix`]).

use crate::autograd::{Tape, Var};
use crate::error::Result;
use crate::ops::attention::{self, Dims};

/// The sizes of one attention layer's batch.
#[derive(Clone, Copy, Debug)]
pub struct Heads {
    pub b: usize,
    pub t: usize,
    pub c: usize,
    pub nh: usize,
}

impl Heads {
    /// The attention op's sizes: HS = C / NH.
    pub fn dims(&self) -> Dims {
        Dims {
            b: self.b,
            t: self.t,
            nh: self.nh,
            hs: self.c / self.nh,
        }
    }

    /// `q·kᵀ/√HS` per batch and head: (B, NH, T, T).
    pub fn scores(&self, tape: &Tape, q: &Var, k: &Var) -> Result<Var> {
        attention::scores(tape, q, k, self.dims())
    }

    /// `att·v` per batch and head, written into (B·T, C) with the heads merged.
    pub fn mix(&self, tape: &Tape, att: &Var, v: &Var) -> Result<Var> {
        attention::mix(tape, att, v, self.dims())
    }
}
