//! Cross-entropy checks: loss and dlogits against the f64 reference, with ignored (0) targets.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::cross_entropy::{
    cross_entropy_backward_into, cross_entropy_backward_ref, cross_entropy_into, cross_entropy_ref,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    for (i, &(n, v)) in [(5usize, 3usize), (127, 17), (37, 256)].iter().enumerate() {
        let x: Vec<f64> = rand_vec(60 + i as u64, n * v)
            .iter()
            .map(|a| 4.0 * a)
            .collect();
        // Every fourth row is padding (target 0); the others cycle through 1..V.
        let t: Vec<u32> = (0..n)
            .map(|r| {
                if r % 4 == 3 || v == 1 {
                    0
                } else {
                    1 + (r * 7 % (v - 1)) as u32
                }
            })
            .collect();
        let (tx, tt) = (
            Tensor::from_f32(dev, &[n, v], &f32s(&x))?,
            Tensor::from_u32(dev, &[n], &t)?,
        );
        let (loss, stats) = (
            Tensor::uninit(dev, &[1])?,
            Tensor::uninit(dev, &[3 * n + 1])?,
        );
        cross_entropy_into(&tx, &tt, &loss, &stats)?;
        out.push(CheckResult::compare(
            "cross_entropy",
            format!("forward ({n},{v})"),
            &loss.to_vec_f32().await?,
            &[cross_entropy_ref(&x, &t, v)],
            1e-5,
        ));
        let mut d = vec![0.0; n * v];
        cross_entropy_backward_ref(&x, &t, v, 0.5, &mut d);
        let td = Tensor::zeros(dev, &[n, v])?;
        cross_entropy_backward_into(&tx, &tt, &stats, &Tensor::from_f32(dev, &[1], &[0.5])?, &td)?;
        out.push(CheckResult::compare(
            "cross_entropy",
            format!("backward ({n},{v})"),
            &td.to_vec_f32().await?,
            &d,
            1e-5,
        ));
    }
    Ok(out)
}
