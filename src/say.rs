//! Printing for the native front ends (the CLI, `bench`) that never panics. `println!` panics when
//! stdout cannot be written (`attnlab pretrain … | head -1` closes the pipe; `> /dev/full` fills),
//! which killed a training run before it saved; these write what they can and go on, since a run's
//! output files matter more than its log. `say!` and `say_part!` write to stdout, `tell!` to stderr.

use std::fmt::Arguments;
use std::io::Write;

/// Writes `args` (and a newline when `newline`) to stdout; an error (a closed pipe, a full disk)
/// is dropped.
pub fn stdout(args: Arguments, newline: bool) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args);
    if newline {
        let _ = out.write_all(b"\n");
    }
}

/// Writes `args` and a newline to stderr; an error is dropped (there is nowhere left to say it).
pub fn stderr(args: Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}

/// `println!` to stdout that never panics.
#[macro_export]
macro_rules! say {
    () => { $crate::say::stdout(format_args!(""), true) };
    ($($a:tt)*) => { $crate::say::stdout(format_args!($($a)*), true) };
}

/// `print!` to stdout that never panics.
#[macro_export]
macro_rules! say_part {
    ($($a:tt)*) => { $crate::say::stdout(format_args!($($a)*), false) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! tell {
    ($($a:tt)*) => { $crate::say::stderr(format_args!($($a)*)) };
}
