//! E3 and E4: random keys kᵢ ~ N(μᵢ, Σᵢ) with orthonormal means μᵢ = eᵢ. One head asks for the
//! average of v_a and v_b with q = s·(μ_a + μ_b); two heads ask q₁ = s·μ_a and q₂ = s·μ_b and
//! average their outputs. When k_a's length varies (Σ_a = αI + ½μ_aμ_aᵀ, so k_a ≈ γμ_a with
//! γ ~ N(1, ½)) the single head copies v_a or v_b depending on γ; the two heads stay at the mean.
//! See docs/attention-exercises.md, E3 and E4.

use super::{attend_cpu, attend_values, dist, DemoRng, Dims};
use crate::device::Device;
use crate::error::{Error, Result};
use serde::Serialize;
use std::rc::Rc;

/// The settings of one batch of samples.
#[derive(Clone, Copy, Debug)]
pub struct NoiseSpec {
    /// Number of keys N (also their dimension D: the means are e₁…e_N).
    pub n: usize,
    pub samples: usize,
    pub seed: u64,
    /// The query scale s.
    pub s: f64,
    /// The isotropic variance α of every key (Σᵢ = αI …).
    pub var: f64,
    /// … plus ½μ_aμ_aᵀ for k_a (E3 part 2) when true.
    pub fragile: bool,
}

/// Per-sample outputs: γ (k_a's length along μ_a), the single-head c and the two-head c (all 2-D,
/// from the kernels on either backend), with the f64 reference's values for the same samples and
/// the fractions the checks count.
#[derive(Clone, Debug, Serialize)]
pub struct Noise {
    /// The values v₁…v_N in the plane (v_a = v₀, v_b = v₁).
    pub values: Vec<f64>,
    pub gamma: Vec<f64>,
    pub one_gpu: Vec<f64>,
    pub two_gpu: Vec<f64>,
    pub one_cpu: Vec<f64>,
    pub two_cpu: Vec<f64>,
    /// Fraction of single-head outputs within 0.1·‖v_a − v_b‖ of v_a or of v_b (E3's check).
    pub one_near_value: f64,
    /// Fraction of single-head outputs within 0.1·‖v_a − v_b‖ of the mean.
    pub one_near_mean: f64,
    /// Among samples with γ > 0: fraction of two-head outputs within 0.1·‖v_a − v_b‖ of the mean
    /// (E4's check).
    pub two_near_mean: f64,
    /// Largest |kernels − f64 reference| over every output coordinate.
    pub max_gpu_cpu: f64,
}

/// Fixed values in the plane: v_a left, v_b right, the others above and below the line between.
pub fn noise_values(n: usize) -> Vec<f64> {
    let mut v = vec![-1.0, 0.0, 1.0, 0.0];
    for i in 2..n {
        let t = std::f64::consts::PI * (i - 1) as f64 / (n - 1) as f64;
        let side = if i % 2 == 0 { 1.0 } else { -1.0 };
        v.extend([0.9 * t.cos(), side * (0.6 + 0.3 * t.sin())]);
    }
    v
}

/// Draw the keys (samples, N, N) and each sample's γ.
fn draw(sp: &NoiseSpec) -> (Vec<f64>, Vec<f64>) {
    let n = sp.n;
    let mut r = DemoRng::new(sp.seed);
    let sd = sp.var.max(0.0).sqrt();
    let mut keys = Vec::with_capacity(sp.samples * n * n);
    let mut gamma = Vec::with_capacity(sp.samples);
    for _ in 0..sp.samples {
        // γ = 1 + g/√2 has variance ½: the extra ½μ_aμ_aᵀ term of Σ_a.
        let g = if sp.fragile {
            1.0 + r.normal() / std::f64::consts::SQRT_2
        } else {
            1.0
        };
        gamma.push(g);
        for i in 0..n {
            for x in 0..n {
                let mean = if i == x {
                    if i == 0 {
                        g
                    } else {
                        1.0
                    }
                } else {
                    0.0
                };
                keys.push(mean + sd * r.normal());
            }
        }
    }
    (keys, gamma)
}

/// Run one batch: per sample three queries (the single head and the two heads) against that
/// sample's keys, in one Z = samples batch on the device; the reference does the same in f64.
pub async fn noise(dev: &Rc<Device>, sp: NoiseSpec) -> Result<Noise> {
    let n = sp.n;
    if !(3..=12).contains(&n) || sp.samples == 0 || sp.samples > 4096 {
        return Err(Error::Msg(format!(
            "noise: need 3 ≤ N ≤ 12 and 1..=4096 samples, got N = {n}, {} samples",
            sp.samples
        )));
    }
    let values = noise_values(n);
    let (keys, gamma) = draw(&sp);
    let mut q = vec![0.0; 3 * n];
    q[0] = sp.s; // single head: s·(μ_a + μ_b)
    q[1] = sp.s;
    q[n] = sp.s; // head 1: s·μ_a
    q[2 * n + 1] = sp.s; // head 2: s·μ_b
    let dm = Dims {
        z: sp.samples,
        m: 3,
        n,
        d: n,
        dv: 2,
    };
    let (_, c) = attend_values(dev, &q, &keys, &values, dm, 1.0, false).await?;
    let (_, cc) = attend_cpu(&q, &keys, &values, dm, 1.0, false);
    let split = |c: &[f64]| -> (Vec<f64>, Vec<f64>) {
        let mut one = Vec::with_capacity(2 * sp.samples);
        let mut two = Vec::with_capacity(2 * sp.samples);
        for s in c.chunks(6) {
            one.extend_from_slice(&s[0..2]);
            // The two heads' outputs averaged: c = ½(c₁ + c₂).
            two.extend([(s[2] + s[4]) / 2.0, (s[3] + s[5]) / 2.0]);
        }
        (one, two)
    };
    let (one_gpu, two_gpu) = split(&c);
    let (one_cpu, two_cpu) = split(&cc);
    let (va, vb) = (&values[0..2], &values[2..4]);
    let mid = [(va[0] + vb[0]) / 2.0, (va[1] + vb[1]) / 2.0];
    let tol = 0.1 * dist(va, vb);
    let frac = |hits: usize, of: usize| {
        if of == 0 {
            0.0
        } else {
            hits as f64 / of as f64
        }
    };
    let near_v = one_gpu
        .chunks(2)
        .filter(|c| dist(c, va) <= tol || dist(c, vb) <= tol)
        .count();
    let near_m = one_gpu.chunks(2).filter(|c| dist(c, &mid) <= tol).count();
    let pos: Vec<usize> = (0..sp.samples).filter(|&i| gamma[i] > 0.0).collect();
    let two_m = pos
        .iter()
        .filter(|&&i| dist(&two_gpu[2 * i..2 * i + 2], &mid) <= tol)
        .count();
    let max_gpu_cpu = c
        .iter()
        .zip(&cc)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    Ok(Noise {
        one_near_value: frac(near_v, sp.samples),
        one_near_mean: frac(near_m, sp.samples),
        two_near_mean: frac(two_m, pos.len()),
        max_gpu_cpu,
        values,
        gamma,
        one_gpu,
        two_gpu,
        one_cpu,
        two_cpu,
    })
}
