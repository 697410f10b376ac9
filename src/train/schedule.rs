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

/// Where a run's learning rate changes course, in optimizer steps counted from 1. Step `s` runs at
/// the rate set after step `s − 1`; step 1 at the full rate, as the reference builds its optimizer
/// with it and sets the schedule's rate only after each step.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Phases {
    /// The rate at its peak: the configured one, at which step 1 runs.
    pub peak: f64,
    /// The tokens the warm-up lasts (run.py: 10,240), or 0 for a run without a schedule.
    pub warmup_tokens: f64,
    /// The last step still warming up (its rate below the peak), or `None` when the warm-up's
    /// tokens pass within step 1.
    pub warm_until: Option<u64>,
    /// The first step at the floor (a tenth of the rate), if the run gets there.
    pub floor_from: Option<u64>,
    /// The first step after the floor at which the rate climbs again (the cosine is not clamped).
    pub rises_from: Option<u64>,
    /// The rate after the run's last step (the one the reference's logs end with).
    pub last_lr: f64,
    /// The run ends before the warm-up's tokens are counted (a run of a step or two).
    pub ends_warming: bool,
}

impl TrainConfig {
    /// The phases of a run of `total_steps` steps over `examples` examples an epoch, each counting
    /// `BLOCK_SIZE − 1` tokens as the reference does (the last batch of an epoch holds the rest).
    pub fn phases(&self, examples: usize, total_steps: u64) -> Phases {
        let per_row = (crate::data::BLOCK_SIZE - 1) as f64;
        let batch = self.batch_size.max(1);
        let per_epoch = examples.div_ceil(batch).max(1) as u64;
        let floor = 0.1 * self.learning_rate;
        let mut ph = Phases {
            peak: self.learning_rate,
            warmup_tokens: if self.lr_decay {
                self.warmup_tokens
            } else {
                0.0
            },
            warm_until: None,
            floor_from: None,
            rises_from: None,
            last_lr: self.learning_rate,
            ends_warming: false,
        };
        // The tokens step `s` counts: a whole batch, or what is left at its epoch's end.
        let counts = |s: u64| {
            let k = ((s - 1) % per_epoch) as usize;
            examples.saturating_sub(k * batch).min(batch) as f64 * per_row
        };
        let (mut tokens, mut lr) = (0.0, self.learning_rate);
        for s in 1..=total_steps {
            if s > 1 {
                tokens += counts(s - 1);
                lr = self.lr_at(tokens);
            }
            if self.lr_decay && s > 1 && tokens < self.warmup_tokens {
                ph.warm_until = Some(s);
            }
            let at_floor = self.lr_decay && tokens >= self.warmup_tokens && lr <= floor;
            match (ph.floor_from, ph.rises_from) {
                (None, _) if at_floor => ph.floor_from = Some(s),
                (Some(_), None) if !at_floor => ph.rises_from = Some(s),
                _ => {}
            }
        }
        if total_steps > 0 {
            tokens += counts(total_steps);
            lr = self.lr_at(tokens);
        }
        ph.last_lr = lr;
        ph.ends_warming = self.lr_decay && tokens < self.warmup_tokens;
        ph
    }
}

impl Phases {
    /// The phases in words, for the CLI's log and the page's chart (`per_epoch` steps an epoch).
    /// `fresh`: the run starts a new model, whose loss can jump at the full rate (said where the
    /// warm-up lasts at most two steps).
    pub fn describe(&self, per_epoch: usize, fresh: bool) -> String {
        let at = |s: u64| {
            let epoch = s.div_ceil(per_epoch.max(1) as u64);
            format!("step {} (epoch {})", grouped(s), grouped(epoch))
        };
        let (peak, floor) = (self.peak, self.peak / 10.0);
        if self.warmup_tokens == 0.0 {
            return format!("{peak:.1e} at every step (no schedule)");
        }
        let mut parts = vec![format!(
            "step 1 at the full {peak:.1e} (the reference sets the rate only after each step)"
        )];
        match self.warm_until {
            Some(2) => parts.push(format!(
                "step 2 lower while its first {} tokens warm it up",
                grouped(self.warmup_tokens as u64)
            )),
            Some(w) => parts.push(format!(
                "steps 2-{} lower while its first {} tokens warm it up",
                grouped(w),
                grouped(self.warmup_tokens as u64)
            )),
            None => {}
        }
        parts.push(match (self.floor_from, self.rises_from) {
            _ if self.ends_warming => {
                format!("this run ends inside the warm-up, at {:.1e}", self.last_lr)
            }
            (None, _) => format!(
                "then a cosine falling towards a tenth, which this run does not reach: it ends \
                 at {:.1e}",
                self.last_lr
            ),
            (Some(f), None) => format!(
                "then a cosine down to its floor, a tenth ({floor:.1e}), from {} to the end",
                at(f)
            ),
            (Some(f), Some(r)) => format!(
                "then a cosine down to its floor, a tenth ({floor:.1e}), from {}; from {} it \
                 climbs again (the cosine is not clamped: the plateau the handout mentions) and \
                 ends at {:.1e}",
                at(f),
                at(r),
                self.last_lr
            ),
        });
        // A warm-up of a step or two leaves a fresh model at the full rate almost at once.
        let jump = if fresh && self.warm_until.unwrap_or(1) <= 3 {
            " A jump in the loss in the first steps is a fresh model taking this full rate \
             almost at once; a lower rate smooths it."
        } else {
            ""
        };
        format!("{}.{jump}", parts.join(", "))
    }
}

/// 12345 as "12,345".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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

    #[test]
    fn phases_of_run_py_pretraining_match_the_spec() {
        // 2938 documents at batch 128: 23 steps an epoch, 14,950 steps. The warm-up's 10,240
        // tokens pass within step 1 (128 × 127 = 16,256), and the floor holds for epochs ≈160–243.
        let c = TrainConfig::pretrain();
        let ph = c.phases(2938, 14_950);
        assert_eq!(ph.warm_until, None);
        let epoch = |s: u64| (s - 1) / 23 + 1;
        let (from, rises) = (ph.floor_from.unwrap(), ph.rises_from.unwrap());
        assert!((159..=161).contains(&epoch(from)), "{from}");
        assert!((242..=244).contains(&epoch(rises)), "{rises}");
        assert!(
            (ph.last_lr - 7.182453e-4).abs() <= 5e-7 * 7.182453e-4,
            "{}",
            ph.last_lr
        );
    }

    #[test]
    fn phases_of_a_short_run_with_small_batches() {
        // Batch 32: 4,064 tokens a step, so steps 2 and 3 warm up (4,064 and 8,128 < 10,240).
        let c = TrainConfig {
            batch_size: 32,
            ..TrainConfig::pretrain()
        };
        let ph = c.phases(100, 20);
        assert_eq!(ph.warm_until, Some(3));
        assert_eq!((ph.floor_from, ph.rises_from), (None, None));
        let tokens = (20 * 32 - 5 * 28) as f64 * 127.0; // 5 epochs of 4 steps (32, 32, 32, 4)
        assert!(
            (ph.last_lr - c.lr_at(tokens)).abs() < 1e-15,
            "{}",
            ph.last_lr
        );
        let flat = TrainConfig {
            lr_decay: false,
            ..c
        };
        let ph = flat.phases(100, 20);
        assert_eq!(
            (ph.warm_until, ph.floor_from, ph.last_lr),
            (None, None, 6e-3)
        );
    }

    #[test]
    fn phases_in_words() {
        let c = TrainConfig::pretrain();
        let text = c.phases(2938, 14_950).describe(23, true);
        assert!(
            text.starts_with("step 1 at the full 6.0e-3 (the reference sets the rate only after each step), then a cosine down to its floor, a tenth (6.0e-4), from step 3,")
                && text.contains("it climbs again")
                && text.contains("ends at 7.2e-4. A jump in the loss"),
            "{text}"
        );
        let small = TrainConfig {
            batch_size: 32,
            ..c
        };
        let text = small.phases(100, 20).describe(4, false);
        assert_eq!(
            text,
            "step 1 at the full 6.0e-3 (the reference sets the rate only after each step), steps \
             2-3 lower while its first 10,240 tokens warm it up, then a cosine falling towards a \
             tenth, which this run does not reach: it ends at 6.0e-3."
        );
        assert!(small
            .phases(100, 20)
            .describe(4, true)
            .ends_with("a lower rate smooths it."));
        let tiny = TrainConfig {
            batch_size: 4,
            ..c.clone()
        };
        let long_warmup = tiny.phases(100, 40).describe(25, true);
        assert!(
            long_warmup.contains("steps 2-21 lower") && !long_warmup.contains("jump"),
            "{long_warmup}"
        );
        let one = small.phases(100, 1);
        assert!(one.ends_warming && one.warm_until.is_none(), "{one:?}");
        assert_eq!(
            one.describe(4, false),
            "step 1 at the full 6.0e-3 (the reference sets the rate only after each step), this \
             run ends inside the warm-up, at 2.4e-3."
        );
        assert_eq!(super::grouped(1_234_567), "1,234,567");
        assert_eq!(super::grouped(999), "999");
    }
}
