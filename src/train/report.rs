//! What an evaluation says beside its score, in one line each: the questions not asked (a
//! character the model lacks) and the questions longer than the model's context. The CLI prints
//! them and the page shows them; `run` re-exports them.

use crate::data::{prompt_for, Row};

/// A question `run::predict_known` could not ask: its line, the first character of it that the
/// model's vocabulary lacks, and that character's 1-based column in the line; `more`: the line's
/// other missing characters (column, character), each once, so the report names them all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub line: usize,
    pub col: usize,
    pub ch: char,
    pub more: Vec<(usize, char)>,
}

/// One line about skipped questions for a person: how many, and each character once, with the
/// file, line and column where it first appears (the first five; the rest with their line). A
/// `scored` file's skipped questions count as wrong; in a file without answers their prediction
/// lines are left empty.
pub fn skipped_line(file: &str, skipped: &[Skipped], scored: bool) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    // Each character once, at its first (line, column).
    let mut first: Vec<(usize, usize, char)> = vec![];
    for s in skipped {
        for (col, ch) in std::iter::once((s.col, s.ch)).chain(s.more.iter().copied()) {
            if !first.iter().any(|f| f.2 == ch) {
                first.push((s.line, col, ch));
            }
        }
    }
    let quoted = |ch: char| match ch {
        // The apostrophe in double quotes ('\'' read as a backslash to a student).
        '\'' => "\"'\"".to_string(),
        c => format!("'{}'", c.escape_debug()),
    };
    let shown: Vec<String> = first
        .iter()
        .take(5)
        .map(|&(line, col, ch)| {
            let code = if ch.is_ascii_graphic() {
                String::new()
            } else {
                format!("U+{:04X}, ", ch as u32)
            };
            format!(
                "{} ({code}first at {file} line {line}, column {col})",
                quoted(ch)
            )
        })
        .collect();
    let rest: Vec<String> = first
        .iter()
        .skip(shown.len())
        .map(|&(line, _, ch)| format!("{} (line {line})", quoted(ch)))
        .collect();
    let list = match shown.as_slice() {
        _ if !rest.is_empty() => format!(
            "{} and {} more character{}: {}",
            shown.join(", "),
            rest.len(),
            if rest.len() == 1 { "" } else { "s" },
            rest.join(", ")
        ),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    };
    let one = skipped.len() == 1;
    let outcome = match (scored, one) {
        (true, true) => "it counts as wrong",
        (true, false) => "they count as wrong",
        (false, true) => "its prediction line is left empty",
        (false, false) => "their prediction lines are left empty",
    };
    format!(
        "{} question{} not asked because the model's vocabulary lacks {list}; {outcome}",
        skipped.len(),
        if one { " was" } else { "s were" },
    )
}

/// One line about questions longer than the model's context (`max_context` characters): the model
/// reads only the last `max_context` characters of the prompt (question and ⁇), as the reference's
/// sampling crops it, so their answers come from a cut question. Empty when there are none.
pub fn cropped_line(file: &str, rows: &[Row], max_context: usize) -> String {
    let long: Vec<&Row> = rows
        .iter()
        .filter(|r| prompt_for(&r.prompt_text()).chars().count() > max_context)
        .collect();
    match long.first() {
        None => String::new(),
        Some(first) => format!(
            "{} question{} longer than the {max_context} characters the model reads at a time \
             (first at {file} line {}): it read only the last {max_context} of each, as the \
             course's run.py does",
            long.len(),
            if long.len() == 1 { " is" } else { "s are" },
            first.line
        ),
    }
}
