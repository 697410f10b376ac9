//! The benchmark workloads, shared by the native `bench` binary and the page's Benchmark card
//! (`src/web/bench.rs`), so that both time exactly the same device work: the matmul products at the
//! GPT's shapes (B=128, T=127, C=256, 8 heads of 32; `quick` divides the rows and the batches by 16)
//! and the tiny preset's whole training step (forward, backward, clip, AdamW) on ROWS x 127 tokens.
//!
//! Every timing is wall clock read from the caller's `clock` (seconds; `Instant` natively,
//! `performance.now()` in the page): one warm-up (read back or synced), then `repeats` iterations
//! recorded back to back and ended by `dev.sync().await`, divided by `repeats`.

use crate::gpu::MatmulKernel;
use crate::model::{Gpt, GptConfig, Variant};
use crate::ops::matmul::{matmul_into, Spec, View};
use crate::train::{TrainConfig, Trainer};
use crate::{Device, Result, Tensor};
use serde::Serialize;
use std::rc::Rc;

/// Sequence length of every benchmarked workload (the assignment's block size minus one).
pub const T: usize = 127;

/// One benchmarked product: the spec and the element counts of its three tensors.
pub struct Case {
    pub name: String,
    pub spec: Spec,
    pub lens: [usize; 3],
}

impl Case {
    /// Floating-point operations of one product (2·Z·M·N·K).
    pub fn flops(&self) -> f64 {
        2.0 * (self.spec.batches() * self.spec.m * self.spec.n * self.spec.k) as f64
    }
}

/// `y = x·Wᵀ` for x (M, K) and W (N, K), as `linear` does it.
pub fn linear(m: usize, k: usize, n: usize) -> Case {
    let spec = Spec {
        a: View::contiguous(m, k),
        b: View::contiguous(n, k).t(),
        c: View::contiguous(m, n),
        ..Spec::plain(m, k, n)
    };
    Case {
        name: format!("x·Wᵀ {m}x{k}x{n}"),
        spec,
        lens: [m * k, n * k, m * n],
    }
}

/// The attention's two products over (B, NH) heads, read through head views of (B, T, C)
/// q, k, v tensors (no copies): att = q·kᵀ/√HS (T×T per head) and y = att·v (T×HS per head).
pub fn attention(b: usize, nh: usize, t: usize, hs: usize) -> [Case; 2] {
    let c = nh * hs;
    let head = View {
        outer: t * c,
        inner: hs,
        row: c,
        col: 1,
    };
    let att = View {
        outer: nh * t * t,
        inner: t * t,
        row: t,
        col: 1,
    };
    let qk = Spec {
        z: (b, nh),
        m: t,
        n: t,
        k: hs,
        a: head,
        b: head.t(),
        c: att,
        alpha: 1.0 / (hs as f32).sqrt(),
    };
    let av = Spec {
        z: (b, nh),
        m: t,
        n: hs,
        k: t,
        a: att,
        b: head,
        c: head,
        alpha: 1.0,
    };
    let z = b * nh;
    [
        Case {
            name: format!("q·kᵀ {z}x({t}x{hs}x{t})"),
            spec: qk,
            lens: [b * t * c, b * t * c, z * t * t],
        },
        Case {
            name: format!("att·v {z}x({t}x{t}x{hs})"),
            spec: av,
            lens: [z * t * t, b * t * c, b * t * c],
        },
    ]
}

/// Rows (B·T) and batch count (B) of the matmul cases: the full assignment batch of 128 sequences,
/// or 8 with `quick` (rows and batches / 16, as `bench --quick`).
pub fn matmul_shape(quick: bool) -> (usize, usize) {
    let div = if quick { 16 } else { 1 };
    (128 * T / div, 128 / div)
}

/// The GPT's products: the three linear shapes (qkv-sized 256→768, MLP up 256→1024, MLP down
/// 1024→256) and the attention's two batched products.
pub fn matmul_cases(quick: bool) -> Vec<Case> {
    let (rows, batch) = matmul_shape(quick);
    let mut cases = vec![
        linear(rows, 256, 768),
        linear(rows, 256, 1024),
        linear(rows, 1024, 256),
    ];
    cases.extend(attention(batch, 8, T, 32));
    cases
}

/// One matmul case's result.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulResult {
    pub name: String,
    pub gflop: f64,
    pub ms: f64,
    pub gflops: f64,
}

/// Seconds per `matmul_into` call: one warm-up call synced, then `repeats` calls recorded together
/// and waited for with `sync`.
pub async fn time_matmul(
    dev: &Rc<Device>,
    case: &Case,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<f64> {
    let repeats = repeats.max(1);
    let fill = |n: usize, seed: usize| -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7 + seed) % 13) as f32 / 13.0 - 0.5)
            .collect()
    };
    let a = Tensor::from_f32(dev, &[case.lens[0]], &fill(case.lens[0], 1))?;
    let b = Tensor::from_f32(dev, &[case.lens[1]], &fill(case.lens[1], 2))?;
    let c = Tensor::uninit(dev, &[case.lens[2]])?;
    matmul_into(&a, &b, None, &c, &case.spec, false)?;
    dev.sync().await?;
    let t0 = clock();
    for _ in 0..repeats {
        matmul_into(&a, &b, None, &c, &case.spec, false)?;
    }
    dev.sync().await?;
    Ok((clock() - t0) / repeats as f64)
}

/// Time one case and turn it into GFLOP/s.
pub async fn bench_matmul(
    dev: &Rc<Device>,
    case: &Case,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<MatmulResult> {
    let s = time_matmul(dev, case, repeats, clock).await?;
    let f = case.flops();
    Ok(MatmulResult {
        name: case.name.clone(),
        gflop: f / 1e9,
        ms: s * 1e3,
        gflops: f / s / 1e9,
    })
}

/// The matmul kernel this device uses and what timing them found.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulChoice {
    /// The kernel's name (`MatmulKernel::name`), or "cpu backend".
    pub kernel: String,
    /// "timed" (the fastest of all, measured now), "default" (the adapter type's rule: untimed)
    /// or "cpu backend" (no GPU kernels).
    pub how: String,
    /// Every GPU kernel's name, in the order of `ms` (empty on the CPU backend).
    pub kernels: Vec<String>,
    /// Milliseconds for the quick matmul cases, once each, per kernel (as in `kernels`); empty
    /// unless timed.
    pub ms: Vec<f64>,
}

/// The kernel a device uses now, untimed.
pub fn matmul_choice(dev: &Rc<Device>) -> MatmulChoice {
    match dev.as_gpu() {
        None => MatmulChoice {
            kernel: "cpu backend".into(),
            how: "cpu backend".into(),
            kernels: vec![],
            ms: vec![],
        },
        Some(g) => MatmulChoice {
            kernel: g.matmul_kernel().name().into(),
            how: "default".into(),
            kernels: MatmulKernel::ALL.iter().map(|k| k.name().into()).collect(),
            ms: vec![],
        },
    }
}

/// Time every GPU matmul kernel on the GPT's products (the quick cases: 8 sequences of 127
/// tokens, width 256, 8 heads), `repeats` calls each after a warm-up, and keep the fastest on
/// this device. A vec4 kernel's time includes the products it leaves to the fallback kernel
/// (views it cannot read as vec4: the attention's with T = 127), as training would run them. On
/// the CPU backend there is nothing to choose.
pub async fn tune_matmul(
    dev: &Rc<Device>,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<MatmulChoice> {
    let Some(g) = dev.as_gpu() else {
        return Ok(matmul_choice(dev));
    };
    let before = g.matmul_kernel();
    let mut ms = vec![];
    for k in MatmulKernel::ALL {
        g.set_matmul_kernel(k);
        let mut total = 0.0;
        for case in matmul_cases(true) {
            match time_matmul(dev, &case, repeats, clock).await {
                Ok(s) => total += s * 1e3,
                Err(e) => {
                    g.set_matmul_kernel(before);
                    return Err(e);
                }
            }
        }
        ms.push(total);
    }
    let best = (0..ms.len())
        .min_by(|&i, &j| ms[i].total_cmp(&ms[j]))
        .unwrap_or(0);
    g.set_matmul_kernel(MatmulKernel::ALL[best]);
    Ok(MatmulChoice {
        how: "timed".into(),
        ms,
        ..matmul_choice(dev)
    })
}

/// Use the named kernel (`MatmulKernel::name`) on this device, e.g. a choice kept from an
/// earlier `tune_matmul`; an unknown name is refused, the CPU backend ignores it.
pub fn set_matmul(dev: &Rc<Device>, kernel: &str) -> Result<()> {
    let Some(k) = MatmulKernel::from_name(kernel) else {
        let names: Vec<_> = MatmulKernel::ALL.iter().map(|k| k.name()).collect();
        return Err(crate::Error::Msg(format!(
            "unknown matmul kernel '{kernel}'; choose one of {}",
            names.join(", ")
        )));
    };
    if let Some(g) = dev.as_gpu() {
        g.set_matmul_kernel(k);
    }
    Ok(())
}

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
    /// The most device memory (GPU or CPU pool) this workload's live tensors held, from building the trainer to the last
    /// step (model, gradients, AdamW moments, activations; buffer-pool bucket sizes; buffers other
    /// work already held are not counted).
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
