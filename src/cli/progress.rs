//! The CLI's progress display: the bar of a training run or an evaluation (indicatif), and the
//! times of the log lines written when stderr is no terminal.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps in the given indicatif template.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

/// Seconds as `1h02m03s` (or `2m03s`, `3s`) for the log lines.
pub fn hms(s: f64) -> String {
    let s = if s.is_finite() { s.max(0.0) as u64 } else { 0 };
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}
