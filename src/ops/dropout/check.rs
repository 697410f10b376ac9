//! Dropout checks: the GPU hash against its Rust twin, and forward/backward against the reference.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::dropout::{
    dropout_backward_into, dropout_backward_ref, dropout_bits_into, dropout_hash, dropout_into,
    dropout_ref,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(gpu: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    let (n, seed) = (20_000usize, 1234u32);
    let th = Tensor::uninit(gpu, &[n])?;
    dropout_bits_into(&th, seed)?;
    let same = th
        .to_vec_u32()
        .await?
        .iter()
        .enumerate()
        .filter(|(i, &h)| h == dropout_hash(seed, *i as u32))
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
        let tx = Tensor::from_f32(gpu, &[len], &f32s(&x))?;
        let ty = Tensor::uninit(gpu, &[len])?;
        dropout_into(&tx, &ty, p, seed)?;
        out.push(CheckResult::compare(
            "dropout",
            format!("forward {len} p={p}"),
            &ty.to_vec_f32().await?,
            &dropout_ref(&x, p, seed),
            1e-6,
        ));
        let mut dx = vec![0.0; len];
        dropout_backward_ref(&dy, p, seed, &mut dx);
        let tdx = Tensor::zeros(gpu, &[len])?;
        dropout_backward_into(&Tensor::from_f32(gpu, &[len], &f32s(&dy))?, &tdx, p, seed)?;
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
