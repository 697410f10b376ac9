//! Every op, three ways: GPU forward vs the CPU reference, GPU backward vs the CPU reference, and
//! the CPU backward vs central finite differences in f64. Runs on whatever adapter wgpu finds
//! (Mesa's lavapipe in CI).

mod adamw;
mod common;
mod cross_entropy;
mod dropout;
mod elementwise;
mod embedding;
mod layernorm;
mod matmul;
mod reduce;
mod softmax;
mod synth;
