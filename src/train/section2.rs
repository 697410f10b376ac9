//! The handout's section 2 as numbers the page draws: (a) a pretrained and a never-pretrained model
//! answering the same questions, with the probe of what pretraining stored beside them; (b) each
//! greedy answer with the probability the model gave each of its characters, so right and wrong
//! answers' confidences can be compared; (c) answers for names no model has seen, grouped by what
//! the name looks like (its surname ending, from the corpus's name generator).
//!
//! The answers are the evaluation's (`run::predict`): prompt `question⁇`, `EVAL_STEPS` greedy
//! characters, the text up to the next ⁇. Here they are decoded through `model::Decoder` directly
//! so each step's softmax is at hand.

use super::probe::{self, ProbeItem, ProbeReport};
use super::run::{predict_known, EVAL_STEPS};
use crate::data::corpus::surname_endings;
use crate::data::tsv::Row;
use crate::data::{prediction_from_completion, prompt_for, Vocab, MASK_ID};
use crate::error::{Error, Result};
use crate::model::{Decoder, Gpt};
use serde::Serialize;

/// Longest name (in characters) the demos ask about: the question and a full answer must fit the
/// context without the crop, which would invalidate the key/value cache.
pub const MAX_NAME_CHARS: usize = 64;

// ---------------------------------------------------------------------------------------------
// (b) answers with their confidence

/// A greedy answer and the probability the model gave each of its characters.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    /// What evaluation predicts (`prediction_from_completion`).
    pub prediction: String,
    /// p(character | everything before it) for each character of the answer, in order.
    pub probs: Vec<f32>,
    /// The probability of the ⁇ that closed the answer; None when the model never closed it.
    pub end_prob: Option<f32>,
}

impl Scored {
    /// The probability the model gave its whole answer: the product of its characters'.
    pub fn confidence(&self) -> f64 {
        self.probs.iter().map(|&p| p as f64).product()
    }

    /// The mean log-probability per character (0 for an empty answer).
    pub fn mean_log_prob(&self) -> f64 {
        let n = self.probs.len().max(1) as f64;
        self.probs.iter().map(|&p| (p as f64).ln()).sum::<f64>() / n
    }
}

/// The first maximum of a row (as `sample::argmax`: NaN never wins) and its softmax probability.
fn pick(row: &[f32]) -> (u32, f32) {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] || row[best].is_nan() {
            best = i;
        }
    }
    let top = row[best] as f64;
    let z: f64 = row.iter().map(|&v| (v as f64 - top).exp()).sum();
    (best as u32, (1.0 / z) as f32)
}

/// Rows decoded together (one cache each chunk).
const ROWS: usize = 32;

/// Each question's greedy answer (exactly the evaluation's) with its characters' probabilities.
/// A question with a character the vocabulary lacks, or too long to be answered without the
/// crop, is an error naming it.
pub async fn answer_scored(
    model: &Gpt,
    vocab: &Vocab,
    questions: &[String],
) -> Result<Vec<Scored>> {
    let most = model.cfg.max_context();
    let prompts = questions
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let p = vocab.encode_in(&prompt_for(q), &format!("question {}", i + 1))?;
            if p.len() + EVAL_STEPS - 1 > most {
                return Err(Error::Msg(format!(
                    "question {} is {} characters long; with its answer at most {} fit",
                    i + 1,
                    p.len() - 1,
                    most + 1 - EVAL_STEPS - 1
                )));
            }
            Ok(p)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut order: Vec<usize> = (0..prompts.len()).collect();
    order.sort_by_key(|&i| prompts[i].len());
    let mut out: Vec<Option<Scored>> = vec![None; prompts.len()];
    for same in order.chunk_by(|&a, &b| prompts[a].len() == prompts[b].len()) {
        for chunk in same.chunks(ROWS) {
            let rows: Vec<&[u32]> = chunk.iter().map(|&i| prompts[i].as_slice()).collect();
            let (toks, probs) = decode_with_probs(model, &rows).await?;
            for (k, &i) in chunk.iter().enumerate() {
                let mut all = prompts[i].clone();
                all.extend_from_slice(&toks[k]);
                let prediction = prediction_from_completion(&vocab.decode(&all)?);
                let close = toks[k].iter().position(|&t| t == MASK_ID);
                let n = close.unwrap_or(toks[k].len());
                out[i] = Some(Scored {
                    prediction,
                    probs: probs[k][..n].to_vec(),
                    end_prob: close.map(|c| probs[k][c]),
                });
            }
        }
    }
    out.into_iter()
        .map(|s| s.ok_or_else(|| Error::Msg("a question was not decoded".into())))
        .collect()
}

/// `EVAL_STEPS` greedy tokens and their probabilities for prompts of one length (fewer once every
/// row's answer has closed).
async fn decode_with_probs(model: &Gpt, rows: &[&[u32]]) -> Result<(Vec<Vec<u32>>, Vec<Vec<f32>>)> {
    let (r, t) = (rows.len(), rows.first().map_or(0, |p| p.len()));
    let v = model.cfg.vocab_size;
    let mut dec = Decoder::new(model, r, t + EVAL_STEPS - 1)?;
    // Position-major: token t of row b at t·R + b.
    let prompt: Vec<u32> = (0..t * r).map(|i| rows[i % r][i / r]).collect();
    let mut logits = dec.advance(&prompt)?;
    let (mut toks, mut probs) = (vec![vec![]; r], vec![vec![]; r]);
    for step in 0..EVAL_STEPS {
        let vals = logits.to_vec_f32().await?;
        let next: Vec<u32> = vals
            .chunks(v)
            .enumerate()
            .map(|(b, row)| {
                let (tok, p) = pick(row);
                toks[b].push(tok);
                probs[b].push(p);
                tok
            })
            .collect();
        // Each answer ends at its closing ⁇: once every row has one, later steps change nothing.
        if toks.iter().all(|t| t.contains(&MASK_ID)) {
            break;
        }
        if step + 1 < EVAL_STEPS {
            logits = dec.advance(&next)?;
        }
    }
    Ok((toks, probs))
}

/// Right and wrong answers' confidences in `bins` equal bins over [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    pub right: Vec<usize>,
    pub wrong: Vec<usize>,
    /// How often a right answer is more confident than a wrong one (ties count half), over all
    /// right × wrong pairs: 0.5 means confidence tells them apart no better than a coin; None
    /// without both kinds.
    pub separation: Option<f64>,
}

pub fn histogram(confidence: &[f64], right: &[bool], bins: usize) -> Histogram {
    let bins = bins.max(1);
    let (mut r, mut w) = (vec![0; bins], vec![0; bins]);
    for (&c, &ok) in confidence.iter().zip(right) {
        let b = ((c.clamp(0.0, 1.0) * bins as f64) as usize).min(bins - 1);
        if ok {
            r[b] += 1
        } else {
            w[b] += 1
        }
    }
    let pairs = |ok: bool| -> Vec<f64> {
        confidence
            .iter()
            .zip(right)
            .filter(|(_, &k)| k == ok)
            .map(|(&c, _)| c)
            .collect()
    };
    let (rc, wc) = (pairs(true), pairs(false));
    let separation = (!rc.is_empty() && !wc.is_empty()).then(|| {
        let mut s = 0.0;
        for a in &rc {
            for b in &wc {
                s += if a > b {
                    1.0
                } else if a == b {
                    0.5
                } else {
                    0.0
                };
            }
        }
        s / (rc.len() * wc.len()) as f64
    });
    Histogram {
        right: r,
        wrong: w,
        separation,
    }
}

/// The document (line of `wiki`) about `name`: the one that starts with "NAME.".
pub fn document_of<'a>(wiki: &'a str, name: &str) -> Option<&'a str> {
    let title = format!("{name}.");
    wiki.lines().find(|l| l.starts_with(&title))
}

// ---------------------------------------------------------------------------------------------
// (a) pretrained vs not, and what pretraining stored

/// One dev person in the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Compared {
    pub question: String,
    pub gold: String,
    pub with_pretraining: String,
    pub without: String,
    /// Whether the pretrained model filled the masked birthplace (None: not probed).
    pub stored: Option<bool>,
}

/// The two models' answers to `rows` side by side; `probe_with`, a model that was only pretrained,
/// adds each person's probe and the stored × answered table (`ProbeReport::table`).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub rows: Vec<Compared>,
    pub with_correct: usize,
    pub without_correct: usize,
    pub total: usize,
    pub probe: Option<ProbeSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeSummary {
    pub asked: usize,
    pub recalled: usize,
    pub line: String,
    /// [[stored∧right, stored∧wrong], [¬stored∧right, ¬stored∧wrong]] for the pretrained side.
    pub table: [[usize; 2]; 2],
}

/// Compare `with` (pretrained, then finetuned) and `without` (finetuned only) on `rows`; a question
/// a model's vocabulary lacks a character of counts as wrong for it. `pretrained` is a
/// pretrained-only model with the corpus documents it was trained on.
pub async fn compare(
    with: (&Gpt, &Vocab),
    without: (&Gpt, &Vocab),
    rows: &[Row],
    pretrained: Option<(&Gpt, &Vocab, &[Vec<u32>])>,
) -> Result<Comparison> {
    let (a, _) = predict_known(with.0, with.1, rows, "the dev set", &mut |_, _| {}).await?;
    let (b, _) = predict_known(without.0, without.1, rows, "the dev set", &mut |_, _| {}).await?;
    let report = match pretrained {
        Some((m, v, docs)) => Some(probe::probe(m, docs, v, rows).await?),
        None => None,
    };
    Ok(comparison(rows, &a, &b, report))
}

/// [`compare`] from the two models' predictions `a` (with pretraining) and `b` (without) of `rows`
/// and the pretrained-only model's probe, when there is one.
pub fn comparison(
    rows: &[Row],
    a: &[String],
    b: &[String],
    report: Option<ProbeReport>,
) -> Comparison {
    let gold = |r: &Row| r.answer.as_deref().unwrap_or("").trim_end().to_string();
    let out: Vec<Compared> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| Compared {
            question: r.question.clone(),
            gold: gold(r),
            with_pretraining: a[i].clone(),
            without: b[i].clone(),
            stored: report.as_ref().and_then(|p| p.per_row[i]),
        })
        .collect();
    let right = |f: fn(&Compared) -> &String| out.iter().filter(|c| *f(c) == c.gold).count();
    Comparison {
        with_correct: right(|c| &c.with_pretraining),
        without_correct: right(|c| &c.without),
        total: out.len(),
        probe: report.map(|p| ProbeSummary {
            asked: p.asked,
            recalled: p.recalled,
            line: p.line(),
            table: p.table(rows, a),
        }),
        rows: out,
    }
}

/// A fixed sample of at most `n` people of `rows` that can be probed against `docs`, spread evenly
/// over the file (the page probes it every few pretraining epochs).
pub fn recall_sample(docs: &[Vec<u32>], vocab: &Vocab, rows: &[Row], n: usize) -> Vec<ProbeItem> {
    let ok: Vec<ProbeItem> = probe::probe_items(docs, vocab, rows)
        .into_iter()
        .filter_map(|r| r.ok())
        .collect();
    if ok.len() <= n {
        return ok;
    }
    (0..n).map(|k| ok[k * ok.len() / n].clone()).collect()
}

// ---------------------------------------------------------------------------------------------
// (c) unseen names, grouped by their look

/// What a name looks like to the generator: its surname's ending ("-ski"), or "other" when its
/// last word ends with none of the generator's endings (or is only the ending).
pub fn name_group(name: &str) -> String {
    let last = name.split_whitespace().last().unwrap_or("").to_lowercase();
    surname_endings()
        .into_iter()
        .find(|e| last.len() > e.len() && last.ends_with(e))
        .map_or_else(|| "other".to_string(), |e| format!("-{e}"))
}

/// A name typed by the user, trimmed, or why the demo cannot ask about it.
pub fn check_name(name: &str, vocab: &Vocab) -> std::result::Result<String, String> {
    let n = name.trim();
    if n.is_empty() {
        return Err("an empty name".into());
    }
    let chars = n.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "{chars} characters long; names of up to {MAX_NAME_CHARS} fit the model with their answer"
        ));
    }
    if let Some(c) = n.chars().find(|&c| vocab.id(c).is_none()) {
        return Err(format!(
            "the model has no {c:?} (U+{:04X}): it knows only the characters of its pretraining text",
            c as u32
        ));
    }
    Ok(n.to_string())
}

/// Answers counted per name group, most frequent first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub key: String,
    pub n: usize,
    pub counts: Vec<(String, usize)>,
}

/// Group `answers` by the look of `names` (`name_group`); groups sorted by key, "other" last.
pub fn by_group(names: &[String], answers: &[String]) -> Vec<Group> {
    let mut groups: Vec<Group> = vec![];
    for (name, ans) in names.iter().zip(answers) {
        let key = name_group(name);
        let g = match groups.iter().position(|g| g.key == key) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    key,
                    n: 0,
                    counts: vec![],
                });
                groups.last_mut().expect("just pushed")
            }
        };
        g.n += 1;
        match g.counts.iter_mut().find(|(a, _)| a == ans) {
            Some((_, c)) => *c += 1,
            None => g.counts.push((ans.clone(), 1)),
        }
    }
    for g in &mut groups {
        g.counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    groups.sort_by(|a, b| (a.key == "other", &a.key).cmp(&(b.key == "other", &b.key)));
    groups
}
