//! Cross-process source lock (`withSourceLockSync`), napi-free.
//!
//! One lock file per source file, created exclusively and holding a one-line
//! JSON record ([`record`]). Files written here are readable by the old JS
//! module and vice versa: the record starts with the keys the JS writes, in
//! its order, and the two extra keys (`startTime`, `bootId`) are ones the JS
//! never looks at. Whether someone else's lock may be swept is decided in
//! [`stale`], which a CLI can ask through [`judge`].

pub(crate) mod record;
mod stale;

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::project::layout::Layout;
use crate::sys::{self, FsError};

use record::LockRecord;
pub use stale::{clear_stale, judge, Verdict, UNREADABLE_STALE_MS};

/// Hex digits of the path digest used as the lock file's name.
const DIGEST_HEX_LEN: usize = 24;

/// `<live dir>/locks/<first 24 hex of sha256(abs_file)>.lock`.
pub fn lock_path(layout: &Layout, abs_file: &str) -> PathBuf {
    let digest = Sha256::digest(abs_file.as_bytes());
    let mut name = String::with_capacity(DIGEST_HEX_LEN);
    for byte in &digest[..DIGEST_HEX_LEN / 2] {
        name.push(hex_digit(byte >> 4));
        name.push(hex_digit(byte & 0xf));
    }
    layout.lock_path(&name)
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(nibble & 0xf)])
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
/// exclusively. `Ok(None)` when another holder has it. (The JS wrapper makes
/// the attempts, so its deadline and retry pause coerce `waitMs` and
/// `retryMs` exactly where the old module does.)
pub fn try_acquire(path: &Path, owner_json: Option<&str>, file_json: &str) -> Result<Option<Acquired>, FsError> {
    let record = LockRecord::for_this_process(owner_json, file_json);
    let line = record.to_json_line();
    // The uncontended case first: one exclusive create. Equivalent to the JS
    // order (sweep, then create) because with no lock file there is nothing
    // to sweep; a missing `locks/` or a present lock takes the longer way.
    let created = match create_exclusive(path, &line) {
        Err(e) if matches!(e.io_error().kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            if let Some(dir) = path.parent() {
                sys::mkdir_all(dir)?;
            }
            create_exclusive(path, &line)?
        }
        Ok(false) => {
            refuse_odd_lock(path)?;
            stale::clear_stale(path);
            create_exclusive(path, &line)?
        }
        other => other?,
    };
    Ok(created.then(|| Acquired { lock_path: path.to_path_buf(), token: record.token }))
}

/// Fails, naming the lock's path, when something other than a regular file
/// holds its name: a link (`ELOOP`), a directory (`EISDIR`), a FIFO or
/// device (`EFTYPE`), a socket (`ENXIO`). Neither module ever makes one, so
/// it is no lock anyone holds, and no wait would end it; the old module's
/// read of it would block (a FIFO) or never end (`/dev/zero`). Nothing
/// there any more is fine: the create is tried again.
fn refuse_odd_lock(path: &Path) -> Result<(), FsError> {
    match sys::open_regular(path, sys::Links::Refuse) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(FsError::new(e, "open", path)),
        _ => Ok(()),
    }
}

/// Writes `line` into a newly created file; `Ok(false)` if anything is at
/// its name (a link there is never followed).
fn create_exclusive(path: &Path, line: &str) -> Result<bool, FsError> {
    let file = match sys::create_new(path) {
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
        let _ = sys::remove_file(path);
        return Err(FsError::new(e, "write", path));
    }
    Ok(true)
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
    // Twice: a lock left behind stays held for as long as this process
    // lives, so a transient failure gets a second try.
    if sys::remove_file(&acquired.lock_path).is_err() {
        let _ = sys::remove_file(&acquired.lock_path);
    }
}

/// Removes the lock only while it carries this acquisition's token: for a
/// holder whose own release can no longer run (a worker thread terminated
/// inside its section), so nothing else is ever removed: not another
/// holder's lock, not an unreadable file (another acquisition's, between
/// its create and its write), not one already released. Never fails.
pub fn release_if_held(acquired: &Acquired) {
    let held = record::read_held(&acquired.lock_path).and_then(|held| held.token);
    if held.as_deref() == Some(acquired.token.as_str()) {
        let _ = sys::remove_file(&acquired.lock_path);
    }
}

#[cfg(test)]
mod tests;
