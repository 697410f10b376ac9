//! Finetuning examples from a name→birthplace TSV (spec "NameDataset"). For a row `q<TAB>a`:
//! `s = q + ⁇ + a + ⁇` right-padded with □ to 128 chars; `x = s[..127]`,
//! `y = □·(len(q)−1) + s[len(q)..]` (127 chars), so only the ⁇ after the question, the answer
//! characters and the closing ⁇ are trained (PAD targets are ignored by the loss).

use super::tsv::{parse_tsv, Row, TsvMode};
use super::{text_from_bytes, Vocab, BLOCK_SIZE, MASK_CHAR, PAD_CHAR, PAD_ID};
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct NameDataset {
    /// The rows as trained on: non-ASCII characters already dropped (like the reference, which
    /// does `encode('utf-8').decode('ascii', errors='ignore')`), only the first `len()` rows.
    rows: Vec<Row>,
    /// Encoded (x, y) per row, each `BLOCK_SIZE - 1` long.
    examples: Vec<(Vec<u32>, Vec<u32>)>,
    file: String,
}

impl NameDataset {
    /// Parse `bytes` (a TSV with answers) and encode every example with `vocab`.
    pub fn new(bytes: &[u8], file: &str, vocab: &Vocab) -> Result<NameDataset> {
        let text = text_from_bytes(bytes, file)?;
        let parsed = parse_tsv(bytes, file, TsvMode::RequireAnswers)?;
        // Length semantics of the reference: `data = text.split('\n')` and
        // `__len__ = len(data) - 1`. With the usual trailing newline the last piece is the empty
        // string after it, so len == number of rows. Without a trailing newline the reference
        // silently never serves the last row; we mirror that so epochs and step counts match.
        // (Extra blank lines at the end would make the reference crash on an empty row; our
        // parser drops them, so there we simply use every row.)
        let len = if text.ends_with('\n') {
            parsed.len()
        } else {
            parsed.len().saturating_sub(1)
        };
        let mut rows = Vec::with_capacity(len);
        let mut examples = Vec::with_capacity(len);
        for row in parsed.into_iter().take(len) {
            let question: String = row.question.chars().filter(char::is_ascii).collect();
            let answer: String = row
                .answer
                .as_deref()
                .unwrap_or("")
                .chars()
                .filter(char::is_ascii)
                .collect();
            let at = |what: String| Error::Msg(format!("{file}:{}: {what}", row.line));
            let q_len = question.chars().count();
            if q_len == 0 {
                return Err(at(
                    "the question has no ASCII characters left after dropping \
                     non-ASCII ones (as the reference does); write it in ASCII"
                        .into(),
                ));
            }
            let s: String = format!("{question}{MASK_CHAR}{answer}{MASK_CHAR}");
            let s_len = s.chars().count();
            if s_len > BLOCK_SIZE {
                let a_len = answer.chars().count();
                // The question needs at least one character beside the answer and two separators.
                let fix = match BLOCK_SIZE.checked_sub(2 + a_len) {
                    Some(room) if room > 0 => {
                        format!("shorten the question (max {room} characters with this answer)")
                    }
                    _ => format!(
                        "the answer alone is {a_len} characters; shorten it to at most {}",
                        BLOCK_SIZE - 3
                    ),
                };
                return Err(at(format!(
                    "question + answer + 2 separators is {s_len} characters, more than the block \
                     size {BLOCK_SIZE}; {fix}"
                )));
            }
            let ids = vocab.encode_in(&s, &format!("{file}:{}", row.line))?;
            let mut padded = ids;
            padded.resize(BLOCK_SIZE, PAD_ID);
            let x = padded[..BLOCK_SIZE - 1].to_vec();
            let mut y = vec![PAD_ID; q_len - 1];
            y.extend_from_slice(&padded[q_len..]);
            debug_assert_eq!(y.len(), BLOCK_SIZE - 1);
            examples.push((x, y));
            rows.push(Row {
                line: row.line,
                question,
                answer: Some(answer),
                newline: true,
            });
        }
        // PAD must be token 0 for the loss's ignore_index; a hand-built vocab could break that.
        if vocab.id(PAD_CHAR) != Some(PAD_ID) {
            return Err(Error::Msg(format!(
                "{file}: the vocabulary does not map □ to 0; build it with Vocab::from_text"
            )));
        }
        Ok(NameDataset {
            rows,
            examples,
            file: file.to_string(),
        })
    }

    /// Number of examples (reference `len(lines) - 1`, see `new`).
    pub fn len(&self) -> usize {
        self.examples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    /// (x, y) of example `idx`, each 127 token ids.
    pub fn get(&self, idx: usize) -> Result<(Vec<u32>, Vec<u32>)> {
        self.examples.get(idx).cloned().ok_or_else(|| {
            Error::Msg(format!(
                "{}: example {idx} requested but the dataset has {} examples",
                self.file,
                self.len()
            ))
        })
    }

    /// The rows as trained on (non-ASCII dropped), in order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
}
