//! LayerNorm checks: forward, mean/rstd and backward dx/dw/db on (33, 127).

use crate::device::Device;
use crate::error::Result;
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::ops::layernorm::*;
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let (rows, c) = (33, 127);
    let round = |v: Vec<f64>| v.iter().map(|&a| a as f32 as f64).collect::<Vec<_>>();
    let x = round(
        rand_vec(300, rows * c)
            .iter()
            .map(|v| 0.5 + 2.0 * v)
            .collect(),
    );
    let (w, b, dy) = (
        round(rand_vec(301, c)),
        round(rand_vec(302, c)),
        rand_vec(303, rows * c),
    );
    let (tx, tw, tb) = (
        Tensor::from_f32(dev, &[rows, c], &f32s(&x))?,
        Tensor::from_f32(dev, &[c], &f32s(&w))?,
        Tensor::from_f32(dev, &[c], &f32s(&b))?,
    );
    let (ty, tm, ts) = (
        Tensor::uninit(dev, &[rows, c])?,
        Tensor::uninit(dev, &[rows])?,
        Tensor::uninit(dev, &[rows])?,
    );
    layernorm_into(&tx, &tw, &tb, &ty, &tm, &ts)?;
    let (y, mean, rstd) = layernorm_ref(&x, &w, &b, c);
    let case = |s: &str| format!("{s} ({rows}, {c})");
    let mut out = vec![
        CheckResult::compare(
            "layernorm",
            case("forward"),
            &ty.to_vec_f32().await?,
            &y,
            1e-4,
        ),
        CheckResult::compare(
            "layernorm",
            case("saved mean"),
            &tm.to_vec_f32().await?,
            &mean,
            1e-5,
        ),
        CheckResult::compare(
            "layernorm",
            case("saved rstd"),
            &ts.to_vec_f32().await?,
            &rstd,
            1e-4,
        ),
    ];
    let (mut dx, mut dw, mut db) = (vec![0.0; rows * c], vec![0.0; c], vec![0.0; c]);
    layernorm_backward_ref(&x, &w, &dy, c, &mut dx, &mut dw, &mut db);
    let (tdx, tdw, tdb) = (
        Tensor::zeros(dev, &[rows, c])?,
        Tensor::zeros(dev, &[c])?,
        Tensor::zeros(dev, &[c])?,
    );
    layernorm_backward_into(
        &tx,
        &tw,
        &tm,
        &ts,
        &Tensor::from_f32(dev, &[rows, c], &f32s(&dy))?,
        Some(&tdx),
        Some(&tdw),
        Some(&tdb),
    )?;
    out.push(CheckResult::compare(
        "layernorm",
        case("backward dx"),
        &tdx.to_vec_f32().await?,
        &dx,
        1e-4,
    ));
    out.push(CheckResult::compare(
        "layernorm",
        case("backward dw"),
        &tdw.to_vec_f32().await?,
        &dw,
        1e-4,
    ));
    out.push(CheckResult::compare(
        "layernorm",
        case("backward db"),
        &tdb.to_vec_f32().await?,
        &db,
        1e-4,
    ));
    Ok(out)
}
