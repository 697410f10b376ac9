//! The op families, one folder each (`<family>/`):
//! - `mod.rs`: the shape checks, the forward and backward on the tensors' device (a dispatch of
//!   `shaders/<family>.wgsl` on the GPU, the kernel of the same name in `cpu.rs` on the CPU), the
//!   f64 reference and the autograd glue;
//! - `cpu.rs`: the CPU backend's f32 kernels over slices (`crate::cpu` holds only the pool and the
//!   thread helpers they use);
//! - `check.rs`: the self-check on the user's device (the page's kernel-check table);
//! - `tests.rs`: the integration tests, compiled by `tests/ops/main.rs` (not part of the library).

pub mod adamw;
pub mod checks;
pub mod cross_entropy;
pub mod dropout;
pub mod elementwise;
pub mod embedding;
pub mod gather;
pub mod layernorm;
pub mod matmul;
pub mod reduce;
pub mod softmax;
pub mod synth;

pub use checks::CheckResult;

use crate::device::Device;
use crate::error::Result;
use std::rc::Rc;

/// Run every family's self-check, in a fixed order.
pub async fn run_checks(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    out.extend(matmul::check::check(dev).await?);
    out.extend(elementwise::check::check(dev).await?);
    out.extend(reduce::check::check(dev).await?);
    out.extend(layernorm::check::check(dev).await?);
    out.extend(embedding::check::check(dev).await?);
    out.extend(gather::check::check(dev).await?);
    out.extend(softmax::check::check(dev).await?);
    out.extend(cross_entropy::check::check(dev).await?);
    out.extend(dropout::check::check(dev).await?);
    out.extend(synth::check::check(dev).await?);
    out.extend(adamw::check::check(dev).await?);
    Ok(out)
}
