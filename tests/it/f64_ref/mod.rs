//! The plain-loop f64 building blocks the whole-model tests' references share (model_cpu.rs,
//! vit_cpu.rs): written from the definitions, independent of the crate's ops.

/// y (rows, o) = x (rows, i) · wᵀ + b, w (o, i).
pub fn linear(x: &[f64], w: &[f64], b: Option<&[f64]>, i: usize, o: usize) -> Vec<f64> {
    let rows = x.len() / i;
    let mut y = vec![0.0; rows * o];
    for r in 0..rows {
        for c in 0..o {
            let mut s = b.map_or(0.0, |b| b[c]);
            for k in 0..i {
                s += x[r * i + k] * w[c * i + k];
            }
            y[r * o + c] = s;
        }
    }
    y
}

pub fn layernorm(x: &[f64], w: &[f64], b: &[f64], c: usize) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for (row, out) in x.chunks(c).zip(y.chunks_mut(c)) {
        let mean = row.iter().sum::<f64>() / c as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / c as f64;
        let rstd = 1.0 / (var + 1e-5).sqrt();
        for j in 0..c {
            out[j] = (row[j] - mean) * rstd * w[j] + b[j];
        }
    }
    y
}
