//! Matmul throughput at the GPT's shapes (B=128, T=127, C=256, 8 heads of 32): GFLOP/s of
//! `matmul_gpu` (wall clock over `--repeats` dispatches after a warm-up, each ended by `sync`) beside a
//! plain single-threaded f32 CPU triple loop (i-k-j order) on contiguous matrices of the same sizes.
//! `--quick` divides the row count and the batch count by 16. `--step ROWS` times the tiny preset's
//! training step instead, and `--step ROWS --profile` adds a per-kernel breakdown. `--trim ROWS`
//! times the step on real batches at full length and cut after the longest sequence. Native only.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use attnlab::ops::matmul::{matmul_gpu, Spec, View};
    use attnlab::{Gpu, Result, Tensor};
    use std::hint::black_box;
    use std::time::Instant;

    /// One benchmarked product: the spec and the element counts of its three tensors.
    struct Case {
        name: String,
        spec: Spec,
        lens: [usize; 3],
    }

    /// `y = x·Wᵀ` for x (M, K) and W (N, K), as `linear` does it.
    fn linear(m: usize, k: usize, n: usize) -> Case {
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
    fn attention(b: usize, nh: usize, t: usize, hs: usize) -> [Case; 2] {
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

    fn flops(s: &Spec) -> f64 {
        2.0 * (s.batches() * s.m * s.n * s.k) as f64
    }

    /// Seconds per `matmul_gpu` call: one warm-up call, then `repeats` calls recorded together and
    /// waited for with `sync`.
    fn time_gpu(gpu: &std::rc::Rc<Gpu>, case: &Case, repeats: usize) -> Result<f64> {
        let fill = |n: usize, seed: usize| -> Vec<f32> {
            (0..n)
                .map(|i| ((i * 7 + seed) % 13) as f32 / 13.0 - 0.5)
                .collect()
        };
        let a = Tensor::from_f32(gpu, &[case.lens[0]], &fill(case.lens[0], 1))?;
        let b = Tensor::from_f32(gpu, &[case.lens[1]], &fill(case.lens[1], 2))?;
        let c = Tensor::uninit(gpu, &[case.lens[2]])?;
        matmul_gpu(&a, &b, None, &c, &case.spec, false)?;
        pollster::block_on(gpu.sync())?;
        let t0 = Instant::now();
        for _ in 0..repeats {
            matmul_gpu(&a, &b, None, &c, &case.spec, false)?;
        }
        pollster::block_on(gpu.sync())?;
        Ok(t0.elapsed().as_secs_f64() / repeats as f64)
    }

    /// Seconds for the whole product on one CPU thread, extrapolated from `rows` of the Z·M rows:
    /// plain i-k-j loops over contiguous (M, K) and (K, N) f32 matrices, one batch after another.
    fn time_cpu(s: &Spec, rows: usize) -> f64 {
        let (m, n, k) = (s.m, s.n, s.k);
        let total_rows = s.batches() * m;
        let rows = rows.clamp(1, total_rows);
        let a: Vec<f32> = (0..m * k).map(|i| (i % 11) as f32 * 0.1).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 7) as f32 * 0.1).collect();
        let mut c = vec![0f32; m * n];
        let t0 = Instant::now();
        let mut done = 0;
        while done < rows {
            let this = (rows - done).min(m);
            c.iter_mut().for_each(|x| *x = 0.0);
            for i in 0..this {
                for kk in 0..k {
                    let aik = a[i * k + kk];
                    let (brow, crow) = (&b[kk * n..(kk + 1) * n], &mut c[i * n..(i + 1) * n]);
                    for (cj, bj) in crow.iter_mut().zip(brow) {
                        *cj += aik * bj;
                    }
                }
            }
            black_box(&mut c);
            done += this;
        }
        t0.elapsed().as_secs_f64() * total_rows as f64 / rows as f64
    }

    /// `--step ROWS`: the tiny GPT preset's whole training step (forward, backward, clip, AdamW)
    /// on ROWS sequences of 127 tokens, for both variants.
    fn time_step(gpu: &std::rc::Rc<Gpu>, rows: usize, repeats: usize, profile: bool) -> Result<()> {
        use attnlab::model::{Gpt, GptConfig, Variant};
        use attnlab::train::{TrainConfig, Trainer};
        let t = 127;
        println!("training step, tiny preset (GptConfig::tiny, vocab 65), {rows} x {t} tokens, {repeats} steps after 1 warm-up");
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let mut tr = Trainer::new(
                Gpt::new(gpu, GptConfig::tiny(variant, 65), 1)?,
                TrainConfig::pretrain(),
                0,
            )?;
            let x: Vec<u32> = (0..rows * t).map(|i| (i % 63 + 2) as u32).collect();
            tr.step(&x, &x, rows, t)?.to_vec_f32().await_blocking()?;
            let s0 = gpu.stats();
            let t0 = Instant::now();
            for _ in 0..repeats {
                tr.step(&x, &x, rows, t)?;
            }
            pollster::block_on(gpu.sync())?;
            let dt = t0.elapsed().as_secs_f64() / repeats as f64;
            let d = (gpu.stats().dispatches - s0.dispatches) / repeats as u64;
            println!(
                "{:<12} {:>9.1} ms/step {:>9.0} tokens/s {d} dispatches/step",
                variant.name(),
                dt * 1e3,
                (rows * t) as f64 / dt
            );
            if profile {
                gpu.set_profiling(true)?;
                tr.step(&x, &x, rows, t)?;
                gpu.sync().await_blocking()?;
                let rows = gpu.profile();
                gpu.set_profiling(false)?;
                let total: f64 = rows.iter().map(|r| r.2).sum();
                println!(
                    "  one step with every dispatch waited for alone: {:.1} ms",
                    total * 1e3
                );
                for (k, n, s) in rows {
                    println!(
                        "  {k:<34} {n:>4} x {:>9.2} ms = {:>5.1}%",
                        s * 1e3 / n as f64,
                        100.0 * s / total
                    );
                }
            }
        }
        Ok(())
    }

    /// `--trim ROWS`: the tiny preset's training step on real batches of the embedded corpus (the
    /// first ROWS finetuning questions, the first ROWS span-corruption examples), at the full 127
    /// columns and cut after the longest real sequence (`trim_batch`), side by side.
    fn time_trim(gpu: &std::rc::Rc<Gpu>, rows: usize, repeats: usize) -> Result<()> {
        use attnlab::data::{CharCorruptionDataset, NameDataset, Vocab};
        use attnlab::model::{Gpt, GptConfig, Variant};
        use attnlab::train::run::{default_corpus, trim_batch};
        use attnlab::train::{TrainConfig, Trainer};
        let t = 127;
        let c = default_corpus(false);
        let vocab = Vocab::from_text(&c.wiki, "wiki.txt")?;
        let names = NameDataset::new(c.train_tsv.as_bytes(), "train.tsv", &vocab)?;
        let corrupt = CharCorruptionDataset::new(&c.wiki, "wiki.txt", &vocab, 0)?;
        let mut batches = vec![];
        for (what, get) in [
            ("finetune", &(|i| names.get(i)) as &dyn Fn(usize) -> Result<(Vec<u32>, Vec<u32>)>),
            ("pretrain", &|i| corrupt.get(i, 0)),
        ] {
            let (mut x, mut y) = (vec![], vec![]);
            for i in 0..rows {
                let (a, b) = get(i)?;
                x.extend(a);
                y.extend(b);
            }
            batches.push((what, x, y));
        }
        println!("training step, tiny preset, embedded corpus, {rows} rows, {repeats} steps after 1 warm-up");
        println!("{:<12} {:<9} {:>4} {:>10} {:>10} {:>8}", "variant", "batch", "T", "full ms", "trimmed ms", "speed-up");
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            for (what, x, y) in &batches {
                let (tx, ty, tt) = trim_batch(x, y, rows, t);
                let time = |xs: &[u32], ys: &[u32], len: usize| -> Result<f64> {
                    let mut tr = Trainer::new(
                        Gpt::new(gpu, GptConfig::tiny(variant, vocab.len()), 1)?,
                        TrainConfig::finetune_scratch(),
                        0,
                    )?;
                    tr.step_counting(xs, ys, rows, len, rows * t)?.to_vec_f32().await_blocking()?;
                    let t0 = Instant::now();
                    for _ in 0..repeats {
                        tr.step_counting(xs, ys, rows, len, rows * t)?;
                    }
                    pollster::block_on(gpu.sync())?;
                    Ok(t0.elapsed().as_secs_f64() / repeats as f64)
                };
                let full = time(x, y, t)?;
                let cut = time(&tx, &ty, tt)?;
                println!(
                    "{:<12} {:<9} {:>4} {:>10.1} {:>10.1} {:>7.2}x",
                    variant.name(),
                    what,
                    tt,
                    full * 1e3,
                    cut * 1e3,
                    full / cut
                );
            }
        }
        Ok(())
    }

    trait BlockOn: std::future::Future + Sized {
        fn await_blocking(self) -> Self::Output {
            pollster::block_on(self)
        }
    }
    impl<F: std::future::Future> BlockOn for F {}

    pub fn run() -> Result<()> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "--quick");
        let repeats = match args.iter().position(|a| a == "--repeats") {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&r| r > 0)
                .ok_or_else(|| attnlab::Error::Msg("--repeats needs a positive integer".into()))?,
            None => 5,
        };
        let gpu = Gpu::new_blocking()?;
        println!("adapter: {}", gpu.describe());
        if let Some(i) = args.iter().position(|a| a == "--step") {
            let rows = args
                .get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&r| r > 0)
                .unwrap_or(8);
            return time_step(&gpu, rows, repeats, args.iter().any(|a| a == "--profile"));
        }
        if let Some(i) = args.iter().position(|a| a == "--trim") {
            let rows = args
                .get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&r| r > 0)
                .unwrap_or(8);
            return time_trim(&gpu, rows, repeats);
        }
        let div = if quick { 16 } else { 1 };
        let (rows, batch) = (128 * 127 / div, 128 / div);
        println!(
            "mode: {} (M = {rows} rows, B = {batch} sequences of T = 127), {repeats} repeats after 1 warm-up",
            if quick { "--quick, rows and batches / 16" } else { "full" }
        );
        let mut cases = vec![
            linear(rows, 256, 768),
            linear(rows, 256, 1024),
            linear(rows, 1024, 256),
        ];
        cases.extend(attention(batch, 8, 127, 32));
        // CPU rows timed per case (of Z·M); the rest is extrapolated linearly.
        let cpu_rows = if quick { 32 } else { 128 };
        println!();
        println!(
            "| product (M×K×N) | GFLOP | GPU ms | GPU GFLOP/s | CPU 1-thread GFLOP/s | GPU/CPU |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for case in &cases {
            let f = flops(&case.spec);
            let tg = time_gpu(&gpu, case, repeats)?;
            let tc = time_cpu(&case.spec, cpu_rows);
            println!(
                "| {} | {:.2} | {:.1} | {:.2} | {:.2} | {:.1}× |",
                case.name,
                f / 1e9,
                tg * 1e3,
                f / tg / 1e9,
                f / tc / 1e9,
                tc / tg
            );
        }
        println!();
        println!("CPU column: the i-k-j loop timed over the first {cpu_rows} output rows of each product (across batches for attention) and extrapolated linearly to all rows.");
        Ok(())
    }
}
