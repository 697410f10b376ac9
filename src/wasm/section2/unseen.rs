//! S2c's entry point: the finetuned model's answers for names no person of the corpus has, and for
//! names the student types, grouped by their look; the invented names' answers are kept so that a
//! typed name is asked alone.

use super::rows;
use crate::data::corpus::invented_names;
use crate::train::probe::name_of;
use crate::train::section2::{self as s2, Scored};
use crate::wasm::engine::Engine;
use crate::wasm::js::{err, to_js};
use crate::wasm::s2_state::InventedAnswers;
use serde::Serialize;
use std::collections::HashSet;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct Unseen {
    name: String,
    group: String,
    answer: Option<String>,
    confidence: Option<f64>,
    /// Why a typed name was not asked.
    refused: Option<String>,
}

#[derive(Serialize)]
struct UnseenOut {
    invented: Vec<Unseen>,
    typed: Vec<Unseen>,
    /// The invented names' answers by group, and the training file's answers by the same groups.
    groups: Vec<s2::Group>,
    train_groups: Vec<s2::Group>,
}

#[wasm_bindgen]
impl Engine {
    /// (c) The finetuned model's answers for `count` names made by the built-in corpus's generator
    /// from `seed` (none of them a person of the model's text) and for the names in `typed` (one per line or separated
    /// by commas; at most 20), grouped by the look of the name beside the training answers.
    pub async fn s2_unseen(
        &self,
        count: u32,
        seed: u32,
        typed: String,
    ) -> Result<JsValue, JsError> {
        let (model, vocab, src) = self.finetuned()?;
        let train = rows(&src.train, &src.train_name)?;
        let taken: HashSet<String> = src
            .wiki
            .lines()
            .filter_map(|l| l.split('.').next().map(String::from))
            .collect();
        // The generator's names are plain letters, but a small text may lack one: the first `count`
        // names the model can read (the same first names as without the check when it reads all).
        let count = count.min(400) as usize;
        let invented: Vec<String> = invented_names(seed as u64 ^ 0x5EC2, 2 * count, &taken)
            .into_iter()
            .filter(|n| s2::check_name(n, &vocab).is_ok())
            .take(count)
            .collect();
        let typed_names: Vec<&str> = typed
            .split([',', '\n'])
            .filter(|s| !s.trim().is_empty())
            .collect();
        if typed_names.len() > 20 {
            return Err(err(format!(
                "{} names typed; the demo asks about at most 20 at a time",
                typed_names.len()
            )));
        }
        let checked: Vec<Result<String, String>> = typed_names
            .iter()
            .map(|n| s2::check_name(n, &vocab))
            .collect();
        let key = (seed, count as u32, src.id);
        let kept = self.with(|e| {
            let k = &e.s2.invented;
            k.as_ref()
                .filter(|k| {
                    k.key == key && k.model.upgrade().is_some_and(|m| Rc::ptr_eq(&m, &model))
                })
                .map(|k| k.answers.clone())
        });
        let again: &[String] = if kept.is_some() { &[] } else { &invented };
        let ask: Vec<&String> = again
            .iter()
            .chain(checked.iter().filter_map(|c| c.as_ref().ok()))
            .collect();
        let questions: Vec<String> = ask.iter().map(|n| format!("Where was {n} born?")).collect();
        let mut asked = s2::answer_scored(&model, &vocab, &questions)
            .await
            .map_err(|e| self.lost_err(e))?;
        let of_invented = match kept {
            Some(answers) => answers,
            None => {
                let answers: Vec<Scored> = asked.drain(..invented.len()).collect();
                let kept = InventedAnswers {
                    model: Rc::downgrade(&model),
                    key,
                    answers: answers.clone(),
                };
                self.with(|e| e.s2.invented = Some(kept));
                answers
            }
        };
        let mut got = of_invented.into_iter().chain(asked);
        let mut one = |name: String| {
            let s = got.next();
            Unseen {
                group: s2::name_group(&name),
                answer: s.as_ref().map(|s| s.prediction.clone()),
                confidence: s.as_ref().map(Scored::confidence),
                name,
                refused: None,
            }
        };
        let invented: Vec<Unseen> = invented.into_iter().map(&mut one).collect();
        let typed: Vec<Unseen> = typed_names
            .iter()
            .zip(checked)
            .map(|(raw, c)| match c {
                Ok(n) => one(n),
                Err(why) => Unseen {
                    name: raw.trim().chars().take(80).collect(),
                    group: s2::name_group(raw),
                    answer: None,
                    confidence: None,
                    refused: Some(why),
                },
            })
            .collect();
        let names: Vec<String> = invented.iter().map(|u| u.name.clone()).collect();
        let answers: Vec<String> = invented
            .iter()
            .map(|u| u.answer.clone().unwrap_or_default())
            .collect();
        let train_names: Vec<String> = train
            .iter()
            .map(|r| name_of(&r.question).unwrap_or("").to_string())
            .collect();
        let train_answers: Vec<String> = train
            .iter()
            .map(|r| r.answer.as_deref().unwrap_or("").trim_end().to_string())
            .collect();
        to_js(&UnseenOut {
            groups: s2::by_group(&names, &answers),
            train_groups: s2::by_group(&train_names, &train_answers),
            invented,
            typed,
        })
    }
}
