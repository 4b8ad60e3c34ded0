//! The source lock's native half: the JS wrapper runs the old module's loop
//! (deadline, retries, `fn`, release in `finally`) and calls these for each
//! attempt, so its argument coercions happen exactly where the old module's
//! do.

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use quiver_live_core::lock::{self, Acquired};
use quiver_live_core::project::layout::Layout;

use crate::env::{Js, JsResult};
use crate::errors;

/// The lock file for `abs_file`: `<root>/.impeccable/live/locks/<24 hex>.lock`,
/// where `<root>` is the project root of `abs_cwd` (`home` is `os.homedir()`).
#[napi(catch_unwind)]
pub fn lock_path(env: Env, abs_file: String, abs_cwd: String, home: String) -> Result<String> {
    let js = Js::new(env.raw());
    let root = crate::project_root(js, &abs_cwd, &home)?;
    Ok(lock_file(&root, &abs_file).to_string_lossy().into_owned())
}

fn lock_file(root: &Path, abs_file: &str) -> PathBuf {
    lock::lock_path(&Layout::of(root), abs_file)
}

/// One attempt at the lock: clears a stale one, then creates it
/// exclusively. Its token, or `null` while another holder has it.
/// `file_json` is V8's `JSON.stringify` of the locked file's absolute path
/// (a Rust `String` could not hold a lone surrogate).
#[napi(catch_unwind)]
pub fn try_lock(env: Env, lock_path: String, owner_json: Option<String>, file_json: String) -> Result<Option<String>> {
    let js = Js::new(env.raw());
    let attempt: JsResult<_> = lock::try_acquire(Path::new(&lock_path), owner_json.as_deref(), &file_json).map_err(|e| errors::throw_fs(js, &e));
    Ok(attempt?.map(|a| a.token))
}

/// Removes the lock if it still carries `token`.
#[napi(catch_unwind)]
pub fn unlock(lock_path: String, token: String) {
    lock::release(&Acquired { lock_path: PathBuf::from(lock_path), token });
}
