//! Dropout checks: the GPU's keyed hash against its Rust twin, and forward/backward against the reference.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::dropout::{
    dropout_backward_into, dropout_backward_ref, dropout_bits_into, dropout_into, dropout_ref,
    element_hash,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    // Rows of 100 elements with scattered keys, as the GPT's (example, position) keys are.
    let (n, cols, seed) = (20_000usize, 100usize, 1234u32);
    let keys: Vec<u32> = (0..(n / cols) as u32).map(|r| r * 131 + 7).collect();
    let tk = Tensor::from_u32(dev, &[keys.len()], &keys)?;
    let th = Tensor::uninit(dev, &[n])?;
    dropout_bits_into(&th, &tk, seed)?;
    let same = th
        .to_vec_u32()
        .await?
        .iter()
        .enumerate()
        .filter(|(i, &h)| h == element_hash(seed, keys[i / cols], (i % cols) as u32))
        .count();
    // Reported as the fraction of hashes that differ; it must be exactly 0.
    let frac = (n - same) as f64 / n as f64;
    out.push(CheckResult {
        op: "dropout".into(),
        case: format!("hash WGSL = Rust ({n} indices)"),
        max_err: frac,
        tol: 0.0,
        passed: frac == 0.0,
    });
    for (i, &(len, p)) in [(17usize, 0.5f32), (n, 0.1)].iter().enumerate() {
        let (x, dy) = (rand_vec(90 + i as u64, len), rand_vec(95 + i as u64, len));
        let keys = if len == n { keys.clone() } else { vec![3] };
        let tk = Tensor::from_u32(dev, &[keys.len()], &keys)?;
        let tx = Tensor::from_f32(dev, &[len], &f32s(&x))?;
        let ty = Tensor::uninit(dev, &[len])?;
        dropout_into(&tx, &ty, &tk, p, seed)?;
        out.push(CheckResult::compare(
            "dropout",
            format!("forward {len} p={p}"),
            &ty.to_vec_f32().await?,
            &dropout_ref(&x, &keys, p, seed),
            1e-6,
        ));
        let mut dx = vec![0.0; len];
        dropout_backward_ref(&dy, &keys, p, seed, &mut dx);
        let tdx = Tensor::zeros(dev, &[len])?;
        dropout_backward_into(
            &Tensor::from_f32(dev, &[len], &f32s(&dy))?,
            &tdx,
            &tk,
            p,
            seed,
        )?;
        out.push(CheckResult::compare(
            "dropout",
            format!("backward {len} p={p}"),
            &tdx.to_vec_f32().await?,
            &dx,
            1e-6,
        ));
    }
    Ok(out)
}
