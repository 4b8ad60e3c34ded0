//! napi surface of quiver-live-native. Everything below `mod` declarations
//! that is not `#[napi]` glue lives in the napi-free core modules.

pub mod lock;
pub mod platform;
pub mod project_root;
pub mod json;
pub mod value;
