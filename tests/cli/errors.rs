//! User errors: exit code 1 (2 for a usage error, as argparse), a message naming the file, line
//! and fix, no output file left behind, and a failed run never overwrites a good checkpoint.

use crate::common::{no_tmp_left, run, run_env};
use crate::{corpus_dir, stderr};
use attnlab::data::Vocab;
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::Device;
use std::path::Path;

/// Exit code 1, a message naming `needle`, no output file left behind.
fn fails(dir: &Path, args: &[&str], needle: &str, output: &str) {
    fails_with(dir, args, needle, output, 1);
}

/// A usage error (a flag's value that is not a number, an unknown function): exit code 2, as
/// run.py's argparse, and the same message and no output.
fn usage(dir: &Path, args: &[&str], needle: &str, output: &str) {
    fails_with(dir, args, needle, output, 2);
}

fn fails_with(dir: &Path, args: &[&str], needle: &str, output: &str, code: i32) {
    let o = run(dir, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(needle), "stderr lacks {needle:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
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

#[test]
fn damaged_checkpoints_and_impossible_sizes_are_refused() {
    let dir = corpus_dir("ckpt");
    let wiki = std::fs::read_to_string(dir.join("wiki.txt")).expect("read");
    let vocab = Vocab::from_text(&wiki, "wiki.txt").expect("vocab");
    let dev = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let model = Gpt::new(&dev, GptConfig::tiny(Variant::Vanilla, vocab.len()), 1).expect("model");
    let itos: String = vocab.itos.iter().collect();
    let good = pollster::block_on(checkpoint::to_bytes(&model, &itos)).expect("bytes");
    let eval = |ck: &str| {
        [
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            ck,
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ]
        .map(String::from)
    };
    let fails_on = |ck: &str, needle: &str| {
        let args = eval(ck);
        fails(
            &dir,
            &args.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            needle,
            "pred.txt",
        );
    };
    // Truncated, and bytes flipped inside the tensor data's header.
    std::fs::write(dir.join("trunc.st"), &good[..good.len() / 2]).expect("write");
    fails_on(
        "trunc.st",
        "trunc.st is not a readable safetensors checkpoint",
    );
    std::fs::write(dir.join("empty.st"), b"").expect("write");
    fails_on("empty.st", "empty.st is empty (0 bytes)");
    // A non-finite weight.
    let w = model.param("head.weight").expect("head");
    let mut vals = w.value().read().expect("read");
    vals[5] = f32::NAN;
    w.value().write_f32(&vals).expect("write");
    let nan = pollster::block_on(checkpoint::to_bytes(&model, &itos)).expect("bytes");
    std::fs::write(dir.join("nan.st"), nan).expect("write");
    fails_on("nan.st", "tensor 'head.weight' holds a non-finite value");
    // The right variant at the wrong size (tiny checkpoint read as the assignment's model).
    std::fs::write(dir.join("good.st"), &good).expect("write");
    fails(
        &dir,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--reading_params_path",
            "good.st",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ],
        "but a vanilla model (vocab",
        "pred.txt",
    );
    // A batch too big for the device is refused before anything is allocated: on the GPU a buffer
    // beyond the binding limit; on the CPU backend an attention map beyond its per-tensor limit.
    for (device, batch, limit) in [
        ("gpu", "4096", "max_storage_buffer_binding_size"),
        ("cpu", "65536", "CPU tensor size limit"),
    ] {
        fails(
            &dir,
            &[
                "pretrain",
                "vanilla",
                "--device",
                device,
                "--batch_size",
                batch,
                "--max_steps",
                "1",
                "--writing_params_path",
                "big.st",
            ],
            limit,
            "big.st",
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint and its training state are replaced together or not at all: a save that fails on
/// the state (a full disk, injected after the checkpoint's temporary was written) leaves both old
/// files as they were and says so; a folder where the state goes is refused before training; a
/// probe file is an input that no output may overwrite.
#[test]
fn a_failed_save_keeps_the_checkpoint_and_its_state_together() {
    let dir = corpus_dir("pair");
    let train = |seed: &'static str, out: &'static str| {
        [
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_epochs",
            "1",
            "--seed",
            seed,
            "--writing_params_path",
            out,
        ]
    };
    let o = run(&dir, &train("1", "m.st"));
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |f: &str| std::fs::read(dir.join(f)).expect("read");
    let (ck, state) = (read("m.st"), read("m.st.resume"));
    let o = run_env(
        &dir,
        &train("2", "m.st"),
        &[("ATTNLAB_FAULT_FAIL_BEFORE_RENAME", ".resume")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("could not write m.st.resume: injected fault")
            && stderr(&o).contains("m.st and m.st.resume are unchanged"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read("m.st"), ck, "the checkpoint was replaced");
    assert_eq!(
        read("m.st.resume"),
        state,
        "the training state was replaced"
    );
    no_tmp_left(&dir);

    std::fs::create_dir(dir.join("f.st.resume")).expect("mkdir");
    fails(&dir, &train("1", "f.st"), "f.st.resume is a folder", "f.st");

    let dev = read("dev.tsv");
    let mut args = train("1", "dev.tsv").to_vec();
    args.extend(["--probe_corpus_path", "dev.tsv"]);
    let o = run(&dir, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the same file as --probe_corpus_path dev.tsv"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read("dev.tsv"), dev, "the probe file was overwritten");
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
