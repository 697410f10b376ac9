//! AdamW on both backends: a trajectory against numbers worked out independently, the kernels vs
//! the f64 reference over several steps with a changing learning rate, the clip factor, and the
//! argument checks; the one-dispatch step over arenas vs the reference and vs the per-parameter
//! step, bit for bit; and a training state saved by the per-parameter optimizer still resuming.
//! (An optimizer has no backward, so the backward and finite-difference checks do not apply.)

use crate::common::*;
use attnlab::autograd::Var;
use attnlab::ops::adamw::{self, AdamGroup, AdamState, AdamW, Span};
use attnlab::{Device, Error, Tensor};
use std::rc::Rc;

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

/// Parameters of odd sizes (below, at and above the arena's 64-element alignment), decayed or not.
const PARAMS: [(usize, bool); 6] = [
    (17, true),
    (1, false),
    (64, true),
    (65, false),
    (1000, true),
    (300, false),
];
/// A value no step writes: the alignment gaps of the values arena hold it and must keep it.
const GAP: f32 = 7.0;

/// A parameter's values, first and second moments and step count in the f64 reference.
type Reference = (Vec<f64>, Vec<f64>, Vec<f64>, u32);

/// The f32 bits of a tensor, for bit-for-bit comparisons.
fn bits(t: &Tensor) -> Vec<u32> {
    t.read().unwrap().iter().map(|x| x.to_bits()).collect()
}

/// Values and gradients arenas for `PARAMS` (gaps `GAP` in the values, random in the gradients,
/// which the step must ignore), plus each parameter's values and gradients per step as f64.
fn arenas(g: &Rc<Device>, spans: &[Span], len: usize, seed: u64) -> (Tensor, Vec<Vec<f64>>) {
    let mut w = vec![GAP; len];
    let mut vals = vec![];
    for (i, s) in spans.iter().enumerate() {
        let v = to_f64(&to_f32(&uniform(seed + i as u64, s.len)));
        for (k, x) in v.iter().enumerate() {
            w[s.at + k] = *x as f32;
        }
        vals.push(v);
    }
    (Tensor::from_f32(g, &[len], &w).unwrap(), vals)
}

#[test]
fn adamw_arena_step_should_match_reference_and_the_per_parameter_step() {
    let (spans, len) = adamw::spans(&PARAMS);
    assert!(spans.iter().all(|s| s.at % 64 == 0), "{spans:?}");
    for g in devices() {
        let kind = g.kind();
        // (norm, max_norm): clipping active, inactive (norm below the bound), off.
        for (ci, &(nv, max_norm)) in [(3.7, 1.0), (0.5, 1.0), (12.0, f64::INFINITY)]
            .iter()
            .enumerate()
        {
            let what = format!("{kind} norm={nv} max_norm={max_norm}");
            let seed = 100 * ci as u64;
            let norm = Tensor::from_f32(&g, &[1], &[nv as f32]).unwrap();
            let (values, p0) = arenas(&g, &spans, len, seed);
            let mut group = AdamGroup::new(&g, spans.clone(), len).unwrap();
            // The same parameters stepped per parameter: as tensors of their own with an
            // `AdamState` each, and as views of another arena through the group's moments.
            let own: Vec<Tensor> = p0.iter().map(|v| upload(&g, &[v.len()], v)).collect();
            let mut states: Vec<AdamState> = p0
                .iter()
                .map(|v| AdamState::new(&g, &[v.len()]).unwrap())
                .collect();
            let (values2, _) = arenas(&g, &spans, len, seed);
            let views2: Vec<Tensor> = spans
                .iter()
                .map(|s| values2.view(s.at, &[s.len]).unwrap())
                .collect();
            let mut group2 = AdamGroup::new(&g, spans.clone(), len).unwrap();
            let mut refs: Vec<Reference> = p0
                .iter()
                .map(|v| (v.clone(), vec![0.0; v.len()], vec![0.0; v.len()], 0))
                .collect();
            for t in 0..4u64 {
                let o = AdamW {
                    lr: 3e-3 * (t + 1) as f32,
                    weight_decay: 0.1,
                    ..AdamW::default()
                };
                let (grads, gs) = arenas(&g, &spans, len, 1000 + seed + 10 * t);
                // The gaps of the gradients arena hold GAP too: a step reading them would show.
                adamw::adamw_arena_step_into(
                    &o,
                    &values,
                    &grads,
                    &mut group,
                    &norm,
                    max_norm as f32,
                )
                .unwrap();
                let gviews: Vec<Tensor> = spans
                    .iter()
                    .map(|s| grads.view(s.at, &[s.len]).unwrap())
                    .collect();
                adamw::adamw_each_step_into(
                    &o,
                    &views2.iter().collect::<Vec<_>>(),
                    &gviews.iter().collect::<Vec<_>>(),
                    &mut group2,
                    &norm,
                    max_norm as f32,
                )
                .unwrap();
                for (i, s) in spans.iter().enumerate() {
                    let grad = upload(&g, &[s.len], &gs[i]);
                    let st = &mut states[i];
                    adamw::adamw_step_into(&o, &own[i], &grad, st, s.decay, &norm, max_norm as f32)
                        .unwrap();
                    let (p, m, v, step) = &mut refs[i];
                    adamw::adamw_step_ref(&o, p, &gs[i], m, v, step, s.decay, nv, max_norm);
                }
            }
            assert_eq!((group.step(), group2.step()), (4, 4), "{what}");
            let (w, w2) = (bits(&values), bits(&values2));
            let (m_all, v_all) = pollster::block_on(group.moments()).unwrap();
            for (i, s) in spans.iter().enumerate() {
                let r = s.at..s.at + s.len;
                let at = format!("{what} parameter {i} ({} elements)", s.len);
                // Bit for bit: the one dispatch does each element's arithmetic as the per-parameter
                // kernel does, and so does the CPU loop.
                assert_eq!(
                    w[r.clone()],
                    bits(&own[i])[..],
                    "{at}: values vs own tensors"
                );
                assert_eq!(w[r.clone()], w2[r.clone()], "{at}: values vs views");
                assert_eq!(bits(&group.m(i).unwrap()), bits(states[i].m()), "{at}: m");
                assert_eq!(bits(&group.v(i).unwrap()), bits(states[i].v()), "{at}: v");
                assert_eq!(
                    bits(&group.m(i).unwrap()),
                    bits(&group2.m(i).unwrap()),
                    "{at}"
                );
                assert_eq!(
                    bits(&group.v(i).unwrap()),
                    bits(&group2.v(i).unwrap()),
                    "{at}"
                );
                let (p, m, v, step) = &refs[i];
                assert_eq!(*step, 4, "{at}");
                let f = |x: &[f32]| to_f64(x);
                let got = f(&values.read().unwrap()[r.clone()]);
                assert_close(&format!("{at}: param"), &got, p, 1e-5, 1e-6);
                assert_close(&format!("{at}: m"), &f(&m_all[r.clone()]), m, 1e-4, 1e-7);
                assert_close(&format!("{at}: v"), &f(&v_all[r]), v, 1e-4, 1e-9);
            }
            // Nothing between the spans is touched.
            let mut end = 0;
            for s in spans.iter().chain([&Span {
                at: len,
                len: 0,
                decay: false,
            }]) {
                for k in end..s.at {
                    assert_eq!(w[k], GAP.to_bits(), "{what}: gap element {k} written");
                    assert_eq!((m_all[k], v_all[k]), (0.0, 0.0), "{what}: gap moment {k}");
                }
                end = s.at + s.len;
            }
        }
    }
}

#[test]
fn adamw_arena_step_should_reject_bad_arguments() {
    let (spans, len) = adamw::spans(&PARAMS);
    for g in devices() {
        let kind = g.kind();
        let opt = AdamW::default();
        let norm = Tensor::from_f32(&g, &[1], &[1.0]).unwrap();
        let mut group = AdamGroup::new(&g, spans.clone(), len).unwrap();
        let w = Tensor::zeros(&g, &[len]).unwrap();
        let d = Tensor::zeros(&g, &[len]).unwrap();
        let short = Tensor::zeros(&g, &[len - 1]).unwrap();
        let norm2 = Tensor::zeros(&g, &[2]).unwrap();
        for (case, res) in [
            (
                "short values",
                adamw::adamw_arena_step_into(&opt, &short, &d, &mut group, &norm, 1.0),
            ),
            (
                "short gradients",
                adamw::adamw_arena_step_into(&opt, &w, &short, &mut group, &norm, 1.0),
            ),
            (
                "values as gradients",
                adamw::adamw_arena_step_into(&opt, &w, &w, &mut group, &norm, 1.0),
            ),
            (
                "two-element norm",
                adamw::adamw_arena_step_into(&opt, &w, &d, &mut group, &norm2, 1.0),
            ),
            (
                "zero max_norm",
                adamw::adamw_arena_step_into(&opt, &w, &d, &mut group, &norm, 0.0),
            ),
            (
                "one value for six parameters",
                adamw::adamw_each_step_into(&opt, &[&w], &[&d], &mut group, &norm, 1.0),
            ),
        ] {
            assert!(res.is_err(), "{kind}: {case} accepted");
        }
        assert_eq!(group.step(), 0, "{kind}: a rejected step does not count");
        // Spans that no arena layout gives: unaligned, overlapping, past the end, empty.
        for bad in [
            vec![Span {
                at: 1,
                len: 3,
                decay: true,
            }],
            vec![
                Span {
                    at: 0,
                    len: 100,
                    decay: true,
                },
                Span {
                    at: 64,
                    len: 3,
                    decay: true,
                },
            ],
            vec![Span {
                at: 0,
                len: len + 1,
                decay: true,
            }],
            vec![Span {
                at: 0,
                len: 0,
                decay: true,
            }],
        ] {
            let err = AdamGroup::new(&g, bad.clone(), len).err().expect("refused");
            assert!(
                err.to_string().contains("adamw::spans"),
                "{kind} {bad:?}: {err}"
            );
        }
        // A view must start at an aligned element and stay inside its tensor.
        assert!(matches!(w.view(3, &[2]), Err(Error::Shape(_))), "{kind}");
        assert!(matches!(w.view(64, &[len]), Err(Error::Shape(_))), "{kind}");
        assert!(!w
            .view(0, &[64])
            .unwrap()
            .same_buffer(&w.view(64, &[64]).unwrap()));
        assert!(w
            .view(0, &[65])
            .unwrap()
            .same_buffer(&w.view(64, &[64]).unwrap()));
    }
}

/// A training state saved by the per-parameter optimizer (`tests/fixtures/resume/`: three steps of
/// a tiny model on the CPU backend, written by `Trainer::state_to_bytes` when each parameter had its
/// own moments, with the losses that code gave after resuming it) resumes on both backends with
/// the same losses. The tolerance is `resume.rs`'s across backends: a lost or misplaced moment
/// changes these losses by 1e-3 or more.
#[test]
fn a_training_state_saved_per_parameter_resumes_with_its_losses() {
    use attnlab::data::{generate, CharCorruptionDataset, Vocab};
    use attnlab::model::{checkpoint, GptConfig, Variant};
    use attnlab::train::{Hooks, Progress, RunData, Session, TrainConfig, Trainer};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/resume");
    let bytes = std::fs::read(format!("{dir}/vanilla-3-steps.state")).unwrap();
    let want: Vec<(u64, f32)> = std::fs::read_to_string(format!("{dir}/vanilla-3-steps.losses"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].parse().unwrap(),
                f32::from_bits(u32::from_str_radix(f[1], 16).unwrap()),
            )
        })
        .filter(|&(step, _)| step > 3)
        .collect();
    assert_eq!(want.len(), 3);
    let c = generate(3, 10);
    let vocab = Vocab::from_text(&c.wiki, "wiki.txt").unwrap();
    let data = CharCorruptionDataset::new(&c.wiki, "wiki.txt", &vocab, 5).unwrap();
    let mcfg = GptConfig {
        n_layer: 1,
        n_head: 2,
        n_embd: 16,
        ..GptConfig::tiny(Variant::Vanilla, vocab.len())
    };
    let tc = TrainConfig {
        batch_size: 4,
        max_epochs: 10,
        warmup_tokens: 1000.0,
        final_tokens: 20_000.0,
        max_steps: Some(6),
        ..TrainConfig::pretrain()
    };
    for dev in devices() {
        let kind = dev.kind();
        let (model, _) = checkpoint::from_bytes(&dev, &bytes, Some(&mcfg), "state").unwrap();
        let tr = Trainer::resume(model, tc.clone(), &bytes, "state").unwrap();
        assert_eq!(tr.steps, 3, "{kind}");
        let mut got = vec![];
        let clock = || 0.0;
        let mut on = |p: Progress| got.push((p.step, p.loss));
        let mut hooks = Hooks {
            every: 1,
            clock: &clock,
            on_progress: &mut on,
            on_epoch_end: None,
        };
        let mut session = Session {
            trainer: tr,
            data: RunData::Pretrain(data.clone()),
            vocab: vocab.clone(),
        };
        pollster::block_on(session.run_to_end(&mut hooks)).unwrap();
        assert_eq!(got.len(), want.len(), "{kind}");
        for ((s1, a), (s2, b)) in got.iter().zip(&want) {
            assert_eq!(s1, s2, "{kind}");
            assert!(
                (a - b).abs() <= 1e-5 * b.abs(),
                "{kind} step {s1}: {a}, saved run {b}"
            );
        }
    }
}

/// On the GPU a training step zeroes the gradients, takes their norm and steps AdamW in a few
/// dispatches over the arenas, whatever the number of parameters; a model whose gradients left the
/// arena (dropped and made anew) falls back to a dispatch per parameter and the same update.
/// Prints both counts for the tiny and the assignment's model (BENCHMARKS.md).
#[test]
fn a_gpu_training_step_updates_all_parameters_in_a_few_dispatches() {
    use attnlab::model::{Gpt, GptConfig, Variant};
    use attnlab::train::{TrainConfig, Trainer};
    let g = gpu();
    for (size, cfg) in [
        ("tiny", GptConfig::tiny(Variant::Vanilla, 40)),
        ("assignment", GptConfig::assignment(Variant::Vanilla, 40)),
    ] {
        let (rows, t) = (1, 31);
        let x: Vec<u32> = (0..rows * t).map(|i| (i % 38 + 2) as u32).collect();
        let mut tr =
            Trainer::new(Gpt::new(&g, cfg, 1).unwrap(), TrainConfig::pretrain(), 0).unwrap();
        let per_step = |tr: &mut Trainer| {
            tr.step(&x, &x, rows, t).unwrap().read().unwrap();
            let before = g.stats().dispatches;
            let loss = tr.step(&x, &x, rows, t).unwrap().read().unwrap()[0];
            assert!(loss.is_finite(), "{size}");
            g.stats().dispatches - before
        };
        let arena = per_step(&mut tr);
        let n = tr.model.params.len() as u64;
        for p in &tr.model.params {
            p.var.drop_grad();
            p.var.grad_or_zeros().unwrap();
        }
        let each = per_step(&mut tr);
        println!(
            "{size}: {n} parameters, {each} dispatches a step per parameter, {arena} over arenas"
        );
        // Per parameter: a zeroing, at least one norm pass and an AdamW dispatch each, where the
        // arenas take one zeroing, the norm's passes over one tensor and one AdamW dispatch.
        assert!(
            each >= arena + 3 * n - 6,
            "{size}: {each} vs {arena} for {n} parameters"
        );
    }
}
