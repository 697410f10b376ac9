//! Fill a GPU buffer with one value (zeroing gradients and accumulators); `Tensor::fill` calls it.

use super::{grid_1d, Bind, Gpu, Kernel};
use crate::error::Result;

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

impl Gpu {
    /// Set the first `n` elements of `t` to `value`.
    pub(crate) fn fill<B: Bind + ?Sized>(&self, t: &B, n: u32, value: f32) -> Result<()> {
        let groups = grid_1d(
            n.div_ceil(WG),
            self.limits.max_compute_workgroups_per_dimension,
        );
        self.dispatch(
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
}
