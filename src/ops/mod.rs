//! The op families: one file each, holding the CPU reference, the GPU forward and backward, and the
//! autograd glue. The WGSL lives in `shaders/<family>.wgsl`.

pub mod fill;
pub mod matmul;
