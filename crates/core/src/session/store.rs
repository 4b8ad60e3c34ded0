//! The session store: the journal is the truth, everything else is a cache
//! that must prove it is current before it is used.
//!
//! Per session the store keeps the snapshot callers see, keyed by the
//! journal's (path, size, mtime) when it was derived, as the old module does:
//! an append by another process changes the key and the next read re-derives.
//! Re-deriving tries, in order, the snapshot file (only when it names the
//! journal's current size), the new tail of a replay this store already holds
//! (only when the prefix is byte-for-byte the one it replayed), and a full
//! replay. Appends are serialized across processes with an advisory lock on
//! the journal, so two writers never take the same sequence number.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sys::{Context, FsError};
use crate::js::{json, JsStr, Object, Value};
use crate::session::journal::{self, Locking, Replay};
use crate::session::reducer::{apply_appended, entry_seq, Host};
use crate::session::snapshot::Snapshot;
use crate::session::snapshot_file::{self, Cached};
use crate::sys::{self, LockedFile};

#[derive(Debug)]
pub enum StoreError {
    /// A plain `Error` with this message (the old module's own errors).
    Message(String),
    /// A `TypeError` raised by the reducer on odd stored data.
    Type(String),
    Fs(FsError),
    /// The host (JavaScript) threw; its exception is the one to report.
    Thrown,
    /// The reducer ran the caller's code through the host (see
    /// [`Host::ask`]), which threw the host value with this handle: the one
    /// to throw.
    HostThrew(u32),
    /// The operation needs answers from JavaScript it was not given (see
    /// [`crate::session::answers`]); nothing derived from its placeholders
    /// was kept or written. Ask, then run it again.
    Unanswered,
}

impl From<FsError> for StoreError {
    fn from(e: FsError) -> StoreError {
        StoreError::Fs(e)
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Message(m) | StoreError::Type(m) => f.write_str(m),
            StoreError::Fs(e) => e.fmt(f),
            StoreError::Thrown | StoreError::HostThrew(_) => f.write_str("the host threw an exception"),
            StoreError::Unanswered => f.write_str("questions for the host are open"),
        }
    }
}

/// How long an append waits for another writer's lock on the journal. An
/// append holds it for microseconds (a durable one for an fsync). A holder
/// that keeps it longer is stopped (SIGSTOP, Ctrl-Z, a frozen cgroup) or
/// hung: the append then goes ahead without the lock, as the old module's
/// appends always do, and the store remembers the journal as stuck so that
/// its next appends and reads do not wait again until they get the lock.
/// Nothing is lost: the stopped writer appends (O_APPEND) when it resumes,
/// and a line that lands between this append's stat and its write is
/// caught by the size check below; the cost is at worst one duplicate `seq`,
/// what every unlocked append of the old module risks. See RELIABILITY.md.
const JOURNAL_LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// The journal an append writes: locked, or (its holder stuck) not.
enum JournalFile {
    Locked(LockedFile),
    Unlocked(File),
}

impl std::ops::Deref for JournalFile {
    type Target = File;
    fn deref(&self) -> &File {
        match self {
            JournalFile::Locked(f) => f,
            JournalFile::Unlocked(f) => f,
        }
    }
}

/// Session ids become file names, so anything that could leave the sessions
/// directory (`..`, separators, NUL) is refused before it reaches a path.
pub fn safe_session_id(id: &str) -> Result<&str, StoreError> {
    let ok = (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok { Ok(id) } else { Err(StoreError::Message(format!("invalid session id: {}", id))) }
}

/// `dir/{id}{suffix}`, built in one allocation: a cached read builds it.
fn session_file(dir: &Path, id: &str, suffix: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + id.len() + suffix.len());
    path.push(dir);
    path.push(id);
    path.as_mut_os_string().push(suffix);
    path
}

/// What a journal looked like when a snapshot was derived from it.
#[derive(Clone, Debug, PartialEq)]
struct FileKey {
    path: PathBuf,
    size: i64,
    mtime_ns: i128,
    /// A regular file (or none): a FIFO, device or directory at a journal's
    /// name is never read as a journal.
    regular: bool,
}

impl FileKey {
    fn of(path: &Path) -> FileKey {
        match sys::FileInfo::of_path(path) {
            Ok(m) => FileKey::from_info(path.to_path_buf(), &m),
            Err(_) => FileKey::missing(path.to_path_buf()),
        }
    }

    fn missing(path: PathBuf) -> FileKey {
        FileKey { path, size: -1, mtime_ns: -1, regular: true }
    }

    fn from_info(path: PathBuf, m: &sys::FileInfo) -> FileKey {
        FileKey { path, size: m.len as i64, mtime_ns: m.mtime_ns, regular: m.is_file }
    }

    fn exists(&self) -> bool {
        self.size >= 0
    }
}

struct Derived {
    snapshot: Cached,
    next_seq: f64,
    key: FileKey,
    /// Known: the journal at `key.size` ends with a newline (so the next
    /// append needs no torn-tail check).
    clean_tail: bool,
    /// An appended event brought values only V8 can hold into `snapshot`
    /// (see `Value::Host`), which may still be there.
    holds_host: bool,
}

#[derive(Default)]
struct Session {
    derived: Option<Derived>,
    /// A replay of a prefix of the journal at `replay_path`, kept so a later
    /// read can apply only what was appended since. Boxed: it holds a whole
    /// snapshot, and inline it would make every entry of `sessions` (most of
    /// them hydrated from a snapshot file, with no replay) over a kilobyte,
    /// all copied each time a listing grows the map.
    replay: Option<Box<Replay>>,
    replay_path: PathBuf,
    /// Bumped whenever `derived.snapshot` is replaced, so a binding can tell
    /// whether the object it handed out is still the current one.
    version: u64,
    /// How the current version differs from the one before, when it is that
    /// one with an event applied.
    delta: Option<Delta>,
    /// The snapshot file was not written for the current version: only V8
    /// can render its text (see [`Store::awaited_render`]).
    awaits_render: bool,
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
    Fields(Vec<crate::session::schema::Field>),
    /// The JSON text of an object holding the members whose text differs
    /// between two snapshot files.
    Members(String),
}

pub struct Store {
    pub root_dir: PathBuf,
    pub legacy_root_dir: PathBuf,
    /// fsync the journal (and its directory when the file is new) before an
    /// append returns.
    pub durable: bool,
    sessions: HashMap<String, Session>,
    /// Journals whose lock a holder kept past [`JOURNAL_LOCK_PATIENCE`]:
    /// tried once, not waited for, until the lock is had again.
    stuck: HashSet<PathBuf>,
    /// Runs inside `append` between the journal's `fstat` and the write: a
    /// test's stand-in for a writer that takes no lock.
    #[cfg(test)]
    before_write: Option<Box<dyn Fn()>>,
}

/// An event to append, as the caller's JavaScript prepared it: the old
/// module's `normalizeEvent`, and the parts of its entry that run JS.
pub struct NewEvent {
    /// `{ ...event, id }`.
    pub value: Value,
    /// `new Date().toISOString()`.
    pub ts: Value,
    /// `JSON.stringify({ seq: 0, id, type, ts, event })`: the journal line,
    /// once the real `seq` replaces the 0.
    pub entry: String,
    /// `{ ...event, id }` as V8 holds it (a `Value::Host`), when it has
    /// members `value` has no place for: own symbol-keyed ones, which the
    /// pending event copies (see [`apply_appended`]).
    pub held: Option<Value>,
}

/// A snapshot as handed out: the snapshot and its version.
pub struct View<'a> {
    pub snapshot: &'a Cached,
    pub version: u64,
}

impl Store {
    /// Opens the store for a project root, creating its sessions directory.
    pub fn open(project_root: &Path, durable: bool) -> Result<Store, FsError> {
        let root_dir = project_root.join(".impeccable").join("live").join("sessions");
        let legacy_root_dir = project_root.join(".impeccable-live").join("sessions");
        mkdir_all(&root_dir)?;
        // A writer killed between staging a snapshot file and renaming it
        // over leaves the staged file; nothing else would ever remove it.
        sys::remove_stale_staged(&root_dir);
        Ok(Store {
            root_dir,
            legacy_root_dir,
            durable,
            sessions: HashMap::new(),
            stuck: HashSet::new(),
            #[cfg(test)]
            before_write: None,
        })
    }

    pub fn journal_path(&self, id: &str) -> PathBuf {
        session_file(&self.root_dir, id, ".jsonl")
    }

    pub fn legacy_journal_path(&self, id: &str) -> PathBuf {
        session_file(&self.legacy_root_dir, id, ".jsonl")
    }

    pub fn snapshot_path(&self, id: &str) -> PathBuf {
        session_file(&self.root_dir, id, ".snapshot.json")
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
            Err(_) if primary.exists() => FileKey::of(&primary),
            Err(_) => FileKey::missing(primary),
        }
    }

    /// `has(id)` for a string id: a journal exists in either root.
    pub fn has(&self, id: &str) -> Result<bool, StoreError> {
        let id = safe_session_id(id)?;
        Ok(self.journal_path(id).exists() || self.legacy_journal_path(id).exists())
    }

    /// The current snapshot of a session (`readState`).
    pub fn read(&mut self, id: &str, allow_snapshot_file: bool, host: &dyn Host) -> Result<View<'_>, StoreError> {
        let id = safe_session_id(id)?;
        let key = self.readable_journal_key(id);
        let locking = self.read_locking(&key.path);
        self.ensure_current(id, key, allow_snapshot_file, locking, host)?;
        Ok(self.view(id))
    }

    fn view(&self, id: &str) -> View<'_> {
        let s = &self.sessions[id];
        let snapshot = &s.derived.as_ref().unwrap_or_else(|| unreachable!("derived after ensure_current")).snapshot;
        View { snapshot, version: s.version }
    }

    fn ensure_current(&mut self, id: &str, key: FileKey, allow_file: bool, locking: Locking, host: &dyn Host) -> Result<(), StoreError> {
        // The hot path (nothing changed) allocates nothing.
        if self.sessions.get(id).is_some_and(|s| s.is_current(&key)) {
            return Ok(());
        }
        let snapshot_path = self.snapshot_path(id);
        let session = self.sessions.entry(id.to_owned()).or_default();
        if session.is_current(&key) {
            return Ok(());
        }
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
        if host.unanswered() {
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
        if key.exists() {
            session.replay = Some(replay);
            session.replay_path = key.path;
        } else {
            session.replay = None;
        }
        Ok(())
    }

    /// `flush(id)`: re-derive without trusting the snapshot file, then write it.
    pub fn flush(&mut self, id: &str, host: &dyn Host) -> Result<View<'_>, StoreError> {
        let id = safe_session_id(id)?;
        let key = self.readable_journal_key(id);
        let locking = self.read_locking(&key.path);
        self.ensure_current(id, key.clone(), false, locking, host)?;
        self.ensure_model(id, &key, locking, host)?;
        self.persist(id)?;
        Ok(self.view(id))
    }

    /// Writes the snapshot file for the current state. It names the journal
    /// size the state was derived from, never a later stat: the old module's
    /// re-stat let a concurrent append be claimed by a snapshot that lacks it,
    /// and writers trusting that file then reused sequence numbers.
    fn persist(&mut self, id: &str) -> Result<(), StoreError> {
        self.persist_snapshot(id)
    }

    /// What the snapshot file of the current state needs, when the last
    /// append or flush left it unwritten because only V8 can render its
    /// text: the snapshot holds values only V8 can stringify (`toJSON`,
    /// getters, see `Value::Host`), or nests deeper than is written without
    /// V8's own check (see [`snapshot_file::DEPTH_WITHOUT_CHECK`]). Returns
    /// `(__journalBytes, __nextSeq)`: the caller renders
    /// `JSON.stringify({ ...snapshot, __journalBytes, __nextSeq }, null, 2)`
    /// as the old module does (throwing where it throws) and hands the text
    /// to [`Store::persist_rendered`].
    pub fn awaited_render(&self, id: &str) -> Option<(i64, f64)> {
        let session = self.sessions.get(id).filter(|s| s.awaits_render)?;
        session.derived.as_ref().map(|d| (d.key.size, d.next_seq))
    }

    /// Writes `text`, V8's rendering of the snapshot of `version` (see
    /// [`Store::awaited_render`]) plus its newline, as the snapshot file.
    /// Also when the session has moved on since, which only a getter or
    /// `toJSON` run by that rendering can do by appending: the old module
    /// writes what it rendered then too, and then caches that older state,
    /// so its next call replays the journal (the file, claiming the
    /// journal's earlier size, is not trusted): this store forgets the
    /// session and does the same.
    pub fn persist_rendered(&mut self, id: &str, version: u64, text: &str) -> Result<(), StoreError> {
        let id = safe_session_id(id)?;
        match self.sessions.get_mut(id) {
            Some(s) if s.version == version => s.awaits_render = false,
            _ => self.forget_session(id),
        }
        self.write_snapshot_file(id, text)
    }

    /// Drops what is cached for a session whose snapshot file V8 could not
    /// render: the old module's cache then still describes the journal
    /// before the append, so its next read re-derives from the journal.
    pub fn drop_unrendered(&mut self, id: &str) {
        if self.sessions.get(id).is_some_and(|s| s.awaits_render) {
            self.forget_session(id);
        }
    }

    /// `appendEvent` of an event the caller has already checked and
    /// normalized (see [`NewEvent`]). The event is taken once its line is
    /// written: after [`StoreError::Unanswered`] it is still there when the
    /// line is not, and when it is gone the line is in the journal and the
    /// caller finishes with a [`Store::flush`] (which derives the session
    /// from the journal and writes the snapshot file, as the append would).
    pub fn append(&mut self, id: &str, event: &mut Option<NewEvent>, host: &dyn Host) -> Result<View<'_>, StoreError> {
        let id = safe_session_id(id)?;
        let primary = self.journal_path(id);
        let (file, meta, created) = self.lock_journal(id, &primary)?;
        let before = FileKey::from_info(primary.clone(), &meta);
        self.ensure_current(id, before.clone(), true, Locking::AlreadyExclusive, host)?;
        self.ensure_model(id, &before, Locking::AlreadyExclusive, host)?;

        let derived = self.sessions[id].derived.as_ref();
        let seq = derived.map_or(1.0, |d| d.next_seq);
        let known_clean = derived.is_some_and(|d| d.clean_tail && d.key == before);
        let torn = !known_clean && !journal::ends_with_newline(&file, before.size as u64).at("read", &primary)?;
        let pending = event.as_ref().ok_or_else(state_missing)?;
        self.ask_before_writing(id, seq, pending, host)?;
        let line = entry_line(seq, pending, torn)?;
        #[cfg(test)]
        if let Some(hook) = &self.before_write {
            hook();
        }
        write_line(&file, &primary, &line, before.size as u64)?;
        if self.durable {
            sync_journal(&file, &primary, created)?;
        }

        let mut written = event.take().ok_or_else(state_missing)?;
        let held = written.held.take();
        let entry = entry_value(seq, id, written);
        let after = FileKey::from_info(primary.clone(), &sys::FileInfo::of(&file).at("fstat", &primary)?);
        self.apply_own_append(id, &entry, held.as_ref(), after.clone(), host)?;
        if after.size != before.size + line.len() as i64 {
            // A writer that takes no lock (the old module) appended between
            // our stat and our write. The state just built lacks its line but
            // would be keyed on a size that includes it, and the snapshot file
            // would claim it: derive from the journal instead.
            self.forget_session(id);
            self.ensure_current(id, after, false, Locking::AlreadyExclusive, host)?;
        }
        drop(file);
        self.persist_snapshot(id)?;
        Ok(self.view(id))
    }

    /// An event holding the caller's values only V8 can interpret, or one
    /// applied to a snapshot holding such values, may need V8 to run its
    /// case (see [`Host::ask`]), which must happen before its line is
    /// written: once written, the event itself is gone. So the case is first
    /// tried on a copy of the snapshot; when that leaves questions open the
    /// append stops with [`StoreError::Unanswered`], nothing written, and
    /// runs again once they are answered. The real application after the
    /// write then finds every answer (an exception among them refuses it
    /// as V8 would have).
    fn ask_before_writing(&self, id: &str, seq: f64, event: &NewEvent, host: &dyn Host) -> Result<(), StoreError> {
        let derived = self.sessions.get(id).and_then(|s| s.derived.as_ref()).ok_or_else(state_missing)?;
        let Cached::Model(model) = &derived.snapshot else { return Err(state_missing()) };
        if !derived.holds_host && !event.value.holds_host() && event.held.is_none() {
            return Ok(());
        }
        let trial = NewEvent { value: event.value.clone(), ts: event.ts.clone(), entry: String::new(), held: None };
        let _ = apply_appended(&mut Snapshot::clone(model), &entry_value(seq, id, trial), event.held.as_ref(), host);
        if host.unanswered() {
            return Err(StoreError::Unanswered);
        }
        host.rewind();
        Ok(())
    }

    /// The session's journal, exclusively locked unless its holder is
    /// stuck (see [`JOURNAL_LOCK_PATIENCE`]), with its metadata; true when
    /// this call created it.
    fn lock_journal(&mut self, id: &str, primary: &Path) -> Result<(JournalFile, sys::FileInfo, bool), StoreError> {
        let open = |store: &mut Store| -> Result<(File, bool), StoreError> {
            if let Some(file) = open_existing_journal(primary)? {
                return Ok((file, false));
            }
            if let Some(file) = store.adopt_legacy_journal(id, primary)? {
                return Ok((file, true));
            }
            Ok(open_journal(primary)?)
        };
        let (file, created) = open(self)?;
        let patience = if self.stuck.contains(primary) { Duration::ZERO } else { JOURNAL_LOCK_PATIENCE };
        let journal = match sys::lock_exclusive(file, primary, patience) {
            Ok(locked) => {
                self.stuck.remove(primary);
                JournalFile::Locked(locked)
            }
            Err(e) if e.is_timed_out() => {
                self.stuck.insert(primary.to_path_buf());
                // The wait closed the file: open it again, unlocked.
                JournalFile::Unlocked(open(self)?.0)
            }
            Err(e) => return Err(e.into()),
        };
        let meta = sys::FileInfo::of(&journal).at("fstat", primary)?;
        Ok((journal, meta, created))
    }

    /// How a read replays `journal`: under a shared lock, unless a writer
    /// holding it is known to be stuck (see [`JOURNAL_LOCK_PATIENCE`]).
    fn read_locking(&self, journal: &Path) -> Locking {
        if self.stuck.contains(journal) { Locking::Unlocked } else { Locking::TakeShared }
    }

    /// The old module copies a legacy journal into the primary directory on
    /// the first append, and everything derived from the old path is dropped.
    /// The copy is read as a journal is (a regular file, links followed) and
    /// written to a file created at the primary name (never through a link
    /// there); `None` when there is no legacy journal, or when another
    /// process created the primary one meanwhile.
    fn adopt_legacy_journal(&mut self, id: &str, primary: &Path) -> Result<Option<File>, StoreError> {
        let legacy = self.legacy_journal_path(id);
        let mut from = match sys::open_regular(&legacy, sys::Links::Follow) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FsError::new(e, "copyfile", &legacy).into()),
        };
        let mut to = match sys::create_to_append(primary) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
            Err(e) => return Err(FsError::new(e, "copyfile", &legacy).into()),
        };
        if let Err(e) = std::io::copy(&mut from, &mut to) {
            // Nothing half-copied is left for the next append to extend.
            drop(to);
            let _ = fs::remove_file(primary);
            return Err(FsError::new(e, "copyfile", &legacy).into());
        }
        self.sessions.remove(id);
        Ok(Some(to))
    }

    fn apply_own_append(&mut self, id: &str, entry: &Value, held: Option<&Value>, after: FileKey, host: &dyn Host) -> Result<(), StoreError> {
        let session = self.sessions.get_mut(id).ok_or_else(state_missing)?;
        let mut derived = session.derived.take().ok_or_else(state_missing)?;
        let Cached::Model(model) = &mut derived.snapshot else {
            return Err(state_missing());
        };
        model.clear_changes();
        let applied = apply_appended(model, entry, held, host);
        if host.unanswered() {
            // The line is in the journal; the state built on placeholders
            // is dropped, and the caller derives it from the journal.
            session.replay = None;
            return Err(StoreError::Unanswered);
        }
        if let Err(message) = applied {
            // The line is in the journal; like the old module, report the
            // error and let the next read re-derive from the journal.
            session.replay = None;
            return Err(host.threw().map_or(StoreError::Type(message.0), StoreError::HostThrew));
        }
        let (from, changes) = (session.version, model.changes());
        let seq = entry_seq(entry).unwrap_or(derived.next_seq);
        derived.next_seq = seq + 1.0;
        derived.key = after.clone();
        derived.clean_tail = true;
        derived.holds_host = derived.holds_host || entry.holds_host() || held.is_some();
        session.set(derived);
        session.delta = changes.map(|fields| Delta { from, to: session.version, changed: Changed::Fields(fields) });
        Ok(())
    }

    fn persist_snapshot(&mut self, id: &str) -> Result<(), StoreError> {
        let session = self.sessions.get_mut(id).ok_or_else(state_missing)?;
        let d = session.derived.as_mut().ok_or_else(state_missing)?;
        // Only appends and flushes persist, and both work on the model.
        let Cached::Model(model) = &d.snapshot else { return Err(state_missing()) };
        d.holds_host = d.holds_host && model.holds_host();
        let text = if d.holds_host { None } else { snapshot_file::render(model, d.key.size, d.next_seq) };
        let Some(text) = text else {
            session.awaits_render = true;
            return Ok(());
        };
        session.awaits_render = false;
        self.write_snapshot_file(id, &text)
    }

    fn write_snapshot_file(&self, id: &str, text: &str) -> Result<(), StoreError> {
        let snapshot_path = self.snapshot_path(id);
        if self.durable {
            snapshot_file::write_durable(&snapshot_path, text)?;
        } else {
            snapshot_file::write(&snapshot_path, text)?;
        }
        Ok(())
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
        let ids = self.list_ids()?;
        let primary_dir = sys::Dir::open(&self.root_dir).ok();
        let legacy_dir = sys::Dir::open(&self.legacy_root_dir).ok();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if id.is_empty() {
                return Err(StoreError::Message("session id required".into()));
            }
            safe_session_id(&id)?;
            let key = self.key_at(&id, primary_dir.as_ref(), legacy_dir.as_ref());
            if !key.regular {
                // A FIFO, socket, device or directory named like a journal is
                // no session: left out, so one stray entry cannot fail (or,
                // read as the old module reads it, hang) the whole listing.
                continue;
            }
            let locking = self.read_locking(&key.path);
            self.ensure_current(&id, key, true, locking, host)?;
            if self.current(&id).is_some_and(|c| !c.is_completed()) {
                let version = self.view(&id).version;
                out.push((id, version));
            }
        }
        Ok(out)
    }

    /// `readable_journal_key` through already open directories.
    fn key_at(&self, id: &str, primary: Option<&sys::Dir>, legacy: Option<&sys::Dir>) -> FileKey {
        let name = format!("{}.jsonl", id);
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
            let entries = match fs::read_dir(dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(FsError::new(e, "scandir", dir).into()),
            };
            for entry in entries {
                let entry = entry.at("scandir", dir)?;
                let name = entry.file_name();
                if let Some(id) = name.to_string_lossy().strip_suffix(".jsonl") {
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
        self.sessions.get(id)?.delta.as_ref().filter(|d| d.to == self.sessions[id].version)
    }

    /// Calls `found` with every `Value::Host` handle the cached snapshots
    /// hold (once or more each), so a binding can release the host values
    /// no snapshot names any more. Replays never hold one: they come from
    /// the journal's JSON.
    pub fn host_handles(&self, found: &mut dyn FnMut(u32)) {
        let mut stack: Vec<&Value> = Vec::new();
        for session in self.sessions.values() {
            if let Some(Derived { snapshot: Cached::Model(model), .. }) = &session.derived {
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
            s.derived = None;
            s.replay = None;
        }
    }

    /// Drops every cached derivation (tests and tools use it to force replays).
    pub fn forget(&mut self) {
        self.sessions.clear();
    }
}

/// A session's derived state was expected and is not there: a bug, reported
/// as an error rather than a panic.
fn state_missing() -> StoreError {
    StoreError::Message("session state missing".into())
}

/// Versions are unique across sessions, stores and forgotten state, so a
/// binding can never mistake a new derivation for one it handed out before
/// (a session dropped and rebuilt, as when a legacy journal is adopted, would
/// otherwise count from 1 again).
static NEXT_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Session {
    /// Whether the derived state describes the journal at `key`. Not while
    /// its snapshot file awaits V8's rendering (see
    /// [`Store::awaited_render`]): the old module caches a state only once
    /// its file is written, so a call made from a getter or `toJSON` that
    /// rendering runs derives the session from the journal, as there.
    fn is_current(&self, key: &FileKey) -> bool {
        !self.awaits_render && self.derived.as_ref().is_some_and(|d| d.key == *key)
    }

    fn set(&mut self, derived: Derived) {
        self.derived = Some(derived);
        self.version = NEXT_VERSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.delta = None;
        self.awaits_render = false;
    }
}

/// The replay for `path`, extended by its new tail when the prefix still
/// matches, replayed from scratch otherwise.
fn replay_current(session: &mut Session, path: &Path, id: &JsStr, locking: Locking, host: &dyn Host) -> Result<Box<Replay>, FsError> {
    if session.replay_path == path {
        if let Some(mut r) = session.replay.take() {
            if journal::replay_tail(&mut r, path, host, locking)? {
                return Ok(r);
            }
        }
    }
    journal::replay_file(path, id, host, locking).map(Box::new)
}

/// The journal opened for appending, or `None` when nothing is at its name.
/// Never through a link (`ELOOP`, dangling or not: an append must not
/// create or extend a file elsewhere), and only a regular file (see
/// `sys::open_regular_to_append`).
fn open_existing_journal(path: &Path) -> Result<Option<File>, FsError> {
    match sys::open_regular_to_append(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FsError::new(e, "open", path)),
    }
}

/// The journal opened for appending, created when nothing is at its name
/// (true then); a journal another process created first is opened.
fn open_journal(path: &Path) -> Result<(File, bool), FsError> {
    match sys::create_to_append(path) {
        Ok(file) => Ok((file, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open_existing_journal(path)? {
            Some(file) => Ok((file, false)),
            None => Err(FsError::new(e, "open", path)),
        },
        Err(e) => Err(FsError::new(e, "open", path)),
    }
}

/// Writes one whole line or nothing: on a failed or short write (a full disk)
/// the bytes that did land are cut off again, so no fragment is left behind.
/// Only when they are the file's last bytes, though: if a writer that takes
/// no lock (the old module) appended meanwhile, cutting would take its line
/// too. The fragment then stays, and the next append closes it with a
/// newline (one diagnosed line, nothing of anyone else's lost).
fn write_line(file: &File, path: &Path, line: &str, size_before: u64) -> Result<(), FsError> {
    let bytes = line.as_bytes();
    let mut written = 0;
    let mut writer = file;
    while written < bytes.len() {
        let err = match writer.write(&bytes[written..]) {
            Ok(0) => std::io::Error::from(std::io::ErrorKind::WriteZero),
            Ok(n) => {
                written += n;
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => e,
        };
        if written > 0 && file.metadata().is_ok_and(|m| m.len() == size_before + written as u64) {
            let _ = file.set_len(size_before);
        }
        return Err(FsError::new(err, "write", path));
    }
    Ok(())
}

fn sync_journal(file: &File, path: &Path, created: bool) -> Result<(), FsError> {
    file.sync_data().at("fsync", path)?;
    if created {
        if let Some(dir) = path.parent() {
            sys::sync_dir(dir).at("fsync", dir)?;
        }
    }
    Ok(())
}

/// `JSON.stringify({ seq, id, type, ts, event }) + '\n'`, after a `\n` that
/// closes a torn fragment when the journal does not end with one.
fn entry_line(seq: f64, event: &NewEvent, torn: bool) -> Result<String, StoreError> {
    let rest = event.entry.strip_prefix(SEQ_PLACEHOLDER).ok_or_else(|| StoreError::Message("quiver-live-native: the entry text must start with {\"seq\":0,".into()))?;
    let mut line = String::with_capacity(event.entry.len() + 24);
    if torn {
        line.push('\n');
    }
    line.push_str("{\"seq\":");
    json::write_number(&mut line, seq);
    line.push(',');
    line.push_str(rest);
    line.push('\n');
    Ok(line)
}

/// How the entry text a caller renders begins (see [`NewEvent::entry`]).
const SEQ_PLACEHOLDER: &str = "{\"seq\":0,";

/// The entry as the reducer sees it; takes the event, which the journal line
/// no longer needs, instead of copying it (an event may carry megabytes).
fn entry_value(seq: f64, id: &str, event: NewEvent) -> Value {
    let mut e = Object::with_capacity(5);
    e.set("seq", Value::Number(seq));
    e.set("id", Value::str(id));
    e.set("type", event.value.get("type").clone());
    e.set("ts", event.ts);
    e.set("event", event.value);
    Value::Object(e)
}

/// `mkdir -p` that names the directory it could not create, as Node does.
pub fn mkdir_all(dir: &Path) -> Result<(), FsError> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        mkdir_all(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(FsError::new(e, "mkdir", dir)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::reducer::tests::TestHost;

    /// A project directory of its own, removed when the test is done with it.
    struct TempRoot(PathBuf);

    impl std::ops::Deref for TempRoot {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempRoot {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn temp_root(name: &str) -> TempRoot {
        let dir = std::env::temp_dir().join(format!("qln-store-{}-{}", name, std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempRoot(dir)
    }

    /// An event as the binding hands it over, stamped at a fixed time.
    fn event(json_text: &str) -> NewEvent {
        let value = json::parse(json_text).unwrap();
        let ts = Value::str("2030-01-01T00:00:00.000Z");
        let entry = crate::session::reducer::obj(&[
            ("seq", Value::Number(0.0)),
            ("id", value.get("id").clone()),
            ("type", value.get("type").clone()),
            ("ts", ts.clone()),
            ("event", value.clone()),
        ]);
        NewEvent { value, ts, entry: json::stringify(&Value::Object(entry)).unwrap(), held: None }
    }

    /// The snapshot as the value model, whichever form the store holds.
    fn model(s: &Cached) -> Snapshot {
        s.clone().into_model(&JsStr::from("s")).expect("model")
    }

    fn text(s: &Cached) -> String {
        json::stringify_members(model(s).members(), None)
    }

    fn append_raw(path: &Path, bytes: &str) {
        fs::OpenOptions::new().append(true).open(path).unwrap().write_all(bytes.as_bytes()).unwrap();
    }

    #[test]
    fn append_assigns_sequence_and_writes_files() {
        let root = temp_root("append");
        let host = TestHost(1_893_456_000_000.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
        let v = store.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
        assert_eq!(model(v.snapshot).get(crate::session::schema::Field::Phase).as_js_str().map(JsStr::to_lossy).as_deref(), Some("variants_ready"));
        let journal = fs::read_to_string(store.journal_path("s")).unwrap();
        assert_eq!(
            journal.lines().next().unwrap(),
            r#"{"seq":1,"id":"s","type":"generate","ts":"2030-01-01T00:00:00.000Z","event":{"type":"generate","id":"s"}}"#
        );
        assert_eq!(journal.lines().count(), 2);
        let snap = fs::read_to_string(store.snapshot_path("s")).unwrap();
        assert!(snap.ends_with(&format!("  \"__journalBytes\": {},\n  \"__nextSeq\": 3\n}}\n", journal.len())));
    }

    /// A listing reads every session, and returns the ones not completed,
    /// in id order, also when a completed one was read from its snapshot
    /// file by a store that never saw it live.
    #[test]
    fn read_active_leaves_out_completed_sessions() {
        let root = temp_root("active");
        let host = TestHost(0.0);
        let mut writer = Store::open(&root, false).unwrap();
        for id in ["c", "a", "b"] {
            writer.append(id, &mut Some(event(&format!(r#"{{"type":"generate","id":"{id}"}}"#))), &host).unwrap();
        }
        writer.append("b", &mut Some(event(r#"{"type":"complete","id":"b"}"#)), &host).unwrap();
        let ids = |all: Vec<(String, u64)>| all.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
        assert_eq!(ids(writer.read_active(&host).unwrap()), ["a", "c"]);
        let mut fresh = Store::open(&root, false).unwrap();
        assert_eq!(ids(fresh.read_active(&host).unwrap()), ["a", "c"]);
        assert!(fresh.current("b").is_some_and(Cached::is_completed), "the completed session was read");
    }

    #[test]
    fn tail_replay_equals_full_replay_with_corrupt_lines() {
        let root = temp_root("tail");
        let host = TestHost(0.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
        let path = store.journal_path("s");
        // Another writer: a corrupt line, a good line and a stale checkpoint.
        append_raw(&path, "{oops\n");
        append_raw(&path, r#"{"seq":3,"id":"s","type":"checkpoint","ts":"2030-01-01T00:00:00.000Z","event":{"type":"checkpoint","revision":4}}"#);
        append_raw(&path, "\n");
        let via_tail = text(store.read("s", false, &host).unwrap().snapshot);
        append_raw(&path, "null\n");
        append_raw(&path, r#"{"seq":9,"event":{"type":"checkpoint","revision":1}}"#);
        append_raw(&path, "\n");
        let via_tail2 = text(store.read("s", false, &host).unwrap().snapshot);
        let full = journal::replay_file(&path, &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
        assert_eq!(via_tail2, text(&Cached::Model(Box::new(full.visible()))));
        assert!(via_tail.contains(r#""line":2"#));
        assert!(via_tail2.contains(r#"{"error":"journal_parse_failed","line":4,"message":"entry is not object"}"#));
        assert_eq!(full.next_seq, 10.0);
    }

    #[test]
    fn torn_tail_is_not_glued_to_the_next_append() {
        let root = temp_root("torn");
        let host = TestHost(0.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
        append_raw(&store.journal_path("s"), r#"{"seq":2,"id":"s","type":"agent_do"#);
        store.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"variant_mounted","variant":1,"id":"s"}"#)), &host).unwrap();
        let replay = journal::replay_file(&store.journal_path("s"), &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
        let s = text(&Cached::Model(Box::new(replay.visible())));
        assert!(s.contains(r#""renderState":"mounted""#), "{s}");
        assert!(s.contains(r#""phase":"variants_ready""#), "{s}");
        assert_eq!(replay.parse_diags.len(), 1);
    }

    #[test]
    fn snapshot_file_is_trusted_only_at_the_journal_size() {
        let root = temp_root("hydrate");
        let host = TestHost(0.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
        // A snapshot file that claims the current size is believed as is...
        let snap_path = store.snapshot_path("s");
        let doctored = fs::read_to_string(&snap_path).unwrap().replace("\"expectedVariants\": 2", "\"expectedVariants\": 7");
        fs::write(&snap_path, doctored).unwrap();
        let mut fresh = Store::open(&root, false).unwrap();
        assert!(text(fresh.read("s", true, &host).unwrap().snapshot).contains(r#""expectedVariants":7"#));
        // ...and ignored once the journal grew past it, or when flushing.
        let mut other = Store::open(&root, false).unwrap();
        assert!(text(other.flush("s", &host).unwrap().snapshot).contains(r#""expectedVariants":2"#));
    }

    /// A file either module writes is held as text (no model built) and
    /// means exactly what the full parser makes of it; an append then works
    /// on the model parsed from that text.
    #[test]
    fn a_canonical_snapshot_file_is_held_as_text_until_an_append() {
        let root = temp_root("text");
        let host = TestHost(1_893_456_000_000.0);
        let mut writer = Store::open(&root, false).unwrap();
        writer.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2,"prompt":"é \"q\" \u2028"}"#)), &host).unwrap();
        let want = text(writer.read("s", false, &host).unwrap().snapshot);
        let mut fresh = Store::open(&root, false).unwrap();
        let got = fresh.read("s", true, &host).unwrap().snapshot;
        let Cached::Text(t) = got else { panic!("expected the text form, got {got:?}") };
        assert!(!t.json.contains("__journalBytes") && !t.json.contains("__nextSeq"), "{}", t.json);
        assert_eq!(text(got), want);
        let mut flusher = Store::open(&root, false).unwrap();
        assert!(matches!(flusher.read("s", true, &host).unwrap().snapshot, Cached::Text(_)));
        assert_eq!(text(flusher.flush("s", &host).unwrap().snapshot), want, "flush writes from the model");
        let after = fresh.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
        assert!(matches!(after.snapshot, Cached::Model(_)));
        let again = text(after.snapshot);
        let mut replayed = Store::open(&root, false).unwrap();
        assert_eq!(again, text(replayed.flush("s", &host).unwrap().snapshot));
    }

    /// Files the fast path is unsure of take the full parser, which still
    /// trusts them when they name the journal's size.
    #[test]
    fn an_unusual_snapshot_file_takes_the_full_parser() {
        let root = temp_root("unusual");
        let host = TestHost(0.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
        let snap_path = store.snapshot_path("s");
        let original = fs::read_to_string(&snap_path).unwrap();
        let variants = [
            original.replace("\"phase\"", "\"ph\\u0061se\""),
            original.replacen("{", "{\"extra\": 1,", 1),
            original.replace("\"updatedAt\"", "\"__proto__\": {},\n  \"updatedAt\""),
        ];
        for doctored in variants {
            fs::write(&snap_path, &doctored).unwrap();
            let mut fresh = Store::open(&root, false).unwrap();
            let got = fresh.read("s", true, &host).unwrap().snapshot;
            assert!(matches!(got, Cached::Model(_)), "{doctored}");
        }
    }

    /// The snapshot file names the journal's size and holds the snapshot
    /// the store returned: the file a reader in another process trusts.
    fn assert_snapshot_file_current(store: &mut Store, id: &str, host: &dyn Host) {
        let journal_len = fs::metadata(store.journal_path(id)).unwrap().len();
        let file = fs::read_to_string(store.snapshot_path(id)).unwrap();
        assert!(file.contains(&format!("\"__journalBytes\": {journal_len},")), "stale snapshot file: {file}");
        let mut fresh = Store::open(&store.root_dir.join("../../.."), false).unwrap();
        let from_file = text(fresh.read(id, true, host).unwrap().snapshot);
        let replayed = text(&Cached::Model(Box::new(journal::replay_file(&store.journal_path(id), &JsStr::from(id), host, Locking::TakeShared).unwrap().visible())));
        assert_eq!(from_file, replayed);
    }

    fn descriptors_open_on(path: &Path) -> usize {
        let target = fs::canonicalize(path).unwrap();
        fs::read_dir("/proc/self/fd").unwrap().filter_map(|e| fs::read_link(e.ok()?.path()).ok()).filter(|l| *l == target).count()
    }

    /// No descriptor outlives the call that opened it, and files deleted
    /// between appends are made again.
    #[test]
    fn no_file_stays_open_after_a_call() {
        let root = temp_root("closed");
        let host = TestHost(1_893_456_000_000.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":3}"#)), &host).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"variant_mounted","id":"s","variant":1}"#)), &host).unwrap();
        let (journal, snapshot) = (store.journal_path("s"), store.snapshot_path("s"));
        assert_eq!((descriptors_open_on(&journal), descriptors_open_on(&snapshot)), (0, 0), "after appends");
        store.flush("s", &host).unwrap();
        assert_eq!((descriptors_open_on(&journal), descriptors_open_on(&snapshot)), (0, 0), "after a flush");
        fs::remove_file(&journal).unwrap();
        fs::remove_file(&snapshot).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
        assert_snapshot_file_current(&mut store, "s", &host);
    }

    #[test]
    fn invalid_ids_are_refused_before_any_path_is_built() {
        let root = temp_root("ids");
        let host = TestHost(0.0);
        let mut store = Store::open(&root, false).unwrap();
        for bad in ["../x", "a/b", "", "a\0b", &"x".repeat(129)] {
            let err = store.append(bad, &mut Some(event(r#"{"type":"x"}"#)), &host).err().unwrap();
            assert_eq!(err.to_string(), format!("invalid session id: {}", bad));
        }
        assert!(store.list_ids().unwrap().is_empty());
    }

    /// An unlocked append landing between an append's stat and its write is
    /// neither lost from the returned snapshot nor claimed by a snapshot file
    /// that lacks it.
    #[test]
    fn an_unlocked_append_racing_an_append_is_not_lost() {
        let root = temp_root("race");
        let host = TestHost(1_893_456_000_000.0);
        let mut store = Store::open(&root, false).unwrap();
        store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":3}"#)), &host).unwrap();
        let journal = store.journal_path("s");
        let fired = std::rc::Rc::new(std::cell::Cell::new(false));
        let seen = fired.clone();
        store.before_write = Some(Box::new(move || {
            if !seen.replace(true) {
                append_raw(&journal, "{\"seq\":2,\"id\":\"s\",\"type\":\"variant_mounted\",\"ts\":\"2030-01-01T00:00:01.000Z\",\"event\":{\"type\":\"variant_mounted\",\"id\":\"s\",\"variant\":2}}\n");
            }
        }));
        let got = text(store.append("s", &mut Some(event(r#"{"type":"agent_phase","id":"s","phase":"picked_up"}"#)), &host).unwrap().snapshot);
        assert!(fired.get(), "the foreign line went in mid-append");
        assert!(got.contains(r#""mountedVariants":[2]"#), "the foreign event is in the returned snapshot: {got}");
        let journal_len = fs::metadata(store.journal_path("s")).unwrap().len();
        let file = fs::read_to_string(store.snapshot_path("s")).unwrap();
        assert!(file.contains(&format!("\"__journalBytes\": {journal_len},")), "the snapshot file names the whole journal: {file}");
        let mut fresh = Store::open(&root, false).unwrap();
        assert_eq!(text(fresh.flush("s", &host).unwrap().snapshot), got);
        let mut reader = Store::open(&root, false).unwrap();
        assert_eq!(text(reader.read("s", true, &host).unwrap().snapshot), got);
    }
}
