//! What pretraining stored, asked directly. For each person of a question file, find their
//! document in the pretraining corpus (the document that starts with "NAME.") and the birthplace
//! in the part of it that pretraining shows (its first `MAX_TRUNC` characters: every example is
//! cut there or earlier). Mask the place as span corruption does, `prefix ⁇ suffix ⁇`, and let
//! the pretrained model fill the span greedily: the person is *recalled* when the first characters
//! it writes are the place. Crossed with the finetuned model's answers this gives the 2 × 2 table
//! of the handout's section 2: stored in pretraining × answered after finetuning.

use super::sample::sample_greedy_batch;
use crate::data::corruption::MAX_TRUNC;
use crate::data::tsv::Row;
use crate::data::{Vocab, MASK_ID};
use crate::error::Result;
use crate::model::Gpt;

/// One probe question: the row it comes from, the masked prompt and the place's ids.
#[derive(Debug, Clone)]
pub struct ProbeItem {
    pub row: usize,
    pub prompt: Vec<u32>,
    pub place: Vec<u32>,
}

/// Why a row could not be probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unprobed {
    /// The question is not "Where was NAME born?", or the row has no answer.
    NoQuestion,
    /// No document starts with "NAME.".
    NoDocument,
    /// The place is not in the document's first `MAX_TRUNC` characters (or uses characters
    /// outside the vocabulary), so pretraining never showed it.
    NotShown,
}

/// The name in "Where was NAME born?".
pub fn name_of(question: &str) -> Option<&str> {
    question
        .trim_end()
        .strip_prefix("Where was ")?
        .strip_suffix(" born?")
        .filter(|n| !n.is_empty())
}

/// The probe item of each row, or why there is none. `docs` are the corpus's encoded documents
/// (`CharCorruptionDataset::docs`).
pub fn probe_items(
    docs: &[Vec<u32>],
    vocab: &Vocab,
    rows: &[Row],
) -> Vec<std::result::Result<ProbeItem, Unprobed>> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let name = name_of(&r.question).ok_or(Unprobed::NoQuestion)?;
            let answer = r.answer.as_deref().ok_or(Unprobed::NoQuestion)?;
            let title = vocab
                .encode(&format!("{name}."))
                .map_err(|_| Unprobed::NoDocument)?;
            let doc = docs
                .iter()
                .find(|d| d.starts_with(&title))
                .ok_or(Unprobed::NoDocument)?;
            let place = vocab
                .encode(answer.trim())
                .map_err(|_| Unprobed::NotShown)?;
            let shown = &doc[..doc.len().min(MAX_TRUNC)];
            let start = (0..shown.len().saturating_sub(place.len()) + 1)
                .find(|&s| !place.is_empty() && shown[s..].starts_with(&place))
                .ok_or(Unprobed::NotShown)?;
            let mut prompt = shown[..start].to_vec();
            prompt.push(MASK_ID);
            prompt.extend_from_slice(&shown[start + place.len()..]);
            prompt.push(MASK_ID);
            Ok(ProbeItem {
                row: i,
                prompt,
                place,
            })
        })
        .collect()
}

/// Whether the model fills each item's span with its place (greedy, as many characters as the
/// place has). Items of one place length are decoded together.
pub async fn recall(model: &Gpt, items: &[ProbeItem]) -> Result<Vec<bool>> {
    let mut out = vec![false; items.len()];
    let mut lengths: Vec<usize> = items.iter().map(|it| it.place.len()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    for len in lengths {
        let idx: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].place.len() == len)
            .collect();
        let prompts: Vec<Vec<u32>> = idx.iter().map(|&i| items[i].prompt.clone()).collect();
        let done = sample_greedy_batch(model, &prompts, len, &mut |_, _| {}).await?;
        for (&i, ids) in idx.iter().zip(&done) {
            out[i] = ids[items[i].prompt.len()..] == items[i].place[..];
        }
    }
    Ok(out)
}

/// Counts of a probe: rows asked, recalled, and not probed by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeReport {
    pub asked: usize,
    pub recalled: usize,
    pub no_question: usize,
    pub no_document: usize,
    pub not_shown: usize,
    /// Per row: Some(recalled) when probed.
    pub per_row: Vec<Option<bool>>,
}

impl ProbeReport {
    pub fn percent(&self) -> f64 {
        100.0 * self.recalled as f64 / self.asked.max(1) as f64
    }

    /// The report's line: recall and what was not probed.
    pub fn line(&self) -> String {
        format!(
            "recall {:.1}% ({} of {} people whose birthplace is in the first {MAX_TRUNC} characters \
             of their document; not probed: {} without a document, {} whose place comes later, {} \
             other rows)",
            self.percent(),
            self.recalled,
            self.asked,
            self.no_document,
            self.not_shown,
            self.no_question
        )
    }

    /// Stored (recalled by the probe) × answered (the finetuned model's prediction is the gold
    /// place), over the probed rows: `[[stored∧right, stored∧wrong], [¬stored∧right, ¬stored∧wrong]]`.
    pub fn table(&self, rows: &[Row], predictions: &[String]) -> [[usize; 2]; 2] {
        let mut t = [[0; 2]; 2];
        for ((p, r), pred) in self.per_row.iter().zip(rows).zip(predictions) {
            if let (Some(stored), Some(gold)) = (p, &r.answer) {
                let right = pred == gold.trim_end();
                t[!stored as usize][!right as usize] += 1;
            }
        }
        t
    }
}

/// Probe `rows` against the corpus `docs` with `model` (a pretrained model: it was never asked
/// questions, only to fill masked spans).
pub async fn probe(
    model: &Gpt,
    docs: &[Vec<u32>],
    vocab: &Vocab,
    rows: &[Row],
) -> Result<ProbeReport> {
    let found = probe_items(docs, vocab, rows);
    let mut report = ProbeReport {
        per_row: vec![None; rows.len()],
        ..ProbeReport::default()
    };
    let mut items = vec![];
    for f in found {
        match f {
            Ok(it) => items.push(it),
            Err(Unprobed::NoQuestion) => report.no_question += 1,
            Err(Unprobed::NoDocument) => report.no_document += 1,
            Err(Unprobed::NotShown) => report.not_shown += 1,
        }
    }
    let got = recall(model, &items).await?;
    for (it, ok) in items.iter().zip(got) {
        report.per_row[it.row] = Some(ok);
        report.asked += 1;
        report.recalled += ok as usize;
    }
    Ok(report)
}
