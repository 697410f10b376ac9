//! The ViT forward pass on the tape: patch embedding as one matmul over flattened patches, [CLS],
//! learned positions, pre-LN encoder blocks whose attention has no mask, the final LayerNorm of the
//! [CLS] row, a linear head and cross-entropy.
//! Shape letters: B images, T = 1 + patches, C width, NH heads, HS head size, P² pixels per patch.

use super::config::{self, VitConfig};
use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::model::heads::Heads;
use crate::model::params::{Named, Param};
use crate::ops::{cross_entropy, elementwise as ew, embedding, matmul, softmax};
use crate::tensor::Tensor;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

pub struct Vit {
    pub cfg: VitConfig,
    pub params: Vec<Param>,
    index: HashMap<String, usize>,
    /// Per batch size: ([CLS] indicator (B·T, 1), position ids (B·T), [CLS] row ids (B)).
    fixed: RefCell<HashMap<usize, (Tensor, Tensor, Tensor)>>,
    dev: Rc<Device>,
}

/// What one forward returns: logits (B, classes + 1), the loss when labels were given, and, when
/// asked for, every layer's attention probabilities (B, NH, T, T) in layer order.
pub struct Output {
    pub logits: Var,
    pub loss: Option<Var>,
    pub attention: Vec<Tensor>,
}

impl Vit {
    pub fn new(dev: &Rc<Device>, cfg: VitConfig, seed: u64) -> Result<Vit> {
        let params = config::init(dev, &cfg, seed)?;
        Ok(Vit::from_params(dev, cfg, params))
    }

    pub fn from_params(dev: &Rc<Device>, cfg: VitConfig, params: Vec<Param>) -> Vit {
        let index = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect();
        Vit {
            cfg,
            params,
            index,
            fixed: RefCell::new(HashMap::new()),
            dev: dev.clone(),
        }
    }

    pub fn device(&self) -> &Rc<Device> {
        &self.dev
    }

    pub fn param(&self, name: &str) -> Result<&Var> {
        self.index
            .get(name)
            .map(|&i| &self.params[i].var)
            .ok_or_else(|| Error::Msg(format!("ViT has no parameter named {name}")))
    }

    pub fn num_params(&self) -> usize {
        self.params.iter().map(|p| p.var.value().numel()).sum()
    }

    /// Upload what a forward of `b` images needs, before any work of a step is recorded (an upload
    /// submits the recorded work).
    pub fn prepare(&self, b: usize) -> Result<(Tensor, Tensor, Tensor)> {
        if let Some(f) = self.fixed.borrow().get(&b) {
            return Ok(f.clone());
        }
        let t = self.cfg.tokens();
        let is_cls: Vec<f32> = (0..b * t).map(|i| (i % t == 0) as u32 as f32).collect();
        let pos: Vec<u32> = (0..b * t).map(|i| (i % t) as u32).collect();
        let cls_rows: Vec<u32> = (0..b).map(|i| (i * t) as u32).collect();
        let f = (
            Tensor::from_f32(&self.dev, &[b * t, 1], &is_cls)?,
            Tensor::from_u32(&self.dev, &[b * t], &pos)?,
            Tensor::from_u32(&self.dev, &[b], &cls_rows)?,
        );
        self.fixed.borrow_mut().insert(b, f.clone());
        Ok(f)
    }

    /// Forward `b` images given as patch rows (B·T, P²) from `config::patchify`; `labels` (B, u32)
    /// hold class + 1 (see `config::logit_rows`). `capture` keeps the attention probabilities.
    pub fn forward(
        &self,
        tape: &Tape,
        patches: &Tensor,
        b: usize,
        labels: Option<&Tensor>,
        capture: bool,
    ) -> Result<Output> {
        let cfg = &self.cfg;
        let t = cfg.tokens();
        if b == 0 || patches.shape() != [b * t, cfg.patch_dim()] {
            return Err(crate::error::shape_err(
                "vit",
                "patch rows vs (B·T, P²)",
                patches.shape(),
                &[b * t, cfg.patch_dim()],
            ));
        }
        let (is_cls, pos, cls_rows) = self.prepare(b)?;
        let patches = Var::leaf(patches.clone(), false);
        let emb = matmul::linear(tape, &patches, self.param("patch.weight")?, None)?;
        let cls = matmul::linear(tape, &Var::leaf(is_cls, false), self.param("cls")?, None)?;
        let pos = embedding::embedding(tape, &pos, self.param("pos_emb")?)?;
        let mut x = ew::add(tape, &ew::add(tape, &emb, &cls)?, &pos)?; // (B·T, C)
        let mut attention = vec![];
        for l in 0..cfg.n_layer {
            let blk = format!("blocks.{l}");
            let h = self.layernorm(tape, &x, &format!("{blk}.ln1"))?;
            let (a, probs) = self.attention(tape, &h, b, &format!("{blk}.attn"))?;
            if capture {
                attention.push(probs);
            }
            x = ew::add(tape, &x, &a)?;
            let h = self.layernorm(tape, &x, &format!("{blk}.ln2"))?;
            let h = ew::gelu(tape, &self.linear(tape, &h, &format!("{blk}.mlp.0"))?)?;
            x = ew::add(tape, &x, &self.linear(tape, &h, &format!("{blk}.mlp.2"))?)?;
        }
        // Only the [CLS] rows are classified; LayerNorm is per row, so gather them first.
        let cls_out = embedding::embedding(tape, &cls_rows, &x)?; // (B, C)
        let cls_out = self.layernorm(tape, &cls_out, "ln_f")?;
        let logits = self.linear(tape, &cls_out, "head")?; // (B, classes + 1)
        let loss = match labels {
            Some(y) => Some(cross_entropy::cross_entropy(tape, &logits, y)?),
            None => None,
        };
        Ok(Output {
            logits,
            loss,
            attention,
        })
    }

    /// One attention sub-layer on h (B·T, C), every token seeing every token; returns the output
    /// (B·T, C) after the projection and the probabilities (B, NH, T, T).
    fn attention(&self, tape: &Tape, h: &Var, b: usize, name: &str) -> Result<(Var, Tensor)> {
        let cfg = &self.cfg;
        let heads = Heads {
            b,
            t: cfg.tokens(),
            c: cfg.n_embd,
            nh: cfg.n_head,
        };
        let q = self.linear(tape, h, &format!("{name}.query"))?;
        let k = self.linear(tape, h, &format!("{name}.key"))?;
        let v = self.linear(tape, h, &format!("{name}.value"))?;
        let scores = heads.scores(tape, &q, &k)?; // (B, NH, T, T)
        let att = softmax::softmax(tape, &scores, 1.0)?; // no mask: every token sees every token
        let y = heads.mix(tape, &att, &v)?; // (B·T, C)
        let probs = att.value().clone();
        Ok((self.linear(tape, &y, &format!("{name}.proj"))?, probs))
    }
}

impl Named for Vit {
    fn param(&self, name: &str) -> Result<&Var> {
        Vit::param(self, name)
    }
}
