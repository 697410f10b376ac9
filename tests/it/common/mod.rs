//! Helpers shared by the tests that run the built `attnlab` binary (cli/, inputs.rs, outputs.rs,
//! safety.rs, faults.rs): a fresh temporary folder, one holding a small generated corpus, running
//! the binary in it, and checking that it refused a run.
#![allow(dead_code)] // each test file uses only some of these

use attnlab::data::{self, CorpusSizes};
use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_attnlab");

/// A test's own folder under the system's temp folder, removed with everything in it when the
/// value is dropped, also when the test fails (tempfile's `TempDir`); it reads as a `Path`.
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// A fresh, empty folder `attnlab-<group>-<tag>-<random>` under the system's temp folder.
pub fn fresh_dir(group: &str, tag: &str) -> Scratch {
    let d = tempfile::Builder::new()
        .prefix(&format!("attnlab-{group}-{tag}-"))
        .tempdir()
        .expect("temp dir");
    Scratch(d)
}

/// `fresh_dir` holding wiki.txt, train.tsv, dev.tsv and test.tsv for the people of
/// `data::generate_sized(seed, sizes)`.
pub fn corpus_dir(group: &str, tag: &str, seed: u64, sizes: CorpusSizes) -> Scratch {
    let d = fresh_dir(group, tag);
    let c = data::generate_sized(seed, sizes);
    std::fs::write(d.join("wiki.txt"), &c.wiki).expect("write");
    std::fs::write(d.join("train.tsv"), &c.train_tsv).expect("write");
    std::fs::write(d.join("dev.tsv"), &c.dev_tsv).expect("write");
    std::fs::write(d.join("test.tsv"), &c.test_tsv).expect("write");
    d
}

/// Run the binary in `dir`; the command and its output are printed (cargo shows them on failure).
pub fn run(dir: &Path, args: &[&str]) -> Output {
    run_env(dir, args, &[])
}

/// The binary with `args`, to start in `dir` as every CLI test starts it (the system's temp folder
/// as its runtime folder, where the run locks go); not started, so a test can add settings, pipe
/// its output, or stop it.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir());
    c
}

/// `run` with these environment variables set too (the fault injections of `src/cli/files.rs`).
pub fn run_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = command(dir, args)
        .envs(env.iter().copied())
        .output()
        .expect("run the binary");
    println!(
        "$ attnlab {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run the binary in `dir` and check that it refused: exit `code` (1 for a user error, 2 for a
/// usage error, as argparse), every one of `needles` in stderr, and no panic. Returns stderr; the
/// caller checks what the refusal must have left alone (an output not written, the folder as it
/// was, no temporaries).
pub fn refused(dir: &Path, args: &[&str], code: i32, needles: &[&str]) -> String {
    let o = run(dir, args);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "stderr of {args:?} lacks {n:?}: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// No `*.tmp` file (a half-written output) is left in `dir`.
pub fn no_tmp_left(dir: &Path) {
    for e in std::fs::read_dir(dir).expect("list").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "left behind {name}");
    }
}
