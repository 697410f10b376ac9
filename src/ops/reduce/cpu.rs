//! Reductions on the CPU: one total per call, accumulated in f64 in a fixed order (blocks of 1024
//! values, as the shader folds them), so results do not depend on the thread count.

/// Σ x (or Σ x² with `square`), scaled, square-rooted when asked.
pub fn reduce(x: &[f32], square: bool, scale: f32, take_sqrt: bool) -> f32 {
    let block = |c: &[f32]| -> f64 {
        if square {
            c.iter().map(|&v| v * v).sum::<f32>() as f64
        } else {
            c.iter().sum::<f32>() as f64
        }
    };
    let total: f64 = x.chunks(1024).map(block).sum();
    let v = total * scale as f64;
    (if take_sqrt { v.sqrt() } else { v }) as f32
}

/// `dx += scale · dy` for every element (the backward of a sum).
pub fn sum_backward(dy: f32, scale: f32, dx: &mut [f32]) {
    let v = scale * dy;
    dx.iter_mut().for_each(|d| *d += v);
}
