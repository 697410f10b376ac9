//! The run API both front ends use (`RunSpec` + `Session`), on each backend: a run driven in chunks
//! of `run_steps(n)` takes exactly the steps of one uninterrupted run (the same losses and
//! bit-identical weights), reports the run's own total and epoch ends, and a saved state resumed
//! through `Begin::Resume` finishes with the uninterrupted run's weights; plus the step counts and
//! the memory refusal that comes before any weights are made; a finished run's model holding its
//! weights only; and the schedule's phases, counted without running, step by step the trainer's own
//! rates.

use attnlab::data::{generate, Vocab};
use attnlab::model::checkpoint;
use attnlab::train::{
    vocab_of_checkpoint, Begin, Hooks, Overrides, Progress, RunKind, RunSpec, RunStart, Session,
    Words,
};
use attnlab::{Device, Error};
use std::rc::Rc;

use crate::backends;
use backends::devices;

/// A tiny pretraining run on a generated corpus: batch 4, 2 epochs.
fn spec(max_steps: Option<u64>) -> RunSpec {
    RunSpec {
        kind: RunKind::Pretrain,
        variant: attnlab::model::Variant::Vanilla,
        tiny: true,
        pretrained: false,
        overrides: Overrides {
            epochs: Some(2),
            batch: Some(4),
            max_steps,
            n_layer: Some(1),
            n_head: Some(2),
            n_embd: Some(16),
            ..Overrides::default()
        },
        seed: 5,
    }
}

fn corpus() -> String {
    generate(3, 10).wiki
}

const WORDS: Words = Words {
    epochs: "epochs",
    batch: "batch",
    lr: "learning rate",
    max_steps: "max steps",
    dropout: "dropout",
    decay_epochs: "learning rate's floor at epoch",
    model: "the test's sizes",
};

/// What the front ends give `RunStart` for a pretraining run on `text`.
fn run_start<'a>(s: &'a RunSpec, text: &'a str, vocab: Vocab) -> RunStart<'a> {
    RunStart {
        spec: s,
        words: &WORDS,
        corpus: (text, "wiki.txt"),
        questions: (&[], ""),
        vocab,
        base: None,
    }
}

/// A session as the front ends start one (`RunStart`); `state`: resume from these bytes.
fn start(dev: &Rc<Device>, s: &RunSpec, state: Option<&[u8]>) -> Session {
    let text = corpus();
    let vocab = match state {
        Some(b) => vocab_of_checkpoint(dev, b, "state").expect("vocab of the state"),
        None => Vocab::from_text(&text, "wiki.txt").expect("vocab"),
    };
    run_start(s, &text, vocab)
        .start(dev, |cfg| {
            Ok(match state {
                None => Begin::Fresh,
                Some(bytes) => Begin::Resume {
                    model: checkpoint::from_bytes(dev, bytes, Some(cfg), "state")?.0,
                    bytes: bytes.to_vec(),
                    what: "state".into(),
                },
            })
        })
        .expect("start")
}

/// Drive `s` in chunks of the given sizes (then to the end); every report and the epoch-end calls.
fn drive(s: &mut Session, chunks: &[u64]) -> (Vec<Progress>, Vec<u64>) {
    let mut reports = vec![];
    let mut ends = vec![];
    {
        let clock = || 0.0;
        let mut on = |p: Progress| reports.push(p);
        let mut at_end = |t: &attnlab::train::Trainer| -> attnlab::Result<()> {
            ends.push(t.steps);
            Ok(())
        };
        let mut hooks = Hooks {
            every: 3,
            clock: &clock,
            on_progress: &mut on,
            on_epoch_end: Some(&mut at_end),
        };
        for &n in chunks {
            pollster::block_on(s.run_steps(n, &mut hooks)).expect("chunk");
        }
        pollster::block_on(s.run_to_end(&mut hooks)).expect("rest");
    }
    (reports, ends)
}

/// Every parameter's name and values, bit for bit.
fn weights(s: &Session) -> Vec<(String, Vec<u32>)> {
    s.trainer
        .model
        .params
        .iter()
        .map(|p| {
            let v = pollster::block_on(p.var.value().to_vec_f32()).expect("read");
            (p.name.clone(), v.iter().map(|x| x.to_bits()).collect())
        })
        .collect()
}

#[test]
fn chunks_take_the_steps_of_one_run_and_report_the_runs_total() {
    for dev in devices() {
        let k = dev.kind();
        let mut whole = start(&dev, &spec(None), None);
        let per_epoch = whole.steps_per_epoch() as u64;
        let total = whole.total_steps();
        assert_eq!(total, 2 * per_epoch, "{k}");
        assert!(
            per_epoch >= 3,
            "{k}: the chunks below must cross an epoch edge"
        );
        let (one, one_ends) = drive(&mut whole, &[]);
        assert!(whole.done(), "{k}");

        let mut parts = start(&dev, &spec(None), None);
        let (two, two_ends) = drive(&mut parts, &[1, 2, 0, 2]);
        assert_eq!(parts.steps(), total, "{k}");
        assert!(
            weights(&parts) == weights(&whole),
            "{k}: chunked weights differ"
        );

        // Every step the whole run read back has the same loss in the chunked run, which also
        // read the loss at each chunk's end (steps 1, 3, 5).
        for p in &one {
            let q = two
                .iter()
                .find(|q| q.step == p.step)
                .expect("same readbacks");
            assert_eq!(
                (q.loss, q.lr, q.epoch),
                (p.loss, p.lr, p.epoch),
                "{k}: step {}",
                p.step
            );
        }
        for step in [1, 3, 5] {
            assert!(
                two.iter().any(|q| q.step == step),
                "{k}: no report at step {step}"
            );
        }
        assert!(
            two.iter().all(|q| q.total_steps == total),
            "{k}: chunk totals"
        );
        // Epoch ends are the epochs' and the run's, not the chunks'.
        let epoch_ends: Vec<u64> = two.iter().filter(|q| q.epoch_end).map(|q| q.step).collect();
        assert_eq!(epoch_ends, vec![per_epoch, total], "{k}");
        assert_eq!(one_ends, vec![per_epoch, total], "{k}");
        assert_eq!(two_ends, one_ends, "{k}");
        // A finished run takes no more steps.
        let (more, _) = drive(&mut parts, &[4]);
        assert!(more.is_empty() && parts.steps() == total, "{k}");
    }
}

#[test]
fn a_saved_state_resumes_to_the_uninterrupted_weights() {
    for dev in devices() {
        let k = dev.kind();
        let mut whole = start(&dev, &spec(None), None);
        drive(&mut whole, &[]);

        let mut first = start(&dev, &spec(None), None);
        pollster::block_on(first.run_steps(
            4,
            &mut Hooks {
                every: 100,
                clock: &|| 0.0,
                on_progress: &mut |_| {},
                on_epoch_end: None,
            },
        ))
        .expect("first part");
        let state = pollster::block_on(first.state_bytes()).expect("state");
        drop(first);
        let mut rest = start(&dev, &spec(None), Some(&state));
        assert_eq!(rest.steps(), 4, "{k}");
        assert_eq!(
            rest.vocab.itos, whole.vocab.itos,
            "{k}: vocabulary from the state"
        );
        let (reports, _) = drive(&mut rest, &[]);
        assert_eq!(reports.first().map(|p| p.step), Some(6), "{k}");
        assert!(
            weights(&rest) == weights(&whole),
            "{k}: resumed weights differ"
        );
    }
}

#[test]
fn max_steps_ends_the_run_early_and_too_big_a_model_is_refused_before_any_weights() {
    let dev = Device::cpu();
    let mut s = start(&dev, &spec(Some(2)), None);
    assert_eq!(s.total_steps(), 2);
    let (reports, ends) = drive(&mut s, &[]);
    assert_eq!(
        reports.last().map(|p| (p.step, p.epoch_end)),
        Some((2, true))
    );
    assert_eq!(ends, vec![2]);

    let mut big = spec(None);
    big.overrides.n_layer = Some(64);
    big.overrides.n_embd = Some(4096);
    big.overrides.batch = Some(100_000);
    let text = corpus();
    let vocab = Vocab::from_text(&text, "wiki.txt").expect("vocab");
    let r =
        run_start(&big, &text, vocab).start(&dev, |_| Err(Error::Msg("begin was called".into())));
    match r {
        Ok(_) => panic!("a 64 × 4096 model at batch 100000 was accepted"),
        Err(e) => assert!(!e.to_string().contains("begin was called"), "{e}"),
    }
}

/// The share of positions a packed step runs, which the page scales its full-row step times by:
/// about half for pretraining's span corruption (truncated documents, the rest PAD), much less
/// for finetuning's short questions; a file of full 127-character answers would be near 1.
/// A finished run's model, as the page keeps it, holds its weights and nothing else on the device:
/// the gradient buffers the training used go with the run (they doubled what a kept model held, and
/// the page's memory check counts what the loaded models hold).
#[test]
fn a_finished_runs_model_holds_only_its_weights() {
    for dev in devices() {
        let k = dev.kind();
        let before = dev.stats().bytes_in_use;
        let mut s = start(&dev, &spec(Some(2)), None);
        drive(&mut s, &[]);
        let (model, _) = s.into_model();
        assert!(
            model.params.iter().all(|p| p.var.grad().is_none()),
            "{k}: the kept model still holds gradients"
        );
        let held = dev.stats().bytes_in_use - before;
        // The same weights read from its checkpoint: what a model holds (the pool rounds sizes).
        let bytes = pollster::block_on(checkpoint::to_bytes(&model, "ab")).expect("bytes");
        let at = dev.stats().bytes_in_use;
        let (copy, _) = checkpoint::from_bytes(&dev, &bytes, None, "copy").expect("copy");
        let weights = dev.stats().bytes_in_use - at;
        assert!(
            copy.num_params() == model.num_params() && weights > 0,
            "{k}"
        );
        assert_eq!(
            held, weights,
            "{k}: the kept model holds {held} bytes, its weights {weights}"
        );
    }
}

#[test]
fn the_packed_share_of_the_built_in_corpus() {
    let c = attnlab::train::run::default_corpus(false);
    let vocab = Vocab::from_text(&c.wiki, "wiki.txt").expect("vocab");
    let data = |kind| {
        let s = RunSpec { kind, ..spec(None) };
        attnlab::train::RunData::new(
            &s,
            &c.wiki,
            "wiki.txt",
            (c.train_tsv.as_bytes(), "train.tsv"),
            &vocab,
        )
        .expect("data")
    };
    let pre = data(RunKind::Pretrain).packed_fill(1000).expect("fill");
    let fine = data(RunKind::Finetune).packed_fill(1000).expect("fill");
    println!("packed share: pretraining {pre:.3}, finetuning {fine:.3}");
    assert!((0.3..0.7).contains(&pre), "pretraining {pre}");
    assert!(
        (0.1..0.5).contains(&fine) && fine < pre,
        "finetuning {fine}, pretraining {pre}"
    );
    // The first examples only: the share of one example is its target length over 127.
    let one = data(RunKind::Finetune).packed_fill(1).expect("fill");
    let (_, y) = attnlab::data::NameDataset::new(c.train_tsv.as_bytes(), "train.tsv", &vocab)
        .expect("names")
        .get(0)
        .expect("example");
    let last = y.iter().rposition(|&t| t != 0).expect("a target") + 1;
    assert_eq!(one, last as f64 / y.len() as f64);
}

#[test]
fn the_schedule_phases_follow_the_trainer_step_by_step() {
    // Batch 3 leaves a short last batch each epoch. `TrainConfig::phases` counts each step's
    // tokens without running it; here every count, and so every rate, must be the trainer's own.
    for dev in devices() {
        let k = dev.kind();
        let mut s = spec(None);
        (s.overrides.batch, s.overrides.epochs) = (Some(3), Some(3));
        let mut run = start(&dev, &s, None);
        let (examples, total) = (run.data.len(), run.total_steps());
        assert!(
            examples % 3 != 0,
            "{k}: {examples} examples leave no short batch"
        );
        let cfg = run.trainer.cfg.clone();
        let (clock, mut warm) = (|| 0.0, None);
        for n in 1..=total {
            if n > 1 && run.trainer.tokens < cfg.warmup_tokens {
                warm = Some(n);
            }
            let mut on = |_: Progress| {};
            let mut hooks = Hooks {
                every: 1,
                clock: &clock,
                on_progress: &mut on,
                on_epoch_end: None,
            };
            pollster::block_on(run.run_steps(1, &mut hooks)).expect("step");
            let ph = cfg.phases(examples, n);
            assert_eq!(ph.last_lr, run.trainer.lr, "{k}: the rate after step {n}");
        }
        assert!(
            warm.is_some(),
            "{k}: the test's run should warm up for some steps"
        );
        assert_eq!(run.phases().warm_until, warm, "{k}");
    }
}
