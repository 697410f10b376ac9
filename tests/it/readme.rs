//! The README's commands, so that they cannot drift from the CLI: every `cargo run --release -- …`
//! and `attnlab …` command in README.md is run by the built binary with `--help` appended (every
//! flag and function it names must still parse), and the handout chain (pretrain → finetune →
//! evaluate, london) is then run as written in a cheap form (`--tiny --max_steps 2 --batch_size 4
//! --max_questions 4 --device cpu`, outputs in a temporary folder) when the course's files it
//! names are present; a command whose input file is absent is skipped, saying so.
//!
//! Also the tree's hygiene: no file keeps merge conflict markers or names a numbered period of
//! past work (in its text or its path), and every relative link and repository path the docs cite
//! exists.

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

/// Where the course's files are kept beside this checkout (never committed).
fn course_dir() -> PathBuf {
    root().join("../shared/data/cs224n-a5")
}

/// The course's files by name: the README's quick start runs in the folder that holds them.
const COURSE_FILES: [&str; 4] = [
    "wiki.txt",
    "birth_places_train.tsv",
    "birth_dev.tsv",
    "birth_test_inputs.tsv",
];

/// The README's handout commands in order, each made cheap; outputs (and the checkpoints they pass
/// along) live in a temporary folder. Inputs are read where the README says: a bare course file
/// name (`wiki.txt`, as run from the course folder) from `../shared/data/cs224n-a5/`, a `../…`
/// path from the repository root.
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
            let bare_course_file = !a.starts_with('-')
                && !a.contains('/')
                && (COURSE_FILES.contains(&a.as_str()) || course_dir().join(a).is_file());
            if a.starts_with("../") || bare_course_file {
                let p = if bare_course_file {
                    course_dir().join(a)
                } else {
                    root().join(a)
                };
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

/// No file of the project keeps a merge's conflict markers (a doc can carry a whole conflicting
/// half unnoticed). Walks the sources and docs, not build outputs.
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

/// The tree's files, as the hygiene tests walk them: everything but version control, build
/// outputs and installed packages (`target*`, `web/pkg*`, `node_modules`, test outputs, the GPU
/// kit), sorted.
fn tree_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                let skip = [".git", "node_modules", "out", "gpukit", "gpukit.new"];
                if !skip.contains(&name.as_str())
                    && !name.starts_with("target")
                    && !name.starts_with("pkg")
                {
                    walk(&p, found);
                }
            } else if kind.is_file() {
                found.push(p);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root(), &mut found);
    found.sort();
    found
}

/// A file's text as the hygiene tests read it: a text file whole, a `.safetensors` file's header
/// (the JSON after its 8-byte length: the metadata strings; the tensors are numbers), and nothing
/// of another binary file (a NUL byte or invalid UTF-8).
fn readable_text(p: &Path) -> Option<String> {
    let bytes = std::fs::read(p).ok()?;
    if p.extension().is_some_and(|x| x == "safetensors") {
        let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
        return String::from_utf8(bytes.get(8..8usize.checked_add(len)?)?.to_vec()).ok();
    }
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Where `line` names a numbered period of past work, the piece that does: the word for one (the
/// letters s-e-s-s-i-o-n, singular or plural, any case, not inside another word) with a number
/// after it (with a space, `_`, `-` or nothing between); an `s` and a number with a possessive
/// (`’s` or `'s`); an `-s` with two or three digits ending a name or a word, as in a folder named
/// after one; or a path component that is `s` and a number. Hand-written, so that this file's own
/// text does not match: the word is assembled from pieces.
fn numbered_period(line: &str) -> Option<String> {
    let word: String = ["ses", "sion"].concat();
    let c: Vec<char> = line.chars().collect();
    let lower: Vec<char> = c.iter().map(|x| x.to_ascii_lowercase()).collect();
    let w: Vec<char> = word.chars().collect();
    let is_word = |x: char| x.is_alphanumeric() || x == '_';
    let digits_from = |i: usize| {
        c[i.min(c.len())..]
            .iter()
            .take_while(|x| x.is_ascii_digit())
            .count()
    };
    let ends_word = |i: usize| i >= c.len() || !is_word(c[i]);
    let piece = |a: usize, b: usize| c[a..b.min(c.len())].iter().collect::<String>();
    for i in 0..c.len() {
        // The word with a number after it.
        if lower[i..].starts_with(&w) && (i == 0 || !c[i - 1].is_alphabetic()) {
            let mut j = i + w.len();
            if lower.get(j) == Some(&'s') {
                j += 1;
            }
            if matches!(c.get(j), Some(' ' | '_' | '-' | '\u{a0}')) {
                j += 1;
            }
            let n = digits_from(j);
            if n > 0 {
                return Some(piece(i, j + n));
            }
        }
        // `s` and a number, possessive.
        if c[i] == 's' && (i == 0 || !is_word(c[i - 1])) {
            let n = digits_from(i + 1);
            let j = i + 1 + n;
            if n > 0
                && matches!(c.get(j), Some('\'' | '’'))
                && c.get(j + 1) == Some(&'s')
                && ends_word(j + 2)
            {
                return Some(piece(i, j + 2));
            }
        }
        // `-s` and two or three digits ending a word; `/s` and a number ending a path component.
        if (c[i] == '-' || c[i] == '/') && c.get(i + 1) == Some(&'s') {
            let n = digits_from(i + 2);
            let enough = if c[i] == '-' {
                (2..=3).contains(&n)
            } else {
                (1..=3).contains(&n)
            };
            // A path component ends at `/`, a space, a quote or the line's end; `/s2-…` is not
            // one (the section 2 demos' files are named so).
            let ends_component = |k: usize| {
                k >= c.len() || matches!(c[k], '/' | ' ' | '`' | '\'' | '"' | ')' | ',' | ':')
            };
            let ends = if c[i] == '-' {
                ends_word(i + 2 + n)
            } else {
                ends_component(i + 2 + n)
            };
            if enough && ends {
                return Some(piece(i, i + 2 + n));
            }
        }
    }
    None
}

/// No file, file name or folder name refers to a numbered period of past work: a comment or a doc
/// says what is and why, and a measurement names its machine by kind (BENCHMARKS.md's machine
/// table). The product type named after the word, and the word without a number, are fine.
#[test]
fn no_numbered_work_periods() {
    let top = root();
    let mut found = Vec::new();
    for p in tree_files() {
        let rel = p
            .strip_prefix(&top)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        if let Some(hit) = numbered_period(&format!("/{rel}")) {
            found.push(format!("{rel}: its path names `{hit}`"));
        }
        let Some(text) = readable_text(&p) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(hit) = numbered_period(line) {
                found.push(format!("{rel}:{}: `{hit}`", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} references to numbered periods of past work (say what and when instead):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_numbered_period_check_finds_what_it_should() {
    let word: String = ["Ses", "sion"].concat();
    let lower = word.to_lowercase();
    for hit in [
        format!("ran in {lower} 18 on"),
        format!("{lower}s 34–38 ran"),
        format!("scripts/{lower}8.sh"),
        format!("## {word} 38: more"),
        ["as s40", "'s machine"].concat(),
        ["results/x/ends-", "s38/"].concat(),
        ["page-run-", "s40.log"].concat(),
        ["cd /work/runs/", "s33"].concat(),
        ["runs/", "s5/log"].concat(),
    ] {
        assert!(numbered_period(&hit).is_some(), "missed: {hit}");
    }
    for fine in [
        format!("a {word} holds the run"),
        format!("the {lower}'s state"),
        format!("struct {word}; pos{lower}s 5"),
        "data-s2=\"with\"".to_string(),
        "S2a's table, s2b".to_string(),
        "tests/fixtures/x.rs".to_string(),
        "runs web/test/s2-course-shot.mjs".to_string(),
    ] {
        assert!(numbered_period(&fine).is_none(), "false hit: {fine}");
    }
}

/// The docs that cite the tree's files: the top-level guides, docs/ and results/'s READMEs.
fn cited_docs() -> Vec<PathBuf> {
    let top = root();
    let mut docs: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "TESTING.md",
        "CONTRIBUTING.md",
    ]
    .iter()
    .map(|f| top.join(f))
    .filter(|p| p.is_file())
    .collect();
    for p in tree_files() {
        let rel = p
            .strip_prefix(&top)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        let in_docs = rel.starts_with("docs/") && !rel[5..].contains('/') && rel.ends_with(".md");
        let results_readme = rel.starts_with("results/") && rel.ends_with("/README.md");
        if in_docs || results_readme {
            docs.push(p);
        }
    }
    docs
}

/// A cited path's checkable form, or None where it stands for many or for one the reader picks: a
/// glob (`*`, `?`), a placeholder (`<run>`, `…`, `$X`, `foo`; with `upper_placeholders`, a
/// component in capitals such as `DIR` or `N`), a build or test output (`web/pkg`), or the
/// course's own code (`src/run.py`).
/// A `:LINE` or `#anchor` suffix and a `{a,b}` choice are dropped (the first choice is checked).
fn checkable(path: &str, upper_placeholders: bool) -> Option<String> {
    let mut p = path
        .trim_end_matches([',', ';', '.', ')', '"', '\'', ':'])
        .to_string();
    if let Some(i) = p.find('#') {
        p.truncate(i);
    }
    if let Some(i) = p.find(':') {
        p.truncate(i);
    }
    if let (Some(a), Some(b)) = (p.find('{'), p.find('}')) {
        if a < b {
            let first = p[a + 1..b].split(',').next().unwrap_or("").to_string();
            p = format!("{}{}{}", &p[..a], first, &p[b + 1..]);
        }
    }
    let placeholder = p.contains(['*', '?', '<', '>', '$', '…', '|', '['])
        || p.contains("...")
        || upper_placeholders
            && p.split('/').any(|c| {
                c.chars().any(|x| x.is_ascii_uppercase())
                    && c.chars()
                        .all(|x| x.is_ascii_uppercase() || x == '_' || x.is_ascii_digit())
            });
    // The page's test outputs are made by its tests, like the build's.
    let built = ["web/pkg", "web/node_modules", "web/test/out", "target"]
        .iter()
        .any(|b| p == *b || p.starts_with(&format!("{b}/")) || p.starts_with(&format!("{b}-")));
    // `foo` names the example op family of ARCHITECTURE.md's "add an op" steps; a Python file under
    // src/ is the course's code (`python src/run.py`), which this crate's src/ never holds.
    let example = p.split('/').any(|c| c == "foo" || c.starts_with("foo."));
    let course_code = p.starts_with("src/") && p.ends_with(".py");
    (!p.is_empty() && !placeholder && !built && !example && !course_code).then_some(p)
}

/// Every relative Markdown link in the docs and every repository path they cite in backticks
/// (`results/…`, `docs/…`, `scripts/…`, `web/…`, `src/…`, `tests/…`, `shaders/…`) exists. Links
/// resolve from the doc's folder, backticked paths from the repository root; a path written after
/// an output flag (`--writing_params_path`, `--outputs_path`, `--out_dir`, `>`) is one a command
/// makes, not one the tree holds.
#[test]
fn docs_links_exist() {
    const ROOTS: [&str; 7] = [
        "results/", "docs/", "scripts/", "web/", "src/", "tests/", "shaders/",
    ];
    const MADE_BY: [&str; 5] = [
        "--writing_params_path",
        "--outputs_path",
        "--out_dir",
        ">",
        "--out",
    ];
    let top = root();
    let mut missing = Vec::new();
    for doc in cited_docs() {
        let rel = doc
            .strip_prefix(&top)
            .unwrap_or(&doc)
            .to_string_lossy()
            .replace('\\', "/");
        let dir = doc.parent().unwrap_or(&top).to_path_buf();
        let text = std::fs::read_to_string(&doc).expect("doc");
        let mut in_block = false;
        // Whether an inline code span opened on an earlier line of the paragraph is still open.
        let mut in_span = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
                in_span = false;
                continue;
            }
            if in_block {
                continue;
            }
            if line.trim().is_empty() {
                in_span = false;
                continue;
            }
            let mut check = |target: &str, base: &Path, how: &str| {
                if let Some(p) = checkable(target, how == "path") {
                    if !base.join(&p).exists() {
                        missing.push(format!("{rel}:{}: {how} `{target}`", n + 1));
                    }
                }
            };
            // Inline code spans: every other piece between backticks.
            let mut prose = String::new();
            for (i, piece) in line.split('`').enumerate() {
                if i > 0 {
                    in_span = !in_span;
                }
                if !in_span {
                    prose.push_str(piece);
                    prose.push(' ');
                    continue;
                }
                let words: Vec<&str> = piece.split_whitespace().collect();
                for (k, w) in words.iter().enumerate() {
                    let made = k > 0 && MADE_BY.contains(&words[k - 1]);
                    if !made && ROOTS.iter().any(|r| w.starts_with(r)) {
                        check(w, &top, "path");
                    }
                }
            }
            // Markdown links `[text](target)` and references `[name]: target`, outside code spans.
            let mut targets = Vec::new();
            let mut rest = prose.as_str();
            while let Some(i) = rest.find("](") {
                let after = &rest[i + 2..];
                let Some(end) = after.find(')') else { break };
                targets.push(
                    after[..end]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                );
                rest = &after[end..];
            }
            let t = line.trim_start();
            if t.starts_with('[') {
                if let Some(i) = t.find("]: ") {
                    targets.push(
                        t[i + 3..]
                            .split_whitespace()
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    );
                }
            }
            for target in targets {
                let target = target.trim_start_matches('<').trim_end_matches('>');
                let external = target.contains("://")
                    || target.starts_with("mailto:")
                    || target.starts_with('#')
                    || target.is_empty();
                if !external {
                    check(target, &dir, "link");
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} cited paths do not exist:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The documents stay short enough to read: each within its budget of words (as `wc -w` counts
/// them) and the README within its lines; results/ keeps at most 80 files of evidence.
#[test]
fn docs_stay_within_their_budgets() {
    let budgets = [
        ("README.md", 2600, Some(220)),
        ("docs/page.md", 2500, None),
        ("ARCHITECTURE.md", 2200, None),
        ("BENCHMARKS.md", 3500, None),
        ("TESTING.md", 2500, None),
    ];
    let mut over = Vec::new();
    for (file, words, lines) in budgets {
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_default();
        let w = text.split_whitespace().count();
        if w > words {
            over.push(format!("{file}: {w} words (budget {words})"));
        }
        if let Some(l) = lines.filter(|&l| text.lines().count() > l) {
            over.push(format!(
                "{file}: {} lines (budget {l})",
                text.lines().count()
            ));
        }
    }
    fn count(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        count(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
    }
    let results = count(&root().join("results"));
    if results > 80 {
        over.push(format!("results/: {results} files (budget 80)"));
    }
    assert!(over.is_empty(), "over budget: {}", over.join("; "));
}
