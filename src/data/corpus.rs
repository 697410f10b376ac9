//! The embedded default corpus: fictional people generated from a seed, so the project runs (and
//! its tests train) without the course's files. Names are assembled from syllables by our code;
//! birthplaces come from a hand-written list of real place names with a skewed (Zipf-like,
//! weight 1/(rank+3)) distribution, London most common (≈8%), so a "most common place" baseline
//! exists as in the course. Each person gets one wiki.txt-style biography line that states the
//! birthplace among distractor facts (jobs, places lived, worked, died, dates) in varied
//! templates and order; the birthplace always ends within the first 100 characters because
//! pretraining only ever sees the first ≤112 characters of a document. Line i of `wiki` is the
//! biography of question i of train, then dev, then test (the course's order).

use std::collections::HashSet;

use super::biography::{biography, Person};
use super::corpus_words::{CODAS, FIRST_ENDS, JOBS, ONSETS, PLACES, SURNAME_ENDS, VOWELS};
use super::rng::DataRng;

/// The second note's forms (before the place), one drawn per person: see `DefaultCorpus::notes`.
pub const NOTE_FORMS: [&str; 4] = ["From", "A native of", "Birthplace:", "Born"];
/// Mixed into the corpus seed for the notes' own random stream.
const NOTES_SEED: u64 = 0x6e6f_7465;

/// Train / dev / test people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusSizes {
    pub train: usize,
    pub dev: usize,
    pub test: usize,
}

impl CorpusSizes {
    /// The embedded corpus: 800 people in the course's ratio (545/136/119). Small enough that the
    /// assignment's 650 pretraining epochs take about 1.5 h on a 2-core CPU, which is what it
    /// takes a model to memorise birthplaces (results/builtin800/); at the course's 2937 people
    /// that is about four times longer.
    pub const DEFAULT: CorpusSizes = CorpusSizes {
        train: 545,
        dev: 136,
        test: 119,
    };
    /// The course's split (2000/500/437), `--people 2937`.
    pub const COURSE: CorpusSizes = CorpusSizes {
        train: 2000,
        dev: 500,
        test: 437,
    };
    /// A small split for CI and quick runs.
    pub const TINY: CorpusSizes = CorpusSizes {
        train: 200,
        dev: 50,
        test: 20,
    };

    /// Split `n` people in the course's 2000:500:437 ratio (exact for n = 2937).
    pub fn from_total(n: usize) -> CorpusSizes {
        let train = (n * 2000 + 2937 / 2) / 2937;
        let dev = ((n * 500 + 2937 / 2) / 2937).min(n - train);
        CorpusSizes {
            train,
            dev,
            test: n - train - dev,
        }
    }

    pub fn total(&self) -> usize {
        self.train + self.dev + self.test
    }
}

/// Generated files, same formats as wiki.txt and the birth-place TSVs (every TSV, the test one
/// too, carries answers: the people are ours, so nothing needs to be held back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultCorpus {
    pub wiki: String,
    /// The same people's birth sentences only: line i is line i of `wiki` cut to its name and
    /// the sentence that states the birthplace (person 0 also keeps the essay whose title ends
    /// in '?', which every question needs). Every other fact of a biography is one more thing a
    /// model must memorise before the birthplaces come (results/middle-preset/).
    pub births: String,
    /// The same people in two short notes each, `NAME. Born in PLACE .` and one of
    /// [`NOTE_FORMS`] (person 0 keeps its `births` line, whose essay title ends in '?'). With two
    /// phrasings of one fact and nothing else the probe finds birthplaces stored after under half
    /// the birth sentences' work (results/middle-preset/): the page's middle preset
    /// pretrains on this text.
    pub notes: String,
    pub train_tsv: String,
    pub dev_tsv: String,
    pub test_tsv: String,
}

/// Generate `n_people` people split in the course's ratio (see `CorpusSizes::from_total`).
pub fn generate(seed: u64, n_people: usize) -> DefaultCorpus {
    generate_sized(seed, CorpusSizes::from_total(n_people))
}

/// Generate exactly `sizes.train + sizes.dev + sizes.test` people, deterministically.
pub fn generate_sized(seed: u64, sizes: CorpusSizes) -> DefaultCorpus {
    let mut rng = DataRng::new(seed);
    let cumulative = place_cdf();
    let mut seen = HashSet::new();
    // The notes draw from their own stream, so adding them changed no other text.
    let mut notes_rng = DataRng::new(seed ^ NOTES_SEED);
    let mut out = DefaultCorpus {
        wiki: String::new(),
        births: String::new(),
        notes: String::new(),
        train_tsv: String::new(),
        dev_tsv: String::new(),
        test_tsv: String::new(),
    };
    for i in 0..sizes.total() {
        let person = new_person(&mut rng, &cumulative, &mut seen);
        // Person 0 always mentions an essay title ending in '?', so '?' (needed by every
        // question) is in the vocabulary whatever the size.
        let (line, births) = biography(&mut rng, &person, i == 0);
        out.wiki.push_str(&line);
        out.wiki.push('\n');
        out.births.push_str(&births);
        out.births.push('\n');
        if i == 0 {
            out.notes.push_str(&births);
            out.notes.push('\n');
        } else {
            let (f, b) = (&person.full, person.birthplace);
            let second = NOTE_FORMS[notes_rng.below(NOTE_FORMS.len() as u64) as usize];
            out.notes
                .push_str(&format!("{f}. Born in {b} .\n{f}. {second} {b} .\n"));
        }
        let tsv = if i < sizes.train {
            &mut out.train_tsv
        } else if i < sizes.train + sizes.dev {
            &mut out.dev_tsv
        } else {
            &mut out.test_tsv
        };
        tsv.push_str(&format!(
            "Where was {} born?\t{}\n",
            person.full, person.birthplace
        ));
    }
    out
}

/// Cumulative Zipf-like weights 1/(rank+3) over PLACES, normalised to end at 1.
fn place_cdf() -> Vec<f64> {
    let weights: Vec<f64> = (1..=PLACES.len()).map(|k| 1.0 / (k as f64 + 3.0)).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    weights
        .iter()
        .map(|w| {
            acc += w / total;
            acc
        })
        .collect()
}

fn draw_place(rng: &mut DataRng, cdf: &[f64]) -> &'static str {
    let u = rng.unit();
    let i = cdf.iter().position(|&c| u < c).unwrap_or(PLACES.len() - 1);
    PLACES[i]
}

/// A place other than `not` (uniform, so distractor places carry no birthplace signal).
fn other_place(rng: &mut DataRng, not: &str) -> &'static str {
    loop {
        let p = rng.pick(PLACES).copied().unwrap_or("Paris");
        if p != not {
            return p;
        }
    }
}

fn pick(rng: &mut DataRng, items: &[&'static str]) -> &'static str {
    rng.pick(items).copied().unwrap_or("")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| {
        f.to_ascii_uppercase().to_string() + c.as_str()
    })
}

/// A capitalised word of 1 or 2 random syllables plus `end`.
fn word(rng: &mut DataRng, end: &str) -> String {
    let syllables = 1 + rng.below(2);
    let mut w = String::new();
    for _ in 0..syllables {
        w.push_str(pick(rng, ONSETS));
        w.push_str(pick(rng, VOWELS));
        w.push_str(pick(rng, CODAS));
    }
    w.push_str(end);
    capitalize(&w)
}

/// A new full name (first, sometimes a middle, and a surname) not in `seen`, which gets it;
/// returns (surname, full name).
fn new_name(rng: &mut DataRng, seen: &mut HashSet<String>) -> (String, String) {
    loop {
        let first_end = pick(rng, FIRST_ENDS);
        let first = word(rng, first_end);
        let sur_end = pick(rng, SURNAME_ENDS);
        let surname = word(rng, sur_end);
        let full = if rng.below(5) == 0 {
            let middle = word(rng, "");
            format!("{first} {middle} {surname}")
        } else {
            format!("{first} {surname}")
        };
        if first.len() >= 2 && surname.len() >= 3 && seen.insert(full.clone()) {
            return (surname, full);
        }
    }
}

/// `n` names made by the corpus's name generator from `seed`, none of them in `taken` (the
/// people a model was trained on), so a model cannot have seen them.
pub fn invented_names(seed: u64, n: usize, taken: &HashSet<String>) -> Vec<String> {
    let mut rng = DataRng::new(seed);
    let mut seen = taken.clone();
    (0..n).map(|_| new_name(&mut rng, &mut seen).1).collect()
}

/// The surname endings the generator appends (the empty ending left out), longest first, so the
/// first one a surname ends with is its ending.
pub fn surname_endings() -> Vec<&'static str> {
    let mut e: Vec<&'static str> = SURNAME_ENDS
        .iter()
        .copied()
        .filter(|e| !e.is_empty())
        .collect();
    e.sort_by_key(|s| std::cmp::Reverse(s.len()));
    e.dedup();
    e
}

fn new_person(rng: &mut DataRng, cdf: &[f64], seen: &mut HashSet<String>) -> Person {
    let (surname, full) = new_name(rng, seen);
    let birthplace = draw_place(rng, cdf);
    let year = rng.range_incl(1820, 1985);
    let birth = (rng.range_incl(1, 28), rng.range_incl(0, 11), year);
    let death = if year < 1930 || rng.below(10) < 6 {
        let dy = (year + rng.range_incl(30, 90)).min(2020);
        Some((
            (rng.range_incl(1, 28), rng.range_incl(0, 11), dy),
            other_place(rng, birthplace),
        ))
    } else {
        None
    };
    Person {
        full,
        surname,
        she: rng.below(2) == 0,
        birthplace,
        birth,
        death,
        job: pick(rng, JOBS),
        lived: other_place(rng, birthplace),
        worked: other_place(rng, birthplace),
    }
}
