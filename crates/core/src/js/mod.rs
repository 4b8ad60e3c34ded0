//! The JavaScript value model and the JSON forms of it.

pub mod date;
pub mod json;
pub mod value;
