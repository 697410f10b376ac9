//! Small made-up inputs exercising every function and every error message.

use attnlab::data::rng::DataRng;
use attnlab::data::*;

use super::{assert_mentions, err_msg};

const WIKI: &str =
    "Ada Quill. Was Ada Quill born in Lima? Yes .\nBo Tarn. Tarn was born in Oslo .\n";

fn vocab() -> Vocab {
    Vocab::from_text(WIKI, "wiki.txt").expect("fixture vocab")
}

#[test]
fn vocab_should_put_pad_mask_first_then_sorted_chars() {
    let v = vocab();
    assert_eq!(v.itos[0], PAD_CHAR);
    assert_eq!(v.itos[1], MASK_CHAR);
    assert_eq!(v.itos[2], '\n');
    assert_eq!(v.itos[3], ' ');
    assert!(
        v.itos[2..].windows(2).all(|w| w[0] < w[1]),
        "sorted by code point"
    );
    let ids = v.encode("Ada Lima\n").expect("encode");
    assert_eq!(v.decode(&ids).expect("decode"), "Ada Lima\n");
    assert_eq!(v.id(PAD_CHAR), Some(PAD_ID));
    assert_eq!(v.id(MASK_CHAR), Some(MASK_ID));
    assert_eq!(
        v.len(),
        WIKI.chars()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            + 2
    );
}

#[test]
fn vocab_should_reject_pad_and_mask_in_the_text_naming_file_and_line() {
    let msg = err_msg(Vocab::from_text("ok\nbad \u{25A1} here", "w.txt"));
    assert_mentions(&msg, &["w.txt:2:5", "PAD", "U+25A1"]);
    let msg = err_msg(Vocab::from_text("a\u{2047}", "w.txt"));
    assert_mentions(&msg, &["w.txt:1:2", "MASK"]);
}

#[test]
fn encode_should_name_unknown_char_code_point_and_position() {
    let msg = err_msg(vocab().encode("Ada\nQé"));
    assert_mentions(
        &msg,
        &[
            "'é'",
            "U+00E9",
            "at line 2, column 2",
            "the vocabulary built from wiki.txt",
        ],
    );
    // One line (a question): the column alone, said once; a model's vocabulary named as such.
    let mut v = vocab();
    v.source = "the vocabulary of shipped model".into();
    let msg = err_msg(v.encode_in("QAdaé", "dev.tsv:19"));
    assert_eq!(
        msg,
        "dev.tsv:19: character 'é' (U+00E9) at column 5 is not in the vocabulary of shipped \
         model; remove it (the model cannot read it)"
    );
    let msg = err_msg(vocab().decode(&[3, 999]));
    assert_mentions(&msg, &["999", "position 1"]);
}

#[test]
fn tsv_should_parse_rows_crlf_bom_and_question_only_files() {
    let rows = parse_tsv(
        b"\xEF\xBB\xBFWhere was A born?\tLima\r\nWhere was B born?\tOslo\r\n",
        "t.tsv",
        TsvMode::RequireAnswers,
    )
    .expect("parse");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].question, "Where was A born?");
    assert_eq!(rows[0].answer.as_deref(), Some("Lima"));
    assert_eq!(rows[1].line, 2);
    let rows = parse_tsv(
        b"Where was A born?\nWhere was B born?",
        "q.tsv",
        TsvMode::AnswersOptional,
    )
    .expect("questions only");
    assert!(rows.iter().all(|r| r.answer.is_none()));
}

#[test]
fn tsv_errors_should_name_file_line_and_fix() {
    let req = TsvMode::RequireAnswers;
    let cases: &[(&[u8], TsvMode, &[&str])] = &[
        (b"", req, &["t.tsv", "empty"]),
        (b" \n\n", req, &["t.tsv", "empty"]),
        (b"Q?\tA\nno tab here\n", req, &["t.tsv:2", "no tab"]),
        // Questions only where answers are needed: said for the file, with the one that has them.
        (
            b"Where was A born?\nWhere was B born?\n",
            req,
            &["t.tsv has questions without answers", "birth_dev.tsv"],
        ),
        (
            b"Q?\tA\tB\n",
            req,
            &["t.tsv:1", "3 columns", "remove the extra tabs"],
        ),
        (b"Q?\tA\n\nQ2?\tB\n", req, &["t.tsv:2", "blank line"]),
        (b"Q?\t\n", req, &["t.tsv:1", "empty answer"]),
        (b"\tA\n", req, &["t.tsv:1", "empty question"]),
        (
            b"Q?\tA\nQ2?\n",
            TsvMode::AnswersOptional,
            &["t.tsv:2", "line 1 has an answer"],
        ),
        (
            b"Q?\tA\nQ\xFF?\tB\n",
            req,
            &["t.tsv:2:2", "invalid UTF-8 at column 2", "byte offset 6"],
        ),
        // A one-line text (a biography) given as test inputs: no line is a question.
        (
            b"Ann Vole. Ann Vole was born in Paris .\n",
            TsvMode::AnswersOptional,
            &[
                "t.tsv: none of its 1 line is a question",
                "“Ann Vole. Ann Vole was born in Paris .”",
                "wiki.txt",
            ],
        ),
        // Biographies given as the training or dev questions: said as such, not as a missing tab.
        (
            b"Ann Vole. Born in Paris .\nBo Tam. Born in Rome .\n",
            req,
            &["t.tsv: none of its 2 lines is a question", "wiki.txt"],
        ),
    ];
    for (bytes, mode, parts) in cases {
        assert_mentions(&err_msg(parse_tsv(bytes, "t.tsv", *mode)), parts);
    }
}

/// A questions file given as the pretraining text is told apart from biographies (the CLI's note).
#[test]
fn questions_files_are_told_apart_from_biographies() {
    let c = attnlab::train::run::default_corpus(false);
    assert!(looks_like_questions(&c.train_tsv));
    assert!(looks_like_questions(&c.dev_tsv));
    assert!(!looks_like_questions(&c.wiki));
    assert!(!looks_like_questions(&c.notes));
    assert!(!looks_like_questions(""));
    // The test inputs: questions without answers.
    assert!(looks_like_questions(
        "Where was A B born?\nWhere was C D born?\n"
    ));
}

#[test]
fn name_dataset_should_build_masked_targets() {
    let v = vocab();
    let ds = NameDataset::new(b"Ada?\tLima\nBo?\tOslo\n", "n.tsv", &v).expect("dataset");
    assert_eq!(ds.len(), 2);
    let (x, y) = ds.get(0).expect("row 0");
    assert_eq!((x.len(), y.len()), (127, 127));
    let s = format!("Ada?{MASK_CHAR}Lima{MASK_CHAR}");
    assert_eq!(v.decode(&x[..s.chars().count()]).expect("decode"), s);
    assert!(x[s.chars().count()..].iter().all(|&t| t == PAD_ID));
    // y: PAD for the first len(q)-1 = 3 positions, then s[4..]: ⁇ Lima ⁇, then PAD.
    assert!(y[..3].iter().all(|&t| t == PAD_ID));
    assert_eq!(
        v.decode(&y[3..9]).expect("decode"),
        format!("{MASK_CHAR}Lima{MASK_CHAR}")
    );
    assert!(y[9..].iter().all(|&t| t == PAD_ID));
    assert_mentions(&err_msg(ds.get(2)), &["n.tsv", "example 2", "2 examples"]);
}

#[test]
fn name_dataset_should_mirror_len_minus_one_and_drop_non_ascii() {
    let v = vocab();
    // No trailing newline: the reference's len(lines) - 1 never serves the last row.
    let ds = NameDataset::new(b"Ada?\tLima\nBo?\tOslo", "n.tsv", &v).expect("dataset");
    assert_eq!(ds.len(), 1);
    let ds = NameDataset::new("Ad\u{e9}a?\tL\u{ed}ma\n".as_bytes(), "n.tsv", &v).expect("ascii");
    assert_eq!(ds.rows()[0].question, "Ada?");
    assert_eq!(ds.rows()[0].answer.as_deref(), Some("Lma"));
}

#[test]
fn name_dataset_errors_should_name_file_and_line() {
    let v = vocab();
    let long = format!("Ada?\tLima\n{}?\tLima\n", "a".repeat(130));
    assert_mentions(
        &err_msg(NameDataset::new(long.as_bytes(), "n.tsv", &v)),
        &[
            "n.tsv:2",
            "block size 128",
            "shorten the question (max 122 characters",
        ],
    );
    // An answer too long for any question: the fix names the answer (no underflowed count).
    let long_answer = format!("Ada?\tLima\nBo?\t{}\n", "m".repeat(200));
    assert_mentions(
        &err_msg(NameDataset::new(long_answer.as_bytes(), "n.tsv", &v)),
        &[
            "n.tsv:2",
            "the answer alone is 200 characters; shorten it to at most 125",
        ],
    );
    assert_mentions(
        &err_msg(NameDataset::new(b"Ada?\tLima\nZed?\tLima\n", "n.tsv", &v)),
        &["n.tsv:2", "'Z'"],
    );
    assert_mentions(
        &err_msg(NameDataset::new("\u{e9}\tLima\n".as_bytes(), "n.tsv", &v)),
        &["n.tsv:1", "ASCII"],
    );
    assert_mentions(
        &err_msg(NameDataset::new(b"Ada?\n", "n.tsv", &v)),
        &["n.tsv has questions without answers"],
    );
}

#[test]
fn corruption_should_split_docs_and_be_deterministic() {
    let v = vocab();
    let ds = CharCorruptionDataset::new(WIKI, "wiki.txt", &v, 7).expect("dataset");
    assert_eq!(
        ds.len(),
        3,
        "two lines plus the empty document after the final newline"
    );
    for idx in 0..ds.len() {
        let c = ds.corruption(idx, 3).expect("corruption");
        let mut joined = c.prefix.clone();
        joined.extend(&c.masked);
        joined.extend(&c.suffix);
        assert_eq!(joined, c.truncated);
        let (x, y) = ds.get(idx, 3).expect("get");
        assert_eq!((x.len(), y.len()), (127, 127));
        assert_eq!(x[1..], y[..126]);
        assert_eq!(
            ds.get(idx, 3).expect("again"),
            (x.clone(), y),
            "deterministic"
        );
        assert_eq!(x.iter().filter(|&&t| t == MASK_ID).count(), 2);
    }
    let empty = ds.corruption(2, 0).expect("empty doc");
    assert!(empty.truncated.is_empty() && empty.masked.is_empty());
    assert_ne!(
        ds.get(0, 0).expect("e0"),
        ds.get(0, 1).expect("e1"),
        "epochs differ"
    );
    assert_mentions(&err_msg(ds.get(3, 0)), &["document 3", "3 documents"]);
    let other = CharCorruptionDataset::new("Zed\n", "z.txt", &v, 0);
    assert_mentions(&err_msg(other), &["z.txt:1", "'Z'"]);
}

#[test]
fn masked_length_should_stay_in_range_with_mean_a_quarter() {
    let mut rng = DataRng::new(1);
    assert_eq!(corruption::masked_length(&mut rng, 0), 0);
    for n in 1..=112 {
        let total: usize = (0..400)
            .map(|_| {
                let m = corruption::masked_length(&mut rng, n);
                assert!((1..=n).contains(&m), "n={n} m={m}");
                m
            })
            .sum();
        if n >= 16 && n % 2 == 0 {
            let mean = total as f64 / 400.0;
            assert!(
                (mean - n as f64 / 4.0).abs() < 0.15 * n as f64 / 4.0 + 0.5,
                "n={n} mean={mean}"
            );
        }
    }
}

#[test]
fn evaluation_helpers_should_match_the_reference() {
    let q = format!("Where?{MASK_CHAR}Lima{MASK_CHAR}{PAD_CHAR}");
    assert_eq!(prediction_from_completion(&q), "Lima");
    assert_eq!(
        prediction_from_completion(&format!("Where?{MASK_CHAR}Li")),
        "Li"
    );
    assert_eq!(prediction_from_completion("no mask"), "");
    assert_eq!(prompt_for("Where?"), format!("Where?{MASK_CHAR}"));
    let gold = parse_tsv(
        b"A?\tLondon \nB?\tLima\nC?\tLondon\n",
        "g.tsv",
        TsvMode::RequireAnswers,
    )
    .expect("gold");
    let preds = vec!["London".to_string(), "Oslo".into(), "London".into()];
    assert_eq!(evaluate_places(&gold, &preds).expect("eval"), (2, 3));
    assert_eq!(london_baseline(&gold).expect("baseline"), (2, 3));
    assert_mentions(
        &err_msg(evaluate_places(&gold, &preds[..1])),
        &["3 gold rows", "1 predictions"],
    );
    let questions = parse_tsv(b"A?\n", "q.tsv", TsvMode::AnswersOptional).expect("q");
    assert_eq!(
        evaluate_places(&questions, &["x".into()]).expect("no gold"),
        (0, 0)
    );
}

#[test]
fn format_accuracy_should_print_like_python() {
    assert_eq!(format_accuracy(25, 500), "Correct: 25.0 out of 500.0: 5.0%");
    assert_eq!(
        format_accuracy(119, 500),
        "Correct: 119.0 out of 500.0: 23.799999999999997%"
    );
    assert_eq!(
        format_accuracy(1, 3),
        "Correct: 1.0 out of 3.0: 33.33333333333333%"
    );
    assert_eq!(format_accuracy(0, 437), "Correct: 0.0 out of 437.0: 0.0%");
    assert_eq!(python_float_repr(1e-5), "1e-05");
    assert_eq!(python_float_repr(0.0001), "0.0001");
    assert_eq!(python_float_repr(1.5e16), "1.5e+16");
    assert_eq!(python_float_repr(1e16), "1e+16");
    assert_eq!(python_float_repr(123.0), "123.0");
}

/// What Ask sends for what was typed: a bare name, or "where was … born" in any case with or
/// without "?", becomes the course's "Where was NAME born?"; another question is kept as typed.
#[test]
fn ask_writes_the_question_the_way_the_course_does() {
    use attnlab::data::evaluate::question_for;
    let q = |t: &str| question_for(t).expect(t);
    assert_eq!(q("Ada Lovelace"), "Where was Ada Lovelace born?");
    assert_eq!(q("  where was ada born "), "Where was ada born?");
    assert_eq!(
        q("WHERE WAS Ada Lovelace BORN?"),
        "Where was Ada Lovelace born?"
    );
    assert_eq!(q("Where was Zoë born ?"), "Where was Zoë born?");
    assert_eq!(q("Where was Ada?"), "Where was Ada born?");
    assert_eq!(q("Who is Ada?"), "Who is Ada?");
    for bad in ["", "   ", "where was  born?", "Ada\tLovelace"] {
        assert!(question_for(bad).is_err(), "{bad:?} was accepted");
    }
}
