//! When a lock file may be removed by someone other than its owner.
//!
//! A lock is stale when its owner is gone, never merely because it is old;
//! only a lock whose content cannot be read falls back to an age limit. The
//! decisions the old module makes (what counts as readable, which pid is
//! alive) follow `JSON.parse` and `process.kill(pid, 0)`, so both modules
//! judge a shared lock directory alike; the pid-reuse rule adds what the old
//! module cannot see, from keys only this package writes.

use std::path::Path;

use super::record::{own_identity, read_held, Held};
use crate::sys;

/// Age after which a lock we cannot read is presumed abandoned by a crash
/// mid-write (a readable lock is judged by its owner's liveness instead).
pub const UNREADABLE_STALE_MS: f64 = 60_000.0;

/// What the rules make of a lock file, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No lock file there.
    Absent,
    /// Held: its pid is alive and not shown to be another process.
    OwnerAlive,
    /// Held: unreadable but younger than a minute, so possibly an acquisition
    /// caught between creating the file and writing it.
    UnreadableFresh,
    /// Stale: no process has its pid (`process.kill(pid, 0)` says ESRCH).
    OwnerGone,
    /// Stale: readable, but `pid` is not a number.
    NoNumericPid,
    /// Stale: written during an earlier boot, so its owner is gone.
    EarlierBoot,
    /// Stale: its pid is alive but belongs to a process that started later
    /// than the owner did.
    PidReused,
    /// Stale: unreadable for more than a minute.
    UnreadableOld,
}

impl Verdict {
    pub fn is_stale(self) -> bool {
        matches!(self, Verdict::OwnerGone | Verdict::NoNumericPid | Verdict::EarlierBoot | Verdict::PidReused | Verdict::UnreadableOld)
    }
}

/// Judges the lock file at `path` as it is now.
pub fn judge(path: &Path) -> Verdict {
    match read_held(path) {
        Some(held) => judge_owner(&held),
        None => match age_ms(path) {
            None => Verdict::Absent,
            Some(age) if age > UNREADABLE_STALE_MS => Verdict::UnreadableOld,
            Some(_) => Verdict::UnreadableFresh,
        },
    }
}

/// Removes the lock at `path` if it is stale; whether it did. Never fails
/// (a lock we cannot judge is left for the exclusive create to report as
/// held).
pub fn clear_stale(path: &Path) -> bool {
    // Nothing there (the common case): one syscall and done.
    let Ok(judged) = sys::FileStamp::of_path(path) else {
        return false;
    };
    // Another contender may have cleared the same stale lock and created its
    // own meanwhile; unlinking that would admit two writers. Only unlink the
    // file we judged (the old module has this race in full; this narrows it
    // to the gap between two syscalls).
    judge(path).is_stale() && sys::FileStamp::of_path(path).ok() == Some(judged) && sys::remove_file(path).is_ok()
}

/// The old module: `typeof held.pid === 'number' && isLiveServerPidReachable(held.pid)`,
/// then the pid-reuse check when the lock records its owner's identity.
fn judge_owner(held: &Held) -> Verdict {
    let Some(pid) = held.pid else {
        return Verdict::NoNumericPid;
    };
    if !sys::pid_is_alive(pid) {
        return Verdict::OwnerGone;
    }
    reuse(held, pid).unwrap_or(Verdict::OwnerAlive)
}

/// `Some` only when we can prove the live `pid` is not the process that
/// wrote the lock: written during an earlier boot (every process of that
/// boot is gone), or another start time. Start times compare only within one
/// boot id, or where the OS has none because its start times are absolute
/// (Windows). Locks without `startTime` (the old module's) never qualify.
fn reuse(held: &Held, pid: f64) -> Option<Verdict> {
    let recorded = held.start_time?;
    match (held.boot_id.as_deref(), own_identity().boot_id.as_deref()) {
        (Some(theirs), Some(ours)) if theirs != ours => return Some(Verdict::EarlierBoot),
        (Some(_), Some(_)) | (None, None) => {}
        _ => return None,
    }
    let plausible = recorded >= 0.0 && recorded.fract() == 0.0;
    let in_range = (1.0..=f64::from(u32::MAX)).contains(&pid);
    if !(plausible && in_range) {
        return None;
    }
    let current = sys::process_start_time(pid as u32)?;
    (current as f64 != recorded).then_some(Verdict::PidReused)
}

/// `Date.now() - fs.statSync(p).mtimeMs`, or `None` when it cannot be
/// stat'ed; of the name itself when it is a link (never read through, see
/// `record::read_held`).
fn age_ms(path: &Path) -> Option<f64> {
    let info = sys::FileInfo::of_link(path).ok()?;
    Some(sys::now_ms() - info.mtime_ns as f64 / 1e6)
}
