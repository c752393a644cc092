//! The one error type of the core. Every failure that user input can cause is a
//! variant here; the bindings turn each into a typed Python exception.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An option has a value outside its domain (`argument` names it).
    InvalidOption { argument: String, message: String },
    /// Two inputs that must be aligned have different lengths.
    Misaligned {
        what: String,
        left: usize,
        right: usize,
    },
    /// An input text is not a valid string (`argument[index]` names it).
    InvalidText {
        argument: String,
        index: u64,
        message: String,
    },
    /// The training corpus has no rows.
    EmptyTraining,
    /// The caller interrupted a long computation (Ctrl-C).
    Interrupted,
    /// An index read back from storage fails a check (`part` names the array).
    CorruptIndex { part: String, message: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidOption { argument, message } => write!(f, "{argument}: {message}"),
            Error::Misaligned { what, left, right } => {
                write!(f, "{what}: lengths differ ({left} vs {right})")
            }
            Error::InvalidText {
                argument,
                index,
                message,
            } => write!(f, "{argument}[{index}]: {message}"),
            Error::EmptyTraining => write!(f, "the training corpus is empty"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::CorruptIndex { part, message } => {
                write!(f, "index array {part}: {message}")
            }
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn invalid(argument: &str, message: impl Into<String>) -> Error {
    Error::InvalidOption {
        argument: argument.to_string(),
        message: message.into(),
    }
}
