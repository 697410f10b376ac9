//! The generated default corpus: deterministic, well-formed, learnable, with a baseline.

use std::time::Instant;

use attnlab::data::*;

fn parse(text: &str, file: &str) -> Vec<Row> {
    parse_tsv_str(text, file, TsvMode::RequireAnswers).expect("generated TSV parses")
}

/// Every person's (name, birthplace), from the train, dev and test questions in that order.
fn people(c: &DefaultCorpus) -> Vec<(String, String)> {
    [&c.train_tsv, &c.dev_tsv, &c.test_tsv]
        .iter()
        .flat_map(|t| parse(t, "tsv"))
        .map(|r| {
            let name = r
                .question
                .trim_start_matches("Where was ")
                .trim_end_matches(" born?");
            (name.to_string(), r.answer.clone().unwrap_or_default())
        })
        .collect()
}

#[test]
fn corpus_should_be_deterministic_and_fast() {
    let t0 = Instant::now();
    let a = generate(42, 2937);
    println!("generated 2937 people in {:?}", t0.elapsed());
    assert_eq!(a, generate(42, 2937));
    assert_ne!(a.wiki, generate(43, 2937).wiki);
    assert_eq!(CorpusSizes::from_total(2937), CorpusSizes::COURSE);
    assert_eq!(CorpusSizes::from_total(800), CorpusSizes::DEFAULT);
    for line in a.wiki.lines().take(5) {
        println!("{line}");
    }
}

#[test]
fn corpus_should_have_course_shapes_and_contain_each_birthplace() {
    for sizes in [CorpusSizes::DEFAULT, CorpusSizes::COURSE, CorpusSizes::TINY] {
        let c = generate_sized(7, sizes);
        let (train, dev, test) = (
            parse(&c.train_tsv, "train"),
            parse(&c.dev_tsv, "dev"),
            parse(&c.test_tsv, "test"),
        );
        assert_eq!(
            (train.len(), dev.len(), test.len()),
            (sizes.train, sizes.dev, sizes.test)
        );
        let bios: Vec<&str> = c.wiki.split('\n').collect();
        assert_eq!(
            bios.len(),
            sizes.total() + 1,
            "one line per person plus the final empty doc"
        );
        for (row, bio) in train.iter().chain(&dev).chain(&test).zip(&bios) {
            let name = row
                .question
                .trim_start_matches("Where was ")
                .trim_end_matches(" born?");
            assert!(bio.starts_with(&format!("{name}. ")), "{bio}");
            let place = row.answer.as_deref().unwrap_or("");
            let at = bio
                .find(&format!(" {place}"))
                .expect("birthplace in biography");
            assert!(
                at + place.len() < 112,
                "birthplace within pretraining's window: {bio}"
            );
        }
        let vocab = Vocab::from_text(&c.wiki, "generated wiki").expect("no PAD/MASK");
        assert!(!c.wiki.contains(PAD_CHAR) && !c.wiki.contains(MASK_CHAR));
        let ds = NameDataset::new(c.train_tsv.as_bytes(), "train", &vocab).expect("name dataset");
        assert_eq!(ds.len(), sizes.train);
        CharCorruptionDataset::new(&c.wiki, "generated wiki", &vocab, 0).expect("corruption");
    }
}

#[test]
fn corpus_should_have_a_most_common_place_baseline() {
    let c = generate_sized(3, CorpusSizes::COURSE);
    let dev = parse(&c.dev_tsv, "dev");
    let (hit, total) = london_baseline(&dev).expect("baseline");
    let share = hit as f64 / total as f64;
    println!("{}", format_accuracy(hit, total));
    assert!((0.03..=0.15).contains(&share), "London share {share}");
    // The birthplace is not always the first place named (distractors come first sometimes).
    let wiki: Vec<&str> = c.wiki.lines().collect();
    let train = parse(&c.train_tsv, "train");
    let not_first = train
        .iter()
        .zip(&wiki)
        .filter(|(row, bio)| {
            let place = row.answer.as_deref().unwrap_or("");
            let first_in = bio.find(" in ").map(|i| &bio[i + 4..]).unwrap_or("");
            !first_in.starts_with(place)
        })
        .count();
    println!(
        "birthplace not the first 'in X': {not_first}/{}",
        train.len()
    );
    assert!(not_first > train.len() / 5);
}

#[test]
fn corpus_should_offer_the_same_peoples_birth_sentences_alone() {
    for sizes in [CorpusSizes::DEFAULT, CorpusSizes::TINY] {
        let c = generate_sized(7, sizes);
        let people = people(&c);
        let births: Vec<&str> = c.births.lines().collect();
        let bios: Vec<&str> = c.wiki.lines().collect();
        assert_eq!(births.len(), people.len());
        for (((name, place), line), bio) in people.iter().zip(&births).zip(&bios) {
            let header = format!("{name}. ");
            assert!(line.starts_with(&header), "{line}");
            let at = line.find(&format!(" {place}")).expect("birthplace");
            assert!(at + place.len() < 112, "{line}");
            // Its sentences are the biography's own, cut from it.
            for sentence in line[header.len()..].trim_end_matches(" .").split(" . ") {
                assert!(bio.contains(sentence), "{sentence:?} not in {bio:?}");
            }
            assert!(line.len() < bio.len(), "{line}");
        }
        // Its vocabulary holds every question and answer (the essay keeps '?').
        let vocab = Vocab::from_text(&c.births, "births").expect("no PAD/MASK");
        for tsv in [&c.train_tsv, &c.dev_tsv, &c.test_tsv] {
            NameDataset::new(tsv.as_bytes(), "tsv", &vocab)
                .expect("every character in the vocabulary");
        }
        assert!(c.births.len() * 2 < c.wiki.len(), "less than half the text");
    }
}

#[test]
fn corpus_should_offer_the_same_people_in_two_birth_notes_each() {
    for sizes in [CorpusSizes::DEFAULT, CorpusSizes::TINY] {
        let c = generate_sized(7, sizes);
        let people = people(&c);
        let notes: Vec<&str> = c.notes.lines().collect();
        // Person 0 keeps its birth-sentence line (the essay's '?'); every other person has two.
        assert_eq!(notes.len(), 2 * people.len() - 1);
        assert_eq!(notes[0], c.births.lines().next().expect("a first line"));
        let mut seconds = std::collections::HashSet::new();
        for (i, (name, place)) in people.iter().enumerate().skip(1) {
            let (first, second) = (notes[2 * i - 1], notes[2 * i]);
            assert_eq!(first, format!("{name}. Born in {place} ."));
            let form = second
                .strip_prefix(&format!("{name}. "))
                .and_then(|s| s.strip_suffix(&format!(" {place} .")))
                .unwrap_or_else(|| panic!("{second:?} is not a note of {name} and {place}"));
            assert!(NOTE_FORMS.contains(&form), "{second}");
            seconds.insert(form);
        }
        // The second note's form varies from person to person.
        assert_eq!(seconds.len(), NOTE_FORMS.len());
        let vocab = Vocab::from_text(&c.notes, "notes").expect("no PAD/MASK");
        for tsv in [&c.train_tsv, &c.dev_tsv, &c.test_tsv] {
            NameDataset::new(tsv.as_bytes(), "tsv", &vocab)
                .expect("every character in the vocabulary");
        }
        assert!(
            c.notes.len() < c.births.len() * 6 / 5,
            "about the birth sentences' size"
        );
    }
}
