//! LayerNorm on the CPU (`layernorm*` of `shaders/layernorm.wgsl`): the forward and dx with rows split
//! over the threads; dw and db summed over rows in order on one thread, so they do not depend on the
//! thread count.

/// `y = (x − mean)·rstd·w + b` per row of `c`, saving mean and rstd.
#[allow(clippy::too_many_arguments)]
pub fn layernorm(
    x: &[f32],
    w: &[f32],
    b: &[f32],
    y: &mut [f32],
    stats: (&mut [f32], &mut [f32]),
    c: usize,
    eps: f32,
) {
    let (mean, rstd) = stats;
    let mut ms = vec![0.0f32; 2 * mean.len()];
    crate::cpu::for_rows2(y, c, &mut ms, 2, |r, yr, m| {
        let xr = &x[r * c..r * c + c];
        let mu = crate::cpu::math::sum(xr) / c as f32;
        let var = xr
            .iter()
            .map(|v| (v - mu) * (v - mu))
            .fold(0.0, |a, b| a + b)
            / c as f32;
        let s = 1.0 / (var + eps).sqrt();
        (m[0], m[1]) = (mu, s);
        for (((y, &x), &w), &b) in yr.iter_mut().zip(xr).zip(w).zip(b) {
            *y = (x - mu) * s * w + b;
        }
    });
    for (r, pair) in ms.chunks_exact(2).enumerate() {
        (mean[r], rstd[r]) = (pair[0], pair[1]);
    }
}

/// `dx += rstd·(g − mean(g) − x̂·mean(g·x̂))` with `g = dy·w`.
pub fn layernorm_backward_dx(
    x: &[f32],
    w: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    mean: &[f32],
    rstd: &[f32],
    c: usize,
) {
    crate::cpu::for_rows(dx, c, |r, d| {
        let o = r * c;
        let (xr, dyr, mu, s) = (&x[o..o + c], &dy[o..o + c], mean[r], rstd[r]);
        let (mut mg, mut mgx) = (0.0f32, 0.0f32);
        for j in 0..c {
            let g = dyr[j] * w[j];
            mg += g;
            mgx += g * (xr[j] - mu) * s;
        }
        let (mg, mgx) = (mg / c as f32, mgx / c as f32);
        for j in 0..c {
            let xh = (xr[j] - mu) * s;
            d[j] += s * (dyr[j] * w[j] - mg - xh * mgx);
        }
    });
}

/// `dw += Σ_rows dy·x̂`, `db += Σ_rows dy`.
pub fn layernorm_backward_dwdb(
    x: &[f32],
    dy: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dw: &mut [f32],
    db: &mut [f32],
    c: usize,
) {
    for r in 0..mean.len() {
        let o = r * c;
        let (mu, s) = (mean[r], rstd[r]);
        for j in 0..c {
            dw[j] += dy[o + j] * (x[o + j] - mu) * s;
            db[j] += dy[o + j];
        }
    }
}
