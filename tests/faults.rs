//! Faults with real processes: killing the CLI while it saves a checkpoint leaves the previous
//! checkpoint intact (the write goes to `<name>.tmp` and is renamed only when complete).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_attnlab");

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnlab-faults-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
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
