//! The napi-free core of quiver-live-native.

pub mod js;
pub mod lock;
pub mod project;
pub mod session;
pub mod sys;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
