//! An evaluation split across engines (wasm32 only; ARCHITECTURE.md decision 14): on the CPU
//! backend with N engines the page's engine begins the evaluation (`page_eval_begin` in
//! `ask.rs`) and decodes the first block of questions in parts (`page_eval_next`); each helper
//! engine, holding a copy of the same model (`page_load_model` with `page_model_bytes`' bytes)
//! and the same evaluation, decodes one more block (`page_eval_part`); the page's engine adds the
//! blocks in order (`page_eval_add`) and reports as usual (`page_eval_report`).

use super::engine;
use super::js::{err, from_js, to_js};
use super::lost_or;
use crate::train::run;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The predictions of questions `first..first + predictions.len()`, and the questions among them
/// not asked (line, the character the model lacks).
#[derive(Serialize, Deserialize)]
struct Part {
    first: usize,
    predictions: Vec<String>,
    skipped: Vec<(usize, char)>,
}

fn no_evaluation() -> JsError {
    err("no evaluation is going on; press Evaluate")
}

/// On a helper: greedy-decode questions `first..end` of the evaluation begun here (with the same
/// file and model as on the page's engine). Returns `{first, predictions, skipped}` for
/// `page_eval_add`; the helper's own evaluation is left as it was.
#[wasm_bindgen]
pub async fn page_eval_part(first: u32, end: u32) -> Result<JsValue, JsError> {
    let _busy = engine::Busy::enter();
    let ev = engine::with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
    let (first, end) = (first as usize, (end as usize).min(ev.rows.len()));
    let r = if first < end {
        run::predict_known(
            &ev.model,
            &ev.vocab,
            &ev.rows[first..end],
            &ev.name,
            &mut |_, _| {},
        )
        .await
    } else {
        Ok((vec![], vec![]))
    };
    engine::with(|e| e.eval = Some(ev));
    let (predictions, skipped) = r.map_err(|e| err(lost_or(e)))?;
    to_js(&Part {
        first,
        predictions,
        skipped: skipped.iter().map(|s| (s.line, s.ch)).collect(),
    })
}

/// On the page's engine: add a helper's block (`page_eval_part`'s answer), which must continue the
/// predictions so far. Returns `{done, total}` as `page_eval_next` does.
#[wasm_bindgen]
pub fn page_eval_add(part: JsValue) -> Result<JsValue, JsError> {
    let part: Part = from_js(part, "a helper's block of predictions is malformed")?;
    let mut ev = engine::with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
    let (done, total) = (ev.predictions.len(), ev.rows.len());
    if part.first != done || done + part.predictions.len() > total {
        engine::with(|e| e.eval = Some(ev));
        return Err(err(format!(
            "a block of {} predictions from question {} does not continue this evaluation at {done} of {total}",
            part.predictions.len(),
            part.first
        )));
    }
    ev.predictions.extend(part.predictions);
    ev.skipped.extend(
        part.skipped
            .into_iter()
            .map(|(line, ch)| run::Skipped { line, ch }),
    );
    let out = (ev.predictions.len(), ev.rows.len());
    engine::with(|e| e.eval = Some(ev));
    #[derive(Serialize)]
    struct Progress {
        done: usize,
        total: usize,
    }
    to_js(&Progress {
        done: out.0,
        total: out.1,
    })
}
