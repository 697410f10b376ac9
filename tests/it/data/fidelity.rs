//! Details where the reference's Python behaviour is easy to miss: text-mode newlines, the newline a
//! question-only line keeps, and `final_tokens` computed from the corpus.

use attnlab::data::{parse_tsv_str, prompt_for, CharCorruptionDataset, TsvMode, Vocab};
use attnlab::train::TrainConfig;

#[test]
fn a_corpus_with_windows_line_ends_reads_as_python_text_mode_does() {
    let unix = "Ada was born in Oslo.\nBo was born in Rome.\n";
    let windows = unix.replace('\n', "\r\n");
    let (vu, vw) = (
        Vocab::from_text(unix, "wiki.txt").unwrap(),
        Vocab::from_text(&windows, "wiki.txt").unwrap(),
    );
    assert_eq!(vu.len(), vw.len(), "\\r must not become a symbol");
    assert_eq!(vw.id('\r'), None);
    let du = CharCorruptionDataset::new(unix, "wiki.txt", &vu, 0).unwrap();
    let dw = CharCorruptionDataset::new(&windows, "wiki.txt", &vw, 0).unwrap();
    assert_eq!(du.docs(), dw.docs());
    // A lone \r is a line end in Python's text mode too.
    let mac = unix.replace('\n', "\r");
    let dm = CharCorruptionDataset::new(&mac, "wiki.txt", &vu, 0).unwrap();
    assert_eq!(du.docs(), dm.docs());
}

#[test]
fn a_question_only_line_keeps_its_newline_as_split_tab_does() {
    let rows = parse_tsv_str(
        "Where was Ada born?\nWhere was Bo born?",
        "birth_test_inputs.tsv",
        TsvMode::AnswersOptional,
    )
    .unwrap();
    // The first line ends with '\n' in the file, the last one does not.
    assert_eq!(rows[0].prompt_text(), "Where was Ada born?\n");
    assert_eq!(rows[1].prompt_text(), "Where was Bo born?");
    assert_eq!(
        prompt_for(&rows[0].prompt_text()),
        "Where was Ada born?\n\u{2047}"
    );
    // With an answer column the tab cuts the newline off, as split('\t')[0] does.
    let gold = parse_tsv_str(
        "Where was Ada born?\tOslo\nWhere was Bo born?\tRome\n",
        "birth_dev.tsv",
        TsvMode::AnswersOptional,
    )
    .unwrap();
    assert_eq!(gold[0].prompt_text(), "Where was Ada born?");
}

#[test]
fn final_tokens_follow_the_pretraining_corpus() {
    assert_eq!(
        TrainConfig::pretrain().final_tokens,
        200.0 * 2938.0 * 128.0,
        "wiki.txt's 2938 lines"
    );
    let c = TrainConfig::finetune_scratch().with_corpus_docs(271);
    assert_eq!(c.final_tokens, 200.0 * 271.0 * 128.0);
}
