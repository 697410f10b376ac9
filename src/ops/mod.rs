//! The op families: one file each, holding the shape checks, the forward and backward on the
//! tensors' device (a dispatch of `shaders/<family>.wgsl` on the GPU, the kernel of the same name in
//! `src/cpu/<family>.rs` on the CPU), the f64 reference and the autograd glue.

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
