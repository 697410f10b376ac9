//! `scripts/long-run.sh`: a run started in the background keeps its checkpoint, state and log in
//! its own folder, a second start continues from the saved state, and a start whose state is gone
//! says so and begins again. Runs the tiny preset with the test build of the CLI (`ATTNLAB_BIN`), in
//! a temporary runs folder (`ATTNLAB_RUNS`), on a 40-person corpus from the project's generator at
//! batch 8: an epoch takes under a second here (the embedded corpus's took 4 s), so the runs started
//! again and again take seconds, not minutes.

use crate::common;

use attnlab::data::CorpusSizes;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn script(runs: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/long-run.sh"))
        .args(args)
        .env("ATTNLAB_RUNS", runs)
        .env("ATTNLAB_BIN", env!("CARGO_BIN_EXE_attnlab"))
        .output()
        .expect("run long-run.sh");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Wait for the run to write its exit status; returns it.
fn wait_exit(dir: &Path) -> String {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(300) {
        if let Ok(s) = std::fs::read_to_string(dir.join("exit")) {
            return s.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the run did not end within 5 minutes; log:\n{}", log(dir));
}

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("log")).unwrap_or_default()
}

/// A folder holding a 40-person generated corpus (`common::corpus_dir`, removed when dropped) and
/// the absolute path of its wiki.txt (the runs start in their own folders).
fn small_corpus(tag: &str) -> (common::Scratch, String) {
    let dir = common::corpus_dir("long-run", tag, 0, CorpusSizes::from_total(40));
    let wiki = dir
        .join("wiki.txt")
        .to_str()
        .expect("a UTF-8 temp path")
        .to_string();
    (dir, wiki)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnlab-long-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn a_long_run_keeps_its_state_continues_and_starts_again_when_the_state_is_gone() {
    let runs = tmp("runs");
    let dir = runs.join("t1");
    let (_corpus, wiki) = small_corpus("runs");
    let args = [
        "t1",
        "--",
        "pretrain",
        "vanilla",
        &wiki,
        "--tiny",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--max_epochs",
        "8",
        "--writing_params_path",
        "somewhere/model.st",
    ];
    let (ok, text) = script(&runs, &args);
    assert!(ok, "{text}");
    // Stop it once it has saved a state (the state of epoch 1 is written at the end of epoch 2).
    let t0 = Instant::now();
    while !dir.join("model.st.resume").is_file() {
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "no state saved:\n{}",
            log(&dir)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (ok, text) = script(&runs, &["t1", "stop"]);
    assert!(ok || text.contains("not running"), "{text}");
    std::thread::sleep(Duration::from_millis(500));
    // A second start continues from the saved state and runs to the end.
    let (ok, text) = script(&runs, &args);
    assert!(ok, "{text}");
    assert_eq!(wait_exit(&dir), "0", "log:\n{}", log(&dir));
    let l = log(&dir);
    assert!(
        l.contains("continuing from") && l.contains("resuming"),
        "{l}"
    );
    // The checkpoint went into the run's folder, with its state beside it.
    assert!(dir.join("model.st").is_file() && dir.join("model.st.resume").is_file());
    assert!(
        l.contains("about"),
        "the epoch lines give the time left:\n{l}"
    );
    // A finished run is not started again.
    let (ok, text) = script(&runs, &args);
    assert!(ok && text.contains("already finished"), "{text}");

    // Other arguments under the same name are refused.
    let mut other = args.to_vec();
    let epochs = other
        .iter()
        .position(|a| *a == "--max_epochs")
        .expect("the flag")
        + 1;
    other[epochs] = "7";
    let (ok, text) = script(&runs, &other);
    assert!(!ok && text.contains("other arguments"), "{text}");

    // The state gone (a new machine): it says so and starts again from step 0.
    while script(&runs, &["t1", "status"]).1.contains(": running") {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::remove_dir_all(&dir).expect("remove the run's folder");
    let (ok, text) = script(&runs, &args);
    // Said on the terminal too, not only in the log.
    assert!(ok && text.contains("first start"), "{text}");
    assert_eq!(wait_exit(&dir), "0", "log:\n{}", log(&dir));
    let l = log(&dir);
    assert!(
        l.contains("first start") && l.contains("from step 0"),
        "{l}"
    );
    // Only the state gone (the log kept, which shows epochs): it says the state is gone, not that
    // the run never saved one.
    let pid = std::fs::read_to_string(dir.join("pid")).expect("pid");
    while Path::new(&format!("/proc/{}", pid.trim())).exists() {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::remove_file(dir.join("model.st.resume")).expect("remove the state");
    std::fs::remove_file(dir.join("exit")).expect("remove the exit status");
    let (ok, text) = script(&runs, &args);
    assert!(ok && text.contains("is gone"), "{text}");
    assert_eq!(wait_exit(&dir), "0", "log:\n{}", log(&dir));
    let status = script(&runs, &["t1", "status"]).1;
    assert!(status.contains("ended with exit status 0"), "{status}");
    let _ = std::fs::remove_dir_all(&runs);
}

#[test]
fn a_finished_run_reproduces_its_logged_losses_and_a_changed_log_is_caught() {
    let runs = tmp("repro");
    let dir = runs.join("t3");
    let (_corpus, wiki) = small_corpus("repro");
    let args = [
        "t3",
        "--",
        "pretrain",
        "vanilla",
        &wiki,
        "--tiny",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--max_epochs",
        "3",
        "--writing_params_path",
        "model.st",
    ];
    let (ok, text) = script(&runs, &args);
    assert!(ok, "{text}");
    assert_eq!(wait_exit(&dir), "0", "{}", log(&dir));
    let check = |steps: &str| {
        let out = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/repro-check.sh"))
            .args(["t3", steps])
            .env("ATTNLAB_RUNS", &runs)
            .env("ATTNLAB_BIN", env!("CARGO_BIN_EXE_attnlab"))
            .output()
            .expect("run repro-check.sh");
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    // The small corpus's epochs: run two of the three again.
    let per_epoch = log(&dir)
        .lines()
        .find_map(|l| l.strip_prefix("epoch 1/3: ").map(str::to_string))
        .and_then(|l| {
            l.split("step ")
                .nth(1)
                .map(|s| s.split('/').next().unwrap_or("").to_string())
        })
        .expect("an epoch line with its step");
    let two = (per_epoch.parse::<u64>().expect("step number") * 2).to_string();
    let (code, text) = check(&two);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("2 epochs compared: 2 print the same loss"),
        "{text}"
    );
    // Change the log's loss of epoch 2: the check must fail and show it.
    let changed = log(&dir)
        .lines()
        .map(|l| {
            if l.starts_with("epoch 2/3: loss ") {
                format!(
                    "epoch 2/3: loss 9.99999{}",
                    &l["epoch 2/3: loss 9.99999".len()..]
                )
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("log"), changed).expect("write log");
    let (code, text) = check(&two);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("epoch 2: log 9.99999"), "{text}");
    let _ = std::fs::remove_dir_all(&runs);
}

/// A start that fails at once (a misspelled corpus) is said with its error and a non-zero exit,
/// not reported as started, and does not hold its NAME: the corrected command (here with
/// `--writing_params_path=PATH`, the flag's other spelling) starts under it.
#[test]
fn a_start_that_fails_at_once_says_so_and_keeps_no_name() {
    let runs = tmp("fails");
    let dir = runs.join("t4");
    let (ok, text) = script(
        &runs,
        &[
            "t4",
            "--",
            "pretrain",
            "vanilla",
            "wikii.txt",
            "--tiny",
            "--device",
            "cpu",
            "--writing_params_path",
            "m.st",
        ],
    );
    assert!(
        !ok && text.contains("ended at once") && text.contains("cannot read wikii.txt"),
        "{text}"
    );
    assert!(!text.contains("started (pid"), "{text}");
    let (ok, text) = script(
        &runs,
        &[
            "t4",
            "--",
            "pretrain",
            "vanilla",
            "--tiny",
            "--device",
            "cpu",
            "--max_steps",
            "2",
            "--writing_params_path=m.st",
        ],
    );
    assert!(ok && text.contains("never saved"), "{text}");
    assert_eq!(wait_exit(&dir), "0", "log:\n{}", log(&dir));
    assert!(dir.join("m.st").is_file(), "log:\n{}", log(&dir));
    let _ = std::fs::remove_dir_all(&runs);
}

/// Two starts of one NAME at once: one run trains, the other start is refused (they used to
/// launch two CLIs into one folder, of which `status` and `stop` saw only the second); `status`
/// names the run's processes and `stop` returns once none is left. A damaged state, which the
/// script would resume again and again, is left out on purpose with `restart`.
#[cfg(target_os = "linux")]
#[test]
fn one_start_at_a_time_and_a_damaged_state_restarted_on_purpose() {
    let runs = tmp("lock");
    let dir = runs.join("t5");
    let (_corpus, wiki) = small_corpus("lock");
    let args = [
        "t5",
        "--",
        "pretrain",
        "vanilla",
        &wiki,
        "--tiny",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--max_epochs",
        "400",
        "--writing_params_path",
        "model.st",
    ];
    let start = || {
        let runs = runs.clone();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        std::thread::spawn(move || {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            script(&runs, &a)
        })
    };
    let (a, b) = (start(), start());
    let (a, b) = (a.join().expect("a"), b.join().expect("b"));
    assert!(
        a.0 != b.0,
        "not exactly one start went on:\n{}\n{}",
        a.1,
        b.1
    );
    let refused = if a.0 { &b.1 } else { &a.1 };
    assert!(
        refused.contains("t5 is already running or being started"),
        "{refused}"
    );
    let clis = || {
        std::fs::read_dir("/proc")
            .expect("proc")
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path().join("exe"))
                    .is_ok_and(|x| x.starts_with(&dir) && x.ends_with("attnlab"))
            })
            .count()
    };
    assert_eq!(clis(), 1, "{}", log(&dir));
    let status = script(&runs, &["t5", "status"]).1;
    assert!(
        status.contains("running") && status.contains("its processes:"),
        "{status}"
    );
    let (ok, text) = script(&runs, &["t5", "stop"]);
    assert!(ok, "{text}");
    assert_eq!(clis(), 0, "stop returned with a process of the run left");
    // A state cut short: continuing it fails at once, and the message names `restart`.
    let (ok, text) = script(&runs, &args);
    assert!(ok, "{text}");
    let t0 = Instant::now();
    while !dir.join("model.st.resume").is_file() {
        assert!(t0.elapsed() < Duration::from_secs(300), "{}", log(&dir));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(script(&runs, &["t5", "stop"]).0);
    let state = std::fs::read(dir.join("model.st.resume")).expect("state");
    std::fs::write(dir.join("model.st.resume"), &state[..state.len() / 2]).expect("cut");
    let (ok, text) = script(&runs, &args);
    assert!(!ok && text.contains("t5 restart --"), "{text}");
    let mut again: Vec<&str> = args.to_vec();
    again.insert(1, "restart");
    let (ok, text) = script(&runs, &again);
    assert!(ok && text.contains("restarting from step 0"), "{text}");
    let l = log(&dir);
    let this_start = &l[l.rfind("restarting from step 0").expect("said in the log")..];
    assert!(
        this_start.contains("number of parameters") && !this_start.contains("resuming"),
        "{this_start}"
    );
    assert!(script(&runs, &["t5", "stop"]).0);
    let _ = std::fs::remove_dir_all(&runs);
}
