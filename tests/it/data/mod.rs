//! Tests of the CPU data pipeline: made-up fixtures always, the course's files when present
//! (read at run time from ../shared/data/cs224n-a5, never copied), and the generated corpus.

mod corpus;
mod digits;
mod fidelity;
mod fixtures;
mod real;

use std::path::PathBuf;

/// The course's data folder beside the repository, if it is there.
pub fn real_data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/cs224n-a5");
    if dir.join("wiki.txt").is_file() {
        Some(dir)
    } else {
        println!("skipping: ../shared/data/cs224n-a5 not found");
        None
    }
}

/// The error message of a result that must be an error.
pub fn err_msg<T: std::fmt::Debug>(r: attnlab::Result<T>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

/// Assert that `msg` mentions every one of `parts`.
pub fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} should mention {p:?}");
    }
}
