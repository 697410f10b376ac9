//! The model's parameters, named and shaped exactly as the assignment's PyTorch `state_dict`, with
//! the reference's initialisation and its name-based weight-decay groups.

use super::config::{GptConfig, Variant};
use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::Result;
use crate::ops::{layernorm, matmul};
use crate::tensor::Tensor;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::rc::Rc;

/// How a parameter starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    Normal(f32),
    Uniform(f32),
    Const(f32),
}

/// One named parameter.
pub struct Param {
    pub name: String,
    pub var: Var,
    /// AdamW weight decay applies (the reference: names without "bias" or "LayerNorm.weight").
    pub decay: bool,
}

/// The names, shapes and initialisations of every parameter, in `state_dict` order.
pub fn layout(cfg: &GptConfig) -> Vec<(String, Vec<usize>, Init)> {
    let (c, v, t) = (cfg.n_embd, cfg.vocab_size, cfg.block_size);
    let w = Init::Normal(0.02);
    let mut out = vec![
        ("tok_emb.weight".to_string(), vec![v, c], w),
        ("pos_emb".to_string(), vec![1, t, c], Init::Const(0.0)),
    ];
    let lin = |out: &mut Vec<(String, Vec<usize>, Init)>, name: String, o: usize, i: usize| {
        out.push((format!("{name}.weight"), vec![o, i], w));
        out.push((format!("{name}.bias"), vec![o], Init::Const(0.0)));
    };
    for l in 0..cfg.n_layer {
        let b = format!("blocks.{l}");
        out.push((format!("{b}.ln1.weight"), vec![c], Init::Const(1.0)));
        out.push((format!("{b}.ln1.bias"), vec![c], Init::Const(0.0)));
        out.push((format!("{b}.ln2.weight"), vec![c], Init::Const(1.0)));
        out.push((format!("{b}.ln2.bias"), vec![c], Init::Const(0.0)));
        match cfg.variant {
            Variant::Vanilla => {
                for n in ["key", "query", "value"] {
                    lin(&mut out, format!("{b}.attn.{n}"), c, c);
                }
            }
            Variant::Synthesizer => {
                lin(&mut out, format!("{b}.attn.w1"), c, c);
                out.push((
                    format!("{b}.attn.w2"),
                    vec![cfg.head_size(), t - 1],
                    Init::Uniform(0.001),
                ));
                out.push((format!("{b}.attn.b2"), vec![t - 1], Init::Const(0.0)));
                lin(&mut out, format!("{b}.attn.value"), c, c);
            }
        }
        lin(&mut out, format!("{b}.attn.proj"), c, c);
        lin(&mut out, format!("{b}.mlp.0"), 4 * c, c);
        lin(&mut out, format!("{b}.mlp.2"), c, 4 * c);
    }
    out.push(("ln_f.weight".to_string(), vec![c], Init::Const(1.0)));
    out.push(("ln_f.bias".to_string(), vec![c], Init::Const(0.0)));
    out.push(("head.weight".to_string(), vec![v, c], w));
    out
}

/// The reference's decay rule: no decay when the name contains "bias" or "LayerNorm.weight".
/// GPT names its LayerNorms ln1/ln2/ln_f, so their weights ARE decayed, as are w2 and b2.
pub fn decays(name: &str) -> bool {
    !(name.contains("bias") || name.contains("LayerNorm.weight"))
}

/// Sample the initial values of one parameter (f64 Box–Muller for the normals).
pub fn init_values(init: Init, n: usize, rng: &mut SmallRng) -> Vec<f32> {
    match init {
        Init::Const(c) => vec![c; n],
        Init::Uniform(a) => (0..n).map(|_| rng.gen_range(-a..a)).collect(),
        Init::Normal(std) => (0..n)
            .map(|_| {
                let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
                let u2: f64 = rng.gen();
                ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos() * std as f64)
                    as f32
            })
            .collect(),
    }
}

/// Create every parameter on the device (GPU or CPU), initialised from `seed`.
pub fn init(dev: &Rc<Device>, cfg: &GptConfig, seed: u64) -> Result<Vec<Param>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    layout(cfg)
        .into_iter()
        .map(|(name, shape, init)| {
            let vals = init_values(init, shape.iter().product(), &mut rng);
            let t = Tensor::from_f32(dev, &shape, &vals)?;
            Ok(Param {
                decay: decays(&name),
                name,
                var: Var::leaf(t, true),
            })
        })
        .collect()
}

/// Total number of parameter elements.
pub fn count(cfg: &GptConfig) -> usize {
    layout(cfg)
        .iter()
        .map(|(_, s, _)| s.iter().product::<usize>())
        .sum()
}

/// A model whose parameters are found by their `state_dict` names, and the two layers its blocks
/// read by name (`{name}.weight`, `{name}.bias`), written once for the GPT, its cached decoder and
/// the ViT.
pub trait Named {
    /// The parameter called `name`, or an error naming it.
    fn param(&self, name: &str) -> Result<&Var>;

    /// `x · {name}.weightᵀ + {name}.bias` (PyTorch's `nn.Linear`).
    fn linear(&self, tape: &Tape, x: &Var, name: &str) -> Result<Var> {
        let w = self.param(&format!("{name}.weight"))?;
        let b = self.param(&format!("{name}.bias"))?;
        matmul::linear(tape, x, w, Some(b))
    }

    /// Layer normalisation of `x`'s rows with `{name}.weight` and `{name}.bias`.
    fn layernorm(&self, tape: &Tape, x: &Var, name: &str) -> Result<Var> {
        let w = self.param(&format!("{name}.weight"))?;
        let b = self.param(&format!("{name}.bias"))?;
        layernorm::layernorm(tape, x, w, b)
    }
}
