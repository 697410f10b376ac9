//! Greedy decoding with the key/value cache (`model::Decoder`, `train::sample_greedy_batch`)
//! against the uncached path that re-runs the whole context at every step, on both backends:
//! the decoder's logits against the full forward's, the predictions of small random models of
//! both variants (prompts of several lengths, some long enough to take the crop fallback), and
//! the shipped model's answers to the built-in corpus's dev questions (and its dev score).

use crate::backends;

use attnlab::autograd::Tape;
use attnlab::data::MASK_ID;
use attnlab::data::{parse_tsv_str, prediction_from_completion, prompt_for, Row, TsvMode, Vocab};
use attnlab::model::{checkpoint, Decoder, Gpt, GptConfig, Pass, Variant};
use attnlab::tensor::Tensor;
use attnlab::train::{
    run, sample_greedy, sample_greedy_batch, sample_greedy_batch_uncached,
    sample_greedy_batch_until, sample_greedy_uncached,
};
use attnlab::Device;
use backends::devices;
use std::rc::Rc;

/// A small model (context 12, synthesizer 11) with every parameter drawn uniformly from
/// [−0.5, 0.5), so its logits are far from ties and its greedy tokens vary.
fn random_model(dev: &Rc<Device>, variant: Variant, seed: u64) -> Gpt {
    let cfg = GptConfig {
        n_layer: 2,
        n_head: 2,
        n_embd: 16,
        block_size: 12,
        ..GptConfig::tiny(variant, 20)
    };
    let model = Gpt::new(dev, cfg, seed).expect("model");
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for p in &model.params {
        let vals: Vec<f32> = (0..p.var.value().numel())
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        p.var.value().write_f32(&vals).expect("write");
    }
    model
}

/// `n` prompts of tokens 1..20 with the given lengths, in a scrambled order.
fn prompts(lengths: &[usize]) -> Vec<Vec<u32>> {
    lengths
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            (0..len)
                .map(|j| ((i * 5 + j * 3) % 19 + 1) as u32)
                .collect()
        })
        .collect()
}

/// The full forward's logits at position `at` of each row of `rows` (all of one length).
fn forward_logits(model: &Gpt, rows: &[Vec<u32>], at: usize) -> Vec<f32> {
    let dev = model.params[0].var.device();
    let (b, t, v) = (rows.len(), rows[0].len(), model.cfg.vocab_size);
    let ids: Vec<u32> = rows.concat();
    let idx = Tensor::from_u32(dev, &[b * t], &ids).expect("ids");
    let tape = Tape::new();
    let (logits, _) = tape
        .no_grad(|| model.forward(&tape, &idx, b, t, None, &Pass::eval()))
        .expect("forward");
    let all = logits.value().read().expect("read");
    (0..b)
        .flat_map(|r| all[(r * t + at) * v..(r * t + at + 1) * v].to_vec())
        .collect()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The prefill's logits and each one-position step's equal the full forward's at that position
/// (to f32 rounding), for three rows decoded together.
#[test]
fn decoder_logits_match_the_full_forward() {
    for dev in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let model = random_model(&dev, variant, 7);
            let mut rows = prompts(&[4, 4, 4]);
            let cap = 10;
            let mut dec = Decoder::new(&model, rows.len(), cap).expect("decoder");
            let prefill: Vec<u32> = (0..4 * 3).map(|i| rows[i % 3][i / 3]).collect();
            let mut logits = dec.advance(&prefill).expect("prefill");
            for step in 0..=cap - 4 {
                let got = logits.read().expect("read");
                let want = forward_logits(&model, &rows, rows[0].len() - 1);
                let d = max_diff(&got, &want);
                assert!(
                    d < 1e-4,
                    "{} {variant:?} position {}: cached logits differ by {d}",
                    dev.kind(),
                    rows[0].len() - 1
                );
                if step == cap - 4 {
                    break;
                }
                let next: Vec<u32> = (0..3)
                    .map(|r| ((step * 7 + r * 3) % 19 + 1) as u32)
                    .collect();
                for (row, &tok) in rows.iter_mut().zip(&next) {
                    row.push(tok);
                }
                logits = dec.advance(&next).expect("step");
            }
            assert_eq!(dec.len(), cap);
            // Full: one more position is refused, as is a second multi-position call.
            assert!(dec.advance(&[1, 2, 3]).is_err(), "past the capacity");
            let mut fresh = Decoder::new(&model, 3, cap).expect("decoder");
            fresh.advance(&prefill).expect("prefill");
            assert!(fresh.advance(&prefill).is_err(), "a second prefill");
            assert!(
                fresh.advance(&[1, 2]).is_err(),
                "ids not a multiple of the rows"
            );
            assert!(
                fresh.advance(&[1, 2, 99]).is_err(),
                "an id outside the vocabulary"
            );
            assert!(Decoder::new(&model, 3, model.cfg.block_size + 1).is_err());
        }
    }
}

/// Cached decoding gives exactly the uncached path's tokens: prompts of lengths 1 to the context
/// (several of one length, so chunks hold more than one row) and some whose prompt + steps
/// outgrow the context, which take the crop fallback; one at a time and batched.
#[test]
fn cached_decoding_equals_uncached() {
    let steps = 6;
    for dev in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let model = random_model(&dev, variant, 11);
            let lengths = [3, 1, 7, 3, 5, 6, 1, 3, 9, 11, 2, 7];
            let ps = prompts(&lengths);
            let want = pollster::block_on(sample_greedy_batch_uncached(
                &model,
                &ps,
                steps,
                &mut |_, _| {},
            ))
            .expect("uncached");
            let mut reports = vec![];
            let got = pollster::block_on(sample_greedy_batch(&model, &ps, steps, &mut |d, t| {
                reports.push((d, t))
            }))
            .expect("cached");
            assert_eq!(got, want, "{} {variant:?}: batched", dev.kind());
            assert_eq!(reports.last(), Some(&(ps.len(), ps.len())));
            // The test can fail: the prompts get different continuations.
            let mut new: Vec<&[u32]> = got.iter().map(|o| &o[o.len() - steps..]).collect();
            new.sort_unstable();
            new.dedup();
            assert!(new.len() > 3, "{variant:?}: only continuations {new:?}");
            for p in [&ps[0], &ps[8], &ps[9]] {
                let one = pollster::block_on(sample_greedy(&model, p, steps)).expect("one");
                let old =
                    pollster::block_on(sample_greedy_uncached(&model, p, steps)).expect("old");
                assert_eq!(
                    one,
                    old,
                    "{} {variant:?}: prompt of {}",
                    dev.kind(),
                    p.len()
                );
            }
        }
    }
}

/// A shipped model (web/models/NAME.safetensors) with its vocabulary.
fn shipped_model(dev: &Rc<Device>, name: &str) -> (Gpt, Vocab) {
    let path = format!(
        "{}/web/models/{name}.safetensors",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("the shipped model");
    let (model, header) = checkpoint::from_bytes(dev, &bytes, None, &path).expect("checkpoint");
    let vocab = Vocab::from_itos(&header.vocab, &path).expect("vocab");
    (model, vocab)
}

/// The built-in corpus's dev questions, and each as a prompt.
fn dev_questions(vocab: &Vocab) -> (Vec<Row>, Vec<Vec<u32>>) {
    let corpus = run::default_corpus(false);
    let rows = parse_tsv_str(&corpus.dev_tsv, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    let prompts = rows
        .iter()
        .map(|r| {
            vocab
                .encode_in(&prompt_for(&r.prompt_text()), "dev.tsv")
                .expect("encode")
        })
        .collect();
    (rows, prompts)
}

/// How many dev questions a shipped model answers right, as its facts file
/// (web/models/NAME.json) records it.
fn shipped_dev_correct(name: &str) -> usize {
    let path = format!("{}/web/models/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let facts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("facts")).expect("json");
    assert_eq!(facts["dev_accuracy"]["total"], 136, "{path}");
    facts["dev_accuracy"]["correct"].as_u64().expect("correct") as usize
}

/// The shipped model answers the built-in dev set as its facts file says (every question on the
/// CPU backend; the first 12, for 16 steps, on the GPU: lavapipe is slow), with the cache as
/// without it (the uncached path, which re-runs the whole context at every step, on the first 24
/// questions; the random models above compare the two on every prompt length). Decoding that
/// stops once every answer of a chunk has closed (the evaluation's) gives a prefix of each full
/// decoding, the same predictions, and fewer steps.
#[test]
fn shipped_model_predictions_are_unchanged() {
    for dev in devices() {
        let (model, vocab) = shipped_model(&dev, "builtin-vanilla");
        let (rows, mut ps) = dev_questions(&vocab);
        assert_eq!(ps.len(), 136, "the built-in dev set");
        // The evaluation's 32 steps; 16 on the GPU (lavapipe takes about 0.6 s a step here).
        let mut steps = run::EVAL_STEPS;
        if !dev.is_cpu() {
            ps.truncate(12);
            steps = 16;
        }
        let got = pollster::block_on(sample_greedy_batch(&model, &ps, steps, &mut |_, _| {}))
            .expect("cached");
        assert_eq!(got.len(), ps.len());
        let compared = ps.len().min(24);
        let want = pollster::block_on(sample_greedy_batch_uncached(
            &model,
            &ps[..compared],
            steps,
            &mut |_, _| {},
        ))
        .expect("uncached");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{}: question {i}", dev.kind());
        }
        let answers: Vec<String> = got
            .iter()
            .map(|ids| prediction_from_completion(&vocab.decode(ids).expect("decode")))
            .collect();
        if ps.len() == rows.len() {
            let (correct, total) = run::score(&rows, &answers)
                .expect("score")
                .expect("answers");
            assert_eq!(
                (correct, total),
                (shipped_dev_correct("builtin-vanilla"), 136),
                "{}: the shipped model's dev score",
                dev.kind()
            );
        }
        let until = pollster::block_on(sample_greedy_batch_until(
            &model,
            &ps,
            steps,
            Some(MASK_ID),
            &mut |_, _| {},
        ))
        .expect("until");
        let (mut short, mut full) = (0, 0);
        for (i, (u, g)) in until.iter().zip(&got).enumerate() {
            assert!(
                g.starts_with(u),
                "{}: question {i} not a prefix",
                dev.kind()
            );
            let answer = prediction_from_completion(&vocab.decode(u).expect("decode"));
            assert_eq!(answer, answers[i], "{}: question {i}", dev.kind());
            assert!(
                u.len() == g.len() || u[ps[i].len()..].contains(&MASK_ID),
                "{}: question {i} stopped before its answer closed",
                dev.kind()
            );
            short += u.len() - ps[i].len();
            full += g.len() - ps[i].len();
        }
        // The answers close after a few characters: most of the 32 steps are not run.
        if steps == run::EVAL_STEPS {
            assert!(2 * short < full, "{}: {short} of {full} steps", dev.kind());
        } else {
            assert!(short < full, "{}: {short} of {full} steps", dev.kind());
        }
        // The model answers, not a constant: several different predictions.
        let mut distinct = answers.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 3, "{}: answers {distinct:?}", dev.kind());
    }
}

/// The shipped synthesizer (f16, loaded on demand by the page) answers the built-in dev set as its
/// facts file says and, line for line, as the f32 model it was stored from did with the CLI
/// (results/builtin800/synth650.dev.predictions). On the CPU backend.
#[test]
fn shipped_synthesizer_predictions_are_unchanged() {
    let dev = Device::cpu();
    let (model, vocab) = shipped_model(&dev, "builtin-synthesizer");
    let (rows, ps) = dev_questions(&vocab);
    let got = pollster::block_on(sample_greedy_batch(
        &model,
        &ps,
        run::EVAL_STEPS,
        &mut |_, _| {},
    ))
    .expect("cached");
    let answers: Vec<String> = got
        .iter()
        .map(|ids| prediction_from_completion(&vocab.decode(ids).expect("decode")))
        .collect();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/results/builtin800/synth650.dev.predictions"
    );
    let want: Vec<String> = std::fs::read_to_string(path)
        .expect("the CLI's predictions")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(answers, want, "{path}");
    let (correct, total) = run::score(&rows, &answers)
        .expect("score")
        .expect("answers");
    assert_eq!(
        (correct, total),
        (shipped_dev_correct("builtin-synthesizer"), 136)
    );
}

/// `Tensor::copy_from`, which appends to the cache: a range lands where asked, in order with the
/// work around it, and ranges outside either tensor or a tensor copied into itself are refused.
#[test]
fn copy_from_moves_a_range_and_refuses_bad_ones() {
    for dev in devices() {
        let src = Tensor::from_f32(&dev, &[6], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).expect("src");
        let dst = Tensor::full(&dev, &[8], -1.0).expect("dst");
        dst.copy_from(3, &src, 2, 4).expect("copy");
        let want = [-1.0, -1.0, -1.0, 3.0, 4.0, 5.0, 6.0, -1.0];
        assert_eq!(dst.read().expect("read"), want, "{}", dev.kind());
        assert!(
            dst.copy_from(5, &src, 0, 4).is_err(),
            "past the destination"
        );
        assert!(dst.copy_from(0, &src, 3, 4).is_err(), "past the source");
        assert!(
            dst.copy_from(0, &src, usize::MAX, 2).is_err(),
            "overflowing offset"
        );
        assert!(
            dst.copy_from(0, &dst, 4, 2).is_err(),
            "a tensor into itself"
        );
        assert_eq!(
            dst.read().expect("read"),
            want,
            "{}: refusals change nothing",
            dev.kind()
        );
    }
}
