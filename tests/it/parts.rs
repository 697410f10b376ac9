//! A run's steps taken in parts, as the page takes them (`Session::step_begin` / `step_end`), on
//! each backend, dropout on:
//! - as micro-batches of a few rows on one engine: the losses and weights of `run_steps`, up to
//!   float summation order;
//! - data-parallel on two engines (two sessions of the same run; the second gets the first's
//!   weights, computes the gradients of its part of the batch, and the first adds them in row
//!   order and updates): the same, up to summation order, and bit-identical when repeated;
//! - the parts cover every row once, in order; a step missing a part is refused, and so are parts
//!   added out of order or of the wrong size.

use attnlab::data::{generate, Vocab};
use attnlab::train::{
    Begin, Hooks, Overrides, Progress, RunKind, RunSpec, RunStart, Session, StepParts, Words,
};
use attnlab::Device;
use std::rc::Rc;

use crate::backends;
use backends::devices;

const STEPS: u64 = 4;

/// A tiny pretraining run on a generated corpus: batch 6, dropout 0.1 (the tiny preset's).
fn spec() -> RunSpec {
    RunSpec {
        kind: RunKind::Pretrain,
        variant: attnlab::model::Variant::Vanilla,
        tiny: true,
        pretrained: false,
        overrides: Overrides {
            epochs: Some(3),
            batch: Some(6),
            max_steps: Some(STEPS),
            n_layer: Some(1),
            n_head: Some(2),
            n_embd: Some(16),
            ..Overrides::default()
        },
        seed: 7,
    }
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

fn start(dev: &Rc<Device>) -> Session {
    let text = generate(3, 10).wiki;
    let s = spec();
    let vocab = Vocab::from_text(&text, "wiki.txt").expect("vocab");
    RunStart {
        spec: &s,
        words: &WORDS,
        corpus: (&text, "wiki.txt"),
        questions: (&[], ""),
        vocab,
        base: None,
    }
    .start(dev, |_| Ok(Begin::Fresh))
    .expect("start")
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    pollster::block_on(f)
}

/// The losses of `run_steps(1)` step by step, and the final weights.
fn whole(dev: &Rc<Device>) -> (Vec<f32>, Vec<f32>) {
    let mut s = start(dev);
    let mut losses = vec![];
    let clock = || 0.0;
    let mut on = |p: Progress| losses.push(p.loss);
    let mut hooks = Hooks {
        every: 1,
        clock: &clock,
        on_progress: &mut on,
        on_epoch_end: None,
    };
    for _ in 0..STEPS {
        block(s.run_steps(1, &mut hooks)).expect("step");
    }
    let w = block(s.trainer.weights_to_vec()).expect("weights");
    (losses, w)
}

/// One engine, micro-batches of `rows` rows.
fn micro(dev: &Rc<Device>, rows: usize) -> (Vec<f32>, Vec<f32>) {
    let mut s = start(dev);
    let mut losses = vec![];
    while let Some(mut p) = s.step_begin().expect("begin") {
        while s.trainer.micro_next(&mut p.micro, rows).expect("part") {}
        losses.push(block(s.step_end(p, 1.0)).expect("end").loss);
    }
    assert!(s.step_begin().expect("after the end").is_none());
    (losses, block(s.trainer.weights_to_vec()).expect("weights"))
}

/// The second engine's part: the first's weights, its step count, rows first..end.
fn helper_part(
    h: &mut Session,
    weights: &[f32],
    steps: u64,
    first: usize,
    end: usize,
) -> (Vec<f32>, f32) {
    h.trainer.weights_from_slice(weights).expect("weights");
    h.trainer.steps = steps;
    let mut p: StepParts = h.step_begin().expect("begin").expect("a step");
    h.trainer.micro_skip(&mut p.micro, first).expect("skip");
    h.trainer
        .micro_next(&mut p.micro, end - first)
        .expect("rows");
    let loss = block(p.micro.loss().to_vec_f32()).expect("loss")[0];
    // A step that left rows to another engine cannot finish here.
    assert!(
        block(h.step_end(p, 1.0)).is_err(),
        "a partial step must not update"
    );
    (block(h.trainer.grads_to_vec()).expect("grads"), loss)
}

/// Two engines, data-parallel.
fn parallel(dev: &Rc<Device>) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = (start(dev), start(dev));
    let mut losses = vec![];
    loop {
        let weights = block(a.trainer.weights_to_vec()).expect("weights");
        let steps = a.trainer.steps;
        let Some(mut p) = a.step_begin().expect("begin") else {
            break;
        };
        let parts = p.micro.parts(2);
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].0, parts[0].1, parts[1].0, parts[1].1),
            (0, parts[0].1, parts[0].1, p.rows())
        );
        let (grads, loss) = helper_part(&mut b, &weights, steps, parts[1].0, parts[1].1);
        // Out of order, or of the wrong size: refused.
        assert!(
            a.trainer
                .micro_add(&mut p.micro, parts[1].0 + 1, parts[1].1, &grads, loss)
                .is_err()
                || parts[1].0 == 0
        );
        assert!(a
            .trainer
            .micro_add(&mut p.micro, parts[0].1, parts[1].1, &grads[1..], loss)
            .is_err());
        a.trainer
            .micro_next(&mut p.micro, parts[0].1)
            .expect("own part");
        a.trainer
            .micro_add(&mut p.micro, parts[1].0, parts[1].1, &grads, loss)
            .expect("add");
        losses.push(block(a.step_end(p, 1.0)).expect("end").loss);
    }
    (losses, block(a.trainer.weights_to_vec()).expect("weights"))
}

fn rel(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-12);
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) / scale
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn micro_batches_and_two_engines_take_the_whole_steps() {
    for dev in devices() {
        let k = dev.kind();
        let (l0, w0) = whole(&dev);
        assert_eq!(l0.len(), STEPS as usize, "{k}");
        for (what, (l, w)) in [
            ("micro-batches of 2 rows", micro(&dev, 2)),
            ("two engines", parallel(&dev)),
        ] {
            assert_eq!(l.len(), l0.len(), "{k} {what}");
            for (i, (a, b)) in l0.iter().zip(&l).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4 * a.abs(),
                    "{k} {what}: step {} loss {b} vs {a}",
                    i + 1
                );
            }
            let r = rel(&w0, &w);
            assert!(r < 1e-4, "{k} {what}: weights differ by {r:e} (relative)");
        }
        let (la, wa) = parallel(&dev);
        let (lb, wb) = parallel(&dev);
        assert_eq!(bits(&la), bits(&lb), "{k}: two engines, repeated: losses");
        assert_eq!(bits(&wa), bits(&wb), "{k}: two engines, repeated: weights");
    }
}

#[test]
fn parts_cover_every_row_once_in_order() {
    let dev = Device::cpu();
    let mut s = start(&dev);
    let p = s.step_begin().expect("begin").expect("a step");
    let rows = p.rows();
    for n in 1..=8 {
        let parts = p.micro.parts(n);
        assert_eq!(parts.len(), n, "{n} parts");
        assert_eq!(parts[0].0, 0);
        assert_eq!(parts[n - 1].1, rows);
        for w in parts.windows(2) {
            assert_eq!(w[0].1, w[1].0, "{n} parts: {parts:?}");
        }
        for &(a, b) in &parts {
            assert!(a <= b, "{n} parts: {parts:?}");
        }
        if n <= rows {
            assert!(
                parts.iter().all(|&(a, b)| b > a),
                "{n} parts of {rows} rows, none empty: {parts:?}"
            );
        }
    }
    // A step whose rows are not all done is refused.
    assert!(block(s.step_end(p, 1.0)).is_err());
}
