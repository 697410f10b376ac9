//! The whole model, on the GPU and on the CPU backend, against an independent reference model in
//! f64, at a tiny size: logits, loss and attention probabilities of both variants match, and every
//! parameter's gradient matches central finite differences of the f64 loss. The f64 model below is
//! written from the assignment's definition (pre-LN blocks, causal or synthesizer attention, 4x
//! GELU MLP, final LN, bias-free head, cross-entropy ignoring PAD = 0) with plain loops; it shares
//! only GELU's erf with the crate.

use attnlab::autograd::Tape;
use attnlab::model::{Gpt, GptConfig, Pass, Variant};
use attnlab::ops::elementwise::gelu_ref;
use attnlab::{Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::collections::HashMap;

use crate::f64_ref;

use f64_ref::{layernorm, linear};

type Params = HashMap<String, Vec<f64>>;

const B: usize = 2;
const T: usize = 7;

fn cfg(variant: Variant) -> GptConfig {
    GptConfig {
        variant,
        vocab_size: 13,
        block_size: 8,
        n_layer: 2,
        n_head: 2,
        n_embd: 8,
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
    }
}

/// Attention of one block on h (B·T, C): returns (output (B·T, C), probabilities (B, NH, T, T)).
fn attention(p: &Params, cfg: &GptConfig, h: &[f64], name: &str) -> (Vec<f64>, Vec<f64>) {
    let (c, nh) = (cfg.n_embd, cfg.n_head);
    let hs = c / nh;
    let g = |n: &str| &p[&format!("{name}.{n}")][..];
    let v = linear(h, g("value.weight"), Some(g("value.bias")), c, c);
    let mut probs = vec![0.0; B * nh * T * T];
    let (q, k, a) = match cfg.variant {
        Variant::Vanilla => (
            linear(h, g("query.weight"), Some(g("query.bias")), c, c),
            linear(h, g("key.weight"), Some(g("key.bias")), c, c),
            vec![],
        ),
        Variant::Synthesizer => {
            let a: Vec<f64> = linear(h, g("w1.weight"), Some(g("w1.bias")), c, c)
                .into_iter()
                .map(|x| x.max(0.0))
                .collect();
            (vec![], vec![], a)
        }
    };
    let (w2, b2) = match cfg.variant {
        Variant::Synthesizer => (g("w2"), g("b2")),
        Variant::Vanilla => (&[][..], &[][..]),
    };
    let mut y = vec![0.0; B * T * c];
    for b in 0..B {
        for hd in 0..nh {
            for i in 0..T {
                // Scores of query i against keys j <= i; the masked ones get probability 0.
                let mut s = [f64::NEG_INFINITY; T];
                for (j, sj) in s.iter_mut().enumerate().take(i + 1) {
                    let mut acc = 0.0;
                    for d in 0..hs {
                        let xi = (b * T + i) * c + hd * hs + d;
                        acc += match cfg.variant {
                            Variant::Vanilla => q[xi] * k[(b * T + j) * c + hd * hs + d],
                            // w2 is (HS, block − 1); the model reads its first T columns.
                            Variant::Synthesizer => a[xi] * w2[d * (cfg.block_size - 1) + j],
                        };
                    }
                    *sj = match cfg.variant {
                        Variant::Vanilla => acc / (hs as f64).sqrt(),
                        Variant::Synthesizer => acc + b2[j],
                    };
                }
                let m = s[..=i].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = s[..=i].iter().map(|v| (v - m).exp()).sum();
                for j in 0..=i {
                    let pr = (s[j] - m).exp() / z;
                    probs[((b * nh + hd) * T + i) * T + j] = pr;
                    for d in 0..hs {
                        y[(b * T + i) * c + hd * hs + d] += pr * v[(b * T + j) * c + hd * hs + d];
                    }
                }
            }
        }
    }
    (
        linear(&y, g("proj.weight"), Some(g("proj.bias")), c, c),
        probs,
    )
}

/// Logits (B·T, V), mean loss over non-PAD targets, and each layer's attention probabilities.
fn forward_cpu(
    p: &Params,
    cfg: &GptConfig,
    x: &[u32],
    y: &[u32],
) -> (Vec<f64>, f64, Vec<Vec<f64>>) {
    let c = cfg.n_embd;
    let mut h = vec![0.0; B * T * c];
    for r in 0..B * T {
        for j in 0..c {
            h[r * c + j] =
                p["tok_emb.weight"][x[r] as usize * c + j] + p["pos_emb"][(r % T) * c + j];
        }
    }
    let mut maps = vec![];
    for l in 0..cfg.n_layer {
        let n = |s: &str| format!("blocks.{l}.{s}");
        let a = layernorm(&h, &p[&n("ln1.weight")], &p[&n("ln1.bias")], c);
        let (att, probs) = attention(p, cfg, &a, &n("attn"));
        maps.push(probs);
        h.iter_mut().zip(&att).for_each(|(h, a)| *h += a);
        let a = layernorm(&h, &p[&n("ln2.weight")], &p[&n("ln2.bias")], c);
        let m = gelu_ref(&linear(
            &a,
            &p[&n("mlp.0.weight")],
            Some(&p[&n("mlp.0.bias")]),
            c,
            4 * c,
        ));
        let m = linear(
            &m,
            &p[&n("mlp.2.weight")],
            Some(&p[&n("mlp.2.bias")]),
            4 * c,
            c,
        );
        h.iter_mut().zip(&m).for_each(|(h, a)| *h += a);
    }
    let h = layernorm(&h, &p["ln_f.weight"], &p["ln_f.bias"], c);
    let v = cfg.vocab_size;
    let logits = linear(&h, &p["head.weight"], None, c, v);
    let (mut loss, mut n) = (0.0, 0);
    for (r, &t) in y.iter().enumerate() {
        if t == 0 {
            continue;
        }
        let row = &logits[r * v..(r + 1) * v];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + row.iter().map(|z| (z - m).exp()).sum::<f64>().ln();
        loss += lse - row[t as usize];
        n += 1;
    }
    (logits, loss / n as f64, maps)
}

fn check(variant: Variant, dev: std::rc::Rc<Device>) {
    let kind = dev.kind();
    let cfg = cfg(variant);
    let model = Gpt::new(&dev, cfg.clone(), 3).expect("model");
    // Random values everywhere (biases, positions and b2 too), so that no parameter is inert.
    let mut rng = SmallRng::seed_from_u64(11);
    let mut p = Params::new();
    for prm in &model.params {
        let vals: Vec<f64> = (0..prm.var.value().numel())
            .map(|_| rng.gen_range(-1.5..1.5))
            .collect();
        let f: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
        prm.var.value().write_f32(&f).expect("write");
        // The f64 model starts from exactly the f32 values the device holds.
        p.insert(prm.name.clone(), f.iter().map(|&v| v as f64).collect());
    }
    let x: Vec<u32> = (0..B * T).map(|_| rng.gen_range(1..13)).collect();
    let mut y: Vec<u32> = (0..B * T).map(|_| rng.gen_range(1..13)).collect();
    y[3] = 0; // one ignored target
    let (want_logits, want_loss, want_maps) = forward_cpu(&p, &cfg, &x, &y);

    model.prepare(B, T).expect("prepare");
    let tx = Tensor::from_u32(&dev, &[B * T], &x).expect("x");
    let ty = Tensor::from_u32(&dev, &[B * T], &y).expect("y");
    let tape = Tape::new();
    let pass = Pass::eval_capturing();
    let (logits, loss) = model
        .forward(&tape, &tx, B, T, Some(&ty), &pass)
        .expect("forward");
    let loss = loss.expect("loss");
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
        &logits.value().read().expect("read"),
        &want_logits,
        1e-4,
    );
    close(
        "loss",
        &loss.value().read().expect("read"),
        &[want_loss],
        1e-5,
    );
    let maps = pass.attention_maps();
    assert_eq!(maps.len(), cfg.n_layer);
    for (l, (m, w)) in maps.iter().zip(&want_maps).enumerate() {
        assert_eq!(m.shape(), &[B, cfg.n_head, T, T]);
        close(
            &format!("attention layer {l}"),
            &m.read().expect("read"),
            w,
            1e-4,
        );
    }

    // Every parameter: its gradient at four random entries against central differences.
    // Errors are relative to the entry, floored at the parameter's gradient RMS and at 1% of the
    // model's (key.bias has an exactly-zero gradient: softmax ignores a per-query shift).
    let h = 1e-5;
    let grads: Vec<Vec<f32>> = model
        .params
        .iter()
        .map(|prm| prm.var.grad_or_zeros().expect("grad").read().expect("read"))
        .collect();
    let all: Vec<f64> = grads.iter().flatten().map(|&v| v as f64).collect();
    let model_rms = (all.iter().map(|v| v * v).sum::<f64>() / all.len() as f64).sqrt();
    for (prm, g) in model.params.iter().zip(&grads) {
        let rms = (g.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        let floor = rms.max(1e-2 * model_rms);
        for _ in 0..4 {
            let i = rng.gen_range(0..g.len());
            let mut q = p.clone();
            let entry = q.get_mut(&prm.name).expect("param");
            entry[i] += h;
            let up = forward_cpu(&q, &cfg, &x, &y).1;
            let entry = q.get_mut(&prm.name).expect("param");
            entry[i] -= 2.0 * h;
            let down = forward_cpu(&q, &cfg, &x, &y).1;
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
}

fn gpu() -> std::rc::Rc<Device> {
    Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn vanilla_gpu_model_matches_the_cpu_reference_model() {
    check(Variant::Vanilla, gpu());
}

#[test]
fn synthesizer_gpu_model_matches_the_cpu_reference_model() {
    check(Variant::Synthesizer, gpu());
}

#[test]
fn vanilla_model_on_the_cpu_backend_matches_the_cpu_reference_model() {
    check(Variant::Vanilla, Device::cpu());
}

#[test]
fn synthesizer_model_on_the_cpu_backend_matches_the_cpu_reference_model() {
    check(Variant::Synthesizer, Device::cpu());
}
