//! The op families: one file each, holding the CPU reference, the GPU forward and backward, and the
//! autograd glue. The WGSL lives in `shaders/<family>.wgsl`.

pub mod adamw;
pub mod cross_entropy;
pub mod dropout;
pub mod elementwise;
pub mod embedding;
pub mod layernorm;
pub mod matmul;
pub mod reduce;
pub mod softmax;
pub mod synth;
