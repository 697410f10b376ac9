//! The page's run-size measurement (wasm32 only): a few training steps of a model of the form's
//! size on this device, timed by wall clock, so the page can say before a run how long each preset
//! takes here and size the quick preset to the device. The first step is timed on its own: it
//! builds the kernels' pipelines (WebGPU) and allocates the buffers, so it is slower than the rest.

use super::engine::Engine;
use super::js::to_js;
use crate::bench::T;
use crate::data::Vocab;
use crate::model::memory::{self, MemoryLimit};
use crate::model::{Gpt, GptConfig, Variant};
use crate::train::{Overrides, RunData, RunKind, RunSpec, TrainConfig, Trainer};
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
    /// The fastest of those steps: what the page's estimates of the larger models use, as other
    /// work on the machine only ever adds time to a step (the mean moved 2x between loads here).
    best_ms: f64,
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

/// A measurement is short by design: 1 to MAX_ROWS rows, 1 to MAX_REPEATS repeats.
fn check_size(rows: u32, repeats: u32) -> Result<(), JsError> {
    if !(1..=MAX_ROWS).contains(&rows) || !(1..=MAX_REPEATS).contains(&repeats) {
        return Err(JsError::new(&format!(
            "a measurement takes 1 to {MAX_ROWS} rows and 1 to {MAX_REPEATS} repeats, not {rows} \
             and {repeats}"
        )));
    }
    Ok(())
}

impl Engine {
    /// An engine error as the page shows it, saying so when the GPU device was lost meanwhile.
    pub(super) fn engine_error(&self, e: crate::Error) -> JsError {
        match self.lost_reason() {
            Some(why) => JsError::new(&format!("the GPU device was lost ({why}): {e}")),
            None => JsError::new(&e.to_string()),
        }
    }
}

/// A run's data and vocabulary as the page's run builds them: `kind` "pretrain" reads the
/// pretraining text, "finetune" the TSV (its questions encoded with the text's vocabulary).
fn run_data(
    kind: &str,
    wiki_name: &str,
    wiki: &str,
    tsv_name: &str,
    tsv: &str,
) -> Result<(RunData, Vocab), JsError> {
    let spec = RunSpec {
        kind: RunKind::from_name(kind).map_err(|e| JsError::new(&e.to_string()))?,
        variant: Variant::Vanilla,
        tiny: false,
        pretrained: false,
        overrides: Overrides::default(),
        seed: 0,
    };
    let msg = |e: crate::Error| JsError::new(&e.to_string());
    let vocab = Vocab::from_text(wiki, wiki_name).map_err(msg)?;
    let data =
        RunData::new(&spec, wiki, wiki_name, (tsv.as_bytes(), tsv_name), &vocab).map_err(msg)?;
    Ok((data, vocab))
}

#[derive(Serialize)]
struct RunStepTime {
    rows: usize,
    /// Engine calls a step is cut into on this device (`cut::micro_rows`).
    calls: usize,
    /// The first step, pipelines and buffers included.
    first_ms: f64,
    /// Each step after it (the mean over `repeats`).
    ms_per_step: f64,
    best_ms: f64,
    /// One save's engine part: the training state to bytes (weights and AdamW moments read back).
    save_ms: f64,
}

/// The assignment's configuration at the form's size, checked (layers, heads, width, vocabulary).
fn sized(
    variant: Variant,
    n_layer: u32,
    n_head: u32,
    n_embd: u32,
    vocab_size: u32,
) -> Result<GptConfig, JsError> {
    let cfg = GptConfig {
        n_layer: n_layer as usize,
        n_head: n_head as usize,
        n_embd: n_embd as usize,
        ..GptConfig::assignment(variant, (vocab_size as usize).max(2))
    };
    cfg.validate().map_err(|e| JsError::new(&e.to_string()))?;
    Ok(cfg)
}

#[wasm_bindgen]
impl Engine {
    /// Time training steps of a `variant` GPT with `n_layer` layers, `n_head` heads, width `n_embd`
    /// and `vocab_size` characters on `rows` x 127 tokens (the assignment's dropout, AdamW, clipping):
    /// one first step read back, then `repeats` steps, each read back. Returns `{rows, t, first_ms,
    /// ms_per_step, best_ms, params}`. The model is thrown away afterwards; nothing of a run is touched.
    #[allow(clippy::too_many_arguments)]
    pub async fn time_step(
        &self,
        variant: String,
        n_layer: u32,
        n_head: u32,
        n_embd: u32,
        vocab_size: u32,
        rows: u32,
        repeats: u32,
    ) -> Result<JsValue, JsError> {
        let variant = Variant::from_name(&variant).map_err(|e| JsError::new(&e.to_string()))?;
        check_size(rows, repeats)?;
        let cfg = sized(variant, n_layer, n_head, n_embd, vocab_size)?;
        let g = self.device().await?;
        let model = Gpt::new(&g, cfg, 1).map_err(|e| self.engine_error(e))?;
        let params = model.num_params();
        let mut tr =
            Trainer::new(model, TrainConfig::pretrain(), 0).map_err(|e| self.engine_error(e))?;
        crate::device::yield_to_host().await;
        let rows = rows as usize;
        let vocab = (vocab_size as usize).max(2);
        let x: Vec<u32> = (0..rows * T)
            .map(|i| (i % (vocab - 1) + 1) as u32)
            .collect();
        let t0 = now_ms();
        tr.step(&x, &x, rows, T)
            .map_err(|e| self.engine_error(e))?
            .to_vec_f32()
            .await
            .map_err(|e| self.engine_error(e))?;
        let first_ms = now_ms() - t0;
        crate::device::yield_to_host().await;
        // Each step read back before the next is recorded, as the page's training loop does at least
        // every second step: the page's thread gets a turn between steps (no long task of several).
        let mut each = Vec::with_capacity(repeats as usize);
        for _ in 0..repeats {
            let t1 = now_ms();
            tr.step(&x, &x, rows, T)
                .map_err(|e| self.engine_error(e))?
                .to_vec_f32()
                .await
                .map_err(|e| self.engine_error(e))?;
            each.push(now_ms() - t1);
        }
        let ms_per_step = each.iter().sum::<f64>() / each.len() as f64;
        let best_ms = each.iter().copied().fold(f64::INFINITY, f64::min);
        to_js(&StepTime {
            rows,
            t: T,
            first_ms,
            ms_per_step,
            best_ms,
            params,
        })
    }

    /// The largest batch of at most `batch` rows whose training step of a `variant` GPT of this size
    /// fits this device, by the check a run makes before it starts (`memory::largest_batch`); 0 when
    /// not even one row fits. The page offers that batch instead of a preset that would be refused.
    pub async fn fit(
        &self,
        variant: String,
        n_layer: u32,
        n_head: u32,
        n_embd: u32,
        vocab_size: u32,
        batch: u32,
    ) -> Result<u32, JsError> {
        let variant = Variant::from_name(&variant).map_err(|e| JsError::new(&e.to_string()))?;
        let cfg = sized(variant, n_layer, n_head, n_embd, vocab_size)?;
        let g = self.device().await?;
        let lim = MemoryLimit::of_device(&g);
        Ok(memory::largest_batch(&cfg, batch as usize, cfg.block_size, &lim) as u32)
    }

    /// The share of token positions a packed step of this data runs (`RunData::packed_fill` over the
    /// first 1000 examples): `kind` "pretrain" reads the pretraining text, "finetune" the TSV. The
    /// measurement above times full 127-token rows; a run's step costs about this share of one.
    pub fn packed_fill(
        &self,
        kind: String,
        wiki_name: String,
        wiki: String,
        tsv_name: String,
        tsv: String,
    ) -> Result<f64, JsError> {
        let (data, _) = run_data(&kind, &wiki_name, &wiki, &tsv_name, &tsv)?;
        data.packed_fill(1000)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Time the steps a run of `kind` on this data takes, before it starts: a fresh `variant` GPT of
    /// this size on the run's first batches of `batch` rows, packed and cut into engine calls as the
    /// page's run on this device cuts them (`cut::micro_rows`), the host getting its turn between
    /// the calls and each step's loss read back, as the page's run does: one first step, then
    /// `repeats` steps; then one save of the training state. Returns `{rows, calls, first_ms,
    /// ms_per_step, best_ms, save_ms}`. Full-row steps scaled by the share of real positions
    /// (`time_step`, `packed_fill`) missed what a packed step of a few rows costs on a
    /// software adapter by half (README, the quick preset timed). Nothing of a run is touched.
    #[allow(clippy::too_many_arguments)]
    pub async fn time_run(
        &self,
        kind: String,
        variant: String,
        n_layer: u32,
        n_head: u32,
        n_embd: u32,
        wiki_name: String,
        wiki: String,
        tsv_name: String,
        tsv: String,
        batch: u32,
        repeats: u32,
    ) -> Result<JsValue, JsError> {
        check_size(batch, repeats)?;
        let variant = Variant::from_name(&variant).map_err(|e| JsError::new(&e.to_string()))?;
        let (data, vocab) = run_data(&kind, &wiki_name, &wiki, &tsv_name, &tsv)?;
        let cfg = sized(variant, n_layer, n_head, n_embd, vocab.len() as u32)?;
        let g = self.device().await?;
        let bs = batch as usize;
        let est = memory::estimate_training_on(&g, &cfg, bs, cfg.block_size);
        memory::check_fits(&est, &MemoryLimit::of_device(&g)).map_err(|e| self.engine_error(e))?;
        let model = Gpt::new(&g, cfg.clone(), 1).map_err(|e| self.engine_error(e))?;
        let cut = super::cut::micro_rows(&g, &cfg, model.num_params(), bs).unwrap_or(bs);
        let tc = TrainConfig {
            batch_size: bs,
            ..TrainConfig::pretrain()
        };
        let mut tr = Trainer::new(model, tc, 0).map_err(|e| self.engine_error(e))?;
        let per_epoch = data.len().div_ceil(bs).max(1);
        let mut each = Vec::with_capacity(repeats as usize + 1);
        let mut rows = 0;
        for s in 0..=repeats as usize {
            crate::device::yield_to_host().await;
            let t0 = now_ms();
            let (x, y, r) = data
                .batch(bs, 0, s % per_epoch)
                .map_err(|e| self.engine_error(e))?;
            rows = r;
            let mut m = tr
                .micro_begin(&x, &y, r, T, r * T)
                .map_err(|e| self.engine_error(e))?;
            while tr
                .micro_next(&mut m, cut)
                .map_err(|e| self.engine_error(e))?
            {
                crate::device::yield_to_host().await;
            }
            let loss = tr.micro_finish(m).map_err(|e| self.engine_error(e))?;
            loss.to_vec_f32().await.map_err(|e| self.engine_error(e))?;
            each.push(now_ms() - t0);
        }
        let t0 = now_ms();
        tr.state_to_bytes(&vocab.itos_string())
            .await
            .map_err(|e| self.engine_error(e))?;
        let save_ms = now_ms() - t0;
        let timed = &each[1..];
        to_js(&RunStepTime {
            rows,
            calls: rows.div_ceil(cut.max(1)).max(1),
            first_ms: each[0],
            ms_per_step: timed.iter().sum::<f64>() / timed.len() as f64,
            best_ms: timed.iter().copied().fold(f64::INFINITY, f64::min),
            save_ms,
        })
    }
}
