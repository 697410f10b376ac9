//! A run's training state: the checkpoint plus both AdamW moments and the counters, so a later
//! start continues it exactly.

use super::Trainer;
use crate::error::Result;
use crate::model::Gpt;
use crate::train::schedule::TrainConfig;

/// Metadata key that marks a checkpoint carrying the trainer's state.
const STATE_KEY: &str = "train_state";

impl Trainer {
    /// Everything needed to continue this run exactly: the model checkpoint (readable as a plain
    /// checkpoint) plus both AdamW moments of every parameter as `optim.m.NAME` / `optim.v.NAME`,
    /// and the step count, counted tokens and dropout seed in the metadata. The data position
    /// follows from the step count (no shuffling; each example's corruption depends only on its
    /// index and epoch), and each step's dropout seed from `seed + steps`.
    pub async fn state_to_bytes(&self, vocab: &str) -> Result<Vec<u8>> {
        let mut extra = vec![];
        let (m, v) = self.group.moments().await?;
        for (p, s) in self.model.params.iter().zip(self.group.spans()) {
            let shape = p.var.shape().to_vec();
            let r = s.at..s.at + s.len;
            extra.push((
                format!("optim.m.{}", p.name),
                shape.clone(),
                m[r.clone()].to_vec(),
            ));
            extra.push((format!("optim.v.{}", p.name), shape, v[r].to_vec()));
        }
        let adam_step = self.group.step();
        let meta: Vec<(String, String)> = vec![
            (STATE_KEY.to_string(), "1".to_string()),
            ("steps".to_string(), self.steps.to_string()),
            // Rust prints the shortest decimal that parses back to the same f64.
            ("tokens".to_string(), self.tokens.to_string()),
            ("seed".to_string(), self.seed.to_string()),
            ("adam_step".to_string(), adam_step.to_string()),
        ]
        .into_iter()
        .chain(self.run_meta.iter().cloned())
        .collect();
        crate::model::checkpoint::to_bytes_with(&self.model, vocab, extra, meta).await
    }

    /// A trainer that continues the run saved by `state_to_bytes`. `model` must have been loaded
    /// from the same bytes (`checkpoint::from_bytes`); `cfg` is the run's configuration (a changed
    /// learning rate or epoch count applies from here on). `what` names the file in messages.
    pub fn resume(model: Gpt, cfg: TrainConfig, bytes: &[u8], what: &str) -> Result<Trainer> {
        use crate::model::checkpoint::{metadata_of, Extras};
        let meta = metadata_of(bytes, what)?;
        if meta.get(STATE_KEY).map(String::as_str) != Some("1") {
            return Err(crate::Error::Msg(format!(
                "{what} is a model checkpoint without training state; it can start a finetune \
                 (--reading_params_path) but cannot resume a run"
            )));
        }
        let num = |k: &str| -> Result<f64> {
            meta.get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    crate::Error::Msg(format!("{what}: training state has no valid '{k}'"))
                })
        };
        let (steps, tokens, seed, adam_step) = (
            num("steps")?,
            num("tokens")?,
            num("seed")?,
            num("adam_step")?,
        );
        let extras = Extras::open(bytes, what)?;
        let mut tr = Trainer::new(model, cfg, seed as u32)?;
        for (i, p) in tr.model.params.iter().enumerate() {
            let n = p.var.value().numel();
            let m = extras.get(&format!("optim.m.{}", p.name), n)?;
            let v = extras.get(&format!("optim.v.{}", p.name), n)?;
            check_moments(&p.name, &m, &v, what)?;
            tr.group.restore(i, &m, &v)?;
        }
        tr.group.set_step(adam_step as u32);
        tr.steps = steps as u64;
        tr.tokens = tokens;
        tr.lr = if steps == 0.0 {
            tr.cfg.learning_rate
        } else {
            tr.cfg.lr_at(tokens)
        };
        Ok(tr)
    }
}

/// Refuse moments no run writes: a non-finite value, or a negative second moment (a running mean
/// of squares). Such a state is damaged, not diverged: continuing it would turn every step's
/// update into NaN, and a lower learning rate would not help.
fn check_moments(name: &str, m: &[f32], v: &[f32], what: &str) -> Result<()> {
    let bad_m = m
        .iter()
        .position(|x| !x.is_finite())
        .map(|i| ("m", i, "not finite"));
    let bad_v = || {
        v.iter().position(|x| !x.is_finite() || *x < 0.0).map(|i| {
            let why = if v[i] < 0.0 {
                "negative (a mean of squares never is)"
            } else {
                "not finite"
            };
            ("v", i, why)
        })
    };
    match bad_m.or_else(bad_v) {
        None => Ok(()),
        Some((which, i, why)) => Err(crate::Error::Msg(format!(
            "{what} is damaged: its AdamW moment optim.{which}.{name}[{i}] is {why}, which no run \
             saves; it cannot be continued: start again without --resume (or from its model \
             with --reading_params_path)"
        ))),
    }
}
