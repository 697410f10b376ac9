//! The learning rate's course over a whole run: where run.py's schedule (`TrainConfig::lr_at`)
//! warms up, reaches its floor and climbs again, in steps, and in words for the CLI's log and the
//! page's loss chart.

use super::TrainConfig;
use crate::model::memory::group_thousands as grouped;

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

/// Runs of at most this many steps are followed step by step; longer ones are bisected.
const SCAN_STEPS: u64 = 1 << 22;

impl TrainConfig {
    /// The phases of a run of `total_steps` steps over `examples` examples an epoch, each counting
    /// `BLOCK_SIZE − 1` tokens as the reference does (the last batch of an epoch holds the rest).
    pub fn phases(&self, examples: usize, total_steps: u64) -> Phases {
        let run = Counted::new(self, examples);
        let end = run.after(total_steps);
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
            last_lr: if total_steps == 0 {
                self.learning_rate
            } else {
                self.lr_at(end)
            },
            ends_warming: self.lr_decay && total_steps > 0 && end < self.warmup_tokens,
        };
        if self.lr_decay {
            let (w, f, r) = if total_steps <= SCAN_STEPS {
                run.scanned(total_steps)
            } else {
                run.bisected(total_steps)
            };
            (ph.warm_until, ph.floor_from, ph.rises_from) = (w, f, r);
        }
        ph
    }
}

/// A run's counted tokens step by step, and the steps where its rate changes course: the last
/// step warming up, the first at the floor and the first climbing from it.
struct Counted<'a> {
    cfg: &'a TrainConfig,
    batch: u64,
    examples: u64,
    per_epoch: u64,
}

type Turns = (Option<u64>, Option<u64>, Option<u64>);

impl Counted<'_> {
    fn new(cfg: &TrainConfig, examples: usize) -> Counted<'_> {
        let (batch, examples) = (cfg.batch_size.max(1) as u64, examples as u64);
        let per_epoch = examples.div_ceil(batch).max(1);
        Counted {
            cfg,
            batch,
            examples,
            per_epoch,
        }
    }

    /// The tokens the first `n` steps count.
    fn after(&self, n: u64) -> f64 {
        let rows = (n / self.per_epoch) * self.examples
            + ((n % self.per_epoch) * self.batch).min(self.examples);
        rows as f64 * (crate::data::BLOCK_SIZE - 1) as f64
    }

    /// Step `s` runs at the rate set after step `s − 1`: is it warming up, or at the floor?
    fn warming(&self, s: u64) -> bool {
        s > 1 && self.after(s - 1) < self.cfg.warmup_tokens
    }
    fn at_floor(&self, s: u64) -> bool {
        let t = self.after(s.max(1) - 1);
        s > 1 && t >= self.cfg.warmup_tokens && self.cfg.lr_at(t) <= 0.1 * self.cfg.learning_rate
    }

    /// Every step looked at (any schedule, however coarse its steps against the cosine).
    fn scanned(&self, total: u64) -> Turns {
        let mut turns = (None, None, None);
        for s in 2..=total {
            if self.warming(s) {
                turns.0 = Some(s);
            }
            match (turns.1, turns.2) {
                (None, _) if self.at_floor(s) => turns.1 = Some(s),
                (Some(_), None) if !self.at_floor(s) => turns.2 = Some(s),
                _ => {}
            }
        }
        turns
    }

    /// The same by bisection, in microseconds for billions of steps: warming is true-then-false;
    /// the cosine falls while its progress is at most 1 and climbs until 2, so on each stretch
    /// being at the floor is false-then-true, then true-then-false (a step that jumps a whole
    /// stretch is looked at on its own). Equal to `scanned` where a step counts a small part of
    /// the cosine's stretch, as in any run this long unless its floor comes within a few epochs.
    fn bisected(&self, total: u64) -> Turns {
        let c = self.cfg;
        // The last step whose rate was set before `tokens` were passed (the run's last if never).
        let within = |tokens: f64| first(1, total, |n| self.after(n) > tokens).unwrap_or(total);
        let m = first(1, total, |n| self.after(n) >= c.warmup_tokens).unwrap_or(total);
        let warm = (m >= 2 && self.warming(m)).then_some(m);
        let span = (c.final_tokens - c.warmup_tokens).max(1.0);
        let down = within(c.warmup_tokens + span);
        let up = within(c.warmup_tokens + 2.0 * span);
        let floor = first(2, down, |s| self.at_floor(s))
            .or((down < total && self.at_floor(down + 1)).then_some(down + 1));
        let rises = floor.and_then(|f| {
            first(f, up, |s| !self.at_floor(s))
                .or((up < total && !self.at_floor(up + 1)).then_some(up + 1))
        });
        (warm, floor, rises)
    }
}

/// The first `s` in `lo..=hi` where `pred` holds, for a `pred` false and then true on that range.
fn first(lo: u64, hi: u64, pred: impl Fn(u64) -> bool) -> Option<u64> {
    if lo > hi || !pred(hi) {
        return None;
    }
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
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
                format!("this run ends inside the warm-up, at {:.2e}", self.last_lr)
            }
            (None, _) => format!(
                "then a cosine falling towards a tenth, which this run does not reach: it ends \
                 at {:.2e}",
                self.last_lr
            ),
            (Some(f), None) => format!(
                "then a cosine down to its floor, a tenth ({floor:.1e}), from {} to the end",
                at(f)
            ),
            (Some(f), Some(r)) => format!(
                "then a cosine down to its floor, a tenth ({floor:.1e}), from {}; from {} it \
                 climbs again (the cosine is not clamped: the plateau the handout mentions) and \
                 ends at {:.2e}",
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

#[cfg(test)]
mod tests {
    use super::TrainConfig;

    #[test]
    fn bisected_phases_equal_the_scanned_ones() {
        for (batch, examples, decay, total) in [
            (128, 2938, 200, 14_950),
            (128, 2938, 200, 40_000),
            (32, 100, 200, 5_000),
            (4, 100, 3, 2_000),
            (256, 2000, 200, 750),
            (64, 830, 440, 5_720),
            (7, 50, 20, 6_100),
            (128, 2938, 200, 1),
            (4, 100, 200, 15),
        ] {
            let c = TrainConfig {
                batch_size: batch,
                ..TrainConfig::pretrain()
            }
            .with_decay_epochs(decay, examples);
            let run = super::Counted::new(&c, examples);
            assert_eq!(
                run.bisected(total),
                run.scanned(total),
                "batch {batch}, {examples} examples, floor at {decay}, {total} steps"
            );
        }
    }

    #[test]
    fn phases_of_a_huge_run_are_bisected() {
        // Batch 1 for a million epochs of the course's 2,938 documents: 2.9 billion steps, beyond
        // the scan (this would not finish step by step).
        let c = TrainConfig {
            batch_size: 1,
            ..TrainConfig::pretrain()
        };
        let ph = c.phases(2938, 2_938_000_000);
        assert_eq!(
            ph.warm_until,
            Some(81),
            "10,240 tokens at 127 a step: steps 2-81"
        );
        let (f, r) = (ph.floor_from.unwrap(), ph.rises_from.unwrap());
        let run = super::Counted::new(&c, 2938);
        assert!(!run.at_floor(f - 1) && run.at_floor(f) && run.at_floor(r - 1) && !run.at_floor(r));
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
            text.starts_with(
                "step 1 at the full 6.0e-3 (the reference sets the rate only after \
                 each step), then a cosine down to its floor, a tenth (6.0e-4), from step 3,"
            ) && text.contains("it climbs again")
                && text.contains("ends at 7.18e-4. A jump in the loss"),
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
             tenth, which this run does not reach: it ends at 6.00e-3."
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
             run ends inside the warm-up, at 2.38e-3."
        );
    }
}
