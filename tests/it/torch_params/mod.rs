//! The course's `.params` files (`torch.save(model.state_dict(), path)`): files written by PyTorch
//! itself (`scripts/make_torch_fixture.py`, committed in `tests/fixtures/torch/`) load into a model
//! whose logits and greedy answers are PyTorch's, on the CPU backend and on the GPU. `bad_files.rs`:
//! every kind of bad file is refused with a message naming it and what was expected, and the pickle
//! reader never panics on a mangled file; `cli.rs`: the CLI loads and converts them.

mod bad_files;
mod cli;

use attnlab::autograd::Tape;
use attnlab::model::torch_params::{
    config_of, from_bytes, is_torch_zip, read_state_dict, Expected, TorchTensor,
};
use attnlab::model::{Pass, Variant};
use attnlab::train::sample_greedy;
use attnlab::{Device, Tensor};
use serde_json::Value;
use std::path::PathBuf;

use crate::backends;
use crate::common;
use backends::devices;

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch")
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn expected(variant: Variant) -> Value {
    let text = std::fs::read_to_string(dir().join(format!("{}_expected.json", variant.name())))
        .expect("expected-values fixture");
    serde_json::from_str(&text).expect("JSON")
}

pub fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// What the fixtures' tiny models need: 2 heads (not visible in a vanilla file), vocab 20.
pub fn tiny_want(variant: Variant) -> Expected<'static> {
    Expected {
        variant: Some(variant),
        n_head: Some(2),
        vocab: Some((20, "the test corpus")),
    }
}

/// The error message of `r`, which must be an error.
pub fn err<T>(r: attnlab::Result<T>, case: &str) -> String {
    match r {
        Ok(_) => panic!("{case}: accepted"),
        Err(e) => e.to_string(),
    }
}

pub fn has(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "{message:?} does not mention {p:?}");
    }
}

/// The fixtures' models give PyTorch's float64 logits (1e-4 relative, as tests/it/parity.rs) and its
/// greedy answer (past the block, so the context crop is exercised) on both backends.
#[test]
fn course_params_give_pytorchs_logits_and_answers() {
    for dev in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let case = format!("{} on {}", variant.name(), dev.kind());
            let name = format!("{}.params", variant.name());
            let bytes = fixture(&name);
            assert!(is_torch_zip(&bytes));
            let model = from_bytes(&dev, &bytes, &tiny_want(variant), &name)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let c = &model.cfg;
            assert_eq!(
                (
                    c.variant,
                    c.vocab_size,
                    c.block_size,
                    c.n_layer,
                    c.n_head,
                    c.n_embd
                ),
                (variant, 20, 16, 2, 2, 16),
                "{case}"
            );
            let want = expected(variant);
            let (b, t) = (
                want["b"].as_u64().unwrap() as usize,
                want["t"].as_u64().unwrap() as usize,
            );
            let ids: Vec<u32> = nums(&want["x"]).iter().map(|&v| v as u32).collect();
            let x = Tensor::from_u32(&dev, &[b * t], &ids).unwrap();
            let tape = Tape::new();
            let (logits, _) = model.forward(&tape, &x, b, t, None, &Pass::eval()).unwrap();
            let ours = logits.value().read().unwrap();
            let theirs = nums(&want["logits"]);
            assert_eq!(ours.len(), theirs.len(), "{case}");
            let rms = (theirs.iter().map(|v| v * v).sum::<f64>() / theirs.len() as f64).sqrt();
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(&a, &b)| (a as f64 - b).abs() / b.abs().max(rms))
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-4,
                "{case}: logits differ from PyTorch's by {worst:.2e} relative"
            );
            let prompt: Vec<u32> = nums(&want["prompt"]).iter().map(|&v| v as u32).collect();
            let steps = want["steps"].as_u64().unwrap() as usize;
            let out = pollster::block_on(sample_greedy(&model, &prompt, steps)).unwrap();
            let answer: Vec<u32> = nums(&want["greedy"]).iter().map(|&v| v as u32).collect();
            assert_eq!(
                out[prompt.len()..],
                answer[..],
                "{case}: greedy answer differs"
            );
        }
    }
}

/// The reader returns the file's names in order with their shapes; a synthesizer's head count is
/// read from w2 when not given; tensors that are views into one storage at an offset load right.
#[test]
fn state_dict_names_shapes_views_and_inferred_heads() {
    let sd = read_state_dict(&fixture("synthesizer.params"), "synthesizer.params").unwrap();
    // state_dict order: the GPT's own parameter first, then its submodules'.
    assert_eq!(sd[0].0, "pos_emb");
    assert_eq!(sd[0].1.shape, vec![1, 16, 16]);
    assert_eq!(sd[1].0, "tok_emb.weight");
    let w2 = sd.iter().find(|(n, _)| n == "blocks.1.attn.w2").unwrap();
    assert_eq!(w2.1.shape, vec![8, 15]);
    let mask = sd.iter().find(|(n, _)| n == "blocks.0.attn.mask").unwrap();
    assert_eq!(mask.1.values.iter().sum::<f32>(), (16 * 17 / 2) as f32);
    let cfg = config_of(&sd, &Expected::default(), "synthesizer.params").unwrap();
    assert_eq!((cfg.variant, cfg.n_head), (Variant::Synthesizer, 2));

    let sd = read_state_dict(&fixture("views.params"), "views.params").unwrap();
    let get = |n: &str| -> &TorchTensor { &sd.iter().find(|(k, _)| k == n).unwrap().1 };
    let half = |r: std::ops::Range<usize>| r.map(|i| i as f32 * 0.5).collect::<Vec<_>>();
    assert_eq!(get("ln_f.weight").values, half(0..8));
    assert_eq!(get("ln_f.bias").values, half(8..16));
    let small = Expected {
        variant: Some(Variant::Vanilla),
        n_head: Some(2),
        vocab: Some((20, "c")),
    };
    let model = from_bytes(
        &Device::cpu(),
        &fixture("views.params"),
        &small,
        "views.params",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        model.param("ln_f.bias").unwrap().value().read().unwrap(),
        half(8..16)
    );
}
