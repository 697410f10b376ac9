//! Dropout on the CPU, with the mask drawn from the same PCG hash of (seed, index) as
//! `shaders/dropout.wgsl`, so both backends drop the same elements. The op file re-exports the hash.

fn pcg(v: u32) -> u32 {
    let s = v.wrapping_mul(747796405).wrapping_add(2891336453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277803737);
    (w >> 22) ^ w
}

/// The 32-bit hash of (seed, element index).
pub fn dropout_hash(seed: u32, i: u32) -> u32 {
    pcg(pcg(i ^ pcg(seed)).wrapping_add(seed))
}

/// Whether element `i` is kept: its 24-bit uniform in [0, 1) is at least `p`.
#[inline]
pub fn dropout_keep(seed: u32, i: u32, p: f32) -> bool {
    ((dropout_hash(seed, i) >> 8) as f32) * (1.0 / 16777216.0) >= p
}

const BLOCK: usize = 4096;

/// `y = x · mask · scale`.
pub fn dropout(x: &[f32], y: &mut [f32], p: f32, seed: u32, scale: f32) {
    crate::cpu::for_rows(y, BLOCK, |b, out| {
        let o = b * BLOCK;
        for (k, (y, &x)) in out.iter_mut().zip(&x[o..]).enumerate() {
            *y = if dropout_keep(seed, (o + k) as u32, p) {
                x * scale
            } else {
                0.0
            };
        }
    });
}

/// `dx += dy · mask · scale`.
pub fn dropout_backward(dy: &[f32], dx: &mut [f32], p: f32, seed: u32, scale: f32) {
    crate::cpu::for_rows(dx, BLOCK, |b, out| {
        let o = b * BLOCK;
        for (k, (d, &g)) in out.iter_mut().zip(&dy[o..]).enumerate() {
            if dropout_keep(seed, (o + k) as u32, p) {
                *d += g * scale;
            }
        }
    });
}

/// The raw hashes of indices 0..len.
pub fn dropout_bits(out: &mut [u32], seed: u32) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = dropout_hash(seed, i as u32);
    }
}
