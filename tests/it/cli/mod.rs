//! The CLI end to end: the built binary on a few people from the embedded corpus generator (written
//! to files so the path flags are exercised), a tiny model and one epoch, since lavapipe trains at
//! only a few hundred tokens a second. `errors.rs`: user errors (exit 1, or 2 for a usage error; a
//! clear message, no output file, the old checkpoint kept); `checkpoints.rs`: damaged checkpoints,
//! batches too big for the device, a failed save; `decode.rs`: greedy decoding's determinism and
//! batching.

mod checkpoints;
mod decode;
mod errors;

use attnlab::data::{self, parse_tsv_str, CorpusSizes, TsvMode};
use std::process::Output;

use crate::common;
use common::{no_tmp_left, run};

/// A fresh folder holding wiki.txt, train.tsv and dev.tsv (and test.tsv) for 6 + 3 + 1 generated people.
pub fn corpus_dir(tag: &str) -> common::Scratch {
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

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn pretrain_then_finetune_then_evaluate() {
    let dir = corpus_dir("chain");
    let pretrain = ["pretrain", "vanilla", "wiki.txt", "--tiny"];
    let o = run(
        &dir,
        &[
            &pretrain[..],
            &["--max_epochs", "1", "--writing_params_path", "pre.st"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("data has ") && s.contains(" unique."), "{s}");
    assert!(s.contains("number of parameters: "), "{s}");
    // One epoch of the tiny corpus is one step of a few rows, fewer tokens than run.py's warm-up;
    // a fresh pretraining says why its first steps' loss can jump.
    let rate = s
        .lines()
        .find(|l| l.starts_with("learning rate (run.py's schedule): step 1 at the full 6.0e-3"));
    assert!(
        rate.is_some_and(
            |l| l.contains("this run ends inside the warm-up") && l.contains("A jump in the loss")
        ),
        "{s}"
    );
    assert!(dir.join("pre.st").is_file());
    // Resumed, the same run is past its first steps: no jump to explain.
    let o = run(
        &dir,
        &[
            &pretrain[..],
            &["--max_epochs", "2", "--resume", "pre.st.resume"],
            &["--writing_params_path", "pre2.st"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let rate = s
        .lines()
        .find(|l| l.starts_with("learning rate (run.py's schedule)"));
    assert!(rate.is_some_and(|l| !l.contains("A jump")), "{s}");

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

    let evaluate = [
        "evaluate",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--reading_params_path",
        "fine.st",
        "--eval_corpus_path",
        "dev.tsv",
    ];
    let o = run(
        &dir,
        &[&evaluate[..], &["--outputs_path", "pred.txt"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let line = s.lines().find(|l| l.starts_with("Correct: ")).unwrap_or("");
    assert!(line.contains(" out of 3.0: "), "{s}");
    let preds = std::fs::read_to_string(dir.join("pred.txt")).expect("predictions");
    assert_eq!(preds.lines().count(), 3, "{preds:?}");
    assert!(preds.ends_with('\n'));
    // Without XDG_RUNTIME_DIR (a server, a container), the GPU probe prints no "error:" lines of
    // Mesa's (the binary points it at a private folder of its own first).
    let o = std::process::Command::new(common::BIN)
        .args(evaluate)
        .current_dir(&dir)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
    no_tmp_left(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn london_prints_the_baseline() {
    let dir = corpus_dir("london");
    // The embedded corpus's dev set.
    let o = run(&dir, &["london", "--outputs_path", "london.txt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: no --eval_corpus_path: scoring the built-in"),
        "{}",
        stderr(&o)
    );
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
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    // Flags the function does not read are named (run.py ignores them silently), and it runs.
    let o = run(
        &dir,
        &[
            "london",
            "--eval_corpus_path",
            "q.tsv",
            "--n_layer",
            "3",
            "--max_epochs",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: london does not use --max_epochs, --n_layer, --n_head or --n_embd; they are ignored"
        ),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("No gold birth places provided"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An output named by a symbolic link is written through it (the link stays, as run.py's
/// `open(path, 'w')` writes through it), a link to a file not made yet makes that file, and a
/// FIFO (or a device) is written in place, not replaced by a rename.
#[cfg(unix)]
#[test]
fn outputs_write_through_links_and_into_devices() {
    let dir = corpus_dir("links");
    std::os::unix::fs::symlink("target.txt", dir.join("link.pred")).expect("symlink");
    std::os::unix::fs::symlink("made.txt", dir.join("dangling.pred")).expect("symlink");
    std::fs::write(dir.join("target.txt"), "old\n").expect("write");
    for (link, file) in [("link.pred", "target.txt"), ("dangling.pred", "made.txt")] {
        let o = run(&dir, &["london", "--outputs_path", link]);
        assert!(o.status.success(), "{}", stderr(&o));
        let meta = std::fs::symlink_metadata(dir.join(link)).expect("link");
        assert!(
            meta.file_type().is_symlink(),
            "{link} was replaced by a file"
        );
        let text = std::fs::read_to_string(dir.join(file)).expect("target");
        assert_eq!(text.lines().count(), CorpusSizes::DEFAULT.dev, "{file}");
        assert!(text.lines().all(|l| l == "London"), "{file}: {text}");
    }
    // A FIFO (as /dev/stdout may be): read by a thread while the run writes into it.
    let fifo = dir.join("pipe.pred");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read the FIFO"))
        };
        let o = run(&dir, &["london", "--outputs_path", "pipe.pred"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = reader.join().expect("reader");
        assert_eq!(text.lines().count(), CorpusSizes::DEFAULT.dev, "{text}");
        use std::os::unix::fs::FileTypeExt;
        let t = std::fs::symlink_metadata(&fifo).expect("fifo").file_type();
        assert!(t.is_fifo(), "the FIFO was replaced by a file");
    } else {
        eprintln!("SKIP the FIFO case: mkfifo is not available");
    }
    no_tmp_left(&dir);
    let _ = std::fs::remove_dir_all(&dir);
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
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", stderr(&o));
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
