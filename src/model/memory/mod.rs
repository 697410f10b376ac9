//! How much memory a training run needs, estimated before anything is allocated, so that a model or
//! batch that cannot fit is refused with the estimate and the limit instead of failing half-way (in
//! the browser, running out of wasm32 memory is an `unreachable` trap that kills the page).
//!
//! The estimate is conservative: weights, their gradients and the two AdamW moments (4 floats per
//! parameter), and one step's activations, counted per layer as B·T·(22·C) floats for the
//! LayerNorm, projection, MLP, dropout and residual outputs plus 4·B·NH·T² for the attention
//! scores, probabilities and their dropout, taken 5/4 times for the backward pass, plus three
//! B·T·V for the logits, the cross-entropy's probabilities and their gradient. Measured on the CPU
//! backend's pool (peak bytes of live tensors in one whole step), it is 1.2-1.5x the real peak for
//! widths 64-512, batches 4-32 and sequences of 31 and 127 tokens (the test checks 1-2x). Where the
//! attention op runs fused (`attention::fuses`: the vanilla model on a hardware GPU, HS ≤ 64) a layer keeps
//! no T² tensor: the attention output and its row statistics (B·T·(C + 2·NH)) instead
//! ([`estimate_training_on`]).

use super::config::GptConfig;
use super::config::Variant;
use super::params;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::attention;

/// The memory the whole wasm32 module may use for a run on the CPU backend: half of the 4 GiB
/// address space, leaving room for the page's own data, the estimate's slack and fragmentation.
pub const WASM_BUDGET_BYTES: u64 = 2 << 30;

/// The parts of one training step's memory, in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    pub params: u64,
    /// The weights (4 bytes per parameter).
    pub weights: u64,
    /// Gradients and the two AdamW moments (12 bytes per parameter).
    pub optimizer: u64,
    /// One step's forward values and their gradients.
    pub activations: u64,
    /// The training state's bytes (weights and both AdamW moments, 12 per parameter).
    pub state_bytes: u64,
    /// Host memory that saving the run holds beside the live tensors: in wasm32 the state's bytes;
    /// natively three times them (the last verified state the CLI keeps until the next one, that
    /// one's tensors read back, and its serialized bytes).
    pub saved_state: u64,
    /// The largest single tensor, its name, and whether it grows with the batch (an activation).
    pub largest_tensor: u64,
    pub largest_name: String,
    pub largest_per_batch: bool,
    /// Batch rows and sequence length the estimate is for.
    pub batch: usize,
    pub t: usize,
    /// "a vanilla model of 2 layers × width 64 (123,456 parameters)".
    pub what: String,
}

impl MemoryEstimate {
    /// Weights, optimizer state and activations: what the device holds during a step.
    pub fn step_total(&self) -> u64 {
        self.weights + self.optimizer + self.activations
    }

    /// The parts in words, for messages.
    pub fn breakdown(&self) -> String {
        format!(
            "{} of weights, {} of gradients and AdamW moments, {} of activations at batch {} × {} tokens",
            fmt_bytes(self.weights),
            fmt_bytes(self.optimizer),
            fmt_bytes(self.activations),
            self.batch,
            self.t
        )
    }
}

/// Estimate the memory of training `cfg` on batches of `batch` sequences of `t` tokens with the
/// attention scores kept (B, NH, T, T): the CPU backend's and the synthesizer's, and an upper bound
/// on any device.
pub fn estimate_training(cfg: &GptConfig, batch: usize, t: usize) -> MemoryEstimate {
    estimate(cfg, batch, t, true)
}

/// [`estimate_training`] for `dev`: without the attention scores where the attention op runs fused
/// there (the vanilla model on a hardware GPU, `attention::fuses`).
pub fn estimate_training_on(
    dev: &Device,
    cfg: &GptConfig,
    batch: usize,
    t: usize,
) -> MemoryEstimate {
    estimate(cfg, batch, t, keeps_scores(dev, cfg))
}

/// Whether a training step of `cfg` on `dev` holds (B, NH, T, T) attention tensors.
pub fn keeps_scores(dev: &Device, cfg: &GptConfig) -> bool {
    cfg.variant == Variant::Synthesizer || !attention::fuses(dev, cfg.n_embd / cfg.n_head.max(1))
}

fn estimate(cfg: &GptConfig, batch: usize, t: usize, scores_kept: bool) -> MemoryEstimate {
    let f = 4u64; // bytes per float
    let (b, t64) = (batch as u64, t as u64);
    let (c, v, nh, l) = (
        cfg.n_embd as u64,
        cfg.vocab_size as u64,
        cfg.n_head as u64,
        cfg.n_layer as u64,
    );
    // Counted in u64: in wasm32 a usize sum overflows for the largest models the form allows.
    let p: u64 = params::layout(cfg)
        .iter()
        .map(|(_, s, _)| s.iter().map(|&d| d as u64).product::<u64>())
        .sum();
    let n = b.saturating_mul(t64); // rows of every (B·T, ·) activation
    let nc = n.saturating_mul(c);
    let scores = b.saturating_mul(nh).saturating_mul(t64).saturating_mul(t64);
    // The fused op keeps its output (B·T, C) and row statistics (B·T, NH, 2) instead of the scores,
    // probabilities and their dropout (and the backward makes no T² gradients).
    let per_layer = if scores_kept {
        nc.saturating_mul(22)
            .saturating_add(scores.saturating_mul(4))
    } else {
        nc.saturating_mul(23)
            .saturating_add(n.saturating_mul(nh).saturating_mul(2))
    };
    let forward = l
        .saturating_mul(per_layer)
        .saturating_add(nc.saturating_mul(6)) // embeddings, their sum and dropout, ln_f
        .saturating_add(n.saturating_mul(2)); // token ids and targets

    // The forward count runs ~2x above the measured peak of the forward values alone, and the
    // backward frees as it goes; 5/4 of it covers the measured peak of a whole step (see the test).
    let activations = (forward.saturating_mul(5) / 4)
        .saturating_add(n.saturating_mul(v).saturating_mul(3))
        .saturating_mul(f);
    let candidates = [
        (
            c.saturating_mul(c).saturating_mul(4),
            format!("the MLP weight blocks.0.mlp.0.weight ({} × {})", 4 * c, c),
            false,
        ),
        (
            v.saturating_mul(c),
            format!("the token embedding tok_emb.weight ({v} × {c})"),
            false,
        ),
        (
            (cfg.block_size as u64).saturating_mul(c),
            format!("the position embedding pos_emb ({} × {c})", cfg.block_size),
            false,
        ),
        (
            nc.saturating_mul(4),
            format!("the MLP activation ({n} × {})", 4 * c),
            true,
        ),
        (n.saturating_mul(v), format!("the logits ({n} × {v})"), true),
    ];
    let scores_tensor = (
        scores,
        format!("the attention scores ({b} × {nh} × {t64} × {t64})"),
        true,
    );
    let (largest, name, per_batch) = candidates
        .into_iter()
        .chain(scores_kept.then_some(scores_tensor))
        .max_by_key(|(e, _, _)| *e)
        .expect("the list is not empty");
    MemoryEstimate {
        params: p,
        weights: p.saturating_mul(f),
        optimizer: p.saturating_mul(3 * f),
        activations,
        state_bytes: p.saturating_mul(3 * f),
        saved_state: p
            .saturating_mul(3 * f)
            .saturating_mul(if cfg!(target_arch = "wasm32") { 1 } else { 3 }),
        largest_tensor: largest.saturating_mul(f),
        largest_name: name,
        largest_per_batch: per_batch,
        batch,
        t,
        what: format!(
            "a {} model of {} layer{} × width {} with {} heads ({} parameters)",
            cfg.variant.name(),
            cfg.n_layer,
            if cfg.n_layer == 1 { "" } else { "s" },
            cfg.n_embd,
            cfg.n_head,
            group_thousands(p)
        ),
    }
}

/// What a device can hold, for [`check_fits`].
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLimit {
    /// The largest tensor and the name of that limit.
    pub max_tensor: u64,
    pub tensor_limit: String,
    /// Bytes the whole step may use on the device, when there is a known budget, with words that
    /// follow "more than" in a message and give the number ("the 2 GiB the CPU backend may use …").
    pub device_total: Option<(u64, String)>,
    /// Bytes of host memory for saving the run's state (the wasm32 module's memory in the
    /// browser), when limited, with words as for `device_total`.
    pub host_total: Option<(u64, String)>,
}

impl MemoryLimit {
    /// The limits of `dev`: its largest tensor everywhere; in the browser also the wasm32 budget
    /// ([`WASM_BUDGET_BYTES`], less what live tensors already hold on the CPU backend), which on
    /// the CPU backend holds the whole step and on WebGPU the saved training state.
    pub fn of_device(dev: &Device) -> MemoryLimit {
        let mut lim = MemoryLimit {
            max_tensor: dev.max_tensor_bytes(),
            tensor_limit: format!("the device's {}", dev.tensor_limit_name()),
            device_total: None,
            host_total: None,
        };
        #[cfg(not(target_arch = "wasm32"))]
        if dev.tensors_in_host_memory() {
            // Natively the CPU backend's tensors live in the machine's memory: what is available
            // now (Linux; elsewhere there is no budget, only the per-tensor limit). The save is
            // counted with the step (`host_total` left unset: the device is the host).
            if let Some(avail) = available_ram() {
                lim.device_total = Some((avail, ram_words(avail)));
            }
        }
        // On a GPU the host still holds the save.
        #[cfg(not(target_arch = "wasm32"))]
        if !dev.tensors_in_host_memory() {
            lim.host_total = available_ram().map(|avail| (avail, ram_words(avail)));
        }
        if cfg!(target_arch = "wasm32") {
            if dev.tensors_in_host_memory() {
                let in_use = dev.stats().bytes_in_use;
                let left = WASM_BUDGET_BYTES.saturating_sub(in_use);
                lim.device_total = Some((
                    left,
                    format!(
                        "the {} the CPU backend may use in this browser (half of wasm32's 4 GiB{})",
                        fmt_bytes(left),
                        if in_use > 0 {
                            format!(", less {} held by the loaded models", fmt_bytes(in_use))
                        } else {
                            String::new()
                        }
                    ),
                ));
            } else {
                lim.host_total = Some((
                    WASM_BUDGET_BYTES,
                    format!(
                        "the {} the page may use to save the run (half of wasm32's 4 GiB)",
                        fmt_bytes(WASM_BUDGET_BYTES)
                    ),
                ));
            }
        }
        lim
    }
}

/// "the 6 GiB of memory this process may still use (…)", for messages.
#[cfg(not(target_arch = "wasm32"))]
pub fn ram_words(avail: u64) -> String {
    format!(
        "the {} of memory this process may still use (the machine's free memory, its cgroup's \
         memory.max and ulimit -v)",
        fmt_bytes(avail)
    )
}

/// The memory this process may still take, in bytes (Linux only): the machine's `MemAvailable`,
/// lowered to what the process's cgroup (v2) leaves under its `memory.max` (its usage less the page
/// cache) and to what its address
/// space limit (`ulimit -v`) leaves beyond its current size. Past any of them an allocation aborts
/// the process, so a run refused here with the estimate is the better end.
#[cfg(not(target_arch = "wasm32"))]
pub fn available_ram() -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    // The number after `key` on its line of `text`, e.g. "MemAvailable:  123 kB" → 123.
    let field = |text: &str, key: &str, nth: usize| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].split_whitespace().nth(nth)?.parse().ok()
    };
    let mut avail = field(&read("/proc/meminfo")?, "MemAvailable:", 0)?.saturating_mul(1024);
    let cgroup = read("/proc/self/cgroup").and_then(|c| {
        let path = c
            .lines()
            .find_map(|l| l.strip_prefix("0::"))?
            .trim()
            .to_string();
        let dir = format!("/sys/fs/cgroup{}", path.trim_end_matches('/'));
        let max: u64 = read(&format!("{dir}/memory.max"))?.trim().parse().ok()?;
        let now: u64 = read(&format!("{dir}/memory.current"))?
            .trim()
            .parse()
            .ok()?;
        // memory.current counts the page cache, which the kernel gives back under pressure.
        let cache = read(&format!("{dir}/memory.stat")).and_then(|t| field(&t, "file ", 0));
        Some(max.saturating_sub(now.saturating_sub(cache.unwrap_or(0))))
    });
    if let Some(left) = cgroup {
        avail = avail.min(left);
    }
    // "Max address space   <soft>   <hard>   bytes" ("unlimited" parses as nothing).
    let limit = read("/proc/self/limits").and_then(|l| field(&l, "Max address space", 0));
    let size = read("/proc/self/status").and_then(|s| field(&s, "VmSize:", 0));
    if let (Some(limit), Some(kib)) = (limit, size) {
        avail = avail.min(limit.saturating_sub(kib.saturating_mul(1024)));
    }
    Some(avail)
}

/// Refuse a run that does not fit `lim`, with the estimate, the limit and what to lower.
pub fn check_fits(est: &MemoryEstimate, lim: &MemoryLimit) -> Result<()> {
    let fix = "lower the width, the number of layers or the batch size";
    if est.largest_tensor > lim.max_tensor {
        let per_row = est.largest_tensor / est.batch.max(1) as u64;
        let hint = match lim.max_tensor / per_row.max(1) {
            b if est.largest_per_batch && b >= 1 => {
                format!("{fix} (batch {b} would keep this tensor under the limit)")
            }
            _ => "lower the width or the number of layers".into(),
        };
        return Err(Error::Msg(format!(
            "{} does not fit: its largest tensor, {}, needs {}, more than {} ({}); {hint}",
            est.what,
            est.largest_name,
            fmt_bytes(est.largest_tensor),
            lim.tensor_limit,
            fmt_bytes(lim.max_tensor)
        )));
    }
    if let Some((max, name)) = &lim.device_total {
        // On a device that is also the host (the CPU backend in wasm32), saving the run needs its
        // serialized state next to the live tensors.
        let need = est
            .step_total()
            .saturating_add(if lim.host_total.is_none() {
                est.saved_state
            } else {
                0
            });
        if need > *max {
            // Activations grow with the batch, the rest does not: the largest batch that fits.
            let per_row = est.activations / (est.batch.max(1) as u64);
            let fixed = need - est.activations;
            let hint = match max.checked_sub(fixed).map(|room| room / per_row.max(1)) {
                Some(b) if b >= 1 => format!("{fix} (batch {b} would fit this model)"),
                _ => "lower the width or the number of layers (even batch 1 does not fit)".into(),
            };
            return Err(Error::Msg(format!(
                "{} does not fit: training it needs about {} ({}{}), more than {name}; {hint}",
                est.what,
                fmt_bytes(need),
                est.breakdown(),
                if lim.host_total.is_none() {
                    format!(", {} to save the run", fmt_bytes(est.saved_state))
                } else {
                    String::new()
                },
            )));
        }
    }
    if let Some((max, name)) = &lim.host_total {
        // At least the state's tensors read back and its bytes.
        let need = est.saved_state.max(est.state_bytes.saturating_mul(2));
        if need > *max {
            return Err(Error::Msg(format!(
                "{} does not fit: saving its training state (weights and AdamW moments, read back \
                 and written) needs about {}, more than {name}; lower the width or the number of \
                 layers",
                est.what,
                fmt_bytes(need),
            )));
        }
    }
    Ok(())
}

/// The largest batch of at most `batch` rows of `t` tokens whose training step of `cfg` fits `lim`
/// (the check a run makes before it starts, [`check_fits`]), or 0 when not even one row fits. The
/// estimate grows with the batch, so the search halves the range.
pub fn largest_batch(cfg: &GptConfig, batch: usize, t: usize, lim: &MemoryLimit) -> usize {
    let fits = |b: usize| check_fits(&estimate_training(cfg, b, t), lim).is_ok();
    if batch == 0 || !fits(1) {
        return 0;
    }
    let (mut lo, mut hi) = (1, batch);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Bytes as "1.5 GiB", "256 MiB", "12 KiB", "100 B".
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut i = 0;
    while x >= 1024.0 && i < UNITS.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else if x >= 100.0 || (x - x.round()).abs() < 0.05 {
        format!("{x:.0} {}", UNITS[i])
    } else {
        format!("{x:.1} {}", UNITS[i])
    }
}

/// 1234567 as "1,234,567" (also the training schedule's words, `train::phases`).
pub(crate) fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests;
