//! The assignment's GPT: configuration, parameters (named as PyTorch's `state_dict`) and forward.

pub mod checkpoint;
pub mod config;
pub mod decode;
pub mod file_kind;
pub mod gpt;
pub mod heads;
pub mod layout;
pub mod memory;
pub mod params;
mod pickle;
pub mod torch_params;
pub mod vit;

pub use config::{GptConfig, Variant, MAX_BLOCK_SIZE};
pub use decode::Decoder;
pub use gpt::{Gpt, Pass};
pub use layout::Layout;
