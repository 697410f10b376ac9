//! Dropout on the CPU, with the mask drawn from the same PCG hash of (seed, row key, column) as
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

/// The 32-bit hash of element (row key, column): the row's hash, then the column's.
#[inline]
pub fn element_hash(seed: u32, key: u32, col: u32) -> u32 {
    dropout_hash(dropout_hash(seed, key), col)
}

/// Whether a hash keeps its element: its 24-bit uniform in [0, 1) is at least `p`.
#[inline]
fn kept(h: u32, p: f32) -> bool {
    ((h >> 8) as f32) * (1.0 / 16777216.0) >= p
}

/// Whether element (row key, column) is kept.
#[inline]
pub fn dropout_keep(seed: u32, key: u32, col: u32, p: f32) -> bool {
    kept(element_hash(seed, key, col), p)
}

/// `y = x · mask · scale`, rows of `cols` elements keyed by `keys`.
pub fn dropout(keys: &[u32], x: &[f32], y: &mut [f32], cols: usize, p: f32, seed: u32, scale: f32) {
    crate::cpu::for_rows(y, cols, |r, out| {
        let h = dropout_hash(seed, keys[r]);
        for (j, (y, &x)) in out.iter_mut().zip(&x[r * cols..]).enumerate() {
            *y = if kept(dropout_hash(h, j as u32), p) {
                x * scale
            } else {
                0.0
            };
        }
    });
}

/// `dx += dy · mask · scale`.
#[allow(clippy::too_many_arguments)]
pub fn dropout_backward(
    keys: &[u32],
    dy: &[f32],
    dx: &mut [f32],
    cols: usize,
    p: f32,
    seed: u32,
    scale: f32,
) {
    crate::cpu::for_rows(dx, cols, |r, out| {
        let h = dropout_hash(seed, keys[r]);
        for (j, (d, &g)) in out.iter_mut().zip(&dy[r * cols..]).enumerate() {
            if kept(dropout_hash(h, j as u32), p) {
                *d += g * scale;
            }
        }
    });
}

/// The raw element hashes of every (row, column).
pub fn dropout_bits(keys: &[u32], out: &mut [u32], cols: usize, seed: u32) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = element_hash(seed, keys[i / cols], (i % cols) as u32);
    }
}
