//! Training: the reference's schedule and trainer, the epoch loops, greedy decoding and evaluation,
//! and the run API both front ends use: a `RunSpec` (presets, overrides, validation) and a
//! `Session` (a run driven `n` steps at a time), started one way (`RunStart`).

pub mod phases;
pub mod probe;
mod report;
pub mod run;
pub mod sample;
pub mod schedule;
pub mod section2;
pub mod session;
pub mod spec;
pub mod start;
pub mod trainer;

pub use run::{evaluate, Evaluation, Hooks, Progress};
pub use sample::{
    sample_greedy, sample_greedy_batch, sample_greedy_batch_uncached, sample_greedy_batch_until,
    sample_greedy_uncached,
};
pub use schedule::{TrainConfig, RUN_PY_DECAY_EPOCHS};
pub use session::{vocab_of_checkpoint, Begin, RunData, Session, StepParts};
pub use spec::{
    validate_model, Overrides, Refusal, RunKind, RunSpec, Setting, Words, MAX_LAYERS, MAX_WIDTH,
};
pub use start::RunStart;
pub use trainer::{MicroStep, Trainer};
