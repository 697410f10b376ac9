//! The memory estimate and its limits: width 4096 refused with the estimate and the limit; the
//! presets fit the browser's budget or name the batch that does; byte counts read well; the CPU
//! backend keeps the attention scores.

use super::*;
use crate::model::Variant;

#[test]
fn width_4096_is_refused_with_the_estimate_and_the_limit() {
    let cfg = GptConfig {
        n_embd: 4096,
        ..GptConfig::tiny(Variant::Vanilla, 70)
    };
    let est = estimate_training(&cfg, 128, 128);
    assert!(est.step_total() > 4 << 30, "{est:?}");
    let lim = MemoryLimit {
        max_tensor: 1 << 30,
        tensor_limit: "the CPU tensor size limit".into(),
        device_total: Some((2 << 30, "the 2 GiB budget".into())),
        host_total: None,
    };
    let msg = check_fits(&est, &lim).unwrap_err().to_string();
    assert!(
        msg.contains("width 4096")
            && msg.contains("GiB of weights")
            && msg.contains("more than the 2 GiB budget")
            && msg.contains("even batch 1 does not fit"),
        "{msg}"
    );
    // A per-tensor limit alone (WebGPU's binding size) also refuses it, naming the tensor.
    let lim = MemoryLimit {
        max_tensor: 128 << 20,
        tensor_limit: "the device's max_storage_buffer_binding_size".into(),
        device_total: None,
        host_total: None,
    };
    let msg = check_fits(&est, &lim).unwrap_err().to_string();
    assert!(
        msg.contains("largest tensor") && msg.contains("(128 MiB)"),
        "{msg}"
    );
    // The host limit for the saved state.
    let lim = MemoryLimit {
        max_tensor: u64::MAX,
        tensor_limit: String::new(),
        device_total: None,
        host_total: Some((2 << 30, "the 2 GiB of the page's memory".into())),
    };
    assert!(check_fits(&est, &lim).is_err());
}

#[test]
fn the_presets_fit_the_browser_budget_or_say_which_batch_does() {
    let lim = MemoryLimit {
        max_tensor: 1 << 30,
        tensor_limit: "the CPU tensor size limit".into(),
        device_total: Some((WASM_BUDGET_BYTES, "the 2 GiB budget".into())),
        host_total: None,
    };
    // The quick preset at its batch of 128, and the assignment's model at batch 64, fit.
    for (cfg, b) in [
        (GptConfig::tiny(Variant::Vanilla, 100), 128),
        (GptConfig::tiny(Variant::Synthesizer, 100), 128),
        (GptConfig::assignment(Variant::Vanilla, 100), 64),
        (GptConfig::assignment(Variant::Synthesizer, 100), 64),
    ] {
        let est = estimate_training(&cfg, b, 128);
        check_fits(&est, &lim).unwrap_or_else(|e| panic!("{e}"));
    }
    // The assignment's batch of 128 (about 2.3 GiB measured) is refused, naming a batch that fits.
    let est = estimate_training(&GptConfig::assignment(Variant::Vanilla, 100), 128, 128);
    let msg = check_fits(&est, &lim).unwrap_err().to_string();
    let b: usize = msg
        .split("(batch ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no batch in: {msg}"));
    assert!((64..128).contains(&b), "{msg}");
    check_fits(
        &estimate_training(&GptConfig::assignment(Variant::Vanilla, 100), b, 128),
        &lim,
    )
    .unwrap();
    // Absurd sizes saturate instead of overflowing.
    let huge = GptConfig {
        n_embd: 1 << 16,
        n_head: 1,
        ..GptConfig::tiny(Variant::Vanilla, 1 << 20)
    };
    let est = estimate_training(&huge, usize::MAX / 2, 1024);
    assert!(check_fits(&est, &lim).is_err());
}

#[test]
fn bytes_read_well() {
    assert_eq!(fmt_bytes(100), "100 B");
    assert_eq!(fmt_bytes(2 << 30), "2 GiB");
    assert_eq!(fmt_bytes(1536 << 20), "1.5 GiB");
    assert_eq!(fmt_bytes(256 << 20), "256 MiB");
    assert_eq!(group_thousands(1234567), "1,234,567");
}

/// Natively the save is counted as the CLI makes it: the last verified state it keeps, the next
/// state's tensors read back and its bytes, three times the state beside the step (it used to be
/// left out natively, so a run passed the check, trained, and aborted while it serialized).
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn the_save_is_counted_natively() {
    let cfg = GptConfig {
        n_embd: 4096,
        n_head: 4096,
        n_layer: 1,
        ..GptConfig::tiny(Variant::Vanilla, 70)
    };
    let est = estimate_training(&cfg, 1, 128);
    assert_eq!(est.saved_state, 3 * est.state_bytes);
    let lim = |total: u64| MemoryLimit {
        max_tensor: u64::MAX,
        tensor_limit: String::new(),
        device_total: Some((total, "the test's budget".into())),
        host_total: None,
    };
    let msg = check_fits(&est, &lim(est.step_total() + est.state_bytes))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("to save the run"), "{msg}");
    check_fits(&est, &lim(est.step_total() + est.saved_state)).unwrap();
}

/// On the CPU backend the attention op composes matmul, causal_softmax, dropout and matmul, which
/// keep the (B, NH, T, T) tensors: its estimate is the scores-kept one, for both variants.
#[test]
fn the_cpu_backend_keeps_the_attention_scores() {
    let dev = Device::cpu();
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let cfg = GptConfig::assignment(variant, 100);
        assert!(keeps_scores(&dev, &cfg), "{variant:?}");
        let est = estimate_training_on(&dev, &cfg, 8, 127);
        assert_eq!(est, estimate_training(&cfg, 8, 127), "{variant:?}");
        assert!(est.activations > 0);
    }
    // Narrow heads over long rows: the scores are the largest tensor where they are kept; the
    // fused op's count (no scores) is smaller and names another.
    let cfg = GptConfig {
        n_embd: 64,
        n_head: 8,
        ..GptConfig::assignment(Variant::Vanilla, 100)
    };
    let (kept, fused) = (estimate(&cfg, 8, 127, true), estimate(&cfg, 8, 127, false));
    assert!(
        kept.largest_name.contains("attention scores"),
        "{}",
        kept.largest_name
    );
    assert!(
        !fused.largest_name.contains("attention scores"),
        "{}",
        fused.largest_name
    );
    assert!(fused.largest_tensor < kept.largest_tensor);
    assert!(fused.activations < kept.activations);
}
