//! The runtime of both backends: limits turned into clear errors, readback, upload ordering with
//! recycled buffers, the tape's no-grad mode and shared gradients of reshaped variables.

use attnlab::autograd::{Tape, Var};
use attnlab::ops::matmul::{self, Spec};
use attnlab::{Device, Error, Tensor};

use crate::backends;
use backends::{devices, gpu};

#[test]
fn a_tensor_beyond_the_binding_limit_is_an_error_naming_the_limit_and_size() {
    for (g, limit) in [
        (gpu(), "max_storage_buffer_binding_size"),
        (Device::cpu(), "CPU tensor size limit"),
    ] {
        let max = g.max_tensor_bytes();
        let n = (max / 4 + 1) as usize;
        let err = Tensor::uninit(&g, &[n]).unwrap_err();
        assert!(matches!(err, Error::Limit { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains(limit)
                && msg.contains(&(n as u64 * 4).to_string())
                && msg.contains(&max.to_string()),
            "{msg}"
        );
    }
}

/// GPU only: the dispatch grid's limit has no CPU counterpart.
#[test]
fn too_many_workgroups_is_an_error_not_a_validation_panic() {
    let g = gpu();
    let maxd = g
        .as_gpu()
        .expect("a GPU device")
        .limits
        .max_compute_workgroups_per_dimension as usize;
    // A batched matmul with more batches than one dispatch dimension allows.
    let z = maxd + 1;
    let a = Tensor::zeros(&g, &[z]).unwrap();
    let b = Tensor::zeros(&g, &[1]).unwrap();
    let c = Tensor::zeros(&g, &[z]).unwrap();
    let s = Spec {
        z: (z, 1),
        a: matmul::View {
            outer: 1,
            inner: 1,
            row: 1,
            col: 1,
        },
        b: matmul::View {
            outer: 0,
            inner: 0,
            row: 1,
            col: 1,
        },
        c: matmul::View {
            outer: 1,
            inner: 1,
            row: 1,
            col: 1,
        },
        ..Spec::plain(1, 1, 1)
    };
    let msg = matmul::matmul_into(&a, &b, None, &c, &s, false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("max_compute_workgroups_per_dimension") && msg.contains(&z.to_string()),
        "{msg}"
    );
}

#[test]
fn readback_returns_what_was_uploaded() {
    for g in devices() {
        let kind = g.kind();
        for n in [1usize, 3, 17, 127, 100_003] {
            let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
            let t = Tensor::from_f32(&g, &[n], &data).unwrap();
            assert_eq!(t.read().unwrap(), data, "{kind} n={n}");
            let ids: Vec<u32> = (0..n as u32).rev().collect();
            let u = Tensor::from_u32(&g, &[n], &ids).unwrap();
            assert_eq!(
                pollster::block_on(u.to_vec_u32()).unwrap(),
                ids,
                "{kind} n={n}"
            );
        }
    }
}

#[test]
fn an_upload_into_a_recycled_buffer_does_not_overtake_recorded_work() {
    for g in devices() {
        let kind = g.kind();
        // Record a matmul that reads `a`, drop `a` so its buffer returns to the pool, take the same
        // buffer again and upload new data into it, and only then run the recorded work. (The CPU
        // backend runs the matmul at once; there the check is that the pool hands out `a`'s
        // buffer, never the live `c`'s.)
        let a = Tensor::from_f32(&g, &[2, 2], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let eye = Tensor::from_f32(&g, &[2, 2], &[1.0, 0.0, 0.0, 1.0]).unwrap();
        let c = Tensor::uninit(&g, &[2, 2]).unwrap();
        matmul::matmul_into(&a, &eye, None, &c, &Spec::plain(2, 2, 2), false).unwrap();
        drop(a);
        let reused = Tensor::uninit(&g, &[2, 2]).unwrap();
        reused.write_f32(&[9.0, 9.0, 9.0, 9.0]).unwrap();
        assert_eq!(c.read().unwrap(), vec![1.0, 2.0, 3.0, 4.0], "{kind}");
    }
}

#[test]
fn no_grad_records_nothing_and_reshape_shares_the_gradient() {
    for g in devices() {
        let kind = g.kind();
        let tape = Tape::new();
        let x = Var::leaf(Tensor::full(&g, &[2, 3], 1.0).unwrap(), true);
        let w = Var::leaf(Tensor::full(&g, &[4, 3], 0.5).unwrap(), true);
        let y = tape
            .no_grad(|| matmul::linear(&tape, &x, &w, None))
            .unwrap();
        assert!(tape.is_empty() && !y.requires_grad(), "{kind}");
        let x6 = x.reshape(&[6]).unwrap();
        let x23 = x6.reshape(&[2, 3]).unwrap();
        let y = matmul::linear(&tape, &x23, &w, None).unwrap();
        let ones = Var::leaf(Tensor::full(&g, &[1, 2], 1.0).unwrap(), false);
        let s = matmul::matmul(&tape, &ones, &y, None, Spec::plain(1, 2, 4), &[1, 4]).unwrap();
        let ones4 = Var::leaf(Tensor::full(&g, &[4, 1], 1.0).unwrap(), false);
        let l = matmul::matmul(&tape, &s, &ones4, None, Spec::plain(1, 4, 1), &[1, 1]).unwrap();
        tape.backward(&l).unwrap();
        // dL/dx[n, k] = Σ_o w[o, k] = 4 · 0.5, seen through the original variable.
        assert_eq!(x.grad().unwrap().read().unwrap(), vec![2.0; 6], "{kind}");
        assert_eq!(x.grad().unwrap().shape(), &[2, 3], "{kind}");
        assert!(tape.is_empty(), "{kind}: backward consumes the tape");
    }
}

#[test]
fn backward_needs_a_scalar() {
    for g in devices() {
        let kind = g.kind();
        let tape = Tape::new();
        let x = Var::leaf(Tensor::zeros(&g, &[2]).unwrap(), true);
        let msg = tape.backward(&x).unwrap_err().to_string();
        assert!(
            msg.contains("scalar") && msg.contains("[2]"),
            "{kind}: {msg}"
        );
    }
}

/// The matmul kernel a GPU adapter uses can be timed and chosen (`bench::tune_matmul`): every
/// kernel is timed, the fastest is kept on the device and reported; a kept name is set back with
/// `set_matmul`, an unknown one refused; the CPU backend has nothing to choose.
#[test]
fn the_matmul_kernel_is_timed_and_the_fastest_kept() {
    use attnlab::bench;
    let g = gpu();
    let t0 = std::time::Instant::now();
    let clock = move || t0.elapsed().as_secs_f64();
    let m = pollster::block_on(bench::tune_matmul(&g, 1, &clock)).unwrap();
    assert_eq!(m.how, "timed");
    let names = ["tiled", "register-blocked", "vec4-4x4", "vec4-8x4"];
    assert_eq!(m.kernels, names);
    assert_eq!(m.ms.len(), names.len());
    assert!(m.ms.iter().all(|&x| x > 0.0 && x.is_finite()), "{:?}", m.ms);
    let fastest = (0..names.len())
        .min_by(|&i, &j| m.ms[i].total_cmp(&m.ms[j]))
        .unwrap();
    assert_eq!(m.kernel, names[fastest], "{:?}", m.ms);
    assert_eq!(
        bench::matmul_choice(&g).kernel,
        m.kernel,
        "the choice is kept on the device"
    );
    let other = names[(fastest + 1) % names.len()];
    bench::set_matmul(&g, other).unwrap();
    assert_eq!(bench::matmul_choice(&g).kernel, other);
    let err = bench::set_matmul(&g, "fastest").unwrap_err().to_string();
    assert!(
        err.contains("unknown matmul kernel 'fastest'; choose one of tiled, register-blocked"),
        "{err}"
    );
    assert_eq!(
        bench::matmul_choice(&g).kernel,
        other,
        "a refused name changes nothing"
    );
    bench::set_matmul(&g, m.kernel.as_str()).unwrap();
    let cpu = Device::cpu();
    let c = pollster::block_on(bench::tune_matmul(&cpu, 1, &clock)).unwrap();
    assert_eq!((c.kernel.as_str(), c.ms.len()), ("cpu backend", 0));
}

/// Comparing the kernels times a call once more, not `repeats` times, when its warm-up call was
/// slower than the limit (a software adapter); below the limit every repeat is timed. A clock
/// that advances one second a reading makes the count visible: the timed span is always one
/// second, divided by the calls timed.
#[test]
fn a_slow_warm_up_is_followed_by_one_timed_call() {
    use attnlab::bench;
    use std::cell::Cell;
    let cpu = Device::cpu();
    let case = &bench::matmul_cases(true)[0];
    let ticks = Cell::new(0.0);
    let clock = || {
        ticks.set(ticks.get() + 1.0);
        ticks.get()
    };
    let once = pollster::block_on(bench::time_matmul_or_once(&cpu, case, 3, 0.5, &clock)).unwrap();
    assert_eq!(once, 1.0, "a warm-up slower than the limit: one call timed");
    let all = pollster::block_on(bench::time_matmul_or_once(&cpu, case, 3, 10.0, &clock)).unwrap();
    assert_eq!(all, 1.0 / 3.0, "a fast warm-up: all three repeats timed");
    let plain = pollster::block_on(bench::time_matmul(&cpu, case, 3, &clock)).unwrap();
    assert_eq!(plain, 1.0 / 3.0, "time_matmul never cuts the repeats");
}
