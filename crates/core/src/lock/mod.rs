//! Cross-process source lock (`withSourceLockSync`), napi-free.
//!
//! One lock file per source file, created exclusively and holding a one-line
//! JSON record ([`record`]). Files written here are readable by the old JS
//! module and vice versa: the record starts with the keys the JS writes, in
//! its order, and the two extra keys (`startTime`, `bootId`) are ones the JS
//! never looks at. Whether someone else's lock may be swept is decided in
//! [`stale`], which a CLI can ask through [`judge`].

mod record;
mod stale;

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Context, FsError};
use crate::sys;

use record::LockRecord;
pub use stale::{judge, Verdict};

/// Hex digits of the path digest used as the lock file's name.
const DIGEST_HEX_LEN: usize = 24;

/// `<live_dir>/locks/<first 24 hex of sha256(abs_file)>.lock`.
pub fn lock_path(live_dir: &Path, abs_file: &str) -> PathBuf {
    let digest = Sha256::digest(abs_file.as_bytes());
    let mut name = String::with_capacity(DIGEST_HEX_LEN + 5);
    for byte in &digest[..DIGEST_HEX_LEN / 2] {
        name.push(hex_digit(byte >> 4));
        name.push(hex_digit(byte & 0xf));
    }
    name.push_str(".lock");
    live_dir.join("locks").join(name)
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(nibble & 0xf)])
}

#[derive(Debug)]
pub enum LockError {
    /// The lock stayed held until the deadline (JS: `code: 'SOURCE_LOCKED'`).
    Locked { lock_path: PathBuf },
    /// A file-system operation failed, as the old module's `fs` call would.
    Fs(FsError),
}

impl From<FsError> for LockError {
    fn from(e: FsError) -> LockError {
        LockError::Fs(e)
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Locked { .. } => f.write_str("source_locked"),
            LockError::Fs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockError::Locked { .. } => None,
            LockError::Fs(e) => Some(e),
        }
    }
}

/// A lock this process created; pass it to [`release`] when done. Dropping it
/// does not release (release must happen exactly once, after the critical
/// section, and re-checks the token).
#[derive(Debug, Clone)]
pub struct Acquired {
    pub lock_path: PathBuf,
    pub token: String,
}

/// One attempt: creates `locks/`, clears a stale lock, then creates the lock
/// exclusively. `Ok(None)` when another holder has it.
pub(crate) fn try_acquire(path: &Path, owner_json: Option<&str>, abs_file: &str) -> Result<Option<Acquired>, LockError> {
    let record = LockRecord::for_this_process(owner_json, abs_file);
    let line = record.to_json_line();
    // The uncontended case first: one exclusive create. Equivalent to the JS
    // order (sweep, then create) because with no lock file there is nothing
    // to sweep; a missing `locks/` or a present lock takes the longer way.
    let created = match create_exclusive(path, &line) {
        Err(e) if matches!(e.io_error().kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).at("mkdir", dir)?;
            }
            create_exclusive(path, &line)?
        }
        Ok(false) => {
            stale::clear_stale(path);
            create_exclusive(path, &line)?
        }
        other => other?,
    };
    Ok(created.then(|| Acquired { lock_path: path.to_path_buf(), token: record.token }))
}

/// Writes `line` into a newly created file; `Ok(false)` if it already exists.
fn create_exclusive(path: &Path, line: &str) -> Result<bool, FsError> {
    let mut file = match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(FsError::new(e, "open", path)),
    };
    // One write keeps the create-to-content window (where others see an
    // unreadable lock) as short as possible.
    if let Err(e) = file.write_all(line.as_bytes()) {
        drop(file);
        // The file is ours and empty or partial; leaving it would block the
        // source for a minute (the JS module leaves it; removing is strictly
        // better and invisible to it).
        let _ = fs::remove_file(path);
        return Err(FsError::new(e, "write", path));
    }
    Ok(true)
}

/// Polls like the JS module: `wait_ms` / `retry_ms` are `Number(x)` values;
/// NaN or 0 fall back as `|| 0` / `|| 5` would.
pub fn acquire(path: &Path, owner_json: Option<&str>, abs_file: &str, wait_ms: f64, retry_ms: f64) -> Result<Acquired, LockError> {
    let deadline = sys::now_ms() + js_or(wait_ms, 0.0).max(0.0);
    let retry = js_or(retry_ms, 5.0);
    loop {
        if let Some(acquired) = try_acquire(path, owner_json, abs_file)? {
            return Ok(acquired);
        }
        let now = sys::now_ms();
        if now >= deadline {
            return Err(LockError::Locked { lock_path: path.to_path_buf() });
        }
        sys::sleep_ms(retry.min(deadline - now).max(1.0));
    }
}

/// JS `x || fallback` for a number (0, -0 and NaN are falsy).
fn js_or(x: f64, fallback: f64) -> f64 {
    if x == 0.0 || x.is_nan() {
        fallback
    } else {
        x
    }
}

/// Removes the lock unless it now carries another acquisition's token: if a
/// sweeper took ours and someone else re-created it, unlinking would end
/// their critical section. Unreadable content is removed (as in the JS).
pub fn release(acquired: &Acquired) {
    if let Some(held) = record::read_held(&acquired.lock_path) {
        if held.token.as_deref() != Some(acquired.token.as_str()) {
            return;
        }
    }
    let _ = fs::remove_file(&acquired.lock_path);
}

#[cfg(test)]
mod tests;
