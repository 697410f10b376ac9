//! Every op, three ways, on both backends: forward vs the f64 reference and backward vs the f64
//! reference, each on the CPU backend and on the GPU (whatever adapter wgpu finds, Mesa's lavapipe
//! in CI), and the reference's backward vs central finite differences in f64. `common::devices()`
//! gives the two devices; the few tests that are about WGSL kernels alone use `common::gpu()` and
//! say why.

mod adamw;
mod attention;
mod common;
mod cross_entropy;
mod dropout;
mod elementwise;
mod embedding;
mod gather;
mod layernorm;
mod matmul;
mod matmul_kernels;
mod reduce;
mod softmax;
mod subgroups;
mod synth;
