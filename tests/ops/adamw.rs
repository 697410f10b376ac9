//! AdamW on both backends: a trajectory against numbers worked out independently, the kernels vs
//! the f64 reference over several steps with a changing learning rate, the clip factor, and the
//! argument checks.
//! (An optimizer has no backward, so the backward and finite-difference checks do not apply.)

use crate::common::*;
use attnlab::autograd::Var;
use attnlab::ops::adamw::{self, AdamState, AdamW};
use attnlab::{Error, Tensor};

/// 0.1 · g · c and 0.001 · g² · c² are m and v after one step from zero state (β1 0.9, β2 0.999).
/// The betas are taken as the f32 values the kernel sees (0.999f32 is 1.3e-5 off in 1 − β2).
fn first_moments(g: &[f64], c: f64) -> (Vec<f64>, Vec<f64>) {
    let (b1, b2) = (0.9f32 as f64, 0.999f32 as f64);
    (
        g.iter().map(|x| (1.0 - b1) * x * c).collect(),
        g.iter().map(|x| (1.0 - b2) * x * x * c * c).collect(),
    )
}

// The expected values below were computed by this plain-float Python script (written from the
// formulas in the task, not from this crate's code: decay first, then the moments, then the
// bias-corrected update):
//
//   lr, b1, b2, eps, wd = 0.1, 0.9, 0.999, 1e-8, 0.1
//   p = [0.5, -1.0, 2.0]; m = [0.0]*3; v = [0.0]*3
//   for t, g in enumerate([[0.1, -0.2, 0.3], [-0.05, 0.4, 0.0], [0.2, 0.1, -0.6]], start=1):
//       for i in range(3):
//           if decay: p[i] = p[i] - lr*wd*p[i]
//           m[i] = b1*m[i] + (1-b1)*g[i]; v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
//           mh = m[i]/(1-b1**t); vh = v[i]/(1-b2**t)
//           p[i] = p[i] - lr*mh/(math.sqrt(vh)+eps)
//       print(p)
const GRADS: [[f64; 3]; 3] = [[0.1, -0.2, 0.3], [-0.05, 0.4, 0.0], [0.2, 0.1, -0.6]];
const NO_DECAY: [[f64; 3]; 3] = [
    [0.40000000999999896, -0.9000000049999998, 1.9000000033333333],
    [0.37336630940339083, -0.9366103565460369, 1.8329941810791546],
    [0.30755515435138137, -0.9781754749638348, 1.866997627240353],
];
const DECAY: [[f64; 3]; 3] = [
    [0.39500000999999896, -0.8900000049999998, 1.8800000033333333],
    [0.3644163093033908, -0.9177103564960367, 1.7941941810458213],
    [0.2949609911583474, -0.9500983713488743, 1.8102556853965615],
];
/// m and v after the three steps (the same with and without decay).
const M3: [f64; 3] = [
    0.023599999999999996,
    0.029799999999999993,
    -0.03569999999999999,
];
const V3: [f64; 3] = [
    5.2477510000000055e-05,
    0.00020976004000000022,
    0.00044982009000000037,
];

#[test]
fn adamw_should_follow_a_hand_computed_trajectory() {
    let opt = AdamW {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.1,
    };
    let p0 = [0.5, -1.0, 2.0];
    for (decay, want) in [(false, NO_DECAY), (true, DECAY)] {
        // The f64 reference.
        let (mut cp, mut cm, mut cv, mut cstep) = (p0.to_vec(), vec![0.0; 3], vec![0.0; 3], 0);
        for (t, gr) in GRADS.iter().enumerate() {
            adamw::adamw_step_ref(
                &opt,
                &mut cp,
                gr,
                &mut cm,
                &mut cv,
                &mut cstep,
                decay,
                1.0,
                f64::INFINITY,
            );
            // The reference takes lr and the betas as the f32 the kernels see, hence the 1e-7 slack.
            let what = format!("reference decay={decay} step {}", t + 1);
            assert_close(&what, &cp, &want[t], 0.0, 1e-7);
        }
        assert_close("reference m", &cm, &M3, 1e-6, 0.0);
        assert_close("reference v", &cv, &V3, 3e-5, 0.0);
        // Each backend's kernel.
        for g in devices() {
            let kind = g.kind();
            let norm = Tensor::from_f32(&g, &[1], &[1.0]).unwrap();
            let param = upload(&g, &[3], &p0);
            let mut state = AdamState::new(&g, &[3]).unwrap();
            for (t, gr) in GRADS.iter().enumerate() {
                let grad = upload(&g, &[3], gr);
                adamw::adamw_step_into(
                    &opt,
                    &param,
                    &grad,
                    &mut state,
                    decay,
                    &norm,
                    f32::INFINITY,
                )
                .unwrap();
                assert_eq!(state.step(), t as u32 + 1, "{kind}");
                let what = format!("{kind} decay={decay} step {}", t + 1);
                assert_close(&what, &download(&param), &want[t], 0.0, 2e-6);
            }
            // β2 = 0.999 as f32 makes 1 − β2 1.3e-5 smaller (relative) than in the script, hence
            // 3e-5 on v.
            assert_close(&format!("{kind} m"), &download(state.m()), &M3, 1e-5, 1e-9);
            assert_close(&format!("{kind} v"), &download(state.v()), &V3, 3e-5, 1e-11);
        }
    }
}

#[test]
fn adamw_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        let opt = AdamW {
            lr: 0.0,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay: 0.1,
        };
        // (norm, max_norm): clipping active (factor 1/3.7), inactive (norm below the bound), off.
        let clips = [(3.7, 1.0), (0.5, 1.0), (12.0, f64::INFINITY)];
        for n in [1usize, 17, 1000] {
            for (ci, &(nv, max_norm)) in clips.iter().enumerate() {
                for decay in [false, true] {
                    let seed = (n * 10 + ci * 2 + decay as usize) as u64;
                    let p0 = to_f64(&to_f32(&uniform(seed, n)));
                    let param = upload(&g, &[n], &p0);
                    let norm = Tensor::from_f32(&g, &[1], &[nv as f32]).unwrap();
                    let mut state = AdamState::new(&g, &[n]).unwrap();
                    let (mut cp, mut cm, mut cv, mut cstep) =
                        (p0.clone(), vec![0.0; n], vec![0.0; n], 0);
                    for t in 0..5u64 {
                        // A changing learning rate: the pipeline must not bake it in.
                        let o = AdamW {
                            lr: 3e-3 * (t + 1) as f32,
                            ..opt
                        };
                        let gr = to_f64(&to_f32(&uniform(1000 + seed * 7 + t, n)));
                        adamw::adamw_step_into(
                            &o,
                            &param,
                            &upload(&g, &[n], &gr),
                            &mut state,
                            decay,
                            &norm,
                            max_norm as f32,
                        )
                        .unwrap();
                        adamw::adamw_step_ref(
                            &o, &mut cp, &gr, &mut cm, &mut cv, &mut cstep, decay, nv, max_norm,
                        );
                    }
                    let what = format!("n={n} norm={nv} max_norm={max_norm} decay={decay}");
                    assert_eq!((state.step(), cstep), (5, 5), "{kind} {what}");
                    assert_close(
                        &format!("{kind} param {what}"),
                        &download(&param),
                        &cp,
                        1e-5,
                        1e-6,
                    );
                    assert_close(
                        &format!("{kind} m {what}"),
                        &download(state.m()),
                        &cm,
                        1e-4,
                        1e-7,
                    );
                    assert_close(
                        &format!("{kind} v {what}"),
                        &download(state.v()),
                        &cv,
                        1e-4,
                        1e-9,
                    );
                }
            }
        }
    }
}

#[test]
fn adamw_should_apply_the_clip_factor_exactly() {
    for g in devices() {
        let kind = g.kind();
        let opt = AdamW {
            lr: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        };
        let gr = [1.0, -2.0, 0.5];
        // norm 4, max_norm 1: clip_grad_norm_ multiplies by 1 / (4 + 1e-6); norm 0.5: the factor is
        // clamped to 1; an infinite max_norm turns clipping off.
        for (nv, max_norm, c) in [
            (4.0f32, 1.0f32, 1.0 / (4.0 + 1e-6)),
            (0.5, 1.0, 1.0),
            (4.0, f32::INFINITY, 1.0),
        ] {
            assert!((adamw::clip_factor_ref(nv as f64, max_norm as f64) - c).abs() < 1e-15);
            let param = Tensor::zeros(&g, &[3]).unwrap();
            let mut state = AdamState::new(&g, &[3]).unwrap();
            let norm = Tensor::from_f32(&g, &[1], &[nv]).unwrap();
            adamw::adamw_step_into(
                &opt,
                &param,
                &upload(&g, &[3], &gr),
                &mut state,
                true,
                &norm,
                max_norm,
            )
            .unwrap();
            let (m, v) = first_moments(&gr, c);
            assert_close(
                &format!("{kind} m norm={nv} max={max_norm}"),
                &download(state.m()),
                &m,
                1e-6,
                0.0,
            );
            assert_close(
                &format!("{kind} v norm={nv} max={max_norm}"),
                &download(state.v()),
                &v,
                1e-6,
                0.0,
            );
        }
    }
}

#[test]
fn adamw_should_skip_params_without_grad_and_reject_bad_arguments() {
    for g in devices() {
        let kind = g.kind();
        let opt = AdamW::default();
        let norm = Tensor::from_f32(&g, &[1], &[1.0]).unwrap();
        let w = Var::leaf(Tensor::full(&g, &[2, 3], 0.5).unwrap(), true);
        let mut state = AdamState::new(&g, &[2, 3]).unwrap();
        adamw::adamw_step(&opt, &w, &mut state, true, &norm, 1.0).unwrap();
        assert_eq!(state.step(), 0, "{kind}: no gradient, no step");
        assert_eq!(download(w.value()), vec![0.5; 6], "{kind}");

        let bad_grad = Tensor::zeros(&g, &[3, 2]).unwrap();
        let err = adamw::adamw_step_into(&opt, w.value(), &bad_grad, &mut state, true, &norm, 1.0)
            .unwrap_err();
        assert!(
            matches!(err, Error::Shape(_))
                && err.to_string().contains("[2, 3]")
                && err.to_string().contains("[3, 2]"),
            "{kind}: {err}"
        );
        let grad = Tensor::zeros(&g, &[2, 3]).unwrap();
        let norm2 = Tensor::zeros(&g, &[2]).unwrap();
        let err = adamw::adamw_step_into(&opt, w.value(), &grad, &mut state, true, &norm2, 1.0)
            .unwrap_err();
        assert!(matches!(err, Error::Shape(_)), "{kind}: {err}");
        let mut small = AdamState::new(&g, &[5]).unwrap();
        assert!(
            matches!(
                adamw::adamw_step_into(&opt, w.value(), &grad, &mut small, true, &norm, 1.0),
                Err(Error::Shape(_))
            ),
            "{kind}: a state of another size"
        );
        for max_norm in [0.0, f32::NAN] {
            assert!(
                adamw::adamw_step_into(&opt, w.value(), &grad, &mut state, true, &norm, max_norm)
                    .is_err(),
                "{kind}: max_norm {max_norm} accepted"
            );
        }
        assert_eq!(state.step(), 0, "{kind}: a rejected step does not count");
    }
}
