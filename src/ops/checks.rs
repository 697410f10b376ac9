//! What the families' self-checks share (`<family>/check.rs`: each family's kernels on the user's
//! device against its f64 reference on seeded inputs): the result row and the seeded inputs.
//! `ops::run_checks` runs them all; the page shows them as a table and `tests/it/checks.rs` runs them.

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
