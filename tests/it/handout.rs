//! The handout's commands, unchanged apart from the CI overrides (`--tiny`, and step, batch and
//! question limits, because lavapipe trains at about a thousand tokens a second), run by the built
//! binary on the course's files, read at run time from ../shared/data/cs224n-a5. Skipped, saying
//! so, when that folder is absent. Nothing is copied out of it: every output goes to a temp dir.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_attnlab");
/// Appended to every training or evaluation command.
const CI: &[&str] = &["--tiny", "--max_steps", "2", "--batch_size", "4"];
const QUESTIONS: usize = 4;

fn data_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/cs224n-a5");
    d.join("wiki.txt").exists().then_some(d)
}

/// Run `attnlab <args>` in `dir` with `{D}` replaced by the data folder; returns stdout.
fn attnlab(dir: &Path, data: &Path, args: &str, extra: &[&str]) -> String {
    let d = data.to_string_lossy();
    let argv: Vec<String> = args
        .split_whitespace()
        .map(|a| a.replace("{D}", &d))
        .chain(extra.iter().map(|s| s.to_string()))
        .collect();
    let out = Command::new(BIN)
        .args(&argv)
        .current_dir(dir)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run the binary");
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    println!("$ attnlab {}\n{so}{se}", argv.join(" "));
    assert!(
        out.status.success(),
        "attnlab {} failed:\n{se}",
        argv.join(" ")
    );
    so
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .count()
}

fn run_variant(v: &str, with_test_set: bool) {
    let Some(data) = data_dir() else {
        println!("skipping: ../shared/data/cs224n-a5 not found (the course's files are read at run time only)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("attnlab-handout-{v}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let q = QUESTIONS.to_string();
    let eval: Vec<&str> = CI.iter().copied().chain(["--max_questions", &q]).collect();
    // Finetune without pretraining, then evaluate on dev (and test).
    let out = attnlab(
        &dir,
        &data,
        &format!(
            "finetune {v} {{D}}/wiki.txt --writing_params_path \
             {v}.model.params --finetune_corpus_path {{D}}/birth_places_train.tsv"
        ),
        CI,
    );
    assert!(out.contains("saved"), "{out}");
    let out = attnlab(
        &dir,
        &data,
        &format!(
            "evaluate {v} {{D}}/wiki.txt --reading_params_path \
             {v}.model.params --eval_corpus_path {{D}}/birth_dev.tsv --outputs_path \
             {v}.nopretrain.dev.predictions"
        ),
        &eval,
    );
    assert!(out.contains(&format!("out of {QUESTIONS}.0: ")), "{out}");
    assert_eq!(
        lines(&dir.join(format!("{v}.nopretrain.dev.predictions"))),
        QUESTIONS
    );
    if with_test_set {
        let out = attnlab(
            &dir,
            &data,
            &format!(
                "evaluate {v} {{D}}/wiki.txt --reading_params_path \
                 {v}.model.params --eval_corpus_path {{D}}/birth_test_inputs.tsv --outputs_path \
                 {v}.nopretrain.test.predictions"
            ),
            &eval,
        );
        assert!(out.contains("No gold birth places provided"), "{out}");
        assert_eq!(
            lines(&dir.join(format!("{v}.nopretrain.test.predictions"))),
            QUESTIONS
        );
    }
    // Pretrain, finetune from it, evaluate.
    attnlab(
        &dir,
        &data,
        &format!("pretrain {v} {{D}}/wiki.txt --writing_params_path {v}.pretrain.params"),
        CI,
    );
    attnlab(
        &dir,
        &data,
        &format!(
            "finetune {v} {{D}}/wiki.txt --reading_params_path \
             {v}.pretrain.params --writing_params_path {v}.finetune.params --finetune_corpus_path \
             {{D}}/birth_places_train.tsv"
        ),
        CI,
    );
    let out = attnlab(
        &dir,
        &data,
        &format!(
            "evaluate {v} {{D}}/wiki.txt --reading_params_path \
             {v}.finetune.params --eval_corpus_path {{D}}/birth_dev.tsv --outputs_path \
             {v}.pretrain.dev.predictions"
        ),
        &eval,
    );
    assert!(out.contains(&format!("out of {QUESTIONS}.0: ")), "{out}");
    assert_eq!(
        lines(&dir.join(format!("{v}.pretrain.dev.predictions"))),
        QUESTIONS
    );
    if with_test_set {
        attnlab(
            &dir,
            &data,
            &format!(
                "evaluate {v} {{D}}/wiki.txt --reading_params_path \
                 {v}.finetune.params --eval_corpus_path {{D}}/birth_test_inputs.tsv --outputs_path \
                 {v}.pretrain.test.predictions"
            ),
            &eval,
        );
        assert_eq!(
            lines(&dir.join(format!("{v}.pretrain.test.predictions"))),
            QUESTIONS
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vanilla_handout_commands_run_on_the_course_files() {
    run_variant("vanilla", true);
}

#[test]
fn synthesizer_handout_commands_run_on_the_course_files() {
    run_variant("synthesizer", false);
}

#[test]
fn london_baseline_on_the_course_dev_set_is_five_percent() {
    let Some(data) = data_dir() else {
        println!("skipping: ../shared/data/cs224n-a5 not found");
        return;
    };
    let dir = std::env::temp_dir();
    let out = attnlab(
        &dir,
        &data,
        "london --eval_corpus_path {D}/birth_dev.tsv",
        &[],
    );
    assert_eq!(out.trim(), "Correct: 25.0 out of 500.0: 5.0%");
}
