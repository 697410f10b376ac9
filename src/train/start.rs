//! One way to start a run, for the CLI, the page and the tests: from what the user chose (a
//! `RunSpec`, the pretraining text, the finetuning questions, the vocabulary, where the weights
//! come from) to a `Session`, in the order the reference's run.py takes: the model's configuration
//! (the spec's sizes for the vocabulary, or the sizes of the model a finetune starts from, with the
//! run's dropout), checked; the hyperparameters, with run.py's `final_tokens` from the pretraining
//! corpus; the examples, refused when there are none; then `Session::start` (memory check first,
//! then the weights).

use super::session::{Begin, RunData, Session};
use super::spec::{validate_model, RunKind, RunSpec, Words};
use crate::data::{self, Vocab};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::model::GptConfig;
use std::rc::Rc;

/// What a user chose for a run. Build it, read `config` when the front end needs the model's
/// configuration early (the CLI checks it before opening a device), then `start`.
pub struct RunStart<'a> {
    pub spec: &'a RunSpec,
    /// How messages name the settings (the CLI's flags or the page's fields).
    pub words: &'a Words,
    /// The pretraining text and its name: pretraining's examples, and run.py's `final_tokens`
    /// (counted on the pretraining corpus also when finetuning).
    pub corpus: (&'a str, &'a str),
    /// The finetuning questions (a TSV's bytes) and their name; unused by a pretraining run.
    pub questions: (&'a [u8], &'a str),
    /// The vocabulary the model reads: run.py builds it from the pretraining text; a run continued
    /// from a saved state or a finetune of a loaded model takes the one kept with it.
    pub vocab: Vocab,
    /// The configuration of the model a finetune starts from, when the run keeps its sizes (the
    /// page's finetune of its current model); `None`: the spec's sizes for the vocabulary.
    pub base: Option<GptConfig>,
}

impl RunStart<'_> {
    /// The model this run trains, with the run's dropout, checked (refusals name the setting in
    /// `words`).
    pub fn config(&self) -> Result<GptConfig> {
        let cfg = match &self.base {
            Some(c) => {
                let mut c = c.clone();
                self.spec.set_dropout(&mut c);
                c
            }
            None => self.spec.model_config(self.vocab.len()),
        };
        validate_model(&cfg, self.words)?;
        Ok(cfg)
    }

    /// Start the run on `dev`. `begin` gives the weights for the checked configuration; it is
    /// called only after the memory check, so nothing is read or allocated for a run that cannot
    /// fit.
    pub fn start(
        self,
        dev: &Rc<Device>,
        begin: impl FnOnce(&GptConfig) -> Result<Begin>,
    ) -> Result<Session> {
        let cfg = self.config()?;
        let (text, text_name) = self.corpus;
        let run_data = RunData::new(self.spec, text, text_name, self.questions, &self.vocab)?;
        if run_data.is_empty() {
            return Err(Error::Msg(match self.spec.kind {
                RunKind::Finetune => format!(
                    "{} gives no training examples: as the course's NameDataset does, the text \
                     after the last newline is not a row, so a file of one row needs a final \
                     newline; end the file with a newline (or add rows)",
                    self.questions.1
                ),
                RunKind::Pretrain => format!(
                    "{text_name} gives no training examples; give a text with at least one line"
                ),
            }));
        }
        let tc = self.spec.train_config(data::documents(text));
        Session::start(dev, self.spec, &cfg, tc, run_data, self.vocab, || {
            begin(&cfg)
        })
    }
}
