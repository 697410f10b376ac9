//! The built-in corpus's biography lines: one wiki.txt-style line per generated person, its birth
//! sentence among two or three shuffled distractor facts, the birthplace always ending within the
//! first 100 characters (pretraining sees at most 112). `corpus.rs` draws the people.

use super::corpus_words::{ESSAYS, MONTHS};
use super::rng::DataRng;

/// A generated person: the facts their biography is written from.
pub(super) struct Person {
    pub(super) full: String,
    pub(super) surname: String,
    pub(super) she: bool,
    pub(super) birthplace: &'static str,
    pub(super) birth: (usize, usize, usize),
    pub(super) death: Option<((usize, usize, usize), &'static str)>,
    pub(super) job: &'static str,
    pub(super) lived: &'static str,
    pub(super) worked: &'static str,
}

fn date((d, m, y): (usize, usize, usize)) -> String {
    format!("{d} {} {y}", MONTHS.get(m).copied().unwrap_or("May"))
}

fn a_job(job: &str) -> String {
    let article = if job.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {job}")
}

/// One biography line (without the newline) and its birth-sentence line (see
/// `DefaultCorpus::births`). The birth sentence is one of several templates; 2-3 distractor
/// sentences are shuffled around it.
pub(super) fn biography(rng: &mut DataRng, p: &Person, force_essay: bool) -> (String, String) {
    let pro = if p.she { "She" } else { "He" };
    // Who a sentence is about: the surname or a pronoun, sometimes the full name.
    let who = |rng: &mut DataRng| match rng.below(4) {
        0 => p.full.clone(),
        1 => pro.to_string(),
        _ => p.surname.clone(),
    };
    let b = p.birthplace;
    let was = if p.death.is_some() { "was" } else { "is" };
    let birth_kind = rng.below(7);
    let birth = match birth_kind {
        0 => format!("{} was born in {b}", who(rng)),
        1 => format!("Born in {b}, {} {was} {}", p.surname, a_job(p.job)),
        2 => format!("{} was born on {} in {b}", who(rng), date(p.birth)),
        3 => format!("{} {was} {} born in {b}", p.surname, a_job(p.job)),
        4 => format!("{} grew up in {} but was born in {b}", p.surname, p.lived),
        5 => match p.death {
            Some((d, place)) => format!(
                "{} ({} {b} - {} {place}) was {}",
                p.full,
                date(p.birth),
                date(d),
                a_job(p.job)
            ),
            None => format!(
                "{} (born {} in {b}) is {}",
                p.full,
                date(p.birth),
                a_job(p.job)
            ),
        },
        _ => format!("{} is a native of {b}", p.surname),
    };
    // Essays are rare (1 in 10) apart from the forced one.
    let mut first_fact = if force_essay {
        3
    } else {
        [0, 0, 0, 1, 1, 1, 2, 2, 2, 3][rng.below(10) as usize]
    };
    // Templates 1, 3 and 5 already name the job; do not repeat it.
    if first_fact == 0 && matches!(birth_kind, 1 | 3 | 5) {
        first_fact = 2;
    }
    let mut facts = vec![
        match first_fact {
            3 => format!(
                "{} wrote the essay \"{}\"",
                who(rng),
                rng.pick(ESSAYS).copied().unwrap_or("")
            ),
            0 => format!("{} {was} {}", who(rng), a_job(p.job)),
            1 => format!("{} worked as {} in {}", who(rng), a_job(p.job), p.worked),
            _ => format!("{} studied in {}", who(rng), p.worked),
        },
        match rng.below(3) {
            0 => format!(
                "{} lived in {} for {} years",
                who(rng),
                p.lived,
                rng.range_incl(2, 30)
            ),
            1 => format!(
                "{} moved to {} in {}",
                who(rng),
                p.lived,
                p.birth.2 + rng.range_incl(15, 40)
            ),
            _ => format!("{} later settled in {}", who(rng), p.lived),
        },
    ];
    if let Some((d, place)) = p.death {
        facts.push(match rng.below(2) {
            0 => format!("{} died in {place} in {}", who(rng), d.2),
            _ => format!("{} died on {} in {place}", who(rng), date(d)),
        });
    }
    rng.shuffle(&mut facts);
    // The birth sentence goes first or second; pretraining sees at most 112 characters.
    let mut slot = rng.range_incl(0, 1).min(facts.len());
    facts.insert(slot, birth);
    let header = format!("{}. ", p.full);
    let build = |facts: &[String]| format!("{header}{} .", facts.join(" . "));
    let mut line = build(&facts);
    // Long names or sentences can push the birthplace late: move the birth sentence first, and
    // if that is still too late, use the shortest template.
    if slot > 0 && birthplace_end(&line, &facts[slot], b) > 100 {
        let sentence = facts.remove(slot);
        facts.insert(0, sentence);
        slot = 0;
        line = build(&facts);
    }
    if birthplace_end(&line, &facts[slot], b) > 100 {
        facts[slot] = format!("{} was born in {b}", p.surname);
        line = build(&facts);
    }
    let mut births = vec![facts[slot].clone()];
    births.extend(
        facts
            .iter()
            .filter(|f| force_essay && f.contains(" wrote the essay "))
            .cloned(),
    );
    (line, build(&births))
}

/// Character position just after the birthplace inside the birth sentence of `line`.
fn birthplace_end(line: &str, sentence: &str, place: &str) -> usize {
    let start = line.find(sentence).unwrap_or(0);
    let within = sentence
        .find(place)
        .map_or(sentence.len(), |i| i + place.len());
    start + within
}
