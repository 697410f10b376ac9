//! The README's commands, so that they cannot drift from the CLI: every `cargo run --release -- …`
//! and `attnlab …` command in README.md is run by the built binary with `--help` appended (every
//! flag and function it names must still parse), and the handout chain (pretrain → finetune →
//! evaluate, london) is then run as written in a cheap form (`--tiny --max_steps 2 --batch_size 4
//! --max_questions 4 --device cpu`, outputs in a temporary folder) when the course's files it
//! names are present; a command whose input file is absent is skipped, saying so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every command in README.md that runs the CLI, as its arguments after `attnlab`, and whether it
/// stands in a code block (a command to copy) rather than in an inline code span of the prose:
/// code-block lines are joined across a trailing `\`, spans may cross lines; the command starts
/// with `cargo run --release -- ` or `attnlab `, and a trailing `# comment` is dropped.
fn readme_commands() -> Vec<(Vec<String>, bool)> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut found = Vec::new();
    let mut in_block = false;
    let mut joined = String::new();
    let mut prose = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            let l = line.trim();
            if let Some(head) = l.strip_suffix('\\') {
                joined.push_str(head);
                joined.push(' ');
                continue;
            }
            joined.push_str(l);
            found.push((std::mem::take(&mut joined), true));
        } else {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 {
            found.push((span.to_string(), false));
        }
    }
    found
        .into_iter()
        .filter_map(|(c, block)| {
            let c = c.split(" # ").next().unwrap().trim().to_string();
            let rest = c
                .strip_prefix("cargo run --release -- ")
                .or_else(|| c.strip_prefix("attnlab "))?;
            // `attnlab vit train|evaluate` or `attnlab corpus --out_dir DIR [--people N]` are
            // synopses, not commands to copy.
            if rest.contains('|') || rest.contains('[') {
                return None;
            }
            Some((rest.split_whitespace().map(String::from).collect(), block))
        })
        .collect()
}

fn attnlab(args: &[String], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run attnlab")
}

#[test]
fn readme_names_the_cli_commands() {
    let cmds = readme_commands();
    let functions: Vec<&str> = cmds
        .iter()
        .filter_map(|(c, _)| c.first().map(|s| s.as_str()))
        .collect();
    for f in [
        "pretrain", "finetune", "evaluate", "london", "convert", "vit", "--help",
    ] {
        assert!(
            functions.contains(&f),
            "README.md has no `{f}` command; found {functions:?}"
        );
    }
}

#[test]
fn every_readme_command_parses() {
    for (args, _) in readme_commands() {
        let mut with_help = args.clone();
        if with_help.last().map(String::as_str) != Some("--help") {
            with_help.push("--help".into());
        }
        let out = attnlab(&with_help, &root());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("Usage"),
            "README command `attnlab {}` does not parse:\n{}{}",
            args.join(" "),
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The README's handout commands in order, each made cheap; outputs (and the checkpoints they pass
/// along) live in a temporary folder, inputs are read where the README says (from the repository root).
#[test]
fn readme_handout_commands_run_cheaply_on_the_course_files() {
    let tmp = std::env::temp_dir().join(format!("attnlab-readme-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut ran = 0;
    for (args, _) in readme_commands().into_iter().filter(|(_, block)| *block) {
        let Some(function) = args.first().map(String::as_str) else {
            continue;
        };
        if !["pretrain", "finetune", "evaluate", "london", "convert"].contains(&function) {
            continue;
        }
        let mut cheap = Vec::new();
        let mut missing = None;
        for a in &args {
            if a.starts_with("../") {
                let p = root().join(a);
                if !p.exists() {
                    missing.get_or_insert(p.display().to_string());
                }
                cheap.push(p.display().to_string());
            } else if a.ends_with(".params")
                || a.ends_with(".predictions")
                || a.ends_with(".safetensors")
            {
                cheap.push(tmp.join(a).display().to_string());
            } else {
                cheap.push(a.clone());
            }
        }
        // A checkpoint the command reads must have been written by an earlier one.
        if let Some(i) = args.iter().position(|a| a == "--reading_params_path") {
            let p = tmp.join(&args[i + 1]);
            if !p.exists() {
                missing.get_or_insert(p.display().to_string());
            }
        }
        if let Some(m) = missing {
            println!("skipping `attnlab {}`: {m} is absent", args.join(" "));
            continue;
        }
        if function != "london" {
            cheap.extend(["--device", "cpu", "--tiny"].map(String::from));
        }
        match function {
            "pretrain" | "finetune" => {
                cheap.extend(["--max_steps", "2", "--batch_size", "4"].map(String::from))
            }
            "evaluate" => cheap.extend(["--max_questions", "4"].map(String::from)),
            _ => {}
        }
        let out = attnlab(&cheap, &tmp);
        assert!(
            out.status.success(),
            "README command `attnlab {}` failed in its cheap form `{}`:\n{}{}",
            args.join(" "),
            cheap.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        for flag in ["--writing_params_path", "--outputs_path"] {
            if let Some(i) = args.iter().position(|a| a == flag) {
                let written = tmp.join(&args[i + 1]);
                assert!(
                    written.exists(),
                    "`attnlab {}` did not write {}",
                    args.join(" "),
                    written.display()
                );
            }
        }
        ran += 1;
    }
    println!("ran {ran} README commands in their cheap form");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// No file of the project keeps a merge's conflict markers (one did: ARCHITECTURE.md carried a
/// whole conflicting half for a session). Walks the sources and docs, not build outputs.
#[test]
fn no_file_keeps_merge_conflict_markers() {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                let skip = [
                    "target",
                    "node_modules",
                    "pkg",
                    ".git",
                    "out",
                    "gpukit",
                    "gpukit.new",
                ];
                if !skip.contains(&name.as_str()) && !name.starts_with("target") {
                    walk(&p, found);
                }
                continue;
            }
            let text_file = [
                ".md", ".rs", ".js", ".mjs", ".sh", ".py", ".html", ".css", ".wgsl", ".toml",
                ".json",
            ]
            .iter()
            .any(|x| name.ends_with(x));
            let Ok(text) = std::fs::read_to_string(&p).map_err(|_| ()).and_then(|t| {
                if text_file {
                    Ok(t)
                } else {
                    Err(())
                }
            }) else {
                continue;
            };
            for (i, line) in text.lines().enumerate() {
                if line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") {
                    found.push(format!("{}:{}", p.display(), i + 1));
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(&root(), &mut found);
    assert!(
        found.is_empty(),
        "conflict markers left by a merge: {found:?}"
    );
}
