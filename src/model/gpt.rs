//! The GPT forward pass on the tape: token + position embeddings, pre-LN blocks with vanilla or
//! synthesizer attention and a 4× GELU MLP, final LayerNorm, bias-free head, cross-entropy.
//! Shape letters: B batch, T sequence, C width, NH heads, HS head size, V vocabulary.

use super::config::{GptConfig, Variant};
use super::heads::Heads;
use super::layout::Layout;
use super::params::{self, Named, Param};
use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::{
    attention, cross_entropy, dropout, elementwise as ew, embedding, gather, matmul, synth,
};
use crate::tensor::Tensor;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

pub struct Gpt {
    pub cfg: GptConfig,
    pub params: Vec<Param>,
    index: HashMap<String, usize>,
    dense: RefCell<HashMap<(usize, usize), Rc<Layout>>>,
    dev: Rc<Device>,
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
    pub fn new(dev: &Rc<Device>, cfg: GptConfig, seed: u64) -> Result<Gpt> {
        cfg.validate()?;
        let params = params::init(dev, &cfg, seed)?;
        Ok(Gpt::from_params(dev, cfg, params))
    }

    pub fn from_params(dev: &Rc<Device>, cfg: GptConfig, params: Vec<Param>) -> Gpt {
        let index = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect();
        Gpt {
            cfg,
            params,
            index,
            dense: RefCell::new(HashMap::new()),
            dev: dev.clone(),
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

    fn drop(&self, tape: &Tape, x: &Var, keys: &Tensor, p: f32, pass: &Pass) -> Result<Var> {
        if pass.train && p > 0.0 {
            dropout::dropout(tape, x, keys, p, pass.next_seed())
        } else {
            Ok(x.clone())
        }
    }

    /// Upload what a forward of shape (B, T) needs, before any work of the step is recorded (an
    /// upload submits the recorded work, which would shift the step's parameter offsets).
    pub fn prepare(&self, b: usize, t: usize) -> Result<()> {
        self.dense_layout(b, t).map(|_| ())
    }

    /// The dense layout of B rows of T positions, kept for reuse (uploading inside a step costs a
    /// submit).
    pub fn dense_layout(&self, b: usize, t: usize) -> Result<Rc<Layout>> {
        if let Some(l) = self.dense.borrow().get(&(b, t)) {
            return Ok(l.clone());
        }
        let c = &self.cfg;
        let l = Rc::new(Layout::dense(&self.dev, b, t, c.n_head, c.block_size)?);
        self.dense.borrow_mut().insert((b, t), l.clone());
        Ok(l)
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
        self.check_length(t)?;
        let layout = self.dense_layout(b, t)?;
        self.forward_layout(tape, idx, &layout, targets, pass)
    }

    fn check_length(&self, t: usize) -> Result<()> {
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
        Ok(())
    }

    /// Logits (N, V) for the N token ids `idx` laid out as `layout` says (dense or packed), and the
    /// mean cross-entropy against `targets` (N; PAD = 0 ignored) when given.
    pub fn forward_layout(
        &self,
        tape: &Tape,
        idx: &Tensor,
        layout: &Layout,
        targets: Option<&Tensor>,
        pass: &Pass,
    ) -> Result<(Var, Option<Var>)> {
        let cfg = &self.cfg;
        self.check_length(layout.t)?;
        if idx.numel() != layout.n {
            return Err(crate::error::shape_err(
                "gpt",
                "token ids vs the layout's tokens",
                idx.shape(),
                &[layout.n],
            ));
        }
        let c = cfg.n_embd;
        let keys = &layout.token_keys;
        let tok = embedding::embedding(tape, idx, self.param("tok_emb.weight")?)?;
        let pos_table = self.param("pos_emb")?.reshape(&[cfg.block_size, c])?;
        let pos = embedding::embedding(tape, &layout.pos, &pos_table)?;
        let mut x = self.drop(
            tape,
            &ew::add(tape, &tok, &pos)?,
            keys,
            cfg.embd_pdrop,
            pass,
        )?; // (N, C)
        for l in 0..cfg.n_layer {
            let blk = format!("blocks.{l}");
            let h = self.layernorm(tape, &x, &format!("{blk}.ln1"))?;
            let a = self.attention(tape, &h, layout, &format!("{blk}.attn"), pass)?;
            x = ew::add(tape, &x, &a)?;
            let h = self.layernorm(tape, &x, &format!("{blk}.ln2"))?;
            let h = ew::gelu(tape, &self.linear(tape, &h, &format!("{blk}.mlp.0"))?)?;
            let h = self.drop(
                tape,
                &self.linear(tape, &h, &format!("{blk}.mlp.2"))?,
                keys,
                cfg.resid_pdrop,
                pass,
            )?;
            x = ew::add(tape, &x, &h)?;
        }
        let x = self.layernorm(tape, &x, "ln_f")?;
        let logits = matmul::linear(tape, &x, self.param("head.weight")?, None)?; // (N, V)
        let loss = match targets {
            Some(y) => Some(cross_entropy::cross_entropy(tape, &logits, y)?),
            None => None,
        };
        Ok((logits, loss))
    }

    /// One attention sub-layer on h (N, C); returns (N, C) after the output projection. A packed
    /// layout's tokens are gathered into each group's per-row blocks (B_g·T_g, C) around the
    /// batched attention, and the groups' outputs gathered back and summed.
    fn attention(
        &self,
        tape: &Tape,
        h: &Var,
        layout: &Layout,
        name: &str,
        pass: &Pass,
    ) -> Result<Var> {
        let cfg = &self.cfg;
        let (c, nh) = (cfg.n_embd, cfg.n_head);
        let lin = |what: &str| self.linear(tape, h, &format!("{name}.{what}"));
        let qk = match cfg.variant {
            Variant::Vanilla => Some((lin("query")?, lin("key")?)),
            Variant::Synthesizer => None,
        };
        // One seed for the layer's attention dropout, whatever the number of groups.
        let seed = (pass.train && cfg.attn_pdrop > 0.0).then(|| pass.next_seed());
        let v = lin("value")?;
        // Attention on blocks of `heads`: `blocks` moves an (N, C) activation there. The vanilla
        // model's is the attention op's (fused on a hardware GPU), unless the page asks for the
        // probabilities; the synthesizer's scores are its own.
        let attend = |heads: Heads, blocks: &dyn Fn(&Var) -> Result<Var>, keys: &Tensor| {
            let d = heads.dims();
            let (p, seed) = (seed.map_or(0.0, |_| cfg.attn_pdrop), seed.unwrap_or(0));
            let scores = match (&qk, &pass.capture) {
                (Some((q, k)), None) => {
                    let (q, k, v) = (blocks(q)?, blocks(k)?, blocks(&v)?);
                    return attention::causal_attention(tape, &q, &k, &v, keys, d, p, seed);
                }
                (Some((q, k)), Some(_)) => attention::scores(tape, &blocks(q)?, &blocks(k)?, d)?,
                (None, _) => {
                    let x3 = blocks(h)?.reshape(&[heads.b, heads.t, c])?;
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
            }; // (B, NH, T, T)
            let (y, probs) = attention::attend(tape, &scores, &blocks(&v)?, d, keys, p, seed)?;
            if let Some(c) = &pass.capture {
                c.borrow_mut().push(probs);
            }
            Ok(y) // (B·T, C)
        };
        let mut y: Option<Var> = None;
        if layout.groups.is_empty() {
            let heads = Heads {
                b: layout.rows,
                t: layout.t,
                c,
                nh,
            };
            y = Some(attend(heads, &|x| Ok(x.clone()), &layout.attn_keys)?);
        }
        for g in &layout.groups {
            let heads = Heads {
                b: g.rows,
                t: g.t,
                c,
                nh,
            };
            let to_blocks = |x: &Var| gather::gather(tape, x, &g.to_blocks, &g.to_tokens);
            let yg = attend(heads, &to_blocks, &g.attn_keys)?;
            let yg = gather::gather(tape, &yg, &g.to_tokens, &g.to_blocks)?; // (N, C)
            y = Some(match y {
                None => yg,
                Some(sum) => ew::add(tape, &sum, &yg)?,
            });
        }
        let y = y.ok_or_else(|| Error::Msg("attention: a packed layout without groups".into()))?;
        let y = self.linear(tape, &y, &format!("{name}.proj"))?;
        self.drop(tape, &y, &layout.token_keys, cfg.resid_pdrop, pass)
    }
}

impl Named for Gpt {
    fn param(&self, name: &str) -> Result<&Var> {
        Gpt::param(self, name)
    }
}
