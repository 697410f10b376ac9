//! A training step in parts (wasm32 only): the library's `Session::step_begin` / `step_end` with
//! `Trainer::micro_next`, `micro_skip` and `micro_add` as separate engine calls, so that
//! - on one engine a large step is several short calls (micro-batches of `micro_rows` rows), and
//!   the page's queue (Pause, Stop, a demo) gets its turn between them;
//! - on the CPU backend N engines (web/helpers.js: one wasm module per Web Worker, each with a
//!   session of the same run) share a step: this engine (the page's) takes the first of
//!   `MicroStep::parts(N)` and every helper one more (`step_part`, with this engine's
//!   weights), and their gradients are added here in row order, so the sum has one fixed order;
//!   one AdamW update here, whose weights the helpers get with the next step.
//!
//! The update equals the whole step's up to float summation order (`tests/it/parts.rs`).

use super::engine::{Engine, PartStep};
use super::js::{err, to_js};
use super::train::{Chunk, Report};
use wasm_bindgen::prelude::*;

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

impl Engine {
    /// Take the step in progress out (put back by the caller), or say there is none.
    fn take_step(&self) -> Result<PartStep, JsError> {
        self.with(|e| e.step.take())
            .ok_or_else(|| err("no training step is in progress; call step_begin first"))
    }

    fn put_step(&self, s: PartStep) {
        self.with(|e| e.step = Some(s));
    }
}

#[derive(serde::Serialize)]
struct Begun {
    /// `[first, end)` rows of each engine's part, this engine's first.
    parts: Vec<(usize, usize)>,
    /// The step count the step starts from (the helpers' `steps`).
    steps: u64,
    rows: usize,
}

#[wasm_bindgen]
impl Engine {
    /// Begin the run's next step for `engines` engines. Returns `{parts: [[first, end], …], steps,
    /// rows, weights}` (weights: a Float32Array of every parameter, for the helpers, only when
    /// `engines` > 1), or null when the run is done.
    pub async fn step_begin(&self, engines: u32) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        self.with(|e| e.step = None);
        let run = guard.run();
        let parts = match run.step_begin().map_err(err)? {
            None => return Ok(JsValue::NULL),
            Some(p) => p,
        };
        let begun = Begun {
            parts: parts.micro.parts(engines.max(1) as usize),
            steps: run.trainer.steps,
            rows: parts.rows(),
        };
        let weights = if engines > 1 {
            Some(
                run.trainer
                    .weights_to_vec()
                    .await
                    .map_err(|e| self.lost_err(e))?,
            )
        } else {
            None
        };
        self.put_step(PartStep { parts, t0: now_s() });
        let out = to_js(&begun)?;
        if let Some(w) = weights {
            js_sys::Reflect::set(&out, &"weights".into(), &js_sys::Float32Array::from(&w[..]))
                .map_err(|_| err("could not return the weights"))?;
        }
        Ok(out)
    }

    /// Forward and backward on the next `rows` rows of the step in progress, here. Returns the rows
    /// done so far. On a GPU it waits for the device to finish them: a call recorded without waiting
    /// would return at once, the next part would queue behind it, and a demo's work would wait for
    /// every part queued, not for one.
    pub async fn step_rows(&self, rows: u32) -> Result<u32, JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        let mut s = self.take_step()?;
        let run = guard.run();
        let r = run
            .trainer
            .micro_next(&mut s.parts.micro, rows.max(1) as usize);
        let done = s.parts.micro.progress().0 as u32;
        let dev = run.trainer.device().clone();
        match r {
            Ok(_) => {
                self.put_step(s);
                dev.sync().await.map_err(|e| self.lost_err(e))?;
                Ok(done)
            }
            Err(e) => Err(self.lost_err(e)),
        }
    }

    /// Add the gradients of rows `first..end` computed by a helper engine (`step_part`'s `grads`
    /// and `loss`). Parts come in row order.
    pub async fn step_add(
        &self,
        grads: Vec<f32>,
        loss: f32,
        first: u32,
        end: u32,
    ) -> Result<(), JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        let mut s = self.take_step()?;
        let r = guard.run().trainer.micro_add(
            &mut s.parts.micro,
            first as usize,
            end as usize,
            &grads,
            loss,
        );
        self.put_step(s);
        r.map_err(err)
    }

    /// Finish the step in progress (every row done or added): clip, AdamW, move on, read the loss.
    /// Returns `train`'s `{reports: [one], steps, total_steps, done, lr}`. A non-finite loss ends
    /// the run with an error, as in `train`.
    pub async fn step_end(&self) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        let s = self.take_step()?;
        let r = guard.run().step_end(s.parts, now_s() - s.t0).await;
        let p = match r {
            Ok(p) => p,
            Err(e) => {
                guard.keep_out();
                return Err(self.lost_err(e));
            }
        };
        let run = guard.run();
        to_js(&Chunk {
            reports: vec![Report::of(&p)],
            steps: run.steps(),
            total_steps: run.total_steps(),
            done: run.done(),
            lr: run.trainer.lr,
        })
    }

    /// Drop the step in progress (Pause or Stop in the middle of it): the weights change only at a
    /// step's end, so the run is where it was before the step, which is taken again on Resume.
    pub fn step_drop(&self) {
        self.with(|e| e.step = None);
    }

    /// On a helper engine (a session of the same run, started from the page's engine's state): set
    /// the weights, then compute the gradients of rows `first..end` of the step that starts from step
    /// count `steps`. Returns `{grads: Float32Array (every parameter's, in order), loss: that part's
    /// weighted loss}`, for `step_add` on the page's engine.
    pub async fn step_part(
        &self,
        weights: Vec<f32>,
        steps: f64,
        first: u32,
        end: u32,
    ) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let mut guard = self.take_run()?;
        let run = guard.run();
        if !(steps.is_finite() && steps >= 0.0 && steps < run.total_steps() as f64) {
            return Err(err(format!(
                "step {steps} is not a step of this run (0 to {})",
                run.total_steps().saturating_sub(1)
            )));
        }
        run.trainer.weights_from_slice(&weights).map_err(err)?;
        run.trainer.steps = steps as u64;
        let mut p = run
            .step_begin()
            .map_err(err)?
            .ok_or_else(|| err("the run has no step left"))?;
        let (first, end) = (first as usize, end as usize);
        if end < first || end > p.rows() {
            return Err(err(format!(
                "rows {first}..{end} are not rows of this {}-row step",
                p.rows()
            )));
        }
        run.trainer.micro_skip(&mut p.micro, first).map_err(err)?;
        if end > first {
            run.trainer
                .micro_next(&mut p.micro, end - first)
                .map_err(err)?;
        }
        let loss = p.micro.loss().to_vec_f32().await.map_err(err)?;
        let grads = run.trainer.grads_to_vec().await.map_err(err)?;
        let out = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &k.into(), v);
        set("grads", &js_sys::Float32Array::from(&grads[..]))
            .and_then(|_| {
                set(
                    "loss",
                    &JsValue::from_f64(loss.first().copied().unwrap_or(0.0) as f64),
                )
            })
            .map_err(|_| err("could not return the gradients"))?;
        Ok(out.into())
    }
}
