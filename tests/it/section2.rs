//! The handout's section 2 as the page computes it (`attnlab::train::section2`): each greedy
//! answer's character probabilities equal the softmax of a full forward pass over the same
//! context, and the answers are the evaluation's; the confidence histogram and its separation; the
//! comparison of two models with the probe; names grouped by their look, invented names, and the
//! refusals of a typed name.

use crate::backends;

use attnlab::autograd::Tape;
use attnlab::data::corpus::{invented_names, surname_endings};
use attnlab::data::{parse_tsv_str, prompt_for, CharCorruptionDataset, TsvMode, Vocab};
use attnlab::model::{Gpt, GptConfig, Pass, Variant};
use attnlab::tensor::Tensor;
use attnlab::train::run::{predict, EVAL_STEPS};
use attnlab::train::section2::{
    answer_scored, by_group, check_name, compare, document_of, histogram, name_group,
    recall_sample, MAX_NAME_CHARS,
};
use std::collections::HashSet;

const WIKI: &str = "Ann Vole. Ann Vole was born in Paris and wrote songs .\n\
Bert Quill. Bert Quill, a painter, was born in Oslo .\n\
Cora Fenn. Cora Fenn is a singer from Lima who moved away .\n\
Zed Dorn. Where was Zed Dorn born? Kowalski asked .\n";

const DEV: &str = "Where was Ann Vole born?\tParis\n\
Where was Bert Quill born?\tOslo\n\
Where was Cora Fenn born?\tLima\n\
Where was Dora Kowalski born?\tParis\n";

fn model(dev: &std::rc::Rc<attnlab::Device>, vocab: &Vocab, seed: u64) -> Gpt {
    let cfg = GptConfig {
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
        ..GptConfig::tiny(Variant::Vanilla, vocab.len())
    };
    Gpt::new(dev, cfg, seed).expect("model")
}

/// Softmax of the last position's logits after one full (uncached) forward over `ids`.
fn last_softmax(m: &Gpt, ids: &[u32]) -> Vec<f64> {
    let dev = m.params[0].var.device().clone();
    let idx = Tensor::from_u32(&dev, &[ids.len()], ids).expect("ids");
    let tape = Tape::new();
    let (logits, _) = tape
        .no_grad(|| m.forward(&tape, &idx, 1, ids.len(), None, &Pass::eval()))
        .expect("forward");
    let all = pollster::block_on(logits.value().to_vec_f32()).expect("read");
    let v = m.cfg.vocab_size;
    let row: Vec<f64> = all[all.len() - v..].iter().map(|&x| x as f64).collect();
    let top = row.iter().cloned().fold(f64::MIN, f64::max);
    let z: f64 = row.iter().map(|x| (x - top).exp()).sum();
    row.iter().map(|x| (x - top).exp() / z).collect()
}

#[test]
fn confidences_are_the_full_forward_passes_softmax_and_answers_are_the_evaluations() {
    let vocab = Vocab::from_text(WIKI, "wiki.txt").expect("vocab");
    let rows = parse_tsv_str(DEV, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    let questions: Vec<String> = rows.iter().map(|r| r.question.clone()).collect();
    for dev in backends::devices() {
        let k = dev.kind();
        let m = model(&dev, &vocab, 5);
        let got = pollster::block_on(answer_scored(&m, &vocab, &questions)).expect("scored");
        let want = pollster::block_on(predict(&m, &vocab, &rows, "dev.tsv", &mut |_, _| {}))
            .expect("predict");
        for (i, (s, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(&s.prediction, w, "{k}: question {i}'s answer");
            // Walk the answer: each character's probability is the full forward's softmax at the
            // context before it, and it is that softmax's maximum (greedy).
            let mut ctx = vocab.encode(&prompt_for(&questions[i])).expect("prompt");
            let answer = vocab.encode(&s.prediction).expect("answer");
            assert_eq!(
                answer.len(),
                s.probs.len(),
                "{k}: one probability per character"
            );
            let closing = s.end_prob.map(|p| (attnlab::data::MASK_ID, p));
            let steps = answer.iter().zip(&s.probs).map(|(&t, &p)| (t, p));
            for (tok, p) in steps.chain(closing) {
                let soft = last_softmax(&m, &ctx);
                let max = soft.iter().cloned().fold(0.0, f64::max);
                assert!(
                    (soft[tok as usize] - p as f64).abs() < 1e-4 * max.max(1e-3),
                    "{k}: question {i} at {}: {} vs the forward's {}",
                    ctx.len(),
                    p,
                    soft[tok as usize]
                );
                assert!(
                    soft[tok as usize] >= max - 1e-6,
                    "{k}: not the greedy choice"
                );
                ctx.push(tok);
            }
            let product: f64 = s.probs.iter().map(|&p| p as f64).product();
            assert!((s.confidence() - product).abs() <= 1e-12 * product.max(1e-300));
            assert!(s.mean_log_prob() <= 0.0);
            // An untrained model rarely closes its answer: then all 32 steps are the answer.
            if s.end_prob.is_none() {
                assert_eq!(s.probs.len(), EVAL_STEPS, "{k}");
            }
        }
    }
}

#[test]
fn questions_the_model_cannot_read_are_refused_with_their_number() {
    let vocab = Vocab::from_text(WIKI, "wiki.txt").expect("vocab");
    let m = model(&attnlab::Device::cpu(), &vocab, 1);
    let bad = vec![
        "Where was Ann born?".to_string(),
        "Where was Жанна born?".into(),
    ];
    let e = pollster::block_on(answer_scored(&m, &vocab, &bad)).unwrap_err();
    assert!(e.to_string().contains("question 2"), "{e}");
    let long = vec![format!("Where was {} born?", "a".repeat(100))];
    let e = pollster::block_on(answer_scored(&m, &vocab, &long)).unwrap_err();
    assert!(e.to_string().contains("at most"), "{e}");
}

#[test]
fn the_histogram_counts_right_and_wrong_apart_and_measures_their_separation() {
    let conf = [0.95, 0.85, 0.15, 0.05, 0.5, 1.0];
    let right = [true, true, false, false, true, false];
    let h = histogram(&conf, &right, 10);
    assert_eq!(h.right, vec![0, 0, 0, 0, 0, 1, 0, 0, 1, 1]);
    assert_eq!(h.wrong, vec![1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
    // Right answers beat wrong ones in 6 of 9 pairs (1.0 beats every right one).
    assert!((h.separation.unwrap() - 6.0 / 9.0).abs() < 1e-12);
    assert_eq!(histogram(&[0.3], &[true], 4).separation, None);
    let tied = histogram(&[0.5, 0.5], &[true, false], 2);
    assert_eq!(tied.separation, Some(0.5));
}

#[test]
fn the_comparison_counts_each_model_and_probes_with_the_pretrained_one() {
    let dev = attnlab::Device::cpu();
    let vocab = Vocab::from_text(WIKI, "wiki.txt").expect("vocab");
    let rows = parse_tsv_str(DEV, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    let docs = CharCorruptionDataset::new(WIKI, "wiki.txt", &vocab, 0).expect("docs");
    let (a, b) = (model(&dev, &vocab, 1), model(&dev, &vocab, 2));
    let c = pollster::block_on(compare((&a, &vocab), (&b, &vocab), &rows, None)).expect("c");
    assert_eq!(c.total, 4);
    assert!(c.probe.is_none() && c.rows.iter().all(|r| r.stored.is_none()));
    let pa = pollster::block_on(predict(&a, &vocab, &rows, "dev", &mut |_, _| {})).unwrap();
    assert_eq!(
        c.rows
            .iter()
            .map(|r| r.with_pretraining.clone())
            .collect::<Vec<_>>(),
        pa
    );
    let with_probe = pollster::block_on(compare(
        (&a, &vocab),
        (&b, &vocab),
        &rows,
        Some((&a, &vocab, docs.docs())),
    ))
    .expect("with probe");
    let p = with_probe.probe.expect("probe");
    // Three people have a document; Dora Kowalski has none and is not probed.
    assert_eq!(p.asked, 3);
    assert_eq!(with_probe.rows[3].stored, None);
    assert_eq!(p.table.iter().flatten().sum::<usize>(), 3);
    assert_eq!(
        document_of(WIKI, "Bert Quill").map(|d| &d[..11]),
        Some("Bert Quill.")
    );
    assert_eq!(document_of(WIKI, "Bert"), None);
    // A sample smaller than what can be probed is spread over it, and the same every time.
    let s = recall_sample(docs.docs(), &vocab, &rows, 2);
    assert_eq!(s.iter().map(|i| i.row).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(recall_sample(docs.docs(), &vocab, &rows, 10).len(), 3);
}

#[test]
fn names_are_grouped_by_the_generators_surname_endings() {
    assert_eq!(name_group("Dora Kowalski"), "-ski");
    assert_eq!(name_group("Ivan Petrov"), "-ov");
    assert_eq!(name_group("Nikos Papadopoulos"), "-opoulos");
    assert_eq!(name_group("Ann Vole"), "other");
    assert_eq!(name_group("Son"), "other");
    assert_eq!(name_group(""), "other");
    assert!(surname_endings()
        .windows(2)
        .all(|w| w[0].len() >= w[1].len()));
    let names: Vec<String> = ["A Ostberg", "B Kowalski", "C Nowski", "D Vole"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ans: Vec<String> = ["Oslo", "Paris", "Paris", "Rome"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let g = by_group(&names, &ans);
    assert_eq!(
        g.iter().map(|g| (g.key.as_str(), g.n)).collect::<Vec<_>>(),
        vec![("-berg", 1), ("-ski", 2), ("other", 1)]
    );
    assert_eq!(g[1].counts, vec![("Paris".to_string(), 2)]);
}

#[test]
fn invented_names_are_new_deterministic_and_look_like_the_corpus() {
    let corpus = attnlab::train::run::default_corpus(false);
    let taken: HashSet<String> = corpus
        .wiki
        .lines()
        .filter_map(|l| l.split('.').next().map(String::from))
        .collect();
    let a = invented_names(7, 60, &taken);
    assert_eq!(a, invented_names(7, 60, &taken));
    assert_ne!(a, invented_names(8, 60, &taken));
    assert!(a.iter().all(|n| !taken.contains(n)));
    assert_eq!(a.iter().collect::<HashSet<_>>().len(), 60);
    // Two of the generator's twenty surname endings are empty: most names get a group.
    let grouped = a.iter().filter(|n| name_group(n) != "other").count();
    assert!(grouped > 40, "{grouped} of 60 grouped");
}

#[test]
fn typed_names_are_checked_before_they_are_asked() {
    let vocab = Vocab::from_text(WIKI, "wiki.txt").expect("vocab");
    assert_eq!(check_name("  Ann Vole ", &vocab), Ok("Ann Vole".into()));
    assert!(check_name("   ", &vocab).unwrap_err().contains("empty"));
    let long = "a".repeat(MAX_NAME_CHARS + 1);
    assert!(check_name(&long, &vocab)
        .unwrap_err()
        .contains("characters long"));
    let e = check_name("Zoë", &vocab).unwrap_err();
    assert!(e.contains("U+00EB"), "{e}");
    assert!(check_name("🦀", &vocab).unwrap_err().contains("U+1F980"));
}
