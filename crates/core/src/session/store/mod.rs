//! The session store: the journal is the truth, everything else is a cache
//! that must prove it is current before it is used.
//!
//! Per session the store keeps the snapshot callers see ([`cache`]), keyed
//! by the journal's (path, size, mtime) when it was derived, as the old
//! module does: an append by another process changes the key and the next
//! read re-derives. Re-deriving tries, in order, the snapshot file (only
//! when it names the journal's current size), the new tail of a replay this
//! store already holds (only when the prefix is byte-for-byte the one it
//! replayed), and a full replay. Appends ([`append`]) are serialized across
//! processes with an advisory lock on the journal, so two writers never
//! take the same sequence number; an append throws only when its line was
//! not written, and then no file changed.
//!
//! | file | job |
//! |---|---|
//! | `cache.rs` | what is kept per session, and the bound on it |
//! | `append.rs` | the append protocol, under the journal's lock |
//! | `legacy.rs` | adopting a journal from the legacy directory |
//! | `persist.rs` | the snapshot file, and the sweep of staged files |
//! | `error.rs` | [`StoreError`] |

mod append;
mod cache;
mod error;
mod legacy;
mod persist;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::js::{JsError, JsStr, Value};
use crate::project::layout::{self, Layout, JOURNAL_SUFFIX};
use crate::session::journal::{self, Locking, Replay};
use crate::session::host::Host;
use crate::session::snapshot::Snapshot;
use crate::session::snapshot_file::{self, Cached};
use crate::sys::{self, FsError};

pub use append::NewEvent;
pub use cache::{Changed, Delta, MAX_DERIVED};
pub use error::StoreError;

use cache::{Derived, FileKey, KeptReplay, Session, Sessions};
use error::state_missing;

pub struct Store {
    pub root_dir: PathBuf,
    pub legacy_root_dir: PathBuf,
    layout: Layout,
    /// fsync the journal (and its directory when the file is new) before an
    /// append returns.
    pub durable: bool,
    /// Opened with [`Store::open_read_only`]: nothing is created, swept or
    /// written, and appends and flushes fail.
    read_only: bool,
    sessions: Sessions,
    /// Journals whose lock a holder kept past the append's patience (see
    /// `append::JOURNAL_LOCK_PATIENCE`): tried once, not waited for, until
    /// the lock is had again.
    stuck: HashSet<PathBuf>,
    /// Appends made, for the sweep of staged files every so many (see
    /// `persist::SWEEP_EVERY`).
    appends: u64,
    /// Runs inside `append` between the journal's `fstat` and the write: a
    /// test's stand-in for a writer that takes no lock.
    #[cfg(test)]
    before_write: Option<Box<dyn Fn()>>,
}

/// The id itself, or the old module's error for one that cannot name a
/// session (see [`layout::is_session_id`]).
pub fn safe_session_id(id: &str) -> Result<&str, StoreError> {
    if layout::is_session_id(id) { Ok(id) } else { Err(StoreError::Js(JsError::error(format!("invalid session id: {}", id)))) }
}

/// A snapshot as handed out: the snapshot and its version.
pub struct View<'a> {
    pub snapshot: &'a Cached,
    pub version: u64,
}

impl Store {
    /// Opens the store for a project root, creating its sessions directory
    /// as the old module does (`mkdirSync(dir, { recursive: true })`, with
    /// its errors). Nothing else is read or written.
    pub fn open(project_root: &Path, durable: bool) -> Result<Store, FsError> {
        let store = Store::new(project_root, durable, false);
        sys::mkdir_all(&store.root_dir)?;
        Ok(store)
    }

    /// Opens the store of a project root for reading only, for tools that
    /// inspect a project (the CLI): it creates no directory, never sweeps
    /// staged files, and its appends and flushes fail with
    /// [`StoreError::Js`] before touching a file. Reads are a writing
    /// store's: they take the journals' shared locks and write nothing.
    pub fn open_read_only(project_root: &Path) -> Store {
        Store::new(project_root, false, true)
    }

    fn new(project_root: &Path, durable: bool, read_only: bool) -> Store {
        let layout = Layout::of(project_root);
        Store {
            root_dir: layout.sessions_dir.clone(),
            legacy_root_dir: layout.legacy_sessions_dir.clone(),
            layout,
            durable,
            read_only,
            sessions: Sessions::default(),
            stuck: HashSet::new(),
            appends: 0,
            #[cfg(test)]
            before_write: None,
        }
    }

    /// Fails an operation that writes (`what` names it) on a read-only store.
    fn writable(&self, what: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::Js(JsError::error(format!("quiver-live-native: {what} refused: this store was opened read-only (nothing was written)"))));
        }
        Ok(())
    }

    pub fn journal_path(&self, id: &str) -> PathBuf {
        self.layout.journal_path(id)
    }

    pub fn legacy_journal_path(&self, id: &str) -> PathBuf {
        self.layout.legacy_journal_path(id)
    }

    pub fn snapshot_path(&self, id: &str) -> PathBuf {
        self.layout.snapshot_path(id)
    }

    /// The journal a read uses (primary, else legacy, else the missing
    /// primary) with its size and mtime, in one `stat` when it is the primary.
    fn readable_journal_key(&self, id: &str) -> FileKey {
        let primary = self.journal_path(id);
        if let Ok(m) = sys::FileInfo::of_path(&primary) {
            return FileKey::from_info(primary, &m);
        }
        let legacy = self.legacy_journal_path(id);
        match sys::FileInfo::of_path(&legacy) {
            Ok(m) => FileKey::from_info(legacy, &m),
            Err(_) => FileKey::of(&primary),
        }
    }

    /// `has(id)` for a string id: a journal exists in either root.
    pub fn has(&self, id: &str) -> Result<bool, StoreError> {
        let id = safe_session_id(id)?;
        Ok(sys::exists(&self.journal_path(id)) || sys::exists(&self.legacy_journal_path(id)))
    }

    /// The current snapshot of a session (`readState`).
    pub fn read(&mut self, id: &str, allow_snapshot_file: bool, host: &dyn Host) -> Result<View<'_>, StoreError> {
        let id = safe_session_id(id)?;
        self.sessions.trim();
        let key = self.readable_journal_key(id);
        let locking = self.read_locking(&key.path);
        self.ensure_current(id, key, allow_snapshot_file, locking, host)?;
        self.view(id)
    }

    /// The version of a session's current snapshot: [`Store::read`], except
    /// that a session whose state was dropped (see [`MAX_DERIVED`]) while its
    /// journal was as it is now is not derived again, since nothing about it
    /// changed. [`Store::read`] derives it when its snapshot is asked for.
    pub fn read_version(&mut self, id: &str, host: &dyn Host) -> Result<u64, StoreError> {
        let id = safe_session_id(id)?;
        self.sessions.trim();
        let key = self.readable_journal_key(id);
        if let Some(unchanged) = self.sessions.unchanged_dropped(id, &key) {
            return Ok(unchanged.version);
        }
        let locking = self.read_locking(&key.path);
        self.ensure_current(id, key, true, locking, host)?;
        Ok(self.view(id)?.version)
    }

    fn view(&self, id: &str) -> Result<View<'_>, StoreError> {
        let s = self.sessions.get(id).ok_or_else(state_missing)?;
        let snapshot = &s.derived.as_ref().ok_or_else(state_missing)?.snapshot;
        Ok(View { snapshot, version: s.version })
    }

    fn ensure_current(&mut self, id: &str, key: FileKey, allow_file: bool, locking: Locking, host: &dyn Host) -> Result<(), StoreError> {
        let session = self.sessions.entry(id);
        if session.is_current(&key) {
            return Ok(());
        }
        let snapshot_path = self.layout.snapshot_path(id);
        let session = self.sessions.entry(id);
        let jsid = JsStr::from(id);
        // Not for a journal name that holds no regular file: its replay
        // below fails, naming it, and no snapshot file may answer instead.
        if allow_file && key.exists() && key.regular {
            if let Some((snapshot, next_seq)) = snapshot_file::hydrate(&snapshot_path, &jsid, key.size as u64) {
                let from = session.version;
                let changed = match (session.derived.as_ref().map(|d| &d.snapshot), &snapshot) {
                    (Some(Cached::Text(before)), Cached::Text(now)) => now.changed_since(before),
                    _ => None,
                };
                session.set(Derived { snapshot, next_seq, key, clean_tail: false, holds_host: false });
                session.delta = changed.map(|members| Delta { from, to: session.version, changed: Changed::Members(members) });
                return Ok(());
            }
        }
        let replay = replay_current(session, &key.path, &jsid, locking, host)?;
        if host.used_placeholders() {
            // Built on placeholders: dropped, and the cached state stays as
            // it was (keyed on the old journal, so it is not mistaken for
            // current).
            return Err(StoreError::Unanswered);
        }
        // A read keeps what it replayed as text, as it keeps a snapshot file
        // it trusts: V8 builds the objects from that text anyway, and the
        // model of a journal of many bad lines (one diagnostic object per
        // line) would more than double the memory the old module needs. An
        // append or a flush (`allow_file` false, or `ensure_model` after)
        // parses it back when it needs the model.
        let text = if allow_file { replay.visible_text() } else { None };
        let visible = match text {
            Some(text) => Cached::Text(text),
            None => Cached::Model(Box::new(replay.visible())),
        };
        // The state describes the bytes replayed, which may be more than the
        // stat saw if a writer appended in between: key it (and any snapshot
        // file written from it) on what was actually read. A differing mtime
        // still sends the next read back to the journal, for the cheap tail.
        let mut key = key;
        if key.exists() {
            key.size = replay.offset as i64;
        }
        let derived = Derived { snapshot: visible, next_seq: replay.next_seq, key: key.clone(), clean_tail: replay.clean_end, holds_host: false };
        session.set(derived);
        // Kept so that, once another process appends, only the new tail is
        // read. It is not advanced by this store's own appends: those lines
        // are in the file, and the next tail read takes them with the rest.
        session.replay = key.exists().then(|| Box::new(KeptReplay { replay: *replay, path: key.path }));
        Ok(())
    }

    /// `flush(id)`: re-derive without trusting the snapshot file, then write
    /// it; then sweep abandoned staged files (see [`Store::sweep_staged`]).
    pub fn flush(&mut self, id: &str, host: &dyn Host) -> Result<View<'_>, StoreError> {
        self.writable("flush")?;
        let id = safe_session_id(id)?;
        self.sessions.trim();
        let key = self.readable_journal_key(id);
        let locking = self.read_locking(&key.path);
        self.ensure_current(id, key.clone(), false, locking, host)?;
        self.ensure_model(id, &key, locking, host)?;
        self.persist_snapshot(id, cache::RenderFor::Flush)?;
        self.sweep_staged();
        self.view(id)
    }

    /// How a read replays `journal`: under a shared lock, unless a writer
    /// holding it is known to be stuck (see `append::JOURNAL_LOCK_PATIENCE`).
    fn read_locking(&self, journal: &Path) -> Locking {
        if self.stuck.contains(journal) { Locking::Unlocked } else { Locking::TakeShared }
    }

    /// Turns a session's snapshot text into the value model an append needs.
    /// The version stays: the snapshot is the same, only its form changes,
    /// so an object handed out for it is still current.
    fn ensure_model(&mut self, id: &str, key: &FileKey, locking: Locking, host: &dyn Host) -> Result<(), StoreError> {
        let session = self.sessions.get_mut(id).ok_or_else(state_missing)?;
        let Some(derived) = session.derived.as_mut() else { return Ok(()) };
        if matches!(derived.snapshot, Cached::Model(_)) {
            return Ok(());
        }
        let text = std::mem::replace(&mut derived.snapshot, Cached::Model(Box::new(Snapshot::base(&JsStr::from(id)))));
        if let Some(model) = text.into_model(&JsStr::from(id)) {
            derived.snapshot = Cached::Model(Box::new(model));
            return Ok(());
        }
        // The parser refused text the skim accepted: forget the file and
        // derive from the journal instead.
        session.derived = None;
        self.ensure_current(id, key.clone(), false, locking, host)
    }

    /// What `listActiveSessions()` returns: every session with a journal, in
    /// id order, brought up to date, less those in a completed phase; returns
    /// (id, version). Completed sessions are read too (a journal that fails
    /// to read fails the listing, as in the old module) but never cross to
    /// JavaScript, where most of a long-running server's would be built
    /// only to be dropped. Errors surface at
    /// the id where the old module's loop would throw (`session id required`
    /// for a file named `.jsonl`, `invalid session id` for other odd names).
    /// Both directories are opened once, so each session costs one `fstatat`.
    pub fn read_active(&mut self, host: &dyn Host) -> Result<Vec<(String, u64)>, StoreError> {
        self.sessions.trim();
        let ids = self.list_ids()?;
        let primary_dir = sys::Dir::open(&self.root_dir).ok();
        let legacy_dir = sys::Dir::open(&self.legacy_root_dir).ok();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if id.is_empty() {
                return Err(StoreError::Js(JsError::error("session id required")));
            }
            safe_session_id(&id)?;
            let key = self.key_at(&id, primary_dir.as_ref(), legacy_dir.as_ref());
            if !key.regular {
                // A FIFO, socket, device or directory named like a journal is
                // no session: left out, so one stray entry cannot fail (or,
                // read as the old module reads it, hang) the whole listing.
                continue;
            }
            if let Some(unchanged) = self.sessions.unchanged_dropped(&id, &key) {
                if !unchanged.completed {
                    out.push((id, unchanged.version));
                }
                continue;
            }
            let locking = self.read_locking(&key.path);
            self.ensure_current(&id, key, true, locking, host)?;
            if self.current(&id).is_some_and(|c| !c.is_completed()) {
                let version = self.view(&id)?.version;
                out.push((id, version));
            }
        }
        Ok(out)
    }

    /// `readable_journal_key` through already open directories.
    fn key_at(&self, id: &str, primary: Option<&sys::Dir>, legacy: Option<&sys::Dir>) -> FileKey {
        let name = format!("{}{}", id, JOURNAL_SUFFIX);
        if let Some(Ok(m)) = primary.map(|d| d.stat(&name)) {
            return FileKey::from_info(self.journal_path(id), &m);
        }
        if let Some(Ok(m)) = legacy.map(|d| d.stat(&name)) {
            return FileKey::from_info(self.legacy_journal_path(id), &m);
        }
        self.readable_journal_key(id)
    }

    /// Session ids with a journal in either root, sorted as JS sorts strings.
    pub fn list_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = Vec::new();
        for dir in [&self.legacy_root_dir, &self.root_dir] {
            let names = match sys::list_dir(dir) {
                Ok(names) => names,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(FsError::new(e, "scandir", dir).into()),
            };
            for name in names {
                if let Some(id) = name.to_string_lossy().strip_suffix(JOURNAL_SUFFIX) {
                    ids.push(id.to_owned());
                }
            }
        }
        // JS sorts strings by UTF-16 code units; for ASCII (every valid id)
        // that is byte order.
        if ids.iter().all(|id| id.is_ascii()) {
            ids.sort_unstable();
        } else {
            ids.sort_unstable_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        }
        ids.dedup();
        Ok(ids)
    }

    /// How the session's current snapshot differs from the one before it,
    /// when it is that one with an event applied.
    pub fn delta(&self, id: &str) -> Option<&Delta> {
        let session = self.sessions.get(id)?;
        session.delta.as_ref().filter(|d| d.to == session.version)
    }

    /// Calls `found` with every `Value::Host` handle the cached snapshots
    /// hold (once or more each), so a binding can release the host values
    /// no snapshot names any more. Replays never hold one: they come from
    /// the journal's JSON.
    pub fn host_handles(&self, found: &mut dyn FnMut(u32)) {
        let mut stack: Vec<&Value> = Vec::new();
        for session in self.sessions.values() {
            if let Some(Cached::Model(model)) = session.derived.as_deref().map(|d| &d.snapshot) {
                stack.extend(model.built_values());
            }
            while let Some(v) = stack.pop() {
                match v {
                    Value::Host(h) => found(*h),
                    Value::Array(items) => stack.extend(items.iter()),
                    Value::Object(o) => {
                        stack.extend(o.iter().map(|(_, v)| v));
                        stack.extend(o.proto());
                    }
                    _ => {}
                }
            }
        }
    }

    /// The snapshot last derived for a session, without checking the journal.
    pub fn current(&self, id: &str) -> Option<&Cached> {
        self.sessions.get(id)?.derived.as_ref().map(|d| &d.snapshot)
    }

    /// Drops what is cached for one session, so the next use re-derives it.
    fn forget_session(&mut self, id: &str) {
        if let Some(s) = self.sessions.get_mut(id) {
            s.forget();
        }
    }

    /// Drops every cached derivation (tests and tools use it to force replays).
    pub fn forget(&mut self) {
        self.sessions.clear();
    }
}

/// The replay for `path`, extended by its new tail when the prefix still
/// matches, replayed from scratch otherwise.
fn replay_current(session: &mut Session, path: &Path, id: &JsStr, locking: Locking, host: &dyn Host) -> Result<Box<Replay>, FsError> {
    if let Some(kept) = session.replay.take().filter(|k| k.path == path) {
        let mut r = Box::new(kept.replay);
        if journal::replay_tail(&mut r, path, host, locking)? {
            return Ok(r);
        }
    }
    journal::replay_file(path, id, host, locking).map(Box::new)
}
