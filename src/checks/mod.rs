//! Self-checks that run on any target: each op family's GPU kernels against its CPU reference on
//! seeded inputs. The page shows them as a table; a native test runs them too.

use crate::device::Device;
use crate::error::Result;
use std::rc::Rc;

mod adamw;
mod cross_entropy;
mod dropout;
mod elementwise;
mod embedding;
mod layernorm;
mod matmul;
mod reduce;
mod softmax;
mod synth;

/// One comparison: which op and case, the worst error seen, the tolerance and the verdict.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CheckResult {
    pub op: String,
    pub case: String,
    pub max_err: f64,
    pub tol: f64,
    pub passed: bool,
}

impl CheckResult {
    /// Compare `got` (GPU) with `want` (CPU): error is max |got − want| / (1 + |want|).
    pub fn compare(op: &str, case: String, got: &[f32], want: &[f64], tol: f64) -> CheckResult {
        let mut max_err = if got.len() == want.len() {
            0.0f64
        } else {
            f64::INFINITY
        };
        for (g, w) in got.iter().zip(want) {
            let e = (*g as f64 - w).abs() / (1.0 + w.abs());
            if e.is_nan() || e > max_err {
                max_err = if e.is_nan() { f64::INFINITY } else { e };
            }
        }
        CheckResult {
            op: op.into(),
            case,
            max_err,
            tol,
            passed: max_err <= tol,
        }
    }
}

/// Seeded values uniform in [-1, 1).
pub(crate) fn rand_vec(seed: u64, n: usize) -> Vec<f64> {
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.gen_range(-1.0..1.0)).collect()
}

pub(crate) fn f32s(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

/// Run every family's checks, in a fixed order.
pub async fn run_all(gpu: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    out.extend(matmul::check(gpu).await?);
    out.extend(elementwise::check(gpu).await?);
    out.extend(reduce::check(gpu).await?);
    out.extend(layernorm::check(gpu).await?);
    out.extend(embedding::check(gpu).await?);
    out.extend(softmax::check(gpu).await?);
    out.extend(cross_entropy::check(gpu).await?);
    out.extend(dropout::check(gpu).await?);
    out.extend(synth::check(gpu).await?);
    out.extend(adamw::check(gpu).await?);
    Ok(out)
}
