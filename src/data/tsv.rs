//! The name→birthplace TSV files: one `Where was NAME born?<TAB>Place` per line. Test inputs may
//! carry the question column only. CRLF line ends and a UTF-8 byte-order mark are accepted;
//! everything else that is malformed is an error naming the file, the 1-based line and the fix.

use super::text_from_bytes;
use crate::error::{Error, Result};

/// One parsed row. `line` is 1-based in the original file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub question: String,
    /// None for a question-only (test input) file.
    pub answer: Option<String>,
    /// Whether the line ended with a newline in the file. The reference takes the question as
    /// `line.split('\t')[0]`, which keeps that newline when there is no tab (see `prompt`).
    pub newline: bool,
}

impl Row {
    /// The text the model is asked: the question, plus the line's newline for a question-only
    /// row (so birth_test_inputs.tsv is asked as the reference asks it, "…born?\n⁇").
    pub fn prompt_text(&self) -> String {
        if self.answer.is_none() && self.newline {
            format!("{}\n", self.question)
        } else {
            self.question.clone()
        }
    }
}

/// Whether every row must carry an answer column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsvMode {
    /// Training / gold files: `question<TAB>answer` on every line.
    RequireAnswers,
    /// Evaluation inputs: either all rows have answers or none do.
    AnswersOptional,
}

/// Whether a text given as the pretraining corpus is a questions file instead: at least 80% of
/// its first 50 non-empty lines hold a tab or read "Where was … born?" (a note in the CLI; the
/// page's check of a pretraining text, src/wasm/inputs.rs, refuses it).
pub fn looks_like_questions(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(50)
        .collect();
    let q = lines
        .iter()
        .filter(|l| {
            let l = l.trim_end();
            l.contains('\t') || (l.starts_with("Where was ") && l.ends_with(" born?"))
        })
        .count();
    !lines.is_empty() && q * 5 >= lines.len() * 4
}

const EXPECTED: &str = "expected “Where was NAME born?”, a tab, then the place";

/// A file where no line is a question (no tab anywhere, no line ending with “?”) is text given in
/// the wrong place (wiki.txt, a biography, a note), said as such rather than as its first line's
/// missing tab; in either mode (a training or dev file, or the test inputs).
fn not_questions(file: &str, lines: &[&str]) -> Option<Error> {
    let text: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let first = text.first()?;
    if text
        .iter()
        .any(|l| l.contains('\t') || l.trim_end().ends_with('?'))
    {
        return None;
    }
    let shown: String = first.chars().take(40).collect();
    Some(Error::Msg(format!(
        "{file}: none of its {n} line{s} is a question (“{shown}{more}” has no tab and does not \
         end with “?”); a questions file holds one “Where was NAME born?”, a tab and the place \
         on each line (the test inputs: the question alone); a biography text is the \
         pretraining corpus (wiki.txt)",
        n = text.len(),
        s = if text.len() == 1 { "" } else { "s" },
        more = if first.chars().count() > 40 {
            "…"
        } else {
            ""
        },
    )))
}

/// Parse raw bytes (validating UTF-8, which names the byte offset and line of a bad byte).
pub fn parse_tsv(bytes: &[u8], file: &str, mode: TsvMode) -> Result<Vec<Row>> {
    parse_tsv_str(text_from_bytes(bytes, file)?, file, mode)
}

/// Parse already-decoded text.
pub fn parse_tsv_str(text: &str, file: &str, mode: TsvMode) -> Result<Vec<Row>> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::Msg(format!(
            "{file}: the file is empty; {EXPECTED} on each line"
        )));
    }
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // Blank lines at the very end (the usual trailing newline, or a few more) are not rows.
    let n_rows = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |p| p + 1);
    if let Some(e) = not_questions(file, &lines[..n_rows]) {
        return Err(e);
    }
    // Questions without answers where answers are needed (birth_test_inputs.tsv given to
    // finetune or the probe): said for the file, not as line 1's missing tab.
    if mode == TsvMode::RequireAnswers && lines[..n_rows].iter().all(|l| !l.contains('\t')) {
        return Err(Error::Msg(format!(
            "{file} has questions without answers (no line has a tab); this needs each question \
             with its place, one tab between, as in birth_dev.tsv (a file of questions only, \
             such as birth_test_inputs.tsv, can only be evaluated)"
        )));
    }
    let mut rows = Vec::with_capacity(n_rows);
    for (i, raw) in lines[..n_rows].iter().enumerate() {
        let line = i + 1;
        let at = |what: String| Error::Msg(format!("{file}:{line}: {what}"));
        if raw.trim().is_empty() {
            return Err(at("blank line; remove blank lines between rows".into()));
        }
        let fields: Vec<&str> = raw.split('\t').collect();
        let (question, answer) = match fields.as_slice() {
            [q] => match mode {
                TsvMode::RequireAnswers => {
                    return Err(at(format!(
                        "no tab in {raw:?}; {EXPECTED}: separate the question and the place with \
                         one tab character"
                    )))
                }
                TsvMode::AnswersOptional => (*q, None),
            },
            [q, a] => {
                if a.trim().is_empty() {
                    return Err(at(format!("empty answer after the tab; {EXPECTED}")));
                }
                (*q, Some(a.to_string()))
            }
            _ => {
                return Err(at(format!(
                    "{} columns ({} tabs); {EXPECTED} with exactly one tab: remove the extra tabs",
                    fields.len(),
                    fields.len() - 1
                )))
            }
        };
        if question.trim().is_empty() {
            return Err(at(format!("empty question before the tab; {EXPECTED}")));
        }
        if let Some(first) = rows.first() {
            let first: &Row = first;
            if first.answer.is_some() != answer.is_some() {
                let (has, lacks) = if answer.is_some() {
                    (line, first.line)
                } else {
                    (first.line, line)
                };
                return Err(at(format!(
                    "line {has} has an answer column but line {lacks} does not; give every row an \
                     answer or none"
                )));
            }
        }
        rows.push(Row {
            line,
            question: question.to_string(),
            answer,
            newline: i + 1 < lines.len(),
        });
    }
    Ok(rows)
}
