//! The reference trainer's learning-rate schedule: linear warmup on counted tokens, then a cosine
//! that is NOT clamped at the end (so it rises again after `final_tokens`), floored at 0.1×.
//! Tokens are counted as the reference does: every target position, PAD included.

/// run.py's `final_tokens`, in epochs' worth of the pretraining corpus: its cosine reaches the
/// floor after 200 epochs (and, not clamped, climbs back to the peak by 400).
pub const RUN_PY_DECAY_EPOCHS: usize = 200;

/// Hyperparameters of one run, as run.py's TrainerConfig sets them.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    pub max_epochs: usize,
    pub batch_size: usize,
    pub learning_rate: f64,
    pub lr_decay: bool,
    pub warmup_tokens: f64,
    pub final_tokens: f64,
    pub betas: (f64, f64),
    pub grad_norm_clip: f64,
    pub weight_decay: f64,
    /// Stop after this many optimizer steps (smoke tests and CI; not in run.py). The schedule is
    /// unchanged: it still counts tokens towards `final_tokens`.
    pub max_steps: Option<u64>,
}

impl TrainConfig {
    fn base(max_epochs: usize, batch_size: usize, learning_rate: f64) -> TrainConfig {
        TrainConfig {
            max_epochs,
            batch_size,
            learning_rate,
            lr_decay: true,
            warmup_tokens: 512.0 * 20.0,
            final_tokens: 200.0 * 2938.0 * 128.0,
            betas: (0.9, 0.95),
            grad_norm_clip: 1.0,
            weight_decay: 0.1,
            max_steps: None,
        }
    }
    /// run.py's pretraining: 650 epochs, batch 128, lr 6e-3.
    pub fn pretrain() -> TrainConfig {
        TrainConfig::base(650, 128, 6e-3)
    }
    /// run.py's finetuning without pretraining: 75 epochs, batch 256, lr 6e-4.
    pub fn finetune_scratch() -> TrainConfig {
        TrainConfig::base(75, 256, 6e-4)
    }
    /// run.py's finetuning of a pretrained model: 10 epochs, batch 256, lr 6e-4.
    pub fn finetune_pretrained() -> TrainConfig {
        TrainConfig::base(10, 256, 6e-4)
    }

    /// run.py's `final_tokens = 200·len(pretrain_dataset)·block_size` for a corpus of `docs`
    /// documents (lines; 2938 for wiki.txt, which the constructors assume).
    pub fn with_corpus_docs(self, docs: usize) -> TrainConfig {
        self.with_decay_epochs(RUN_PY_DECAY_EPOCHS, docs)
    }

    /// The cosine's floor at `epochs` epochs' worth of tokens of a corpus of `docs` documents
    /// instead of run.py's [`RUN_PY_DECAY_EPOCHS`] (a run of that many epochs then ends at the floor).
    pub fn with_decay_epochs(mut self, epochs: usize, docs: usize) -> TrainConfig {
        self.final_tokens = epochs as f64 * docs as f64 * crate::data::BLOCK_SIZE as f64;
        self
    }

    /// The learning rate after `tokens` counted tokens.
    pub fn lr_at(&self, tokens: f64) -> f64 {
        if !self.lr_decay {
            return self.learning_rate;
        }
        // 1. linear warmup
        let mult = if tokens < self.warmup_tokens {
            tokens / self.warmup_tokens
        } else {
            // 2. cosine over (warmup, final), deliberately not clamped to progress ≤ 1
            let progress =
                (tokens - self.warmup_tokens) / (self.final_tokens - self.warmup_tokens).max(1.0);
            // 3. floor at 0.1
            (0.5 * (1.0 + (std::f64::consts::PI * progress).cos())).max(0.1)
        };
        self.learning_rate * mult
    }
}

#[cfg(test)]
mod tests {
    use super::TrainConfig;

    /// Tokens after `epochs` epochs of `rows` examples of 127 positions each.
    fn tokens(epochs: usize, rows: usize) -> f64 {
        (epochs * rows * 127) as f64
    }

    #[test]
    fn final_learning_rates_match_the_reference_logs() {
        let close = |a: f64, b: f64| (a - b).abs() <= 5e-7 * b;
        let p = TrainConfig::pretrain().lr_at(tokens(650, 2938));
        assert!(close(p, 7.182453e-4), "{p}");
        let f = TrainConfig::finetune_scratch().lr_at(tokens(75, 2000));
        assert!(close(f, 5.100024e-4), "{f}");
        let f = TrainConfig::finetune_pretrained().lr_at(tokens(10, 2000));
        assert!(close(f, 5.983263e-4), "{f}");
    }

    #[test]
    fn warmup_is_linear_and_the_cosine_comes_back_up() {
        let c = TrainConfig::pretrain();
        assert_eq!(c.lr_at(0.0), 0.0);
        assert!((c.lr_at(5120.0) - 3e-3).abs() < 1e-12);
        assert!(
            (c.lr_at(c.final_tokens) - 6e-4).abs() < 1e-12,
            "floor at progress 1"
        );
        let two = c.warmup_tokens + 2.0 * (c.final_tokens - c.warmup_tokens);
        assert!(
            (c.lr_at(two) - 6e-3).abs() < 1e-9,
            "back to the peak at progress 2"
        );
    }
}
