//! The op families, one folder each (`<family>/`), their tests in `tests/ops/<family>.rs`:
//! - `mod.rs`: the shape checks, the forward and backward on the tensors' device (a dispatch of
//!   `shaders/<family>.wgsl` on the GPU, the kernel of the same name in `cpu.rs` on the CPU), the
//!   f64 reference and the autograd glue;
//! - `cpu.rs`: the CPU backend's f32 kernels over slices (`crate::cpu` holds only the pool and the
//!   thread helpers they use);
//! - `check.rs`: the self-check on the user's device (the page's kernel-check table);

/// The line a row kernel's subgroup build starts with (`gpu::RowKernel`): browsers compile its
/// subgroup operations only after `enable subgroups;`, while naga (native, wgpu 30) refuses that
/// directive and takes them from the device's features.
#[cfg(target_arch = "wasm32")]
macro_rules! enable_subgroups {
    () => {
        "enable subgroups;\n"
    };
}
#[cfg(not(target_arch = "wasm32"))]
macro_rules! enable_subgroups {
    () => {
        ""
    };
}

pub mod adamw;
pub mod attention;
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

/// Run every family's self-check, in a fixed order. On a GPU with subgroups the row kernels
/// (layernorm, softmax, cross-entropy) run twice, with the workgroup-tree reductions and with
/// subgroup operations, their cases marked " [tree]" and " [subgroups]".
pub async fn run_checks(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    out.extend(matmul::check::check(dev).await?);
    out.extend(elementwise::check::check(dev).await?);
    out.extend(reduce::check::check(dev).await?);
    out.extend(embedding::check::check(dev).await?);
    out.extend(gather::check::check(dev).await?);
    match dev.as_gpu().filter(|g| g.has_subgroups()) {
        None => out.extend(row_checks(dev).await?),
        Some(g) => {
            let before = g.subgroups();
            for (on, mark) in [(false, " [tree]"), (true, " [subgroups]")] {
                g.set_subgroups(on);
                let rows = row_checks(dev).await;
                g.set_subgroups(before);
                out.extend(rows?.into_iter().map(|mut r| {
                    r.case.push_str(mark);
                    r
                }));
            }
        }
    }
    out.extend(dropout::check::check(dev).await?);
    out.extend(attention::check::check(dev).await?);
    out.extend(synth::check::check(dev).await?);
    out.extend(adamw::check::check(dev).await?);
    Ok(out)
}

/// The checks of the families whose kernels reduce across a row (`gpu::RowKernel`).
async fn row_checks(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = layernorm::check::check(dev).await?;
    out.extend(softmax::check::check(dev).await?);
    out.extend(cross_entropy::check::check(dev).await?);
    Ok(out)
}
