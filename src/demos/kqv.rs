//! E5 (why keys, queries and values are separate) and E10 (what one self-attention layer can
//! imitate): hand-built K, Q, V matrices applied with the matmul, then attention as in the module
//! root. Both work in coordinates where the inputs are sums of basis vectors. See
//! docs/attention-exercises.md, E5 and E10.

use super::{attend_cpu, attend_values, DemoRng, Dims};
use crate::device::Device;
use crate::error::{Error, Result};
use serde::Serialize;
use std::rc::Rc;

/// The attention matrix (rows = queries) and the outputs, in the basis the demo shows.
#[derive(Clone, Debug, Serialize)]
pub struct Mapping {
    pub alpha: Vec<f64>,
    pub out: Vec<f64>,
}

/// `rows·Wᵀ` for rows (R, D_in) and W (D_out, D_in), in f64 (the matmul does it on the device
/// inside [`project`]).
fn project_cpu(rows: &[f64], w: &[f64], d_in: usize, d_out: usize) -> Vec<f64> {
    rows.chunks(d_in)
        .flat_map(|x| (0..d_out).map(move |o| (0..d_in).map(|i| w[o * d_in + i] * x[i]).sum()))
        .collect()
}

/// `rows·Wᵀ` on the device with the strided matmul (W read through a transposed view).
async fn project(
    dev: &Rc<Device>,
    rows: &[f64],
    w: &[f64],
    d_in: usize,
    d_out: usize,
) -> Result<Vec<f64>> {
    use crate::ops::matmul::{matmul, Spec, View};
    let r = rows.len() / d_in;
    let tape = crate::autograd::Tape::new();
    let x = super::konst(dev, &[r, d_in], rows)?;
    let wv = super::konst(dev, &[d_out, d_in], w)?;
    let s = Spec {
        b: View::contiguous(d_out, d_in).t(),
        ..Spec::plain(r, d_in, d_out)
    };
    super::fetch(&matmul(&tape, &x, &wv, None, s, &[r, d_out])?).await
}

/// E5's matrices and results: X (3, 4) in the u-basis, Q, K, V (4, 4) as applied to x (q = Q·x),
/// α (3, 3) and c (3, 4) in the u-basis (c divided by β).
#[derive(Clone, Debug, Serialize)]
pub struct Separate {
    pub x: Vec<f64>,
    pub q: Vec<f64>,
    pub k: Vec<f64>,
    pub v: Vec<f64>,
    pub dev: Mapping,
    pub cpu: Mapping,
}

/// E5 with u_a…u_d = β·e₀…e₃. x₂ = u_a + add_c·u_c + add_d·u_d (the exercise's attempt to make x₂
/// match its neighbours). Without projections Q = K = V = I; with them K = I,
/// Q = λ(e_d e_aᵀ + e_c e_dᵀ), V = e_b e_bᵀ − e_c e_cᵀ, so q₂ = λβ·e_d picks x₁ (score λβ²) and
/// q₁ = λβ·e_c picks x₃.
pub async fn separate(
    dev: &Rc<Device>,
    beta: f64,
    lambda: f64,
    with_proj: bool,
    add_c: f64,
    add_d: f64,
) -> Result<Separate> {
    let (a, b, c, d) = (0, 1, 2, 3);
    let mut x = vec![0.0; 12];
    x[d] = 1.0;
    x[b] = 1.0;
    x[4 + a] = 1.0;
    x[4 + c] = add_c;
    x[4 + d] = add_d;
    x[8 + c] = 1.0;
    x[8 + b] = 1.0;
    let eye: Vec<f64> = (0..16)
        .map(|i| if i / 4 == i % 4 { 1.0 } else { 0.0 })
        .collect();
    let (q, k, v) = if with_proj {
        let mut q = vec![0.0; 16];
        q[d * 4 + a] = lambda;
        q[c * 4 + d] = lambda;
        let mut v = vec![0.0; 16];
        v[b * 4 + b] = 1.0;
        v[c * 4 + c] = -1.0;
        (q, eye.clone(), v)
    } else {
        (eye.clone(), eye.clone(), eye)
    };
    let xs: Vec<f64> = x.iter().map(|e| e * beta).collect();
    let dm = Dims {
        z: 1,
        m: 3,
        n: 3,
        d: 4,
        dv: 4,
    };
    let (qg, kg, vg) = (
        project(dev, &xs, &q, 4, 4).await?,
        project(dev, &xs, &k, 4, 4).await?,
        project(dev, &xs, &v, 4, 4).await?,
    );
    let (alpha, out) = attend_values(dev, &qg, &kg, &vg, dm, 1.0, false).await?;
    let (qc, kc, vc) = (
        project_cpu(&xs, &q, 4, 4),
        project_cpu(&xs, &k, 4, 4),
        project_cpu(&xs, &v, 4, 4),
    );
    let (ac, oc) = attend_cpu(&qc, &kc, &vc, dm, 1.0, false);
    let ub = |o: Vec<f64>| o.into_iter().map(|e| e / beta).collect::<Vec<_>>();
    Ok(Separate {
        x,
        q,
        k,
        v,
        dev: Mapping {
            alpha,
            out: ub(out),
        },
        cpu: Mapping {
            alpha: ac,
            out: ub(oc),
        },
    })
}

/// Which layer E10 imitates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imitate {
    Identity,
    Permutation,
    Linear,
    /// A convolution of the given kernel width (one head per tap).
    Conv(usize),
}

/// E10's construction and results: input content (T, C), what the imitated layer gives (target),
/// per-head source positions and value maps, α (H, T, T) and the layer's output (T, C).
#[derive(Clone, Debug, Serialize)]
pub struct Imitation {
    pub t: usize,
    pub c: usize,
    pub heads: usize,
    pub input: Vec<f64>,
    pub target: Vec<f64>,
    /// sources[h·T + t]: the position head h at position t reads.
    pub sources: Vec<usize>,
    /// Each head's value map W_h (C, C), row-major.
    pub w: Vec<f64>,
    pub dev: Mapping,
    pub cpu: Mapping,
}

/// E10: x_t = [content_t (C) | e_t (T)]. Head h's query is λ·e_{src_h(t)} (from x_t's position
/// part), its keys are the position parts e_j, its values W_h·content; the heads' outputs are
/// summed (concatenation followed by the output projection [I … I]). With a large λ head h copies
/// W_h·content_{src_h(t)}, which is the identity, a permutation, a linear layer or one tap of a
/// convolution (edges clamp).
pub async fn imitate(
    dev: &Rc<Device>,
    kind: Imitate,
    t: usize,
    lambda: f64,
    seed: u64,
) -> Result<Imitation> {
    let c = 2;
    let heads = match kind {
        Imitate::Conv(w) if (1..=5).contains(&w) => w,
        Imitate::Conv(w) => {
            return Err(Error::Msg(format!(
                "imitate: kernel width {w} is outside 1..=5"
            )))
        }
        _ => 1,
    };
    if !(2..=16).contains(&t) {
        return Err(Error::Msg(format!("imitate: T = {t} is outside 2..=16")));
    }
    let mut r = DemoRng::new(seed);
    let input: Vec<f64> = (0..t * c).map(|_| r.uniform(-1.0, 1.0)).collect();
    let eye = [1.0, 0.0, 0.0, 1.0];
    let perm = {
        // Fisher–Yates from the seed; a shared link reproduces it.
        let mut p: Vec<usize> = (0..t).collect();
        for i in (1..t).rev() {
            let j = (r.uniform(0.0, (i + 1) as f64) as usize).min(i);
            p.swap(i, j);
        }
        p
    };
    let mut sources = Vec::with_capacity(heads * t);
    let mut w = Vec::with_capacity(heads * 4);
    for h in 0..heads {
        let off = h as isize - (heads as isize - 1) / 2;
        for (p, &pp) in perm.iter().enumerate() {
            sources.push(match kind {
                Imitate::Permutation => pp,
                Imitate::Conv(_) => (p as isize + off).clamp(0, t as isize - 1) as usize,
                _ => p,
            });
        }
        match kind {
            Imitate::Identity | Imitate::Permutation => w.extend(eye),
            Imitate::Linear => w.extend((0..4).map(|_| r.uniform(-1.0, 1.0))),
            Imitate::Conv(_) => {
                let tap = r.uniform(-1.0, 1.0);
                w.extend(eye.iter().map(|e| e * tap));
            }
        }
    }
    let mut target = vec![0.0; t * c];
    for h in 0..heads {
        for p in 0..t {
            let s = sources[h * t + p];
            for o in 0..c {
                target[p * c + o] += (0..c)
                    .map(|i| w[h * 4 + o * c + i] * input[s * c + i])
                    .sum::<f64>();
            }
        }
    }
    // Per head: queries (T, T), values (T, C); keys e_j shared by all heads.
    let dw = c + t;
    let x: Vec<f64> = (0..t)
        .flat_map(|p| {
            let mut row = input[p * c..p * c + c].to_vec();
            row.extend((0..t).map(|j| if j == p { 1.0 } else { 0.0 }));
            row
        })
        .collect();
    let mut wq = vec![0.0; heads * t * dw];
    let mut wv = vec![0.0; heads * c * dw];
    let mut wk = vec![0.0; t * dw];
    for j in 0..t {
        wk[j * dw + c + j] = 1.0;
    }
    for h in 0..heads {
        for p in 0..t {
            // q_p has λ at the source's coordinate, read from x_p's position one-hot.
            wq[(h * t + sources[h * t + p]) * dw + c + p] = lambda;
        }
        for o in 0..c {
            for i in 0..c {
                wv[(h * c + o) * dw + i] = w[h * 4 + o * c + i];
            }
        }
    }
    let dm = Dims {
        z: heads,
        m: t,
        n: t,
        d: t,
        dv: c,
    };
    let mut q = Vec::new();
    let mut v = Vec::new();
    let (mut qc, mut vc) = (Vec::new(), Vec::new());
    for h in 0..heads {
        q.extend(project(dev, &x, &wq[h * t * dw..(h + 1) * t * dw], dw, t).await?);
        v.extend(project(dev, &x, &wv[h * c * dw..(h + 1) * c * dw], dw, c).await?);
        qc.extend(project_cpu(&x, &wq[h * t * dw..(h + 1) * t * dw], dw, t));
        vc.extend(project_cpu(&x, &wv[h * c * dw..(h + 1) * c * dw], dw, c));
    }
    let k = project(dev, &x, &wk, dw, t).await?;
    let kc = project_cpu(&x, &wk, dw, t);
    let (alpha, heads_out) = attend_values(dev, &q, &k, &v, dm, 1.0, false).await?;
    let (ac, hc) = attend_cpu(&qc, &kc, &vc, dm, 1.0, false);
    // Concatenate and project with [I … I]: the sum over heads, as a (1×H)·(H×T·C) matmul.
    let ones = vec![1.0; heads];
    let out = project(
        dev,
        &ones,
        &transpose(&heads_out, heads, t * c),
        heads,
        t * c,
    )
    .await?;
    let sum_ref = |hs: &[f64]| -> Vec<f64> {
        (0..t * c)
            .map(|i| (0..heads).map(|h| hs[h * t * c + i]).sum())
            .collect()
    };
    Ok(Imitation {
        t,
        c,
        heads,
        input,
        target,
        sources,
        w,
        dev: Mapping { alpha, out },
        cpu: Mapping {
            alpha: ac,
            out: sum_ref(&hc),
        },
    })
}

/// (R, C) row-major → (C, R) row-major.
fn transpose(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols * rows)
        .map(|i| x[(i % rows) * cols + i / rows])
        .collect()
}
