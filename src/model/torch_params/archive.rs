//! The `torch.save` zip archive: its one folder, `data.pkl` and the storages' entries, each read
//! at most once and never beyond the file's own length.

use super::{escape, is_torch_zip, msg, LEGACY_MAGIC};
use crate::error::Result;
use std::io::{Cursor, Read};

pub(super) struct Archive<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// The folder every entry is in (torch names it after the file).
    pub(super) prefix: String,
    len: usize,
    what: &'a str,
}

impl<'a> Archive<'a> {
    pub(super) fn open(bytes: &'a [u8], what: &'a str) -> Result<Archive<'a>> {
        if !is_torch_zip(bytes) {
            if bytes.starts_with(&LEGACY_MAGIC) {
                return Err(msg(format!(
                    "{what} is a PyTorch file in the legacy format of PyTorch before 1.6, which this \
                     reader does not take; load it in PyTorch and save it again with torch.save \
                     (a zip archive)"
                )));
            }
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            return Err(msg(format!(
                "{what} is not a PyTorch .params file: torch.save writes a zip archive, starting \
                 with the bytes 50 4b 03 04 (\"PK\"), and this file starts with {}",
                if head.is_empty() {
                    "nothing (it is empty)".to_string()
                } else {
                    head.join(" ")
                }
            )));
        }
        let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            if what.ends_with(".params") {
                msg(format!(
                    "{what} is not a complete zip archive (truncated or corrupted?): {e}; a \
                     .params file from torch.save must be copied whole"
                ))
            } else {
                msg(format!(
                    "{what} starts like a zip archive (\"PK\", as torch.save writes) but is not a \
                     complete one ({e}); it is not a safetensors checkpoint either: give a model \
                     file written by attnlab or the course's run.py, copied whole"
                ))
            }
        })?;
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        let pickles: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_suffix("/data.pkl")
                    .is_some_and(|p| !p.is_empty() && !p.contains('/'))
            })
            .collect();
        let prefix = match pickles.as_slice() {
            [one] => one.trim_end_matches("data.pkl").to_string(),
            [] => {
                let mut shown: Vec<String> = names.iter().take(6).map(|n| escape(n)).collect();
                if names.len() > 6 {
                    shown.push("...".into());
                }
                return Err(msg(format!(
                    "{what} is a zip archive but not one written by torch.save: it has no \
                     <name>/data.pkl (it holds {}); expected the state_dict saved by \
                     torch.save(model.state_dict(), path)",
                    if shown.is_empty() {
                        "nothing".to_string()
                    } else {
                        shown.join(", ")
                    }
                )));
            }
            many => {
                return Err(msg(format!(
                    "{what} holds {} pickles ({}); torch.save writes one <name>/data.pkl",
                    many.len(),
                    many.iter()
                        .map(|s| escape(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        };
        Ok(Archive {
            zip,
            prefix,
            len: bytes.len(),
            what,
        })
    }

    /// The entry `<prefix><name>`, which must hold `expect` bytes when given; `Ok(None)` when the
    /// archive has no such entry.
    pub(super) fn entry(&mut self, name: &str, expect: Option<usize>) -> Result<Option<Vec<u8>>> {
        let (what, full) = (self.what, escape(&format!("{}{name}", self.prefix)));
        let mut f = match self.zip.by_name(&format!("{}{name}", self.prefix)) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(msg(format!("{what}: cannot read {full}: {e}"))),
        };
        let size = f.size();
        if size > self.len as u64 {
            return Err(msg(format!(
                "{what}: {full} claims {size} bytes, more than the whole file ({} bytes); the \
                 archive is corrupted",
                self.len
            )));
        }
        if let Some(n) = expect {
            if size != n as u64 {
                return Err(msg(format!(
                    "{what}: {full} has {size} bytes but its tensors need {n}; the archive is \
                     corrupted or was not written by torch.save"
                )));
            }
        }
        let mut buf = Vec::with_capacity(size as usize);
        f.read_to_end(&mut buf).map_err(|e| {
            msg(format!(
                "{what}: cannot read {full} (truncated or corrupted?): {e}"
            ))
        })?;
        if buf.len() as u64 != size {
            return Err(msg(format!(
                "{what}: {full} ends after {} of its {size} bytes (truncated?)",
                buf.len()
            )));
        }
        Ok(Some(buf))
    }
}
