//! What the page's training form starts from (wasm32 only): the embedded corpus, checks of a
//! pretraining text and a birth-place TSV before a run uses them.

use super::engine::Engine;
use super::js::{err, to_js};
use crate::data::{self, parse_tsv_str, TsvMode, Vocab};
use crate::train::run;
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct CorpusInfo {
    chars: usize,
    vocab_size: usize,
    documents: usize,
}

#[derive(Serialize)]
struct TsvInfo {
    rows: usize,
    answers: bool,
}

#[wasm_bindgen]
impl Engine {
    /// The embedded generated corpus as the course's four files: `{wiki, train, dev, test}`.
    pub fn default_corpus(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Files {
            wiki: String,
            /// The same people in two birth notes each (the middle preset's pretraining text).
            notes: String,
            /// Their biographies cut to the birth sentence.
            births: String,
            train: String,
            dev: String,
            test: String,
        }
        let c = run::default_corpus(false);
        to_js(&Files {
            wiki: c.wiki,
            notes: c.notes,
            births: c.births,
            train: c.train_tsv,
            dev: c.dev_tsv,
            test: c.test_tsv,
        })
    }

    /// Check a wiki.txt-style pretraining text: `{chars, vocab_size, documents}`, or an error naming
    /// the line and column of a reserved character, or saying the text is a questions file (the
    /// library's rule, the one the CLI's note uses; the page refuses it, as its run would learn nothing).
    pub fn check_corpus(&self, name: &str, text: &str) -> Result<JsValue, JsError> {
        if data::looks_like_questions(text) {
            return Err(err(format!(
                "{name} looks like a questions file (a question, a tab and an answer on each line), \
                 not the pretraining text; give it as the finetuning, dev or test TSV, and as wiki.txt \
                 a plain text with one biography a line"
            )));
        }
        let vocab = Vocab::from_text(text, name).map_err(err)?;
        if text.trim().is_empty() {
            return Err(err(format!(
                "{name}: the file is empty; give a text with one biography per line"
            )));
        }
        to_js(&CorpusInfo {
            chars: text.chars().count(),
            vocab_size: vocab.len(),
            documents: data::documents(text),
        })
    }

    /// Check a birth-place TSV: `{rows, answers}` (answers: whether it has the gold column), or an
    /// error naming the line and what is wrong. `require_answers` for training files.
    pub fn check_tsv(
        &self,
        name: &str,
        text: &str,
        require_answers: bool,
    ) -> Result<JsValue, JsError> {
        let mode = if require_answers {
            TsvMode::RequireAnswers
        } else {
            TsvMode::AnswersOptional
        };
        let rows = parse_tsv_str(text, name, mode).map_err(err)?;
        to_js(&TsvInfo {
            rows: rows.len(),
            answers: rows.first().is_some_and(|r| r.answer.is_some()),
        })
    }
}
