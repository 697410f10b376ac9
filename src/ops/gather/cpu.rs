//! The row gather on the CPU (`gather`, `gather_backward` of `shaders/gather.wgsl`): rows in
//! parallel; a NONE (or out-of-range) index reads zeros and adds nothing, as on the GPU.

use super::NONE;

/// `y[o, :] = x[idx[o], :]`, 0 where the index is NONE.
pub fn gather(idx: &[u32], x: &[f32], y: &mut [f32], c: usize) {
    let src_rows = x.len() / c.max(1);
    crate::cpu::for_rows(y, c, |o, row| match idx[o] {
        r if r != NONE && (r as usize) < src_rows => {
            let r = r as usize;
            row.copy_from_slice(&x[r * c..r * c + c])
        }
        _ => row.fill(0.0),
    });
}

/// `dx[i, :] += dy[inv[i], :]`, nothing where the index is NONE.
pub fn gather_backward(inv: &[u32], dy: &[f32], dx: &mut [f32], c: usize) {
    let src_rows = dy.len() / c.max(1);
    crate::cpu::for_rows(dx, c, |i, row| {
        let r = inv[i];
        if r != NONE && (r as usize) < src_rows {
            let r = r as usize;
            row.iter_mut()
                .zip(&dy[r * c..r * c + c])
                .for_each(|(d, g)| *d += g);
        }
    });
}
