//! Parity with PyTorch: a tiny GPT checkpoint written by this crate, run through
//! `scripts/parity.py` (our own PyTorch definition of the same model, in float64), gave the logits,
//! loss and every parameter gradient kept in `tests/fixtures/parity/<variant>_torch.json`. Here the
//! same checkpoint and batch go through our forward + backward, on the CPU backend and on the GPU,
//! and must agree to 1e-4 relative on each.
//!
//! Regenerate the inputs with `cargo test --test it -- --ignored parity::write_parity_inputs`, then
//! `python3 scripts/parity.py` (needs torch, safetensors, numpy) for the fixtures.

use attnlab::autograd::Tape;
use attnlab::model::checkpoint::{from_bytes, to_bytes};
use attnlab::model::params::{decays, init_values, layout, Init, Param};
use attnlab::model::{Gpt, GptConfig, Pass, Variant};
use attnlab::{autograd::Var, Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::rc::Rc;

use crate::backends;
use backends::{devices, gpu};

/// Relative tolerance of every comparison.
const RTOL: f64 = 1e-4;
const VOCAB: &str = "_?abcdefghijklmnopqr";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parity")
}

/// Vocab 20, block 16, 2 layers, 2 heads, width 16; no dropout (parity runs in eval mode).
fn tiny(variant: Variant) -> GptConfig {
    GptConfig {
        variant,
        vocab_size: VOCAB.chars().count(),
        block_size: 16,
        n_layer: 2,
        n_head: 2,
        n_embd: 16,
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
    }
}

/// Parameters far from the reference init on purpose: zero biases, a zero pos_emb, unit LayerNorm
/// gains and a ±0.001 w2 would leave whole code paths (bias gradients, position slicing, peaked
/// synthesizer attention) untested.
fn perturbed_params(g: &Rc<Device>, cfg: &GptConfig, seed: u64) -> Vec<Param> {
    let mut rng = SmallRng::seed_from_u64(seed);
    layout(cfg)
        .into_iter()
        .map(|(name, shape, init)| {
            let n = shape.iter().product();
            let vals: Vec<f32> = match init {
                Init::Normal(_) => init_values(Init::Normal(0.3), n, &mut rng),
                Init::Const(1.0) => init_values(Init::Normal(0.2), n, &mut rng)
                    .iter()
                    .map(|v| 1.0 + v)
                    .collect(),
                Init::Uniform(_) => init_values(Init::Normal(0.7), n, &mut rng),
                _ => init_values(Init::Normal(0.2), n, &mut rng),
            };
            Param {
                decay: decays(&name),
                var: Var::leaf(Tensor::from_f32(g, &shape, &vals).unwrap(), true),
                name,
            }
        })
        .collect()
}

/// Writes `<variant>.safetensors` for both variants and the shared `batch.json` (B 2, T 13, so
/// pos_emb, w2, b2 and the mask are all sliced; a quarter of the targets are PAD = 0).
#[test]
#[ignore = "regenerates the committed parity inputs"]
fn write_parity_inputs() {
    let g = gpu();
    std::fs::create_dir_all(dir()).unwrap();
    for (variant, seed) in [(Variant::Vanilla, 11), (Variant::Synthesizer, 12)] {
        let cfg = tiny(variant);
        let model = Gpt::from_params(&g, cfg.clone(), perturbed_params(&g, &cfg, seed));
        let bytes = pollster::block_on(to_bytes(&model, VOCAB)).unwrap();
        std::fs::write(dir().join(format!("{}.safetensors", variant.name())), bytes).unwrap();
    }
    let (b, t, v) = (2usize, 13usize, VOCAB.chars().count() as u32);
    let mut rng = SmallRng::seed_from_u64(13);
    let x: Vec<u32> = (0..b * t).map(|_| rng.gen_range(0..v)).collect();
    let y: Vec<u32> = (0..b * t)
        .map(|i| if i % 4 == 3 { 0 } else { rng.gen_range(1..v) })
        .collect();
    let batch = json!({"b": b, "t": t, "x": x, "y": y});
    std::fs::write(dir().join("batch.json"), batch.to_string()).unwrap();
}

fn read_json(name: &str) -> Value {
    let p = dir().join(name);
    let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("a JSON array of numbers")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn u32s(v: &Value) -> Vec<u32> {
    floats(v).iter().map(|&x| x as u32).collect()
}

/// Largest error of `ours` against `reference`, each element measured as
/// |a − b| / max(|b|, rms(b), scale). Elements at least the tensor's RMS size are compared
/// relatively; smaller ones (near-cancelling sums, whose f32 rounding is set by the size of the
/// terms, not of the result) against 1e-4 of the RMS. `scale` covers tensors whose exact value is
/// zero, where the RMS is zero too: the vanilla `key.bias` gradient is Σ_i q_i·Σ_j dS_ij = 0 since
/// softmax's backward rows sum to zero, so f64 PyTorch gives ~1e-17 and any f32 run (PyTorch's
/// f32 included, 1.5e-8) gives rounding noise. For gradients `scale` is 1e-2 of the whole model's
/// gradient RMS, so such elements must be below 1e-6 of the typical gradient. Returns (error,
/// index of the worst element).
fn max_err(ours: &[f32], reference: &[f64], scale: f64) -> (f64, usize) {
    assert_eq!(ours.len(), reference.len(), "element counts differ");
    let floor = rms(reference).max(scale).max(f64::MIN_POSITIVE);
    ours.iter()
        .zip(reference)
        .map(|(&a, &b)| (a as f64 - b).abs() / b.abs().max(floor))
        .enumerate()
        .fold(
            (0.0, 0),
            |(e, i), (j, x)| if x > e { (x, j) } else { (e, i) },
        )
}

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|b| b * b).sum::<f64>() / v.len().max(1) as f64).sqrt()
}

/// The tensor group a parameter belongs to, for the summary line.
fn group(name: &str) -> &'static str {
    for (key, g) in [
        ("tok_emb", "embeddings"),
        ("pos_emb", "embeddings"),
        (".ln", "layernorms"),
        ("ln_f", "layernorms"),
        (".attn.", "attention"),
        (".mlp.", "mlp"),
        ("head", "head"),
    ] {
        if name.contains(key) {
            return g;
        }
    }
    "other"
}

fn check_parity(variant: Variant, g: &Rc<Device>) {
    let kind = g.kind();
    let cfg = tiny(variant);
    let name = format!("{}.safetensors", variant.name());
    let bytes = std::fs::read(dir().join(&name)).unwrap();
    let (model, _) = from_bytes(g, &bytes, Some(&cfg), &name).unwrap_or_else(|e| panic!("{e}"));
    let batch = read_json("batch.json");
    let (b, t) = (
        batch["b"].as_u64().unwrap() as usize,
        batch["t"].as_u64().unwrap() as usize,
    );
    let x = Tensor::from_u32(g, &[b * t], &u32s(&batch["x"])).unwrap();
    let y = Tensor::from_u32(g, &[b * t], &u32s(&batch["y"])).unwrap();
    let want = read_json(&format!("{}_torch.json", variant.name()));

    let tape = Tape::new();
    let (logits, loss) = model
        .forward(&tape, &x, b, t, Some(&y), &Pass::eval())
        .unwrap_or_else(|e| panic!("{e}"));
    let loss = loss.expect("targets were given");
    tape.backward(&loss).unwrap_or_else(|e| panic!("{e}"));

    let mut report = vec![];
    let mut failures = vec![];
    let grads = want["grads"].as_object().expect("a 'grads' object");
    let all: Vec<f64> = grads.values().flat_map(floats).collect();
    let grad_scale = 1e-2 * rms(&all);
    let mut check = |what: String, grp: &str, ours: Vec<f32>, reference: Vec<f64>, scale: f64| {
        let (e, i) = max_err(&ours, &reference, scale);
        report.push((grp.to_string(), e));
        if e > RTOL {
            failures.push(format!(
                "{what}: error {e:.2e} at element {i} (ours {}, torch {})",
                ours[i], reference[i]
            ));
        }
    };
    check(
        "loss".into(),
        "loss",
        loss.value().read().unwrap(),
        vec![want["loss"].as_f64().unwrap()],
        0.0,
    );
    check(
        "logits".into(),
        "logits",
        logits.value().read().unwrap(),
        floats(&want["logits"]),
        0.0,
    );
    assert_eq!(
        grads.len(),
        model.params.len(),
        "the fixture and the model have different parameter counts"
    );
    for p in &model.params {
        let reference = floats(
            grads
                .get(&p.name)
                .unwrap_or_else(|| panic!("the fixture has no gradient for {}", p.name)),
        );
        let ours = p.var.grad().expect("every parameter gets a gradient");
        check(
            format!("grad {}", p.name),
            group(&p.name),
            ours.read().unwrap(),
            reference,
            grad_scale,
        );
    }
    let mut groups: Vec<(String, f64)> = vec![];
    for (grp, e) in report {
        match groups.iter_mut().find(|(g, _)| *g == grp) {
            Some((_, m)) => *m = m.max(e),
            None => groups.push((grp, e)),
        }
    }
    let summary: Vec<String> = groups.iter().map(|(g, e)| format!("{g} {e:.1e}")).collect();
    println!(
        "{} parity on the {kind} backend, max error per group: {}",
        variant.name(),
        summary.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} model on the {kind} backend differs from PyTorch:\n{}",
        variant.name(),
        failures.join("\n")
    );
}

#[test]
fn vanilla_logits_loss_and_grads_match_pytorch() {
    for g in devices() {
        check_parity(Variant::Vanilla, &g);
    }
}

#[test]
fn synthesizer_logits_loss_and_grads_match_pytorch() {
    for g in devices() {
        check_parity(Variant::Synthesizer, &g);
    }
}

/// A checkpoint's metadata and its tensors (name, shape, bytes) in name order. The header's own
/// order is a hash map's, so the raw bytes of two writes of one model may differ.
type Contents = (Vec<(String, String)>, Vec<(String, Vec<usize>, Vec<u8>)>);
fn contents(bytes: &[u8]) -> Contents {
    let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut m: Vec<(String, String)> = meta
        .metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    m.sort();
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let mut t: Vec<_> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec()))
        .collect();
    t.sort();
    (m, t)
}

/// Loaded on one backend, saved, loaded on the same or the other one: the same bits, and both
/// backends write the same checkpoint.
#[test]
fn checkpoint_round_trips_exactly_within_and_between_backends() {
    let devs = devices();
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let name = format!("{}.safetensors", variant.name());
        let bytes = std::fs::read(dir().join(&name)).unwrap();
        let mut written = vec![];
        for from in &devs {
            let (a, head) = from_bytes(from, &bytes, None, &name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(head.vocab, VOCAB);
            assert_eq!(a.cfg.variant, variant);
            let again = pollster::block_on(to_bytes(&a, &head.vocab)).unwrap();
            for to in &devs {
                let route = format!("{} -> {}", from.kind(), to.kind());
                let (b, head2) = from_bytes(to, &again, Some(&a.cfg), "re-written").unwrap();
                assert_eq!(head2.vocab, head.vocab, "{route}");
                assert_eq!(a.params.len(), b.params.len(), "{route}");
                for (p, q) in a.params.iter().zip(&b.params) {
                    assert_eq!(p.name, q.name, "{route}");
                    assert_eq!(p.var.shape(), q.var.shape(), "{route}");
                    let (u, v) = (p.var.value().read().unwrap(), q.var.value().read().unwrap());
                    // Bit-for-bit: a checkpoint must not drift by being loaded and saved.
                    let bits = |w: &[f32]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&u), bits(&v), "{route}: {} changed", p.name);
                }
            }
            written.push(again);
        }
        assert_eq!(
            contents(&written[0]),
            contents(&written[1]),
            "{}: the backends wrote different checkpoints",
            variant.name()
        );
    }
}

#[test]
fn vanilla_checkpoint_is_refused_as_synthesizer() {
    let bytes = std::fs::read(dir().join("vanilla.safetensors")).unwrap();
    for g in devices() {
        let err = match from_bytes(
            &g,
            &bytes,
            Some(&tiny(Variant::Synthesizer)),
            "vanilla.ckpt",
        ) {
            Ok(_) => panic!(
                "{}: a vanilla checkpoint was accepted as a synthesizer model",
                g.kind()
            ),
            Err(e) => e.to_string(),
        };
        for word in ["vanilla.ckpt", "vanilla model", "synthesizer model"] {
            assert!(
                err.contains(word),
                "{}: message {err:?} does not name {word:?}",
                g.kind()
            );
        }
    }
}
