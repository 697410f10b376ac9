//! An evaluation with a model whose vocabulary lacks a character of some questions (the page's
//! shipped models on the course's files): those questions are skipped and named with their line
//! and character, their predictions are empty (wrong), and the other questions get exactly the
//! predictions they get alone.

use attnlab::data::{parse_tsv_str, TsvMode, Vocab};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::run::{predict, predict_known, skipped_line};
use attnlab::{Device, DeviceChoice};

#[test]
fn questions_with_unknown_characters_are_skipped_and_named() {
    let dev = Device::open_blocking(DeviceChoice::Cpu).expect("cpu");
    let wiki = "Ann Vole. Ann Vole was born in Paris .\nBo Wu. Bo Wu was born in Oslo .\nWhere was he born? Lima.\n";
    let vocab = Vocab::from_text(wiki, "wiki.txt").expect("vocab");
    let tsv = "Where was Ann Vole born?\tParis\n\
               Where was Xavier born?\tLima\n\
               Where was Bo Wu born?\tOslo\n\
               Where was Åsa born?\tUmeå\n\
               Where was Zoë O'Hara born?\tRome\n";
    let rows = parse_tsv_str(tsv, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    let model = Gpt::new(&dev, GptConfig::tiny(Variant::Vanilla, vocab.len()), 1).expect("model");
    let (preds, skipped) = pollster::block_on(predict_known(
        &model,
        &vocab,
        &rows,
        "dev.tsv",
        &mut |_, _| {},
    ))
    .expect("evaluation");
    assert_eq!(
        skipped
            .iter()
            .map(|s| (s.line, s.col, s.ch, s.more.clone()))
            .collect::<Vec<_>>(),
        vec![
            (2, 11, 'X', vec![(13, 'v')]),
            (4, 11, 'Å', vec![]),
            (5, 11, 'Z', vec![(13, 'ë'), (16, '\''), (17, 'H')])
        ]
    );
    assert_eq!((preds[1].as_str(), preds[3].as_str()), ("", ""));
    let known = [rows[0].clone(), rows[2].clone()];
    let alone = pollster::block_on(predict(&model, &vocab, &known, "dev.tsv", &mut |_, _| {}))
        .expect("predict");
    assert_eq!((&preds[0], &preds[2]), (&alone[0], &alone[1]));
    let line = skipped_line("dev.tsv", &skipped, true);
    assert_eq!(
        line,
        "3 questions were not asked because the model's vocabulary lacks 'X' (first at dev.tsv \
         line 2, column 11), 'v' (first at dev.tsv line 2, column 13), 'Å' (U+00C5, first at \
         dev.tsv line 4, column 11), 'Z' (first at dev.tsv line 5, column 11), 'ë' (U+00EB, \
         first at dev.tsv line 5, column 13) and 2 more characters: \"'\" (line 5), 'H' (line 5); \
         they count as wrong"
    );
    // Every missing character of a line is named (only the first was), the apostrophe plainly.
    assert_eq!(
        skipped_line("dev.tsv", &skipped[2..], true),
        "1 question was not asked because the model's vocabulary lacks 'Z' (first at dev.tsv \
         line 5, column 11), 'ë' (U+00EB, first at dev.tsv line 5, column 13), \"'\" (first at \
         dev.tsv line 5, column 16) and 'H' (first at dev.tsv line 5, column 17); it counts as \
         wrong"
    );
    // A file without answers scores nothing: the skipped questions' lines are left empty.
    let unscored = skipped_line("test.tsv", &skipped, false);
    assert!(
        unscored.ends_with("; their prediction lines are left empty"),
        "{unscored}"
    );
    // Without the skip, the first unknown character is an error naming the file and line.
    let err = pollster::block_on(predict(&model, &vocab, &rows, "dev.tsv", &mut |_, _| {}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("dev.tsv:2"), "{err}");
}

/// Questions longer than the model's context are answered from their last characters, as the
/// reference's sampling crops them, and the report says how many and where the first is.
#[test]
fn questions_longer_than_the_context_are_named() {
    let long = format!("Where was {} born?\tParis\n", "Ann ".repeat(40));
    let tsv = format!("Where was Bo Wu born?\tOslo\n{long}{long}");
    let rows = parse_tsv_str(&tsv, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    assert_eq!(
        attnlab::train::run::cropped_line("dev.tsv", &rows, 127),
        "2 questions are longer than the 127 characters the model reads at a time (first at \
         dev.tsv line 2): it read only the last 127 of each, as the course's run.py does"
    );
    assert_eq!(
        attnlab::train::run::cropped_line("dev.tsv", &rows[..1], 127),
        ""
    );
}
