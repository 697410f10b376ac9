//! Attention: the fused kernels on the GPU device, forward (o and the row logsumexp) and backward
//! (accumulating into pre-filled gradients) vs the f64 reference at odd lengths and head sizes
//! 8–64, the dropout mask equal to the dropout op's, the unfused path's numbers; the reference
//! backward vs central differences; `causal_attention` on both backends vs the reference (the CPU
//! backend's bit for bit the composed ops', and the GPU's too with `set_fused_attention(false)`), a
//! tensor used three times, and the shape errors.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::attention::{self as at, Dims};
use attnlab::ops::{dropout, reduce, softmax};
use attnlab::Tensor;
use std::rc::Rc;

/// (B, T, NH, HS): T of 1, 3, 17 and 127, head sizes 8 to 64, a block past one tile of 64 rows.
const CASES: &[(usize, usize, usize, usize)] = &[
    (1, 1, 1, 8),
    (2, 3, 2, 8),
    (1, 17, 3, 16),
    (2, 127, 2, 64),
    (3, 65, 1, 24),
];

fn dims(&(b, t, nh, hs): &(usize, usize, usize, usize)) -> Dims {
    Dims { b, t, nh, hs }
}

/// Scattered dropout keys for the (B·NH·T) attention rows.
fn keys(d: Dims) -> Vec<u32> {
    (0..(d.b * d.nh * d.t) as u32)
        .map(|r| r.wrapping_mul(2_654_435_761) ^ 11)
        .collect()
}

fn u32s(g: &Rc<attnlab::Device>, x: &[u32]) -> Tensor {
    Tensor::from_u32(g, &[x.len()], x).unwrap()
}

/// q, k, v, dout (B·T, C) from `seed`, scaled so the softmax is neither flat nor one-hot.
fn inputs(d: Dims, seed: u64) -> [Vec<f64>; 4] {
    let n = d.b * d.t * d.c();
    let big = |s| uniform(s, n).iter().map(|v| 2.0 * v).collect::<Vec<_>>();
    [
        big(seed),
        big(seed + 1),
        uniform(seed + 2, n),
        uniform(seed + 3, n),
    ]
}

#[test]
fn attention_forward_should_match_reference() {
    {
        let g = gpu();
        for case in CASES {
            for (p, seed) in [(0.0f32, 0u32), (0.1, 77)] {
                let d = dims(case);
                let [q, k, v, _] = inputs(d, 5);
                let ks = keys(d);
                let (o, lse) = at::attention_ref(&q, &k, &v, &ks, d, p, seed);
                let shape = [d.b * d.t, d.c()];
                let to = Tensor::uninit(&g, &shape).unwrap();
                let stats = Tensor::uninit(&g, &[d.b * d.t, d.nh, 2]).unwrap();
                let (tq, tk, tv) = (
                    upload(&g, &shape, &q),
                    upload(&g, &shape, &k),
                    upload(&g, &shape, &v),
                );
                at::attention_into(&tq, &tk, &tv, &u32s(&g, &ks), &to, &stats, d, p, seed).unwrap();
                let what = format!("{} {d:?} p {p}", g.kind());
                assert_close(&format!("{what} o"), &download(&to), &o, 1e-5, 1e-5);
                let got_lse: Vec<f64> = download(&stats).iter().step_by(2).cloned().collect();
                assert_close(&format!("{what} L"), &got_lse, &lse, 1e-5, 1e-5);
            }
        }
    }
}

#[test]
fn attention_backward_should_match_reference() {
    {
        let g = gpu();
        for case in CASES {
            for (p, seed) in [(0.0f32, 0u32), (0.1, 78)] {
                let d = dims(case);
                let [q, k, v, dout] = inputs(d, 9);
                let ks = keys(d);
                let n = q.len();
                let pre = [uniform(20, n), uniform(21, n), uniform(22, n)];
                let [mut dq, mut dk, mut dv] = pre.clone();
                at::attention_backward_ref(
                    &q, &k, &v, &dout, &ks, d, p, seed, &mut dq, &mut dk, &mut dv,
                );
                let shape = [d.b * d.t, d.c()];
                let up = |x: &[f64]| upload(&g, &shape, x);
                let (tq, tk, tv, tdo) = (up(&q), up(&k), up(&v), up(&dout));
                let tkeys = u32s(&g, &ks);
                let to = Tensor::uninit(&g, &shape).unwrap();
                let stats = Tensor::uninit(&g, &[d.b * d.t, d.nh, 2]).unwrap();
                at::attention_into(&tq, &tk, &tv, &tkeys, &to, &stats, d, p, seed).unwrap();
                let (tdq, tdk, tdv) = (up(&pre[0]), up(&pre[1]), up(&pre[2]));
                at::attention_backward_into(
                    &tq, &tk, &tv, &to, &tdo, &tkeys, &stats, &tdq, &tdk, &tdv, d, p, seed,
                )
                .unwrap();
                let what = format!("{} {d:?} p {p}", g.kind());
                assert_close(&format!("{what} dq"), &download(&tdq), &dq, 1e-4, 1e-5);
                assert_close(&format!("{what} dk"), &download(&tdk), &dk, 1e-4, 1e-5);
                assert_close(&format!("{what} dv"), &download(&tdv), &dv, 1e-4, 1e-5);
            }
        }
    }
}

#[test]
fn attention_reference_backward_should_match_finite_differences() {
    for (d, p) in [
        (
            Dims {
                b: 2,
                t: 5,
                nh: 2,
                hs: 3,
            },
            0.0f32,
        ),
        (
            Dims {
                b: 1,
                t: 7,
                nh: 1,
                hs: 4,
            },
            0.3,
        ),
    ] {
        let [q, k, v, dout] = inputs(d, 31);
        let ks = keys(d);
        let n = q.len();
        let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        at::attention_backward_ref(&q, &k, &v, &dout, &ks, d, p, 5, &mut dq, &mut dk, &mut dv);
        let f = |q: &[f64], k: &[f64], v: &[f64]| {
            dot(&at::attention_ref(q, k, v, &ks, d, p, 5).0, &dout)
        };
        check_fd(&format!("dq {d:?} p {p}"), &q, &dq, |x| f(x, &k, &v), 200);
        check_fd(&format!("dk {d:?} p {p}"), &k, &dk, |x| f(&q, x, &v), 200);
        check_fd(&format!("dv {d:?} p {p}"), &v, &dv, |x| f(&q, &k, x), 200);
    }
}

/// With one-hot values (v_j = e_j, HS = T) the output is P ⊙ M · scale itself: zero exactly where
/// the mask drops, which must be where the dropout op drops a (B, NH, T, T) tensor of ones.
#[test]
fn attention_dropout_mask_should_be_the_dropout_ops() {
    {
        let g = gpu();
        let d = Dims {
            b: 2,
            t: 16,
            nh: 2,
            hs: 16,
        };
        let (p, seed) = (0.3f32, 4242u32);
        let ks = keys(d);
        let c = d.c();
        let shape = [d.b * d.t, c];
        let q = uniform(40, d.b * d.t * c);
        let v: Vec<f64> = (0..d.b * d.t * c)
            .map(|x| ((x / c) % d.t == x % d.hs) as u8 as f64)
            .collect();
        let to = Tensor::uninit(&g, &shape).unwrap();
        let stats = Tensor::uninit(&g, &[d.b * d.t, d.nh, 2]).unwrap();
        let (tq, tv) = (upload(&g, &shape, &q), upload(&g, &shape, &v));
        at::attention_into(&tq, &tq, &tv, &u32s(&g, &ks), &to, &stats, d, p, seed).unwrap();
        let o = download(&to);
        let att = [d.b, d.nh, d.t, d.t];
        let ones = Tensor::full(&g, &att, 1.0).unwrap();
        let masked = Tensor::uninit(&g, &att).unwrap();
        dropout::dropout_into(&ones, &masked, &u32s(&g, &ks), p, seed).unwrap();
        let m = download(&masked);
        let mut dropped = 0;
        for b in 0..d.b {
            for h in 0..d.nh {
                for i in 0..d.t {
                    for j in 0..=i {
                        let kept_fused = o[(b * d.t + i) * c + h * d.hs + j] != 0.0;
                        let kept_op = m[((b * d.nh + h) * d.t + i) * d.t + j] != 0.0;
                        assert_eq!(kept_fused, kept_op, "{} b {b} h {h} i {i} j {j}", g.kind());
                        dropped += !kept_op as usize;
                    }
                }
            }
        }
        assert!(dropped > 0, "{}: p = {p} dropped nothing", g.kind());
    }
}

/// The fused op on the tape gives the unfused path's output and gradients (scores, causal softmax,
/// dropout, mix): the GPT's numbers do not change with the backend.
#[test]
fn attention_should_give_the_unfused_paths_numbers() {
    {
        let g = gpu();
        let d = Dims {
            b: 2,
            t: 33,
            nh: 2,
            hs: 16,
        };
        let (p, seed) = (0.1f32, 99u32);
        let [q, k, v, _] = inputs(d, 50);
        let shape = [d.b * d.t, d.c()];
        let tkeys = u32s(&g, &keys(d));
        let run = |fused: bool| {
            let leaf = |x: &[f64]| Var::leaf(upload(&g, &shape, x), true);
            let (vq, vk, vv) = (leaf(&q), leaf(&k), leaf(&v));
            let tape = Tape::new();
            let o = if fused {
                at::attention(&tape, &vq, &vk, &vv, &tkeys, d, p, seed).unwrap()
            } else {
                let s = at::scores(&tape, &vq, &vk, d).unwrap();
                let a = softmax::causal_softmax(&tape, &s, 1.0).unwrap();
                let a = dropout::dropout(&tape, &a, &tkeys, p, seed).unwrap();
                at::mix(&tape, &a, &vv, d).unwrap()
            };
            // GELU before the sum, so the upstream gradient differs between elements.
            let y = attnlab::ops::elementwise::gelu(&tape, &o).unwrap();
            let loss = reduce::sum(&tape, &y).unwrap();
            tape.backward(&loss).unwrap();
            [
                download(o.value()),
                download(&vq.grad().unwrap()),
                download(&vk.grad().unwrap()),
                download(&vv.grad().unwrap()),
            ]
        };
        let (fused, unfused) = (run(true), run(false));
        for (name, (a, b)) in ["o", "dq", "dk", "dv"]
            .iter()
            .zip(fused.iter().zip(&unfused))
        {
            assert_close(&format!("{} {name}", g.kind()), a, b, 1e-4, 1e-5);
        }
    }
}

/// q, k and v one variable: its gradient is the sum of the three.
#[test]
fn attention_on_the_tape_should_sum_the_gradients_of_a_tensor_used_three_times() {
    for g in devices() {
        let d = Dims {
            b: 1,
            t: 9,
            nh: 2,
            hs: 8,
        };
        let x = uniform(60, d.b * d.t * d.c());
        let ks = keys(d);
        let vx = Var::leaf(upload(&g, &[d.b * d.t, d.c()], &x), true);
        let tape = Tape::new();
        let o = at::causal_attention(&tape, &vx, &vx, &vx, &u32s(&g, &ks), d, 0.2, 3).unwrap();
        let loss = reduce::sum(&tape, &o).unwrap();
        tape.backward(&loss).unwrap();
        let n = x.len();
        let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        at::attention_backward_ref(
            &x,
            &x,
            &x,
            &vec![1.0; n],
            &ks,
            d,
            0.2,
            3,
            &mut dq,
            &mut dk,
            &mut dv,
        );
        let want: Vec<f64> = (0..n).map(|i| dq[i] + dk[i] + dv[i]).collect();
        assert_close(
            &format!("{} dx", g.kind()),
            &download(&vx.grad().unwrap()),
            &want,
            1e-4,
            1e-5,
        );
    }
}

/// `causal_attention` on the tape, on each backend (fused on the GPU up to HS 64 with fusing on,
/// as a hardware adapter has it, composed on the CPU and past HS 64): output and gradients vs the
/// f64 reference; on the CPU backend the output and gradients are bit for bit the composed ops'
/// (scores, causal_softmax, dropout, mix).
#[test]
fn causal_attention_should_match_reference_on_both_backends() {
    for g in devices() {
        g.set_fused_attention(true);
        for (case, p) in [
            ((2, 17, 2, 16), 0.1f32),
            ((1, 9, 1, 72), 0.0),
            ((2, 70, 1, 32), 0.3),
        ] {
            let d = dims(&case);
            let [q, k, v, _] = inputs(d, 70);
            let ks = keys(d);
            let shape = [d.b * d.t, d.c()];
            let tkeys = u32s(&g, &ks);
            let run = |composed: bool| {
                let leaf = |x: &[f64]| Var::leaf(upload(&g, &shape, x), true);
                let (vq, vk, vv) = (leaf(&q), leaf(&k), leaf(&v));
                let tape = Tape::new();
                let o = if composed {
                    let s = at::scores(&tape, &vq, &vk, d).unwrap();
                    let a = softmax::causal_softmax(&tape, &s, 1.0).unwrap();
                    let a = match p > 0.0 {
                        true => dropout::dropout(&tape, &a, &tkeys, p, 8).unwrap(),
                        false => a,
                    };
                    at::mix(&tape, &a, &vv, d).unwrap()
                } else {
                    at::causal_attention(&tape, &vq, &vk, &vv, &tkeys, d, p, 8).unwrap()
                };
                let loss = reduce::sum(&tape, &o).unwrap();
                tape.backward(&loss).unwrap();
                [
                    o.value().clone(),
                    vq.grad().unwrap(),
                    vk.grad().unwrap(),
                    vv.grad().unwrap(),
                ]
                .map(|t| download(&t))
            };
            let got = run(false);
            let n = q.len();
            let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            let ones = vec![1.0; n];
            at::attention_backward_ref(&q, &k, &v, &ones, &ks, d, p, 8, &mut dq, &mut dk, &mut dv);
            let want = [at::attention_ref(&q, &k, &v, &ks, d, p, 8).0, dq, dk, dv];
            let what = format!("{} {d:?} p {p}", g.kind());
            for (name, (a, b)) in ["o", "dq", "dk", "dv"].iter().zip(got.iter().zip(&want)) {
                assert_close(&format!("{what} {name}"), a, b, 1e-4, 1e-5);
            }
            assert_eq!(
                at::fuses(&g, d.hs),
                g.kind() == "gpu" && d.hs <= 64,
                "{what}"
            );
            if g.kind() == "cpu" {
                let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                for (name, (a, b)) in ["o", "dq", "dk", "dv"]
                    .iter()
                    .zip(got.iter().zip(&run(true)))
                {
                    assert_eq!(
                        bits(a),
                        bits(b),
                        "{what} {name}: not the composed ops' bits"
                    );
                }
            }
        }
    }
}

/// The fused kernels are the GPU backend's: on the CPU backend they are refused with the entry
/// point to use.
#[test]
fn attention_kernels_should_be_refused_on_the_cpu_backend() {
    let g = attnlab::Device::cpu();
    let d = Dims {
        b: 1,
        t: 2,
        nh: 1,
        hs: 8,
    };
    let shape = [d.b * d.t, d.c()];
    let z = |s: &[usize]| Tensor::zeros(&g, s).unwrap();
    let (q, o, stats) = (z(&shape), z(&shape), z(&[d.b * d.t, d.nh, 2]));
    let ks = u32s(&g, &keys(d));
    let e = at::attention_into(&q, &q, &q, &ks, &o, &stats, d, 0.0, 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("GPU backend only") && e.contains("causal_attention"),
        "{e}"
    );
    let (dq, dk, dv) = (z(&shape), z(&shape), z(&shape));
    let e = at::attention_backward_into(&q, &q, &q, &o, &o, &ks, &stats, &dq, &dk, &dv, d, 0.0, 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GPU backend only"), "{e}");
}

#[test]
fn attention_should_refuse_bad_shapes() {
    {
        let g = gpu();
        let d = Dims {
            b: 2,
            t: 5,
            nh: 2,
            hs: 8,
        };
        let shape = [d.b * d.t, d.c()];
        let z = |s: &[usize]| Tensor::zeros(&g, s).unwrap();
        let (q, o, stats) = (z(&shape), z(&shape), z(&[d.b * d.t, d.nh, 2]));
        let ks = u32s(&g, &keys(d));
        let err = |r: attnlab::Result<()>| r.unwrap_err().to_string();
        let e = err(at::attention_into(
            &z(&[9, 16]),
            &q,
            &q,
            &ks,
            &o,
            &stats,
            d,
            0.0,
            0,
        ));
        assert!(e.contains("(B·T, C)"), "{e}");
        let wide = Dims { hs: 65, nh: 1, ..d };
        let e = err(at::attention_into(
            &q, &q, &q, &ks, &o, &stats, wide, 0.0, 0,
        ));
        assert!(e.contains("head size 65"), "{e}");
        let e = err(at::attention_into(
            &q,
            &q,
            &q,
            &u32s(&g, &[1, 2]),
            &o,
            &stats,
            d,
            0.1,
            0,
        ));
        assert!(e.contains("dropout keys"), "{e}");
        let e = err(at::attention_into(&q, &q, &q, &ks, &o, &stats, d, 1.0, 0));
        assert!(e.contains("[0, 1)"), "{e}");
        let e = err(at::attention_into(&q, &q, &q, &ks, &o, &z(&[3]), d, 0.0, 0));
        assert!(e.contains("stats"), "{e}");
        let e = err(at::attention_into(&q, &q, &q, &ks, &q, &stats, d, 0.0, 0));
        assert!(e.contains("shares its buffer"), "{e}");
        let e = err(at::attention_into(
            &q,
            &q,
            &q,
            &ks,
            &o,
            &stats,
            Dims { t: 0, ..d },
            0.0,
            0,
        ));
        assert!(e.contains("positive"), "{e}");
    }
}

/// `Device::set_fused_attention(false)` on the GPU (the default on a software adapter):
/// `causal_attention` is then the composed ops bit for bit (output and gradients), with more
/// dispatches than the fused kernels' run; both settings match the f64 reference. On the CPU
/// backend the setting changes nothing.
#[test]
fn causal_attention_should_compose_on_the_gpu_when_fusing_is_turned_off() {
    let g = gpu();
    let d = dims(&(2, 17, 2, 16));
    let p = 0.1f32;
    let [q, k, v, _] = inputs(d, 80);
    let ks = keys(d);
    let shape = [d.b * d.t, d.c()];
    let tkeys = u32s(&g, &ks);
    // Output and gradients of q, k, v, and the dispatches the forward and backward took.
    let run = |composed: bool| {
        let leaf = |x: &[f64]| Var::leaf(upload(&g, &shape, x), true);
        let (vq, vk, vv) = (leaf(&q), leaf(&k), leaf(&v));
        let tape = Tape::new();
        let before = g.stats().dispatches;
        let o = if composed {
            let s = at::scores(&tape, &vq, &vk, d).unwrap();
            let a = softmax::causal_softmax(&tape, &s, 1.0).unwrap();
            let a = dropout::dropout(&tape, &a, &tkeys, p, 8).unwrap();
            at::mix(&tape, &a, &vv, d).unwrap()
        } else {
            at::causal_attention(&tape, &vq, &vk, &vv, &tkeys, d, p, 8).unwrap()
        };
        let loss = reduce::sum(&tape, &o).unwrap();
        tape.backward(&loss).unwrap();
        let dispatches = g.stats().dispatches - before;
        let out = [
            o.value().clone(),
            vq.grad().unwrap(),
            vk.grad().unwrap(),
            vv.grad().unwrap(),
        ]
        .map(|t| download(&t));
        (out, dispatches)
    };
    let n = q.len();
    let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    at::attention_backward_ref(
        &q,
        &k,
        &v,
        &vec![1.0; n],
        &ks,
        d,
        p,
        8,
        &mut dq,
        &mut dk,
        &mut dv,
    );
    let want = [at::attention_ref(&q, &k, &v, &ks, d, p, 8).0, dq, dk, dv];
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let names = ["o", "dq", "dk", "dv"];

    // The default: fused on a hardware adapter, composed on a software one (lavapipe here).
    assert_eq!(g.fused_attention(), !g.is_software_gpu());
    g.set_fused_attention(true);
    assert!(at::fuses(&g, d.hs));
    let (fused, fused_n) = run(false);
    g.set_fused_attention(false);
    assert!(!g.fused_attention() && !at::fuses(&g, d.hs));
    let (off, off_n) = run(false);
    let (composed, composed_n) = run(true);
    for (name, ((f, o), (c, w))) in names
        .iter()
        .zip(fused.iter().zip(&off).zip(composed.iter().zip(&want)))
    {
        assert_close(&format!("fused {name}"), f, w, 1e-4, 1e-5);
        assert_close(&format!("off {name}"), o, w, 1e-4, 1e-5);
        assert_eq!(bits(o), bits(c), "off {name}: not the composed ops' bits");
    }
    assert_eq!(off_n, composed_n, "off: not the composed ops' dispatches");
    assert!(
        fused_n < off_n,
        "fused: {fused_n} dispatches, composed: {off_n}"
    );
    g.set_fused_attention(true);
    assert!(at::fuses(&g, d.hs) && !at::fuses(&g, at::HS_MAX + 1));

    let c = attnlab::Device::cpu();
    c.set_fused_attention(true);
    assert!(!at::fuses(&c, d.hs), "the CPU backend has no fused kernels");
}
