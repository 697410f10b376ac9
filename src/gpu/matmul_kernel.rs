//! Which GPU matmul kernel products use: the four kernels and their names.

/// The GPU matmul kernels (`shaders/matmul.wgsl`, `matmul_big.wgsl`, `matmul_vec4.wgsl`;
/// dispatched by `src/ops/matmul/gpu.rs`). Which is fastest depends on the device, so
/// `bench::tune_matmul` times them on it; all give the same products up to rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmulKernel {
    /// 64 x 64 tiles through workgroup memory, 128 x 128 for large products (written for GPUs).
    Tiled,
    /// A 16 x 8 block per thread, scalar reads, no workgroup memory (written for CPU adapters).
    Registers,
    /// A 4 x 4 block per thread, vec4 reads, no workgroup memory; vec4-able views only.
    Vec4x4,
    /// An 8 x 4 block per thread, vec4 reads, no workgroup memory; vec4-able views only.
    Vec8x4,
}

impl MatmulKernel {
    /// Every kernel, in the order `bench::tune_matmul` reports their times.
    pub const ALL: [MatmulKernel; 4] = [
        MatmulKernel::Tiled,
        MatmulKernel::Registers,
        MatmulKernel::Vec4x4,
        MatmulKernel::Vec8x4,
    ];

    /// The name the CLI, the page and its kept choice use.
    pub fn name(self) -> &'static str {
        match self {
            MatmulKernel::Tiled => "tiled",
            MatmulKernel::Registers => "register-blocked",
            MatmulKernel::Vec4x4 => "vec4-4x4",
            MatmulKernel::Vec8x4 => "vec4-8x4",
        }
    }

    pub fn from_name(name: &str) -> Option<MatmulKernel> {
        MatmulKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Untimed: register-blocked on CPU adapters (lavapipe, SwiftShader), where workgroup memory
    /// and barriers cost more than they save; tiled elsewhere.
    pub(super) fn default_for(software: bool) -> MatmulKernel {
        if software {
            MatmulKernel::Registers
        } else {
            MatmulKernel::Tiled
        }
    }
}
