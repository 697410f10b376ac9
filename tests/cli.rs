//! The CLI end to end: the built binary on a few people from the embedded corpus generator (written
//! to files so the path flags are exercised), a tiny model and one epoch, since lavapipe trains at
//! only a few hundred tokens a second. Plus user errors (exit 1, a clear message, no output file)
//! and greedy decoding's determinism.

use attnlab::data::{self, parse_tsv_str, CorpusSizes, TsvMode, Vocab};
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::train::{sample_greedy, sample_greedy_batch};
use attnlab::Device;
use std::path::Path;
use std::process::Output;

mod common;
use common::{no_tmp_left, run};

/// A fresh folder holding wiki.txt, train.tsv and dev.tsv (and test.tsv) for 6 + 3 + 1 generated people.
fn corpus_dir(tag: &str) -> common::Scratch {
    common::corpus_dir(
        "cli",
        tag,
        5,
        CorpusSizes {
            train: 6,
            dev: 3,
            test: 1,
        },
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn pretrain_then_finetune_then_evaluate() {
    let dir = corpus_dir("chain");
    let o = run(
        &dir,
        &[
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_epochs",
            "1",
            "--writing_params_path",
            "pre.st",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("data has ") && s.contains(" unique."), "{s}");
    assert!(s.contains("number of parameters: "), "{s}");
    assert!(dir.join("pre.st").is_file());

    let o = run(
        &dir,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_epochs",
            "1",
            "--reading_params_path",
            "pre.st",
            "--finetune_corpus_path",
            "train.tsv",
            "--writing_params_path",
            "fine.st",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("fine.st").is_file());

    let o = run(
        &dir,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "fine.st",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let line = s.lines().find(|l| l.starts_with("Correct: ")).unwrap_or("");
    assert!(line.contains(" out of 3.0: "), "{s}");
    let preds = std::fs::read_to_string(dir.join("pred.txt")).expect("predictions");
    assert_eq!(preds.lines().count(), 3, "{preds:?}");
    assert!(preds.ends_with('\n'));
    no_tmp_left(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn london_prints_the_baseline() {
    let dir = corpus_dir("london");
    // The embedded corpus's dev set.
    let o = run(&dir, &["london", "--outputs_path", "london.txt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dev = attnlab::train::run::default_corpus(false).dev_tsv;
    let rows = parse_tsv_str(&dev, "dev", TsvMode::RequireAnswers).expect("dev parses");
    let (c, t) = data::london_baseline(&rows).expect("score");
    assert_eq!(stdout(&o).trim(), data::format_accuracy(c, t));
    let preds = std::fs::read_to_string(dir.join("london.txt")).expect("predictions");
    assert_eq!(preds.lines().count(), CorpusSizes::DEFAULT.dev);
    assert!(preds.lines().all(|l| l == "London"));
    // A file, and one without answers.
    std::fs::write(
        dir.join("q.tsv"),
        "Where was A B born?\nWhere was C D born?\n",
    )
    .expect("write");
    let o = run(&dir, &["london", "--eval_corpus_path", "q.tsv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("No gold birth places provided"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exit code 1, a message naming `needle`, no output file left behind.
fn fails(dir: &Path, args: &[&str], needle: &str, output: &str) {
    let o = run(dir, args);
    assert_eq!(o.status.code(), Some(1), "{args:?}");
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
    fails(
        &dir,
        &["pretrain", "vanilla", "--max_epochs", "abc"],
        "abc",
        "out.st",
    );
    fails(&dir, &["train", "vanilla"], "train", "out.st");
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

/// Greedy decoding is deterministic and batched decoding equals one prompt at a time, on `dev`
/// with `n` prompts of lengths 1 to 6 (more than one chunk where `n` exceeds the chunk size).
fn batching_changes_nothing(dev: std::rc::Rc<Device>, n: usize) {
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let model = Gpt::new(&dev, GptConfig::tiny(variant, 20), 3).expect("model");
        let prompts: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                (0..1 + (i * 7) % 6)
                    .map(|j| ((i + 3 * j) % 19 + 1) as u32)
                    .collect()
            })
            .collect();
        let steps = 6;
        let singles: Vec<Vec<u32>> = prompts
            .iter()
            .map(|p| pollster::block_on(sample_greedy(&model, p, steps)).expect("decode"))
            .collect();
        let again = pollster::block_on(sample_greedy(&model, &prompts[2], steps)).expect("decode");
        assert_eq!(again, singles[2], "{variant:?}: same weights, same output");
        let mut reports = Vec::new();
        let batch =
            pollster::block_on(sample_greedy_batch(&model, &prompts, steps, &mut |d, t| {
                reports.push((d, t))
            }))
            .expect("batch");
        assert_eq!(
            batch, singles,
            "{variant:?}: batched decoding equals one-by-one"
        );
        assert_eq!(
            reports.last(),
            Some(&(n, n)),
            "{variant:?}: progress ends at all done"
        );
        for (p, s) in prompts.iter().zip(&singles) {
            assert_eq!(s.len(), p.len() + steps);
            assert_eq!(&s[..p.len()], p.as_slice());
        }
    }
}

#[test]
fn greedy_decoding_is_deterministic_and_batching_changes_nothing() {
    batching_changes_nothing(Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}")), 4);
}

#[test]
fn batched_decoding_on_the_cpu_backend_spans_chunks_and_changes_nothing() {
    // 70 prompts: three chunks of at most 32 on the CPU backend, each reported.
    let dev = Device::cpu();
    let mut chunks = 0;
    let model = Gpt::new(&dev, GptConfig::tiny(Variant::Vanilla, 20), 3).expect("model");
    let prompts = vec![vec![1u32, 2]; 70];
    pollster::block_on(sample_greedy_batch(&model, &prompts, 2, &mut |_, _| {
        chunks += 1
    }))
    .expect("batch");
    assert_eq!(chunks, 3, "70 prompts in chunks of 32");
    batching_changes_nothing(dev, 70);
}

#[test]
fn corpus_writes_the_generated_files_that_the_other_commands_read() {
    let dir = corpus_dir("corpus");
    let out_dir = dir.join("gen");
    let o = run(&dir, &["corpus", "--out_dir", "gen", "--people", "30"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |n: &str| std::fs::read_to_string(out_dir.join(n)).expect(n);
    let c = data::generate(0, 30);
    assert_eq!(read("wiki.txt"), c.wiki);
    assert_eq!(read("birth_places_train.tsv"), c.train_tsv);
    assert_eq!(read("birth_dev.tsv"), c.dev_tsv);
    assert_eq!(read("birth_test.tsv"), c.test_tsv);
    let rows = c.train_tsv.lines().count() + c.dev_tsv.lines().count() + c.test_tsv.lines().count();
    assert_eq!(rows, 30);
    assert_eq!(c.wiki.lines().count(), 30);
    no_tmp_left(&out_dir);
    // The written files feed the London baseline like the course's own.
    let o = run(&dir, &["london", "--eval_corpus_path", "gen/birth_dev.tsv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("Correct: "), "{}", stdout(&o));
    // --births_only: the same people and questions, the birth sentences as wiki.txt.
    let o = run(
        &dir,
        &[
            "corpus",
            "--out_dir",
            "births",
            "--people",
            "30",
            "--births_only",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("birth sentences only"),
        "{}",
        stdout(&o)
    );
    let births = |n: &str| std::fs::read_to_string(dir.join("births").join(n)).expect(n);
    assert_eq!(births("wiki.txt"), c.births);
    assert_eq!(births("birth_dev.tsv"), c.dev_tsv);
    // --birth_notes: the same questions, the two notes a person as wiki.txt; not with --births_only.
    let o = run(
        &dir,
        &[
            "corpus",
            "--out_dir",
            "notes",
            "--people",
            "30",
            "--birth_notes",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("two birth notes a person"),
        "{}",
        stdout(&o)
    );
    let notes = |n: &str| std::fs::read_to_string(dir.join("notes").join(n)).expect(n);
    assert_eq!(notes("wiki.txt"), c.notes);
    assert_eq!(notes("birth_dev.tsv"), c.dev_tsv);
    let o = run(
        &dir,
        &["corpus", "--out_dir", "y", "--birth_notes", "--births_only"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    assert!(!dir.join("y").exists());
    let o = run(&dir, &["corpus", "--out_dir", "x", "--people", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--people 2 must be at least 3"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("x").exists());
    let o = run(&dir, &["corpus"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("corpus needs --out_dir"),
        "{}",
        stderr(&o)
    );
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
        "bin.txt:1: invalid UTF-8",
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
    fails_on(
        "empty.st",
        "empty.st is not a readable safetensors checkpoint",
    );
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
