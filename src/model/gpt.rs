//! The GPT forward pass on the tape: token + position embeddings, pre-LN blocks with vanilla or
//! synthesizer attention and a 4× GELU MLP, final LayerNorm, bias-free head, cross-entropy.
//! Shape letters: B batch, T sequence, C width, NH heads, HS head size, V vocabulary.

use super::config::{GptConfig, Variant};
use super::heads::Heads;
use super::params::{self, Param};
use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::{
    cross_entropy, dropout, elementwise as ew, embedding, layernorm, matmul, softmax, synth,
};
use crate::tensor::Tensor;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

pub struct Gpt {
    pub cfg: GptConfig,
    pub params: Vec<Param>,
    index: HashMap<String, usize>,
    pos_ids: RefCell<HashMap<(usize, usize), Tensor>>,
    gpu: Rc<Device>,
}

/// Per-forward state: whether dropout is active and the counter that gives each dropout call
/// its own seed.
pub struct Pass {
    pub train: bool,
    pub seed: u32,
    calls: Cell<u32>,
    /// When set, each attention layer appends its probabilities (B, NH, T, T), after the causal
    /// softmax and before dropout, in layer order (the page draws them).
    capture: Option<RefCell<Vec<Tensor>>>,
}

impl Pass {
    pub fn train(seed: u32) -> Pass {
        Pass {
            train: true,
            seed,
            calls: Cell::new(0),
            capture: None,
        }
    }
    pub fn eval() -> Pass {
        Pass {
            train: false,
            seed: 0,
            calls: Cell::new(0),
            capture: None,
        }
    }
    /// An eval pass that keeps every layer's attention probabilities; see `Pass::attention_maps`.
    pub fn eval_capturing() -> Pass {
        Pass {
            capture: Some(RefCell::new(Vec::new())),
            ..Pass::eval()
        }
    }
    /// The captured attention probabilities, one (B, NH, T, T) tensor per layer (empty unless
    /// made with `eval_capturing`).
    pub fn attention_maps(&self) -> Vec<Tensor> {
        self.capture
            .as_ref()
            .map(|c| c.borrow().clone())
            .unwrap_or_default()
    }
    fn next_seed(&self) -> u32 {
        let c = self.calls.get();
        self.calls.set(c + 1);
        self.seed
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(c.wrapping_mul(0x85EB_CA6B))
            .rotate_left(13)
            ^ c
    }
}

impl Gpt {
    pub fn new(gpu: &Rc<Device>, cfg: GptConfig, seed: u64) -> Result<Gpt> {
        cfg.validate()?;
        let params = params::init(gpu, &cfg, seed)?;
        Ok(Gpt::from_params(gpu, cfg, params))
    }

    pub fn from_params(gpu: &Rc<Device>, cfg: GptConfig, params: Vec<Param>) -> Gpt {
        let index = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect();
        Gpt {
            cfg,
            params,
            index,
            pos_ids: RefCell::new(HashMap::new()),
            gpu: gpu.clone(),
        }
    }

    pub fn param(&self, name: &str) -> Result<&Var> {
        self.index
            .get(name)
            .map(|&i| &self.params[i].var)
            .ok_or_else(|| Error::Msg(format!("model has no parameter named {name}")))
    }

    pub fn num_params(&self) -> usize {
        self.params.iter().map(|p| p.var.value().numel()).sum()
    }

    fn drop(&self, tape: &Tape, x: &Var, p: f32, pass: &Pass) -> Result<Var> {
        if pass.train && p > 0.0 {
            dropout::dropout(tape, x, p, pass.next_seed())
        } else {
            Ok(x.clone())
        }
    }

    fn linear(&self, tape: &Tape, x: &Var, name: &str) -> Result<Var> {
        matmul::linear(
            tape,
            x,
            self.param(&format!("{name}.weight"))?,
            Some(self.param(&format!("{name}.bias"))?),
        )
    }

    fn layernorm(&self, tape: &Tape, x: &Var, name: &str) -> Result<Var> {
        layernorm::layernorm(
            tape,
            x,
            self.param(&format!("{name}.weight"))?,
            self.param(&format!("{name}.bias"))?,
        )
    }

    /// Upload what a forward of shape (B, T) needs, before any work of the step is recorded (an
    /// upload submits the recorded work, which would shift the step's parameter offsets).
    pub fn prepare(&self, b: usize, t: usize) -> Result<()> {
        self.positions(b, t).map(|_| ())
    }

    /// Position ids 0..T repeated B times, kept for reuse (uploading inside a step costs a submit).
    fn positions(&self, b: usize, t: usize) -> Result<Tensor> {
        if let Some(p) = self.pos_ids.borrow().get(&(b, t)) {
            return Ok(p.clone());
        }
        let ids: Vec<u32> = (0..b * t).map(|i| (i % t) as u32).collect();
        let p = Tensor::from_u32(&self.gpu, &[b * t], &ids)?;
        self.pos_ids.borrow_mut().insert((b, t), p.clone());
        Ok(p)
    }

    /// Logits (B·T, V) for token ids `idx` (B·T, u32), and the mean cross-entropy against
    /// `targets` (PAD = 0 ignored) when given.
    pub fn forward(
        &self,
        tape: &Tape,
        idx: &Tensor,
        b: usize,
        t: usize,
        targets: Option<&Tensor>,
        pass: &Pass,
    ) -> Result<(Var, Option<Var>)> {
        let cfg = &self.cfg;
        if t == 0
            || t > cfg.block_size
            || (cfg.variant == Variant::Synthesizer && t > cfg.block_size - 1)
        {
            return Err(Error::Shape(format!(
                "sequence length {t} is outside 1..={} for the {} model",
                cfg.block_size - (cfg.variant == Variant::Synthesizer) as usize,
                cfg.variant.name()
            )));
        }
        if idx.numel() != b * t {
            return Err(crate::error::shape_err(
                "gpt",
                "token ids vs (B, T)",
                idx.shape(),
                &[b, t],
            ));
        }
        let c = cfg.n_embd;
        let tok = embedding::embedding(tape, idx, self.param("tok_emb.weight")?)?;
        let pos_table = self.param("pos_emb")?.reshape(&[cfg.block_size, c])?;
        let pos = embedding::embedding(tape, &self.positions(b, t)?, &pos_table)?;
        let mut x = self.drop(tape, &ew::add(tape, &tok, &pos)?, cfg.embd_pdrop, pass)?; // (B·T, C)
        for l in 0..cfg.n_layer {
            let blk = format!("blocks.{l}");
            let h = self.layernorm(tape, &x, &format!("{blk}.ln1"))?;
            let a = self.attention(tape, &h, b, t, &format!("{blk}.attn"), pass)?;
            x = ew::add(tape, &x, &a)?;
            let h = self.layernorm(tape, &x, &format!("{blk}.ln2"))?;
            let h = ew::gelu(tape, &self.linear(tape, &h, &format!("{blk}.mlp.0"))?)?;
            let h = self.drop(
                tape,
                &self.linear(tape, &h, &format!("{blk}.mlp.2"))?,
                cfg.resid_pdrop,
                pass,
            )?;
            x = ew::add(tape, &x, &h)?;
        }
        let x = self.layernorm(tape, &x, "ln_f")?;
        let logits = matmul::linear(tape, &x, self.param("head.weight")?, None)?; // (B·T, V)
        let loss = match targets {
            Some(y) => Some(cross_entropy::cross_entropy(tape, &logits, y)?),
            None => None,
        };
        Ok((logits, loss))
    }

    /// One attention sub-layer on h (B·T, C); returns (B·T, C) after the output projection.
    fn attention(
        &self,
        tape: &Tape,
        h: &Var,
        b: usize,
        t: usize,
        name: &str,
        pass: &Pass,
    ) -> Result<Var> {
        let cfg = &self.cfg;
        let (c, nh) = (cfg.n_embd, cfg.n_head);
        let heads = Heads { b, t, c, nh };
        let scores = match cfg.variant {
            Variant::Vanilla => {
                let q = self.linear(tape, h, &format!("{name}.query"))?;
                let k = self.linear(tape, h, &format!("{name}.key"))?;
                heads.scores(tape, &q, &k)? // (B, NH, T, T)
            }
            Variant::Synthesizer => {
                let x3 = h.reshape(&[b, t, c])?;
                let w = |n: &str| self.param(&format!("{name}.{n}"));
                synth::synth_scores(
                    tape,
                    &x3,
                    w("w1.weight")?,
                    w("w1.bias")?,
                    w("w2")?,
                    w("b2")?,
                    nh,
                )?
            }
        };
        let att = softmax::causal_softmax(tape, &scores, 1.0)?;
        if let Some(c) = &pass.capture {
            c.borrow_mut().push(att.value().clone());
        }
        let att = self.drop(tape, &att, cfg.attn_pdrop, pass)?;
        let v = self.linear(tape, h, &format!("{name}.value"))?;
        let y = heads.mix(tape, &att, &v)?; // (B·T, C)
        let y = self.linear(tape, &y, &format!("{name}.proj"))?;
        self.drop(tape, &y, cfg.resid_pdrop, pass)
    }
}
