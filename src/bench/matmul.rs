//! The matmul products at the GPT's shapes, timed, and the GPU matmul kernel chosen by timing them.

use crate::ops::matmul::{self, matmul_into, MatmulKernel, Spec, View};
use crate::{Device, Result, Tensor};
use serde::Serialize;
use std::rc::Rc;

/// Sequence length of every benchmarked workload (the assignment's block size minus one).
pub const T: usize = 127;

/// One benchmarked product: the spec and the element counts of its three tensors.
pub struct Case {
    pub name: String,
    pub spec: Spec,
    pub lens: [usize; 3],
}

impl Case {
    /// Floating-point operations of one product (2·Z·M·N·K).
    pub fn flops(&self) -> f64 {
        2.0 * (self.spec.batches() * self.spec.m * self.spec.n * self.spec.k) as f64
    }
}

/// `y = x·Wᵀ` for x (M, K) and W (N, K), as `linear` does it.
pub fn linear(m: usize, k: usize, n: usize) -> Case {
    let spec = Spec {
        a: View::contiguous(m, k),
        b: View::contiguous(n, k).t(),
        c: View::contiguous(m, n),
        ..Spec::plain(m, k, n)
    };
    Case {
        name: format!("x·Wᵀ {m}x{k}x{n}"),
        spec,
        lens: [m * k, n * k, m * n],
    }
}

/// The attention's two products over (B, NH) heads, read through head views of (B, T, C)
/// q, k, v tensors (no copies): att = q·kᵀ/√HS (T×T per head) and y = att·v (T×HS per head).
pub fn attention(b: usize, nh: usize, t: usize, hs: usize) -> [Case; 2] {
    let c = nh * hs;
    let head = View {
        outer: t * c,
        inner: hs,
        row: c,
        col: 1,
    };
    let att = View {
        outer: nh * t * t,
        inner: t * t,
        row: t,
        col: 1,
    };
    let qk = Spec {
        z: (b, nh),
        m: t,
        n: t,
        k: hs,
        a: head,
        b: head.t(),
        c: att,
        alpha: 1.0 / (hs as f32).sqrt(),
    };
    let av = Spec {
        z: (b, nh),
        m: t,
        n: hs,
        k: t,
        a: att,
        b: head,
        c: head,
        alpha: 1.0,
    };
    let z = b * nh;
    [
        Case {
            name: format!("q·kᵀ {z}x({t}x{hs}x{t})"),
            spec: qk,
            lens: [b * t * c, b * t * c, z * t * t],
        },
        Case {
            name: format!("att·v {z}x({t}x{t}x{hs})"),
            spec: av,
            lens: [z * t * t, b * t * c, b * t * c],
        },
    ]
}

/// Rows (B·T) and batch count (B) of the matmul cases: the full assignment batch of 128 sequences,
/// or 8 with `quick` (rows and batches / 16, as `bench --quick`).
pub fn matmul_shape(quick: bool) -> (usize, usize) {
    let div = if quick { 16 } else { 1 };
    (128 * T / div, 128 / div)
}

/// The GPT's products: the three linear shapes (qkv-sized 256→768, MLP up 256→1024, MLP down
/// 1024→256) and the attention's two batched products.
pub fn matmul_cases(quick: bool) -> Vec<Case> {
    let (rows, batch) = matmul_shape(quick);
    let mut cases = vec![
        linear(rows, 256, 768),
        linear(rows, 256, 1024),
        linear(rows, 1024, 256),
    ];
    cases.extend(attention(batch, 8, T, 32));
    cases
}

/// One matmul case's result.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulResult {
    pub name: String,
    pub gflop: f64,
    pub ms: f64,
    pub gflops: f64,
}

/// Seconds per `matmul_into` call: one warm-up call synced, then `repeats` calls recorded together
/// and waited for with `sync`.
pub async fn time_matmul(
    dev: &Rc<Device>,
    case: &Case,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<f64> {
    time_matmul_or_once(dev, case, repeats, f64::INFINITY, clock).await
}

/// [`time_matmul`], but one timed call instead of `repeats` when the warm-up call took more than
/// `slow_s` seconds: on a software adapter a call of this size takes a second or more, so one is
/// a steady enough measure, and timing four kernels three times took about a minute (SwiftShader).
pub async fn time_matmul_or_once(
    dev: &Rc<Device>,
    case: &Case,
    repeats: usize,
    slow_s: f64,
    clock: &dyn Fn() -> f64,
) -> Result<f64> {
    let fill = |n: usize, seed: usize| -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7 + seed) % 13) as f32 / 13.0 - 0.5)
            .collect()
    };
    let a = Tensor::from_f32(dev, &[case.lens[0]], &fill(case.lens[0], 1))?;
    let b = Tensor::from_f32(dev, &[case.lens[1]], &fill(case.lens[1], 2))?;
    let c = Tensor::uninit(dev, &[case.lens[2]])?;
    let warm = clock();
    matmul_into(&a, &b, None, &c, &case.spec, false)?;
    dev.sync().await?;
    let repeats = if clock() - warm > slow_s {
        1
    } else {
        repeats.max(1)
    };
    let t0 = clock();
    for _ in 0..repeats {
        matmul_into(&a, &b, None, &c, &case.spec, false)?;
    }
    dev.sync().await?;
    Ok((clock() - t0) / repeats as f64)
}

/// Time one case and turn it into GFLOP/s.
pub async fn bench_matmul(
    dev: &Rc<Device>,
    case: &Case,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<MatmulResult> {
    let s = time_matmul(dev, case, repeats, clock).await?;
    let f = case.flops();
    Ok(MatmulResult {
        name: case.name.clone(),
        gflop: f / 1e9,
        ms: s * 1e3,
        gflops: f / s / 1e9,
    })
}

/// The matmul kernel this device uses and what timing them found.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulChoice {
    /// The kernel's name (`MatmulKernel::name`), or "cpu backend".
    pub kernel: String,
    /// "timed" (the fastest of all, measured now), "default" (the adapter type's rule: untimed)
    /// or "cpu backend" (no GPU kernels).
    pub how: String,
    /// Every GPU kernel's name, in the order of `ms` (empty on the CPU backend).
    pub kernels: Vec<String>,
    /// Milliseconds for the quick matmul cases, once each, per kernel (as in `kernels`); empty
    /// unless timed.
    pub ms: Vec<f64>,
}

/// A warm-up call slower than this (seconds) is timed once more, not `repeats` times, when the
/// kernels are compared.
const SLOW_CALL_S: f64 = 0.25;

/// The kernel a device uses now, untimed.
pub fn matmul_choice(dev: &Rc<Device>) -> MatmulChoice {
    match matmul::kernel(dev) {
        None => MatmulChoice {
            kernel: "cpu backend".into(),
            how: "cpu backend".into(),
            kernels: vec![],
            ms: vec![],
        },
        Some(k) => MatmulChoice {
            kernel: k.name().into(),
            how: "default".into(),
            kernels: MatmulKernel::ALL.iter().map(|k| k.name().into()).collect(),
            ms: vec![],
        },
    }
}

/// Time every GPU matmul kernel on the GPT's products (the quick cases: 8 sequences of 127
/// tokens, width 256, 8 heads), `repeats` calls each after a warm-up (one where the warm-up took
/// more than [`SLOW_CALL_S`]), and keep the fastest on this device. A vec4 kernel's time includes
/// the products it leaves to the fallback kernel (views it cannot read as vec4: the attention's
/// with T = 127), as training would run them. On the CPU backend there is nothing to choose.
pub async fn tune_matmul(
    dev: &Rc<Device>,
    repeats: usize,
    clock: &dyn Fn() -> f64,
) -> Result<MatmulChoice> {
    let Some(before) = matmul::kernel(dev) else {
        return Ok(matmul_choice(dev));
    };
    let mut ms = vec![];
    for k in MatmulKernel::ALL {
        matmul::set_kernel(dev, k);
        let mut total = 0.0;
        for case in matmul_cases(true) {
            match time_matmul_or_once(dev, &case, repeats, SLOW_CALL_S, clock).await {
                Ok(s) => total += s * 1e3,
                Err(e) => {
                    matmul::set_kernel(dev, before);
                    return Err(e);
                }
            }
        }
        ms.push(total);
    }
    let best = (0..ms.len())
        .min_by(|&i, &j| ms[i].total_cmp(&ms[j]))
        .unwrap_or(0);
    matmul::set_kernel(dev, MatmulKernel::ALL[best]);
    Ok(MatmulChoice {
        how: "timed".into(),
        ms,
        ..matmul_choice(dev)
    })
}

/// Use the named kernel (`MatmulKernel::name`) on this device, e.g. a choice kept from an
/// earlier `tune_matmul`; an unknown name is refused, the CPU backend ignores it.
pub fn set_matmul(dev: &Rc<Device>, kernel: &str) -> Result<()> {
    let Some(k) = MatmulKernel::from_name(kernel) else {
        let names: Vec<_> = MatmulKernel::ALL.iter().map(|k| k.name()).collect();
        return Err(crate::Error::Msg(format!(
            "unknown matmul kernel '{kernel}'; choose one of {}",
            names.join(", ")
        )));
    };
    matmul::set_kernel(dev, k);
    Ok(())
}
