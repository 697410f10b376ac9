//! User errors: exit code 1 (2 for a usage error, as argparse), a message naming the file, line
//! and fix, no output file left behind, and a failed run never overwrites a good checkpoint.

use super::{corpus_dir, stderr};
use crate::common::{self, no_tmp_left, run};
use attnlab::data::Vocab;
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::Device;
use std::path::Path;

/// Exit code 1, a message naming `needle`, no output file left behind (checkpoints.rs uses it too).
pub fn fails(dir: &Path, args: &[&str], needle: &str, output: &str) {
    fails_with(dir, args, needle, output, 1);
}

/// A usage error (a flag's value that is not a number, an unknown function): exit code 2, as
/// run.py's argparse, and the same message and no output.
fn usage(dir: &Path, args: &[&str], needle: &str, output: &str) {
    fails_with(dir, args, needle, output, 2);
}

fn fails_with(dir: &Path, args: &[&str], needle: &str, output: &str, code: i32) {
    common::refused(dir, args, code, &[needle]);
    assert!(!dir.join(output).exists(), "{output} was written");
    no_tmp_left(dir);
}

#[test]
fn user_errors_exit_1_with_a_message_and_no_output() {
    let dir = corpus_dir("errors");
    fails(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "nope.txt",
            "--writing_params_path",
            "out.st",
        ],
        "nope.txt",
        "out.st",
    );
    std::fs::write(
        dir.join("bad.tsv"),
        "Where was A B born?\tParis\nWhere was C D born? Rome\n",
    )
    .expect("write");
    fails(
        &dir,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "bad.tsv",
            "--writing_params_path",
            "out.st",
        ],
        "bad.tsv:2",
        "out.st",
    );
    usage(
        &dir,
        &["pretrain", "vanilla", "--max_epochs", "abc"],
        "abc",
        "out.st",
    );
    usage(&dir, &["train", "vanilla"], "train", "out.st");
    // A negative number is the flag's value (not taken for a flag), refused by its range.
    fails(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "--learning_rate",
            "-1",
            "--writing_params_path",
            "out.st",
        ],
        "--learning_rate -1 must be a positive number",
        "out.st",
    );
    fails(
        &dir,
        &["pretrain", "vanilla", "wiki.txt"],
        "--writing_params_path",
        "out.st",
    );
    fails(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--writing_params_path",
            "no/such/dir/out.st",
        ],
        "does not exist",
        "out.st",
    );

    // A synthesizer checkpoint (untrained, written through the library) read as vanilla.
    let wiki = std::fs::read_to_string(dir.join("wiki.txt")).expect("read");
    let vocab = Vocab::from_text(&wiki, "wiki.txt").expect("vocab");
    let dev = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let synth =
        Gpt::new(&dev, GptConfig::tiny(Variant::Synthesizer, vocab.len()), 1).expect("model");
    let itos: String = vocab.itos.iter().collect();
    let bytes = pollster::block_on(checkpoint::to_bytes(&synth, &itos)).expect("bytes");
    std::fs::write(dir.join("synth.st"), bytes).expect("write");
    fails(
        &dir,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "synth.st",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ],
        "synthesizer",
        "pred.txt",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_files_name_the_file_and_line_and_a_failed_run_keeps_the_old_checkpoint() {
    let dir = corpus_dir("badfiles");
    // A question too long for the block.
    std::fs::write(
        dir.join("long.tsv"),
        format!("Where was {} born?\tRome\n", "A".repeat(130)),
    )
    .expect("write");
    fails(
        &dir,
        &[
            "finetune", "vanilla", "wiki.txt", "--tiny", "--finetune_corpus_path", "long.tsv",
            "--writing_params_path", "out.st",
        ],
        "long.tsv:1: question + answer + 2 separators is 152 characters, more than the block size 128",
        "out.st",
    );
    // Not UTF-8, and a folder where a file belongs.
    std::fs::write(dir.join("bin.txt"), [0xffu8, 0xfe, b'a']).expect("write");
    fails(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "bin.txt",
            "--writing_params_path",
            "out.st",
        ],
        "bin.txt:1:1: invalid UTF-8 at column 1",
        "out.st",
    );
    std::fs::create_dir_all(dir.join("folder")).expect("mkdir");
    fails(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "folder",
            "--writing_params_path",
            "out.st",
        ],
        "cannot read folder",
        "out.st",
    );
    // A good checkpoint, then a question with a character outside the vocabulary.
    let o = run(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_steps",
            "1",
            "--writing_params_path",
            "good.st",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let good = std::fs::read(dir.join("good.st")).expect("read");
    std::fs::write(
        dir.join("oov.tsv"),
        "Where was A B born?\tRome\nWhere was \u{3a9} born?\tRome\n",
    )
    .expect("write");
    // Evaluate skips that question, counts it as wrong and names the character once, with its
    // file, line and column (the page's Evaluate says the same line); the other is answered.
    let o = run(
        &dir,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "good.st",
            "--eval_corpus_path",
            "oov.tsv",
            "--outputs_path",
            "pred.txt",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(
            "1 question was not asked because the model's vocabulary lacks '\u{3a9}' (U+03A9, \
             first at oov.tsv line 2, column 11); it counts as wrong"
        ),
        "{said}"
    );
    assert!(said.contains("out of 2.0"), "{said}");
    let preds = std::fs::read_to_string(dir.join("pred.txt")).expect("predictions");
    assert_eq!(preds.lines().count(), 2, "{preds:?}");
    assert_eq!(preds.lines().nth(1), Some(""), "{preds:?}");
    // Training that diverges stops with a message and leaves the checkpoint it would replace
    // (read from a copy: an output may not be one of the inputs).
    std::fs::copy(dir.join("good.st"), dir.join("start.st")).expect("copy");
    let o = run(
        &dir,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "train.tsv",
            "--reading_params_path",
            "start.st",
            "--writing_params_path",
            "good.st",
            "--learning_rate",
            "1e30",
            "--batch_size",
            "2",
            "--max_epochs",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("training stopped: the loss became"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("good.st")).expect("read"), good);
    no_tmp_left(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `probe --predictions_path` given the questions file by mistake (a tab on its lines, where a
/// predictions file has one place a line) is refused naming the line, instead of counting every
/// line as a wrong answer.
#[test]
fn probe_refuses_a_questions_file_as_predictions() {
    let dir = corpus_dir("probe-preds");
    let o = run(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_steps",
            "1",
            "--writing_params_path",
            "pre.st",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        &dir,
        &[
            "probe",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "pre.st",
            "--eval_corpus_path",
            "dev.tsv",
            "--predictions_path",
            "dev.tsv",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dev.tsv:1: a tab in a predictions file"),
        "{}",
        stderr(&o)
    );
}
