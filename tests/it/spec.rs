//! The run's setup shared by the CLI and the page (`RunSpec`): refusals that name the setting in
//! the front end's words, run.py's presets with the overrides, and the names of kinds and variants.

use attnlab::model::{GptConfig, Variant};
use attnlab::train::{validate_model, Overrides, RunKind, RunSpec, Setting, TrainConfig, Words};

const W: Words = Words {
    epochs: "EPOCHS",
    batch: "BATCH",
    lr: "LR",
    max_steps: "STEPS",
    dropout: "DROPOUT",
    decay_epochs: "DECAY",
    model: "SIZES",
};

fn spec(o: Overrides) -> RunSpec {
    RunSpec {
        kind: RunKind::Pretrain,
        variant: Variant::Vanilla,
        tiny: true,
        pretrained: false,
        overrides: o,
        seed: 0,
    }
}

fn refusal(o: Overrides) -> String {
    match spec(o.clone()).check(&W) {
        Ok(()) => panic!("accepted {o:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn refusals_name_the_setting_in_the_front_ends_words() {
    let none = Overrides::default();
    assert!(spec(none.clone()).check(&W).is_ok());
    let cases: Vec<(Overrides, &str)> = vec![
        (
            Overrides {
                epochs: Some(0),
                ..none.clone()
            },
            "EPOCHS 0 must be at least 1 and at most 1,000,000",
        ),
        (
            Overrides {
                epochs: Some(1_000_001),
                ..none.clone()
            },
            "EPOCHS 1000001 must be at least 1 and at most 1,000,000",
        ),
        (
            Overrides {
                batch: Some(0),
                ..none.clone()
            },
            "BATCH must be at least 1",
        ),
        (
            Overrides {
                max_steps: Some(0),
                ..none.clone()
            },
            "STEPS must be at least 1",
        ),
        (
            Overrides {
                decay_epochs: Some(0),
                ..none.clone()
            },
            "DECAY 0 must be at least 1 and at most 1,000,000",
        ),
        (
            Overrides {
                decay_epochs: Some(usize::MAX),
                ..none.clone()
            },
            "DECAY 18446744073709551615 must be at least 1 and at most 1,000,000",
        ),
        (
            Overrides {
                lr: Some(-1.0),
                ..none.clone()
            },
            "LR -1 must be a positive number",
        ),
        (
            Overrides {
                lr: Some(f64::NAN),
                ..none.clone()
            },
            "LR NaN must be a positive number",
        ),
        (
            Overrides {
                lr: Some(0.0),
                ..none.clone()
            },
            "LR 0 must be a positive number",
        ),
        (
            Overrides {
                lr: Some(1e39),
                ..none.clone()
            },
            "LR 1e39 must be a positive number of at most 3.4e38",
        ),
        (
            Overrides {
                dropout: Some(1.0),
                ..none.clone()
            },
            "DROPOUT 1 must be at least 0 and below 1",
        ),
        (
            Overrides {
                dropout: Some(-0.5),
                ..none.clone()
            },
            "DROPOUT -0.5 must be at least 0",
        ),
        (
            Overrides {
                n_layer: Some(0),
                ..none.clone()
            },
            "0 layers × width 64 with 4 heads is out of range",
        ),
        (
            Overrides {
                n_layer: Some(65),
                ..none.clone()
            },
            "65 layers",
        ),
        (
            Overrides {
                n_embd: Some(4097),
                ..none.clone()
            },
            "width 4097",
        ),
    ];
    for (o, needle) in cases {
        let m = refusal(o);
        assert!(m.contains(needle), "{m:?} lacks {needle:?}");
    }
    assert!(refusal(Overrides {
        n_embd: Some(0),
        ..none
    })
    .ends_with("(from SIZES)"));
}

#[test]
fn a_model_that_does_not_hold_names_where_its_sizes_came_from() {
    let s = spec(Overrides {
        n_embd: Some(66),
        ..Overrides::default()
    });
    assert!(
        s.check(&W).is_ok(),
        "in range; the divisibility is the config's to check"
    );
    let m = validate_model(&s.model_config(10), &W)
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("not divisible") && m.ends_with("(from SIZES)"),
        "{m}"
    );
}

#[test]
fn presets_and_overrides_make_the_configurations() {
    let mut s = spec(Overrides::default());
    assert_eq!(s.train_config(2938), TrainConfig::pretrain());
    s.kind = RunKind::Finetune;
    assert_eq!(s.train_config(7).max_epochs, 75);
    s.pretrained = true;
    let tc = s.train_config(7);
    assert_eq!((tc.max_epochs, tc.batch_size), (10, 256));
    assert_eq!(tc.final_tokens, 200.0 * 7.0 * 128.0);
    s.overrides = Overrides {
        epochs: Some(3),
        batch: Some(5),
        lr: Some(1e-3),
        max_steps: Some(9),
        n_layer: Some(1),
        n_head: Some(2),
        n_embd: Some(8),
        dropout: Some(0.0),
        decay_epochs: Some(3),
    };
    let tc = s.train_config(7);
    assert_eq!(
        (tc.max_epochs, tc.batch_size, tc.learning_rate, tc.max_steps),
        (3, 5, 1e-3, Some(9))
    );
    // The cosine's floor moved from run.py's 200 epochs' worth to the run's own 3.
    assert_eq!(tc.final_tokens, 3.0 * 7.0 * 128.0);
    // A run of those epochs ends at the floor (0.1×), on a corpus long enough to be past warmup.
    let tc = s.train_config(2000);
    let end = 3.0 * 2000.0 * 128.0;
    assert!((tc.lr_at(end) - 1e-4).abs() < 1e-12, "{}", tc.lr_at(end));
    let c = s.model_config(30);
    assert_eq!((c.n_layer, c.n_head, c.n_embd, c.vocab_size), (1, 2, 8, 30));
    assert_eq!((c.embd_pdrop, c.resid_pdrop, c.attn_pdrop), (0.0, 0.0, 0.0));
    s.tiny = false;
    s.overrides = Overrides::default();
    assert_eq!(
        s.model_config(30),
        GptConfig::assignment(Variant::Vanilla, 30)
    );
}

#[test]
fn kinds_and_variants_come_from_their_names() {
    assert_eq!(RunKind::from_name("finetune").ok(), Some(RunKind::Finetune));
    assert_eq!(RunKind::from_name("pretrain").ok(), Some(RunKind::Pretrain));
    let m = RunKind::from_name("train").unwrap_err().to_string();
    assert!(
        m.contains("'train'") && m.contains("pretrain or finetune"),
        "{m}"
    );
    assert_eq!(
        Variant::from_name("synthesizer").ok(),
        Some(Variant::Synthesizer)
    );
    let m = Variant::from_name("linear").unwrap_err().to_string();
    assert!(
        m.contains("'linear'") && m.contains("vanilla or synthesizer"),
        "{m}"
    );
}

/// The page's form words each refusal once: the range of a learning rate starts with its noun, so
/// the noun is not said twice ("give a positive number of a positive number of …" before).
#[test]
fn form_refusals_say_the_noun_once() {
    let lr = Setting::Lr.refuse_field("pretrain learning rate", "-1");
    assert!(
        lr.starts_with("pretrain learning rate is “-1”; give a positive number of at most 3.4e38"),
        "{lr}"
    );
    let e = Setting::Epochs.refuse_field("pretrain epochs", "0");
    assert!(
        e.starts_with("pretrain epochs is “0”; give a whole number of at least 1 and at most"),
        "{e}"
    );
}
