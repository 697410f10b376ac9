//! Training: the reference's schedule and trainer, evaluation and baselines.

pub mod schedule;

pub use schedule::TrainConfig;
