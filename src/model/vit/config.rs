//! The Vision Transformer's sizes, its parameter layout and initialisation.

use crate::autograd::Var;
use crate::data::digits::{CLASSES, SIDE};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::model::params::{init_values, Init, Param};
use crate::tensor::Tensor;
use rand::{rngs::SmallRng, SeedableRng};
use std::rc::Rc;

/// Sizes of a ViT over square single-channel images.
#[derive(Clone, Debug, PartialEq)]
pub struct VitConfig {
    /// Image side in pixels (28 for the generated digits).
    pub image: usize,
    /// Patch side in pixels; must divide `image`.
    pub patch: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_embd: usize,
    /// Number of classes (10 digits).
    pub classes: usize,
}

/// Logit rows of the head: class k is logit k + 1. The crate's cross-entropy ignores target 0 (the
/// GPT's PAD), so row 0 is a slot no label ever targets; predictions read rows 1..=classes.
pub fn logit_rows(classes: usize) -> usize {
    classes + 1
}

impl VitConfig {
    /// The CLI's default: 7×7 patches (16 of them), 2 layers, 4 heads, width 64.
    pub fn small() -> VitConfig {
        VitConfig {
            image: SIDE,
            patch: 7,
            n_layer: 2,
            n_head: 4,
            n_embd: 64,
            classes: CLASSES,
        }
    }

    /// Patches per side.
    pub fn grid(&self) -> usize {
        self.image / self.patch
    }
    /// Patches per image.
    pub fn patches(&self) -> usize {
        self.grid() * self.grid()
    }
    /// Sequence length: [CLS] then the patches.
    pub fn tokens(&self) -> usize {
        self.patches() + 1
    }
    /// Pixels per patch.
    pub fn patch_dim(&self) -> usize {
        self.patch * self.patch
    }
    pub fn head_size(&self) -> usize {
        self.n_embd / self.n_head
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Msg(format!("ViT config: {m}")));
        if self.image == 0 || self.image > 1024 {
            return bad(format!("image side {} must be in 1..=1024", self.image));
        }
        if self.patch == 0 || !self.image.is_multiple_of(self.patch) {
            return bad(format!(
                "patch size {} must divide the image side {} (for 28: 1, 2, 4, 7, 14 or 28)",
                self.patch, self.image
            ));
        }
        if self.n_layer == 0 || self.n_layer > 64 {
            return bad(format!("n_layer {} must be in 1..=64", self.n_layer));
        }
        if self.n_embd == 0 || self.n_embd > 4096 {
            return bad(format!("n_embd {} must be in 1..=4096", self.n_embd));
        }
        if self.n_head == 0 || !self.n_embd.is_multiple_of(self.n_head) {
            return bad(format!(
                "n_head {} must divide n_embd {}",
                self.n_head, self.n_embd
            ));
        }
        if self.classes < 2 || self.classes > 1000 {
            return bad(format!("classes {} must be in 2..=1000", self.classes));
        }
        Ok(())
    }
}

/// Every parameter's name, shape and initialisation, in checkpoint order.
///
/// The patch projection has no bias: a bias adds one vector to every patch row, which the learned
/// position embeddings can already hold (`pos_i + b` is as free as `pos_i`), so the model is the
/// homework's. `cls` is (C, 1): it is added to each image's row 0 as a rank-1 product with a column
/// that is 1 on [CLS] rows and 0 on patch rows (whose pixel inputs are in turn 0 on [CLS] rows).
pub fn layout(cfg: &VitConfig) -> Vec<(String, Vec<usize>, Init)> {
    let (c, w) = (cfg.n_embd, Init::Normal(0.02));
    let mut out = vec![
        ("patch.weight".to_string(), vec![c, cfg.patch_dim()], w),
        ("cls".to_string(), vec![c, 1], w),
        ("pos_emb".to_string(), vec![cfg.tokens(), c], w),
    ];
    let lin = |out: &mut Vec<(String, Vec<usize>, Init)>, name: String, o: usize, i: usize| {
        out.push((format!("{name}.weight"), vec![o, i], w));
        out.push((format!("{name}.bias"), vec![o], Init::Const(0.0)));
    };
    for l in 0..cfg.n_layer {
        let b = format!("blocks.{l}");
        for ln in ["ln1", "ln2"] {
            out.push((format!("{b}.{ln}.weight"), vec![c], Init::Const(1.0)));
            out.push((format!("{b}.{ln}.bias"), vec![c], Init::Const(0.0)));
        }
        for n in ["key", "query", "value", "proj"] {
            lin(&mut out, format!("{b}.attn.{n}"), c, c);
        }
        lin(&mut out, format!("{b}.mlp.0"), 4 * c, c);
        lin(&mut out, format!("{b}.mlp.2"), c, 4 * c);
    }
    out.push(("ln_f.weight".to_string(), vec![c], Init::Const(1.0)));
    out.push(("ln_f.bias".to_string(), vec![c], Init::Const(0.0)));
    lin(&mut out, "head".to_string(), logit_rows(cfg.classes), c);
    out
}

/// Weight decay on the matrices of the linear layers only (not biases, LayerNorms, [CLS] or
/// positions).
pub fn decays(name: &str) -> bool {
    name.ends_with(".weight") && !name.contains(".ln") && !name.starts_with("ln_f")
}

/// Create every parameter on `dev`, initialised from `seed`.
pub fn init(dev: &Rc<Device>, cfg: &VitConfig, seed: u64) -> Result<Vec<Param>> {
    cfg.validate()?;
    let mut rng = SmallRng::seed_from_u64(seed);
    layout(cfg)
        .into_iter()
        .map(|(name, shape, init)| {
            let vals = init_values(init, shape.iter().product(), &mut rng);
            Ok(Param {
                decay: decays(&name),
                var: Var::leaf(Tensor::from_f32(dev, &shape, &vals)?, true),
                name,
            })
        })
        .collect()
}

/// Cut row-major images (B, image²) into the model's input rows (B·T, patch²): per image, a zero
/// row for [CLS], then the patches in reading order, each flattened row by row.
pub fn patchify(cfg: &VitConfig, pixels: &[f32], b: usize) -> Result<Vec<f32>> {
    let side = cfg.image;
    if pixels.len() != b * side * side {
        return Err(Error::Shape(format!(
            "patchify: {} pixels are not {b} images of {side}×{side}",
            pixels.len()
        )));
    }
    let (p, g, pd) = (cfg.patch, cfg.grid(), cfg.patch_dim());
    let mut out = vec![0.0f32; b * cfg.tokens() * pd];
    for (i, img) in pixels.chunks(side * side).enumerate() {
        for gy in 0..g {
            for gx in 0..g {
                let row = (i * cfg.tokens() + 1 + gy * g + gx) * pd;
                for y in 0..p {
                    let src = (gy * p + y) * side + gx * p;
                    out[row + y * p..row + y * p + p].copy_from_slice(&img[src..src + p]);
                }
            }
        }
    }
    Ok(out)
}
