//! The embedding gather and its scatter-add on the CPU (`embedding`, `embedding_backward` of
//! `shaders/embedding.wgsl`): ids ≥ V read zeros and write nothing, as on the GPU; the scatter
//! walks the ids in order.

/// `out[n, :] = table[ids[n], :]`.
pub fn embedding(ids: &[u32], table: &[f32], out: &mut [f32], v: usize, c: usize) {
    crate::cpu::for_rows(out, c, |n, row| match ids[n] as usize {
        id if id < v => row.copy_from_slice(&table[id * c..id * c + c]),
        _ => row.fill(0.0),
    });
}

/// `dtable[ids[n], :] += dout[n, :]`, in the order of the ids.
pub fn embedding_backward(ids: &[u32], dout: &[f32], dtable: &mut [f32], v: usize, c: usize) {
    for (n, &id) in ids.iter().enumerate() {
        let id = id as usize;
        if id < v {
            let d = &dout[n * c..n * c + c];
            dtable[id * c..id * c + c]
                .iter_mut()
                .zip(d)
                .for_each(|(t, g)| *t += g);
        }
    }
}
