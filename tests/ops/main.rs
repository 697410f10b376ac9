//! Every op, three ways, on both backends: forward vs the f64 reference and backward vs the f64
//! reference, each on the CPU backend and on the GPU (whatever adapter wgpu finds, Mesa's lavapipe
//! in CI), and the reference's backward vs central finite differences in f64. `common::devices()`
//! gives the two devices; the few tests that are about WGSL kernels alone use `common::gpu()` and
//! say why.

#[path = "../../src/ops/adamw/tests.rs"]
mod adamw;
mod common;
#[path = "../../src/ops/cross_entropy/tests.rs"]
mod cross_entropy;
#[path = "../../src/ops/dropout/tests.rs"]
mod dropout;
#[path = "../../src/ops/elementwise/tests.rs"]
mod elementwise;
#[path = "../../src/ops/embedding/tests.rs"]
mod embedding;
#[path = "../../src/ops/gather/tests.rs"]
mod gather;
#[path = "../../src/ops/layernorm/tests.rs"]
mod layernorm;
#[path = "../../src/ops/matmul/tests.rs"]
mod matmul;
#[path = "../../src/ops/matmul/kernel_tests.rs"]
mod matmul_kernels;
#[path = "../../src/ops/reduce/tests.rs"]
mod reduce;
#[path = "../../src/ops/softmax/tests.rs"]
mod softmax;
mod subgroups;
#[path = "../../src/ops/synth/tests.rs"]
mod synth;
