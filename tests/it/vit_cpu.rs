//! The whole ViT on both backends against an independent f64 reference written with plain loops
//! at a tiny size (8×8 images, 4×4 patches, 2 layers, 2 heads, width 8, 3 classes): logits, loss
//! and every layer's attention probabilities, and every parameter's gradient against central
//! differences of the f64 loss. The reference follows the homework's definition: patches flattened
//! row by row and projected, [CLS] prepended, learned positions added, pre-LN blocks whose attention
//! has no mask, a 4× GELU MLP, LayerNorm of the [CLS] row, a linear head, cross-entropy. It shares
//! only GELU's erf with the crate.

use attnlab::autograd::Tape;
use attnlab::model::vit::{Vit, VitConfig};
use attnlab::ops::elementwise::gelu_ref;
use attnlab::{Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::collections::HashMap;
use std::rc::Rc;

use crate::f64_ref;

use f64_ref::{layernorm, linear};

type Params = HashMap<String, Vec<f64>>;

const B: usize = 3;

fn cfg() -> VitConfig {
    VitConfig {
        image: 8,
        patch: 4,
        n_layer: 2,
        n_head: 2,
        n_embd: 8,
        classes: 3,
    }
}

/// Logits (B, classes + 1), mean loss against digit labels (target = label + 1), attention maps.
fn forward_ref(
    p: &Params,
    cfg: &VitConfig,
    img: &[f64],
    labels: &[u8],
) -> (Vec<f64>, f64, Vec<Vec<f64>>) {
    let (c, nh, ps, side) = (cfg.n_embd, cfg.n_head, cfg.patch, cfg.image);
    let (g, hs) = (side / ps, c / nh);
    let t = g * g + 1;
    let b = labels.len();
    // Embeddings: [CLS] + pos 0, then W·patch + pos i.
    let mut x = vec![0.0; b * t * c];
    for n in 0..b {
        for tok in 0..t {
            let row = &mut x[(n * t + tok) * c..(n * t + tok + 1) * c];
            for j in 0..c {
                row[j] = p["pos_emb"][tok * c + j];
            }
            if tok == 0 {
                for j in 0..c {
                    row[j] += p["cls"][j];
                }
                continue;
            }
            let (gy, gx) = ((tok - 1) / g, (tok - 1) % g);
            for j in 0..c {
                for yy in 0..ps {
                    for xx in 0..ps {
                        let pix = img[n * side * side + (gy * ps + yy) * side + gx * ps + xx];
                        row[j] += p["patch.weight"][j * ps * ps + yy * ps + xx] * pix;
                    }
                }
            }
        }
    }
    let mut maps = vec![];
    for l in 0..cfg.n_layer {
        let n = |s: &str| format!("blocks.{l}.{s}");
        let w = |s: &str| &p[&n(s)][..];
        let h = layernorm(&x, w("ln1.weight"), w("ln1.bias"), c);
        let q = linear(&h, w("attn.query.weight"), Some(w("attn.query.bias")), c, c);
        let k = linear(&h, w("attn.key.weight"), Some(w("attn.key.bias")), c, c);
        let v = linear(&h, w("attn.value.weight"), Some(w("attn.value.bias")), c, c);
        let mut y = vec![0.0; b * t * c];
        let mut probs = vec![0.0; b * nh * t * t];
        for bi in 0..b {
            for hd in 0..nh {
                for i in 0..t {
                    let s: Vec<f64> = (0..t)
                        .map(|j| {
                            (0..hs)
                                .map(|d| {
                                    q[(bi * t + i) * c + hd * hs + d]
                                        * k[(bi * t + j) * c + hd * hs + d]
                                })
                                .sum::<f64>()
                                / (hs as f64).sqrt()
                        })
                        .collect();
                    let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
                    let z: f64 = e.iter().sum();
                    for j in 0..t {
                        let pij = e[j] / z;
                        probs[((bi * nh + hd) * t + i) * t + j] = pij;
                        for d in 0..hs {
                            y[(bi * t + i) * c + hd * hs + d] +=
                                pij * v[(bi * t + j) * c + hd * hs + d];
                        }
                    }
                }
            }
        }
        maps.push(probs);
        let a = linear(&y, w("attn.proj.weight"), Some(w("attn.proj.bias")), c, c);
        x.iter_mut().zip(&a).for_each(|(x, a)| *x += a);
        let h = layernorm(&x, w("ln2.weight"), w("ln2.bias"), c);
        let m = gelu_ref(&linear(
            &h,
            w("mlp.0.weight"),
            Some(w("mlp.0.bias")),
            c,
            4 * c,
        ));
        let m = linear(&m, w("mlp.2.weight"), Some(w("mlp.2.bias")), 4 * c, c);
        x.iter_mut().zip(&m).for_each(|(x, a)| *x += a);
    }
    let cls: Vec<f64> = (0..b)
        .flat_map(|n| x[n * t * c..n * t * c + c].to_vec())
        .collect();
    let h = layernorm(&cls, &p["ln_f.weight"], &p["ln_f.bias"], c);
    let k = cfg.classes + 1;
    let logits = linear(&h, &p["head.weight"], Some(&p["head.bias"]), c, k);
    let mut loss = 0.0;
    for (n, &d) in labels.iter().enumerate() {
        let row = &logits[n * k..(n + 1) * k];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + row.iter().map(|z| (z - m).exp()).sum::<f64>().ln();
        loss += lse - row[d as usize + 1];
    }
    (logits, loss / b as f64, maps)
}

fn check(dev: Rc<Device>) {
    let kind = dev.kind();
    let cfg = cfg();
    let model = Vit::new(&dev, cfg.clone(), 3).expect("model");
    let mut rng = SmallRng::seed_from_u64(11);
    let mut p = Params::new();
    for prm in &model.params {
        let f: Vec<f32> = (0..prm.var.value().numel())
            .map(|_| rng.gen_range(-1.0f32..1.0))
            .collect();
        prm.var.value().write_f32(&f).expect("write");
        p.insert(prm.name.clone(), f.iter().map(|&v| v as f64).collect());
    }
    let img32: Vec<f32> = (0..B * 64).map(|_| rng.gen_range(0.0f32..1.0)).collect();
    let img: Vec<f64> = img32.iter().map(|&v| v as f64).collect();
    let labels = [2u8, 0, 1];
    let (want_logits, want_loss, want_maps) = forward_ref(&p, &cfg, &img, &labels);

    let rows = attnlab::model::vit::patchify(&cfg, &img32, B).expect("patchify");
    let x = Tensor::from_f32(&dev, &[B * cfg.tokens(), cfg.patch_dim()], &rows).expect("x");
    let targets = attnlab::model::vit::train::targets(&cfg, &labels).expect("targets");
    let y = Tensor::from_u32(&dev, &[B], &targets).expect("y");
    let tape = Tape::new();
    let out = model
        .forward(&tape, &x, B, Some(&y), true)
        .expect("forward");
    let loss = out.loss.expect("loss");
    tape.backward(&loss).expect("backward");

    let close = |what: &str, got: &[f32], want: &[f64], tol: f64| {
        assert_eq!(got.len(), want.len(), "{what}: length");
        let scale = (want.iter().map(|v| v * v).sum::<f64>() / want.len() as f64).sqrt();
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let err = (g as f64 - w).abs() / w.abs().max(scale).max(1e-12);
            assert!(
                err < tol,
                "{what}[{i}]: {kind} {g}, f64 model {w} (relative error {err:.2e})"
            );
        }
    };
    close(
        "logits",
        &out.logits.value().read().unwrap(),
        &want_logits,
        1e-4,
    );
    close("loss", &loss.value().read().unwrap(), &[want_loss], 1e-5);
    assert_eq!(out.attention.len(), cfg.n_layer);
    for (l, (m, w)) in out.attention.iter().zip(&want_maps).enumerate() {
        assert_eq!(m.shape(), &[B, cfg.n_head, cfg.tokens(), cfg.tokens()]);
        close(&format!("attention layer {l}"), &m.read().unwrap(), w, 1e-4);
    }

    // Every parameter's gradient at four random entries against central differences.
    let h = 1e-5;
    let grads: Vec<Vec<f32>> = model
        .params
        .iter()
        .map(|prm| prm.var.grad_or_zeros().unwrap().read().unwrap())
        .collect();
    let all: Vec<f64> = grads.iter().flatten().map(|&v| v as f64).collect();
    let model_rms = (all.iter().map(|v| v * v).sum::<f64>() / all.len() as f64).sqrt();
    for (prm, g) in model.params.iter().zip(&grads) {
        let rms = (g.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        let floor = rms.max(1e-2 * model_rms);
        for _ in 0..4 {
            let i = rng.gen_range(0..g.len());
            let mut q = p.clone();
            q.get_mut(&prm.name).unwrap()[i] += h;
            let up = forward_ref(&q, &cfg, &img, &labels).1;
            q.get_mut(&prm.name).unwrap()[i] -= 2.0 * h;
            let down = forward_ref(&q, &cfg, &img, &labels).1;
            let fd = (up - down) / (2.0 * h);
            let err = (g[i] as f64 - fd).abs() / fd.abs().max(floor);
            assert!(
                err < 2e-3,
                "{} [{i}]: {kind} gradient {}, finite difference {fd} (relative error {err:.2e})",
                prm.name,
                g[i]
            );
        }
    }
    // The head's row 0 is never a target: its logit only ever gets pushed down.
    let hb = &grads[model
        .params
        .iter()
        .position(|p| p.name == "head.bias")
        .unwrap()];
    assert!(hb[0] > 0.0, "{kind}: head.bias[0] gradient {}", hb[0]);
}

#[test]
fn vit_on_the_cpu_backend_matches_the_f64_reference() {
    check(Device::cpu());
}

#[test]
fn vit_on_the_gpu_matches_the_f64_reference() {
    check(Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}")));
}
