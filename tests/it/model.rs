//! The GPT's parameters match the assignment's: names, counts and decay groups.

use attnlab::model::memory::estimate_training_on;
use attnlab::model::params::{count, decays, layout};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::Device;

#[test]
fn parameter_counts_match_the_reference() {
    assert_eq!(
        count(&GptConfig::assignment(Variant::Vanilla, 256)),
        3_323_392
    );
    assert_eq!(
        count(&GptConfig::assignment(Variant::Synthesizer, 256)),
        3_076_988
    );
}

#[test]
fn names_shapes_and_decay_groups_follow_the_state_dict() {
    let l = layout(&GptConfig::assignment(Variant::Synthesizer, 256));
    let get = |n: &str| {
        l.iter()
            .find(|(name, _, _)| name == n)
            .map(|(_, s, _)| s.clone())
    };
    assert_eq!(get("pos_emb"), Some(vec![1, 128, 256]));
    assert_eq!(get("blocks.0.attn.w2"), Some(vec![32, 127]));
    assert_eq!(get("blocks.3.attn.b2"), Some(vec![127]));
    assert_eq!(get("blocks.1.mlp.0.weight"), Some(vec![1024, 256]));
    assert_eq!(get("head.weight"), Some(vec![256, 256]));
    assert_eq!(get("head.bias"), None);
    for (name, want) in [
        ("blocks.0.ln1.weight", true),
        ("blocks.0.attn.w2", true),
        ("blocks.0.attn.b2", true),
        ("blocks.0.attn.w1.bias", false),
        ("tok_emb.weight", true),
        ("pos_emb", true),
        ("ln_f.bias", false),
    ] {
        assert_eq!(decays(name), want, "{name}");
    }
}

#[test]
/// `model::memory` estimates a training step; one real step (the train layer, so the test lives
/// here rather than in src/model/) must stay under the estimate.
fn the_estimate_covers_a_measured_step_without_overstating_it_much() {
    // One real step of a small model on each backend: the pool's peak must be under the device's
    // estimate, and the estimate within 2x of it (it is meant to be conservative, not absurd). On
    // the GPU the vanilla model's fused attention keeps no (B, NH, T, T) tensors, and its estimate
    // counts none; the GPU runs both paths, whichever its adapter takes by default.
    let gpu = Device::gpu_blocking().unwrap();
    for (dev, fused) in [(Device::cpu(), false), (gpu.clone(), false), (gpu, true)] {
        dev.set_fused_attention(fused);
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let cfg = GptConfig {
                block_size: 32,
                ..GptConfig::tiny(variant, 40)
            };
            let (b, t) = (4, 31);
            dev.reset_peak_memory();
            let mut tr = Trainer::new(
                Gpt::new(&dev, cfg.clone(), 1).unwrap(),
                TrainConfig::pretrain(),
                0,
            )
            .unwrap();
            let x: Vec<u32> = (0..b * t).map(|i| (i % 38 + 2) as u32).collect();
            tr.step(&x, &x, b, t).unwrap().read().unwrap();
            let peak = dev.stats().peak_bytes_in_use;
            let est = estimate_training_on(&dev, &cfg, b, t);
            assert_eq!(est.params as usize, tr.model.num_params());
            let total = est.step_total();
            println!(
                "{} {variant:?} fused {fused}: estimate {total} vs measured peak {peak} ({:.2}x)",
                dev.kind(),
                total as f64 / peak as f64
            );
            assert!(
                total >= peak && total <= 2 * peak,
                "{} {variant:?} fused {fused}: estimate {total} vs measured peak {peak}",
                dev.kind()
            );
        }
    }
}

/// The largest batch that fits is the one `check_fits` accepts while one more row is refused (the
/// page offers it instead of a preset that would be refused); 0 when not even one row fits.
#[test]
fn the_largest_batch_that_fits_is_offered() {
    use attnlab::model::memory::{check_fits, estimate_training, largest_batch, MemoryLimit};
    let cfg = GptConfig::assignment(Variant::Vanilla, 100);
    let t = 128;
    let at = |b: usize| estimate_training(&cfg, b, t).step_total();
    // A budget between the steps of 79 and 80 rows (the device total counts the saved state too).
    let saved = estimate_training(&cfg, 1, t).saved_state;
    let lim = |total: u64| MemoryLimit {
        max_tensor: u64::MAX,
        tensor_limit: "no limit".into(),
        device_total: Some((total, "the test's budget".into())),
        host_total: None,
    };
    let budget = lim((at(79) + at(80)) / 2 + saved);
    assert_eq!(largest_batch(&cfg, 128, t, &budget), 79);
    assert!(check_fits(&estimate_training(&cfg, 79, t), &budget).is_ok());
    assert!(check_fits(&estimate_training(&cfg, 80, t), &budget).is_err());
    // A batch that fits is kept; a budget below one row gives 0.
    assert_eq!(largest_batch(&cfg, 64, t, &budget), 64);
    assert_eq!(largest_batch(&cfg, 128, t, &lim(at(1) / 2)), 0);
}

/// The vanilla model trains the same with the fused attention kernels as with the composed ops
/// (a hardware GPU's path and a software adapter's): five steps with dropout, their losses and
/// the weights after them, on whatever GPU adapter is here.
#[test]
fn the_vanilla_model_trains_the_same_fused_and_composed_on_the_gpu() {
    let dev = Device::gpu_blocking().unwrap();
    let cfg = GptConfig {
        block_size: 32,
        ..GptConfig::tiny(Variant::Vanilla, 40)
    };
    assert!(
        cfg.attn_pdrop > 0.0,
        "the steps should drop attention weights"
    );
    let (b, t) = (4, 31);
    let run = |fused: bool| {
        dev.set_fused_attention(fused);
        let mut tr = Trainer::new(
            Gpt::new(&dev, cfg.clone(), 1).unwrap(),
            TrainConfig::pretrain(),
            0,
        )
        .unwrap();
        let losses: Vec<f32> = (0..5)
            .map(|s| {
                let x: Vec<u32> = (0..b * t).map(|i| ((i * 7 + s) % 38 + 2) as u32).collect();
                let y: Vec<u32> = x.iter().map(|v| (v * 3) % 38 + 2).collect();
                tr.step(&x, &y, b, t).unwrap().read().unwrap()[0]
            })
            .collect();
        let weights: Vec<(String, Vec<f32>)> = tr
            .model
            .params
            .iter()
            .map(|p| (p.name.clone(), p.var.value().read().unwrap()))
            .collect();
        (losses, weights)
    };
    let (fused, fused_w) = run(true);
    let (composed, composed_w) = run(false);
    for (s, (f, c)) in fused.iter().zip(&composed).enumerate() {
        assert!(
            (f - c).abs() <= 1e-4 * c.abs(),
            "step {s}: loss fused {f}, composed {c}"
        );
    }
    for ((p, f), (_, c)) in fused_w.iter().zip(&composed_w) {
        let worst = f
            .iter()
            .zip(c)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= 1e-4,
            "{p}: fused and composed weights differ by {worst}"
        );
    }
}
