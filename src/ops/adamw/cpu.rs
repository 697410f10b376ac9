//! The AdamW update on the CPU (`adamw_step` of `shaders/adamw.wgsl`), clipping folded in; the scalars
//! come from the op file exactly as the GPU's params do.

/// Step-dependent scalars of one update (see `ops::adamw`).
pub struct AdamScalars {
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub decay_mul: f32,
    pub step_size: f32,
    pub bc2_sqrt: f32,
    /// `min(1, max_norm / (‖g‖ + 1e-6))`, or 1 without clipping.
    pub clip: f32,
}

pub fn adamw_step(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], s: &AdamScalars) {
    for (((w, &g), m), v) in w.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        let g = g * s.clip;
        let mi = s.beta1 * *m + (1.0 - s.beta1) * g;
        let vi = s.beta2 * *v + (1.0 - s.beta2) * g * g;
        *m = mi;
        *v = vi;
        let wi = *w * s.decay_mul;
        *w = wi - s.step_size * mi / (vi.sqrt() / s.bc2_sqrt + s.eps);
    }
}
