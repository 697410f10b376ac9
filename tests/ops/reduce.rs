//! Reductions on both backends: sum and mean (single- and multi-pass on the GPU), their gradients,
//! and the global norm, vs the f64 reference.

use crate::common::*;
use attnlab::autograd::{Tape, Var};
use attnlab::ops::reduce;
use attnlab::Tensor;

/// 1024 values per workgroup: 70 000 needs three passes, 1000 one.
const SIZES: &[usize] = &[1, 3, 17, 127, 1000, 1025, 70_000];

#[test]
fn sum_forward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            let x = uniform(1, n);
            let tx = upload(&g, &[n], &x);
            let out = Tensor::uninit(&g, &[1]).unwrap();
            reduce::sum_into(&tx, 1.0, &out).unwrap();
            let want = reduce::sum_ref(&to_f64(&to_f32(&x)));
            // Summing n values in f32 loses about log2(n) ulps of Σ|x|.
            let atol = 1e-6 * n as f64;
            assert_close(
                &format!("{kind} sum n={n}"),
                &download(&out),
                &[want],
                1e-5,
                atol,
            );
            let tape = Tape::new();
            let m = reduce::mean(&tape, &Var::leaf(tx.clone(), false)).unwrap();
            assert_close(
                &format!("{kind} mean n={n}"),
                &download(m.value()),
                &[reduce::mean_ref(&to_f64(&to_f32(&x)))],
                1e-5,
                1e-6,
            );
            // Deterministic: the same input gives the same bits.
            reduce::sum_into(&tx, 1.0, &out).unwrap();
            let again = download(&out);
            reduce::sum_into(&tx, 1.0, &out).unwrap();
            assert_eq!(
                again,
                download(&out),
                "{kind} sum n={n} is not deterministic"
            );
        }
    }
}

#[test]
fn sum_backward_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        for &n in SIZES {
            for (name, scale) in [("sum", 1.0), ("mean", 1.0 / n as f64)] {
                let dx0 = uniform(2, n);
                let tdx = upload(&g, &[n], &dx0);
                let tdy = upload(&g, &[1], &[0.75]);
                reduce::sum_backward_into(&tdy, scale as f32, &tdx).unwrap();
                let mut want = dx0.clone();
                reduce::sum_backward_ref(0.75, scale, &mut want);
                assert_close(
                    &format!("{kind} {name} backward n={n}"),
                    &download(&tdx),
                    &want,
                    1e-6,
                    1e-6,
                );
            }
        }
    }
}

#[test]
fn sum_backward_should_match_finite_differences() {
    let x = uniform(3, 17);
    let mut dx = vec![0.0; 17];
    reduce::sum_backward_ref(1.0, 1.0, &mut dx);
    check_fd("sum", &x, &dx, reduce::sum_ref, 17);
    let mut dx = vec![0.0; 17];
    reduce::sum_backward_ref(1.0, 1.0 / 17.0, &mut dx);
    check_fd("mean", &x, &dx, reduce::mean_ref, 17);
}

#[test]
fn sum_and_mean_gradients_through_the_tape() {
    // L = sum(x) + mean(x) with x used twice: dx = 1 + 1/n, added to a pre-filled gradient.
    for g in devices() {
        let kind = g.kind();
        for &n in &[1, 127, 70_000] {
            let x = uniform(4, n);
            let dx0 = uniform(5, n);
            let tape = Tape::new();
            let vx = Var::leaf(upload(&g, &[n], &x), true);
            vx.grad_or_zeros()
                .unwrap()
                .write_f32(&to_f32(&dx0))
                .unwrap();
            let s = reduce::sum(&tape, &vx).unwrap();
            let m = reduce::mean(&tape, &vx).unwrap();
            assert_eq!(s.shape(), &[1], "{kind}");
            let l = attnlab::ops::elementwise::add(&tape, &s, &m).unwrap();
            tape.backward(&l).unwrap();
            let want: Vec<f64> = dx0.iter().map(|d| d + 1.0 + 1.0 / n as f64).collect();
            assert_close(
                &format!("{kind} d(sum+mean) n={n}"),
                &download(&vx.grad().unwrap()),
                &want,
                1e-6,
                1e-6,
            );
        }
    }
}

#[test]
fn global_norm_should_match_reference() {
    for g in devices() {
        let kind = g.kind();
        let sizes = [1, 3, 17, 1023, 1025, 70_001, 5];
        let xs: Vec<Vec<f64>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| uniform(10 + i as u64, n))
            .collect();
        let ts: Vec<Tensor> = xs.iter().map(|x| upload(&g, &[x.len()], x)).collect();
        let out = Tensor::uninit(&g, &[1]).unwrap();
        for k in [1, 2, sizes.len()] {
            let refs: Vec<&Tensor> = ts[..k].iter().collect();
            reduce::global_norm_into(&refs, &out).unwrap();
            let xf: Vec<Vec<f64>> = xs[..k].iter().map(|x| to_f64(&to_f32(x))).collect();
            let want = reduce::global_norm_ref(&xf.iter().map(|v| &v[..]).collect::<Vec<_>>());
            assert_close(
                &format!("{kind} norm of {k} tensors"),
                &download(&out),
                &[want],
                1e-5,
                1e-6,
            );
        }
        // No tensors: norm 0. An empty tensor adds nothing.
        reduce::global_norm_into(&[], &out).unwrap();
        assert_eq!(download(&out), vec![0.0], "{kind}: the norm of no tensors");
        let empty = Tensor::zeros(&g, &[0]).unwrap();
        reduce::global_norm_into(&[&empty, &ts[1]], &out).unwrap();
        assert_close(
            &format!("{kind} norm with an empty tensor"),
            &download(&out),
            &[reduce::global_norm_ref(&[&to_f64(&to_f32(&xs[1]))])],
            1e-5,
            1e-6,
        );
    }
}
