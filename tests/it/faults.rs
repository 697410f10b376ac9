//! Faults with real processes: killing the CLI while it saves a checkpoint leaves the previous
//! checkpoint intact (the write goes to `<name>.tmp` and is renamed only when complete).

use safetensors::SafeTensors;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

fn dir(tag: &str) -> common::Scratch {
    common::fresh_dir("faults", tag)
}

fn attnlab(d: &Path, args: &[&str]) -> Command {
    let mut c = common::command(d, args);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// The temporary files of `name` in `d` (`<name>.<pid>-<n>.attnlab.tmp`).
fn temps(d: &Path, name: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .expect("list")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with(&format!("{name}.")) && n.ends_with(".tmp")
        })
        .collect();
    v.sort();
    v
}

/// Two runs writing the same outputs at once: each has its own temporary file (the old shared
/// `<name>.tmp` let one truncate the other's), both succeed, the files are whole.
#[test]
fn concurrent_writers_use_their_own_temporaries() {
    let d = dir("concurrent");
    let args = ["corpus", "--out_dir", ".", "--people", "12"];
    let spawn = || {
        attnlab(&d, &args)
            .env("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS", "1500")
            .spawn()
            .expect("spawn")
    };
    let (mut a, mut b) = (spawn(), spawn());
    let t0 = Instant::now();
    let mut most = 0;
    while t0.elapsed() < Duration::from_secs(60) {
        most = most.max(temps(&d, "wiki.txt").len());
        if most >= 2 || (a.try_wait().expect("a").is_some() && b.try_wait().expect("b").is_some()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(a.wait().expect("a").success() && b.wait().expect("b").success());
    assert_eq!(
        most, 2,
        "the two runs did not write separate temporary files"
    );
    let want = attnlab::data::generate(attnlab::train::run::DEFAULT_CORPUS_SEED, 12);
    assert_eq!(
        std::fs::read_to_string(d.join("wiki.txt")).expect("wiki"),
        want.wiki
    );
    assert!(temps(&d, "wiki.txt").is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn killing_the_cli_during_a_checkpoint_write_keeps_the_previous_checkpoint() {
    let d = dir("kill");
    let ok = attnlab(&d, &["corpus", "--out_dir", ".", "--people", "12"])
        .status()
        .expect("run");
    assert!(ok.success());
    let train = [
        "pretrain",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--max_steps",
        "1",
        "--writing_params_path",
        "model.st",
    ];
    assert!(attnlab(&d, &train).status().expect("run").success());
    let before = std::fs::read(d.join("model.st")).expect("first checkpoint");

    // Same run with another seed (different weights), held between write and rename, then killed.
    let mut child = attnlab(&d, &[&train[..], &["--seed", "7"]].concat())
        .env("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS", "60000")
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    let tmp = loop {
        if let Some(t) = temps(&d, "model.st").pop() {
            if std::fs::metadata(&t).map(|m| m.len()).unwrap_or(0) > 0 {
                break t;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the temp file never appeared"
        );
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the run ended before writing ({status})");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().expect("kill"); // SIGKILL: no cleanup code runs
    child.wait().expect("reap");
    assert_eq!(
        std::fs::read(d.join("model.st")).expect("still there"),
        before,
        "the previous checkpoint changed"
    );
    assert!(tmp.exists());
    // The next run removes the stale temp file (its process is gone) and succeeds.
    assert!(attnlab(&d, &[&train[..], &["--seed", "7"]].concat())
        .status()
        .expect("run")
        .success());
    assert_ne!(std::fs::read(d.join("model.st")).expect("read"), before);
    assert!(!tmp.exists(), "the killed run's {} was left", tmp.display());
    assert!(temps(&d, "model.st").is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_cli_run_stopped_and_resumed_ends_with_the_uninterrupted_checkpoint() {
    let d = dir("resume");
    assert!(attnlab(&d, &["corpus", "--out_dir", ".", "--people", "12"])
        .status()
        .expect("run")
        .success());
    let base = [
        "finetune",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--finetune_corpus_path",
        "birth_places_train.tsv",
        "--batch_size",
        "4",
        "--max_epochs",
        "3",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let out = common::command(&d, &args).output().expect("run");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("{text}");
        assert!(out.status.success(), "{text}");
        text
    };
    run(&["--writing_params_path", "whole.st"]);
    // 8 rows, batch 4: 2 steps per epoch. Stop after 3 steps (mid-epoch), then resume.
    run(&["--writing_params_path", "part.st", "--max_steps", "3"]);
    assert!(d.join("part.st.resume").exists());
    let out = run(&[
        "--writing_params_path",
        "part.st",
        "--resume",
        "part.st.resume",
    ]);
    assert!(
        out.contains("resuming part.st.resume after step 3"),
        "{out}"
    );
    // Same tensors, bit for bit (the header's metadata order may differ between processes).
    let (a, b) = (
        std::fs::read(d.join("whole.st")).expect("whole"),
        std::fs::read(d.join("part.st")).expect("part"),
    );
    let (a, b) = (
        SafeTensors::deserialize(&a).expect("whole.st"),
        SafeTensors::deserialize(&b).expect("part.st"),
    );
    let mut names = a.names();
    names.sort();
    assert_eq!(names.len(), b.names().len());
    for n in names {
        let (ta, tb) = (a.tensor(n).expect("a"), b.tensor(n).expect("b"));
        assert!(
            ta.data() == tb.data(),
            "{n}: the resumed run ended with other weights than the uninterrupted one"
        );
    }
    // A plain checkpoint cannot resume.
    let args: Vec<&str> = base
        .iter()
        .chain(&["--writing_params_path", "x.st", "--resume", "whole.st"])
        .copied()
        .collect();
    let out = common::command(&d, &args).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without training state"));
    assert!(!d.join("x.st").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// Output nobody reads does not stop a run: with stdout a closed pipe (`attnlab … | head -1`) or a
/// full disk (`> /dev/full`), training still saves its checkpoint and exits 0 (`println!`
/// panicked there: exit 101, nothing saved).
#[test]
fn a_closed_or_full_stdout_does_not_stop_a_run() {
    let d = dir("stdout");
    let run = |out: &str, stdout: Stdio| {
        let args = [
            "pretrain",
            "vanilla",
            "--tiny",
            "--device",
            "cpu",
            "--max_steps",
            "3",
            "--writing_params_path",
            out,
        ];
        let mut child = attnlab(&d, &args)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        drop(child.stdout.take()); // a pipe's reader is gone before the first line
        let o = child.wait_with_output().expect("wait");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && !e.contains("panicked"),
            "{out}: {:?}: {e}",
            o.status
        );
        assert!(d.join(out).is_file(), "no checkpoint {out}");
    };
    run("piped.st", Stdio::piped());
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        run("full.st", Stdio::from(full));
    }
}

/// The benchmark binary prints through the same never-panicking lines: its usage and a device
/// report written to a closed pipe or a full disk end normally (`println!` exited 101).
#[test]
fn bench_output_to_a_closed_or_full_stdout_does_not_panic() {
    let run = |stdout: Stdio, what: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
            .args(["--help"])
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn bench");
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("wait");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && !e.contains("panicked"),
            "bench --help to {what}: {:?}: {e}",
            o.status
        );
    };
    run(Stdio::piped(), "a closed pipe");
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        run(Stdio::from(full), "/dev/full");
    }
}
