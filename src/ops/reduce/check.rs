//! Reduce checks: a multi-pass sum, a mean, and the global norm over tensors of awkward sizes.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::reduce::*;
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    let n = 40_001; // three passes: 40 001 → 40 → 1
    let x: Vec<f64> = rand_vec(200, n).iter().map(|&v| v as f32 as f64).collect();
    let tx = Tensor::from_f32(dev, &[n], &f32s(&x))?;
    let t = Tensor::uninit(dev, &[1])?;
    sum_into(&tx, 1.0, &t)?;
    out.push(CheckResult::compare(
        "sum",
        format!("n={n}"),
        &t.to_vec_f32().await?,
        &[sum_ref(&x)],
        1e-4,
    ));
    sum_into(&tx, 1.0 / n as f32, &t)?;
    out.push(CheckResult::compare(
        "mean",
        format!("n={n}"),
        &t.to_vec_f32().await?,
        &[mean_ref(&x)],
        1e-5,
    ));

    let dx0 = rand_vec(201, 1000);
    let tdx = Tensor::from_f32(dev, &[1000], &f32s(&dx0))?;
    let tdy = Tensor::from_f32(dev, &[1], &[2.0])?;
    sum_backward_into(&tdy, 1e-3, &tdx)?;
    let mut want = dx0.clone();
    sum_backward_ref(2.0, 1e-3, &mut want);
    out.push(CheckResult::compare(
        "mean",
        "backward n=1000 (accumulating)".into(),
        &tdx.to_vec_f32().await?,
        &want,
        1e-6,
    ));

    let xs: Vec<Vec<f64>> = [1, 17, 1025, 3]
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            rand_vec(210 + i as u64, m)
                .iter()
                .map(|&v| v as f32 as f64)
                .collect()
        })
        .collect();
    let ts = xs
        .iter()
        .map(|v| Tensor::from_f32(dev, &[v.len()], &f32s(v)))
        .collect::<Result<Vec<_>>>()?;
    global_norm_into(&ts.iter().collect::<Vec<_>>(), &t)?;
    let want = global_norm_ref(&xs.iter().map(|v| &v[..]).collect::<Vec<_>>());
    out.push(CheckResult::compare(
        "global_norm",
        "4 tensors (1, 17, 1025, 3)".into(),
        &t.to_vec_f32().await?,
        &[want],
        1e-5,
    ));
    Ok(out)
}
