//! Fill a GPU tensor with one value (zeroing gradients and accumulators); `Tensor::fill` calls it.

use super::{grid_1d, Kernel};
use crate::error::Result;
use crate::tensor::Tensor;

const FILL: Kernel = Kernel {
    family: "fill",
    src: include_str!("../../shaders/fill.wgsl"),
    entry: "fill",
};
const WG: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    value: f32,
    _pad: [u32; 2],
}

/// Set every element of `t` to `value`.
pub(crate) fn fill(t: &Tensor, value: f32) -> Result<()> {
    let Some(gpu) = t.device().as_gpu() else {
        return t.fill(value);
    };
    let n = t.numel() as u32;
    let groups = grid_1d(
        n.div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    gpu.dispatch(
        &FILL,
        &Params {
            n,
            value,
            _pad: [0; 2],
        },
        &[t],
        groups,
    )
}
