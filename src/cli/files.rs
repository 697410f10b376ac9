//! The CLI's files: named inputs (a file, or a text of the embedded corpus), the output checks
//! made before any work, and atomic writes.

use super::{Cli, Res};
use attnlab::data;
use attnlab::model::memory::fmt_bytes;
use attnlab::train::run;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A named input: a file's bytes, or one of the embedded corpus's texts.
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The largest input file read (corpus, question file, checkpoint, training state): far above
/// the course's files (the largest, a checkpoint, is a few MB) and below what would exhaust memory.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// Read an input file: only a regular file (a FIFO would block forever, `/dev/zero` never ends)
/// of at most `MAX_INPUT_BYTES`, refused with a message naming it otherwise.
pub fn read(path: &Path) -> Res<Input> {
    use std::io::Read;
    let name = path.display().to_string();
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_dir() {
            return Err(format!("cannot read {name}: it is a folder; give a file"));
        }
        if !m.is_file() {
            return Err(format!(
                "cannot read {name}: it is not a regular file (a pipe, socket or device); save \
                 the data to a file and give that"
            ));
        }
        if m.len() > MAX_INPUT_BYTES {
            return Err(too_big(&name, m.len()));
        }
    }
    // A missing or unreadable file gets the library's message ("cannot read …; check the path").
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(_) => {
            return Ok(Input {
                name,
                bytes: data::read_file(path).map_err(|e| e.to_string())?,
            })
        }
    };
    let mut bytes = vec![];
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}; check that it is a readable file"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big(&name, bytes.len() as u64));
    }
    Ok(Input { name, bytes })
}

fn too_big(name: &str, len: u64) -> String {
    format!(
        "{name} is {len} bytes, more than the {} GiB an input may have; give a smaller file",
        MAX_INPUT_BYTES >> 30
    )
}

/// Memory a run takes per byte of its corpus before the model's: the bytes read, the vocabulary
/// pass and the dataset's copies of the text as characters and token ids (measured: 800 MB peak
/// for a 100 MB corpus, a tiny model, one step).
pub const CORPUS_MEMORY_PER_BYTE: u64 = 8;

/// Refuse, before reading it, a corpus whose pipeline would take more memory than this process
/// may still use (natively on Linux; past it an allocation aborts the run half-way).
fn check_corpus_fits(path: &Path) -> Res<()> {
    let Ok(len) = std::fs::metadata(path).map(|m| m.len()) else {
        return Ok(()); // read() names a missing file
    };
    let need = len.saturating_mul(CORPUS_MEMORY_PER_BYTE);
    match attnlab::model::memory::available_ram() {
        Some(avail) if need > avail => Err(format!(
            "the corpus {} is {} ({len} bytes): reading it (the bytes, the vocabulary pass and \
             the dataset's copies, about {CORPUS_MEMORY_PER_BYTE} bytes of memory per byte) \
             needs about {}, more than {}; give a smaller corpus (at most {} here) or run where \
             more memory is free",
            path.display(),
            fmt_bytes(len),
            fmt_bytes(need),
            attnlab::model::memory::ram_words(avail),
            fmt_bytes(avail / CORPUS_MEMORY_PER_BYTE)
        )),
        _ => Ok(()),
    }
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
            corpus: {
                check_corpus_fits(p)?;
                read(p)?
            },
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

/// Fail before any work when an output could not be written: its folder must exist and take
/// new files (a probe file is created and removed), and the path must not be a folder. Stale
/// temporary files a killed run left beside it are removed.
pub fn check_output(path: &Path, flag: &str) -> Res<()> {
    // Through a symbolic link, the folder of the file it names; a FIFO or a device is written in
    // place when the run ends (write_atomic_all: opening a FIFO now would wait for its reader).
    let (dest, direct) = destination(path);
    if direct {
        return Ok(());
    }
    let path = dest.as_path();
    let dir = folder_of(path);
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
    // A file made read-only is one its owner protects (run.py's open() would fail on it); the
    // atomic rename would replace it all the same, so it is refused here.
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(format!(
            "{flag} {} is read-only, so it is not replaced; make it writable (chmod u+w {}) or \
             choose another path",
            path.display(),
            path.display()
        ));
    }
    let probe = temp_path(path);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) => {
            return Err(format!(
                "{flag} {}: cannot create files in the folder {} ({e}); make it writable or \
                 choose another folder",
                path.display(),
                dir.display()
            ))
        }
    }
    remove_stale_temps(path);
    Ok(())
}

/// The folder a path's file lives in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Whether two paths name the same file: the same (device, inode) on Unix (hard links,
/// symlinks), else the same canonical path; paths that do not exist are compared as absolute
/// paths.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if (ma.dev(), ma.ino()) == (mb.dev(), mb.ino()) {
                return true;
            }
        }
        let _ = (ma, mb);
        if let (Ok(ca), Ok(cb)) = (a.canonicalize(), b.canonicalize()) {
            return ca == cb;
        }
    }
    match (std::path::absolute(a), std::path::absolute(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Refuse, before any work, an output that is one of the command's inputs: writing it would
/// destroy the input. Each entry is (flag, path).
pub fn check_outputs_are_not_inputs(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Res<()> {
    for (oflag, out) in outputs {
        for (iflag, inp) in inputs {
            if same_file(out, inp) {
                return Err(format!(
                    "{oflag} {} is the same file as {iflag} {}: writing it would destroy the \
                     input; give {oflag} another path",
                    out.display(),
                    inp.display()
                ));
            }
        }
    }
    Ok(())
}

/// A temporary name beside `path`, unique to this process and call:
/// `<name>.<pid>-<counter>.attnlab.tmp`.
fn temp_path(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{n}{TEMP_SUFFIX}", std::process::id()));
    path.with_file_name(name)
}

const TEMP_SUFFIX: &str = ".attnlab.tmp";

/// The process id in `name` if it is one of our temporary names for `base`
/// (`<base>.<pid>-<counter>.attnlab.tmp`).
fn temp_owner(name: &str, base: &str) -> Option<u32> {
    let rest = name.strip_prefix(base)?.strip_prefix('.')?;
    let rest = rest.strip_suffix(TEMP_SUFFIX)?;
    let (pid, n) = rest.split_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Remove the temporary files of `path` that a killed run left behind: only names of our own
/// pattern beside `path`, and only those whose process is gone (Linux: no `/proc/<pid>`;
/// elsewhere: older than a day). `check_output` calls it for its path; a training run also for
/// its state's (`<checkpoint>.resume`).
pub fn remove_stale_temps(path: &Path) {
    let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(folder_of(path)) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| temp_owner(n, base)) else {
            continue;
        };
        if pid == std::process::id() || process_alive(pid, &e) {
            continue;
        }
        let _ = std::fs::remove_file(e.path());
    }
}

fn process_alive(pid: u32, entry: &std::fs::DirEntry) -> bool {
    if Path::new("/proc/self").exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    let age = entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    age.is_none_or(|a| a.as_secs() < 24 * 3600)
}

/// Write a unique temporary file in the same folder, fsync it, rename it over `path`, then sync
/// the folder: a reader never sees half a file, concurrent runs never share a temporary, and a
/// failure leaves no output behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Res<()> {
    write_atomic_all(&[(path, bytes)])
}

/// `write_atomic` for files that belong together (a checkpoint and its training state): every
/// temporary is written and synced before the first rename, so a full disk or a failed write
/// replaces none of them and says so.
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> Res<()> {
    write_files(files).map_err(|(e, none_replaced)| {
        if none_replaced {
            e + &unchanged(files)
        } else {
            e
        }
    })
}

/// `write_atomic_all` with the error alone, for a caller that goes on to write some of the files
/// (and says itself what is left as it was).
pub fn write_atomic_pair(files: &[(&Path, &[u8])]) -> Res<()> {
    write_files(files).map_err(|(e, _)| e)
}

/// The writes of `write_atomic_all`; an error says whether no file was replaced yet.
fn write_files(files: &[(&Path, &[u8])]) -> Result<(), (String, bool)> {
    let dests: Vec<(PathBuf, bool)> = files.iter().map(|(p, _)| destination(p)).collect();
    let mut temps: Vec<PathBuf> = Vec::with_capacity(files.len());
    let remove_temps = |temps: &[PathBuf]| {
        for t in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    for ((path, bytes), (dest, direct)) in files.iter().zip(&dests) {
        if *direct {
            continue;
        }
        let tmp = temp_path(dest);
        if let Err(e) = write_temp(&tmp, bytes) {
            let _ = std::fs::remove_file(&tmp);
            remove_temps(&temps);
            return Err((format!("could not write {}: {e}", path.display()), true));
        }
        temps.push(tmp);
    }
    // A FIFO or a device holds nothing to keep: written in place, once every temporary is ready.
    for ((path, bytes), (dest, direct)) in files.iter().zip(&dests) {
        if *direct {
            let written = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(dest)
                .and_then(|mut f| f.write_all(bytes));
            if let Err(e) = written {
                remove_temps(&temps);
                return Err((format!("could not write {}: {e}", path.display()), false));
            }
        }
    }
    let renamed = files.iter().zip(&dests).filter(|(_, (_, direct))| !direct);
    for (i, ((path, _), (dest, _))) in renamed.enumerate() {
        if let Err(e) = std::fs::rename(&temps[i], dest) {
            remove_temps(&temps[i..]);
            return Err((format!("could not write {}: {e}", path.display()), false));
        }
        // The rename is durable once the folder is synced (Unix; elsewhere best effort).
        if let Ok(d) = std::fs::File::open(folder_of(dest)) {
            let _ = d.sync_all();
        }
        // Fault injection for tests/it/cli/checkpoints.rs: stop as a kill would right after this
        // rename (no cleanup runs), leaving the files after it unwritten.
        if std::env::var("ATTNLAB_FAULT_EXIT_AFTER_RENAME")
            .is_ok_and(|v| dest.to_string_lossy().ends_with(&v))
        {
            std::process::exit(137);
        }
    }
    Ok(())
}

/// The files that were there before are said to be unchanged; new ones were not written.
fn unchanged(files: &[(&Path, &[u8])]) -> String {
    let there: Vec<String> = files
        .iter()
        .filter(|(p, _)| p.exists())
        .map(|(p, _)| p.display().to_string())
        .collect();
    match (files.len(), there.as_slice()) {
        (1, _) => String::new(),
        (_, []) => "; nothing was written".to_string(),
        (_, [one]) => format!("; {one} is unchanged"),
        _ => format!("; {} are unchanged", there.join(" and ")),
    }
}

/// Where the bytes for `path` go, and whether they are written in place: through a symbolic link
/// to the file it names (the link stays a link, as `open(path, 'w')` in run.py writes through it);
/// a FIFO or a device such as `/dev/stdout` in place, since a rename would replace it.
pub fn destination(path: &Path) -> (PathBuf, bool) {
    let dest = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| {
            // A link to a file not made yet: its target, read relative to the link's folder.
            std::fs::read_link(path)
                .map_or_else(|_| path.to_path_buf(), |t| folder_of(path).join(t))
        }),
        _ => path.to_path_buf(),
    };
    let direct = std::fs::metadata(&dest).is_ok_and(|m| !m.is_file() && !m.is_dir());
    (dest, direct)
}

/// The bytes into a new file `tmp`, synced; then the fault injections of the tests.
fn write_temp(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    // Fault injection for tests/it/faults.rs: hold the finished temp file for a while so a
    // test can kill the process between the write and the rename.
    if let Some(ms) = std::env::var("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    // Fault injection for tests/it/vit_cli.rs and tests/it/cli/errors.rs: fail as a full disk would,
    // after the write: every file for "1", else a file whose name ends with the value.
    if std::env::var("ATTNLAB_FAULT_FAIL_BEFORE_RENAME")
        .is_ok_and(|v| v == "1" || tmp.to_string_lossy().contains(&format!("{v}.")))
    {
        return Err(std::io::Error::other(
            "injected fault (ATTNLAB_FAULT_FAIL_BEFORE_RENAME)",
        ));
    }
    Ok(())
}

/// A checkpoint's identity as a state records it: "fnv1a64:<hash>:<length>" of its bytes (FNV-1a,
/// 64 bits: enough to tell two checkpoints apart, which is all it is for).
pub fn content_hash(mut r: impl std::io::Read) -> std::io::Result<String> {
    let (mut h, mut len) = (0xcbf2_9ce4_8422_2325u64, 0u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        len += n as u64;
    }
    Ok(format!("fnv1a64:{h:016x}:{len}"))
}

pub fn need<'a>(v: &'a Option<PathBuf>, flag: &str, function: &str) -> Res<&'a Path> {
    v.as_deref()
        .ok_or_else(|| format!("{function} needs --{flag} PATH"))
}

pub fn lines(items: &[String]) -> String {
    items.iter().map(|p| format!("{p}\n")).collect()
}
