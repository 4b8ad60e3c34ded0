//! The napi-free core of quiver-live-native.

// Tests set up and inspect files with std's API directly; the crate itself
// goes through `sys` (see clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods, clippy::disallowed_types))]

pub mod js;
pub mod lock;
pub mod project;
pub mod session;
pub mod sys;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
