//! Softmax checks, causal and unmasked: forward and backward against the f64 reference at a few
//! sequence lengths.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::softmax::{
    causal_softmax_backward_into, causal_softmax_into, causal_softmax_ref, softmax_backward_into,
    softmax_backward_ref, softmax_into, softmax_ref,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    for (i, &(z, t, scale)) in [(2usize, 3usize, 0.5f64), (3, 17, 0.25), (1, 127, 0.125)]
        .iter()
        .enumerate()
    {
        out.extend(check_one(dev, true, z, t, scale, 40 + i as u64).await?);
    }
    // The ViT's attention: 17 = 16 patches + [CLS], and a long row.
    for (i, &(z, t, scale)) in [(3usize, 17usize, 0.5f64), (1, 300, 0.125)]
        .iter()
        .enumerate()
    {
        out.extend(check_one(dev, false, z, t, scale, 60 + i as u64).await?);
    }
    Ok(out)
}

/// Forward and backward of the causal or the unmasked softmax on (z, t, t) scores drawn from
/// `seed` (the upstream gradient from `seed + 10`).
async fn check_one(
    dev: &Rc<Device>,
    causal: bool,
    z: usize,
    t: usize,
    scale: f64,
    seed: u64,
) -> Result<[CheckResult; 2]> {
    let name = if causal { "causal_softmax" } else { "softmax" };
    let n = z * t * t;
    let x: Vec<f64> = rand_vec(seed, n).iter().map(|v| 4.0 * v).collect();
    let dp = rand_vec(seed + 10, n);
    let p = if causal {
        causal_softmax_ref(&x, t, scale)
    } else {
        softmax_ref(&x, t, scale)
    };
    let tx = Tensor::from_f32(dev, &[z, t, t], &f32s(&x))?;
    let tp = Tensor::uninit(dev, &[z, t, t])?;
    if causal {
        causal_softmax_into(&tx, &tp, scale as f32)?;
    } else {
        softmax_into(&tx, &tp, scale as f32)?;
    }
    let forward = CheckResult::compare(
        name,
        format!("forward ({z},{t},{t})"),
        &tp.to_vec_f32().await?,
        &p,
        1e-5,
    );
    let mut ds = vec![0.0; n];
    softmax_backward_ref(&p, &dp, t, scale, &mut ds);
    let tds = Tensor::zeros(dev, &[z, t, t])?;
    let tdp = Tensor::from_f32(dev, &[z, t, t], &f32s(&dp))?;
    if causal {
        causal_softmax_backward_into(&tp, &tdp, &tds, scale as f32)?;
    } else {
        softmax_backward_into(&tp, &tdp, &tds, scale as f32)?;
    }
    let backward = CheckResult::compare(
        name,
        format!("backward ({z},{t},{t})"),
        &tds.to_vec_f32().await?,
        &ds,
        1e-5,
    );
    Ok([forward, backward])
}
