//! The one error type of the crate: every failure a user can cause ends here, with a message that
//! says what was wrong and what to do, never as a panic.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// No GPU adapter could be found; the message says what to install or enable.
    NoAdapter(String),
    /// The device could not be created or was lost.
    Device(String),
    /// A size that exceeds one of the device's limits.
    Limit {
        limit: &'static str,
        max: u64,
        requested: u64,
        what: String,
    },
    /// Two shapes that an op needs to agree do not.
    Shape(String),
    /// Anything else, with its message.
    Msg(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoAdapter(m) => write!(f, "no GPU adapter: {m}"),
            Error::Device(m) => write!(f, "GPU device error: {m}"),
            Error::Limit {
                limit,
                max,
                requested,
                what,
            } => write!(
                f,
                "{what} needs {requested} but the device's {limit} is {max}; use a smaller size or \
                 a GPU with a larger limit"
            ),
            Error::Shape(m) => write!(f, "shape mismatch: {m}"),
            Error::Msg(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Build a shape error that names both shapes.
pub fn shape_err(op: &str, what: &str, a: &[usize], b: &[usize]) -> Error {
    Error::Shape(format!("{op}: {what}: {a:?} vs {b:?}"))
}
