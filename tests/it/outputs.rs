//! Outputs that would destroy an input, unwritable output folders, and the temporary files of
//! atomic writes: each refused before any work with a message naming both flags, every input
//! left byte for byte as it was.

use attnlab::data::CorpusSizes;
use std::path::Path;

use crate::common;
use common::run;

fn dir(tag: &str) -> common::Scratch {
    common::corpus_dir(
        "outputs",
        tag,
        11,
        CorpusSizes {
            train: 6,
            dev: 3,
            test: 2,
        },
    )
}

/// Every file in `d` with its bytes.
fn snapshot(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .expect("list")
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Exit 1 with every needle in stderr, no panic, and the folder exactly as before.
fn refused_untouched(d: &Path, args: &[&str], needles: &[&str]) {
    let before = snapshot(d);
    common::refused(d, args, 1, needles);
    assert_eq!(snapshot(d), before, "{args:?} changed the folder");
}

const PRE: [&str; 7] = [
    "pretrain",
    "vanilla",
    "wiki.txt",
    "--tiny",
    "--max_steps",
    "1",
    "--writing_params_path",
];

fn pre(out: &str) -> Vec<&str> {
    [&PRE[..], &[out]].concat()
}

fn eval<'a>(out: &'a str, input: &'a str) -> Vec<&'a str> {
    vec![
        "evaluate",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--reading_params_path",
        "pre.st",
        "--eval_corpus_path",
        input,
        "--outputs_path",
        out,
    ]
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let d = dir("same");
    // A real checkpoint for the commands that read one.
    let o = run(&d, &[&PRE[..], &["pre.st"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let same = "is the same file as";
    refused_untouched(
        &d,
        &pre("wiki.txt"),
        &[
            "--writing_params_path wiki.txt",
            same,
            "pretrain_corpus_path",
        ],
    );
    refused_untouched(
        &d,
        &pre("./wiki.txt"),
        &["--writing_params_path ./wiki.txt", same],
    );
    for (out, input, needles) in [
        (
            "dev.tsv",
            "dev.tsv",
            ["--outputs_path dev.tsv", "--eval_corpus_path dev.tsv"],
        ),
        (
            "pre.st",
            "dev.tsv",
            ["--outputs_path pre.st", "--reading_params_path pre.st"],
        ),
        (
            "wiki.txt",
            "dev.tsv",
            ["--outputs_path wiki.txt", "pretrain_corpus_path"],
        ),
    ] {
        refused_untouched(&d, &eval(out, input), &[needles[0], needles[1], same]);
    }
    refused_untouched(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_steps",
            "1",
            "--finetune_corpus_path",
            "train.tsv",
            "--writing_params_path",
            "train.tsv",
        ],
        &[
            "--writing_params_path train.tsv",
            "--finetune_corpus_path train.tsv",
        ],
    );
    refused_untouched(
        &d,
        &[
            "london",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "dev.tsv",
        ],
        &["--outputs_path dev.tsv", "--eval_corpus_path dev.tsv"],
    );
    refused_untouched(
        &d,
        &[
            "convert",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            "pre.st",
            "--writing_params_path",
            "pre.st",
        ],
        &[
            "--writing_params_path pre.st",
            "--reading_params_path pre.st",
        ],
    );
    // The training state written beside the checkpoint must not be an input either.
    std::fs::copy(d.join("train.tsv"), d.join("x.resume")).expect("copy");
    refused_untouched(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "x.resume",
            "--writing_params_path",
            "x",
        ],
        &["training state", "--finetune_corpus_path x.resume"],
    );
    std::fs::remove_file(d.join("x.resume")).expect("rm");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("wiki.txt", d.join("link.txt")).expect("symlink");
        std::fs::hard_link(d.join("dev.tsv"), d.join("hard.tsv")).expect("hard link");
        refused_untouched(
            &d,
            &pre("link.txt"),
            &["--writing_params_path link.txt", same],
        );
        refused_untouched(
            &d,
            &eval("hard.tsv", "dev.tsv"),
            &["--outputs_path hard.tsv", "--eval_corpus_path dev.tsv"],
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A read-only folder is refused before training. Root ignores mode bits, so there the test
/// checks only that the probe left nothing behind and says it skipped the refusal.
#[cfg(unix)]
#[test]
fn an_unwritable_output_folder_is_refused_before_any_work() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir("readonly");
    let ro = d.join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let root_writes = std::fs::write(ro.join("probe"), b"x").is_ok();
    let _ = std::fs::remove_file(ro.join("probe"));
    if root_writes {
        println!(
            "skipped: mode 555 does not stop this user (root); the refusal is not testable here"
        );
    } else {
        let o = run(&d, &[&PRE[..], &["ro/out.st"]].concat());
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains("--writing_params_path ro/out.st") && e.contains("writable"),
            "{e}"
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains("number of parameters"));
    }
    assert_eq!(std::fs::read_dir(&ro).expect("list").count(), 0);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let _ = std::fs::remove_dir_all(&d);
}

/// A killed run's temporary file (our pattern, beside the output, its process gone) is removed
/// at the next run's start; a live process's, another output's and other files are kept.
#[test]
fn stale_temporaries_of_a_killed_run_are_removed_at_the_next_start() {
    let d = dir("stale");
    // Linux pids stay below 2^22, so 999999999 is no process; ours is alive.
    let stale = d.join("out.st.999999999-0.attnlab.tmp");
    let live = d.join(format!("out.st.{}-0.attnlab.tmp", std::process::id()));
    let kept = [
        live.clone(),
        d.join("out.st.999999999-0.other.tmp"),
        d.join("other.st.999999999-0.attnlab.tmp"),
        d.join("out.st.tmp"),
    ];
    std::fs::write(&stale, b"half").expect("write");
    for k in &kept {
        std::fs::write(k, b"keep").expect("write");
    }
    let o = run(&d, &pre("out.st"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!stale.exists(), "the stale temporary was left");
    for k in &kept {
        assert!(k.exists(), "{} was removed", k.display());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A read-only output (its owner protects it: run.py's open() would fail on it) is refused before
/// any work, not replaced by the atomic rename; the refusal holds for root too (it reads the mode).
#[cfg(unix)]
#[test]
fn a_read_only_output_file_is_refused_and_kept() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir("readonly-file");
    std::fs::write(d.join("kept.st"), b"a protected model").expect("write");
    std::fs::set_permissions(d.join("kept.st"), std::fs::Permissions::from_mode(0o444))
        .expect("chmod");
    refused_untouched(
        &d,
        &pre("kept.st"),
        &[
            "--writing_params_path kept.st is read-only",
            "chmod u+w kept.st",
        ],
    );
    std::fs::set_permissions(d.join("kept.st"), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
}

/// A run started again without --resume keeps the earlier run's training state as
/// `<state>.previous` (it replaced it at its first save, and the earlier steps were lost), says so
/// at its start, and that state continues with --resume; a run given the state as --resume moves
/// nothing.
#[test]
fn an_earlier_runs_state_is_kept_when_a_run_starts_again() {
    let d = dir("previous");
    fn steps(n: &'static str) -> Vec<&'static str> {
        [
            &PRE[..5],
            &[n, "--writing_params_path", "out.st", "--device", "cpu"],
        ]
        .concat()
    }
    let o = run(&d, &steps("4"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("training state: out.st.resume"));
    let first = std::fs::read(d.join("out.st.resume")).expect("the first run's state");
    let o = run(&d, &steps("2"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("out.st.resume holds the training state of an earlier run (after step 4)")
            && e.contains("--resume out.st.resume.previous"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(d.join("out.st.resume.previous")).expect("kept"),
        first,
        "the earlier state was not kept as it was"
    );
    assert_ne!(
        std::fs::read(d.join("out.st.resume")).expect("state"),
        first
    );
    // The kept state does not go with the second run's checkpoint, which resuming it would
    // replace: refused; with that checkpoint moved away, it continues (after its step 4, to 6).
    let o = run(
        &d,
        &[&steps("6")[..], &["--resume", "out.st.resume.previous"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not go with the checkpoint"));
    std::fs::rename(d.join("out.st"), d.join("second.st")).expect("move");
    let o = run(
        &d,
        &[&steps("6")[..], &["--resume", "out.st.resume.previous"]].concat(),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("resuming out.st.resume.previous after step 4"),
        "{out}"
    );
    // The second run's state, which that run replaced, was kept beside it (not over the state it
    // resumed from).
    assert_eq!(
        std::fs::read(d.join("out.st.resume.previous")).expect("the resumed state"),
        first
    );
    assert!(d.join("out.st.resume.previous-2").is_file());
    // Resumed from the state itself: nothing is moved aside, nothing said.
    std::fs::remove_file(d.join("out.st.resume.previous")).expect("remove");
    let o = run(
        &d,
        &[&steps("8")[..], &["--resume", "out.st.resume"]].concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("earlier run"));
    assert!(!d.join("out.st.resume.previous").exists());
}

/// One run per output: a lock held by a live run refuses a second run at once, naming its pid,
/// and changes nothing; a lock whose run is gone (killed) is removed with a note; a run removes
/// its own lock when it ends. Two real runs on one output: the second is refused while the first
/// saves, and the first's model is the one kept.
#[cfg(target_os = "linux")]
#[test]
fn a_second_run_on_the_same_output_is_refused_naming_the_first() {
    use std::process::{Command, Stdio};
    let d = dir("lock");
    // A live process (this test) holds the lock.
    let me = std::process::id().to_string();
    std::fs::write(d.join("out.st.lock"), format!("{me}\n")).expect("write");
    refused_untouched(
        &d,
        &pre("out.st"),
        &[
            "--writing_params_path out.st is being written by another attnlab run",
            &format!("pid {me}"),
            &format!("kill {me}"),
        ],
    );
    // A dead one: the lock is stale.
    let mut gone = Command::new("true").spawn().expect("spawn");
    let pid = gone.id();
    gone.wait().expect("wait");
    std::fs::write(d.join("out.st.lock"), format!("{pid}\n")).expect("write");
    let o = run(&d, &pre("out.st"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains(&format!("removed the lock out.st.lock of run {pid}")),
        "{e}"
    );
    assert!(!d.join("out.st.lock").exists(), "the run left its lock");
    // Two runs at once: the first pauses before its renames; the second is refused meanwhile.
    let first = common::command(&d, &pre("two.st"))
        .args(["--seed", "5"])
        .env("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS", "1500")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let t0 = std::time::Instant::now();
    while !d.join("two.st.lock").exists() {
        assert!(t0.elapsed().as_secs() < 60, "no lock appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let o = run(&d, &pre("two.st"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains(&format!("pid {}", first.id())), "{e}");
    let mut first = first;
    assert!(first.wait().expect("wait").success());
    assert!(!d.join("two.st.lock").exists());
    // The model kept is the first run's (seed 5): its tensors are those a run alone gives (the
    // header's metadata may list its entries in another order).
    let tensors = |f: &str| {
        let b = std::fs::read(d.join(f)).expect("saved");
        let n = u64::from_le_bytes(b[..8].try_into().expect("header")) as usize;
        b[8 + n..].to_vec()
    };
    let o = run(&d, &[&pre("alone.st")[..], &["--seed", "5"]].concat());
    assert!(o.status.success());
    assert!(
        tensors("alone.st") == tensors("two.st"),
        "another model kept"
    );
}

/// Every path a run writes is checked before any work, the kept earlier state's too: a folder at
/// `<state>.previous` is refused at the start (it used to be found only at the first save, after
/// training).
#[test]
fn a_folder_where_the_earlier_state_is_kept_is_refused_at_the_start() {
    let d = dir("previous-folder");
    let o = run(&d, &pre("out.st"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::create_dir(d.join("out.st.resume.previous")).expect("mkdir");
    refused_untouched(
        &d,
        &pre("out.st"),
        &[
            "out.st.resume.previous is a folder",
            "an earlier run's kept training state",
        ],
    );
    let o = run(&d, &pre("out.st"));
    assert_eq!(o.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("number of parameters"));
}
