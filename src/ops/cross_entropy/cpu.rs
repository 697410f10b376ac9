//! Cross-entropy on the CPU (`cross_entropy` does what `cross_entropy_rows` and
//! `cross_entropy_reduce` of `shaders/cross_entropy.wgsl` do; `cross_entropy_backward`), with the
//! same statistics layout: row lse [0, N), row loss [N, 2N), row valid [2N, 3N), count [3N].

use crate::cpu::for_rows;

/// Per-row statistics, then the mean loss over valid rows (0 when none is valid).
pub fn cross_entropy(
    logits: &[f32],
    targets: &[u32],
    stats: &mut [f32],
    n: usize,
    v: usize,
) -> f32 {
    let (lse, rest) = stats.split_at_mut(n);
    let (loss, rest) = rest.split_at_mut(n);
    let valid = &mut rest[..n];
    let mut e = vec![0.0f32; v];
    for r in 0..n {
        let row = &logits[r * v..r * v + v];
        let m = row.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
        for (e, &x) in e.iter_mut().zip(row) {
            *e = crate::cpu::math::exp(x - m);
        }
        let l = m + crate::cpu::math::sum(&e).ln();
        let t = targets[r] as usize;
        let ok = t != 0 && t < v;
        lse[r] = l;
        loss[r] = if ok { l - row[t] } else { 0.0 };
        valid[r] = if ok { 1.0 } else { 0.0 };
    }
    let (s, c) = (0..n).fold((0.0f64, 0.0f64), |(s, c), r| {
        (s + loss[r] as f64, c + valid[r] as f64)
    });
    stats[3 * n] = c as f32;
    if c > 0.0 {
        (s / c) as f32
    } else {
        0.0
    }
}

/// `dlogits += dloss · (softmax − onehot) / count` on rows with a valid target.
pub fn cross_entropy_backward(
    logits: &[f32],
    targets: &[u32],
    stats: &[f32],
    dloss: f32,
    dlogits: &mut [f32],
    n: usize,
    v: usize,
) {
    let c = stats[3 * n];
    if c <= 0.0 {
        return;
    }
    let k = dloss / c;
    for_rows(dlogits, v, |r, d| {
        let t = targets[r] as usize;
        if t == 0 || t >= v {
            return;
        }
        let (row, l) = (&logits[r * v..r * v + v], stats[r]);
        for (d, &x) in d.iter_mut().zip(row) {
            *d += k * crate::cpu::math::exp(x - l);
        }
        d[t] -= k;
    });
}
