//! The handout's section 2 demos' entry points (wasm32 only; `s2_*`), over `train::section2`.
//! The people asked about are those of the text the finetuned model was trained on: the page's
//! loaded data (`s2_set_data`: the course files, served or picked) when the model's vocabulary is
//! that pretraining text's, else the built-in corpus (generated here, as the page's own copy is).
//! Three models take part: the page's current vanilla model (`models.rs`: the shipped model at
//! first, pretrained and finetuned), a model finetuned without pretraining (the shipped
//! `builtin-nopretrain` or a file) and a pretrained-only model for the probe (the last one the
//! page's Pretrain produced, a shipped one, or a file); the last two live here, apart from the
//! registry, which holds one model per variant, and take part only when they are models of the
//! same text. `s2_recall` probes the training run in progress.

use super::engine::{Engine, Kept, State};
use super::js::{err, to_js};
use super::models::check_checkpoint_size;
use super::s2_state::{Predicted, Source};
use crate::data::{parse_tsv_str, CharCorruptionDataset, Row, TsvMode, Vocab};
use crate::model::{checkpoint, torch_params, Gpt};
use crate::train::probe::{self, name_of};
use crate::train::run::predict_known;
use crate::train::section2::{self as s2, Scored};
use crate::train::RunData;
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

mod unseen;

impl Source {
    /// Whether a model with `vocab` was trained on this text.
    fn fits(&self, eng: &Engine, vocab: &Vocab) -> bool {
        match &self.vocab {
            Some(v) => v.itos_string() == vocab.itos_string(),
            None => self.builtin && eng.reads_builtin(vocab),
        }
    }

    fn dev_rows(&self) -> Result<Vec<Row>, JsError> {
        rows(&self.dev, &self.dev_name)
    }
}

impl Engine {
    fn builtin_source(&self) -> Rc<Source> {
        if let Some(s) = self.with(|e| e.s2.builtin.clone()) {
            return s;
        }
        let c = self.builtin_corpus();
        let s = Rc::new(Source {
            id: 0,
            builtin: true,
            vocab: None,
            wiki_name: "the built-in corpus".into(),
            wiki: c.wiki.clone(),
            train_name: "the built-in training set".into(),
            train: c.train_tsv.clone(),
            dev_name: "the built-in dev set".into(),
            dev: c.dev_tsv.clone(),
        });
        self.with(|e| e.s2.builtin = Some(s.clone()));
        s
    }

    fn page_data(&self) -> Option<Rc<Source>> {
        self.with(|e| e.s2.page_data.clone())
    }

    /// The text a model with `vocab` was trained on: the page's data, else the built-in corpus.
    fn source_for(&self, vocab: &Vocab) -> Option<Rc<Source>> {
        self.page_data()
            .filter(|d| d.fits(self, vocab))
            .or_else(|| Some(self.builtin_source()).filter(|b| b.fits(self, vocab)))
    }

    /// A pretraining run of the page finished: its model is the probe's until another comes.
    pub(crate) fn keep_pretrained(&self, model: Rc<Gpt>, vocab: Vocab, label: String) {
        self.with(|e| {
            e.pretrained = Some(Kept {
                model,
                vocab,
                label,
            })
        });
    }

    /// The finetuned model the demos ask, and the text it was trained on: the registry's vanilla
    /// model, unless it is the very model a pretraining run produced (it was never asked
    /// questions).
    fn finetuned(&self) -> Result<(Rc<Gpt>, Vocab, Rc<Source>), JsError> {
        let (m, v) = self.model_for("vanilla")?;
        match self.not_usable(&m, &v) {
            Some(why) => Err(err(why)),
            None => {
                let src = self
                    .source_for(&v)
                    .ok_or_else(|| err("no text fits the current model"))?;
                Ok((m, v, src))
            }
        }
    }

    /// A model the demos keep (`slot`), when it is a model of the same text as `src`.
    fn kept_for(&self, src: &Source, slot: fn(&State) -> &Option<Kept>) -> Option<Kept> {
        self.with(|e| slot(e).clone())
            .filter(|k| src.fits(self, &k.vocab))
    }

    /// Why the current vanilla model cannot be the demos' finetuned model: only pretrained, or a
    /// model of a text that is neither the built-in corpus nor the loaded one. None when it can.
    fn not_usable(&self, m: &Rc<Gpt>, v: &Vocab) -> Option<String> {
        let same = self.with(|e| {
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
        if self.source_for(v).is_none() {
            let label = self
                .label_of("vanilla")
                .unwrap_or_else(|| "the current model".into());
            let loaded = self
                .page_data()
                .map(|d| format!(" or the loaded {}", d.wiki_name))
                .unwrap_or_default();
            return Some(format!(
                "the current vanilla model ({label}) was trained on another text than the built-in \
                 corpus{loaded}, so the demos have no people it read about: load the text it was \
                 trained on in the Data card (for the course model: the course's wiki.txt, \
                 birth_places_train.tsv and birth_dev.tsv), or load the shipped model again \
                 (Models card), then compare"
            ));
        }
        None
    }

    /// A model's predictions for the first `dev.len()` dev people of `src` (`Predicted`).
    async fn predicted(
        &self,
        model: &Rc<Gpt>,
        vocab: &Vocab,
        src: &Source,
        dev: &[Row],
    ) -> Result<Vec<String>, JsError> {
        let same = |p: &Predicted| {
            p.people == dev.len()
                && p.source == src.id
                && p.model.upgrade().is_some_and(|m| Rc::ptr_eq(&m, model))
        };
        let kept = self.with(|e| {
            e.s2.predicted
                .iter()
                .find(|p| same(p))
                .map(|p| p.answers.clone())
        });
        if let Some(a) = kept {
            return Ok(a);
        }
        let (answers, _) = predict_known(model, vocab, dev, &src.dev_name, &mut |_, _| {})
            .await
            .map_err(|e| self.lost_err(e))?;
        self.with(|e| {
            let k = &mut e.s2.predicted;
            k.retain(|p| p.model.strong_count() > 0);
            if k.len() >= 4 {
                k.remove(0);
            }
            k.push(Predicted {
                model: Rc::downgrade(model),
                source: src.id,
                people: dev.len(),
                answers: answers.clone(),
            })
        });
        Ok(answers)
    }
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

#[derive(Serialize)]
struct Roles {
    finetuned: Option<String>,
    /// Why the current vanilla model is not the finetuned one (only pretrained, or of another text).
    finetuned_why: Option<String>,
    /// The models kept here that are of the finetuned model's text (others take no part).
    no_pretrain: Option<String>,
    pretrained: Option<String>,
    /// A pretrained-only model kept here that is of another text (so no probe), or null.
    pretrained_other: Option<String>,
    /// The text the demos ask about: `{builtin, wiki, train, dev, people}`, or null.
    data: Option<DataInfo>,
}

#[derive(Serialize)]
struct DataInfo {
    builtin: bool,
    wiki: String,
    train: String,
    dev: String,
    /// How many dev questions.
    people: usize,
}

/// `s2::Comparison`'s fields (serde's flatten would make a JS `Map` of it) and whether a model
/// finetuned without pretraining on this text answered (else `without` is empty and
/// `without_correct` 0).
#[derive(Serialize)]
struct Compare {
    rows: Vec<s2::Compared>,
    with_correct: usize,
    without_correct: usize,
    total: usize,
    probe: Option<s2::ProbeSummary>,
    without_model: bool,
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

#[derive(Serialize)]
struct Evidence {
    name: String,
    /// The person's line of the pretraining text (what pretraining read), or null.
    document: Option<String>,
    /// Whether the pretrained model fills the masked birthplace: null without a pretrained model
    /// or when the place is not in the part pretraining shows.
    recalled: Option<bool>,
    pretrained: Option<String>,
}

#[derive(Serialize)]
struct Recall {
    asked: usize,
    recalled: usize,
    percent: f64,
}

#[wasm_bindgen]
impl Engine {
    /// The page's data changed (the Data card: the course files served, picked or dropped): the demos
    /// ask about its people when the finetuned model was trained on its pretraining text. The built-in
    /// corpus's own text clears it.
    pub fn s2_set_data(
        &self,
        wiki_name: String,
        wiki: String,
        train_name: String,
        train: String,
        dev_name: String,
        dev: String,
    ) -> Result<(), JsError> {
        if wiki == self.builtin_corpus().wiki {
            self.with(|e| e.s2.page_data = None);
            return Ok(());
        }
        let vocab = Vocab::from_text(&wiki, &wiki_name).map_err(err)?;
        let id = self.page_data().map_or(0, |d| d.id) + 1;
        let data = Some(Rc::new(Source {
            id,
            builtin: false,
            vocab: Some(vocab),
            wiki_name,
            wiki,
            train_name,
            train,
            dev_name,
            dev,
        }));
        self.with(|e| e.s2.page_data = data);
        Ok(())
    }

    /// Which models the demos have, each its label or null, and the text they ask about.
    pub fn s2_models(&self) -> Result<JsValue, JsError> {
        let label = |k: Option<Kept>| k.map(|k| k.label);
        let why = self
            .model_for("vanilla")
            .ok()
            .and_then(|(m, v)| self.not_usable(&m, &v));
        let ft = self.finetuned().ok();
        let src = ft.as_ref().map(|(_, _, s)| s.clone());
        let finetuned = ft.and_then(|_| self.label_of("vanilla"));
        let (no_pretrain, pretrained, pretrained_other) = match &src {
            Some(s) => (
                label(self.kept_for(s, |e| &e.no_pretrain)),
                label(self.kept_for(s, |e| &e.pretrained)),
                self.with(|e| e.pretrained.clone())
                    .filter(|k| !s.fits(self, &k.vocab))
                    .map(|k| k.label),
            ),
            None => (None, None, None),
        };
        let data = match &src {
            Some(s) => Some(DataInfo {
                builtin: s.builtin,
                wiki: s.wiki_name.clone(),
                train: s.train_name.clone(),
                dev: s.dev_name.clone(),
                people: s.dev_rows()?.len(),
            }),
            None => None,
        };
        to_js(&Roles {
            finetuned,
            finetuned_why: why,
            no_pretrain,
            pretrained,
            pretrained_other,
            data,
        })
    }

    /// Load a checkpoint as the demos' `role` model: "nopretrain" (finetuned without pretraining) or
    /// "pretrained" (only pretrained, for the probe). It must be a model of the built-in corpus or of
    /// the loaded pretraining text; a course `.params` file takes that text's vocabulary (and 8
    /// heads). Returns its label.
    pub async fn s2_load(
        &self,
        role: String,
        bytes: Vec<u8>,
        name: String,
    ) -> Result<String, JsError> {
        let slot: fn(&mut State) -> &mut Option<Kept> = match role.as_str() {
            "nopretrain" => |e| &mut e.no_pretrain,
            "pretrained" => |e| &mut e.pretrained,
            other => {
                return Err(err(format!(
                    "unknown role '{other}': use nopretrain or pretrained"
                )))
            }
        };
        let g = self.device().await?;
        check_checkpoint_size(&g, bytes.len(), &name)?;
        let page = self.page_data();
        // The demos ask about the people of a text the page has: a model of any other text lacks its
        // characters or orders them otherwise, so it is refused here with what to load instead.
        let other_text = || {
            let loaded = page
                .as_ref()
                .map(|d| format!(" or the loaded {}", d.wiki_name))
                .unwrap_or_default();
            err(format!(
                "{name} was trained on another text than the built-in corpus{loaded} (its vocabulary \
                 differs); the section 2 demos compare models of the text whose people they ask \
                 about: load its pretraining text in the Data card, or a model pretrained on the \
                 built-in corpus (this page's Pretrain on it, or “attnlab pretrain vanilla \
                 --writing_params_path …” without a corpus path)"
            ))
        };
        let builtin_vocab =
            Vocab::from_text(&self.builtin_corpus().wiki, "the built-in corpus").map_err(err)?;
        let (model, vocab) = if torch_params::is_torch_file(&bytes) {
            // A `.params` file keeps no vocabulary: the loaded text's first, then the built-in one's.
            let mut texts: Vec<(Vocab, String)> = page
                .iter()
                .filter_map(|d| d.vocab.clone().map(|v| (v, d.wiki_name.clone())))
                .collect();
            texts.push((builtin_vocab, "the built-in corpus".into()));
            let mut found = None;
            for (vocab, what) in texts {
                let want = torch_params::Expected {
                    variant: None,
                    n_head: None,
                    vocab: Some((vocab.len(), &what)),
                };
                match torch_params::from_bytes(&g, &bytes, &want, &name) {
                    Ok(m) => {
                        found = Some((m, vocab));
                        break;
                    }
                    Err(e) if e.to_string().contains("was trained with a vocabulary of") => {}
                    Err(e) => return Err(err(e)),
                }
            }
            found.ok_or_else(other_text)?
        } else {
            let (m, header) = checkpoint::from_bytes(&g, &bytes, None, &name).map_err(err)?;
            let vocab = Vocab::from_itos(&header.vocab, &name).map_err(err)?;
            if self.source_for(&vocab).is_none() {
                return Err(other_text());
            }
            (m, vocab)
        };
        let kept = Kept {
            model: Rc::new(model),
            vocab,
            label: name.clone(),
        };
        self.with(|e| *slot(e) = Some(kept));
        Ok(name)
    }

    /// (a) The finetuned model and the one without pretraining (when there is one of the same text)
    /// on its text's dev set (the first `people`, 0: all), side by side, with the probe and the
    /// stored × answered table when a pretrained model of that text is there.
    pub async fn s2_compare(&self, people: u32) -> Result<JsValue, JsError> {
        let (with, with_vocab, src) = self.finetuned()?;
        let without = self.kept_for(&src, |e| &e.no_pretrain);
        let dev = first(src.dev_rows()?, people);
        let pre = self.kept_for(&src, |e| &e.pretrained);
        let docs = match &pre {
            Some(k) => Some(
                CharCorruptionDataset::new(&src.wiki, &src.wiki_name, &k.vocab, 0).map_err(err)?,
            ),
            None => None,
        };
        let a = self.predicted(&with, &with_vocab, &src, &dev).await?;
        let b = match &without {
            Some(k) => self.predicted(&k.model, &k.vocab, &src, &dev).await?,
            None => vec![String::new(); dev.len()],
        };
        let report = match pre.as_ref().zip(docs.as_ref()) {
            Some((k, d)) => Some(
                probe::probe(&k.model, d.docs(), &k.vocab, &dev)
                    .await
                    .map_err(|e| self.lost_err(e))?,
            ),
            None => None,
        };
        let c = s2::comparison(&dev, &a, &b, report);
        to_js(&Compare {
            rows: c.rows,
            with_correct: c.with_correct,
            without_correct: c.without_correct,
            total: c.total,
            probe: c.probe,
            without_model: without.is_some(),
        })
    }

    /// (b) Every dev answer of the finetuned model's text (of the first `people`, 0: all) with its
    /// confidence, and the histogram of right vs wrong answers' confidences in `bins` bins.
    pub async fn s2_confidence(&self, bins: u32, people: u32) -> Result<JsValue, JsError> {
        let (model, vocab, src) = self.finetuned()?;
        let dev: Vec<Row> = first(src.dev_rows()?, people);
        let known: Vec<&Row> = dev
            .iter()
            .filter(|r| r.question.chars().all(|ch| vocab.id(ch).is_some()))
            .collect();
        let questions: Vec<String> = known.iter().map(|r| r.question.clone()).collect();
        let scored = s2::answer_scored(&model, &vocab, &questions)
            .await
            .map_err(|e| self.lost_err(e))?;
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

    /// (b) The evidence behind one dev answer: the person's pretraining text and, with a pretrained
    /// model, whether the probe recalls their birthplace.
    pub async fn s2_evidence(&self, question: String) -> Result<JsValue, JsError> {
        let (_, _, src) = self.finetuned()?;
        let dev = src.dev_rows()?;
        let row = dev
            .iter()
            .find(|r| r.question == question)
            .ok_or_else(|| err(format!("that question is not in {}", src.dev_name)))?;
        let name = name_of(&row.question).unwrap_or("").to_string();
        let pre = self.kept_for(&src, |e| &e.pretrained);
        let recalled = match &pre {
            Some(k) => {
                let docs = CharCorruptionDataset::new(&src.wiki, &src.wiki_name, &k.vocab, 0)
                    .map_err(err)?;
                let r = probe::probe(&k.model, docs.docs(), &k.vocab, std::slice::from_ref(row))
                    .await
                    .map_err(|e| self.lost_err(e))?;
                r.per_row[0]
            }
            None => None,
        };
        to_js(&Evidence {
            document: s2::document_of(&src.wiki, &name).map(String::from),
            name,
            recalled,
            pretrained: pre.map(|k| k.label),
        })
    }

    /// The probe's recall on a fixed sample of at most `n` people of `tsv` (the finetuning file,
    /// whose people the pretraining text describes) for the pretraining run in progress; null when
    /// the run is a finetune or no one can be probed.
    pub async fn s2_recall(
        &self,
        tsv_name: String,
        tsv: String,
        n: u32,
    ) -> Result<JsValue, JsError> {
        let people = parse_tsv_str(&tsv, &tsv_name, TsvMode::RequireAnswers).map_err(err)?;
        let mut guard = self.take_run()?;
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
            .map_err(|e| self.lost_err(e))?;
        let recalled = got.iter().filter(|&&b| b).count();
        to_js(&Recall {
            asked: got.len(),
            recalled,
            percent: 100.0 * recalled as f64 / got.len() as f64,
        })
    }
}
