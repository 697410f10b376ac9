//! Faults with real processes: killing the CLI while it saves a checkpoint leaves the previous
//! checkpoint intact (the write goes to `<name>.tmp` and is renamed only when complete).

use safetensors::SafeTensors;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::BIN;

fn dir(tag: &str) -> PathBuf {
    common::fresh_dir("faults", tag)
}

fn attnlab(d: &PathBuf, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(d)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
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
    let tmp = d.join("model.st.tmp");
    let t0 = Instant::now();
    while !(tmp.exists() && std::fs::metadata(&tmp).map(|m| m.len()).unwrap_or(0) > 0) {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the temp file never appeared"
        );
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the run ended before writing ({status})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill"); // SIGKILL: no cleanup code runs
    child.wait().expect("reap");
    assert_eq!(
        std::fs::read(d.join("model.st")).expect("still there"),
        before,
        "the previous checkpoint changed"
    );
    // The next run replaces the stale temp file and succeeds.
    assert!(attnlab(&d, &[&train[..], &["--seed", "7"]].concat())
        .status()
        .expect("run")
        .success());
    assert_ne!(std::fs::read(d.join("model.st")).expect("read"), before);
    assert!(!tmp.exists());
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
        let out = Command::new(BIN)
            .args(base.iter().chain(extra))
            .current_dir(&d)
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .expect("run");
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
    let out = Command::new(BIN)
        .args(
            base.iter()
                .chain(&["--writing_params_path", "x.st", "--resume", "whole.st"]),
        )
        .current_dir(&d)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without training state"));
    assert!(!d.join("x.st").exists());
    let _ = std::fs::remove_dir_all(&d);
}
