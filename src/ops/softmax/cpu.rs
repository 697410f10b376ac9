//! The softmax on the CPU (`softmax`, `softmax_backward` of `shaders/softmax.wgsl`), serving both
//! `ops::softmax::causal_softmax` and `ops::softmax::softmax`: one row per query, rows split over the
//! threads. Causal: keys after the query `r mod t` are masked to exactly 0; unmasked: every key of the
//! row is visible.

use crate::cpu::for_rows;

/// The last visible key of row `r`.
fn last_key(r: usize, t: usize, causal: bool) -> usize {
    if causal {
        r % t
    } else {
        t - 1
    }
}

/// `out[r, :] = softmax(scale · s[r, :i+1])`, zeros after, with `i` the row's last visible key.
pub fn softmax(s: &[f32], out: &mut [f32], t: usize, scale: f32, causal: bool) {
    for_rows(out, t, |r, o| {
        let i = last_key(r, t, causal);
        let row = &s[r * t..r * t + t];
        let live = &row[..=i];
        let m = live.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) * scale;
        for (o, &v) in o[..=i].iter_mut().zip(live) {
            *o = crate::cpu::math::exp(v * scale - m);
        }
        let inv = 1.0 / crate::cpu::math::sum(&o[..=i]);
        o[..=i].iter_mut().for_each(|v| *v *= inv);
        o[i + 1..].fill(0.0);
    });
}

/// `ds[r, :] += scale · P ⊙ (dP − Σ_j P dP)` (masked entries stay untouched: their P is 0).
pub fn softmax_backward(p: &[f32], dp: &[f32], ds: &mut [f32], t: usize, scale: f32, causal: bool) {
    for_rows(ds, t, |r, d| {
        let i = last_key(r, t, causal);
        let (pr, dpr) = (&p[r * t..r * t + i + 1], &dp[r * t..r * t + i + 1]);
        let dot = crate::cpu::math::dot(pr, dpr);
        for ((d, &p), &g) in d[..=i].iter_mut().zip(pr).zip(dpr) {
            *d += scale * p * (g - dot);
        }
    });
}
