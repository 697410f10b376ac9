//! Embedding lookup: ids (N) u32 and table (V, C) → out (N, C), `out[n] = table[ids[n]]`.
//! Backward scatter-adds dout into dtable, one thread per channel (race-free, deterministic); on
//! the GPU for many ids a thread per channel and chunk of ids, then the chunks summed in order.
//! Ids ≥ V read nothing (their rows are 0 and add no gradient); [`check_ids`] rejects them on the CPU.

pub(crate) mod check;
pub(crate) mod cpu;

use crate::autograd::{Tape, Var};
use crate::error::{shape_err, Error, Result};
use crate::gpu::{grid_1d, Kernel};
use crate::tensor::Tensor;

const SRC: &str = include_str!("../../../shaders/embedding.wgsl");
const FWD: Kernel = Kernel {
    family: "embedding",
    src: SRC,
    entry: "embedding",
};
const BWD: Kernel = Kernel {
    family: "embedding",
    src: SRC,
    entry: "embedding_backward",
};
const BWD_PARTIAL: Kernel = Kernel {
    family: "embedding",
    src: SRC,
    entry: "embedding_backward_partial",
};
const BWD_SUM: Kernel = Kernel {
    family: "embedding",
    src: SRC,
    entry: "embedding_backward_sum",
};
const WG: u32 = 256;
/// The GPU backward takes two passes (chunks of ids into a scratch table, then their sum) from
/// this many ids: one thread a channel walking them all alone took 1.3 ms a call in a
/// profile on an H100 80GB (results/gpu-h100/), where the two passes take about 0.3 ms.
const TWO_PASS_IDS: usize = 1024;
/// At most this many chunks, and this many scratch elements in all.
const MAX_CHUNKS: usize = 64;
const MAX_SCRATCH: usize = 1 << 24;
/// Ids a chunk takes at least (its thread also clears V scratch entries).
const MIN_CHUNK: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    v: u32,
    c: u32,
    chunk: u32,
}

fn params(ids: &[usize], table: &[usize]) -> Result<Params> {
    if ids.len() != 1 || table.len() != 2 {
        return Err(shape_err(
            "embedding",
            "ids (N) and table (V, C)",
            ids,
            table,
        ));
    }
    let big = |x: usize| {
        u32::try_from(x)
            .map_err(|_| Error::Msg(format!("embedding: size {x} does not fit in 32 bits")))
    };
    big(ids[0] * table[1])?;
    big(table[0] * table[1])?;
    Ok(Params {
        n: big(ids[0])?,
        v: big(table[0])?,
        c: big(table[1])?,
        chunk: 0,
    })
}

/// Reject ids ≥ V when the caller has them on the CPU (the kernels ignore such ids).
pub fn check_ids(ids: &[u32], v: usize) -> Result<()> {
    match ids.iter().position(|&t| t as usize >= v) {
        Some(i) => Err(Error::Msg(format!(
            "embedding: id[{i}] = {} is not below the table size {v}",
            ids[i]
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// `out[n, :] = table[ids[n], :]` (0 for ids ≥ V); out is (N, C).
pub fn embedding_into(ids: &Tensor, table: &Tensor, out: &Tensor) -> Result<()> {
    let p = params(ids.shape(), table.shape())?;
    if out.shape() != [p.n as usize, p.c as usize] {
        return Err(shape_err(
            "embedding",
            "output (N, C) for table",
            out.shape(),
            table.shape(),
        ));
    }
    let Some(gpu) = ids.device().as_gpu() else {
        let (v, c) = (p.v as usize, p.c as usize);
        cpu::embedding(&ids.u32s()?, &table.f32s()?, &mut out.f32s_mut()?, v, c);
        return Ok(());
    };
    gpu.dispatch(
        &FWD,
        &p,
        &[ids, table, out],
        grid_1d(
            (p.n * p.c).div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

/// `dtable[ids[n], :] += dout[n, :]`.
pub fn embedding_backward_into(ids: &Tensor, dout: &Tensor, dtable: &Tensor) -> Result<()> {
    let p = params(ids.shape(), dtable.shape())?;
    if dout.shape() != [p.n as usize, p.c as usize] {
        return Err(shape_err(
            "embedding backward",
            "dout (N, C) for dtable",
            dout.shape(),
            dtable.shape(),
        ));
    }
    let Some(gpu) = ids.device().as_gpu() else {
        let (v, c) = (p.v as usize, p.c as usize);
        cpu::embedding_backward(&ids.u32s()?, &dout.f32s()?, &mut dtable.f32s_mut()?, v, c);
        return Ok(());
    };
    let (n, size) = (p.n as usize, (p.v * p.c) as usize);
    let chunks = MAX_CHUNKS.min(MAX_SCRATCH / size.max(1));
    if n < TWO_PASS_IDS || chunks < 2 {
        return gpu.dispatch(
            &BWD,
            &p,
            &[ids, dout, dtable],
            grid_1d(
                p.c.div_ceil(WG),
                gpu.limits.max_compute_workgroups_per_dimension,
            ),
        );
    }
    let chunk = n.div_ceil(chunks).max(MIN_CHUNK);
    let chunks = n.div_ceil(chunk);
    let p = Params {
        chunk: chunk as u32, // <= n, which fits
        ..p
    };
    let scratch = Tensor::uninit(ids.device(), &[chunks, size])?;
    gpu.dispatch(
        &BWD_PARTIAL,
        &p,
        &[ids, dout, &scratch],
        [p.c.div_ceil(WG), chunks as u32, 1],
    )?;
    gpu.dispatch(
        &BWD_SUM,
        &p,
        &[&scratch, dtable],
        grid_1d(
            (p.v * p.c).div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// CPU reference (f64)

/// `out[n, :] = table[ids[n], :]` for a (V, C) table; rows for ids ≥ V are 0.
pub fn embedding_ref(ids: &[u32], table: &[f64], c: usize) -> Vec<f64> {
    let v = table.len() / c.max(1);
    let mut out = vec![0.0; ids.len() * c];
    for (row, &id) in out.chunks_mut(c.max(1)).zip(ids) {
        if (id as usize) < v {
            row.copy_from_slice(&table[id as usize * c..(id as usize + 1) * c]);
        }
    }
    out
}

/// `dtable[ids[n], :] += dout[n, :]`.
pub fn embedding_backward_ref(ids: &[u32], dout: &[f64], c: usize, dtable: &mut [f64]) {
    let v = dtable.len() / c.max(1);
    for (n, &id) in ids.iter().enumerate() {
        if (id as usize) < v {
            for k in 0..c {
                dtable[id as usize * c + k] += dout[n * c + k];
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// Look up rows of `table` (V, C) for `ids` (N) u32, giving (N, C).
pub fn embedding(tape: &Tape, ids: &Tensor, table: &Var) -> Result<Var> {
    let p = params(ids.shape(), table.shape())?;
    let out = Tensor::uninit(ids.device(), &[p.n as usize, p.c as usize])?;
    embedding_into(ids, table.value(), &out)?;
    let (ids, t) = (ids.clone(), table.clone());
    Ok(tape.push("embedding", &[table], out, move |out| {
        if !t.requires_grad() {
            return Ok(());
        }
        embedding_backward_into(&ids, &out.grad_or_zeros()?, &t.grad_or_zeros()?)
    }))
}
