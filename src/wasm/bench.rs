//! The page's Benchmark card (wasm32 only): runs `crate::bench::run_all`, the same matmul cases and
//! tiny-preset training steps as the native `bench` binary, timed by wall clock (`performance.now()`)
//! on the page's shared device.

use super::engine::Engine;
use super::js::to_js;
use wasm_bindgen::prelude::*;

/// Accepted ranges (the page checks the same ones before calling).
pub const MAX_ROWS: u32 = 64;
pub const MAX_REPEATS: u32 = 20;

/// Seconds from `performance.now()` (in the page's window or the engine's worker).
fn now() -> f64 {
    super::measure::now_ms() / 1e3
}

#[wasm_bindgen]
impl Engine {
    /// Run the benchmark: the matmul cases at the GPT's shapes (`quick`: rows and batches / 16, as
    /// `bench --quick`), then the tiny preset's training step on `rows` x 127 tokens for vanilla and
    /// synthesizer attention, each timed over `repeats` iterations after a warm-up.
    /// `progress(text)`, when given, is called before each part. Returns `{adapter, quick, rows,
    /// repeats, matmul: [{name, gflop, ms, gflops}], steps: [{variant, rows, t, ms_per_step,
    /// tokens_per_s, dispatches_per_step}], seconds}`.
    pub async fn bench(
        &self,
        rows: u32,
        repeats: u32,
        quick: bool,
        progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        if !(1..=MAX_ROWS).contains(&rows) {
            return Err(JsError::new(&format!(
                "rows must be a whole number from 1 to {MAX_ROWS}, not {rows}"
            )));
        }
        if !(1..=MAX_REPEATS).contains(&repeats) {
            return Err(JsError::new(&format!(
                "repeats must be a whole number from 1 to {MAX_REPEATS}, not {repeats}"
            )));
        }
        let g = self.device().await?;
        let mut report = |what: &str| {
            if let Some(f) = &progress {
                let _ = f.call1(&JsValue::NULL, &JsValue::from_str(what));
            }
        };
        let r = crate::bench::run_all(
            &g,
            rows as usize,
            repeats as usize,
            quick,
            &now,
            &mut report,
        )
        .await
        .map_err(|e| self.engine_error(e))?;
        to_js(&r)
    }

    /// The GPU matmul kernel in use and how it was chosen: `{kernel, how, kernels, ms}` (see
    /// `bench::MatmulChoice`; on the CPU backend `kernel` is "cpu backend").
    pub async fn matmul_choice(&self) -> Result<JsValue, JsError> {
        let dev = self.device().await?;
        to_js(&crate::bench::matmul_choice(&dev))
    }

    /// Time every GPU matmul kernel at the GPT's shapes (the quick cases, three calls each after a
    /// warm-up, one on a slow adapter) and keep the fastest on this device for every later product;
    /// returns the choice with every time. On the CPU backend nothing is timed.
    pub async fn tune_matmul(&self) -> Result<JsValue, JsError> {
        let dev = self.device().await?;
        let c = crate::bench::tune_matmul(&dev, 3, &now)
            .await
            .map_err(|e| JsError::new(&e.to_string()))?;
        to_js(&c)
    }

    /// Use a kernel chosen earlier on this device (kept by the page in the browser's storage); an
    /// unknown name is refused with the names there are.
    pub async fn set_matmul(&self, kernel: String) -> Result<JsValue, JsError> {
        let dev = self.device().await?;
        crate::bench::set_matmul(&dev, &kernel).map_err(|e| JsError::new(&e.to_string()))?;
        to_js(&crate::bench::matmul_choice(&dev))
    }
}
