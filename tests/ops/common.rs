//! Shared helpers for the op tests: the devices to run on, seeded data, comparisons and a
//! finite-difference gradient check.

#![allow(dead_code)]

use attnlab::{Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::rc::Rc;

/// The GPU device, for the few tests about the WGSL kernels alone. A missing adapter fails the
/// test: CI must have Mesa's lavapipe.
/// With ATTNLAB_REQUIRE_HARDWARE_GPU=1 (scripts/gpu-check.sh) a software adapter fails it too.
pub fn gpu() -> Rc<Device> {
    match Device::gpu_blocking() {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    }
}

/// Both backends, CPU first: every op test runs its checks on each (`dev.kind()` names it in the
/// messages), against the same f64 references.
pub fn devices() -> Vec<Rc<Device>> {
    vec![Device::cpu(), gpu()]
}

/// For the row kernels (softmax, layernorm, cross-entropy): the CPU backend, the GPU with the
/// workgroup-tree reductions, and a second GPU device with the subgroup builds, each with a label
/// for the messages. An adapter without subgroups is skipped with a message, except lavapipe,
/// which offers them: there a device without them fails the test.
pub fn row_devices() -> Vec<(Rc<Device>, String)> {
    let tree = gpu();
    if let Some(g) = tree.as_gpu() {
        g.set_subgroups(false);
    }
    let mut out = vec![
        (Device::cpu(), "cpu".to_string()),
        (tree, "gpu tree".into()),
    ];
    let sub = gpu();
    let g = sub.as_gpu().expect("a GPU device");
    g.set_subgroups(true); // off by default on CPU adapters; on wherever the device has them
    if g.subgroups() {
        out.push((sub, "gpu subgroups".into()));
    } else {
        assert!(
            !g.adapter.name.contains("llvmpipe"),
            "lavapipe offers subgroups, but the device has none: {}",
            g.describe()
        );
        println!(
            "skipped: the subgroup row kernels ({} offers no subgroups)",
            g.describe()
        );
    }
    out
}

/// `n` values uniform in [-1, 1), seeded.
pub fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.gen_range(-1.0..1.0)).collect()
}

pub fn to_f32(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

pub fn to_f64(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| v as f64).collect()
}

/// A tensor on `g` holding `x` (rounded to f32).
pub fn upload(g: &Rc<Device>, shape: &[usize], x: &[f64]) -> Tensor {
    Tensor::from_f32(g, shape, &to_f32(x)).expect("upload")
}

pub fn download(t: &Tensor) -> Vec<f64> {
    to_f64(&t.read().expect("readback"))
}

/// Assert |got − want| ≤ atol + rtol·|want| everywhere, naming the first bad index.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.is_finite() && (g - w).abs() <= atol + rtol * w.abs(),
            "{what}[{i}]: got {g}, want {w} (rtol {rtol}, atol {atol})"
        );
    }
}

/// Central finite differences of a scalar function: compare `grad` with (f(x+h) − f(x−h)) / 2h at
/// every coordinate (or a seeded sample of `max_points` of them).
pub fn check_fd(what: &str, x: &[f64], grad: &[f64], f: impl Fn(&[f64]) -> f64, max_points: usize) {
    let h = 1e-5;
    let mut x = x.to_vec();
    let n = x.len();
    let idx: Vec<usize> = if n <= max_points {
        (0..n).collect()
    } else {
        let mut r = SmallRng::seed_from_u64(n as u64);
        (0..max_points).map(|_| r.gen_range(0..n)).collect()
    };
    for i in idx {
        let x0 = x[i];
        x[i] = x0 + h;
        let fp = f(&x);
        x[i] = x0 - h;
        let fm = f(&x);
        x[i] = x0;
        let num = (fp - fm) / (2.0 * h);
        assert!(
            (num - grad[i]).abs() <= 1e-6 + 1e-5 * num.abs().max(grad[i].abs()),
            "{what}: d/dx[{i}] analytic {} vs numeric {num}",
            grad[i]
        );
    }
}

/// Σ out·dout: the scalar whose gradient with respect to `out` is `dout`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
