//! What the section 2 demos keep in the engine's state (`State::s2`): plain data, so that
//! `engine.rs` holds it without depending on the demos' code (`section2.rs` reads and fills it).

use crate::data::Vocab;
use crate::model::Gpt;
use crate::train::section2::Scored;
use std::rc::{Rc, Weak};

/// The people the demos ask about: a pretraining text, its finetuning questions and its dev
/// questions, with their file names. `id` tells two sources apart in the caches below.
pub(crate) struct Source {
    pub(crate) id: u32,
    /// The built-in corpus (matched by `reads_builtin`); otherwise the page's data, matched by
    /// `vocab`, the vocabulary of its pretraining text.
    pub(crate) builtin: bool,
    pub(crate) vocab: Option<Vocab>,
    pub(crate) wiki_name: String,
    pub(crate) wiki: String,
    pub(crate) train_name: String,
    pub(crate) train: String,
    pub(crate) dev_name: String,
    pub(crate) dev: String,
}

/// What the section 2 demos keep in the engine's state besides their models: the texts they ask
/// about and their caches.
#[derive(Default)]
pub(crate) struct S2State {
    pub(crate) builtin: Option<Rc<Source>>,
    /// The page's data (`s2_set_data`); None while it is the built-in corpus.
    pub(crate) page_data: Option<Rc<Source>>,
    /// The last few models' predictions (`Engine::predicted`).
    pub(crate) predicted: Vec<Predicted>,
    /// The invented names' answers of the last `s2_unseen` call (`unseen.rs`).
    pub(crate) invented: Option<InventedAnswers>,
}

/// A model's predictions for the first `people` dev people of a text, kept so that S2a asked
/// again (a pretrained-only model loaded for the probe) decodes nothing twice; a `Weak` to the
/// model, so one since replaced or dropped never matches. The last four are kept.
pub(crate) struct Predicted {
    pub(crate) model: Weak<Gpt>,
    pub(crate) source: u32,
    pub(crate) people: usize,
    pub(crate) answers: Vec<String>,
}

/// The invented names' answers of the last `s2_unseen` call, so that a typed name is asked alone:
/// valid for the same model (a `Weak` to it: a model since replaced or dropped never matches), the
/// same (seed, count) and the same text.
pub(crate) struct InventedAnswers {
    pub(crate) model: Weak<Gpt>,
    /// (seed, count, the text's id).
    pub(crate) key: (u32, u32, u32),
    pub(crate) answers: Vec<Scored>,
}
