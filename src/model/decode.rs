//! The GPT's incremental forward for greedy decoding, with a key/value cache: the prompt is run
//! once (the prefill), then each call runs one new position per row, attending to the keys and
//! values cached for the earlier positions. Eval mode only (no dropout, no tape).
//!
//! Every row of a `Decoder` is at the same position at every call (the caller decodes prompts of
//! one length together), so a new position attends to all cached positions and needs no mask.
//! Activations are laid out position-major, row `t·R + b` for position t of row b, so the new
//! positions' keys and values are one contiguous block appended to the cache by a copy; the
//! attention products read the cache through strided views as `Heads` does for (B·T, C).
//! The synthesizer's scores depend on the position alone (`relu(x·w1ᵀ + b1)·w2[:, :T] + b2[:T]`),
//! so it caches values only.

use super::config::Variant;
use super::gpt::Gpt;
use super::params::Named;
use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};
use crate::ops::matmul::{self, Spec, View};
use crate::ops::{elementwise as ew, embedding, softmax};
use crate::tensor::Tensor;

/// One layer's cache: (capacity·R, C) position-major; keys are absent for the synthesizer.
struct LayerCache {
    keys: Option<Var>,
    values: Var,
}

/// A key/value cache for `rows` sequences decoded together, up to `capacity` positions.
pub struct Decoder<'a> {
    model: &'a Gpt,
    rows: usize,
    capacity: usize,
    /// Positions already run (cached).
    len: usize,
    layers: Vec<LayerCache>,
}

impl<'a> Decoder<'a> {
    /// An empty cache for `rows` sequences of at most `capacity` positions (at most the model's
    /// context: block_size, synthesizer block_size − 1).
    pub fn new(model: &'a Gpt, rows: usize, capacity: usize) -> Result<Decoder<'a>> {
        let cfg = &model.cfg;
        let most = cfg.max_context();
        if rows == 0 || capacity == 0 || capacity > most {
            return Err(Error::Shape(format!(
                "decoder: {rows} rows of {capacity} positions; need at least one row and 1..={most} positions"
            )));
        }
        let dev = model.param("tok_emb.weight")?.device().clone();
        let shape = [capacity * rows, cfg.n_embd];
        let cache = || -> Result<Var> { Ok(Var::leaf(Tensor::uninit(&dev, &shape)?, false)) };
        let layers = (0..cfg.n_layer)
            .map(|_| {
                Ok(LayerCache {
                    keys: match cfg.variant {
                        Variant::Vanilla => Some(cache()?),
                        Variant::Synthesizer => None,
                    },
                    values: cache()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Decoder {
            model,
            rows,
            capacity,
            len: 0,
            layers,
        })
    }

    /// Positions cached so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Run `ids` at the next positions and cache their keys and values; returns the logits of
    /// the last new position, (R, V). `ids` is position-major: the token of row b at the t-th
    /// new position is `ids[t·R + b]`. Several positions at once only into an empty cache (the
    /// prefill); after that, one position per call.
    pub fn advance(&mut self, ids: &[u32]) -> Result<Tensor> {
        let (cfg, r) = (&self.model.cfg, self.rows);
        let t = ids.len() / r;
        if t == 0 || t * r != ids.len() || (t > 1 && self.len > 0) || self.len + t > self.capacity {
            return Err(Error::Shape(format!(
                "decoder: {} ids for {r} rows at position {} of {}; give R·T ids, T > 1 only into an empty cache",
                ids.len(),
                self.len,
                self.capacity
            )));
        }
        embedding::check_ids(ids, cfg.vocab_size)?;
        let dev = self.model.param("tok_emb.weight")?.device().clone();
        let idx = Tensor::from_u32(&dev, &[t * r], ids)?;
        let pos: Vec<u32> = (0..t * r).map(|i| (self.len + i / r) as u32).collect();
        let pos = Tensor::from_u32(&dev, &[t * r], &pos)?;
        let tape = Tape::new();
        let logits = tape.no_grad(|| self.forward(&tape, &idx, &pos, t))?;
        self.len += t;
        Ok(logits)
    }

    fn forward(&self, tape: &Tape, idx: &Tensor, pos: &Tensor, t: usize) -> Result<Tensor> {
        let (m, cfg, r) = (self.model, &self.model.cfg, self.rows);
        let c = cfg.n_embd;
        let tok = embedding::embedding(tape, idx, m.param("tok_emb.weight")?)?;
        let pos_table = m.param("pos_emb")?.reshape(&[cfg.block_size, c])?;
        let pos = embedding::embedding(tape, pos, &pos_table)?;
        let mut x = ew::add(tape, &tok, &pos)?; // (T·R, C)
        for (l, cache) in self.layers.iter().enumerate() {
            let blk = format!("blocks.{l}");
            let h = self.layernorm(tape, &x, &format!("{blk}.ln1"))?;
            let a = self.attention(tape, &h, t, cache, &format!("{blk}.attn"))?;
            x = ew::add(tape, &x, &a)?;
            let h = self.layernorm(tape, &x, &format!("{blk}.ln2"))?;
            let h = ew::gelu(tape, &self.linear(tape, &h, &format!("{blk}.mlp.0"))?)?;
            let h = self.linear(tape, &h, &format!("{blk}.mlp.2"))?;
            x = ew::add(tape, &x, &h)?;
        }
        // Only the last new position's rows go on to the head (LayerNorm works row by row).
        let last = if t > 1 {
            let rows = Tensor::uninit(x.device(), &[r, c])?;
            rows.copy_from(0, x.value(), (t - 1) * r * c, r * c)?;
            Var::leaf(rows, false)
        } else {
            x
        };
        let x = self.layernorm(tape, &last, "ln_f")?;
        let logits = matmul::linear(tape, &x, m.param("head.weight")?, None)?; // (R, V)
        Ok(logits.value().clone())
    }

    /// One attention sub-layer for T new positions h (T·R, C): appends their keys and values to
    /// `cache`, attends to every cached position (causally among the new ones) and returns
    /// (T·R, C) after the output projection.
    fn attention(
        &self,
        tape: &Tape,
        h: &Var,
        t: usize,
        cache: &LayerCache,
        name: &str,
    ) -> Result<Var> {
        let (cfg, r) = (&self.model.cfg, self.rows);
        let (c, nh) = (cfg.n_embd, cfg.n_head);
        let hs = c / nh;
        let n = self.len + t; // keys attended to
        let append = |cached: &Var, new: &Var| -> Result<()> {
            cached
                .value()
                .copy_from(self.len * r * c, new.value(), 0, t * r * c)
        };
        // Position-major (T·R, C) seen as (R, NH, T, HS).
        let heads = View {
            outer: c,
            inner: hs,
            row: r * c,
            col: 1,
        };
        let square = View {
            outer: nh * t * n,
            inner: t * n,
            row: n,
            col: 1,
        };
        let spec = |b: View, alpha: f32| Spec {
            z: (r, nh),
            m: t,
            n,
            k: hs,
            a: heads,
            b,
            c: square,
            alpha,
        };
        let w = |p: &str| self.model.param(&format!("{name}.{p}"));
        let scores = match &cache.keys {
            Some(keys) => {
                let q = self.linear(tape, h, &format!("{name}.query"))?;
                let k = self.linear(tape, h, &format!("{name}.key"))?;
                append(keys, &k)?;
                let s = spec(heads.t(), 1.0 / (hs as f32).sqrt());
                matmul::matmul(tape, &q, keys, None, s, &[r, nh, t, n])?
            }
            None => {
                let hidden = matmul::linear(tape, h, w("w1.weight")?, Some(w("w1.bias")?))?;
                let a = ew::relu(tape, &hidden)?;
                // w2[:, :n] (HS, L), shared by every row and head, plus b2[:n].
                let w2 = w("w2")?;
                let cols = View {
                    outer: 0,
                    inner: 0,
                    row: *w2.shape().last().unwrap_or(&0),
                    col: 1,
                };
                let s = spec(cols, 1.0);
                matmul::matmul(tape, &a, w2, Some(w("b2")?), s, &[r, nh, t, n])?
            }
        };
        // New positions after the first see every cached one; the prefill is causal.
        let att = if t > 1 {
            softmax::causal_softmax(tape, &scores, 1.0)?
        } else {
            softmax::softmax(tape, &scores, 1.0)?
        };
        let v = self.linear(tape, h, &format!("{name}.value"))?;
        append(&cache.values, &v)?;
        let mix = Spec {
            z: (r, nh),
            m: t,
            n: hs,
            k: n,
            a: square,
            b: heads,
            c: heads,
            alpha: 1.0,
        };
        let y = matmul::matmul(tape, &att, &cache.values, None, mix, &[t * r, c])?;
        self.linear(tape, &y, &format!("{name}.proj"))
    }
}

impl Named for Decoder<'_> {
    fn param(&self, name: &str) -> Result<&Var> {
        self.model.param(name)
    }
}
