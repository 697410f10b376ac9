//! Character vocabulary: PAD □ = 0, MASK ⁇ = 1, then the distinct characters of the pretraining
//! text sorted by code point (Python's `sorted(set(text))`), newlines included. On wiki.txt that
//! is 254 characters, so 256 tokens.

use std::collections::{BTreeSet, HashMap};

use super::{line_col, MASK_CHAR, PAD_CHAR};
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Vocab {
    /// Character → token id.
    pub stoi: HashMap<char, u32>,
    /// Token id → character (`itos[0] == PAD_CHAR`, `itos[1] == MASK_CHAR`).
    pub itos: Vec<char>,
    /// Name of the text the vocabulary was built from, for error messages.
    pub source: String,
}

impl Vocab {
    /// Build from the whole pretraining text. Errors if the text contains PAD or MASK (they would
    /// be ambiguous), naming the file, line and column.
    pub fn from_text(text: &str, file: &str) -> Result<Vocab> {
        let text = &*super::universal_newlines(text);
        if text.trim().is_empty() {
            return Err(Error::Msg(format!(
                "{file}: the file is empty (or only whitespace); the vocabulary and pretraining \
                 need the corpus text, one document per line"
            )));
        }
        if let Some((off, c)) = text
            .char_indices()
            .find(|&(_, c)| c == PAD_CHAR || c == MASK_CHAR)
        {
            let (line, col) = line_col(text, off);
            let which = if c == PAD_CHAR { "PAD" } else { "MASK" };
            return Err(Error::Msg(format!(
                "{file}:{line}:{col}: the text contains the reserved {which} character {c} \
                 (U+{:04X}); remove or replace it before pretraining",
                c as u32
            )));
        }
        let distinct: BTreeSet<char> = text.chars().collect();
        let mut itos = Vec::with_capacity(distinct.len() + 2);
        itos.push(PAD_CHAR);
        itos.push(MASK_CHAR);
        itos.extend(distinct);
        let stoi = itos
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        Ok(Vocab {
            stoi,
            itos,
            source: file.to_string(),
        })
    }

    /// The vocabulary a checkpoint keeps in its metadata (`itos` as one string), checked to start
    /// with PAD and MASK and to repeat no character; `what` names the file in messages.
    pub fn from_itos(itos: &str, what: &str) -> Result<Vocab> {
        let itos: Vec<char> = itos.chars().collect();
        if itos.len() < 2 || itos[0] != PAD_CHAR || itos[1] != MASK_CHAR {
            return Err(Error::Msg(format!(
                "{what}: the vocabulary in its metadata does not start with PAD and MASK; not a \
                 checkpoint written by attnlab"
            )));
        }
        let stoi: HashMap<char, u32> = itos
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        if stoi.len() != itos.len() {
            return Err(Error::Msg(format!(
                "{what}: the vocabulary in its metadata repeats a character"
            )));
        }
        Ok(Vocab {
            stoi,
            itos,
            source: format!("the vocabulary of {what}"),
        })
    }

    /// `itos` as one string, as checkpoints keep it (the inverse of `from_itos`).
    pub fn itos_string(&self) -> String {
        self.itos.iter().collect()
    }

    /// Number of tokens (distinct characters + 2).
    pub fn len(&self) -> usize {
        self.itos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.itos.is_empty()
    }

    /// Token id of one character, if it is in the vocabulary.
    pub fn id(&self, c: char) -> Option<u32> {
        self.stoi.get(&c).copied()
    }

    /// Encode a string; an unknown character is an error naming it, its code point, its char
    /// position and its line/column within `s`.
    pub fn encode(&self, s: &str) -> Result<Vec<u32>> {
        self.encode_in(s, "input")
    }

    /// `encode` with the name of where `s` came from (a file:line) for the message.
    pub fn encode_in(&self, s: &str, what: &str) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(s.len());
        for (off, c) in s.char_indices() {
            match self.stoi.get(&c) {
                Some(&id) => out.push(id),
                None => {
                    let (line, col) = line_col(s, off);
                    // Said once and plainly: the column alone for one line of text (a question),
                    // the line too otherwise; a model's vocabulary is named as such.
                    let at = if s.contains('\n') && line > 1 {
                        format!("line {line}, column {col}")
                    } else {
                        format!("column {col}")
                    };
                    let (vocab, fix) = if self.source.starts_with("the vocabulary of ") {
                        (self.source.clone(), "remove it (the model cannot read it)")
                    } else {
                        (
                            format!("the vocabulary built from {}", self.source),
                            "remove it or rebuild the vocabulary from a text that contains it",
                        )
                    };
                    return Err(Error::Msg(format!(
                        "{what}: character {c:?} (U+{:04X}) at {at} is not in {vocab}; {fix}",
                        c as u32
                    )));
                }
            }
        }
        Ok(out)
    }

    /// Decode token ids; an id outside the vocabulary is an error naming it and its position.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        let mut out = String::with_capacity(ids.len());
        for (pos, &id) in ids.iter().enumerate() {
            match self.itos.get(id as usize) {
                Some(&c) => out.push(c),
                None => {
                    return Err(Error::Msg(format!(
                        "token id {id} at position {pos} is outside the vocabulary of {} tokens \
                         (built from {})",
                        self.len(),
                        self.source
                    )))
                }
            }
        }
        Ok(out)
    }
}
