//! The JavaScript value model and the JSON forms of it.

pub mod date;
pub mod error;
pub mod json;
pub mod number;
pub mod object;
pub mod ops;
pub mod sort;
pub mod string;
pub mod value;

pub use error::{ErrorClass, JsError};
pub use string::JsStr;
pub use object::{Members, Object};
pub use value::{Value, UNDEFINED};
