//! The ViT card's entry points (wasm32 only): one model (with its trainer) kept here, trained in
//! chunks on freshly generated digits, evaluated on the held-out set, asked about one image with
//! every layer's attention and the rollout, and pictured (position-embedding similarities). The
//! model is taken out of its slot for the length of a call, so a failed step drops it rather than
//! leaving half-updated weights; JS serialises the calls.

use super::engine::{Engine, VitRun as Run};
use super::js::{err as js, to_js};
use crate::data::digits;
use crate::model::vit::explain::{position_similarity, rollout};
use crate::model::vit::{
    checkpoint, evaluate, predict, Vit, VitConfig, VitTrainConfig, VitTrainer,
};
use serde::Serialize;
use wasm_bindgen::prelude::*;

impl Engine {
    fn take_vit(&self) -> Result<Run, JsError> {
        self.with(|e| e.vit.take())
            .ok_or_else(|| JsError::new("no ViT yet: start training or load the shipped model"))
    }

    fn put_vit(&self, run: Run) {
        self.with(|e| e.vit = Some(run));
    }
}

#[derive(Serialize)]
struct Info {
    image: usize,
    patch: usize,
    grid: usize,
    tokens: usize,
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
    params: usize,
    steps: u64,
    total_steps: u64,
    origin: String,
    backend: String,
    /// What the checkpoint says about itself (steps, held-out accuracy), if anything.
    note: String,
}

fn info_of(run: &Run) -> Info {
    info_noted(run, String::new())
}

fn info_noted(run: &Run, note: String) -> Info {
    let m = &run.trainer.model;
    let c = &m.cfg;
    Info {
        image: c.image,
        patch: c.patch,
        grid: c.grid(),
        tokens: c.tokens(),
        n_layer: c.n_layer,
        n_head: c.n_head,
        n_embd: c.n_embd,
        params: m.num_params(),
        steps: run.trainer.steps,
        total_steps: run.trainer.cfg.steps,
        origin: run.origin.clone(),
        backend: m.device().kind().to_string(),
        note,
    }
}

#[derive(Serialize)]
struct Trained {
    steps: u64,
    loss: f32,
    done: bool,
}

async fn train_steps(run: &mut Run, n: u32) -> Result<Trained, JsError> {
    let tr = &mut run.trainer;
    let (b, set) = (tr.cfg.batch, run.seed.wrapping_mul(2));
    let todo = (n as u64).min(tr.cfg.steps.saturating_sub(tr.steps));
    let mut last = None;
    for _ in 0..todo {
        let (x, y) = digits::batch(set, tr.steps * b as u64, b);
        last = Some(tr.step(&x, &y).map_err(js)?);
    }
    let loss = match last {
        Some(t) => t.to_vec_f32().await.map_err(js)?[0],
        None => f32::NAN,
    };
    if todo > 0 && !loss.is_finite() {
        return Err(JsError::new(&format!(
            "the loss became {loss} at step {}; start again with a lower learning rate",
            tr.steps
        )));
    }
    Ok(Trained {
        steps: tr.steps,
        loss,
        done: tr.steps >= tr.cfg.steps,
    })
}

#[derive(Serialize)]
struct Evaluation {
    accuracy: f64,
    confusion: Vec<Vec<u32>>,
    n: usize,
}

#[derive(Serialize)]
struct Answer {
    probs: Vec<f32>,
    class: usize,
    /// Per layer, (NH, T, T) row-major.
    attention: Vec<Vec<f32>>,
    /// (T, T): how much each token flows into each token through all layers.
    rollout: Vec<f64>,
}

#[derive(Serialize)]
struct Sample {
    label: u8,
    pixels: Vec<f32>,
}

#[wasm_bindgen]
impl Engine {
    /// A new model to train from scratch for `steps` steps of `batch` images.
    #[allow(clippy::too_many_arguments)]
    pub async fn vit_new(
        &self,
        patch: usize,
        layers: usize,
        heads: usize,
        width: usize,
        steps: u32,
        batch: usize,
        lr: f64,
        seed: u32,
    ) -> Result<JsValue, JsError> {
        let dev = self.device().await?;
        let cfg = VitConfig {
            patch,
            n_layer: layers,
            n_head: heads,
            n_embd: width,
            ..VitConfig::small()
        };
        if steps == 0 || batch == 0 || batch > 512 || !(lr > 0.0 && lr < 1.0) {
            return Err(JsError::new(
                "steps must be ≥ 1, batch in 1..=512 and the learning rate in (0, 1)",
            ));
        }
        let tc = VitTrainConfig {
            learning_rate: lr,
            batch,
            ..VitTrainConfig::default_for(steps as u64)
        };
        let model = Vit::new(&dev, cfg, seed as u64).map_err(js)?;
        let run = Run {
            trainer: VitTrainer::new(model, tc).map_err(js)?,
            seed: seed as u64,
            origin: "trained here".into(),
        };
        let info = info_of(&run);
        self.put_vit(run);
        to_js(&info)
    }

    /// Load a checkpoint written by `attnlab vit train` (the shipped model); it can train on from there.
    pub async fn vit_load(&self, bytes: Vec<u8>, name: String) -> Result<JsValue, JsError> {
        let dev = self.device().await?;
        let (model, meta) = checkpoint::from_bytes(&dev, &bytes, &name).map_err(js)?;
        let seed = meta.get("seed").and_then(|s| s.parse().ok()).unwrap_or(0);
        let tc = VitTrainConfig {
            learning_rate: 5e-4,
            ..VitTrainConfig::default_for(200)
        };
        let run = Run {
            trainer: VitTrainer::new(model, tc).map_err(js)?,
            seed,
            origin: name,
        };
        let note = match (meta.get("steps"), meta.get("test_accuracy"), meta.get("batch")) {
            (Some(s), Some(a), Some(b)) => format!(
                "Trained by “attnlab vit train” for {s} steps of {b} images; {:.2}% on its {} held-out digits",
                a.parse::<f64>().unwrap_or(f64::NAN) * 100.0,
                meta.get("test_size").map_or("", String::as_str)
            ),
            _ => String::new(),
        };
        let info = info_noted(&run, note);
        self.put_vit(run);
        to_js(&info)
    }

    /// Up to `n` more steps (never past the schedule's end); returns the last step's loss.
    pub async fn vit_train(&self, n: u32) -> Result<JsValue, JsError> {
        let mut run = self.take_vit()?;
        // The run goes back whatever happens: a failed step leaves the model as it was before it.
        let r = train_steps(&mut run, n).await;
        self.put_vit(run);
        to_js(&r?)
    }

    /// Accuracy and confusion matrix on held-out images `start..start + n` (the page asks in chunks of
    /// 25, so no call blocks its thread for long).
    pub async fn vit_evaluate(&self, start: u32, n: u32) -> Result<JsValue, JsError> {
        let run = self.take_vit()?;
        let set = run.seed.wrapping_mul(2) + 1;
        let (x, y) = digits::batch(set, start as u64, n.clamp(1, 10_000) as usize);
        let r = evaluate(&run.trainer.model, &x, &y).await;
        self.put_vit(run);
        let (accuracy, confusion) = r.map_err(js)?;
        to_js(&Evaluation {
            accuracy,
            confusion,
            n: y.len(),
        })
    }

    /// Classify one 28×28 image (row-major, 0 = background, 1 = ink).
    pub async fn vit_predict(&self, pixels: Vec<f32>) -> Result<JsValue, JsError> {
        if pixels.len() != digits::PIXELS || pixels.iter().any(|v| !v.is_finite()) {
            return Err(JsError::new(&format!(
                "an image is {} finite pixel values (28×28), got {}",
                digits::PIXELS,
                pixels.len()
            )));
        }
        let run = self.take_vit()?;
        let r = predict(&run.trainer.model, &pixels, 1, true).await;
        let (nh, t) = (run.trainer.model.cfg.n_head, run.trainer.model.cfg.tokens());
        self.put_vit(run);
        let p = r
            .map_err(js)?
            .pop()
            .ok_or_else(|| JsError::new("no prediction"))?;
        to_js(&Answer {
            class: p.class(),
            rollout: rollout(&p.attention, nh, t),
            probs: p.probs,
            attention: p.attention,
        })
    }

    /// Cosine similarities of the patches' position embeddings, (N, N).
    pub async fn vit_positions(&self) -> Result<JsValue, JsError> {
        let run = self.take_vit()?;
        let m = &run.trainer.model;
        let r = match m.param("pos_emb") {
            Ok(p) => p.value().to_vec_f32().await,
            Err(e) => Err(e),
        };
        let c = m.cfg.n_embd;
        self.put_vit(run);
        to_js(&position_similarity(&r.map_err(js)?, c))
    }

    /// Image `index` of the held-out set of `seed` (what the model is tested on).
    pub fn vit_sample(&self, seed: u32, index: u32) -> Result<JsValue, JsError> {
        let d = digits::digit((seed as u64).wrapping_mul(2) + 1, index as u64);
        to_js(&Sample {
            label: d.label,
            pixels: d.pixels,
        })
    }

    /// The generator's checksum of images 0..n of `set`, as hex (the browser test compares it with
    /// the native one pinned in tests/it/data/digits.rs).
    pub fn vit_digits_checksum(&self, set: u32, n: u32) -> String {
        let (p, l) = digits::batch(set as u64, 0, n as usize);
        format!("{:#x}", digits::checksum(&p, &l))
    }

    /// The model as safetensors bytes (the CLI's format).
    pub async fn vit_save(&self) -> Result<Vec<u8>, JsError> {
        let run = self.take_vit()?;
        let r = checkpoint::to_bytes(&run.trainer.model, &[]).await;
        self.put_vit(run);
        r.map_err(js)
    }
}
