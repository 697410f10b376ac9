//! The benchmark workloads, shared by the native `bench` binary and the page's Benchmark card
//! (`src/wasm/bench.rs`), so that both time exactly the same device work: the matmul products at the
//! GPT's shapes (B=128, T=127, C=256, 8 heads of 32; `quick` divides the rows and the batches by 16)
//! and the tiny preset's whole training step (forward, backward, clip, AdamW) on ROWS x 127 tokens.
//!
//! Every timing is wall clock read from the caller's `clock` (seconds; `Instant` natively,
//! `performance.now()` in the page): one warm-up (read back or synced), then `repeats` iterations
//! recorded back to back and ended by `dev.sync().await`, divided by `repeats`.
//!
//! The matmul cases, their timing and the GPU kernel choice are in `matmul.rs`; here the training
//! step, the decoding benchmark and the whole run the page's card starts.

mod matmul;

use crate::model::{Gpt, GptConfig, Variant};
use crate::train::{TrainConfig, Trainer};
use crate::{Device, Result};
use serde::Serialize;
use std::rc::Rc;

pub use matmul::{
    attention, bench_matmul, linear, matmul_cases, matmul_choice, matmul_shape, set_matmul,
    time_matmul, time_matmul_or_once, tune_matmul, Case, MatmulChoice, MatmulResult, T,
};

/// One variant's training-step result.
#[derive(Clone, Debug, Serialize)]
pub struct StepResult {
    pub variant: String,
    pub rows: usize,
    pub t: usize,
    pub ms_per_step: f64,
    pub tokens_per_s: f64,
    pub dispatches_per_step: u64,
    /// Of `ms_per_step`, the host's time recording the step (the steps are recorded back to back
    /// and then waited for; on the GPU backend a step's work is submitted when the next uploads its
    /// batch, so the device runs one step while the host records the next). On the CPU backend
    /// the ops run as they are recorded, so this is the whole step.
    pub record_ms_per_step: f64,
    /// The most device memory (GPU or CPU pool) this workload's live tensors held, from building
    /// the trainer to the last step (model, gradients, AdamW moments, activations; buffer-pool
    /// bucket sizes; buffers other work already held are not counted).
    pub peak_mib: f64,
}

/// The model a step benchmark trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepSize {
    /// `GptConfig::tiny` (2 layers, 4 heads, width 64), vocab 65.
    Tiny,
    /// `GptConfig::assignment` (4 layers, 8 heads, width 256), vocab 256 as on wiki.txt.
    Assignment,
}

impl StepSize {
    pub fn config(self, variant: Variant) -> GptConfig {
        match self {
            StepSize::Tiny => GptConfig::tiny(variant, 65),
            StepSize::Assignment => GptConfig::assignment(variant, 256),
        }
    }
}

/// The tiny preset's trainer (`GptConfig::tiny`, vocab 65, `TrainConfig::pretrain()`, seed 1) and
/// its fixed batch: x = y = (i % 63 + 2) over `rows` x 127 tokens.
pub fn step_setup(dev: &Rc<Device>, variant: Variant, rows: usize) -> Result<(Trainer, Vec<u32>)> {
    step_setup_sized(dev, variant, StepSize::Tiny, rows)
}

/// [`step_setup`] for either model size (dropout on, as in the assignment).
pub fn step_setup_sized(
    dev: &Rc<Device>,
    variant: Variant,
    size: StepSize,
    rows: usize,
) -> Result<(Trainer, Vec<u32>)> {
    let tr = Trainer::new(
        Gpt::new(dev, size.config(variant), 1)?,
        TrainConfig::pretrain(),
        0,
    )?;
    let x: Vec<u32> = (0..rows * T).map(|i| (i % 63 + 2) as u32).collect();
    Ok((tr, x))
}

/// The tiny preset's whole training step on `rows` x 127 tokens: one warm-up step read back, then
/// `repeats` steps ended by `sync`.
pub async fn bench_step(
    dev: &Rc<Device>,
    variant: Variant,
    rows: usize,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<StepResult> {
    bench_step_sized(dev, variant, StepSize::Tiny, rows, repeats, clock).await
}

/// [`bench_step`] for either model size.
pub async fn bench_step_sized(
    dev: &Rc<Device>,
    variant: Variant,
    size: StepSize,
    rows: usize,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<StepResult> {
    let repeats = repeats.max(1);
    let rows = rows.max(1);
    dev.reset_peak_memory();
    let base = dev.stats().bytes_in_use; // what other work (the page's models, demos) holds
    let (mut tr, x) = step_setup_sized(dev, variant, size, rows)?;
    tr.step(&x, &x, rows, T)?.to_vec_f32().await?;
    let s0 = dev.stats();
    let t0 = clock();
    for _ in 0..repeats {
        tr.step(&x, &x, rows, T)?;
    }
    let recorded = (clock() - t0) / repeats as f64;
    dev.sync().await?;
    let dt = (clock() - t0) / repeats as f64;
    let s1 = dev.stats();
    let d = (s1.dispatches - s0.dispatches) / repeats as u64;
    Ok(StepResult {
        variant: variant.name().to_string(),
        rows,
        t: T,
        ms_per_step: dt * 1e3,
        tokens_per_s: (rows * T) as f64 / dt,
        dispatches_per_step: d,
        record_ms_per_step: recorded * 1e3,
        peak_mib: (s1.peak_bytes_in_use - base) as f64 / (1024.0 * 1024.0),
    })
}

/// Everything one benchmark run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub adapter: String,
    pub quick: bool,
    pub rows: usize,
    pub repeats: usize,
    pub matmul: Vec<MatmulResult>,
    pub steps: Vec<StepResult>,
    /// Wall-clock seconds of the whole run, warm-ups and set-up included.
    pub seconds: f64,
}

/// The matmul cases (`quick` or full), then the training step for both variants at `rows` x 127.
/// `progress(what)` is called before each part starts.
pub async fn run_all(
    dev: &Rc<Device>,
    rows: usize,
    repeats: usize,
    quick: bool,
    clock: &dyn Fn() -> f64,
    progress: &mut dyn FnMut(&str),
) -> Result<Report> {
    let start = clock();
    let mut matmul = vec![];
    for case in matmul_cases(quick) {
        progress(&format!("matmul {}", case.name));
        matmul.push(bench_matmul(dev, &case, repeats, clock).await?);
    }
    let mut steps = vec![];
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        progress(&format!("training step, {} ({rows} x {T})", variant.name()));
        steps.push(bench_step(dev, variant, rows, repeats, clock).await?);
    }
    Ok(Report {
        adapter: dev.describe(),
        quick,
        rows,
        repeats,
        matmul,
        steps,
        seconds: clock() - start,
    })
}

/// Greedy decoding of a set of questions, timed with and without the key/value cache.
#[derive(Clone, Debug, Serialize)]
pub struct DecodeResult {
    pub variant: String,
    pub questions: usize,
    /// Seconds for all questions on today's uncached path (the whole context re-run per step).
    pub uncached_s: f64,
    /// Seconds for all questions with the key/value cache.
    pub cached_s: f64,
    /// Whether both paths decoded exactly the same tokens.
    pub same: bool,
}

/// The evaluation's decoding (`run::EVAL_STEPS` greedy tokens after each prompt) for `prompts`
/// with a full-size model (`GptConfig::assignment`, random weights, seed 1) of `vocab_size`
/// tokens: one warm-up question on each path, then all prompts uncached, then all cached.
pub async fn bench_decode(
    dev: &Rc<Device>,
    variant: Variant,
    vocab_size: usize,
    prompts: &[Vec<u32>],
    clock: &dyn Fn() -> f64,
) -> Result<DecodeResult> {
    use crate::train::{run::EVAL_STEPS, sample_greedy_batch, sample_greedy_batch_uncached};
    let model = Gpt::new(dev, GptConfig::assignment(variant, vocab_size), 1)?;
    let warm = &prompts[..prompts.len().min(1)];
    sample_greedy_batch_uncached(&model, warm, EVAL_STEPS, &mut |_, _| {}).await?;
    sample_greedy_batch(&model, warm, EVAL_STEPS, &mut |_, _| {}).await?;
    let t0 = clock();
    let old = sample_greedy_batch_uncached(&model, prompts, EVAL_STEPS, &mut |_, _| {}).await?;
    let t1 = clock();
    let new = sample_greedy_batch(&model, prompts, EVAL_STEPS, &mut |_, _| {}).await?;
    let t2 = clock();
    Ok(DecodeResult {
        variant: variant.name().to_string(),
        questions: prompts.len(),
        uncached_s: t1 - t0,
        cached_s: t2 - t1,
        same: old == new,
    })
}
