//! No import circle among the files of one folder of `src/` (the twin of web/test/imports.mjs for
//! the page's modules): a file that names a sibling (`super::x` in a file, `self::x` in a `mod.rs`,
//! `crate::<folder>::x`) depends on it, and no chain of such names may come back to where it
//! started. A circle means two files that can only be read together; the fix is to move what both
//! need into one of them or into a third (e.g. `cli/progress.rs`, `web/engine.rs`'s `RunGuard`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    for e in std::fs::read_dir(dir).expect("read src").flatten() {
        if e.path().is_dir() {
            folders(&e.path(), out);
        }
    }
}

/// The identifiers after each occurrence of `prefix` in `text`.
fn names_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .filter(|(i, _)| {
            // A whole path segment: `super::` not preceded by another identifier character.
            *i == 0
                || !text.as_bytes()[i - 1].is_ascii_alphanumeric() && text.as_bytes()[i - 1] != b'_'
        })
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Sibling dependencies of the `.rs` files directly in `dir`, by file stem.
fn graph(src: &Path, dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let rel: Vec<String> = dir
        .strip_prefix(src)
        .expect("inside src")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let crate_prefix = if rel.is_empty() {
        "crate::".to_string()
    } else {
        format!("crate::{}::", rel.join("::"))
    };
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    let siblings: BTreeSet<String> = entries
        .iter()
        .filter_map(|p| {
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.is_dir() || p.extension().is_some_and(|x| x == "rs")).then_some(stem)
        })
        .collect();
    let mut g = BTreeMap::new();
    for p in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
    {
        let me = p.file_stem().expect("stem").to_string_lossy().into_owned();
        if me == "mod" || me == "lib" || me == "main" {
            continue; // the folder's root names its children; that is not a circle
        }
        let text = std::fs::read_to_string(p).expect("read file");
        let mut deps = BTreeSet::new();
        for n in names_after(&text, "super::")
            .into_iter()
            .chain(names_after(&text, &crate_prefix))
        {
            if n != me && siblings.contains(n) && n != "mod" {
                deps.insert(n.to_string());
            }
        }
        g.insert(me, deps);
    }
    g
}

fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        found: &mut BTreeSet<String>,
    ) {
        let last = path.last().expect("non-empty").clone();
        for d in g.get(&last).into_iter().flatten() {
            if let Some(at) = path.iter().position(|x| x == d) {
                let mut c = path[at..].to_vec();
                let k = c
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, x)| *x)
                    .map_or(0, |(i, _)| i);
                c.rotate_left(k);
                found.insert(c.join(" → "));
            } else if g.contains_key(d) {
                path.push(d.clone());
                walk(g, path, found);
                path.pop();
            }
        }
    }
    let mut found = BTreeSet::new();
    for n in g.keys() {
        walk(g, &mut vec![n.clone()], &mut found);
    }
    found
}

#[test]
fn no_import_circle_among_the_files_of_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![];
    folders(&src, &mut dirs);
    let mut all = vec![];
    for d in &dirs {
        for c in circles(&graph(&src, d)) {
            all.push(format!(
                "{}: {c}",
                d.strip_prefix(&src).expect("in src").display()
            ));
        }
    }
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

#[test]
fn a_planted_circle_is_found() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        circles(&g).into_iter().collect::<Vec<_>>(),
        vec!["a → b → c".to_string()]
    );
}
