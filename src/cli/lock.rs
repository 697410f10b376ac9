//! One run per output: `<output>.lock` holds the pid of the run writing that output, taken before
//! any work and removed when the run ends. Two runs saving one checkpoint would each say "saved"
//! while one model is gone; the second is refused at once instead, naming the first one's pid.

use super::Res;
use std::path::{Path, PathBuf};

/// The lock on one output, removed when dropped (a run's normal end or an error's).
pub struct OutputLock {
    path: PathBuf,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Only our own lock: a lock another run took after ours was removed by hand stays.
        if owner(&self.path) == Some(std::process::id()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `<path>.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// The pid a lock file names, if it names one.
fn owner(lock: &Path) -> Option<u32> {
    std::fs::read_to_string(lock).ok()?.trim().parse().ok()
}

/// Whether process `pid` is running (Linux: `/proc/<pid>`; elsewhere every lock is taken as held).
fn alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Take the lock on `output` (the file `flag` names) or refuse: a live run holding it is named by
/// its pid; a lock whose run is gone (killed) is removed with a note and taken.
pub fn take(output: &Path, flag: &str) -> Res<OutputLock> {
    let lock = lock_path(output);
    // The pid goes into a file of our own first, then is linked to the lock's name: the link is
    // made whole or not at all, so another run never reads a lock without its pid.
    let mine = {
        let mut name = lock.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.attnlab.tmp", std::process::id()));
        lock.with_file_name(name)
    };
    std::fs::write(&mine, format!("{}\n", std::process::id())).map_err(|e| {
        format!(
            "{flag} {}: cannot create its lock {} ({e}); make the folder writable",
            output.display(),
            lock.display()
        )
    })?;
    let result = take_linked(output, flag, &lock, &mine);
    let _ = std::fs::remove_file(&mine);
    result
}

fn take_linked(output: &Path, flag: &str, lock: &Path, mine: &Path) -> Res<OutputLock> {
    for _ in 0..3 {
        match std::fs::hard_link(mine, lock) {
            Ok(()) => {
                return Ok(OutputLock {
                    path: lock.to_path_buf(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // A file system without hard links: create the lock exclusively and write the pid.
            Err(_) => {
                if let Ok(mut f) = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(lock)
                {
                    use std::io::Write;
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(OutputLock {
                        path: lock.to_path_buf(),
                    });
                }
            }
        }
        match owner(lock) {
            Some(pid) if pid != std::process::id() && !alive(pid) => {
                // Moved aside before removal, so that a lock another run took meanwhile is not
                // the one removed: what was moved is checked again.
                let aside = mine.with_extension("stale");
                if std::fs::rename(lock, &aside).is_ok() {
                    match owner(&aside) {
                        Some(p) if p != pid && alive(p) => {
                            let _ = std::fs::hard_link(&aside, lock);
                        }
                        _ => tell!(
                            "note: removed the lock {} of run {pid}, which is no longer running \
                             (it was stopped before it could remove it)",
                            lock.display()
                        ),
                    }
                    let _ = std::fs::remove_file(&aside);
                }
            }
            Some(pid) => {
                return Err(format!(
                    "{flag} {} is being written by another attnlab run (pid {pid}, which holds \
                     {}); wait for it to end or stop it (kill {pid}), or give another {flag}",
                    output.display(),
                    lock.display()
                ))
            }
            // A lock without a pid: written by hand, or its run is just making it.
            None => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    Err(format!(
        "{flag} {}: its lock {} could not be taken; if no other attnlab run writes it, remove \
         the lock and start again",
        output.display(),
        lock.display()
    ))
}
