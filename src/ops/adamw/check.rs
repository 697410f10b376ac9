//! AdamW checks: three steps with a changing learning rate, with and without decay and clipping,
//! GPU against the f64 reference (parameters and both moments); the same for the one-dispatch
//! step over arenas of three parameters of odd sizes, decayed and not.

use crate::device::Device;
use crate::error::Result;
use crate::ops::adamw::{
    adamw_arena_step_into, adamw_step_into, adamw_step_ref, spans, AdamGroup, AdamState, AdamW,
};
use crate::ops::checks::{f32s, rand_vec, CheckResult};
use crate::tensor::Tensor;
use std::rc::Rc;

pub async fn check(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let mut out = vec![];
    // (name, elements, decay, norm, max_norm)
    let cases = [
        (
            "1000 elements, decay, clipped",
            1000usize,
            true,
            3.0f32,
            1.0f32,
        ),
        (
            "17 elements, no decay, no clip",
            17,
            false,
            3.0,
            f32::INFINITY,
        ),
    ];
    for (ci, &(name, n, decay, nv, max_norm)) in cases.iter().enumerate() {
        let round = |x: Vec<f64>| f32s(&x).iter().map(|&v| v as f64).collect::<Vec<f64>>();
        let p0 = round(rand_vec(100 + ci as u64, n));
        let param = Tensor::from_f32(dev, &[n], &f32s(&p0))?;
        let norm = Tensor::from_f32(dev, &[1], &[nv])?;
        let mut state = AdamState::new(dev, &[n])?;
        let (mut cp, mut cm, mut cv, mut step) = (p0, vec![0.0; n], vec![0.0; n], 0u32);
        for t in 0..3u64 {
            let opt = AdamW {
                lr: 1e-2 / (t + 1) as f32,
                ..AdamW::default()
            };
            let g = round(rand_vec(200 + ci as u64 * 10 + t, n));
            let tg = Tensor::from_f32(dev, &[n], &f32s(&g))?;
            adamw_step_into(&opt, &param, &tg, &mut state, decay, &norm, max_norm)?;
            adamw_step_ref(
                &opt,
                &mut cp,
                &g,
                &mut cm,
                &mut cv,
                &mut step,
                decay,
                nv as f64,
                max_norm as f64,
            );
        }
        out.push(CheckResult::compare(
            "adamw",
            format!("param {name}"),
            &param.to_vec_f32().await?,
            &cp,
            1e-5,
        ));
        out.push(CheckResult::compare(
            "adamw",
            format!("m {name}"),
            &state.m().to_vec_f32().await?,
            &cm,
            1e-5,
        ));
        out.push(CheckResult::compare(
            "adamw",
            format!("v {name}"),
            &state.v().to_vec_f32().await?,
            &cv,
            1e-5,
        ));
    }
    out.extend(check_arena(dev).await?);
    Ok(out)
}

async fn check_arena(dev: &Rc<Device>) -> Result<Vec<CheckResult>> {
    let round = |x: Vec<f64>| f32s(&x).iter().map(|&v| v as f64).collect::<Vec<f64>>();
    let (sp, len) = spans(&[(1000, true), (17, false), (65, true)]);
    let (nv, max_norm) = (3.0f32, 1.0f32);
    let mut group = AdamGroup::new(dev, sp.clone(), len)?;
    let norm = Tensor::from_f32(dev, &[1], &[nv])?;
    // Each parameter's values, moments and step in f64, and the arenas' contents.
    let mut refs = vec![];
    let mut w = vec![0.0f32; len];
    for (i, s) in sp.iter().enumerate() {
        let p0 = round(rand_vec(300 + i as u64, s.len));
        w[s.at..s.at + s.len].copy_from_slice(&f32s(&p0));
        refs.push((p0, vec![0.0; s.len], vec![0.0; s.len], 0u32));
    }
    let values = Tensor::from_f32(dev, &[len], &w)?;
    for t in 0..3u64 {
        let opt = AdamW {
            lr: 1e-2 / (t + 1) as f32,
            ..AdamW::default()
        };
        let mut gw = vec![0.0f32; len];
        for (i, s) in sp.iter().enumerate() {
            let g = round(rand_vec(400 + 10 * i as u64 + t, s.len));
            gw[s.at..s.at + s.len].copy_from_slice(&f32s(&g));
            let (p, m, v, step) = &mut refs[i];
            let (nv, mx) = (nv as f64, max_norm as f64);
            adamw_step_ref(&opt, p, &g, m, v, step, s.decay, nv, mx);
        }
        let grads = Tensor::from_f32(dev, &[len], &gw)?;
        adamw_arena_step_into(&opt, &values, &grads, &mut group, &norm, max_norm)?;
    }
    let got = values.to_vec_f32().await?;
    let (m, v) = group.moments().await?;
    let mut out = vec![];
    for (s, (p, rm, rv, _)) in sp.iter().zip(&refs) {
        let r = s.at..s.at + s.len;
        let name = |what: &str| format!("arena {what}, {} elements, decay {}", s.len, s.decay);
        out.push(CheckResult::compare(
            "adamw",
            name("param"),
            &got[r.clone()],
            p,
            1e-5,
        ));
        out.push(CheckResult::compare(
            "adamw",
            name("m"),
            &m[r.clone()],
            rm,
            1e-5,
        ));
        out.push(CheckResult::compare("adamw", name("v"), &v[r], rv, 1e-5));
    }
    Ok(out)
}
