//! The layering and layout rules a scan of the tree can check: the backend is known only to the
//! ops and the device (no device branch in `src/` outside the places below, ARCHITECTURE.md's
//! "one-way rule"), and no tracked text file has a line over 120 characters.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the backend may be named: the op families, the device, the tensor and the two runtimes.
const BACKEND_PLACES: [&str; 5] = [
    "src/ops/",
    "src/device.rs",
    "src/tensor.rs",
    "src/gpu/",
    "src/cpu/",
];

/// What names the backend: the `Device` methods that say which one it is (`as_gpu`, `is_cpu`,
/// `backend`, `Backend`'s variants, `kind` compared with "cpu" or "gpu") and the runtimes' own
/// modules. Anything else asks the device or an op what it needs (a memory budget, a chunk size,
/// a kernel choice).
const BRANCH_MARKS: [&str; 12] = [
    "as_gpu(",
    ".is_cpu(",
    ".backend(",
    "Backend::",
    "kind() == \"",
    "kind() != \"",
    "== \"cpu\"",
    "== \"gpu\"",
    "crate::gpu::",
    "crate::cpu::",
    "attnlab::gpu::",
    "attnlab::cpu::",
];

/// The mark a line of Rust carries, if any; comments (a line's text after `//`) are not code.
fn device_branch(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or("");
    BRANCH_MARKS.into_iter().find(|m| code.contains(m))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for e in entries {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `file:line: mark` for every device branch in `src/` outside [`BACKEND_PLACES`].
fn device_branches_outside() -> Vec<String> {
    let root = root();
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = vec![];
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if BACKEND_PLACES.iter().any(|p| rel.starts_with(p)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("read {rel}: {e}"));
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = device_branch(line) {
                found.push(format!("{rel}:{}: {m}", i + 1));
            }
        }
    }
    found
}

#[test]
fn no_device_branch_outside_the_ops_and_the_device() {
    let found = device_branches_outside();
    assert!(
        found.is_empty(),
        "device branches outside {}: ask a `Device` method or an op for what the code needs \
         instead:\n{}",
        BACKEND_PLACES.join(", "),
        found.join("\n")
    );
}

#[test]
fn device_branch_marks_code_not_comments() {
    assert_eq!(device_branch("    if dev.is_cpu() {"), Some(".is_cpu("));
    assert_eq!(device_branch("let g = d.as_gpu()?;"), Some("as_gpu("));
    assert_eq!(device_branch("match d.backend() {"), Some(".backend("));
    assert_eq!(
        device_branch("    crate::device::Backend::Cpu(c) => 1,"),
        Some("Backend::")
    );
    assert_eq!(
        device_branch("if dev.kind() == \"cpu\" {"),
        Some("kind() == \"")
    );
    assert_eq!(
        device_branch("use crate::gpu::GpuLimits;"),
        Some("crate::gpu::")
    );
    assert_eq!(
        device_branch("use attnlab::cpu::Cpu;"),
        Some("attnlab::cpu::")
    );
    assert_eq!(
        device_branch("    // on the CPU backend (dev.is_cpu())"),
        None
    );
    assert_eq!(
        device_branch("let n = dev.max_chunk_rows(); // not as_gpu()"),
        None
    );
    assert_eq!(device_branch("if dev.tensors_in_host_memory() {"), None);
    assert_eq!(
        device_branch("Err(e) if e.kind() == std::io::ErrorKind::NotFound"),
        None
    );
}

/// The longest line a tracked text file may have, in characters.
const MAX_LINE: usize = 120;

/// The folders whose tracked text files are checked.
const CHECKED: [&str; 5] = ["src", "tests", "shaders", "scripts", "web"];

/// Generated files, data and installed packages, not written by hand: skipped.
fn generated(path: &str) -> bool {
    let under = [
        "web/node_modules/",
        "web/pkg",
        "web/models/",
        "tests/fixtures/",
    ];
    let ends = [
        ".json",
        ".webmanifest",
        ".safetensors",
        ".lock",
        ".proptest-regressions",
    ];
    under.iter().any(|u| path.starts_with(u)) || ends.iter().any(|e| path.ends_with(e))
}

/// `file:line (N characters)` for each line over `max` characters in `text`.
fn long_lines(path: &str, text: &str, max: usize) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let n = l.chars().count();
            (n > max).then(|| format!("{path}:{} ({n} characters)", i + 1))
        })
        .collect()
}

#[test]
fn long_lines_names_each_line_over_the_limit() {
    let ok = "x".repeat(MAX_LINE);
    let long = "é".repeat(MAX_LINE + 1);
    let text = format!("{ok}\n{long}\nshort\n{ok}y\n");
    assert_eq!(
        long_lines("a.rs", &text, MAX_LINE),
        ["a.rs:2 (121 characters)", "a.rs:4 (121 characters)"]
    );
    assert!(generated("web/pkg-relaxed/attnlab.js"));
    assert!(generated("tests/fixtures/gpt_ref.txt"));
    assert!(!generated("web/test/page.mjs"));
}

#[test]
fn no_tracked_line_over_120_characters() {
    let root = root();
    let listed = Command::new("git")
        .arg("ls-files")
        .arg("-z")
        .arg("--")
        .args(CHECKED)
        .current_dir(&root)
        .output();
    let listed = match listed {
        Ok(o) if o.status.success() => o.stdout,
        // A copy of the tree without its history (a GPU machine's kit): nothing says what is
        // tracked there; the check runs in every clone.
        _ => {
            eprintln!("skipped: {} is not a git checkout", root.display());
            return;
        }
    };
    let mut found = vec![];
    for path in String::from_utf8_lossy(&listed).split('\0') {
        if path.is_empty() || generated(path) {
            continue;
        }
        // A tracked file deleted in the working tree, or a binary one (an icon): nothing to check.
        let Ok(bytes) = std::fs::read(root.join(path)) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        if text.contains('\0') {
            continue;
        }
        found.extend(long_lines(path, &text, MAX_LINE));
    }
    assert!(
        found.is_empty(),
        "{} lines over {MAX_LINE} characters (wrap them; split a long string into parts):\n{}",
        found.len(),
        found.join("\n")
    );
}
