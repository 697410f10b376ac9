//! Training: the reference's schedule and trainer, the epoch loops, greedy decoding and evaluation.

pub mod run;
pub mod sample;
pub mod schedule;
pub mod trainer;

pub use run::{evaluate, finetune, pretrain, Evaluation, Hooks, Progress};
pub use sample::{sample_greedy, sample_greedy_batch};
pub use schedule::TrainConfig;
pub use trainer::Trainer;
