//! The Vision Transformer of NYU's Deep Learning homework 4 (CSCI-GA 2572), for the generated
//! digits: sizes and parameters (`config`), the forward (`model`), training, prediction and
//! evaluation (`train`), safetensors checkpoints (`checkpoint`). It runs on both backends through
//! the same ops as the GPT; its attention is the unmasked variant of the softmax.

pub mod checkpoint;
pub mod config;
pub mod explain;
pub mod model;
pub mod train;

pub use config::{patchify, VitConfig};
pub use model::{Output, Vit};
pub use train::{evaluate, predict, Prediction, VitTrainConfig, VitTrainer};
