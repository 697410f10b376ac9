//! Checks against the course's files, read at run time when ../shared/data/cs224n-a5 exists.

use attnlab::data::*;

use super::real_data_dir;

fn load(name: &str) -> Option<Vec<u8>> {
    let dir = real_data_dir()?;
    Some(read_file(&dir.join(name)).expect("readable course file"))
}

fn wiki_vocab() -> Option<(String, Vocab)> {
    let bytes = load("wiki.txt")?;
    let text = text_from_bytes(&bytes, "wiki.txt")
        .expect("utf-8")
        .to_string();
    let vocab = Vocab::from_text(&text, "wiki.txt").expect("vocab");
    Some((text, vocab))
}

#[test]
fn real_wiki_should_have_the_course_sizes() {
    let Some((text, vocab)) = wiki_vocab() else {
        return;
    };
    assert_eq!(text.chars().count(), 418_352);
    assert_eq!(vocab.len(), 256);
    assert_eq!((vocab.itos[2], vocab.itos[3]), ('\n', ' '));
    let ds = CharCorruptionDataset::new(&text, "wiki.txt", &vocab, 0).expect("corruption");
    assert_eq!(ds.len(), 2938);
    assert!(ds.docs()[2937].is_empty());
}

#[test]
fn real_name_dataset_should_match_the_reference() {
    let Some((_, vocab)) = wiki_vocab() else {
        return;
    };
    let Some(bytes) = load("birth_places_train.tsv") else {
        return;
    };
    let ds = NameDataset::new(&bytes, "birth_places_train.tsv", &vocab).expect("train set");
    assert_eq!(ds.len(), 2000);
    let (mut longest, mut longest_q) = (0, 0);
    for (i, row) in ds.rows().iter().enumerate() {
        let (x, y) = ds.get(i).expect("example");
        assert_eq!((x.len(), y.len()), (127, 127));
        let answer = row.answer.as_deref().unwrap_or("");
        longest_q = longest_q.max(row.question.chars().count());
        longest = longest.max(row.question.chars().count() + answer.chars().count() + 2);
    }
    // The spec's "longest is 68" bound holds for the question; measured: the longest question
    // is 58 chars and the longest `q⁇a⁇` 70, both far below the 128 block.
    println!("longest question: {longest_q}, longest question⁇answer⁇: {longest}");
    assert!(longest_q <= 68);
    assert_eq!((longest_q, longest), (58, 70));
    // Row 0: "Where was Khatchig Mouradian born?" → Lebanon. Trained targets sit at
    // positions len(q)-1 .. : ⁇, the answer's characters, ⁇; every other target is PAD.
    let row = &ds.rows()[0];
    let q_len = row.question.chars().count();
    let (_, y) = ds.get(0).expect("row 0");
    let expected = vocab
        .encode(&format!("{MASK_CHAR}Lebanon{MASK_CHAR}"))
        .expect("encode");
    assert_eq!(row.answer.as_deref(), Some("Lebanon"));
    assert_eq!(y[q_len - 1..q_len - 1 + expected.len()], expected[..]);
    let trained = y.iter().filter(|&&t| t != PAD_ID).count();
    assert_eq!(trained, expected.len());
}

#[test]
fn real_dev_london_baseline_should_be_five_percent() {
    let Some(bytes) = load("birth_dev.tsv") else {
        return;
    };
    let gold = parse_tsv(&bytes, "birth_dev.tsv", TsvMode::RequireAnswers).expect("dev");
    let (c, t) = london_baseline(&gold).expect("baseline");
    assert_eq!((c, t), (25, 500));
    assert_eq!(format_accuracy(c, t), "Correct: 25.0 out of 500.0: 5.0%");
}

#[test]
fn real_test_inputs_should_parse_as_questions_and_encode() {
    let Some((_, vocab)) = wiki_vocab() else {
        return;
    };
    let Some(bytes) = load("birth_test_inputs.tsv") else {
        return;
    };
    let rows = parse_tsv(&bytes, "birth_test_inputs.tsv", TsvMode::AnswersOptional).expect("test");
    assert_eq!(rows.len(), 437);
    assert!(rows.iter().all(|r| r.answer.is_none()));
    let preds = vec![String::new(); rows.len()];
    assert_eq!(evaluate_places(&rows, &preds).expect("no gold"), (0, 0));
    for r in &rows {
        vocab
            .encode(&prompt_for(&r.question))
            .expect("raw question encodes");
    }
}

#[test]
fn real_corruption_examples_should_be_well_formed() {
    let Some((text, vocab)) = wiki_vocab() else {
        return;
    };
    let ds = CharCorruptionDataset::new(&text, "wiki.txt", &vocab, 0).expect("corruption");
    let (mut masked_sum, mut len_sum, mut targets) = (0usize, 0usize, 0usize);
    for epoch in 0..3 {
        for idx in 0..ds.len() {
            let c = ds.corruption(idx, epoch).expect("corruption");
            let s = c.masked_string();
            assert!(s.len() <= 114);
            assert_eq!(s.iter().filter(|&&t| t == MASK_ID).count(), 2);
            assert!(!s.contains(&PAD_ID));
            let mut joined = c.prefix.clone();
            joined.extend(&c.masked);
            joined.extend(&c.suffix);
            assert_eq!(joined, c.truncated);
            assert!(c.truncated.len() <= 112);
            let (x, y) = ds.get(idx, epoch).expect("get");
            assert_eq!((x.len(), y.len()), (127, 127));
            targets += y.iter().filter(|&&t| t != PAD_ID).count();
            masked_sum += c.masked.len();
            len_sum += c.truncated.len();
        }
    }
    let ratio = masked_sum as f64 / len_sum as f64;
    let per_example = targets as f64 / (3 * ds.len()) as f64;
    println!("masked/len = {ratio:.4}, non-PAD targets per example = {per_example:.1}");
    assert!((ratio - 0.25).abs() < 0.01, "masked share {ratio}");
    assert!(
        (per_example - 57.9).abs() < 2.0,
        "targets per example {per_example}"
    );
}
