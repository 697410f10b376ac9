//! The CLI's files: named inputs (a file, or a text of the embedded corpus), the output checks
//! made before any work, and atomic writes.

use super::{Cli, Res};
use attnlab::data;
use attnlab::train::run;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A named input: a file's bytes, or one of the embedded corpus's texts.
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

pub fn read(path: &Path) -> Res<Input> {
    Ok(Input {
        name: path.display().to_string(),
        bytes: data::read_file(path).map_err(|e| e.to_string())?,
    })
}

pub fn embedded(name: &str, text: &str) -> Input {
    Input {
        name: format!("<embedded {name}>"),
        bytes: text.as_bytes().to_vec(),
    }
}

/// The three inputs a function may use: corpus, finetune TSV, eval TSV (None when not given
/// and not defaulted).
pub struct Inputs {
    pub corpus: Input,
    pub finetune: Option<Input>,
    pub eval: Option<Input>,
}

pub fn inputs(cli: &Cli) -> Res<Inputs> {
    match &cli.pretrain_corpus_path {
        Some(p) => Ok(Inputs {
            corpus: read(p)?,
            finetune: cli.finetune_corpus_path.as_deref().map(read).transpose()?,
            eval: cli.eval_corpus_path.as_deref().map(read).transpose()?,
        }),
        None => {
            let c = run::default_corpus(cli.tiny);
            let pick = |p: &Option<PathBuf>, name: &str, text: &str| match p {
                Some(p) => read(p).map(Some),
                None => Ok(Some(embedded(name, text))),
            };
            Ok(Inputs {
                corpus: embedded("wiki.txt", &c.wiki),
                finetune: pick(&cli.finetune_corpus_path, "train.tsv", &c.train_tsv)?,
                eval: pick(&cli.eval_corpus_path, "dev.tsv", &c.dev_tsv)?,
            })
        }
    }
}

/// Fail before any work when an output could not be written: its folder must exist and the
/// path must not be a folder.
pub fn check_output(path: &Path, flag: &str) -> Res<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "{flag} {}: the folder {} does not exist; create it first",
            path.display(),
            dir.display()
        ));
    }
    if path.is_dir() {
        return Err(format!(
            "{flag} {} is a folder; give a file name",
            path.display()
        ));
    }
    Ok(())
}

/// Write `<path>.tmp` in the same folder, fsync it, then rename over `path`: a reader never
/// sees half a file, and a failure leaves no output behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Res<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        // Fault injection for tests/faults.rs: hold the finished temp file for a while so a
        // test can kill the process between the write and the rename.
        if let Some(ms) = std::env::var("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("could not write {}: {e}", path.display())
    })
}

pub fn need<'a>(v: &'a Option<PathBuf>, flag: &str, function: &str) -> Res<&'a Path> {
    v.as_deref()
        .ok_or_else(|| format!("{function} needs --{flag} PATH"))
}

pub fn lines(items: &[String]) -> String {
    items.iter().map(|p| format!("{p}\n")).collect()
}
