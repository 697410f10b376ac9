//! The page's questions to a finished model (wasm32 only): evaluation on a TSV as the CLI does it
//! (asked for in parts), and one question with every layer's attention maps.

use super::engine::{Engine, Evaluation};
use super::js::{err, to_js};
use crate::autograd::Tape;
use crate::data::{
    self, london_baseline, parse_tsv_str, prediction_from_completion, prompt_for, TsvMode,
};
use crate::model::Pass;
use crate::tensor::Tensor;
use crate::train::{self, run};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct EvalRow {
    line: usize,
    question: String,
    gold: Option<String>,
    prediction: String,
    correct: Option<bool>,
    /// The character the model lacks, for a question skipped for it (its prediction is empty).
    lacks: Option<char>,
}

#[derive(Serialize)]
struct EvalReport {
    rows: Vec<EvalRow>,
    /// (correct, total) when the file has answers.
    score: Option<(usize, usize)>,
    london: Option<(usize, usize)>,
    /// The CLI's line, `Correct: c out of t: p%`.
    line: String,
    london_line: String,
    /// Questions not asked because the model lacks one of their characters, said in one line
    /// (empty when none).
    skipped: String,
    /// Questions longer than the model's context, said in one line (empty when none).
    cropped: String,
    /// The questions the evaluation was asked for: more than `rows` when it was stopped or failed.
    total: usize,
}

#[derive(Serialize)]
pub(crate) struct EvalProgress {
    pub done: usize,
    pub total: usize,
}

pub(crate) fn no_evaluation() -> JsError {
    err("no evaluation is going on; press Evaluate")
}

#[derive(Serialize)]
struct Answer {
    question: String,
    prediction: String,
    /// The characters the maps are drawn over: the prompt, then the answer the model wrote.
    tokens: Vec<String>,
    /// How many of `tokens` are the prompt (question + ⁇).
    prompt_len: usize,
    n_layer: usize,
    n_head: usize,
    /// Per layer: n_head × T × T attention probabilities, row = query position.
    maps: Vec<Vec<f32>>,
}

#[wasm_bindgen]
impl Engine {
    /// Start evaluating a slot's model ("vanilla", "vanilla:kept", …; `models.rs`) on a TSV (the
    /// first `max_questions` rows when given), as the CLI does; the page then asks for the
    /// predictions in parts ([`eval_next`]), so a demo or a training chunk can run between them,
    /// and for the report ([`eval_report`]). Starting again drops an unfinished evaluation.
    pub fn eval_begin(
        &self,
        slot: String,
        name: String,
        text: String,
        max_questions: Option<u32>,
    ) -> Result<JsValue, JsError> {
        let (model, vocab) = self.model_for(&slot)?;
        let mut rows = parse_tsv_str(&text, &name, TsvMode::AnswersOptional).map_err(err)?;
        if let Some(n) = max_questions {
            rows.truncate((n as usize).max(1));
        }
        let total = rows.len();
        self.with(|e| {
            e.eval = Some(Evaluation {
                model: Some(model),
                vocab,
                name,
                rows,
                predictions: Vec::new(),
                skipped: Vec::new(),
            })
        });
        to_js(&EvalProgress { done: 0, total })
    }

    /// Greedy-decode the next `count` questions (at least one) of the evaluation going on.
    pub async fn eval_next(&self, count: u32) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let mut ev = self.with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
        let Some(model) = ev.model.clone() else {
            let done = ev.predictions.len();
            self.with(|e| e.eval = Some(ev));
            return Err(err(format!(
                "the device was lost during the evaluation; the {done} questions answered before are \
                 kept"
            )));
        };
        let start = ev.predictions.len();
        let end = (start + (count as usize).max(1)).min(ev.rows.len());
        let r = run::predict_known(
            &model,
            &ev.vocab,
            &ev.rows[start..end],
            &ev.name,
            &mut |_, _| {},
        )
        .await;
        // A question with a character the model lacks is skipped and counted, not an error. A failed
        // part (a lost device) keeps the predictions made so far: the page shows them
        // (`eval_report`) before it says what went wrong.
        let out = r.map(|(p, skipped)| {
            ev.predictions.extend(p);
            ev.skipped.extend(skipped);
            EvalProgress {
                done: ev.predictions.len(),
                total: ev.rows.len(),
            }
        });
        self.with(|e| e.eval = Some(ev));
        to_js(&out.map_err(|e| self.lost_err(e))?)
    }

    /// Ask no more than the first `n` questions of the evaluation going on (never fewer than those
    /// already answered): the page's "only the first N" after the first questions were timed, which
    /// count toward the run. Returns its progress.
    pub fn eval_limit(&self, n: u32) -> Result<JsValue, JsError> {
        self.with(|e| {
            let ev = e.eval.as_mut()?;
            let keep = (n as usize).max(ev.predictions.len()).max(1);
            ev.rows.truncate(keep);
            Some(EvalProgress {
                done: ev.predictions.len(),
                total: ev.rows.len(),
            })
        })
        .ok_or_else(no_evaluation)
        .and_then(|p| to_js(&p))
    }

    /// The evaluation's report, finished or not (stopped, or a part failed): every answered row with
    /// its prediction, the score and the London baseline over those rows when the file has answers,
    /// the lines the CLI prints, and `total`, the questions it was asked for. It ends the evaluation.
    pub fn eval_report(&self) -> Result<JsValue, JsError> {
        let ev = self.with(|e| e.eval.take()).ok_or_else(no_evaluation)?;
        let (done, total) = (ev.predictions.len(), ev.rows.len());
        let scored = ev.rows.first().is_some_and(|r| r.answer.is_some());
        let skipped = run::skipped_line(&ev.name, &ev.skipped, scored);
        let context = ev.model.as_ref().map(|m| m.cfg.max_context());
        let lacks: std::collections::HashMap<usize, char> =
            ev.skipped.iter().map(|k| (k.line, k.ch)).collect();
        let (mut rows, predictions) = (ev.rows, ev.predictions);
        // A stopped or failed evaluation reports the questions it answered.
        rows.truncate(done);
        let cropped = context.map_or(String::new(), |c| run::cropped_line(&ev.name, &rows, c));
        let score = run::score(&rows, &predictions).map_err(err)?;
        let london = if score.is_some() {
            Some(london_baseline(&rows).map_err(err)?)
        } else {
            None
        };
        let out = EvalReport {
            rows: rows
                .iter()
                .zip(&predictions)
                .map(|(r, p)| EvalRow {
                    line: r.line,
                    question: r.question.clone(),
                    gold: r.answer.clone(),
                    prediction: p.clone(),
                    correct: r.answer.as_ref().map(|a| a.trim_end() == p),
                    lacks: lacks.get(&r.line).copied(),
                })
                .collect(),
            score,
            london,
            line: data::format_accuracy(score.map_or(0, |s| s.0), score.map_or(0, |s| s.1)),
            london_line: london.map_or(String::new(), |(c, t)| data::format_accuracy(c, t)),
            skipped,
            cropped,
            total,
        };
        to_js(&out)
    }

    /// Ask a slot's model ("vanilla", "vanilla:kept", …) where someone was born: greedy decoding as
    /// in evaluation, then one more forward over prompt + answer that keeps every layer's attention
    /// probabilities.
    pub async fn ask(&self, slot: String, text: String) -> Result<JsValue, JsError> {
        let (model, vocab) = self.model_for(&slot)?;
        let question = crate::data::evaluate::question_for(&text).map_err(err)?;
        let prompt = vocab
            .encode_in(&prompt_for(&question), "your question")
            .map_err(err)?;
        let max_t = crate::train::sample::max_context(&model);
        if prompt.len() >= max_t {
            return Err(err(format!(
                "the question is {} characters long; the model reads at most {}: shorten the name \
                 by {} characters or more",
                prompt.len() - 1,
                max_t - 2,
                prompt.len() + 1 - max_t
            )));
        }
        // As the evaluation decodes: the answer ends at its closing ⁇, so decoding stops there.
        let out = train::sample_greedy_batch_until(
            &model,
            std::slice::from_ref(&prompt),
            run::EVAL_STEPS,
            Some(data::MASK_ID),
            &mut |_, _| {},
        )
        .await
        .map_err(|e| self.lost_err(e))?
        .pop()
        .ok_or_else(|| err("decoding returned no answer"))?;
        let completion = vocab.decode(&out).map_err(err)?;
        let prediction = prediction_from_completion(&completion);
        // The sequence the maps show: prompt, the answer, and its closing ⁇ when the model wrote one.
        let mut seq = prompt.clone();
        let answer_ids = &out[prompt.len()..];
        let close = answer_ids.iter().position(|&t| t == data::MASK_ID);
        let keep = close.map_or(answer_ids.len(), |i| i + 1);
        seq.extend_from_slice(&answer_ids[..keep]);
        seq.truncate(max_t);
        let t = seq.len();
        let g = self.device().await?;
        let idx = Tensor::from_u32(&g, &[t], &seq).map_err(err)?;
        let pass = Pass::eval_capturing();
        let tape = Tape::new();
        tape.no_grad(|| model.forward(&tape, &idx, 1, t, None, &pass))
            .map_err(err)?;
        let mut maps = vec![];
        for m in pass.attention_maps() {
            maps.push(m.to_vec_f32().await.map_err(|e| self.lost_err(e))?);
        }
        let tokens = seq
            .iter()
            .map(|&id| {
                vocab
                    .itos
                    .get(id as usize)
                    .map_or("?".to_string(), |c| c.to_string())
            })
            .collect();
        to_js(&Answer {
            question,
            prediction,
            tokens,
            prompt_len: prompt.len(),
            n_layer: model.cfg.n_layer,
            n_head: model.cfg.n_head,
            maps,
        })
    }
}
