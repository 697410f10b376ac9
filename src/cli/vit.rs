//! `attnlab vit train|evaluate`: the Vision Transformer on the generated digits (native only).
//! Training draws fresh images every step from set `2·seed` (so it never sees an image twice) and
//! reports accuracy on the held-out set `2·seed + 1`; evaluation reads a checkpoint and measures
//! its accuracy on a held-out set, with the confusion matrix. Every user error is one message on
//! stderr and exit code 1; the checkpoint is written atomically and only after a finite run, so a
//! failed run never replaces a good file.

use super::files::write_atomic;
use attnlab::data::digits;
use attnlab::model::vit::Vit;
use attnlab::model::vit::{checkpoint, evaluate, VitConfig, VitTrainConfig, VitTrainer};
use attnlab::{Device, DeviceChoice};
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Instant;

/// The most `--steps` a run takes (the page's card runs 600; a million is days here).
const MAX_STEPS: u64 = 1_000_000;

/// The ViT of NYU's Deep Learning homework 4 on generated handwritten digits.
#[derive(Parser, Debug)]
#[command(name = "attnlab vit", bin_name = "attnlab vit")]
struct VitCli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Train a ViT on freshly generated digits, then save it and report held-out accuracy.
    Train(TrainArgs),
    /// Measure a saved ViT's accuracy and confusion matrix on a held-out generated set.
    Evaluate(EvalArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DeviceArg {
    Auto,
    Gpu,
    Cpu,
}

#[derive(Args, Debug)]
struct Common {
    /// auto (a hardware GPU, else the CPU backend), gpu or cpu.
    #[arg(long, value_enum, default_value = "auto")]
    device: DeviceArg,
    /// Data seed: training images come from set 2·seed, the held-out test set is 2·seed + 1.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Held-out images to measure accuracy on.
    #[arg(long, visible_alias = "test_size", default_value_t = 2000)]
    test_size: usize,
}

#[derive(Args, Debug)]
struct TrainArgs {
    #[command(flatten)]
    common: Common,
    /// Where to write the checkpoint (safetensors).
    #[arg(long, default_value = "vit.safetensors")]
    out: PathBuf,
    /// Optimisation steps (at most 1,000,000).
    #[arg(long, default_value_t = 1500)]
    steps: u64,
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Peak learning rate (linear warm-up over the first 5% of steps, then linear decay to 0).
    #[arg(long, default_value_t = 2e-3)]
    lr: f64,
    /// Patch side in pixels (must divide 28: 1, 2, 4, 7, 14, 28).
    #[arg(long, default_value_t = 7)]
    patch: usize,
    #[arg(long, default_value_t = 2)]
    layers: usize,
    #[arg(long, default_value_t = 4)]
    heads: usize,
    #[arg(long, default_value_t = 64)]
    width: usize,
    /// Measure accuracy on (up to) 500 held-out images every N steps (0: only at the end).
    #[arg(long, visible_alias = "eval_every", default_value_t = 250)]
    eval_every: u64,
}

#[derive(Args, Debug)]
struct EvalArgs {
    #[command(flatten)]
    common: Common,
    /// The checkpoint written by `attnlab vit train`.
    #[arg(long)]
    model: PathBuf,
}

type Res<T> = Result<T, String>;

/// Entry point; `args` are the process arguments after `attnlab` (starting with `vit`), as OS
/// strings so that a path that is not UTF-8 is an error message, not a panic.
pub fn main(args: Vec<std::ffi::OsString>) -> ExitCode {
    super::runtime_dir::for_the_gpu_probe();
    let cli = match VitCli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let _ = e.print();
            let ok = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            return if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2) // a usage error, as the GPT commands (and argparse)
            };
        }
    };
    let r = match &cli.cmd {
        Cmd::Train(a) => train(a),
        Cmd::Evaluate(a) => eval(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            tell!("error: {m}");
            ExitCode::from(1)
        }
    }
}

fn open(c: &Common) -> Res<Rc<Device>> {
    // 100,000 images of 28 × 28 f32 pixels are 314 MB; a million were 3.1 GB, allocated at once.
    if c.test_size == 0 || c.test_size > 100_000 {
        return Err(format!(
            "--test-size {} must be in 1..=100000 (each image is {} KB of pixels)",
            c.test_size,
            digits::PIXELS * 4 / 1000
        ));
    }
    let choice = match c.device {
        DeviceArg::Auto => DeviceChoice::Auto,
        DeviceArg::Gpu => DeviceChoice::Gpu,
        DeviceArg::Cpu => DeviceChoice::Cpu,
    };
    let dev = Device::open_blocking(choice).map_err(|e| e.to_string())?;
    say!("device: {} ({})", dev.describe(), dev.reason);
    Ok(dev)
}

/// The held-out set of `seed` (images, labels).
fn test_set(seed: u64, n: usize) -> (Vec<f32>, Vec<u8>) {
    digits::batch(seed.wrapping_mul(2).wrapping_add(1), 0, n)
}

fn train(a: &TrainArgs) -> Res<()> {
    let cfg = VitConfig {
        patch: a.patch,
        n_layer: a.layers,
        n_head: a.heads,
        n_embd: a.width,
        ..VitConfig::small()
    };
    cfg.validate()
        .map_err(|e| format!("{e} (from --patch, --layers, --heads or --width)"))?;
    if a.steps == 0 || a.steps > MAX_STEPS || a.batch == 0 || a.batch > 4096 {
        return Err(format!(
            "--steps must be in 1..=1000000 and --batch in 1..=4096 (got {} and {})",
            a.steps, a.batch
        ));
    }
    // Refuse sizes that would need gigabytes before allocating anything (an allocation failure
    // aborts the process instead of giving a message).
    let t = cfg.tokens();
    let scores = a.batch * cfg.n_head * t * t;
    let weights = 12 * cfg.n_embd * cfg.n_embd * cfg.n_layer;
    if scores > 1 << 27 || weights > 1 << 27 {
        return Err(format!(
            "this size needs too much memory: {scores} attention scores per layer (batch × heads × \
             tokens², tokens = {t}) and ~{weights} weights, each limit 134217728; use a larger \
             --patch, a smaller --batch, --width or --layers"
        ));
    }
    if !(a.lr.is_finite() && a.lr > 0.0 && a.lr < 1.0) {
        return Err(format!("--lr {} must be in (0, 1)", a.lr));
    }
    super::files::check_output(&a.out, "--out")?;
    let dev = open(&a.common)?;
    let tc = VitTrainConfig {
        learning_rate: a.lr,
        batch: a.batch,
        ..VitTrainConfig::default_for(a.steps)
    };
    let model = Vit::new(&dev, cfg, a.common.seed).map_err(|e| e.to_string())?;
    say!(
        "ViT: {} parameters, {} patches of {}×{} + [CLS]",
        model.num_params(),
        model.cfg.patches(),
        a.patch,
        a.patch
    );
    let mut tr = VitTrainer::new(model, tc).map_err(|e| e.to_string())?;
    let (test_x, test_y) = test_set(a.common.seed, a.common.test_size);
    let peek = test_x.len().min(500 * digits::PIXELS);
    let train_set = a.common.seed.wrapping_mul(2);
    let pb = ProgressBar::new(a.steps);
    if let Ok(s) = ProgressStyle::with_template(
        "{bar:30} {pos}/{len} steps [{elapsed_precise}<{eta_precise}] {msg}",
    ) {
        pb.set_style(s.progress_chars("=> "));
    }
    let logs = !std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut last_loss = f32::NAN;
    for s in 0..a.steps {
        let (x, y) = digits::batch(train_set, s * a.batch as u64, a.batch);
        let loss = tr.step(&x, &y).map_err(|e| e.to_string())?;
        // The loss is read every 25 steps, at the end, and where a held-out line reports it.
        let eval_now = a.eval_every > 0 && (s + 1) % a.eval_every == 0 && s + 1 < a.steps;
        let read_now = (s + 1) % 25 == 0 || s + 1 == a.steps || eval_now;
        if read_now {
            last_loss = loss.read().map_err(|e| e.to_string())?[0];
            if !last_loss.is_finite() {
                return Err(format!(
                    "the loss became {last_loss} at step {}; nothing was saved (try a lower --lr)",
                    s + 1
                ));
            }
            pb.set_message(format!("loss {last_loss:.4}"));
        }
        pb.inc(1);
        if eval_now {
            let (acc, _) = pollster::block_on(evaluate(
                &tr.model,
                &test_x[..peek],
                &test_y[..peek / digits::PIXELS],
            ))
            .map_err(|e| e.to_string())?;
            let line = format!(
                "step {}: loss {last_loss:.4}, held-out accuracy {:.1}% (of {} images)",
                s + 1,
                100.0 * acc,
                peek / digits::PIXELS
            );
            if logs {
                tell!("{line}");
            } else {
                pb.println(line);
            }
        }
    }
    pb.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    let (acc, confusion) =
        pollster::block_on(evaluate(&tr.model, &test_x, &test_y)).map_err(|e| e.to_string())?;
    say!(
        "trained {} steps of {} images in {secs:.1} s; final loss {last_loss:.4}",
        a.steps,
        a.batch
    );
    report(acc, &confusion, test_y.len());
    let meta = vec![
        ("steps".to_string(), a.steps.to_string()),
        ("batch".to_string(), a.batch.to_string()),
        ("seed".to_string(), a.common.seed.to_string()),
        ("test_accuracy".to_string(), format!("{acc:.4}")),
        ("test_size".to_string(), test_y.len().to_string()),
        ("train_seconds".to_string(), format!("{secs:.1}")),
    ];
    let bytes =
        pollster::block_on(checkpoint::to_bytes(&tr.model, &meta)).map_err(|e| e.to_string())?;
    write_atomic(&a.out, &bytes)?;
    say!("saved {}", a.out.display());
    Ok(())
}

fn eval(a: &EvalArgs) -> Res<()> {
    let what = a.model.display().to_string();
    // The CLI's reader: a regular file of at most 2 GiB (a FIFO or /dev/zero is refused).
    let bytes = super::files::read(&a.model)
        .map_err(|e| format!("{e} (give the file written by `attnlab vit train --out`)"))?
        .bytes;
    let dev = open(&a.common)?;
    let (model, meta) = checkpoint::from_bytes(&dev, &bytes, &what).map_err(|e| e.to_string())?;
    let c = &model.cfg;
    if (c.image, c.classes) != (digits::SIDE, digits::CLASSES) {
        return Err(format!(
            "{what} reads {0}×{0} images into {1} classes, but the digits are {2}×{2} with {3}; \
             give a checkpoint written by `attnlab vit train`",
            c.image,
            c.classes,
            digits::SIDE,
            digits::CLASSES
        ));
    }
    if let Some(s) = meta.get("seed").and_then(|s| s.parse::<u64>().ok()) {
        if s != a.common.seed {
            say!(
                "note: trained with --seed {s}; evaluating on the held-out set of --seed {}",
                a.common.seed
            );
        }
    }
    let (x, y) = test_set(a.common.seed, a.common.test_size);
    let start = Instant::now();
    let (acc, confusion) =
        pollster::block_on(evaluate(&model, &x, &y)).map_err(|e| e.to_string())?;
    say!(
        "evaluated {} images in {:.1} s",
        y.len(),
        start.elapsed().as_secs_f64()
    );
    report(acc, &confusion, y.len());
    Ok(())
}

fn report(acc: f64, confusion: &[Vec<u32>], n: usize) {
    say!("held-out accuracy: {:.2}% of {n}", 100.0 * acc);
    say!("confusion (rows: true digit, columns: predicted):");
    say_part!("     ");
    for c in 0..confusion.len() {
        say_part!("{c:>5}");
    }
    say!();
    for (t, row) in confusion.iter().enumerate() {
        say_part!("{t:>5}");
        for v in row {
            say_part!("{v:>5}");
        }
        say!();
    }
}
