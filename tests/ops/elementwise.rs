//! Elementwise on both backends: add, scale, axpy, relu, GELU (exact erf form), forward and backward
//! vs the f64 reference, plus the f64 erf.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::elementwise as ew;
use attnlab::ops::matmul::{self, Spec};
use attnlab::Tensor;

/// Element counts to try: tiny, odd, and not multiples of the 256-thread workgroup.
const SIZES: &[usize] = &[1, 3, 17, 127, 256, 1000, 70_001];

/// Inputs spread over [-4, 4) so GELU's tails and ReLU's kink are both exercised.
fn wide(seed: u64, n: usize) -> Vec<f64> {
    uniform(seed, n).iter().map(|v| 4.0 * v).collect()
}

#[test]
fn erf_matches_known_values() {
    let known = [
        (0.0, 0.0),
        (0.1, 0.1124629160182849),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (2.0, 0.9953222650189527),
        (3.0, 0.9999779095030014),
    ];
    for (x, want) in known {
        assert!(
            (ew::erf(x) - want).abs() < 1e-14,
            "erf({x}) = {} vs {want}",
            ew::erf(x)
        );
        assert!((ew::erf(-x) + want).abs() < 1e-14);
    }
    let tails = [
        (2.5, 4.06952017444959e-4),
        (3.0, 2.209049699858544e-5),
        (5.0, 1.537459794428035e-12),
        (1.0, 0.1572992070502851),
    ];
    for (x, want) in tails {
        assert!(
            (ew::erfc(x) / want - 1.0).abs() < 1e-12,
            "erfc({x}) = {} vs {want}",
            ew::erfc(x)
        );
    }
}

#[test]
fn add_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let (a, b) = (uniform(1, n), uniform(2, n));
            let out = Tensor::uninit(&g, &[n]).unwrap();
            ew::add_into(&upload(&g, &[n], &a), &upload(&g, &[n], &b), &out).unwrap();
            assert_close(
                &format!("{kind} add n={n}"),
                &download(&out),
                &ew::add_ref(&a, &b),
                1e-6,
                1e-6,
            );
        }
    }
}

#[test]
fn scale_and_axpy_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let (a, y) = (uniform(3, n), uniform(4, n));
            let out = Tensor::uninit(&g, &[n]).unwrap();
            ew::scale_into(&upload(&g, &[n], &a), -0.75, &out).unwrap();
            assert_close(
                &format!("{kind} scale n={n}"),
                &download(&out),
                &ew::scale_ref(&a, -0.75),
                1e-6,
                1e-6,
            );
            let ty = upload(&g, &[n], &y);
            ew::axpy_into(&upload(&g, &[n], &a), 0.5, &ty).unwrap();
            assert_close(
                &format!("{kind} axpy n={n}"),
                &download(&ty),
                &ew::add_ref(&y, &ew::scale_ref(&a, 0.5)),
                1e-6,
                1e-6,
            );
            // A tensor added onto itself: y += 2y.
            ew::axpy_into(&ty, 2.0, &ty).unwrap();
            let want: Vec<f64> = y.iter().zip(&a).map(|(y, a)| 3.0 * (y + 0.5 * a)).collect();
            assert_close(
                &format!("{kind} axpy self n={n}"),
                &download(&ty),
                &want,
                1e-6,
                1e-6,
            );
        }
    }
}

#[test]
fn relu_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let mut x = to_f64(&to_f32(&wide(5, n)));
            x[0] = 0.0;
            let out = Tensor::uninit(&g, &[n]).unwrap();
            ew::relu_into(&upload(&g, &[n], &x), &out).unwrap();
            assert_close(
                &format!("{kind} relu n={n}"),
                &download(&out),
                &ew::relu_ref(&x),
                0.0,
                0.0,
            );
        }
    }
}

#[test]
fn gelu_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let mut x = wide(6, n);
            x[0] = -9.0; // deep in the tail: Φ(−9) ≈ 1e-19, still relatively accurate (f32 exp of −41)
            let out = Tensor::uninit(&g, &[n]).unwrap();
            ew::gelu_into(&upload(&g, &[n], &x), &out).unwrap();
            let want = ew::gelu_ref(&to_f64(&to_f32(&x)));
            assert_close(
                &format!("{kind} gelu n={n}"),
                &download(&out),
                &want,
                2e-5,
                1e-30,
            );
        }
    }
}

#[test]
fn relu_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let mut x = wide(7, n);
            x[0] = 0.0;
            let (dout, mut dx) = (uniform(8, n), uniform(9, n));
            let tdx = upload(&g, &[n], &dx);
            ew::relu_backward_into(&upload(&g, &[n], &x), &upload(&g, &[n], &dout), &tdx).unwrap();
            ew::relu_backward_ref(&x, &dout, &mut dx);
            assert_close(
                &format!("{kind} relu dx n={n}"),
                &download(&tdx),
                &dx,
                1e-6,
                1e-6,
            );
        }
    }
}

#[test]
fn gelu_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let x = to_f64(&to_f32(&wide(10, n)));
            let (dout, mut dx) = (uniform(11, n), uniform(12, n));
            let tdx = upload(&g, &[n], &dx);
            ew::gelu_backward_into(&upload(&g, &[n], &x), &upload(&g, &[n], &dout), &tdx).unwrap();
            ew::gelu_backward_ref(&x, &dout, &mut dx);
            assert_close(
                &format!("{kind} gelu dx n={n}"),
                &download(&tdx),
                &dx,
                1e-5,
                1e-6,
            );
        }
    }
}

#[test]
fn relu_backward_should_match_finite_differences() {
    // Keep clear of the kink, where the derivative does not exist.
    let x: Vec<f64> = wide(13, 127)
        .iter()
        .map(|v| if v.abs() < 0.01 { 0.5 } else { *v })
        .collect();
    let dout = uniform(14, 127);
    let mut dx = vec![0.0; 127];
    ew::relu_backward_ref(&x, &dout, &mut dx);
    check_fd("relu", &x, &dx, |x| dot(&ew::relu_ref(x), &dout), 127);
}

#[test]
fn gelu_backward_should_match_finite_differences() {
    let (x, dout) = (wide(15, 127), uniform(16, 127));
    let mut dx = vec![0.0; 127];
    ew::gelu_backward_ref(&x, &dout, &mut dx);
    check_fd("gelu", &x, &dx, |x| dot(&ew::gelu_ref(x), &dout), 127);
}

/// L = Σ y·u as a tape op (a 1×n by n×1 matmul), so `tape.backward` hands `u` to y.
fn dot_loss(tape: &Tape, y: &Var, u: &[f64]) -> Var {
    let n = y.value().numel();
    let vu = Var::leaf(upload(y.device(), &[n, 1], u), false);
    matmul::matmul(
        tape,
        &y.reshape(&[1, n]).unwrap(),
        &vu,
        None,
        Spec::plain(1, n, 1),
        &[1, 1],
    )
    .unwrap()
}

#[test]
fn add_and_scale_backward_should_match_reference() {
    // L = Σ (2.5·(a + b))·u, so da = db = 2.5·u, added to what da already held.
    for g in devices() {
        let kind = g.kind();
        for &n in &[1, 17, 1000] {
            let (a, b, u, da0) = (
                uniform(17, n),
                uniform(18, n),
                uniform(19, n),
                uniform(20, n),
            );
            let tape = Tape::new();
            let (va, vb) = (
                Var::leaf(upload(&g, &[n], &a), true),
                Var::leaf(upload(&g, &[n], &b), true),
            );
            va.grad_or_zeros()
                .unwrap()
                .write_f32(&to_f32(&da0))
                .unwrap();
            let y = ew::scale(&tape, &ew::add(&tape, &va, &vb).unwrap(), 2.5).unwrap();
            assert_close(
                &format!("{kind} scale(add)"),
                &download(y.value()),
                &ew::scale_ref(&ew::add_ref(&a, &b), 2.5),
                1e-6,
                1e-6,
            );
            tape.backward(&dot_loss(&tape, &y, &u)).unwrap();
            let want_b = ew::scale_ref(&u, 2.5);
            assert_close(
                &format!("{kind} da"),
                &download(&va.grad().unwrap()),
                &ew::add_ref(&da0, &want_b),
                1e-5,
                1e-5,
            );
            assert_close(
                &format!("{kind} db"),
                &download(&vb.grad().unwrap()),
                &want_b,
                1e-5,
                1e-5,
            );
        }
    }
}

#[test]
fn add_backward_should_match_finite_differences() {
    let (a, b, u) = (uniform(21, 17), uniform(22, 17), uniform(23, 17));
    // d/da Σ (a+b)·u = u.
    check_fd("add", &a, &u, |a| dot(&ew::add_ref(a, &b), &u), 17);
    check_fd(
        "scale",
        &a,
        &ew::scale_ref(&u, -1.5),
        |a| dot(&ew::scale_ref(a, -1.5), &u),
        17,
    );
}

#[test]
fn a_var_used_twice_gets_the_summed_gradient() {
    // add(x, x) → 2u; relu(x) + gelu(x) → u·(relu' + gelu'); scale(x)+x → 1.5u.
    for g in devices() {
        let kind = g.kind();
        let n = 33;
        let (x, u) = (wide(24, n), uniform(25, n));
        let tape = Tape::new();
        let vx = Var::leaf(upload(&g, &[n], &x), true);
        let y = ew::add(&tape, &vx, &vx).unwrap();
        tape.backward(&dot_loss(&tape, &y, &u)).unwrap();
        assert_close(
            &format!("{kind} add(x, x)"),
            &download(&vx.grad().unwrap()),
            &ew::scale_ref(&u, 2.0),
            1e-6,
            1e-6,
        );

        let vx = Var::leaf(upload(&g, &[n], &x), true);
        let y = ew::add(
            &tape,
            &ew::relu(&tape, &vx).unwrap(),
            &ew::gelu(&tape, &vx).unwrap(),
        )
        .unwrap();
        let y = ew::add(&tape, &y, &ew::scale(&tape, &vx, 0.5).unwrap()).unwrap();
        tape.backward(&dot_loss(&tape, &y, &u)).unwrap();
        let xf = to_f64(&to_f32(&x));
        let mut want = ew::scale_ref(&u, 0.5);
        ew::relu_backward_ref(&xf, &u, &mut want);
        ew::gelu_backward_ref(&xf, &u, &mut want);
        assert_close(
            &format!("{kind} relu+gelu+0.5x"),
            &download(&vx.grad().unwrap()),
            &want,
            1e-5,
            1e-5,
        );
    }
}

#[test]
fn add_rejects_mismatched_shapes() {
    for g in devices() {
        let kind = g.kind();
        let tape = Tape::new();
        let a = Var::leaf(Tensor::zeros(&g, &[2, 3]).unwrap(), true);
        let b = Var::leaf(Tensor::zeros(&g, &[3, 2]).unwrap(), true);
        let err = ew::add(&tape, &a, &b).unwrap_err().to_string();
        assert!(
            err.contains("[2, 3]") && err.contains("[3, 2]"),
            "{kind}: {err}"
        );
        let c = Tensor::zeros(&g, &[5]).unwrap();
        assert!(
            ew::axpy_into(&c, 1.0, a.value()).is_err(),
            "{kind}: axpy of 5 into 6 elements"
        );
    }
}
