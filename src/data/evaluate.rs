//! Evaluation as in the reference run.py / utils.py: prompt `question⁇`, greedy completion,
//! prediction = text between the first and second ⁇, exact-match accuracy against the gold TSV,
//! printed as `Correct: {c} out of {t}: {c/t*100}%` with Python's float formatting.

use super::tsv::Row;
use super::MASK_CHAR;
use crate::error::{Error, Result};

/// The model input for one evaluation row: the raw question (non-ASCII kept, as the reference
/// does at evaluation time) followed by ⁇.
pub fn prompt_for(question: &str) -> String {
    format!("{question}{MASK_CHAR}")
}

/// The question for what a person typed in Ask: a bare name becomes "Where was NAME born?", and
/// "where was NAME born" in any case, with or without its "?", is written the way the course's
/// questions are (the model learned that exact form); any other line ending with "?" is kept.
pub fn question_for(text: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::Msg(
            "type a name (or a whole question such as \"Where was Ada Lovelace born?\")".into(),
        ));
    }
    if t.contains('\t') || t.contains('\n') {
        return Err(Error::Msg(
            "the question must be one line without tabs".into(),
        ));
    }
    const WHERE: &str = "where was ";
    if let Some(body) = t
        .get(..WHERE.len())
        .filter(|p| p.eq_ignore_ascii_case(WHERE))
        .map(|_| &t[WHERE.len()..])
    {
        let body = body.trim_end_matches('?').trim_end();
        let name = match body.len().checked_sub(" born".len()) {
            Some(at)
                if body
                    .get(at..)
                    .is_some_and(|e| e.eq_ignore_ascii_case(" born")) =>
            {
                body[..at].trim()
            }
            _ => body.trim(),
        };
        if name.is_empty() {
            return Err(Error::Msg(
                "the question has no name: type one, e.g. \"Where was Ada Lovelace born?\"".into(),
            ));
        }
        return Ok(format!("Where was {name} born?"));
    }
    if t.ends_with('?') {
        Ok(t.to_string())
    } else {
        Ok(format!("Where was {t} born?"))
    }
}

/// `completion.split('⁇')[1]`: the text between the first and second ⁇, or everything after the
/// first ⁇ when the model produced no second one (then it is almost surely wrong). With no ⁇ at
/// all (the reference would raise IndexError) the prediction is empty.
pub fn prediction_from_completion(completion: &str) -> String {
    completion.split(MASK_CHAR).nth(1).unwrap_or("").to_string()
}

/// Exact-match count of `predictions` against the gold answers: (correct, total). Gold answers
/// are compared with trailing whitespace removed (the reference `strip()`s each gold line).
/// Question-only rows give (0, 0), like the reference's "No gold birth places provided".
pub fn evaluate_places(gold: &[Row], predictions: &[String]) -> Result<(usize, usize)> {
    if gold.first().is_none_or(|r| r.answer.is_none()) {
        return Ok((0, 0));
    }
    if gold.len() != predictions.len() {
        return Err(Error::Msg(format!(
            "{} gold rows but {} predictions; give exactly one prediction per gold row",
            gold.len(),
            predictions.len()
        )));
    }
    let correct = gold
        .iter()
        .zip(predictions)
        .filter(|(row, pred)| row.answer.as_deref().map(str::trim_end) == Some(pred.as_str()))
        .count();
    Ok((correct, gold.len()))
}

/// The "London" baseline: predict London for every row.
pub fn london_baseline(gold: &[Row]) -> Result<(usize, usize)> {
    let predictions = vec!["London".to_string(); gold.len()];
    evaluate_places(gold, &predictions)
}

/// The reference's line, exactly: utils.evaluate_places returns floats, so the counts print as
/// `25.0`, and the percentage is `correct/total*100` in that order (so 119/500 gives
/// 23.799999999999997, not 23.8). Total 0 gives the reference's "no targets" wording.
pub fn format_accuracy(correct: usize, total: usize) -> String {
    if total == 0 {
        return "No gold birth places provided; returning (0,0)".to_string();
    }
    let (c, t) = (correct as f64, total as f64);
    format!(
        "Correct: {} out of {}: {}%",
        python_float_repr(c),
        python_float_repr(t),
        python_float_repr(c / t * 100.0)
    )
}

/// Python's `repr(float)`: shortest round-trip digits (Rust's `{:?}` gives the same digits and
/// the same switch to exponent form below 1e-4 and from 1e16), with Python's exponent spelling
/// (`1e-05`, `1e+16`) and `inf`/`nan`.
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:?}");
    match s.split_once('e') {
        None => s,
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            // Python drops a ".0" mantissa ("1e-05", not "1.0e-05").
            let mantissa = mantissa.strip_suffix(".0").unwrap_or(mantissa);
            format!("{mantissa}e{sign}{digits:0>2}")
        }
    }
}
