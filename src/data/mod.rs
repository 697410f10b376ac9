//! CS224N A5 data on the CPU: the character vocabulary, the name→birthplace TSVs, the two datasets
//! (finetuning `NameDataset`, pretraining `CharCorruptionDataset`), evaluation helpers, and an
//! embedded generated corpus for when the course's files are absent. Everything takes file
//! *contents* plus a file name (for messages), so it runs unchanged in the browser (wasm32); the
//! only filesystem helper is `read_file`, compiled natively only.

mod biography;
pub mod corpus;
mod corpus_words;
pub mod corruption;
pub mod digits;
pub mod evaluate;
pub mod name_dataset;
pub mod rng;
pub mod tsv;
pub mod vocab;

pub use corpus::{generate, generate_sized, CorpusSizes, DefaultCorpus, NOTE_FORMS};
pub use corruption::{CharCorruptionDataset, Corruption};
pub use evaluate::{
    evaluate_places, format_accuracy, london_baseline, prediction_from_completion, prompt_for,
    python_float_repr,
};
pub use name_dataset::NameDataset;
pub use tsv::{looks_like_questions, parse_tsv, parse_tsv_str, Row, TsvMode};
pub use vocab::Vocab;

use crate::error::{Error, Result};

/// Context length of the model; dataset examples are `BLOCK_SIZE - 1` = 127 tokens long.
pub const BLOCK_SIZE: usize = 128;
/// Padding character □ (U+25A1), always token 0; the loss ignores PAD targets.
pub const PAD_CHAR: char = '\u{25A1}';
/// Mask / separator character ⁇ (U+2047), always token 1.
pub const MASK_CHAR: char = '\u{2047}';
pub const PAD_ID: u32 = 0;
pub const MASK_ID: u32 = 1;

/// 1-based (line, column-in-chars) of a byte offset in `text` (offset clamped to the text).
pub fn line_col(text: &str, byte_offset: usize) -> (usize, usize) {
    let mut end = byte_offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The documents (lines) of a pretraining text as run.py counts them: `text.split('\n')`, the
/// empty one after a final newline included (2938 on wiki.txt).
pub fn documents(text: &str) -> usize {
    universal_newlines(text).split('\n').count()
}

/// Line ends as Python's text mode reads them (the reference opens every file that way): `\r\n`
/// and a lone `\r` become `\n`. So a corpus saved with Windows line ends gives the same
/// vocabulary and documents as the original.
pub fn universal_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Validate UTF-8, naming the file, line and column (in characters) of the first bad byte, and
/// its byte offset in the file.
pub fn text_from_bytes<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let off = e.valid_up_to();
            let line = bytes[..off].iter().filter(|&&b| b == b'\n').count() + 1;
            let start = bytes[..off]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            // The bytes before `off` are valid UTF-8, so the line's start is a character's.
            let col = std::str::from_utf8(&bytes[start..off])
                .map_or(off - start, |t| t.chars().count())
                + 1;
            let bad = bytes.get(off).copied().unwrap_or(0);
            Err(Error::Msg(format!(
                "{file}:{line}:{col}: invalid UTF-8 at column {col} (byte 0x{bad:02X}, at byte \
                 offset {off} of the file); re-save the file as UTF-8"
            )))
        }
    }
}

/// Read a whole file natively (not available on wasm32, where the page hands us the bytes).
#[cfg(not(target_arch = "wasm32"))]
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let fix = match e.kind() {
            std::io::ErrorKind::PermissionDenied => {
                "check its permissions (this user may not read it)"
            }
            _ => "check the path",
        };
        Error::Msg(format!("cannot read {}: {e}; {fix}", path.display()))
    })
}
