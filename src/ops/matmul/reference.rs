//! The f64 reference of the batched strided matmul and its gradients, element by element with
//! the same [`Spec`] as the kernels: what `check.rs` and the tests compare both backends against.

use super::Spec;

/// `c (+)= alpha·a·b (+ bias)` with the same views as the GPU kernel.
pub fn matmul_ref(
    a: &[f64],
    b: &[f64],
    bias: Option<&[f64]>,
    c: &mut [f64],
    s: &Spec,
    accumulate: bool,
) {
    for z1 in 0..s.z.0 {
        for z2 in 0..s.z.1 {
            for i in 0..s.m {
                for j in 0..s.n {
                    let mut acc = 0.0;
                    for k in 0..s.k {
                        acc += a[s.a.offset(z1, z2, i, k)] * b[s.b.offset(z1, z2, k, j)];
                    }
                    let mut v = s.alpha as f64 * acc + bias.map_or(0.0, |bb| bb[j]);
                    let ci = s.c.offset(z1, z2, i, j);
                    if accumulate {
                        v += c[ci];
                    }
                    c[ci] = v;
                }
            }
        }
    }
}

/// Gradients of `C = alpha·A·B + bias`, accumulated into `da`, `db` and `dbias`.
pub fn matmul_backward_ref(
    a: &[f64],
    b: &[f64],
    dc: &[f64],
    s: &Spec,
    da: &mut [f64],
    db: &mut [f64],
    dbias: Option<&mut [f64]>,
) {
    let alpha = s.alpha as f64;
    let mut dbias = dbias;
    for z1 in 0..s.z.0 {
        for z2 in 0..s.z.1 {
            for i in 0..s.m {
                for j in 0..s.n {
                    let g = dc[s.c.offset(z1, z2, i, j)];
                    if let Some(d) = dbias.as_deref_mut() {
                        d[j] += g;
                    }
                    for k in 0..s.k {
                        da[s.a.offset(z1, z2, i, k)] += alpha * g * b[s.b.offset(z1, z2, k, j)];
                        db[s.b.offset(z1, z2, k, j)] += alpha * g * a[s.a.offset(z1, z2, i, k)];
                    }
                }
            }
        }
    }
}
