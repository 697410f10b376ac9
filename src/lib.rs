//! attnlab: the CS224N transformer assignment on WebGPU and the CPU. WGSL kernels and their f32 CPU twins under
//! a small reverse-mode autograd, compiled natively (tests, benchmarks, CLI) and to wasm32 (the
//! page). The modules form one-way layers: storage → gpu, cpu → device → tensor → autograd → ops →
//! model → train → front ends (ARCHITECTURE.md).

pub mod autograd;
pub mod bench;
pub mod cpu;
pub mod data;
pub mod demos;
pub mod device;
pub mod error;
pub mod gpu;
pub mod model;
pub mod ops;
#[cfg(not(target_arch = "wasm32"))]
pub mod say;
pub mod storage;
pub mod tensor;
pub mod train;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use device::{Backend, Device, DeviceChoice};
pub use error::{Error, Result};
pub use gpu::Gpu;
pub use tensor::Tensor;
