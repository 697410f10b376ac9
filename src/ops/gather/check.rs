//! Gather checks: packed tokens into per-row blocks (with NONE padding) and back, forward and the
//! backward through the inverse map, against the f64 reference.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::gather::{
    block_maps, gather_backward_into, gather_backward_ref, gather_into, gather_ref, inverse,
};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    let (lens, t, c) = ([5usize, 1, 17, 9], 17usize, 33usize);
    let (to_blocks, to_tokens) = block_maps(&lens, t);
    let n = to_tokens.len();
    // Both directions: packed (N, C) → blocks (B·T, C), and blocks → packed.
    for (name, idx, src_rows) in [
        ("tokens to blocks", &to_blocks, n),
        ("blocks to tokens", &to_tokens, lens.len() * t),
    ] {
        // Inputs rounded to f32 first: a gather copies them, so it must match exactly.
        let round = |v: Vec<f64>| v.iter().map(|&a| a as f32 as f64).collect::<Vec<_>>();
        let (x, dy) = (
            round(rand_vec(90, src_rows * c)),
            round(rand_vec(91, idx.len() * c)),
        );
        let inv = inverse(idx, src_rows)?;
        let (ti, tinv) = (
            Tensor::from_u32(dev, &[idx.len()], idx)?,
            Tensor::from_u32(dev, &[src_rows], &inv)?,
        );
        let y = Tensor::uninit(dev, &[idx.len(), c])?;
        gather_into(&ti, &Tensor::from_f32(dev, &[src_rows, c], &f32s(&x))?, &y)?;
        out.push(CheckResult::compare(
            "gather",
            format!("forward {name} ({src_rows}→{} rows, {c})", idx.len()),
            &y.to_vec_f32().await?,
            &gather_ref(idx, &x, c),
            0.0,
        ));
        let dx0 = rand_vec(92, src_rows * c);
        let mut want = dx0.clone();
        gather_backward_ref(idx, &dy, c, &mut want);
        let dx = Tensor::from_f32(dev, &[src_rows, c], &f32s(&dx0))?;
        gather_backward_into(
            &tinv,
            &Tensor::from_f32(dev, &[idx.len(), c], &f32s(&dy))?,
            &dx,
        )?;
        out.push(CheckResult::compare(
            "gather",
            format!("backward {name} ({src_rows}→{} rows, {c})", idx.len()),
            &dx.to_vec_f32().await?,
            &want,
            1e-6,
        ));
    }
    Ok(out)
}
