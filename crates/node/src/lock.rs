//! The source lock's native half: the JS wrapper runs the old module's loop
//! (deadline, retries, `fn`, release in `finally`) and calls these for each
//! attempt, so its argument coercions happen exactly where the old module's
//! do.
//!
//! Each environment (the main thread, or a worker thread) keeps the locks it
//! holds, and Node hands them back when it tears the environment down: a
//! worker terminated inside `fn` never runs the wrapper's `finally`, and the
//! process, whose pid the lock names, lives on, so nobody else could ever
//! take the lock. Those still held then are released, each only if the file
//! still carries the token this environment wrote.

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
    let Some(acquired) = attempt? else { return Ok(None) };
    if let Some(held) = held_locks(&env) {
        held.0.push(acquired.clone());
    }
    Ok(Some(acquired.token))
}

/// Removes the lock if it still carries `token`.
#[napi(catch_unwind)]
pub fn unlock(env: Env, lock_path: String, token: String) {
    if let Some(held) = held_locks(&env) {
        held.0.retain(|a| a.token != token);
    }
    lock::release(&Acquired { lock_path: PathBuf::from(lock_path), token });
}

/// The locks an environment holds (see the module's comment).
#[derive(Default)]
struct HeldLocks(Vec<Acquired>);

/// Gives the environment loading the addon its [`HeldLocks`], which Node
/// finalizes as it tears the environment down (`napi_set_instance_data`):
/// those still held are released then, only where they still carry this
/// environment's token, and without failing.
pub fn keep_held_locks(env: &Env) -> Result<()> {
    env.set_instance_data(HeldLocks::default(), (), |torn_down| {
        for acquired in &torn_down.value.0 {
            lock::release_if_held(acquired);
        }
    })
}

fn held_locks(env: &Env) -> Option<&'static mut HeldLocks> {
    env.get_instance_data::<HeldLocks>().ok().flatten()
}
