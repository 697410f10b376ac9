//! The demos' entry points (wasm32 only): one async engine method per exercise, each returning the
//! `crate::demos` result (the kernels' numbers on the page's device, WebGPU or the CPU backend, with the f64 CPU
//! reference beside them) as a plain JS object.
//! Seeds cross as u32 (a JS number). E8/E9 read the trained models from the page's one registry
//! (`models.rs`): a model trained, loaded or shipped on the page is the demos' model too, with no
//! copy; `demo_set_model` puts a checkpoint there (a test's, or any caller's).

use super::engine::{Engine, Loaded};
use super::js::{err as js, to_js};
use crate::data::Vocab;
use crate::demos::{heads, kqv, mask, multi, single};
use crate::model::{checkpoint, Variant};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A vocabulary from `itos` as it is (the first id of a repeated character wins).
fn any_vocab(itos: &str) -> Vocab {
    let itos: Vec<char> = itos.chars().collect();
    let mut stoi = std::collections::HashMap::new();
    for (i, &c) in itos.iter().enumerate() {
        stoi.entry(c).or_insert(i as u32);
    }
    Vocab {
        stoi,
        itos,
        source: "the model handed to the demos".into(),
    }
}

#[wasm_bindgen]
impl Engine {
    /// E1: keys, values (N×2 row-major), query (2), β.
    pub async fn demo_copying(
        &self,
        keys: Vec<f64>,
        values: Vec<f64>,
        query: Vec<f64>,
        beta: f64,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &single::copying(&g, &keys, &values, &query, beta)
                .await
                .map_err(js)?,
        )
    }

    /// E2: N orthonormal keys, q = s·(e₀ + e₁), seeded values, and the gap along `grid`.
    pub async fn demo_average(
        &self,
        n: usize,
        s: f64,
        seed: u32,
        grid: Vec<f64>,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &single::average(&g, n, s, seed as u64, &grid)
                .await
                .map_err(js)?,
        )
    }

    /// E3/E4: `samples` draws of N noisy keys; single head vs two heads.
    pub async fn demo_noise(
        &self,
        n: usize,
        samples: usize,
        seed: u32,
        s: f64,
        var: f64,
        fragile: bool,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        let sp = heads::NoiseSpec {
            n,
            samples,
            seed: seed as u64,
            s,
            var,
            fragile,
        };
        to_js(&heads::noise(&g, sp).await.map_err(js)?)
    }

    /// E5: u-basis scale β, query scale λ, projections on/off, what x₂ adds of u_c and u_d.
    pub async fn demo_separate(
        &self,
        beta: f64,
        lambda: f64,
        with_proj: bool,
        add_c: f64,
        add_d: f64,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &kqv::separate(&g, beta, lambda, with_proj, add_c, add_d)
                .await
                .map_err(js)?,
        )
    }

    /// E6: N random keys of dimension D, softmax at β and along `grid`.
    pub async fn demo_temperature(
        &self,
        n: usize,
        d: usize,
        seed: u32,
        beta: f64,
        grid: Vec<f64>,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &single::temperature(&g, n, d, seed as u64, beta, &grid)
                .await
                .map_err(js)?,
        )
    }

    /// E7: the masked and unmasked weights and the masked gradient for seeded T×T scores.
    pub async fn demo_mask(&self, t: usize, seed: u32) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(&mask::mask_view(&g, t, seed as u64).await.map_err(js)?)
    }

    /// E7: train the toy next-token model with or without the mask.
    pub async fn demo_train_toy(
        &self,
        masked: bool,
        steps: usize,
        seed: u32,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &mask::train_toy(&g, masked, steps, seed as u64)
                .await
                .map_err(js)?,
        )
    }

    /// E8: one multi-head layer of width C with H heads over T positions.
    pub async fn demo_heads(
        &self,
        t: usize,
        c: usize,
        h: usize,
        seed: u32,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(&multi::heads(&g, t, c, h, seed as u64).await.map_err(js)?)
    }

    /// E9: dot-product vs synthesizer maps before and after moving position j by `delta`.
    pub async fn demo_synth_vs_dot(
        &self,
        t: usize,
        j: usize,
        delta: f64,
        seed: u32,
    ) -> Result<JsValue, JsError> {
        let g = self.device().await?;
        to_js(
            &multi::synth_vs_dot(&g, t, j, delta, seed as u64)
                .await
                .map_err(js)?,
        )
    }

    /// E10: `kind` is identity, permutation, linear or conv (with `width` heads).
    pub async fn demo_imitate(
        &self,
        kind: String,
        width: usize,
        t: usize,
        lambda: f64,
        seed: u32,
    ) -> Result<JsValue, JsError> {
        let k = match kind.as_str() {
            "identity" => kqv::Imitate::Identity,
            "permutation" => kqv::Imitate::Permutation,
            "linear" => kqv::Imitate::Linear,
            "conv" => kqv::Imitate::Conv(width),
            other => {
                return Err(JsError::new(&format!(
                    "unknown layer '{other}': use identity, permutation, linear or conv"
                )))
            }
        };
        let g = self.device().await?;
        to_js(
            &kqv::imitate(&g, k, t, lambda, seed as u64)
                .await
                .map_err(js)?,
        )
    }

    /// Load a checkpoint (safetensors bytes written by `checkpoint::to_bytes`) as its variant's model
    /// in the page's registry (E8/E9 and the page's Ask and evaluation all use it). Returns its
    /// variant name.
    pub async fn demo_set_model(&self, bytes: Vec<u8>) -> Result<String, JsError> {
        const WHAT: &str = "the model handed to the demos";
        let g = self.device().await?;
        super::models::check_checkpoint_size(&g, bytes.len(), WHAT)?;
        let (model, header) = checkpoint::from_bytes(&g, &bytes, None, WHAT).map_err(js)?;
        // E8/E9 only map characters to ids, so any vocabulary serves them (the parity fixtures'
        // has no PAD and MASK); the registry's other readers get the checked one when it is one.
        let vocab =
            Vocab::from_itos(&header.vocab, WHAT).unwrap_or_else(|_| any_vocab(&header.vocab));
        let name = model.cfg.variant.name().to_string();
        self.keep(Loaded {
            model: Rc::new(model),
            vocab,
            label: WHAT.into(),
        });
        Ok(name)
    }

    /// Forget the registry's model of a variant ("vanilla" or "synthesizer").
    pub fn demo_clear_model(&self, variant: String) -> Result<(), JsError> {
        let v = Variant::from_name(&variant).map_err(js)?;
        self.forget(v);
        Ok(())
    }

    /// The variants that have a model, sorted.
    pub fn demo_models(&self) -> Vec<String> {
        self.variants().into_iter().map(String::from).collect()
    }

    /// Attention maps (L, NH, T, T) of the registry's `variant` model for `text`.
    pub async fn demo_model_maps(&self, variant: String, text: String) -> Result<JsValue, JsError> {
        let v = Variant::from_name(&variant).map_err(js)?;
        let Some((model, vocab)) = self.current(v) else {
            return Err(JsError::new(&format!(
                "no {variant} model is loaded: train or load one in the Train panel"
            )));
        };
        to_js(
            &multi::model_maps(&model, &vocab.itos_string(), &text)
                .await
                .map_err(js)?,
        )
    }
}
