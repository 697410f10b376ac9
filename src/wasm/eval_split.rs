//! An evaluation split across engines (wasm32 only; ARCHITECTURE.md decision 14): on the CPU
//! backend with N engines the page's engine begins the evaluation (`eval_begin`, `ask.rs`);
//! each helper engine (web/helpers.js) gets a copy of the same model (`model_bytes` here,
//! `load_model` there: the checkpoint format) and begins the same evaluation of the same
//! file. The page then asks in rounds: the page's engine answers the round's first block
//! (`eval_next`), each helper one block after it (`eval_part`), and the page's engine
//! appends the helpers' blocks in question order (`eval_add`). So the answered questions are
//! always the file's first ones, in order, as on one engine: a Stop or a failure keeps a prefix,
//! and the report (`eval_report`) is the one engine's.

use super::ask::{no_evaluation, EvalProgress};
use super::engine::Engine;
use super::js::{err, from_js, to_js};
use crate::train::run;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The predictions of questions `first..first + predictions.len()`, and the questions among them
/// not asked (line, column, the character the model lacks, the line's other missing characters),
/// as `run::predict_known` gives them.
#[derive(Serialize, Deserialize)]
struct Block {
    first: usize,
    predictions: Vec<String>,
    skipped: Vec<Skipped>,
}

/// A question not asked: its line, column, the character the model lacks and the line's other
/// missing characters (column, character).
type Skipped = (usize, usize, char, Vec<(usize, char)>);

#[wasm_bindgen]
impl Engine {
    /// On a helper: greedy-decode questions `first..end` of the evaluation begun here (the page's file
    /// and a copy of the page's model). Returns `{first, predictions, skipped}` for `eval_add`;
    /// the helper's own evaluation keeps no answers (it only serves blocks).
    pub async fn eval_part(&self, first: u32, end: u32) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let ev = self.with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
        let (first, end) = (first as usize, end as usize);
        let r = match &ev.model {
            None => Err(err("this engine lost its copy of the model")),
            Some(_) if first > end || end > ev.rows.len() => Err(err(format!(
                "questions {first}..{end} are not questions of this {}-question evaluation",
                ev.rows.len()
            ))),
            Some(model) => run::predict_known(
                model,
                &ev.vocab,
                &ev.rows[first..end],
                &ev.name,
                &mut |_, _| {},
            )
            .await
            .map_err(|e| self.lost_err(e)),
        };
        self.with(|e| e.eval = Some(ev));
        let (predictions, skipped) = r?;
        to_js(&Block {
            first,
            predictions,
            skipped: skipped
                .into_iter()
                .map(|s| (s.line, s.col, s.ch, s.more))
                .collect(),
        })
    }

    /// On the page's engine: append a helper's block (`eval_part`'s answer), which must continue
    /// the predictions so far. Returns `{done, total}` as `eval_next` does.
    pub fn eval_add(&self, block: JsValue) -> Result<JsValue, JsError> {
        let block: Block = from_js(block, "a helper's block of predictions is malformed")?;
        let mut ev = self.with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
        let (done, total) = (ev.predictions.len(), ev.rows.len());
        if block.first != done || block.predictions.len() > total - done {
            self.with(|e| e.eval = Some(ev));
            return Err(err(format!(
                "a block of {} predictions from question {} does not continue this evaluation at {done} \
                 of {total}",
                block.predictions.len(),
                block.first
            )));
        }
        ev.predictions.extend(block.predictions);
        ev.skipped.extend(
            block
                .skipped
                .into_iter()
                .map(|(line, col, ch, more)| run::Skipped {
                    line,
                    col,
                    ch,
                    more,
                }),
        );
        let out = EvalProgress {
            done: ev.predictions.len(),
            total: ev.rows.len(),
        };
        self.with(|e| e.eval = Some(ev));
        to_js(&out)
    }
}
