//! The learning rate each step runs at, as the reference's trainer does it: the optimizer starts at
//! `config.learning_rate` (the first step is not at the warmup's lr_at(0) = 0), and after every step
//! the rate becomes lr_at(tokens counted so far), including after a resume. On each backend.

use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::Device;
use std::rc::Rc;

use crate::backends;
use backends::devices;

#[test]
fn the_first_step_runs_at_the_configured_rate_then_the_schedule_takes_over() {
    for dev in devices() {
        check(&dev);
    }
}

fn check(dev: &Rc<Device>) {
    let kind = dev.kind();
    let (rows, t) = (2, 127);
    let cfg = TrainConfig::pretrain();
    assert_eq!(cfg.lr_at(0.0), 0.0, "the warmup starts at zero");
    let model = Gpt::new(dev, GptConfig::tiny(Variant::Vanilla, 20), 1).expect("model");
    let mut tr = Trainer::new(model, cfg.clone(), 0).expect("trainer");
    assert_eq!(
        tr.lr, 6e-3,
        "{kind}: the reference's first step uses config.learning_rate"
    );

    // A step at that rate moves the weights (at lr 0, AdamW with decay would leave them unchanged).
    let before = tr.model.params[0].var.value().read().expect("read");
    let x: Vec<u32> = (0..rows * t).map(|i| (i % 17 + 2) as u32).collect();
    tr.step(&x, &x, rows, t)
        .expect("step")
        .read()
        .expect("loss");
    let after = tr.model.params[0].var.value().read().expect("read");
    assert!(
        before.iter().zip(&after).any(|(a, b)| a != b),
        "{kind}: the first step did not move the weights"
    );
    assert_eq!(tr.lr, cfg.lr_at((rows * t) as f64), "{kind}");

    // A saved state from before any step resumes at the configured rate too; later ones on schedule.
    let fresh = Trainer::new(
        Gpt::new(dev, GptConfig::tiny(Variant::Vanilla, 20), 1).expect("model"),
        cfg.clone(),
        0,
    )
    .expect("trainer");
    for (tr, want) in [(&fresh, 6e-3), (&tr, cfg.lr_at((rows * t) as f64))] {
        let vocab: String = (0..20u8).map(|i| char::from(b'a' + i)).collect();
        let bytes = pollster::block_on(tr.state_to_bytes(&vocab)).expect("state");
        let model = Gpt::new(dev, GptConfig::tiny(Variant::Vanilla, 20), 9).expect("model");
        let back = Trainer::resume(model, cfg.clone(), &bytes, "state").expect("resume");
        assert_eq!(back.lr, want, "{kind}: the rate after a resume");
    }
}
