//! The handout's section 2 demos' entry points (wasm32 only; `s2_*`), over `train::section2`. The
//! questions and documents are the built-in corpus's (generated here, as the page's own copy is).
//! Three models take part: the page's current vanilla model (`models.rs`: the shipped model at
//! first, pretrained and finetuned), a model finetuned without pretraining (the shipped
//! `builtin-nopretrain` or a file) and a pretrained-only model for the probe (the last one the
//! page's Pretrain produced, or a file); the last two live here, apart from the registry, which
//! holds one model per variant. `s2_recall` probes the training run in progress.

use super::engine::{self, builtin_corpus as corpus, reads_builtin, Engine, Kept, RunGuard};
use super::js::{err, to_js};
use super::models::{self, check_checkpoint_size, model_for};
use super::{device, lost_or};
use crate::data::{parse_tsv_str, CharCorruptionDataset, Row, TsvMode, Vocab};
use crate::model::{checkpoint, torch_params, Gpt};
use crate::train::probe::{self, name_of};
use crate::train::run::predict_known;
use crate::train::section2::{self as s2, Scored};
use crate::train::RunData;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;

mod unseen;

/// A pretraining run of the page finished: its model is the probe's until another comes.
pub(crate) fn keep_pretrained(model: Rc<Gpt>, vocab: Vocab, label: String) {
    engine::with(|e| {
        e.pretrained = Some(Kept {
            model,
            vocab,
            label,
        })
    });
}

fn rows(tsv: &str, name: &str) -> Result<Vec<Row>, JsError> {
    parse_tsv_str(tsv, name, TsvMode::RequireAnswers).map_err(err)
}

/// The first `people` rows of the dev set (0: all of them): a software adapter asks fewer.
fn first(mut dev: Vec<Row>, people: u32) -> Vec<Row> {
    if people > 0 {
        dev.truncate(people as usize);
    }
    dev
}

/// The finetuned model the demos ask: the registry's vanilla model, unless it is the very model
/// a pretraining run produced (it was never asked questions).
fn finetuned() -> Result<(Rc<Gpt>, Vocab), JsError> {
    let (m, v) = model_for("vanilla")?;
    not_usable(&m, &v).map_or(Ok((m, v)), |why| Err(err(why)))
}

/// Why the current vanilla model cannot be the demos' finetuned model: only pretrained, or a model
/// of another text (the course's) that cannot read the built-in people. None when it can.
fn not_usable(m: &Rc<Gpt>, v: &Vocab) -> Option<String> {
    let same = engine::with(|e| {
        e.pretrained
            .as_ref()
            .is_some_and(|k| Rc::ptr_eq(&k.model, m))
    });
    if same {
        return Some(
            "the current vanilla model is only pretrained: finetune it (Finetune in the Train \
             card) or load the shipped model again, then compare"
                .into(),
        );
    }
    if !reads_builtin(v) {
        let label = models::label_of("vanilla").unwrap_or_else(|| "the current model".into());
        return Some(format!(
            "the current vanilla model ({label}) was trained on another text than the built-in \
             corpus, so it cannot be asked about the built-in people these demos use: load the \
             shipped model again (Models card), or pretrain and finetune one on the built-in \
             corpus (Train card), then compare"
        ));
    }
    None
}

#[derive(Serialize)]
struct Roles {
    finetuned: Option<String>,
    /// Why the current vanilla model is not the finetuned one (only pretrained, or of another text).
    finetuned_why: Option<String>,
    no_pretrain: Option<String>,
    pretrained: Option<String>,
}

/// Which models the demos have: `{finetuned, no_pretrain, pretrained}`, each its label or null.
#[wasm_bindgen]
pub fn s2_models() -> Result<JsValue, JsError> {
    let label = |k: &Option<Kept>| k.as_ref().map(|k| k.label.clone());
    let why = model_for("vanilla")
        .ok()
        .and_then(|(m, v)| not_usable(&m, &v));
    let finetuned = finetuned().ok().and_then(|_| models::label_of("vanilla"));
    let (no_pretrain, pretrained) = engine::with(|e| (label(&e.no_pretrain), label(&e.pretrained)));
    to_js(&Roles {
        finetuned,
        finetuned_why: why,
        no_pretrain,
        pretrained,
    })
}

/// Load a checkpoint as the demos' `role` model: "nopretrain" (finetuned without pretraining) or
/// "pretrained" (only pretrained, for the probe). A course `.params` file takes the built-in
/// corpus's vocabulary (and 8 heads). Returns its label.
#[wasm_bindgen]
pub async fn s2_load(role: String, bytes: Vec<u8>, name: String) -> Result<String, JsError> {
    let slot: fn(&mut Engine) -> &mut Option<Kept> = match role.as_str() {
        "nopretrain" => |e| &mut e.no_pretrain,
        "pretrained" => |e| &mut e.pretrained,
        other => {
            return Err(err(format!(
                "unknown role '{other}': use nopretrain or pretrained"
            )))
        }
    };
    let g = device().await?;
    check_checkpoint_size(&g, bytes.len(), &name)?;
    // The demos ask about the built-in corpus's people: a model of another text (the course's
    // wiki.txt) lacks its characters or orders them otherwise, and nothing in the page can change
    // the corpus, so it is refused here with what to load instead.
    let other_text = || {
        err(format!(
            "{name} was trained on another text than the built-in corpus (its vocabulary \
             differs); the section 2 demos compare models of the built-in corpus: load one \
             pretrained on it (this page's Pretrain on the built-in corpus, or “attnlab pretrain \
             vanilla --writing_params_path …” without a corpus path)"
        ))
    };
    let c = corpus();
    let builtin = Vocab::from_text(&c.wiki, "the built-in corpus").map_err(err)?;
    let (model, vocab) = if torch_params::is_torch_file(&bytes) {
        let want = torch_params::Expected {
            variant: None,
            n_head: None,
            vocab: Some((builtin.len(), "the built-in corpus")),
        };
        let model = torch_params::from_bytes(&g, &bytes, &want, &name).map_err(|e| {
            if e.to_string().contains("was trained with a vocabulary of") {
                other_text()
            } else {
                err(e)
            }
        })?;
        (model, builtin)
    } else {
        let (m, header) = checkpoint::from_bytes(&g, &bytes, None, &name).map_err(err)?;
        let vocab = Vocab::from_itos(&header.vocab, &name).map_err(err)?;
        if !reads_builtin(&vocab) {
            return Err(other_text());
        }
        (m, vocab)
    };
    let kept = Kept {
        model: Rc::new(model),
        vocab,
        label: name.clone(),
    };
    engine::with(|e| *slot(e) = Some(kept));
    Ok(name)
}

/// (a) The finetuned model and the one without pretraining on the built-in dev set (its first
/// `people`, 0: all), side by side, with the probe and the stored × answered table when a
/// pretrained model is there.
#[wasm_bindgen]
pub async fn s2_compare(people: u32) -> Result<JsValue, JsError> {
    let (with, with_vocab) = finetuned()?;
    let without = engine::with(|e| e.no_pretrain.clone()).ok_or_else(|| {
        err("there is no model finetuned without pretraining yet (the shipped one loads with the page)")
    })?;
    let c = corpus();
    let dev = first(rows(&c.dev_tsv, "the built-in dev set")?, people);
    let pre = engine::with(|e| e.pretrained.clone());
    let docs = match &pre {
        Some(k) => Some(
            CharCorruptionDataset::new(&c.wiki, "the built-in corpus", &k.vocab, 0).map_err(err)?,
        ),
        None => None,
    };
    let a = predicted(&with, &with_vocab, &dev).await?;
    let b = predicted(&without.model, &without.vocab, &dev).await?;
    let report = match pre.as_ref().zip(docs.as_ref()) {
        Some((k, d)) => Some(
            probe::probe(&k.model, d.docs(), &k.vocab, &dev)
                .await
                .map_err(|e| err(lost_or(e)))?,
        ),
        None => None,
    };
    to_js(&s2::comparison(&dev, &a, &b, report))
}

/// A model's predictions for the first `rows.len()` built-in dev people, kept so that S2a asked
/// again (a pretrained-only model loaded for the probe) decodes nothing twice; a `Weak` to the
/// model, so one since replaced or dropped never matches. The last four are kept.
struct Predicted {
    model: Weak<Gpt>,
    people: usize,
    answers: Vec<String>,
}

thread_local! {
    static PREDICTED: RefCell<Vec<Predicted>> = const { RefCell::new(Vec::new()) };
}

async fn predicted(model: &Rc<Gpt>, vocab: &Vocab, dev: &[Row]) -> Result<Vec<String>, JsError> {
    let same = |p: &Predicted| {
        p.people == dev.len() && p.model.upgrade().is_some_and(|m| Rc::ptr_eq(&m, model))
    };
    if let Some(a) =
        PREDICTED.with_borrow(|k| k.iter().find(|p| same(p)).map(|p| p.answers.clone()))
    {
        return Ok(a);
    }
    let (answers, _) = predict_known(model, vocab, dev, "the dev set", &mut |_, _| {})
        .await
        .map_err(|e| err(lost_or(e)))?;
    PREDICTED.with_borrow_mut(|k| {
        k.retain(|p| p.model.strong_count() > 0);
        if k.len() >= 4 {
            k.remove(0);
        }
        k.push(Predicted {
            model: Rc::downgrade(model),
            people: dev.len(),
            answers: answers.clone(),
        })
    });
    Ok(answers)
}

#[derive(Serialize)]
struct Answer {
    question: String,
    gold: String,
    right: bool,
    confidence: f64,
    mean_log_prob: f64,
    /// The answer and its characters' probabilities.
    scored: Scored,
}

#[derive(Serialize)]
struct Confidence {
    answers: Vec<Answer>,
    histogram: s2::Histogram,
    /// Dev questions the model's vocabulary cannot read (not asked).
    skipped: usize,
}

/// (b) Every built-in dev answer (of the first `people`, 0: all) of the finetuned model with its
/// confidence, and the histogram of right vs wrong answers' confidences in `bins` bins.
#[wasm_bindgen]
pub async fn s2_confidence(bins: u32, people: u32) -> Result<JsValue, JsError> {
    let (model, vocab) = finetuned()?;
    let c = corpus();
    let dev: Vec<Row> = first(rows(&c.dev_tsv, "the built-in dev set")?, people);
    let known: Vec<&Row> = dev
        .iter()
        .filter(|r| r.question.chars().all(|ch| vocab.id(ch).is_some()))
        .collect();
    let questions: Vec<String> = known.iter().map(|r| r.question.clone()).collect();
    let scored = s2::answer_scored(&model, &vocab, &questions)
        .await
        .map_err(|e| err(lost_or(e)))?;
    let answers: Vec<Answer> = known
        .iter()
        .zip(scored)
        .map(|(r, s)| {
            let gold = r.answer.as_deref().unwrap_or("").trim_end().to_string();
            Answer {
                question: r.question.clone(),
                right: s.prediction == gold,
                gold,
                confidence: s.confidence(),
                mean_log_prob: s.mean_log_prob(),
                scored: s,
            }
        })
        .collect();
    let conf: Vec<f64> = answers.iter().map(|a| a.confidence).collect();
    let right: Vec<bool> = answers.iter().map(|a| a.right).collect();
    to_js(&Confidence {
        histogram: s2::histogram(&conf, &right, bins.clamp(1, 50) as usize),
        skipped: dev.len() - answers.len(),
        answers,
    })
}

#[derive(Serialize)]
struct Evidence {
    name: String,
    /// The person's line of the built-in corpus (what pretraining read), or null.
    document: Option<String>,
    /// Whether the pretrained model fills the masked birthplace: null without a pretrained model
    /// or when the place is not in the part pretraining shows.
    recalled: Option<bool>,
    pretrained: Option<String>,
}

/// (b) The evidence behind one dev answer: the person's pretraining text and, with a pretrained
/// model, whether the probe recalls their birthplace.
#[wasm_bindgen]
pub async fn s2_evidence(question: String) -> Result<JsValue, JsError> {
    let c = corpus();
    let dev = rows(&c.dev_tsv, "the built-in dev set")?;
    let row = dev
        .iter()
        .find(|r| r.question == question)
        .ok_or_else(|| err("that question is not in the built-in dev set"))?;
    let name = name_of(&row.question).unwrap_or("").to_string();
    let pre = engine::with(|e| e.pretrained.clone());
    let recalled = match &pre {
        Some(k) => {
            let docs = CharCorruptionDataset::new(&c.wiki, "the built-in corpus", &k.vocab, 0)
                .map_err(err)?;
            let r = probe::probe(&k.model, docs.docs(), &k.vocab, std::slice::from_ref(row))
                .await
                .map_err(|e| err(lost_or(e)))?;
            r.per_row[0]
        }
        None => None,
    };
    to_js(&Evidence {
        document: s2::document_of(&c.wiki, &name).map(String::from),
        name,
        recalled,
        pretrained: pre.map(|k| k.label),
    })
}

#[derive(Serialize)]
struct Recall {
    asked: usize,
    recalled: usize,
    percent: f64,
}

/// The probe's recall on a fixed sample of at most `n` people of `tsv` (the finetuning file,
/// whose people the pretraining text describes) for the pretraining run in progress; null when
/// the run is a finetune or no one can be probed.
#[wasm_bindgen]
pub async fn s2_recall(tsv_name: String, tsv: String, n: u32) -> Result<JsValue, JsError> {
    let people = parse_tsv_str(&tsv, &tsv_name, TsvMode::RequireAnswers).map_err(err)?;
    let mut guard = RunGuard::take()?;
    let run = guard.run();
    let RunData::Pretrain(d) = &run.data else {
        return Ok(JsValue::NULL);
    };
    let items = s2::recall_sample(d.docs(), &run.vocab, &people, n.clamp(1, 256) as usize);
    if items.is_empty() {
        return Ok(JsValue::NULL);
    }
    let got = probe::recall(&run.trainer.model, &items)
        .await
        .map_err(|e| err(lost_or(e)))?;
    let recalled = got.iter().filter(|&&b| b).count();
    to_js(&Recall {
        asked: got.len(),
        recalled,
        percent: 100.0 * recalled as f64 / got.len() as f64,
    })
}
