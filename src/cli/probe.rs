//! `attnlab probe VARIANT CORPUS --reading_params_path PRETRAINED --eval_corpus_path TSV
//! [--predictions_path FINETUNED_PREDICTIONS]`: what the pretrained model recalls (see
//! `attnlab::train::probe`), and with the finetuned model's predictions the table of stored ×
//! answered.

use super::files::{need, read, Input};
use super::model::load;
use super::{Cli, Res};
use attnlab::data::{parse_tsv, CharCorruptionDataset, TsvMode, Vocab};
use attnlab::model::GptConfig;
use attnlab::train::probe;
use attnlab::Device;
use std::rc::Rc;

pub fn probe(
    cli: &Cli,
    dev: &Rc<Device>,
    cfg: &GptConfig,
    vocab: &Vocab,
    corpus: &str,
    tsv: Option<Input>,
) -> Res<()> {
    let tsv = tsv.ok_or("probe needs --eval_corpus_path PATH (questions with their answers)")?;
    let mut rows =
        parse_tsv(&tsv.bytes, &tsv.name, TsvMode::RequireAnswers).map_err(|e| e.to_string())?;
    let in_file = rows.len();
    if let Some(n) = cli.max_questions {
        rows.truncate(n);
    }
    // Read the predictions before the work, so a bad file is refused at once.
    let predictions = match &cli.predictions_path {
        Some(p) => {
            let f = read(p)?;
            let text =
                attnlab::data::text_from_bytes(&f.bytes, &f.name).map_err(|e| e.to_string())?;
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            // One place a line: a tab means questions (the file of questions given by mistake),
            // whose every line would count as a wrong answer.
            if let Some(i) = lines.iter().position(|l| l.contains('\t')) {
                return Err(format!(
                    "{}:{}: a tab in a predictions file, which has one place a line: is it a \
                     questions file? give the predictions `evaluate --outputs_path` wrote",
                    f.name,
                    i + 1
                ));
            }
            if lines.len() != rows.len() {
                let asked = if rows.len() < in_file {
                    format!(
                        "--max_questions {} asks the first {} of the {in_file} questions of {}",
                        rows.len(),
                        rows.len(),
                        tsv.name
                    )
                } else {
                    format!("{} has {} questions", tsv.name, rows.len())
                };
                return Err(format!(
                    "{} has {} lines but {asked}; give the predictions `evaluate \
                     --outputs_path` wrote for the same questions",
                    f.name,
                    lines.len(),
                ));
            }
            Some(lines)
        }
        None => None,
    };
    let path = need(&cli.reading_params_path, "reading_params_path", "probe")?;
    let model = load(cli, dev, path, cfg, vocab)?;
    let docs = CharCorruptionDataset::new(corpus, "corpus", vocab, 0).map_err(|e| e.to_string())?;
    let report = pollster::block_on(probe::probe(&model, docs.docs(), vocab, &rows))
        .map_err(|e| e.to_string())?;
    say!("{}", report.line());
    if let Some(pred) = predictions {
        let t = probe::ProbeReport::table(&report, &rows, &pred);
        say!(
            "stored in pretraining (probe) x answered after finetuning, {} people:",
            report.asked
        );
        say!("                      answered right  answered wrong");
        say!("  recalled            {:>14}  {:>14}", t[0][0], t[0][1]);
        say!("  not recalled        {:>14}  {:>14}", t[1][0], t[1][1]);
    }
    Ok(())
}
