//! Every kernel's `Params` is written twice, as a `#[repr(C)]` Rust struct that the op file fills
//! and as the WGSL struct its shader reads at binding 0. Nothing but this test ties the two: it
//! reads both from the sources and fails when they disagree word by word (count, type, name), so a
//! field added, dropped, reordered or retyped on one side only is caught before any GPU runs.
//!
//! Every field is one 4-byte word (`u32`, `i32`, `f32`) or, on the Rust side, an array of them.
//! A Rust array `a: [u32; 4]` matches four WGSL words named `a_*` (the matmul views); padding
//! (`_pad*`) matches padding.

use std::fs;
use std::path::{Path, PathBuf};

/// One 4-byte word of a struct: its field name and scalar type.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    name: String,
    ty: String,
    /// Set for the words of a Rust array field: its name, which WGSL names must start with.
    array: bool,
}

fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The body (between the braces) of `struct <name> {` in `src`, if there is one.
fn struct_body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let start = src.find(&format!("struct {name} {{"))?;
    let open = start + src[start..].find('{')? + 1;
    let close = open + src[open..].find('}')?;
    Some(&src[open..close])
}

/// The fields of a struct body as (name, type) pairs, dropping `pub` and attributes.
fn fields(body: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    // Split on commas outside brackets (`[u32; 4]` holds none, but `;` must not split either).
    let mut depth = 0;
    let mut cur = String::new();
    for ch in body.chars().chain(std::iter::once(',')) {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            let f = cur
                .trim()
                .trim_start_matches("pub(crate)")
                .trim_start_matches("pub");
            if let Some((n, t)) = f.split_once(':') {
                out.push((n.trim().to_string(), t.trim().to_string()));
            }
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    out
}

fn words(fields: &[(String, String)]) -> Result<Vec<Word>, String> {
    let mut out = vec![];
    for (name, ty) in fields {
        let scalar = |t: &str| matches!(t, "u32" | "i32" | "f32");
        if scalar(ty) {
            out.push(Word {
                name: name.clone(),
                ty: ty.clone(),
                array: false,
            });
        } else if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            let (t, n) = inner
                .split_once(';')
                .ok_or_else(|| format!("field {name}: cannot read type {ty}"))?;
            let n: usize = n
                .trim()
                .parse()
                .map_err(|_| format!("field {name}: cannot read length in {ty}"))?;
            if !scalar(t.trim()) {
                return Err(format!(
                    "field {name}: {ty} is not an array of 4-byte scalars"
                ));
            }
            for _ in 0..n {
                out.push(Word {
                    name: name.clone(),
                    ty: t.trim().to_string(),
                    array: true,
                });
            }
        } else {
            return Err(format!(
                "field {name}: type {ty} is not a 4-byte scalar (extend this test first)"
            ));
        }
    }
    Ok(out)
}

/// Compare a Rust struct's words with a WGSL struct's, naming the first difference.
fn compare(rust: &[Word], wgsl: &[Word]) -> Result<(), String> {
    for (i, (r, w)) in rust.iter().zip(wgsl).enumerate() {
        let names_match = if r.name.starts_with("_pad") {
            w.name.starts_with("_pad")
        } else if r.array {
            w.name.starts_with(&format!("{}_", r.name))
        } else {
            r.name == w.name
        };
        if !names_match || r.ty != w.ty {
            return Err(format!(
                "word {i} (byte {}): Rust has {}: {}, WGSL has {}: {}",
                4 * i,
                r.name,
                r.ty,
                w.name,
                w.ty
            ));
        }
    }
    if rust.len() != wgsl.len() {
        return Err(format!(
            "Rust has {} words ({} bytes), WGSL has {}",
            rust.len(),
            4 * rust.len(),
            wgsl.len()
        ));
    }
    Ok(())
}

/// The uniform struct types a shader binds (`var<uniform> p: Params;`).
fn uniform_structs(wgsl: &str) -> Vec<String> {
    wgsl.lines()
        .filter_map(|l| l.split("var<uniform>").nth(1))
        .filter_map(|rest| rest.split(':').nth(1))
        .map(|t| t.trim().trim_end_matches(';').trim().to_string())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src/") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_kernel_params_struct_should_match_its_wgsl_twin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut checked = vec![];
    let mut reached = std::collections::BTreeSet::new();
    let mut errors = vec![];
    for file in &files {
        let rust = strip_comments(&fs::read_to_string(file).expect("read a source file"));
        for part in rust.split("include_str!(\"").skip(1) {
            let rel = part.split('"').next().unwrap_or("");
            if !rel.ends_with(".wgsl") {
                continue;
            }
            let shader_path = file.parent().expect("parent").join(rel);
            let wgsl = strip_comments(&fs::read_to_string(&shader_path).expect("read a shader"));
            if let Some(name) = shader_path.file_name() {
                reached.insert(name.to_string_lossy().into_owned());
            }
            for name in uniform_structs(&wgsl) {
                let shader = shader_path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy();
                let rel_file = file.strip_prefix(root).unwrap_or(file);
                let what = format!("{} vs shaders/{shader}", rel_file.display());
                let w = struct_body(&wgsl, &name).map(fields);
                let r = struct_body(&rust, &name).map(fields);
                let (Some(w), Some(r)) = (w, r) else {
                    errors.push(format!("{what}: struct {name} missing on one side"));
                    continue;
                };
                match words(&r)
                    .and_then(|r| words(&w).map(|w| (r, w)))
                    .and_then(|(r, w)| compare(&r, &w))
                {
                    Ok(()) => checked.push(format!("{name} of {rel}")),
                    Err(e) => errors.push(format!("{what}: struct {name}: {e}")),
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Every shader in shaders/ was reached through some op file's include_str!, and every one
    // that binds parameters had them checked (rows.wgsl and rows_subgroup.wgsl, the row kernels'
    // reductions, bind none of their own).
    for e in fs::read_dir(root.join("shaders")).expect("read shaders/") {
        let e = e.expect("dir entry");
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            reached.contains(&name),
            "shaders/{name}: no include_str! reaches it"
        );
        let binds =
            !uniform_structs(&fs::read_to_string(e.path()).expect("read a shader")).is_empty();
        assert!(
            !binds || checked.iter().any(|c| c.ends_with(&format!("/{name}"))),
            "shaders/{name}: no params struct checked (checked: {checked:?})"
        );
    }
}

#[test]
fn the_comparison_should_catch_a_swapped_a_dropped_and_a_retyped_field() {
    let rust = words(&fields("n: u32, alpha: f32, _pad: [u32; 2],")).unwrap();
    let same = words(&fields("n: u32,\n alpha: f32,\n _pad0: u32,\n _pad1: u32,")).unwrap();
    assert_eq!(compare(&rust, &same), Ok(()));
    for bad in [
        "alpha: f32, n: u32, _pad0: u32, _pad1: u32,",
        "n: u32, alpha: f32, _pad0: u32,",
        "n: u32, alpha: u32, _pad0: u32, _pad1: u32,",
        "n: u32, beta: f32, _pad0: u32, _pad1: u32,",
    ] {
        let w = words(&fields(bad)).unwrap();
        assert!(compare(&rust, &w).is_err(), "{bad} should not match");
    }
    let view = words(&fields("a: [u32; 2]")).unwrap();
    let ok = words(&fields("a_row: u32, a_col: u32")).unwrap();
    let wrong = words(&fields("a_row: u32, b_col: u32")).unwrap();
    assert_eq!(compare(&view, &ok), Ok(()));
    assert!(compare(&view, &wrong).is_err());
}
