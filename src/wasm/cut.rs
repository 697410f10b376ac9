//! How a run's steps are cut for the page (wasm32 only): the rows of each engine call, and how many
//! engines may share a step. Functions of the model, batch and device kind only, never of a timing
//! (ARCHITECTURE.md decision 14); `train.rs` reports them when a run starts and `steps.rs` cuts the
//! steps by them.

use crate::device::Device;
use crate::model::GptConfig;

/// About how many floating-point operations (as `micro_rows` counts them) one engine call of a
/// step should do: under a second on the page's CPU backend (one core, SIMD128; a packed row
/// holds about half the tokens counted, so this is 4 rows of the assignment's model, 0.3–0.6 s
/// measured in BENCHMARKS.md) and on a software WebGPU adapter (one row of the assignment's
/// model is the least a part can be). Fewer rows per call would cost the GEMMs their size.
const CALL_FLOPS_CPU: f64 = 1e10;
const CALL_FLOPS_SOFTWARE_GPU: f64 = 3e8;

/// Rows per engine call of a step of `batch` rows on `dev`, or None when the whole step is one
/// call (a hardware GPU, or a step within the budget). A function of the model, batch and device
/// kind only, never of a timing: the same run is cut the same way every time, which keeps it
/// deterministic and its resume exact.
pub(crate) fn micro_rows(
    dev: &Device,
    cfg: &GptConfig,
    params: usize,
    batch: usize,
) -> Option<usize> {
    let budget = if dev.cpu_threads().is_some() {
        CALL_FLOPS_CPU
    } else if dev.is_software_gpu() {
        CALL_FLOPS_SOFTWARE_GPU
    } else {
        return None;
    };
    // Forward and backward: about 6 flops per parameter per token, over a whole block per row.
    let per_row = 6.0 * params as f64 * (cfg.block_size - 1) as f64;
    let rows = ((budget / per_row) as usize).max(1);
    (rows < batch).then_some(rows)
}

/// At most how many engines share a step of `batch` rows: each must get at least
/// `ENGINE_FLOPS` of it (about 0.1 s of the page's CPU backend), or the exchange of weights and
/// gradients and the extra calls cost more than the engine brings (the tiny model's 8-row step,
/// 30 ms on one engine, took 38 ms on two: BENCHMARKS.md). Like `micro_rows`, a function of the
/// run alone, so the same run on the same N is cut the same way.
pub(crate) fn max_engines(cfg: &GptConfig, params: usize, batch: usize) -> usize {
    let step = 6.0 * params as f64 * (cfg.block_size - 1) as f64 * batch as f64;
    ((step / ENGINE_FLOPS) as usize).clamp(1, batch.max(1))
}

const ENGINE_FLOPS: f64 = 1e9;
