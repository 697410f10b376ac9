//! Bad versions of every input that tests/it/cli/ and tests/it/data/ do not already cover
//! (TESTING.md maps each row of its table to a test): empty or PAD/MASK-holding corpora, extra TSV columns, an eval
//! file with no rows, a gold file without answers, impossible flags and model shapes. Each → exit 1,
//! a message naming the file/line or flag and the fix, no panic, and no output file.

use attnlab::data::{CorpusSizes, MASK_CHAR, PAD_CHAR};
use attnlab::model::{GptConfig, Variant, MAX_BLOCK_SIZE};
use std::path::Path;

use crate::common;
use common::run;

fn dir(tag: &str) -> common::Scratch {
    common::corpus_dir(
        "inputs",
        tag,
        9,
        CorpusSizes {
            train: 6,
            dev: 3,
            test: 2,
        },
    )
}

/// Exit code 1, every needle in stderr, no panic, and `output` not written.
fn refused(d: &Path, args: &[&str], needles: &[&str], output: &str) {
    common::refused(d, args, 1, needles);
    assert!(!d.join(output).exists(), "{output} was written");
    common::no_tmp_left(d);
}

#[test]
fn bad_corpora_are_refused_naming_the_file_and_line() {
    let d = dir("corpus");
    std::fs::write(d.join("empty.txt"), "").expect("write");
    refused(
        &d,
        &[
            "pretrain",
            "vanilla",
            "empty.txt",
            "--tiny",
            "--writing_params_path",
            "out.st",
        ],
        &["empty.txt", "empty"],
        "out.st",
    );
    for (name, bad) in [("pad.txt", PAD_CHAR), ("mask.txt", MASK_CHAR)] {
        std::fs::write(
            d.join(name),
            format!("Ada was born in Lima.\nBo{bad} was born in Oslo.\n"),
        )
        .expect("write");
        refused(
            &d,
            &[
                "pretrain",
                "vanilla",
                name,
                "--tiny",
                "--writing_params_path",
                "out.st",
            ],
            &[&format!("{name}:2")],
            "out.st",
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_question_files_are_refused_naming_the_file_and_line() {
    let d = dir("tsv");
    std::fs::write(
        d.join("cols.tsv"),
        "Where was A born?\tLima\nWhere was B born?\tOslo\textra\n",
    )
    .expect("write");
    refused(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "cols.tsv",
            "--writing_params_path",
            "out.st",
        ],
        &["cols.tsv:2", "3 columns"],
        "out.st",
    );
    // An eval file with no rows: refused before any checkpoint is read.
    std::fs::write(d.join("none.tsv"), "\n\n").expect("write");
    refused(
        &d,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "missing.st",
            "--eval_corpus_path",
            "none.tsv",
            "--outputs_path",
            "pred.txt",
        ],
        &["none.tsv", "empty"],
        "pred.txt",
    );
    refused(
        &d,
        &[
            "london",
            "--eval_corpus_path",
            "none.tsv",
            "--outputs_path",
            "pred.txt",
        ],
        &["none.tsv", "empty"],
        "pred.txt",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// As the reference's `sample()`, evaluate crops a question longer than the block to its last
/// `block_size` characters at each step: it gets a prediction, not a refusal.
#[test]
fn an_over_long_question_is_cropped_in_evaluate() {
    let d = dir("long");
    let o = run(
        &d,
        &[
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_steps",
            "1",
            "--batch_size",
            "2",
            "--writing_params_path",
            "m.st",
        ],
    );
    assert!(o.status.success());
    let q = format!("Where was {} born?\tParis\n", "a".repeat(200));
    std::fs::write(d.join("long.tsv"), q).expect("write");
    let o = run(
        &d,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "m.st",
            "--eval_corpus_path",
            "long.tsv",
            "--outputs_path",
            "p.txt",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = std::fs::read_to_string(d.join("p.txt")).expect("predictions");
    assert_eq!(p.lines().count(), 1, "{p:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The reference's behaviour: a gold file without answers gets predictions and
/// "No gold birth places provided", not an accuracy and not an error.
#[test]
fn a_gold_file_without_answers_gets_predictions_and_no_score() {
    let d = dir("gold");
    let o = run(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "train.tsv",
            "--writing_params_path",
            "m.st",
            "--max_steps",
            "1",
            "--batch_size",
            "2",
        ],
    );
    assert!(o.status.success());
    let questions: String = std::fs::read_to_string(d.join("test.tsv"))
        .expect("read")
        .lines()
        .map(|l| format!("{}\n", l.split('\t').next().unwrap_or(l)))
        .collect();
    std::fs::write(d.join("questions.tsv"), &questions).expect("write");
    let o = run(
        &d,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "m.st",
            "--eval_corpus_path",
            "questions.tsv",
            "--outputs_path",
            "pred.txt",
        ],
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("No gold birth places provided"));
    let pred = std::fs::read_to_string(d.join("pred.txt")).expect("predictions");
    assert_eq!(pred.lines().count(), questions.lines().count());
    // A checkpoint that does not exist, and a plain checkpoint given where a resume state belongs.
    refused(
        &d,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "missing.st",
            "--eval_corpus_path",
            "questions.tsv",
            "--outputs_path",
            "pred2.txt",
        ],
        &["missing.st"],
        "pred2.txt",
    );
    refused(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "train.tsv",
            "--writing_params_path",
            "m2.st",
            "--resume",
            "m.st",
        ],
        &["m.st"],
        "m2.st",
    );
    let o = run(&d, &["london", "--eval_corpus_path", "questions.tsv"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("No gold birth places provided"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn impossible_flags_are_refused_naming_the_flag() {
    let d = dir("flags");
    let base = [
        "finetune",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--finetune_corpus_path",
        "train.tsv",
        "--writing_params_path",
        "out.st",
    ];
    for (extra, needle) in [
        (&["--batch_size", "0"][..], "--batch_size"),
        (&["--max_epochs", "0"][..], "--max_epochs"),
        (&["--max_steps", "0"][..], "--max_steps"),
        (&["--lr_decay_epochs", "0"][..], "--lr_decay_epochs"),
        (&["--learning_rate=-1"][..], "--learning_rate"),
        (&["--learning_rate", "NaN"][..], "--learning_rate"),
        // A hyphen value reaches the range check (clap read "-inf" as a flag "-i").
        (
            &["--learning_rate", "-inf"][..],
            "--learning_rate -inf must be a positive number",
        ),
        (
            &["--dropout", "-0.5"][..],
            "--dropout -0.5 must be at least 0",
        ),
        (&["--batch_size", "-3"][..], "-3"),
        (&["--batch_size", "1e3"][..], "1e3"),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let o = run(&d, &args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert!(
            e.contains(needle),
            "stderr of {args:?} lacks {needle:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
        assert!(!d.join("out.st").exists());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn impossible_model_shapes_are_refused_with_the_value_to_change() {
    let ok = GptConfig::tiny(Variant::Vanilla, 256);
    assert!(ok.validate().is_ok());
    let max = MAX_BLOCK_SIZE.to_string();
    let beyond = ["block_size", max.as_str()];
    let cases: Vec<(GptConfig, &[&str])> = vec![
        (
            GptConfig {
                n_embd: 66,
                ..ok.clone()
            },
            &["66", "not divisible", "4"],
        ),
        (
            GptConfig {
                n_head: 0,
                ..ok.clone()
            },
            &["n_head = 0"],
        ),
        (
            GptConfig {
                n_layer: 0,
                ..ok.clone()
            },
            &["n_layer"],
        ),
        (
            GptConfig {
                block_size: 1,
                ..ok.clone()
            },
            &["block_size"],
        ),
        (
            GptConfig {
                block_size: MAX_BLOCK_SIZE + 1,
                ..ok.clone()
            },
            &beyond,
        ),
        (
            GptConfig {
                attn_pdrop: 1.0,
                ..ok.clone()
            },
            &["attn_pdrop"],
        ),
        (
            GptConfig {
                resid_pdrop: f32::NAN,
                ..ok.clone()
            },
            &["resid_pdrop"],
        ),
    ];
    for (cfg, needles) in cases {
        let msg = match cfg.validate() {
            Ok(()) => panic!("accepted {needles:?}"),
            Err(e) => e.to_string(),
        };
        for n in needles {
            assert!(msg.contains(n), "{msg:?} lacks {n:?}");
        }
    }
}
