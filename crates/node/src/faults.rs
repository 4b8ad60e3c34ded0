//! The fault seam from JavaScript, for the fault suite
//! (`__test__/faults/matrix.test.mjs`): only in a build with the `faults`
//! feature, never in a release binary (see `quiver_live_core::sys::fault`).

use napi_derive::napi;
use quiver_live_core::sys::fault::{self, Action};

/// Starts recording the file-system calls the core makes. The `at`th from
/// now (1-based) fails with `errno`, or, with no `errno`, kills the process
/// before it is made; no `at` only records.
#[napi(catch_unwind)]
pub fn fault_arm(at: Option<u32>, errno: Option<i32>) {
    let action = errno.map_or(Action::Crash, Action::Fail);
    fault::arm(at.map(|n| n as usize), action);
}

/// Stops, and returns the calls made since `faultArm`, by name.
#[napi(catch_unwind)]
pub fn fault_disarm() -> Vec<String> {
    fault::disarm().into_iter().map(str::to_owned).collect()
}
