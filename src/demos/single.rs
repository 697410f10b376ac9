//! One query against a handful of keys: E1 copying (a dominant score copies one value), E2 the
//! average of two orthogonal keys (q = s·(k_a + k_b)), E6 temperature (softmax_β from uniform to
//! one-hot, and the entropy of α along the way). See docs/attention-exercises.md, E1, E2 and E6.

use super::{attend_cpu, attend_values, dist, entropy, fetch, konst, softmax_cpu};
use super::{DemoRng, Dims};
use crate::autograd::Tape;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ops::matmul::{matmul, Spec, View};
use crate::ops::softmax::softmax;
use serde::Serialize;
use std::rc::Rc;

/// α (N) and c (DV) of one query, as the device's kernels (either backend) or the f64 reference computed them.
#[derive(Clone, Debug, Serialize)]
pub struct AttnOut {
    pub alpha: Vec<f64>,
    pub c: Vec<f64>,
}

/// E1's numbers: scores kᵢᵀq, the winner j, its margin over the runner-up, α and c.
#[derive(Clone, Debug, Serialize)]
pub struct Copying {
    pub scores: Vec<f64>,
    pub best: usize,
    /// k_jᵀq − max_{i≠j} k_iᵀq.
    pub margin: f64,
    /// ‖c − v_j‖ (the kernels') and max‖v‖, for the check ‖c − v_j‖ ≤ 1e-3·max‖v‖ at margin 10.
    pub dist_to_best: f64,
    pub max_v: f64,
    pub dev: AttnOut,
    pub cpu: AttnOut,
}

fn check_2d(what: &str, x: &[f64], n: usize) -> Result<()> {
    if x.len() != 2 * n {
        return Err(Error::Shape(format!(
            "{what}: expected {n} points in 2-D ({} numbers), got {}",
            2 * n,
            x.len()
        )));
    }
    Ok(())
}

/// E1: keys and values are N points in the plane (row-major N×2), the query a point; β scales
/// the scores.
pub async fn copying(
    dev: &Rc<Device>,
    keys: &[f64],
    values: &[f64],
    query: &[f64],
    beta: f64,
) -> Result<Copying> {
    let n = keys.len() / 2;
    if n == 0 {
        return Err(Error::Shape("copying: no keys".into()));
    }
    check_2d("copying keys", keys, n)?;
    check_2d("copying values", values, n)?;
    check_2d("copying query", query, 1)?;
    let dm = Dims {
        z: 1,
        m: 1,
        n,
        d: 2,
        dv: 2,
    };
    let (alpha, c) = attend_values(dev, query, keys, values, dm, beta, false).await?;
    let (ca, cc) = attend_cpu(query, keys, values, dm, beta, false);
    let scores: Vec<f64> = (0..n)
        .map(|j| beta * (keys[2 * j] * query[0] + keys[2 * j + 1] * query[1]))
        .collect();
    let best = (0..n)
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
        .unwrap_or(0);
    let runner = (0..n)
        .filter(|&i| i != best)
        .map(|i| scores[i])
        .fold(f64::NEG_INFINITY, f64::max);
    let max_v = (0..n)
        .map(|j| values[2 * j].hypot(values[2 * j + 1]))
        .fold(0.0, f64::max);
    Ok(Copying {
        margin: scores[best] - runner,
        dist_to_best: dist(&c, &values[2 * best..2 * best + 2]),
        max_v,
        scores,
        best,
        dev: AttnOut { alpha, c },
        cpu: AttnOut { alpha: ca, c: cc },
    })
}

/// E2's numbers at one s, and the gap ‖c − ½(v_a + v_b)‖ along a grid of s.
#[derive(Clone, Debug, Serialize)]
pub struct Average {
    pub values: Vec<f64>,
    pub dev: AttnOut,
    pub cpu: AttnOut,
    pub gap_gpu: f64,
    pub gap_cpu: f64,
    /// max‖v‖: the check is gap ≤ 1e-6·scale at s = 20, N = 6.
    pub scale: f64,
    pub grid: Vec<f64>,
    pub grid_gap_gpu: Vec<f64>,
    pub grid_gap_cpu: Vec<f64>,
}

/// Seeded 2-D values for E2: N points on a ring of radius 1 with jitter, v_a = v₀ and v_b = v₁.
pub fn average_values(n: usize, seed: u64) -> Vec<f64> {
    let mut r = DemoRng::new(seed);
    (0..n)
        .flat_map(|i| {
            let t = std::f64::consts::TAU * (i as f64 + r.uniform(-0.3, 0.3)) / n as f64;
            let rad = r.uniform(0.6, 1.0);
            [rad * t.cos(), rad * t.sin()]
        })
        .collect()
}

/// E2: keys e₁…e_N (orthonormal, D = N), q = s·(e_a + e_b) with a = 0, b = 1, values from `seed`.
pub async fn average(
    dev: &Rc<Device>,
    n: usize,
    s: f64,
    seed: u64,
    grid: &[f64],
) -> Result<Average> {
    if !(3..=16).contains(&n) {
        return Err(Error::Msg(format!("average: N = {n} must be in 3..=16")));
    }
    let values = average_values(n, seed);
    let keys: Vec<f64> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    let query = |s: f64| (0..n).map(move |i| if i < 2 { s } else { 0.0 });
    let mid = [(values[0] + values[2]) / 2.0, (values[1] + values[3]) / 2.0];
    // Row 0 is the chosen s; rows 1.. the grid, all in one batch of Z = 1 + grid problems.
    let all: Vec<f64> = std::iter::once(s).chain(grid.iter().copied()).collect();
    let qs: Vec<f64> = all.iter().flat_map(|&s| query(s)).collect();
    let dm = Dims {
        z: all.len(),
        m: 1,
        n,
        d: n,
        dv: 2,
    };
    let (alpha, c) = attend_values(dev, &qs, &keys, &values, dm, 1.0, false).await?;
    let (ca, cc) = attend_cpu(&qs, &keys, &values, dm, 1.0, false);
    let gaps = |c: &[f64]| -> Vec<f64> { c.chunks(2).map(|x| dist(x, &mid)).collect() };
    let (gg, gc) = (gaps(&c), gaps(&cc));
    Ok(Average {
        scale: values
            .chunks(2)
            .map(|v| v[0].hypot(v[1]))
            .fold(0.0, f64::max),
        dev: AttnOut {
            alpha: alpha[..n].to_vec(),
            c: c[..2].to_vec(),
        },
        cpu: AttnOut {
            alpha: ca[..n].to_vec(),
            c: cc[..2].to_vec(),
        },
        gap_gpu: gg[0],
        gap_cpu: gc[0],
        grid: grid.to_vec(),
        grid_gap_gpu: gg[1..].to_vec(),
        grid_gap_cpu: gc[1..].to_vec(),
        values,
    })
}

/// E6's numbers: raw scores qᵀkᵢ of random D-dimensional vectors, α at the chosen β, and the
/// entropy of α along a grid of β.
#[derive(Clone, Debug, Serialize)]
pub struct Temperature {
    pub scores_gpu: Vec<f64>,
    pub scores_cpu: Vec<f64>,
    /// Standard deviation of the raw scores (≈ √D for unit-variance vectors).
    pub score_std: f64,
    pub dev: Vec<f64>,
    pub cpu: Vec<f64>,
    pub entropy_gpu: f64,
    pub entropy_cpu: f64,
    pub grid: Vec<f64>,
    pub grid_entropy_gpu: Vec<f64>,
    pub grid_entropy_cpu: Vec<f64>,
    /// α at β = 0 from the kernels (the check: exactly 1/N), if 0 is on the grid.
    pub uniform_gpu: Option<Vec<f64>>,
}

/// E6: N keys and one query with N(0, 1) entries in D dimensions (seeded); scores on the device with
/// the matmul, then softmax(β·scores) for β and every grid value in one batch (the rows β_g·s are
/// an outer product, also a matmul).
pub async fn temperature(
    dev: &Rc<Device>,
    n: usize,
    d: usize,
    seed: u64,
    beta: f64,
    grid: &[f64],
) -> Result<Temperature> {
    if n < 2 || d == 0 {
        return Err(Error::Msg(format!(
            "temperature: need N ≥ 2 and D ≥ 1, got {n}, {d}"
        )));
    }
    let mut r = DemoRng::new(seed);
    let q: Vec<f64> = (0..d).map(|_| r.normal()).collect();
    let k: Vec<f64> = (0..n * d).map(|_| r.normal()).collect();
    let tape = Tape::new();
    let (qv, kv) = (konst(dev, &[d, 1], &q)?, konst(dev, &[n, d], &k)?);
    let scores = matmul(&tape, &kv, &qv, None, Spec::plain(n, d, 1), &[1, n])?;
    let betas: Vec<f64> = std::iter::once(beta).chain(grid.iter().copied()).collect();
    let g = betas.len();
    let bv = konst(dev, &[g], &betas)?;
    // (G, N) = β (G×1) · scores (1×N).
    let outer = Spec {
        z: (1, 1),
        m: g,
        n,
        k: 1,
        a: View {
            outer: 0,
            inner: 0,
            row: 1,
            col: 0,
        },
        b: View {
            outer: 0,
            inner: 0,
            row: 0,
            col: 1,
        },
        c: View::contiguous(g, n),
        alpha: 1.0,
    };
    let scaled = matmul(&tape, &bv, &scores, None, outer, &[g, n])?;
    let alpha = fetch(&softmax(&tape, &scaled, 1.0)?).await?;
    let scores_gpu = fetch(&scores).await?;
    let scores_cpu: Vec<f64> = (0..n)
        .map(|j| (0..d).map(|x| k[j * d + x] * q[x]).sum())
        .collect();
    let mean = scores_cpu.iter().sum::<f64>() / n as f64;
    let score_std = (scores_cpu.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    let cpu_rows: Vec<Vec<f64>> = betas
        .iter()
        .map(|&b| softmax_cpu(&scores_cpu, b, n))
        .collect();
    let rows: Vec<&[f64]> = alpha.chunks(n).collect();
    let uniform_gpu = grid
        .iter()
        .position(|&b| b == 0.0)
        .map(|i| rows[i + 1].to_vec());
    Ok(Temperature {
        dev: rows[0].to_vec(),
        cpu: cpu_rows[0].clone(),
        entropy_gpu: entropy(rows[0]),
        entropy_cpu: entropy(&cpu_rows[0]),
        grid: grid.to_vec(),
        grid_entropy_gpu: rows[1..].iter().map(|r| entropy(r)).collect(),
        grid_entropy_cpu: cpu_rows[1..].iter().map(|r| entropy(r)).collect(),
        uniform_gpu,
        score_std,
        scores_gpu,
        scores_cpu,
    })
}
