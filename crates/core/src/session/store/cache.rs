//! What a store keeps per session between calls, and how much of it.
//!
//! Per session: the snapshot callers see, keyed by the journal's (path,
//! size, mtime) when it was derived, as the old module's cache is, and the
//! replay it came from (so that a later read applies only what another
//! process appended since). Both are dropped for the sessions used least
//! recently once more than [`MAX_DERIVED`] sessions hold them. What stays
//! of a dropped session is 24 bytes (its id's hash, its journal key's hash
//! and its version, see [`Dropped`]): enough for it to come back as the
//! same version when the journal has not changed, so the object a caller
//! was handed keeps being the one returned, as with the old module, and
//! for a read to answer so without deriving it again.

use std::hash::RandomState;
use std::path::{Path, PathBuf};

use hashbrown::HashMap;

use crate::session::journal::Replay;
use crate::session::schema::Field;
use crate::session::snapshot_file::Cached;
use crate::sys;

/// How many sessions keep their derived state at once. A long-running
/// server holds this many; beyond it, the least recently used are dropped.
/// A dropped session whose journal has not changed is read as unchanged
/// without deriving it (see [`Sessions::unchanged_dropped`]); one that an
/// append or a flush uses is derived again, from its snapshot file mostly.
pub const MAX_DERIVED: usize = 128;

/// What a journal looked like when a snapshot was derived from it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FileKey {
    pub path: PathBuf,
    /// -1: no file; -2: not known (its status could not be read), which
    /// matches no journal, so the next read derives the session again.
    pub size: i64,
    pub mtime_ns: i128,
    /// A regular file (or none): a FIFO, device or directory at a journal's
    /// name is never read as a journal.
    pub regular: bool,
}

impl FileKey {
    pub fn of(path: &Path) -> FileKey {
        match sys::FileInfo::of_path(path) {
            Ok(m) => FileKey::from_info(path.to_path_buf(), &m),
            Err(_) => FileKey::missing(path.to_path_buf()),
        }
    }

    pub fn missing(path: PathBuf) -> FileKey {
        FileKey { path, size: -1, mtime_ns: -1, regular: true }
    }

    pub fn unknown(path: PathBuf) -> FileKey {
        FileKey { path, size: -2, mtime_ns: -2, regular: true }
    }

    pub fn from_info(path: PathBuf, m: &sys::FileInfo) -> FileKey {
        FileKey { path, size: m.len as i64, mtime_ns: m.mtime_ns, regular: m.is_file }
    }

    pub fn exists(&self) -> bool {
        self.size >= 0
    }

    pub fn is_unknown(&self) -> bool {
        self.size == -2
    }
}

pub(super) struct Derived {
    pub snapshot: Cached,
    pub next_seq: f64,
    pub key: FileKey,
    /// Known: the journal at `key.size` ends with a newline (so the next
    /// append needs no torn-tail check).
    pub clean_tail: bool,
    /// An appended event brought values only V8 can hold into `snapshot`
    /// (see `Value::Host`), which may still be there.
    pub holds_host: bool,
}

/// Who left a snapshot file for V8 to render (see `Store::awaited_render`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RenderFor {
    /// An append whose line is written: a failure to write the file must
    /// not fail it.
    Append,
    /// A flush, whose job the file is.
    Flush,
}

impl RenderFor {
    /// How the staged file is kept from sweeps: an append loses nothing
    /// when a sweep takes it (the snapshot file stays as it was, untrusted,
    /// for the next write), a flush would fail.
    pub fn guard(self) -> sys::Guard {
        match self {
            RenderFor::Append => sys::Guard::AgeOnly,
            RenderFor::Flush => sys::Guard::Locked,
        }
    }
}

/// What a store keeps of one session. Small, since a store that has
/// touched many sessions keeps one of these for each: the heavy parts are
/// boxed, and only [`MAX_DERIVED`] sessions hold them.
#[derive(Default)]
pub(super) struct Session {
    pub derived: Option<Box<Derived>>,
    /// A replay of a prefix of the journal, kept so a later read can apply
    /// only what was appended since.
    pub replay: Option<Box<KeptReplay>>,
    /// Bumped whenever `derived.snapshot` is replaced, so a binding can tell
    /// whether the object it handed out is still the current one.
    pub version: u64,
    /// How the current version differs from the one before, when it is that
    /// one with an event applied.
    pub delta: Option<Delta>,
    /// The snapshot file was not written for the current version: only V8
    /// can render its text (see `Store::awaited_render`).
    pub awaits_render: Option<RenderFor>,
    /// What was kept when this session's derived state was dropped to keep
    /// the cache bounded: a state derived again from the same journal is the
    /// same snapshot, and keeps its version.
    dropped: Option<Dropped>,
    /// When the session was last used (the store's clock of operations).
    last_used: u64,
}

/// A replay and the journal it read.
pub(super) struct KeptReplay {
    pub replay: Replay,
    pub path: PathBuf,
}

/// What a store keeps of a session whose derived state it dropped, kept
/// apart from the sessions that hold theirs so that a process touching
/// many sessions holds no more than the old module's cache does. Found by
/// the hash of the session's id; `key` is the hash of the journal's
/// [`FileKey`] the dropped state described. Both are 64-bit SipHash with a
/// per-process seed: two ids or two keys of one session alike by chance
/// (odds of 2^-64 per comparison) would hand out the object of the
/// dropped state again.
#[derive(Clone, Copy)]
struct Dropped {
    /// The journal key's hash, with its lowest bit replaced by whether the
    /// state was in a completed phase (so a listing can leave it out).
    key_and_completed: u64,
    version: u64,
}

impl Dropped {
    fn new(key: &FileKey, completed: bool, version: u64) -> Dropped {
        Dropped { key_and_completed: (key_hash(key) & !1) | u64::from(completed), version }
    }

    fn describes(&self, key: &FileKey) -> bool {
        self.key_and_completed & !1 == key_hash(key) & !1
    }

    fn completed(&self) -> bool {
        self.key_and_completed & 1 == 1
    }
}

/// What a read needs of a session dropped while its journal stays as it was.
pub(super) struct Unchanged {
    pub version: u64,
    pub completed: bool,
}

/// SipHash with one seed for the process, so that hashes compare across
/// the stores of a process.
fn hash_of(parts: &[&[u8]]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static SEED: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
    let mut h = SEED.get_or_init(RandomState::new).build_hasher();
    for part in parts {
        h.write(part);
        h.write_u8(0xff);
    }
    h.finish()
}

fn key_hash(key: &FileKey) -> u64 {
    let FileKey { path, size, mtime_ns, regular } = key;
    hash_of(&[path.as_os_str().as_encoded_bytes(), &size.to_le_bytes(), &mtime_ns.to_le_bytes(), &[u8::from(*regular)]])
}

fn id_hash(id: &str) -> u64 {
    hash_of(&[id.as_bytes()])
}

/// How the snapshot at version `to` differs from the one at version `from`:
/// the same keys, in the same order, with `changed` replaced.
#[derive(Debug)]
pub struct Delta {
    pub from: u64,
    pub to: u64,
    pub changed: Changed,
}

#[derive(Debug)]
pub enum Changed {
    /// Base fields an append wrote (no other key).
    Fields(Vec<Field>),
    /// The JSON text of an object holding the members whose text differs
    /// between two snapshot files.
    Members(String),
}

/// Versions are unique across sessions, stores and forgotten state, so a
/// binding can never mistake a new derivation for one it handed out before
/// (a session dropped and rebuilt, as when a legacy journal is adopted, would
/// otherwise count from 1 again).
static NEXT_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Session {
    /// Whether the derived state describes the journal at `key`. Not while
    /// an append's snapshot file awaits V8's rendering (see
    /// `Store::awaited_render`): the old module caches an appended state
    /// only once its file is written, so a call made from a getter or
    /// `toJSON` that rendering runs derives the session from the journal, as
    /// there. A flush's state the old module caches as soon as it is read.
    pub fn is_current(&self, key: &FileKey) -> bool {
        self.awaits_render != Some(RenderFor::Append) && self.derived.as_ref().is_some_and(|d| d.key == *key)
    }

    pub fn set(&mut self, derived: impl Into<Box<Derived>>) {
        let derived = derived.into();
        if self.dropped.take().is_none_or(|dropped| !dropped.describes(&derived.key)) {
            self.version = NEXT_VERSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.derived = Some(derived);
        self.delta = None;
        self.awaits_render = None;
    }

    /// Drops what is derived, so the next use derives it again.
    pub fn forget(&mut self) {
        self.derived = None;
        self.replay = None;
        self.dropped = None;
    }

    /// Whether dropping the derived state loses nothing the journal cannot
    /// give back: not while it holds values only V8 holds, or waits for V8
    /// to render its file.
    fn evictable(&self) -> bool {
        self.derived.as_ref().is_some_and(|d| !d.holds_host) && self.awaits_render.is_none()
    }
}

/// The sessions of a store, with the bound on how many keep their state.
#[derive(Default)]
pub(super) struct Sessions {
    /// hashbrown's, for `entry_ref`: a lookup of a known session, on every
    /// read, neither hashes twice nor allocates.
    map: HashMap<String, Session, RandomState>,
    /// The sessions whose derived state was dropped, by id hash.
    dropped: std::collections::HashMap<u64, Dropped>,
    clock: u64,
    /// The clock at the last trim: a trim looks at every session, so it
    /// runs only after half the bound's worth of uses.
    trimmed_at: u64,
}

impl Sessions {
    pub fn get(&self, id: &str) -> Option<&Session> {
        self.map.get(id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Session> {
        self.map.get_mut(id)
    }

    /// The session, created empty if new (with what was kept of it when
    /// its state was dropped), marked as used now.
    pub fn entry(&mut self, id: &str) -> &mut Session {
        self.clock += 1;
        let clock = self.clock;
        let dropped = &mut self.dropped;
        let session = self.map.entry_ref(id).or_insert_with(|| match dropped.remove(&id_hash(id)) {
            Some(d) => Session { version: d.version, dropped: Some(d), ..Session::default() },
            None => Session::default(),
        });
        session.last_used = clock;
        session
    }

    pub fn remove(&mut self, id: &str) {
        self.map.remove(id);
        self.dropped.remove(&id_hash(id));
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.dropped.clear();
    }

    pub fn values(&self) -> impl Iterator<Item = &Session> {
        self.map.values()
    }

    /// A session whose derived state was dropped while its journal was at
    /// `key`, where it still is: its state derived again would be the same
    /// snapshot, at the same version.
    pub fn unchanged_dropped(&self, id: &str, key: &FileKey) -> Option<Unchanged> {
        if self.map.contains_key(id) {
            return None;
        }
        let d = self.dropped.get(&id_hash(id)).filter(|d| d.describes(key))?;
        Some(Unchanged { version: d.version, completed: d.completed() })
    }

    /// How many sessions hold their derived state.
    #[cfg(test)]
    pub fn derived_count(&self) -> usize {
        self.map.values().filter(|s| s.derived.is_some()).count()
    }

    /// The version of a session, held or dropped.
    #[cfg(test)]
    pub fn version(&self, id: &str) -> Option<u64> {
        self.map.get(id).map(|s| s.version).or_else(|| self.dropped.get(&id_hash(id)).map(|d| d.version))
    }

    /// Keeps at most [`MAX_DERIVED`] sessions' derived state: past that,
    /// the least recently used are dropped down to half the bound, each
    /// leaving a [`Dropped`]. Called at the start of an operation, never
    /// between one and the hand-out of what it derived.
    pub fn trim(&mut self) {
        let max = MAX_DERIVED;
        if self.map.len() <= max || self.clock - self.trimmed_at < (max / 2) as u64 {
            return;
        }
        self.trimmed_at = self.clock;
        let mut held: Vec<(u64, &str)> = self.map.iter().filter(|(_, s)| s.derived.is_some()).map(|(id, s)| (s.last_used, id.as_str())).collect();
        if held.len() <= max {
            return;
        }
        held.sort_unstable_by_key(|(used, _)| *used);
        let surplus = held.len() - max / 2;
        let evicted: Vec<String> = held.into_iter().filter(|(_, id)| self.map[*id].evictable()).take(surplus).map(|(_, id)| id.to_owned()).collect();
        if evicted.is_empty() {
            return;
        }
        for id in evicted {
            if let Some(Session { derived: Some(d), version, .. }) = self.map.remove(&id) {
                self.dropped.insert(id_hash(&id), Dropped::new(&d.key, d.snapshot.is_completed(), version));
            }
        }
        sys::return_free_memory();
    }
}
