//! Elementwise checks: add, axpy, GELU and ReLU forward and backward on an awkward size.

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::elementwise::*;
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let n = 4099;
    let (a, b, dout) = (rand_vec(100, n), rand_vec(101, n), rand_vec(102, n));
    // Spread x over [-4, 4) and round it to f32 so the CPU sees exactly what the GPU sees.
    let x: Vec<f64> = rand_vec(103, n)
        .iter()
        .map(|v| (4.0 * v) as f32 as f64)
        .collect();
    let (ta, tb, tx, tdout) = (
        Tensor::from_f32(dev, &[n], &f32s(&a))?,
        Tensor::from_f32(dev, &[n], &f32s(&b))?,
        Tensor::from_f32(dev, &[n], &f32s(&x))?,
        Tensor::from_f32(dev, &[n], &f32s(&dout))?,
    );
    let case = |s: &str| format!("{s} n={n}");
    let mut out = vec![];

    let t = Tensor::uninit(dev, &[n])?;
    add_into(&ta, &tb, &t)?;
    out.push(CheckResult::compare(
        "add",
        case("forward"),
        &t.to_vec_f32().await?,
        &add_ref(&a, &b),
        1e-6,
    ));
    axpy_into(&ta, -0.5, &t)?;
    let want: Vec<f64> = a.iter().zip(&b).map(|(a, b)| 0.5 * a + b).collect();
    out.push(CheckResult::compare(
        "axpy",
        case("y += -0.5·x"),
        &t.to_vec_f32().await?,
        &want,
        1e-6,
    ));

    gelu_into(&tx, &t)?;
    out.push(CheckResult::compare(
        "gelu",
        case("forward"),
        &t.to_vec_f32().await?,
        &gelu_ref(&x),
        1e-5,
    ));
    let mut dx = b.clone();
    gelu_backward_ref(&x, &dout, &mut dx);
    let tdx = Tensor::from_f32(dev, &[n], &f32s(&b))?;
    gelu_backward_into(&tx, &tdout, &tdx)?;
    out.push(CheckResult::compare(
        "gelu",
        case("backward (accumulating)"),
        &tdx.to_vec_f32().await?,
        &dx,
        1e-5,
    ));

    relu_into(&tx, &t)?;
    out.push(CheckResult::compare(
        "relu",
        case("forward"),
        &t.to_vec_f32().await?,
        &relu_ref(&x),
        1e-6,
    ));
    let mut dx = b.clone();
    relu_backward_ref(&x, &dout, &mut dx);
    let tdx = Tensor::from_f32(dev, &[n], &f32s(&b))?;
    relu_backward_into(&tx, &tdout, &tdx)?;
    out.push(CheckResult::compare(
        "relu",
        case("backward (accumulating)"),
        &tdx.to_vec_f32().await?,
        &dx,
        1e-6,
    ));
    Ok(out)
}
