//! What a dispatch names: a WGSL entry point (`Kernel`), a row kernel's two builds (`RowKernel`),
//! and the storage buffers it binds (`Binding`, through the `Bind` trait). `record.rs` records them.

/// One WGSL entry point: the family file it lives in and its name there.
/// Binding 0 of every entry point is `var<uniform> p: Params`; bindings 1.. are the storage
/// buffers, in the order the Rust wrapper passes them.
pub struct Kernel {
    pub family: &'static str,
    pub src: &'static str,
    pub entry: &'static str,
}

/// A row kernel (softmax, layernorm, cross-entropy) in its two builds: the family's WGSL after
/// `shaders/rows.wgsl` (reductions as workgroup-memory trees) and after `shaders/rows_subgroup.wgsl`
/// (subgroup operations; in the browser after `enable subgroups;`). `Gpu::row_kernel` picks by
/// `Gpu::subgroups`. Each build has its own family name, so each is its own shader module.
pub struct RowKernel {
    pub tree: Kernel,
    pub subgroup: Kernel,
}

impl RowKernel {
    /// `families`: the tree build's and the subgroup build's names; `srcs`: their sources.
    pub const fn new(
        families: [&'static str; 2],
        srcs: [&'static str; 2],
        entry: &'static str,
    ) -> RowKernel {
        RowKernel {
            tree: Kernel {
                family: families[0],
                src: srcs[0],
                entry,
            },
            subgroup: Kernel {
                family: families[1],
                src: srcs[1],
                entry,
            },
        }
    }
}

/// One storage buffer as a dispatch binds it.
pub struct Binding<'a> {
    pub buffer: &'a wgpu::Buffer,
    /// The pool's id for the buffer: part of the bind-group cache key.
    pub id: u64,
    /// Where the tensor starts in the buffer, in bytes (0 unless it is a view into an arena;
    /// then a multiple of 256, the alignment WebGPU allows every device to ask for).
    pub offset: u64,
    /// The tensor's bytes from `offset` (at least 4): the least the binding covers.
    pub size: u64,
    /// Whether the tensor owns its buffer: the recorder then binds the whole buffer (packed steps
    /// reuse their bind groups); a view into an arena is bound to exactly its bytes, as WebGPU
    /// refuses a written binding that overlaps another binding of the buffer in one dispatch.
    pub whole: bool,
}

/// Anything a kernel can bind at a storage slot. `Tensor` implements it (src/tensor.rs), so the
/// runtime knows nothing of the layers above it.
pub trait Bind: std::fmt::Debug {
    /// The GPU buffer behind this value, or `None` when its storage is CPU memory.
    fn gpu_binding(&self) -> Option<Binding<'_>>;
}
