//! Training: the reference's schedule and trainer, evaluation and baselines.

pub mod schedule;
pub mod trainer;

pub use schedule::TrainConfig;
pub use trainer::Trainer;
