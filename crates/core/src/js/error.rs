//! An exception JavaScript raises, as a value: what the conversions of
//! [`ops`](super::ops), `JSON.parse` ([`json::parse`](super::json::parse)),
//! quiver-cli's project-root resolution and the store's own checks fail
//! with where the old module throws. The binding makes the exception of its
//! class, with its message and nothing else.

use std::fmt;

/// The constructor of an exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The old module's own errors (`invalid session id: …`).
    Error,
    /// A conversion JavaScript refuses (`Cannot convert object to primitive
    /// value`), a property read on `null`, a spread of what is not iterable.
    TypeError,
    /// V8 past its stack (`Maximum call stack size exceeded`, see
    /// [`JOIN_DEPTH_LIMIT`](super::ops::JOIN_DEPTH_LIMIT)).
    RangeError,
    /// `JSON.parse` of text that is not JSON.
    SyntaxError,
}

impl ErrorClass {
    /// The constructor's name, as `error.name` reads.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Error => "Error",
            ErrorClass::TypeError => "TypeError",
            ErrorClass::RangeError => "RangeError",
            ErrorClass::SyntaxError => "SyntaxError",
        }
    }
}

/// `new <class>(message)`.
#[derive(Clone, Debug, PartialEq)]
pub struct JsError {
    pub class: ErrorClass,
    pub message: String,
}

impl JsError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> JsError {
        JsError { class, message: message.into() }
    }

    /// A plain `Error`.
    pub fn error(message: impl Into<String>) -> JsError {
        JsError::new(ErrorClass::Error, message)
    }

    pub fn type_error(message: impl Into<String>) -> JsError {
        JsError::new(ErrorClass::TypeError, message)
    }
}

/// `String(error)`: `TypeError: message`.
impl fmt::Display for JsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class.name(), self.message)
    }
}

impl std::error::Error for JsError {}
