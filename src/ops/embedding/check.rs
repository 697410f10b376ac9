//! Embedding checks: gather and the scatter-add backward with repeated (position-style) ids.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::embedding::{
    embedding_backward_into, embedding_backward_ref, embedding_into, embedding_ref,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    // (N, V, C, name): token-like ids, and position ids 0..T repeated for 4 batch rows.
    for (i, &(n, v, c, name)) in [
        (127usize, 17usize, 33usize, "token ids"),
        (4 * 127, 127, 32, "position ids"),
    ]
    .iter()
    .enumerate()
    {
        let ids: Vec<u32> = (0..n)
            .map(|k| {
                if i == 0 {
                    (k * 7 % v) as u32
                } else {
                    (k % v) as u32
                }
            })
            .collect();
        let (table, dout) = (
            rand_vec(70 + i as u64, v * c),
            rand_vec(80 + i as u64, n * c),
        );
        let (tids, tt) = (
            Tensor::from_u32(dev, &[n], &ids)?,
            Tensor::from_f32(dev, &[v, c], &f32s(&table))?,
        );
        let to = Tensor::uninit(dev, &[n, c])?;
        embedding_into(&tids, &tt, &to)?;
        out.push(CheckResult::compare(
            "embedding",
            format!("forward {name} ({n}) of ({v},{c})"),
            &to.to_vec_f32().await?,
            &embedding_ref(&ids, &table, c),
            1e-6,
        ));
        let mut d = vec![0.0; v * c];
        embedding_backward_ref(&ids, &dout, c, &mut d);
        let td = Tensor::zeros(dev, &[v, c])?;
        embedding_backward_into(&tids, &Tensor::from_f32(dev, &[n, c], &f32s(&dout))?, &td)?;
        out.push(CheckResult::compare(
            "embedding",
            format!("backward {name} ({n}) of ({v},{c})"),
            &td.to_vec_f32().await?,
            &d,
            1e-5,
        ));
    }
    Ok(out)
}
