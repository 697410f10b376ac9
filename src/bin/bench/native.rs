//! The benchmark's modes, natively: argument parsing, the matmul cases and the training step; the
//! real batches' layouts (`layouts.rs`) and greedy decoding (`decode.rs`) in their own files.

mod decode;
mod layouts;

use attnlab::bench;
use attnlab::ops::matmul::Spec;
use attnlab::{Device, Result};
use std::hint::black_box;
use std::time::Instant;

/// The clock the library's timings read: seconds since the first call.
pub(crate) fn clock() -> impl Fn() -> f64 {
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

/// What `--attention` asked for: the vanilla model's attention as the fused kernels, as the
/// composed ops, or (`both`, with `--step`) each in turn on the same device.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AttentionChoice {
    Fused,
    Composed,
    Both,
}

impl AttentionChoice {
    /// The settings of `Device::set_fused_attention` to time, in order.
    fn modes(self) -> &'static [bool] {
        match self {
            AttentionChoice::Fused => &[true],
            AttentionChoice::Composed => &[false],
            AttentionChoice::Both => &[true, false],
        }
    }
}

/// The vanilla model's attention path on `dev` for heads of `hs` now, in words.
fn attention_path(dev: &Device, hs: usize) -> &'static str {
    if attnlab::ops::attention::fuses(dev, hs) {
        "fused"
    } else {
        "composed"
    }
}

/// `--step ROWS`: the GPT's whole training step (forward, backward, clip, AdamW) at `--size`
/// on ROWS sequences of 127 tokens, for both variants, the vanilla one with each attention path
/// `attention` names (the synthesizer has its own scores: timed once); `--profile` breaks down a
/// step of the same model (the `--size` one).
#[allow(clippy::too_many_arguments)]
fn time_step(
    dev: &std::rc::Rc<Device>,
    rows: usize,
    repeats: usize,
    profile: bool,
    size: bench::StepSize,
    variants: &[attnlab::model::Variant],
    attention: AttentionChoice,
) -> Result<()> {
    use attnlab::model::Variant;
    let t = bench::T;
    let clock = clock();
    let cfg = size.config(Variant::Vanilla);
    let hs = cfg.n_embd / cfg.n_head.max(1);
    // Each setting with the path it gives here; one where both give the same (the CPU backend,
    // heads over the kernels' 64).
    let mut modes: Vec<(bool, &str)> = Vec::new();
    for &on in attention.modes() {
        dev.set_fused_attention(on);
        let path = attention_path(dev, hs);
        if modes.iter().all(|m| m.1 != path) {
            modes.push((on, path));
        }
    }
    let paths: Vec<&str> = modes.iter().map(|m| m.1).collect();
    say!(
        "training step, {size:?} preset ({} layers, {} heads, width {}, vocab {}), {rows} x {t} \
         tokens, {repeats} steps after 1 warm-up; vanilla attention: {} (head size {hs})",
        cfg.n_layer,
        cfg.n_head,
        cfg.n_embd,
        cfg.vocab_size,
        paths.join(", then ")
    );
    for &variant in variants {
        let modes = match variant {
            Variant::Vanilla => &modes[..],
            Variant::Synthesizer => &modes[..1],
        };
        let mut ms = Vec::new();
        for &(on, path) in modes {
            dev.set_fused_attention(on);
            let r = bench::bench_step_sized(dev, variant, size, rows, repeats, &clock)
                .await_blocking()?;
            let path = match variant {
                Variant::Vanilla => format!("attention {path}"),
                Variant::Synthesizer => "synthesizer scores".into(),
            };
            say!(
                "{:<12} {:>9.1} ms/step {:>9.0} tokens/s {} dispatches/step {:>8.2} MiB peak, {path}",
                r.variant,
                r.ms_per_step,
                r.tokens_per_s,
                r.dispatches_per_step,
                r.peak_mib
            );
            ms.push(r.ms_per_step);
            // Only a device that records dispatches to run later (a GPU) has a recording time of
            // its own; on the CPU backend the ops run as they are called.
            if r.dispatches_per_step > 0 {
                say!(
                    "  of which the host recorded for {:.1} ms/step ({:.0} µs a dispatch)",
                    r.record_ms_per_step,
                    1e3 * r.record_ms_per_step / r.dispatches_per_step.max(1) as f64
                );
            }
        }
        if let [fused, composed] = ms[..] {
            say!(
                "  composed / fused: {:.2}x the time a step",
                composed / fused
            );
        }
        // The profile is of the first path named.
        dev.set_fused_attention(modes[0].0);
        if profile {
            let (mut tr, x) = bench::step_setup_sized(dev, variant, size, rows)?;
            tr.step(&x, &x, rows, t)?.to_vec_f32().await_blocking()?;
            if !dev.set_profiling(true)? {
                say!("  --profile: the CPU backend has no per-kernel profile");
                continue;
            }
            tr.step(&x, &x, rows, t)?;
            dev.sync().await_blocking()?;
            let rows = dev.profile();
            dev.set_profiling(false)?;
            let total: f64 = rows.iter().map(|r| r.2).sum();
            say!(
                "  one step with every dispatch waited for alone: {:.1} ms",
                total * 1e3
            );
            for (k, n, s) in rows {
                say!(
                    "  {k:<34} {n:>4} x {:>9.2} ms = {:>5.1}%",
                    s * 1e3 / n as f64,
                    100.0 * s / total
                );
            }
        }
    }
    Ok(())
}

pub(crate) trait BlockOn: std::future::Future + Sized {
    fn await_blocking(self) -> Self::Output {
        pollster::block_on(self)
    }
}
impl<F: std::future::Future> BlockOn for F {}

const USAGE: &str = "\
usage: bench [--device auto|gpu|cpu] [--repeats N] [--quick] [--tune | --matmul K] [--subgroups on|off]
         [--attention fused|composed|both]
         [--step ROWS [--size tiny|assignment] [--variant vanilla|synthesizer] [--profile]]
         [--layouts ROWS (alias --trim) [--data DIR] [--kind pretrain|finetune]] [--decode [TSV]]

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
  --attention fused|composed|both  the vanilla model's attention on a GPU: the fused kernels (default,
            head size <= 64) or the composed ops (matmul, causal_softmax, dropout, matmul); both:
            with --step, each in turn and their ratio (the CPU backend always composes)
Numbers measured with it are in BENCHMARKS.md.";

/// Flags that take a value, flags whose value may be left out, and switches.
const VALUED: [&str; 9] = [
    "--device",
    "--attention",
    "--repeats",
    "--subgroups",
    "--matmul",
    "--size",
    "--variant",
    "--data",
    "--kind",
];
const OPTIONAL: [&str; 4] = ["--step", "--layouts", "--trim", "--decode"];
const SWITCHES: [&str; 5] = ["--quick", "--tune", "--info", "--profile", "--help"];
/// The most rows a timed step takes (BENCHMARKS.md uses 8–128; the memory check of the step
/// itself refuses what the device cannot hold).
const MAX_ROWS: usize = 4096;

/// Refuse an unknown flag, a stray word and a ROWS that is not a whole number in 1..=MAX_ROWS,
/// before anything is opened or timed.
fn check_args(args: &[String]) -> Result<()> {
    let bad = |m: String| Err(attnlab::Error::Msg(format!("{m}\n{USAGE}")));
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let next = args.get(i + 1).filter(|v| !v.starts_with("--"));
        if VALUED.contains(&a) {
            if next.is_none() {
                return bad(format!("{a} needs a value"));
            }
            i += 2;
        } else if OPTIONAL.contains(&a) {
            if let (Some(v), true) = (next, a != "--decode") {
                match v.parse::<usize>() {
                    Ok(r) if (1..=MAX_ROWS).contains(&r) => {}
                    _ => {
                        return bad(format!(
                            "{a} {v}: give ROWS, a whole number in 1..={MAX_ROWS}"
                        ))
                    }
                }
            }
            i += 1 + usize::from(next.is_some());
        } else if SWITCHES.contains(&a) || a == "-h" {
            i += 1;
        } else {
            return bad(format!("unknown argument {a}"));
        }
    }
    Ok(())
}

pub fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        say!("{USAGE}");
        return Ok(());
    }
    check_args(&args)?;
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
    // The vanilla model's attention: --attention fused|composed|both (both: --step only).
    let attention = match args
        .iter()
        .position(|a| a == "--attention")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
    {
        None | Some("fused") => AttentionChoice::Fused,
        Some("composed") => AttentionChoice::Composed,
        Some("both") if args.iter().any(|a| a == "--step") => AttentionChoice::Both,
        Some("both") => {
            return Err(attnlab::Error::Msg(
                "--attention both times the step with each path: give it with --step ROWS, or \
                 use --attention fused or composed"
                    .into(),
            ))
        }
        Some(v) => {
            return Err(attnlab::Error::Msg(format!(
                "--attention {v}: use fused, composed or both"
            )))
        }
    };
    let dev = Device::open_blocking(choice)?;
    say!("device: {} ({})", dev.describe(), dev.reason);
    // The row kernels' reductions: the device's default, or --subgroups on|off.
    if let Some(i) = args.iter().position(|a| a == "--subgroups") {
        match args.get(i + 1).map(String::as_str) {
            Some("on") => dev.set_row_subgroups(true),
            Some("off") => dev.set_row_subgroups(false),
            _ => return Err(attnlab::Error::Msg("--subgroups needs on or off".into())),
        }
    }
    if let Some((on, has)) = dev.row_subgroups() {
        let how = if on { "subgroups" } else { "workgroup tree" };
        say!("row kernels: {how} (the device has subgroups: {has})");
    }
    // Whether this device has the fused kernels at all (the GPU backend), then the setting asked.
    dev.set_fused_attention(true);
    let can_fuse = attnlab::ops::attention::fuses(&dev, attnlab::ops::attention::HS_MAX);
    dev.set_fused_attention(attention != AttentionChoice::Composed);
    say!(
        "attention: {}",
        match (can_fuse, attention) {
            (false, _) => "composed ops (the CPU backend has no fused kernels)",
            (true, AttentionChoice::Fused) => "fused kernels where the head size is <= 64",
            (true, AttentionChoice::Composed) =>
                "composed ops (matmul, causal_softmax, dropout, matmul)",
            (true, AttentionChoice::Both) =>
                "fused kernels, then the composed ops, for each step timed",
        }
    );
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
    } else if forced.is_some() && attnlab::ops::matmul::kernel(&dev).is_some() {
        bench::MatmulChoice {
            how: "--matmul".into(),
            ..bench::matmul_choice(&dev)
        }
    } else {
        bench::matmul_choice(&dev)
    };
    if m.ms.is_empty() {
        say!("matmul kernel: {} ({})", m.kernel, m.how);
    } else {
        let times: Vec<_> = (m.kernels.iter().zip(&m.ms))
            .map(|(k, ms)| format!("{k} {ms:.2} ms"))
            .collect();
        say!(
            "matmul kernel: {} (timed: {} for the quick cases)",
            m.kernel,
            times.join(", ")
        );
    }
    if args.iter().any(|a| a == "--info") {
        // The adapter and the limits the kernels were granted, then nothing else.
        for line in dev.adapter_lines() {
            say!("{line}");
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
    // ROWS after a flag, 8 when none follows (check_args refused anything else).
    let rows_after = |flag: &str| {
        args.iter().position(|a| a == flag).map(|i| {
            args.get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(8)
        })
    };
    if let Some(rows) = rows_after("--step") {
        let profile = args.iter().any(|a| a == "--profile");
        return time_step(&dev, rows, repeats, profile, size, &variants, attention);
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
        return layouts::time_layouts(&dev, rows, repeats, size, &variants, data, &kinds);
    }
    if let Some(i) = args.iter().position(|a| a == "--decode") {
        let tsv = args.get(i + 1).filter(|a| !a.starts_with("--"));
        return decode::time_decode(&dev, tsv.map(|s| s.as_str()));
    }
    let (rows, batch) = bench::matmul_shape(quick);
    say!(
        "mode: {} (M = {rows} rows, B = {batch} sequences of T = 127), {repeats} repeats after 1 warm-up",
        if quick { "--quick, rows and batches / 16" } else { "full" }
    );
    let cases = bench::matmul_cases(quick);
    let clock = clock();
    // CPU rows timed per case (of Z·M); the rest is extrapolated linearly.
    let cpu_rows = if quick { 32 } else { 128 };
    say!();
    say!(
        "| product (M×K×N) | GFLOP | device ms | device GFLOP/s | naive loop 1-thread GFLOP/s | device/loop |"
    );
    say!("|---|---:|---:|---:|---:|---:|");
    for case in &cases {
        let f = case.flops();
        let tg = bench::time_matmul(&dev, case, repeats, &clock).await_blocking()?;
        let tc = time_cpu(&case.spec, cpu_rows);
        say!(
            "| {} | {:.2} | {:.1} | {:.2} | {:.2} | {:.1}× |",
            case.name,
            f / 1e9,
            tg * 1e3,
            f / tg / 1e9,
            f / tc / 1e9,
            tc / tg
        );
    }
    say!();
    say!(
        "Loop column: the i-k-j loop timed over the first {cpu_rows} output rows of each product \
         (across batches for attention) and extrapolated linearly to all rows."
    );
    Ok(())
}
