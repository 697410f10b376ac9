//! The page's run-size measurement (wasm32 only): a few training steps of a model of the form's
//! size on this device, timed by wall clock, so the page can say before a run how long each preset
//! takes here and size the quick preset to the device. The first step is timed on its own: it
//! builds the kernels' pipelines (WebGPU) and allocates the buffers, so it is slower than the rest.

use super::js::to_js;
use super::{device, lost_reason};
use crate::bench::T;
use crate::model::{Gpt, GptConfig, Variant};
use crate::train::{TrainConfig, Trainer};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// Accepted ranges (a measurement is short by design).
const MAX_ROWS: u32 = 256;
const MAX_REPEATS: u32 = 10;

#[derive(Serialize)]
struct StepTime {
    rows: usize,
    t: usize,
    /// The first step, pipelines and buffers included.
    first_ms: f64,
    /// Each step after it (the mean over `repeats`).
    ms_per_step: f64,
    params: usize,
}

/// A property of the global scope: the engine runs in a Web Worker (web/engine-worker.js), where
/// there is no `window` but `setTimeout` and `performance` are there all the same.
fn global(name: &str) -> JsValue {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// Milliseconds from `performance.now()` (`Date.now()` where there is none).
pub(super) fn now_ms() -> f64 {
    global("performance")
        .dyn_into::<web_sys::Performance>()
        .map(|p| p.now())
        .unwrap_or_else(|_| js_sys::Date::now())
}

/// Time training steps of a `variant` GPT with `n_layer` layers, `n_head` heads, width `n_embd`
/// and `vocab_size` characters on `rows` x 127 tokens (the assignment's dropout, AdamW, clipping):
/// one first step read back, then `repeats` steps, each read back. Returns `{rows, t, first_ms,
/// ms_per_step, params}`. The model is thrown away afterwards; nothing of a run is touched.
#[wasm_bindgen]
pub async fn page_time_step(
    variant: String,
    n_layer: u32,
    n_head: u32,
    n_embd: u32,
    vocab_size: u32,
    rows: u32,
    repeats: u32,
) -> Result<JsValue, JsError> {
    let variant = match variant.as_str() {
        "vanilla" => Variant::Vanilla,
        "synthesizer" => Variant::Synthesizer,
        v => {
            return Err(JsError::new(&format!(
                "unknown attention variant '{v}'; choose vanilla or synthesizer"
            )))
        }
    };
    if !(1..=MAX_ROWS).contains(&rows) || !(1..=MAX_REPEATS).contains(&repeats) {
        return Err(JsError::new(&format!(
            "a measurement takes 1 to {MAX_ROWS} rows and 1 to {MAX_REPEATS} repeats, not {rows} \
             and {repeats}"
        )));
    }
    let cfg = GptConfig {
        n_layer: n_layer as usize,
        n_head: n_head as usize,
        n_embd: n_embd as usize,
        ..GptConfig::assignment(variant, (vocab_size as usize).max(2))
    };
    cfg.validate().map_err(|e| JsError::new(&e.to_string()))?;
    let g = device().await?;
    let fail = |e: crate::Error| match lost_reason() {
        Some(why) => JsError::new(&format!("the GPU device was lost ({why}): {e}")),
        None => JsError::new(&e.to_string()),
    };
    let model = Gpt::new(&g, cfg, 1).map_err(fail)?;
    let params = model.num_params();
    let mut tr = Trainer::new(model, TrainConfig::pretrain(), 0).map_err(fail)?;
    crate::device::yield_to_host().await;
    let rows = rows as usize;
    let vocab = (vocab_size as usize).max(2);
    let x: Vec<u32> = (0..rows * T)
        .map(|i| (i % (vocab - 1) + 1) as u32)
        .collect();
    let t0 = now_ms();
    tr.step(&x, &x, rows, T)
        .map_err(fail)?
        .to_vec_f32()
        .await
        .map_err(fail)?;
    let first_ms = now_ms() - t0;
    crate::device::yield_to_host().await;
    // Each step read back before the next is recorded, as the page's training loop does at least
    // every second step: the page's thread gets a turn between steps (no long task of several).
    let t1 = now_ms();
    for _ in 0..repeats {
        tr.step(&x, &x, rows, T)
            .map_err(fail)?
            .to_vec_f32()
            .await
            .map_err(fail)?;
    }
    let ms_per_step = (now_ms() - t1) / repeats as f64;
    to_js(&StepTime {
        rows,
        t: T,
        first_ms,
        ms_per_step,
        params,
    })
}
