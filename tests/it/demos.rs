//! The Checks of docs/attention-exercises.md (E1–E10), each asserted through the GPU kernels (the
//! strided matmul and the causal softmax) with the f64 CPU reference beside them.

use attnlab::demos::heads::{noise, NoiseSpec};
use attnlab::demos::kqv::{imitate, separate, Imitate};
use attnlab::demos::mask::{mask_view, train_toy};
use attnlab::demos::multi::{heads, model_maps, synth_vs_dot};
use attnlab::demos::single::{average, copying, temperature};
use attnlab::demos::{dist, DemoRng};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::Device;
use pollster::block_on;
use std::rc::Rc;

fn gpu() -> Rc<Device> {
    Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"))
}

fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: gpu {g}, cpu {w}"
        );
    }
}

#[test]
fn e1_a_dominant_score_copies_its_value() {
    let g = gpu();
    let n = 8;
    let mut r = DemoRng::new(11);
    let keys: Vec<f64> = (0..2 * n).map(|_| r.uniform(-1.0, 1.0)).collect();
    let values: Vec<f64> = (0..2 * n).map(|_| r.uniform(-2.0, 2.0)).collect();
    let q0 = [0.8, -0.6];
    // Scale q so that k_jᵀq − max_{i≠j} k_iᵀq is exactly 10 (the margin is linear in q).
    let m0 = block_on(copying(&g, &keys, &values, &q0, 1.0))
        .unwrap()
        .margin;
    assert!(m0 > 0.0);
    let q = [q0[0] * 10.0 / m0, q0[1] * 10.0 / m0];
    let res = block_on(copying(&g, &keys, &values, &q, 1.0)).unwrap();
    assert!((res.margin - 10.0).abs() < 1e-9, "margin {}", res.margin);
    let sum: f64 = res.dev.alpha.iter().sum();
    assert!((sum - 1.0).abs() < 1e-6 && res.dev.alpha.iter().all(|&a| a >= 0.0));
    assert!(
        res.dist_to_best <= 1e-3 * res.max_v,
        "‖c − v_j‖ = {} > 1e-3·{}",
        res.dist_to_best,
        res.max_v
    );
    close("E1 alpha", &res.dev.alpha, &res.cpu.alpha, 1e-5);
    close("E1 c", &res.dev.c, &res.cpu.c, 1e-5);
}

#[test]
fn e2_two_orthogonal_keys_average_their_values() {
    let g = gpu();
    let grid: Vec<f64> = (0..=30).map(|s| s as f64).collect();
    let res = block_on(average(&g, 6, 20.0, 3, &grid)).unwrap();
    assert!(
        res.gap_gpu <= 1e-6 * res.scale,
        "gap {} > 1e-6·{}",
        res.gap_gpu,
        res.scale
    );
    assert!(res.gap_cpu <= 1e-6 * res.scale);
    // The exact gap shrinks with s: softmax approaches the average but never reaches it.
    for w in res.grid_gap_cpu.windows(2) {
        assert!(w[1] < w[0] && w[1] > 0.0, "{:?}", res.grid_gap_cpu);
    }
    close("E2 alpha", &res.dev.alpha, &res.cpu.alpha, 1e-5);
}

fn e3_spec(fragile: bool) -> NoiseSpec {
    NoiseSpec {
        n: 4,
        samples: 1000,
        seed: 2024,
        s: 50.0,
        var: 1e-6,
        fragile,
    }
}

#[test]
fn e3_one_head_jumps_between_the_two_values() {
    let g = gpu();
    let calm = block_on(noise(&g, e3_spec(false))).unwrap();
    assert!(
        calm.one_near_mean >= 0.95,
        "isotropic noise: {} near the mean",
        calm.one_near_mean
    );
    let res = block_on(noise(&g, e3_spec(true))).unwrap();
    eprintln!(
        "E3: {} of single-head outputs near v_a or v_b",
        res.one_near_value
    );
    assert!(
        res.one_near_value >= 0.9,
        "only {} near v_a or v_b",
        res.one_near_value
    );
    assert!(
        res.one_near_mean < 0.2,
        "{} still near the mean",
        res.one_near_mean
    );
}

#[test]
fn e4_two_heads_stay_at_the_average() {
    let g = gpu();
    let res = block_on(noise(&g, e3_spec(true))).unwrap();
    eprintln!(
        "E4: {} of two-head outputs (γ > 0) near the mean",
        res.two_near_mean
    );
    assert!(
        res.two_near_mean >= 0.95,
        "only {} near the mean",
        res.two_near_mean
    );
}

#[test]
fn e5_projections_let_x2_fetch_u_b() {
    let g = gpu();
    let e = |i: usize| -> Vec<f64> { (0..4).map(|j| if i == j { 1.0 } else { 0.0 }).collect() };
    let (ua, ub, uc) = (e(0), e(1), e(2));
    // Without projections x₂ only matches itself, whatever it adds of u_c or u_d.
    for (ac, ad) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (1.0, 1.0), (-1.0, 2.0)] {
        let res = block_on(separate(&g, 10.0, 0.2, false, ac, ad)).unwrap();
        let c2 = &res.dev.out[4..8];
        assert!(
            c2[1].abs() < 1e-3,
            "u_b part of c₂ = {} with x₂ + {ac}u_c + {ad}u_d",
            c2[1]
        );
        if ac == 0.0 && ad == 0.0 {
            assert!(dist(c2, &ua) < 1e-3, "c₂ = {c2:?}, want u_a");
        }
    }
    // With K, Q, V: c₂ ≈ u_b and c₁ ≈ u_b − u_c, within 1e-3·β (1e-3 in the u-basis).
    let res = block_on(separate(&g, 10.0, 0.2, true, 0.0, 0.0)).unwrap();
    let want1: Vec<f64> = ub.iter().zip(&uc).map(|(b, c)| b - c).collect();
    assert!(
        dist(&res.dev.out[4..8], &ub) <= 1e-3,
        "c₂ = {:?}",
        &res.dev.out[4..8]
    );
    assert!(
        dist(&res.dev.out[0..4], &want1) <= 1e-3,
        "c₁ = {:?}",
        &res.dev.out[0..4]
    );
    close("E5 alpha", &res.dev.alpha, &res.cpu.alpha, 1e-5);
    close("E5 c", &res.dev.out, &res.cpu.out, 1e-4);
}

#[test]
fn e6_entropy_falls_with_beta_and_beta_zero_is_uniform() {
    let g = gpu();
    let n = 7;
    let grid: Vec<f64> = (0..=40).map(|i| i as f64 * 0.25).collect();
    let res = block_on(temperature(&g, n, 16, 5, 0.25, &grid)).unwrap();
    for w in res.grid_entropy_gpu.windows(2) {
        assert!(
            w[1] <= w[0] + 1e-6,
            "entropy rose: {:?}",
            res.grid_entropy_gpu
        );
    }
    let h = &res.grid_entropy_gpu;
    assert!(h[0] - h[h.len() - 1] > 1.0, "entropy barely moved: {h:?}");
    let u = res.uniform_gpu.expect("β = 0 is on the grid");
    let want = (1.0f32 / n as f32) as f64;
    assert!(u.iter().all(|&a| a == u[0]), "β = 0 not uniform: {u:?}");
    assert!(
        (u[0] - want).abs() <= f32::EPSILON as f64 * want,
        "{} vs 1/{n}",
        u[0]
    );
    close("E6 alpha", &res.dev, &res.cpu, 1e-5);
    close("E6 scores", &res.scores_gpu, &res.scores_cpu, 1e-5);
}

#[test]
fn e7_masked_weights_and_gradients_are_exactly_zero() {
    let g = gpu();
    for t in [1, 3, 17] {
        let res = block_on(mask_view(&g, t, 9)).unwrap();
        assert_eq!(res.max_masked_weight, 0.0, "T = {t}");
        assert_eq!(res.max_masked_grad, 0.0, "T = {t}");
        close("E7 P", &res.masked_gpu, &res.masked_cpu, 1e-5);
        close("E7 open P", &res.open_gpu, &res.open_cpu, 1e-5);
        close("E7 dS", &res.grad_gpu, &res.grad_cpu, 1e-4);
        close("E7 open dS", &res.open_grad_gpu, &res.open_grad_cpu, 1e-4);
        // Without the mask the gradient reaches the future: some entry above the diagonal is non-zero.
        if t > 1 {
            let above = (0..t * t).filter(|i| i % t > i / t);
            assert!(
                above
                    .map(|i| res.open_grad_gpu[i].abs())
                    .fold(0.0, f64::max)
                    > 1e-6
            );
        }
    }
}

#[test]
fn e7_without_the_mask_the_loss_collapses() {
    let g = gpu();
    let last = |l: &[f64]| l[l.len() - 10..].iter().sum::<f64>() / 10.0;
    let open = block_on(train_toy(&g, false, 150, 1)).unwrap();
    let masked = block_on(train_toy(&g, true, 150, 1)).unwrap();
    eprintln!(
        "E7 toy: final loss {:.3} open, {:.3} masked, ln V = {:.3}",
        last(&open.losses),
        last(&masked.losses),
        masked.floor
    );
    assert!(last(&open.losses) < 0.3, "open: {:?}", open.losses);
    assert!(
        last(&masked.losses) > 0.9 * masked.floor,
        "masked: {:?}",
        masked.losses
    );
}

#[test]
fn e8_heads_are_strided_views_of_one_projection() {
    let g = gpu();
    for (t, c, h) in [(5, 8, 1), (6, 8, 2), (7, 12, 4), (3, 16, 8)] {
        let res = block_on(heads(&g, t, c, h, 4)).unwrap();
        assert_eq!(res.maps_gpu.len(), h * t * t);
        close("E8 maps", &res.maps_gpu, &res.maps_cpu, 1e-4);
        close("E8 out", &res.out_gpu, &res.out_cpu, 1e-4);
    }
}

#[test]
fn e9_synthesizer_rows_ignore_the_other_positions() {
    let g = gpu();
    let (t, j) = (7, 2);
    let res = block_on(synth_vs_dot(&g, t, j, 3.0, 8)).unwrap();
    for i in 0..t {
        if i != j {
            assert_eq!(res.synth_row_change[i], 0.0, "synthesizer row {i} moved");
        }
        if i > j {
            // k_j changed, so every later row's weights move (some only a little).
            assert!(
                res.dot_row_change[i] > 0.0,
                "dot-product row {i} did not move"
            );
        }
    }
    let most = res.dot_row_change[j + 1..]
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert!(
        most > 1e-2,
        "dot-product rows barely moved: {:?}",
        res.dot_row_change
    );
    eprintln!(
        "E9 row changes: dot {:?}, synth {:?}",
        res.dot_row_change, res.synth_row_change
    );
    assert!(res.synth_row_change[j] > 1e-3);
    close(
        "E9 scores",
        &res.synth_scores_gpu,
        &res.synth_scores_ref,
        1e-4,
    );
}

#[test]
fn e8_e9_a_model_gives_one_causal_map_per_layer_and_head() {
    let g = gpu();
    let vocab = "□⁇ abcdefghijklmnopqrstuvwxyz?";
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let mut cfg = GptConfig::tiny(variant, vocab.chars().count());
        cfg.block_size = 16;
        let model = Gpt::new(&g, cfg, 1).unwrap();
        let res = block_on(model_maps(&model, vocab, "where was ada born?")).unwrap();
        let t = 16 - (variant == Variant::Synthesizer) as usize;
        assert_eq!((res.layers, res.heads, res.t), (2, 4, t));
        assert_eq!(res.maps.len(), 2 * 4 * t * t);
        for row in res.maps.chunks(t).enumerate() {
            let (r, p) = row;
            let i = r % t;
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-5);
            assert!(p[i + 1..].iter().all(|&x| x == 0.0));
        }
        assert!(block_on(model_maps(&model, vocab, "ÄÖ")).is_err());
    }
}

#[test]
fn e10_attention_imitates_identity_permutation_linear_and_conv() {
    let g = gpu();
    for kind in [
        Imitate::Identity,
        Imitate::Permutation,
        Imitate::Linear,
        Imitate::Conv(2),
        Imitate::Conv(3),
    ] {
        let res = block_on(imitate(&g, kind, 6, 20.0, 12)).unwrap();
        close(
            &format!("E10 {kind:?} vs target"),
            &res.dev.out,
            &res.target,
            1e-4,
        );
        close(
            &format!("E10 {kind:?} alpha"),
            &res.dev.alpha,
            &res.cpu.alpha,
            1e-5,
        );
    }
    // Soft positions blur the imitation: λ = 1 is visibly off.
    let soft = block_on(imitate(&g, Imitate::Identity, 6, 1.0, 12)).unwrap();
    assert!(dist(&soft.dev.out, &soft.target) > 0.1);
}
