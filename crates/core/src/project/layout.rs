//! Where the live server's files are under a project root, and what their
//! names look like: the one place that spells them, for the store, the lock
//! and (through the binding's `layout`) the CLI.

use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The live directory; sessions and locks are below it.
pub const LIVE_DIR: [&str; 2] = [".impeccable", "live"];
pub const SESSIONS: &str = "sessions";
pub const LOCKS: &str = "locks";
/// Where quiver-cli kept sessions before; read, and adopted on the first
/// append.
pub const LEGACY_SESSIONS_DIR: [&str; 2] = [".impeccable-live", "sessions"];
pub const JOURNAL_SUFFIX: &str = ".jsonl";
pub const SNAPSHOT_SUFFIX: &str = ".snapshot.json";
pub const LOCK_SUFFIX: &str = ".lock";
/// The longest session id.
const MAX_ID_LEN: usize = 128;
/// Hex digits of randomness in a staged file's name.
const STAGED_RANDOM_HEX: usize = 12;

/// A staged snapshot file is only removed by a sweep once nothing has
/// touched it for this long and no writer holds its lock (see
/// `sys::StagedFile::judge`).
pub const STAGED_MIN_AGE: Duration = Duration::from_secs(60);

/// The directories of one project.
#[derive(Clone, Debug)]
pub struct Layout {
    pub live_dir: PathBuf,
    pub sessions_dir: PathBuf,
    pub legacy_sessions_dir: PathBuf,
    pub locks_dir: PathBuf,
}

impl Layout {
    pub fn of(project_root: &Path) -> Layout {
        let under = |parts: &[&str]| parts.iter().fold(project_root.to_path_buf(), |path, part| path.join(part));
        let live = under(&LIVE_DIR);
        Layout { sessions_dir: live.join(SESSIONS), legacy_sessions_dir: under(&LEGACY_SESSIONS_DIR), locks_dir: live.join(LOCKS), live_dir: live }
    }

    pub fn journal_path(&self, id: &str) -> PathBuf {
        file_in(&self.sessions_dir, id, JOURNAL_SUFFIX)
    }

    pub fn legacy_journal_path(&self, id: &str) -> PathBuf {
        file_in(&self.legacy_sessions_dir, id, JOURNAL_SUFFIX)
    }

    pub fn snapshot_path(&self, id: &str) -> PathBuf {
        file_in(&self.sessions_dir, id, SNAPSHOT_SUFFIX)
    }

    /// A fresh name beside the snapshot file to stage its next text under:
    /// `.<id>.<12 random hex>`, exactly as long as `<id>.snapshot.json`, so
    /// it fits wherever the snapshot file's own path fits, unpredictable,
    /// hidden, and never taken for a journal.
    pub fn staged_path(&self, id: &str) -> PathBuf {
        let mut path = self.sessions_dir.join(format!(".{id}."));
        path.as_mut_os_string().push(format!("{:0width$x}", staged_random(), width = STAGED_RANDOM_HEX));
        path
    }

    /// `locks/<name>.lock`.
    pub fn lock_path(&self, name: &str) -> PathBuf {
        file_in(&self.locks_dir, name, LOCK_SUFFIX)
    }
}

/// Whether `id` may name a session: it becomes a file name, so anything
/// that could leave the sessions directory (`..`, separators, NUL) is
/// refused before it reaches a path.
pub fn is_session_id(id: &str) -> bool {
    (1..=MAX_ID_LEN).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The session a staged file's name (see [`Layout::staged_path`]) belongs
/// to, or `None` when `name` is not such a name.
pub fn staged_session(name: &str) -> Option<&str> {
    let (id, random) = name.strip_prefix('.')?.rsplit_once('.')?;
    let random_ok = random.len() == STAGED_RANDOM_HEX && random.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (random_ok && is_session_id(id)).then_some(id)
}

/// [`is_session_id`] as the source of a JavaScript regular expression
/// matching one id, unanchored: for the CLI's messages, and the staged
/// name pattern.
pub fn session_id_pattern() -> String {
    format!("[A-Za-z0-9_-]{{1,{MAX_ID_LEN}}}")
}

/// [`staged_session`] as the source of a JavaScript regular expression,
/// for the CLI: it matches exactly the names `staged_session` accepts, and
/// captures the id.
pub fn staged_name_pattern() -> String {
    format!("^\\.({})\\.[0-9a-f]{{{STAGED_RANDOM_HEX}}}$", session_id_pattern())
}

/// 48 bits no other process can predict, different at each call: a count
/// hashed with keys the system's random source gave this process once
/// (SipHash), so staging costs no `getrandom` per append.
fn staged_random() -> u64 {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    KEYS.get_or_init(RandomState::new).hash_one(COUNT.fetch_add(1, Ordering::Relaxed)) >> (64 - 4 * STAGED_RANDOM_HEX)
}

/// `dir/{name}{suffix}`, built in one allocation: a cached read builds it.
fn file_in(dir: &Path, name: &str, suffix: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len() + suffix.len());
    path.push(dir);
    path.push(name);
    path.as_mut_os_string().push(suffix);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_name_is_as_long_as_the_snapshot_file_name_and_names_its_session() {
        let layout = Layout::of(Path::new("/p"));
        for id in ["a", "5e1d07a3", &"x".repeat(MAX_ID_LEN)] {
            let staged = layout.staged_path(id);
            let snapshot = layout.snapshot_path(id);
            assert_eq!(staged.parent(), snapshot.parent());
            let name = staged.file_name().unwrap().to_str().unwrap();
            assert_eq!(name.len(), snapshot.file_name().unwrap().len(), "{name}");
            assert_eq!(staged_session(name), Some(id));
            assert_ne!(layout.staged_path(id), staged, "unpredictable");
        }
        let names: std::collections::HashSet<PathBuf> = (0..10_000).map(|_| layout.staged_path("a")).collect();
        assert_eq!(names.len(), 10_000, "a fresh name at each call");
        let not_staged = [
            "a.jsonl", "a.snapshot.json", ".a.0123456789ab.tmp", ".a.0123456789AB", ".a.0123456789a", "..0123456789ab", ".a/b.0123456789ab",
            &format!(".{}.0123456789ab", "x".repeat(MAX_ID_LEN + 1)),
        ];
        for name in not_staged {
            assert_eq!(staged_session(name), None, "{name}");
        }
    }

    #[test]
    fn the_directories_are_under_the_project_root() {
        let layout = Layout::of(Path::new("/p"));
        assert_eq!(layout.live_dir, Path::new("/p/.impeccable/live"));
        assert_eq!(layout.sessions_dir, Path::new("/p/.impeccable/live/sessions"));
        assert_eq!(layout.legacy_sessions_dir, Path::new("/p/.impeccable-live/sessions"));
        assert_eq!(layout.lock_path("ab"), Path::new("/p/.impeccable/live/locks/ab.lock"));
        assert_eq!(layout.journal_path("s"), Path::new("/p/.impeccable/live/sessions/s.jsonl"));
    }
}
