//! Matmul throughput at the GPT's shapes (B=128, T=127, C=256, 8 heads of 32): GFLOP/s of
//! `matmul_into` (wall clock over `--repeats` dispatches after a warm-up, each ended by `sync`) beside a
//! plain single-threaded f32 CPU triple loop (i-k-j order) on contiguous matrices of the same sizes.
//! `--quick` divides the row count and the batch count by 16. `--step ROWS` times the tiny preset's
//! training step instead, and `--step ROWS --profile` adds a per-kernel breakdown. `--layouts ROWS`
//! (alias `--trim`) times the step on real batches padded, trimmed and packed (`--data DIR` for
//! the course's files, `--kind pretrain|finetune`). Native only;
//! the matmul cases and the training step come from `attnlab::bench`, which the page's Benchmark
//! card (src/web/bench.rs) runs too, so both time the same work. `--device auto|gpu|cpu` picks the
//! backend as the CLI does; `--step ROWS --size assignment` times the assignment's model, and
//! `--variant vanilla|synthesizer` only one variant. `--decode [TSV]` times the evaluation's greedy
//! decoding of the TSV's first 500 questions (default: the course's birth_dev.tsv under
//! ../shared/data/cs224n-a5/, else the built-in corpus's training questions) with the assignment's
//! model, without and with the key/value cache, in one run.

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
    use attnlab::bench;
    use attnlab::ops::matmul::Spec;
    use attnlab::{Device, Result};
    use std::hint::black_box;
    use std::time::Instant;

    /// The clock the library's timings read: seconds since the first call.
    fn clock() -> impl Fn() -> f64 {
        let t0 = Instant::now();
        move || t0.elapsed().as_secs_f64()
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

    /// `--step ROWS`: the GPT's whole training step (forward, backward, clip, AdamW) at `--size`
    /// on ROWS sequences of 127 tokens, for both variants; `--profile` breaks down a step of the
    /// same model (until session 8 it profiled the tiny model whatever `--size` said).
    fn time_step(
        dev: &std::rc::Rc<Device>,
        rows: usize,
        repeats: usize,
        profile: bool,
        size: bench::StepSize,
        variants: &[attnlab::model::Variant],
    ) -> Result<()> {
        let t = bench::T;
        let clock = clock();
        let cfg = size.config(attnlab::model::Variant::Vanilla);
        println!(
            "training step, {size:?} preset ({} layers, {} heads, width {}, vocab {}), {rows} x {t} tokens, {repeats} steps after 1 warm-up",
            cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.vocab_size
        );
        for &variant in variants {
            let r = bench::bench_step_sized(dev, variant, size, rows, repeats, &clock)
                .await_blocking()?;
            println!(
                "{:<12} {:>9.1} ms/step {:>9.0} tokens/s {} dispatches/step {:>8.2} MiB peak",
                r.variant, r.ms_per_step, r.tokens_per_s, r.dispatches_per_step, r.peak_mib
            );
            if dev.as_gpu().is_some() {
                println!(
                    "  of which the host recorded for {:.1} ms/step ({:.0} µs a dispatch)",
                    r.record_ms_per_step,
                    1e3 * r.record_ms_per_step / r.dispatches_per_step.max(1) as f64
                );
            }
            if let (true, Some(g)) = (profile, dev.as_gpu()) {
                let (mut tr, x) = bench::step_setup_sized(dev, variant, size, rows)?;
                tr.step(&x, &x, rows, t)?.to_vec_f32().await_blocking()?;
                g.set_profiling(true)?;
                tr.step(&x, &x, rows, t)?;
                dev.sync().await_blocking()?;
                let rows = g.profile();
                g.set_profiling(false)?;
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

    /// `--layouts ROWS` (`--trim ROWS` is the same): the training step on real batches, laid out
    /// three ways side by side: padded to 127 columns (the reference's step), trimmed after the
    /// batch's longest row (the previous step), and packed to the rows' real tokens (what training
    /// runs now). The batches are the first `BATCHES` batches of ROWS examples in training order,
    /// span-corruption examples of `wiki.txt` (pretrain) and questions of
    /// `birth_places_train.tsv` (finetune): the course's files from `--data DIR`, else the
    /// embedded corpus. Each timing cycles through the batches; `--kind pretrain|finetune` runs one.
    fn time_layouts(
        dev: &std::rc::Rc<Device>,
        rows: usize,
        repeats: usize,
        size: bench::StepSize,
        variants: &[attnlab::model::Variant],
        data: Option<&str>,
        kinds: &[&str],
    ) -> Result<()> {
        use attnlab::data::{CharCorruptionDataset, NameDataset, Vocab};
        use attnlab::model::Gpt;
        use attnlab::train::run::{default_corpus, trim_batch};
        use attnlab::train::{TrainConfig, Trainer};
        const BATCHES: usize = 4;
        let t = 127;
        let (wiki, train) = match data {
            Some(dir) => {
                let read = |f: &str| {
                    std::fs::read_to_string(std::path::Path::new(dir).join(f))
                        .map_err(|e| attnlab::Error::Msg(format!("{dir}/{f}: {e}")))
                };
                (read("wiki.txt")?, read("birth_places_train.tsv")?)
            }
            None => {
                let c = default_corpus(false);
                (c.wiki, c.train_tsv)
            }
        };
        let vocab = Vocab::from_text(&wiki, "wiki.txt")?;
        let names = NameDataset::new(train.as_bytes(), "birth_places_train.tsv", &vocab)?;
        let corrupt = CharCorruptionDataset::new(&wiki, "wiki.txt", &vocab, 0)?;
        println!(
            "training step on real batches ({}; {size:?} size), {BATCHES} batches of {rows} rows \
             in training order, cycled for {repeats} steps after a warm-up step on each",
            data.unwrap_or("embedded corpus")
        );
        println!(
            "{:<12} {:<9} {:>6} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8}",
            "variant",
            "batch",
            "real",
            "trimT",
            "full ms",
            "trim ms",
            "packed ms",
            "pk/trim",
            "pk/full"
        );
        for &variant in variants {
            for &kind in kinds {
                let mut batches = vec![];
                let (mut real, mut trim_t) = (0usize, 0usize);
                for b in 0..BATCHES {
                    let (mut x, mut y) = (vec![], vec![]);
                    for i in b * rows..(b + 1) * rows {
                        let (a, c) = if kind == "pretrain" {
                            corrupt.get(i % corrupt.len(), 0)?
                        } else {
                            names.get(i % names.len())?
                        };
                        x.extend(a);
                        y.extend(c);
                    }
                    let lens = attnlab::model::layout::target_lengths(&y, rows, t);
                    real += lens.iter().sum::<usize>();
                    let (tx, ty, tt) = trim_batch(&x, &y, rows, t);
                    trim_t += tt;
                    batches.push((x, y, tx, ty, tt));
                }
                let time = |how: u8| -> Result<f64> {
                    let mut tr = Trainer::new(
                        Gpt::new(dev, size.config(variant), 1)?,
                        TrainConfig::finetune_scratch(),
                        0,
                    )?;
                    let mut one = |k: usize| -> Result<attnlab::Tensor> {
                        let (x, y, tx, ty, tt) = &batches[k % BATCHES];
                        match how {
                            0 => tr.step_counting(x, y, rows, t, rows * t),
                            1 => tr.step_counting(tx, ty, rows, *tt, rows * t),
                            _ => tr.step_packed(x, y, rows, t, rows * t),
                        }
                    };
                    // Warm up on every batch once, so that each batch's buffer sizes are pooled.
                    for k in 0..BATCHES {
                        one(k)?.to_vec_f32().await_blocking()?;
                    }
                    let t0 = Instant::now();
                    for k in 0..repeats {
                        one(k)?;
                    }
                    pollster::block_on(dev.sync())?;
                    Ok(t0.elapsed().as_secs_f64() / repeats as f64)
                };
                let (full, cut, packed) = (time(0)?, time(1)?, time(2)?);
                println!(
                    "{:<12} {:<9} {:>5.0}% {:>6} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>8.2}",
                    variant.name(),
                    kind,
                    100.0 * real as f64 / (BATCHES * rows * t) as f64,
                    trim_t / BATCHES,
                    full * 1e3,
                    cut * 1e3,
                    packed * 1e3,
                    packed / cut,
                    packed / full
                );
            }
        }
        Ok(())
    }

    /// `--decode [TSV]`: the first 500 questions of TSV as the evaluation's prompts, decoded by a
    /// random full-size model of each variant without and with the key/value cache.
    fn time_decode(dev: &std::rc::Rc<Device>, tsv: Option<&str>) -> Result<()> {
        use attnlab::data::{parse_tsv, prompt_for, TsvMode, Vocab};
        use attnlab::model::Variant;
        let course = "../shared/data/cs224n-a5/birth_dev.tsv";
        let path = tsv.unwrap_or(course);
        let (what, bytes) = match std::fs::read(path) {
            Ok(b) => (path.to_string(), b),
            Err(e) if tsv.is_none() => {
                println!("{course}: {e}; using the built-in corpus's training questions");
                let c = attnlab::train::run::default_corpus(false);
                ("built-in train.tsv".to_string(), c.train_tsv.into_bytes())
            }
            Err(e) => return Err(attnlab::Error::Msg(format!("cannot read {path}: {e}"))),
        };
        let rows = parse_tsv(&bytes, &what, TsvMode::AnswersOptional)?;
        // The questions' characters (⁇, which every prompt ends with, is always in a vocabulary).
        let text: String = rows.iter().map(|r| r.prompt_text()).collect();
        let vocab = Vocab::from_text(&text, &what)?;
        let prompts = rows
            .iter()
            .take(500)
            .map(|r| vocab.encode_in(&prompt_for(&r.prompt_text()), &what))
            .collect::<Result<Vec<_>>>()?;
        let vocab_size = vocab.len().max(256);
        let cfg = attnlab::model::GptConfig::assignment(Variant::Vanilla, vocab_size);
        println!(
            "greedy decoding, {} questions of {what}, {} tokens each, {} layers, {} heads, width {}, vocab {vocab_size}, random weights",
            prompts.len(),
            attnlab::train::run::EVAL_STEPS,
            cfg.n_layer,
            cfg.n_head,
            cfg.n_embd
        );
        println!(
            "{:<12} {:>12} {:>12} {:>9} {:>10}",
            "variant", "uncached s", "cached s", "speed-up", "same"
        );
        let clock = clock();
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let r =
                bench::bench_decode(dev, variant, vocab_size, &prompts, &clock).await_blocking()?;
            println!(
                "{:<12} {:>12.2} {:>12.2} {:>8.1}x {:>10}",
                r.variant,
                r.uncached_s,
                r.cached_s,
                r.uncached_s / r.cached_s,
                if r.same { "yes" } else { "NO" }
            );
        }
        Ok(())
    }

    trait BlockOn: std::future::Future + Sized {
        fn await_blocking(self) -> Self::Output {
            pollster::block_on(self)
        }
    }
    impl<F: std::future::Future> BlockOn for F {}

    const USAGE: &str = "\
usage: bench [--device auto|dev|cpu] [--repeats N] [--quick] [--tune | --matmul K] [--subgroups on|off]
             [--step ROWS [--size tiny|assignment] [--variant vanilla|synthesizer] [--profile]]
             [--trim ROWS]

With no mode flag: matmul GFLOP/s at the GPT's shapes (--quick: rows and batches / 16).
  --step ROWS   time the whole training step (tiny preset unless --size assignment)
  --profile     with --step: a per-kernel breakdown (GPU backend)
  --trim ROWS   the step on real batches, full length against cut after the longest sequence
  --repeats N   timed repeats after one warm-up (default 5)
  --device D    the backend, chosen as the CLI does (default auto)
  --info        print the adapter (name, backend, type, driver) and its limits, then stop
  --tune        time every GPU matmul kernel at the GPT's shapes, keep the fastest (also with --info)
  --matmul K    use GPU matmul kernel K (tiled, register-blocked, vec4-4x4, vec4-8x4) for what follows
  --subgroups on|off  the row kernels' subgroup builds (where the GPU has subgroups) or their
                workgroup-tree builds; default: on, except on CPU adapters
Numbers measured with it are in BENCHMARKS.md.";

    pub fn run() -> Result<()> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.iter().any(|a| a == "--help" || a == "-h") {
            println!("{USAGE}");
            return Ok(());
        }
        let quick = args.iter().any(|a| a == "--quick");
        let repeats = match args.iter().position(|a| a == "--repeats") {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&r| r > 0)
                .ok_or_else(|| attnlab::Error::Msg("--repeats needs a positive integer".into()))?,
            None => 5,
        };
        let choice = match args.iter().position(|a| a == "--device") {
            Some(i) => args
                .get(i + 1)
                .ok_or_else(|| attnlab::Error::Msg("--device needs auto, gpu or cpu".into()))?
                .parse()?,
            None => attnlab::DeviceChoice::Auto,
        };
        let dev = Device::open_blocking(choice)?;
        println!("device: {} ({})", dev.describe(), dev.reason);
        // The row kernels' reductions: the device's default, or --subgroups on|off.
        if let Some(g) = dev.as_gpu() {
            match args.iter().position(|a| a == "--subgroups") {
                None => {}
                Some(i) => match args.get(i + 1).map(String::as_str) {
                    Some("on") => g.set_subgroups(true),
                    Some("off") => g.set_subgroups(false),
                    _ => return Err(attnlab::Error::Msg("--subgroups needs on or off".into())),
                },
            }
            let how = if g.subgroups() {
                "subgroups"
            } else {
                "workgroup tree"
            };
            println!(
                "row kernels: {how} (the device has subgroups: {})",
                g.has_subgroups()
            );
        }
        // The matmul kernel: the adapter type's default, the one named, or (--tune) the fastest of
        // all, timed here.
        let forced = args.iter().position(|a| a == "--matmul");
        if let Some(i) = forced {
            let name = args.get(i + 1).map_or("", String::as_str);
            bench::set_matmul(&dev, name)?;
        }
        let m = if args.iter().any(|a| a == "--tune") {
            let t0 = std::time::Instant::now();
            let clock = move || t0.elapsed().as_secs_f64();
            pollster::block_on(bench::tune_matmul(&dev, repeats.min(3), &clock))?
        } else if forced.is_some() && dev.as_gpu().is_some() {
            bench::MatmulChoice {
                how: "--matmul".into(),
                ..bench::matmul_choice(&dev)
            }
        } else {
            bench::matmul_choice(&dev)
        };
        if m.ms.is_empty() {
            println!("matmul kernel: {} ({})", m.kernel, m.how);
        } else {
            let times: Vec<_> = (m.kernels.iter().zip(&m.ms))
                .map(|(k, ms)| format!("{k} {ms:.2} ms"))
                .collect();
            println!(
                "matmul kernel: {} (timed: {} for the quick cases)",
                m.kernel,
                times.join(", ")
            );
        }
        if args.iter().any(|a| a == "--info") {
            // The adapter and the limits the kernels were granted, then nothing else.
            match dev.as_gpu() {
                Some(g) => {
                    let a = &g.adapter;
                    println!("adapter: {}", a.name);
                    println!("backend: {}", a.backend);
                    println!("device type: {}", a.device_type);
                    println!("driver: {}", a.driver);
                    println!("software adapter: {}", g.is_software());
                    println!("limits: {:?}", g.limits);
                }
                None => println!("no GPU adapter in use: the CPU backend"),
            }
            return Ok(());
        }
        let size = match args
            .iter()
            .position(|a| a == "--size")
            .and_then(|i| args.get(i + 1))
        {
            Some(s) if s == "assignment" => bench::StepSize::Assignment,
            Some(s) if s == "tiny" => bench::StepSize::Tiny,
            None => bench::StepSize::Tiny,
            Some(s) => {
                return Err(attnlab::Error::Msg(format!(
                    "--size {s}: use tiny or assignment"
                )))
            }
        };
        use attnlab::model::Variant;
        let variants = match args
            .iter()
            .position(|a| a == "--variant")
            .and_then(|i| args.get(i + 1))
        {
            Some(v) if v == "vanilla" => vec![Variant::Vanilla],
            Some(v) if v == "synthesizer" => vec![Variant::Synthesizer],
            None => vec![Variant::Vanilla, Variant::Synthesizer],
            Some(v) => {
                return Err(attnlab::Error::Msg(format!(
                    "--variant {v}: use vanilla or synthesizer"
                )))
            }
        };
        let rows_after = |flag: &str| {
            args.iter().position(|a| a == flag).map(|i| {
                args.get(i + 1)
                    .and_then(|v| v.parse::<usize>().ok())
                    .filter(|&r| r > 0)
                    .unwrap_or(8)
            })
        };
        if let Some(rows) = rows_after("--step") {
            let profile = args.iter().any(|a| a == "--profile");
            return time_step(&dev, rows, repeats, profile, size, &variants);
        }
        if let Some(rows) = rows_after("--layouts").or(rows_after("--trim")) {
            let data = args
                .iter()
                .position(|a| a == "--data")
                .and_then(|i| args.get(i + 1))
                .map(String::as_str);
            let kinds: Vec<&str> = match args
                .iter()
                .position(|a| a == "--kind")
                .and_then(|i| args.get(i + 1))
            {
                Some(k) if k == "pretrain" || k == "finetune" => vec![k.as_str()],
                None => vec!["pretrain", "finetune"],
                Some(k) => {
                    return Err(attnlab::Error::Msg(format!(
                        "--kind {k}: use pretrain or finetune"
                    )))
                }
            };
            return time_layouts(&dev, rows, repeats, size, &variants, data, &kinds);
        }
        if let Some(i) = args.iter().position(|a| a == "--decode") {
            let tsv = args.get(i + 1).filter(|a| !a.starts_with("--"));
            return time_decode(&dev, tsv.map(|s| s.as_str()));
        }
        let (rows, batch) = bench::matmul_shape(quick);
        println!(
            "mode: {} (M = {rows} rows, B = {batch} sequences of T = 127), {repeats} repeats after 1 warm-up",
            if quick { "--quick, rows and batches / 16" } else { "full" }
        );
        let cases = bench::matmul_cases(quick);
        let clock = clock();
        // CPU rows timed per case (of Z·M); the rest is extrapolated linearly.
        let cpu_rows = if quick { 32 } else { 128 };
        println!();
        println!(
            "| product (M×K×N) | GFLOP | device ms | device GFLOP/s | naive loop 1-thread GFLOP/s | device/loop |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for case in &cases {
            let f = case.flops();
            let tg = bench::time_matmul(&dev, case, repeats, &clock).await_blocking()?;
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
        println!("Loop column: the i-k-j loop timed over the first {cpu_rows} output rows of each product (across batches for attention) and extrapolated linearly to all rows.");
        Ok(())
    }
}
