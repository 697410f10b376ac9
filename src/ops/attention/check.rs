//! Attention checks: the fused kernels on the GPU backend (whichever path `causal_attention`
//! takes there by default: the composed ops have their own checks), `causal_attention`'s composed
//! ops on the CPU backend, forward and backward against the f64 reference, with and without
//! dropout, at odd lengths and head sizes.

use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::Result;
use crate::ops::attention::{
    attention, attention_backward_ref, attention_ref, causal_attention, has_fused_kernels, Dims,
};
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::elementwise;
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    let cases = [
        (
            Dims {
                b: 2,
                t: 3,
                nh: 2,
                hs: 8,
            },
            0.0f32,
        ),
        (
            Dims {
                b: 1,
                t: 17,
                nh: 3,
                hs: 16,
            },
            0.1,
        ),
        (
            Dims {
                b: 2,
                t: 70,
                nh: 1,
                hs: 32,
            },
            0.5,
        ),
    ];
    for (n, &(d, p)) in cases.iter().enumerate() {
        out.extend(check_one(dev, d, p, 300 + 10 * n as u64).await?);
    }
    Ok(out)
}

/// Forward and backward of one case, inputs drawn from `seed`.
async fn check_one(dev: &Rc<Device>, d: Dims, p: f32, seed: u64) -> Result<[CheckResult; 4]> {
    let n = d.b * d.t * d.c();
    let shape = [d.b * d.t, d.c()];
    let (q, k, v, dout) = (
        rand_vec(seed, n),
        rand_vec(seed + 1, n),
        rand_vec(seed + 2, n),
        rand_vec(seed + 3, n),
    );
    let keys: Vec<u32> = (0..d.b * d.nh * d.t).map(|r| r as u32 * 7 + 1).collect();
    let drop_seed = seed as u32 ^ 0x5eed;
    let (o, _) = attention_ref(&q, &k, &v, &keys, d, p, drop_seed);
    let up = |x: &[f64]| Tensor::from_f32(dev, &shape, &f32s(x));
    let leaf = |x: &[f64]| Ok::<_, crate::error::Error>(Var::leaf(up(x)?, true));
    let (tq, tk, tv, tdo) = (leaf(&q)?, leaf(&k)?, leaf(&v)?, up(&dout)?);
    let tkeys = Tensor::from_u32(dev, &[keys.len()], &keys)?;
    let tape = Tape::new();
    let to = if has_fused_kernels(dev, d.hs) {
        attention(&tape, &tq, &tk, &tv, &tkeys, d, p, drop_seed)?
    } else {
        causal_attention(&tape, &tq, &tk, &tv, &tkeys, d, p, drop_seed)?
    };
    let case = format!("({},{},{},{}) p {p}", d.b, d.t, d.nh, d.hs);
    let forward = CheckResult::compare(
        "attention",
        format!("forward {case}"),
        &to.value().to_vec_f32().await?,
        &o,
        1e-5,
    );
    // A scalar node whose backward hands `dout` to the output: the upstream gradient.
    let upstream = to.clone();
    let top = tape.push("upstream", &[&to], Tensor::zeros(dev, &[1])?, move |_| {
        elementwise::axpy_into(&tdo, 1.0, &upstream.grad_or_zeros()?)
    });
    tape.backward(&top)?;
    let (mut dq, mut dk, mut dv) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    attention_backward_ref(
        &q, &k, &v, &dout, &keys, d, p, drop_seed, &mut dq, &mut dk, &mut dv,
    );
    let grad = |x: &Var| {
        x.grad()
            .ok_or_else(|| crate::error::Error::Msg("no gradient".into()))
    };
    let (tdq, tdk, tdv) = (grad(&tq)?, grad(&tk)?, grad(&tv)?);
    let mut res = [forward.clone(), forward.clone(), forward.clone(), forward];
    for (slot, (name, t, want)) in
        res[1..]
            .iter_mut()
            .zip([("dq", &tdq, &dq), ("dk", &tdk, &dk), ("dv", &tdv, &dv)])
    {
        *slot = CheckResult::compare(
            "attention",
            format!("backward {name} {case}"),
            &t.to_vec_f32().await?,
            want,
            1e-4,
        );
    }
    Ok(res)
}
