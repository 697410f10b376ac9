//! Cross-entropy with ignore_index 0 on both backends: forward and backward vs the f64 reference,
//! finite differences, all-ignored rows, out-of-range targets.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::cross_entropy as ce;
use attnlab::Tensor;
use rand::{rngs::SmallRng, Rng, SeedableRng};

const SHAPES: &[(usize, usize)] = &[(1, 1), (5, 3), (127, 17), (5, 256), (127, 256), (1, 17)];

/// Targets with roughly one in four rows ignored (id 0), the rest in 1..V.
fn targets(seed: u64, n: usize, v: usize) -> Vec<u32> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            if v == 1 || r.gen_bool(0.25) {
                0
            } else {
                r.gen_range(1..v as u32)
            }
        })
        .collect()
}

fn logits(seed: u64, n: usize) -> Vec<f64> {
    uniform(seed, n).iter().map(|x| 6.0 * x).collect()
}

/// Runs forward then backward on `g0` through the tape (upstream gradient 1), accumulating
/// into a gradient pre-filled with `pre`.
fn run(
    g0: &std::rc::Rc<attnlab::Device>,
    x: &[f64],
    t: &[u32],
    n: usize,
    v: usize,
    pre: &[f64],
) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let vx = Var::leaf(upload(g0, &[n, v], x), true);
    vx.grad_or_zeros().unwrap().write_f32(&to_f32(pre)).unwrap();
    let tt = Tensor::from_u32(g0, &[n], t).unwrap();
    let loss = ce::cross_entropy(&tape, &vx, &tt).unwrap();
    assert_eq!(loss.shape(), &[1]);
    tape.backward(&loss).unwrap();
    (download(loss.value())[0], download(&vx.grad().unwrap()))
}

#[test]
fn cross_entropy_forward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &(n, v) in SHAPES {
            let (x, t) = (logits(1 + n as u64, n * v), targets(2 + v as u64, n, v));
            let want = ce::cross_entropy_ref(&x, &t, v);
            let loss = Tensor::uninit(&g, &[1]).unwrap();
            let stats = Tensor::uninit(&g, &[3 * n + 1]).unwrap();
            ce::cross_entropy_into(
                &upload(&g, &[n, v], &x),
                &Tensor::from_u32(&g, &[n], &t).unwrap(),
                &loss,
                &stats,
            )
            .unwrap();
            assert_close(
                &format!("{kind} loss n={n} v={v}"),
                &download(&loss),
                &[want],
                1e-5,
                1e-5,
            );
        }
    }
}

#[test]
fn cross_entropy_backward_should_match_reference() {
    for (g, kind) in row_devices() {
        for &(n, v) in SHAPES {
            let (x, t, pre) = (
                logits(3 + n as u64, n * v),
                targets(4 + v as u64, n, v),
                uniform(5, n * v),
            );
            let dloss = -0.7;
            let mut want = pre.clone();
            ce::cross_entropy_backward_ref(&x, &t, v, dloss, &mut want);
            let (tx, tt) = (
                upload(&g, &[n, v], &x),
                Tensor::from_u32(&g, &[n], &t).unwrap(),
            );
            let (loss, stats) = (
                Tensor::uninit(&g, &[1]).unwrap(),
                Tensor::uninit(&g, &[3 * n + 1]).unwrap(),
            );
            ce::cross_entropy_into(&tx, &tt, &loss, &stats).unwrap();
            let tdx = upload(&g, &[n, v], &pre);
            ce::cross_entropy_backward_into(&tx, &tt, &stats, &upload(&g, &[1], &[dloss]), &tdx)
                .unwrap();
            assert_close(
                &format!("{kind} dlogits n={n} v={v}"),
                &download(&tdx),
                &want,
                1e-4,
                1e-5,
            );
            // And through the tape (upstream grad 1, accumulating into a pre-filled grad).
            let mut want1 = pre.clone();
            ce::cross_entropy_backward_ref(&x, &t, v, 1.0, &mut want1);
            let (l, d) = run(&g, &x, &t, n, v, &pre);
            assert_close(
                &format!("{kind} tape loss"),
                &[l],
                &[ce::cross_entropy_ref(&x, &t, v)],
                1e-5,
                1e-5,
            );
            assert_close(&format!("{kind} tape dlogits"), &d, &want1, 1e-4, 1e-5);
        }
    }
}

#[test]
fn cross_entropy_backward_should_match_finite_differences() {
    for &(n, v) in &SHAPES[..4] {
        let (x, t) = (logits(6 + n as u64, n * v), targets(7 + v as u64, n, v));
        let mut d = vec![0.0; n * v];
        ce::cross_entropy_backward_ref(&x, &t, v, 1.3, &mut d);
        check_fd(
            "dlogits",
            &x,
            &d,
            |x| 1.3 * ce::cross_entropy_ref(x, &t, v),
            60,
        );
    }
}

#[test]
fn cross_entropy_all_ignored_gives_zero_loss_and_zero_grad() {
    for (g, kind) in row_devices() {
        let (n, v) = (5, 17);
        let (l, d) = run(&g, &logits(8, n * v), &[0; 5], n, v, &vec![0.0; n * v]);
        assert!(l == 0.0, "{kind}: loss {l}");
        assert!(d.iter().all(|&x| x == 0.0), "{kind}: a gradient is not 0");
    }
}

/// Targets ≥ V: both backends' kernels ignore those rows (never reading out of bounds), and
/// `check_targets` rejects them where the ids are still on the host.
#[test]
fn cross_entropy_out_of_range_targets_are_ignored_by_the_kernels_and_rejected_by_check_targets() {
    let (n, v) = (3, 17);
    let x = logits(9, n * v);
    let t = [5u32, 17, 1000];
    for (g, kind) in row_devices() {
        let (l, d) = run(&g, &x, &t, n, v, &vec![0.0; n * v]);
        assert_close(
            &format!("{kind} loss"),
            &[l],
            &[ce::cross_entropy_ref(&x, &[5, 0, 0], v)],
            1e-5,
            1e-5,
        );
        assert!(
            d[v..].iter().all(|&x| x == 0.0),
            "{kind}: an ignored row has a gradient"
        );
        let tape = Tape::new();
        let bad = Tensor::from_u32(&g, &[4], &[1, 2, 3, 4]).unwrap();
        let err = ce::cross_entropy(&tape, &Var::leaf(upload(&g, &[n, v], &x), true), &bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[3, 17]") && err.contains("[4]"),
            "{kind}: {err}"
        );
    }
    let err = ce::check_targets(&t, v).unwrap_err().to_string();
    assert!(err.contains("target[1] = 17"), "{err}");
    assert!(ce::check_targets(&[0, 16], v).is_ok());
}
