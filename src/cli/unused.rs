//! Flags a function does not read. run.py ignores them silently; here each is named on stderr
//! before the work starts (a path given to `pretrain --reading_params_path` is not loaded, and a
//! user who typed it should know), and the run goes on as run.py's would.

use super::{Cli, Function};

/// The flags set on the command line that `cli.function` does not use.
pub fn unused_flags(cli: &Cli) -> Vec<&'static str> {
    use Function::*;
    let f = cli.function;
    let training = matches!(f, Pretrain | Finetune);
    let model = !matches!(f, London | Corpus);
    let reads_model = matches!(f, Finetune | Evaluate | Probe | Convert);
    let asks = matches!(f, Evaluate | Probe | London);
    let given: [(&'static str, bool, bool); 23] = [
        ("the variant", cli.variant.is_some(), model),
        ("the corpus path", cli.pretrain_corpus_path.is_some(), model),
        (
            "--reading_params_path",
            cli.reading_params_path.is_some(),
            reads_model,
        ),
        (
            "--writing_params_path",
            cli.writing_params_path.is_some(),
            training || f == Convert,
        ),
        (
            "--finetune_corpus_path",
            cli.finetune_corpus_path.is_some(),
            f == Finetune,
        ),
        ("--eval_corpus_path", cli.eval_corpus_path.is_some(), asks),
        (
            "--outputs_path",
            cli.outputs_path.is_some(),
            matches!(f, Evaluate | London),
        ),
        (
            "--probe_corpus_path",
            cli.probe_corpus_path.is_some(),
            f == Pretrain,
        ),
        (
            "--predictions_path",
            cli.predictions_path.is_some(),
            f == Probe,
        ),
        ("--max_epochs", cli.max_epochs.is_some(), training),
        ("--batch_size", cli.batch_size.is_some(), training),
        ("--learning_rate", cli.learning_rate.is_some(), training),
        ("--lr_decay_epochs", cli.lr_decay_epochs.is_some(), training),
        ("--max_steps", cli.max_steps.is_some(), training),
        ("--resume", cli.resume.is_some(), training),
        (
            "--max_questions",
            cli.max_questions.is_some(),
            matches!(f, Evaluate | Probe),
        ),
        // --f16 elsewhere is refused (check_flags), not ignored: no note.
        ("--f16", cli.f16, true),
        ("--out_dir", cli.out_dir.is_some(), f == Corpus),
        ("--people", cli.people.is_some(), f == Corpus),
        ("--births_only", cli.births_only, f == Corpus),
        ("--birth_notes", cli.birth_notes, f == Corpus),
        (
            "--n_layer, --n_head or --n_embd",
            cli.n_layer.is_some() || cli.n_head.is_some() || cli.n_embd.is_some(),
            model,
        ),
        ("--dropout", cli.dropout.is_some(), training),
    ];
    given
        .into_iter()
        .filter(|&(_, set, used)| set && !used)
        .map(|(name, _, _)| name)
        .collect()
}

/// The note printed for `unused`, or None when every flag given is used.
pub fn note(cli: &Cli, unused: &[&str]) -> Option<String> {
    let fname = format!("{:?}", cli.function).to_lowercase();
    match unused {
        [] => None,
        [one] => Some(format!("note: {fname} does not use {one}; it is ignored")),
        many => Some(format!(
            "note: {fname} does not use {}; they are ignored",
            many.join(", ")
        )),
    }
}
