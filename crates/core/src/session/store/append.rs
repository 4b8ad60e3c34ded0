//! `appendEvent`: one line added to a session's journal, under the
//! journal's exclusive lock, then the snapshot.
//!
//! The contract: an append fails only when its line was not written, and
//! then no file changed (a journal this call created, or copied from the
//! legacy directory, is removed again). Once the line is written, nothing
//! the store does afterwards turns the call into an error: a snapshot file
//! that cannot be replaced stays as it was (readers do not trust it, since
//! it names an earlier journal size), a status that cannot be read leaves
//! the state to be derived again by the next read, and a sweep never
//! reports. Errors the caller's own code raises while the event is applied
//! (a getter, `toJSON`, a coercion V8 refuses) are thrown as the old module
//! throws them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cache::{Changed, Delta, Derived, FileKey, RenderFor};
use super::error::state_missing;
use super::{Store, StoreError, View};
use crate::js::{json, JsError, JsStr, Object, Value};
use crate::session::journal::{self, Locking};
use crate::session::host::{Host, Refusal};
use crate::session::reducer::{apply_appended, entry_seq};
use crate::session::snapshot::Snapshot;
use crate::session::snapshot_file::Cached;
use crate::sys::{self, Context, File, FsError};

/// How long an append waits for another writer's lock on the journal. An
/// append holds it for microseconds (a durable one for an fsync). A holder
/// that keeps it longer is stopped (SIGSTOP, Ctrl-Z, a frozen cgroup) or
/// hung: the append then goes ahead without the lock, as the old module's
/// appends always do, and the store remembers the journal as stuck so that
/// its next appends and reads do not wait again until they get the lock.
/// Nothing is lost: the stopped writer appends (O_APPEND) when it resumes,
/// and a line that lands between this append's stat and its write is
/// caught by the size check in `finish`; the cost is at worst one
/// duplicate `seq`, what every unlocked append of the old module risks.
/// See RELIABILITY.md.
const JOURNAL_LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// How many times the journal is opened again when the file that was
/// opened has been removed meanwhile (another process's append created it
/// and then failed before its line: see [`Journal::drop`]).
const REOPENS: usize = 8;

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

/// A session's journal, open for one append, and locked (unless its
/// holder is stuck: see [`JOURNAL_LOCK_PATIENCE`]) until it is dropped.
pub(super) struct Journal {
    pub file: File,
    pub path: PathBuf,
    /// Its status once locked (after a legacy journal was copied in).
    pub before: FileKey,
    /// `Some(len)` when this call made the file (empty, or holding a copy
    /// of `len` bytes of the legacy journal): unless [`Journal::keep`] is
    /// called, it is removed again when dropped.
    pub made: Option<u64>,
}

impl Journal {
    /// The line is in: the file stays, whatever happens next.
    fn keep(&mut self) {
        self.made = None;
    }

    /// Cuts `line_len` bytes written by this call off the end again, if
    /// they are still the file's last (an unlocked writer may have appended
    /// since); whether it did.
    fn take_back(&self, line_len: usize) -> bool {
        let before = self.before.size as u64;
        self.file.info().is_ok_and(|info| info.len == before + line_len as u64) && self.file.set_len(before).is_ok()
    }
}

impl Drop for Journal {
    /// Removes a journal this call made, when its line never went in, so a
    /// failed append leaves no file behind: only while the name still is
    /// this file and nothing else was written to it. It is still locked, so
    /// any process that opened it meanwhile finds it unlinked once it has
    /// the lock, and opens the name again.
    fn drop(&mut self) {
        let Some(len) = self.made else { return };
        let ours = self.file.info().ok().filter(|info| info.len == len).map(|info| info.id);
        if ours.is_some() && sys::FileInfo::of_path(&self.path).ok().map(|info| info.id) == ours {
            let _ = sys::remove_file(&self.path);
        }
    }
}

impl Store {
    /// `appendEvent` of an event the caller has already checked and
    /// normalized (see [`NewEvent`]). The event is taken once its line is
    /// written: after [`StoreError::Unanswered`] it is still there when the
    /// line is not, and when it is gone the line is in the journal and the
    /// caller finishes with a [`Store::flush`] (which derives the session
    /// from the journal and writes the snapshot file, as the append would).
    pub fn append(&mut self, id: &str, event: &mut Option<NewEvent>, host: &dyn Host) -> Result<View<'_>, StoreError> {
        self.writable("appendEvent")?;
        let id = super::safe_session_id(id)?;
        self.sessions.trim();
        let mut journal = self.lock_journal(id)?;
        let pending = event.as_ref().ok_or_else(state_missing)?;
        let line = self.line_for(id, &journal, pending, host)?;
        #[cfg(test)]
        if let Some(hook) = &self.before_write {
            hook();
        }
        write_line(&journal.file, &journal.path, &line, journal.before.size as u64)?;
        if self.durable {
            if let Err(e) = self.sync(&journal) {
                if journal.take_back(line.len()) {
                    return Err(e.into());
                }
            }
        }
        journal.keep();
        let written = event.take().ok_or_else(state_missing)?;
        self.finish(id, journal, line.len(), written, host)?;
        self.view(id)
    }

    /// Everything before the write, which may fail: the session brought up
    /// to date under the lock, its questions for V8 answered, the line.
    fn line_for(&mut self, id: &str, journal: &Journal, event: &NewEvent, host: &dyn Host) -> Result<String, StoreError> {
        if journal.made == Some(0) {
            // A journal this call made, empty: nothing to read.
            self.sessions.entry(id).set(Derived { snapshot: Cached::Model(Box::new(Snapshot::base(&JsStr::from(id)))), next_seq: 1.0, key: journal.before.clone(), clean_tail: true, holds_host: false });
        } else {
            self.ensure_current(id, journal.before.clone(), true, Locking::AlreadyExclusive, host)?;
            self.ensure_model(id, &journal.before, Locking::AlreadyExclusive, host)?;
        }
        let derived = self.sessions.get(id).and_then(|s| s.derived.as_ref()).ok_or_else(state_missing)?;
        let seq = derived.next_seq;
        let known_clean = derived.clean_tail && derived.key == journal.before;
        let torn = !known_clean && !journal::ends_with_newline(&journal.file, journal.before.size as u64).at("read", &journal.path)?;
        self.ask_before_writing(id, seq, event, host)?;
        entry_line(seq, event, torn)
    }

    /// fsync of the journal, and of its directory when this call made it.
    fn sync(&self, journal: &Journal) -> Result<(), FsError> {
        journal.file.sync_data().at("fsync", &journal.path)?;
        if journal.made.is_some() {
            if let Some(dir) = journal.path.parent() {
                sys::sync_dir(dir).at("fsync", dir)?;
            }
        }
        Ok(())
    }

    /// Everything after the write, which never fails the call (see the
    /// module's contract) but for the caller's own code.
    fn finish(&mut self, id: &str, journal: Journal, line_len: usize, mut written: NewEvent, host: &dyn Host) -> Result<(), StoreError> {
        self.appends += 1;
        let held = written.held.take();
        let seq = self.sessions.get(id).and_then(|s| s.derived.as_ref()).map_or(1.0, |d| d.next_seq);
        let entry = entry_value(seq, id, written);
        let after = match journal.file.info() {
            Ok(info) => FileKey::from_info(journal.path.clone(), &info),
            Err(_) => FileKey::unknown(journal.path.clone()),
        };
        self.apply_own_append(id, &entry, held.as_ref(), after.clone(), host)?;
        if after.exists() && after.size != journal.before.size + line_len as i64 {
            // A writer that takes no lock (the old module) appended between
            // our stat and our write. The state just built lacks its line but
            // would be keyed on a size that includes it, and the snapshot file
            // would claim it: derive from the journal instead, or, should
            // that fail, keep the state keyed on no journal, so the next
            // read derives it.
            self.rederive_after_race(id, after, host);
        }
        drop(journal);
        let _ = self.persist_snapshot(id, RenderFor::Append);
        if self.appends.is_multiple_of(super::persist::SWEEP_EVERY) {
            self.sweep_staged();
        }
        Ok(())
    }

    fn rederive_after_race(&mut self, id: &str, after: FileKey, host: &dyn Host) {
        let Some(session) = self.sessions.get_mut(id) else { return };
        let Some(mut own) = session.derived.take() else { return };
        session.replay = None;
        if self.ensure_current(id, after.clone(), false, Locking::AlreadyExclusive, host).is_ok() {
            return;
        }
        own.key = FileKey::unknown(after.path);
        if let Some(session) = self.sessions.get_mut(id) {
            session.set(own);
        }
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
        let tried = apply_appended(&mut Snapshot::clone(model), &entry_value(seq, id, trial), event.held.as_ref(), host);
        if host.used_placeholders() || tried == Err(Refusal::Unanswered) {
            return Err(StoreError::Unanswered);
        }
        host.rewind();
        Ok(())
    }

    /// The session's journal, made if need be (copying a legacy journal
    /// into it), exclusively locked unless its holder is stuck (see
    /// [`JOURNAL_LOCK_PATIENCE`]). A journal this call made is removed
    /// again if anything fails before its line is written (see
    /// [`Journal::drop`]).
    fn lock_journal(&mut self, id: &str) -> Result<Journal, StoreError> {
        let path = self.journal_path(id);
        for _ in 0..REOPENS {
            let (mut journal, info) = match open_existing_journal(&path)? {
                Some(opened) => {
                    let (file, info, held) = opened.lock(&path, self.patience(&path))?;
                    self.note_lock(&path, held);
                    (Journal { file, before: FileKey::missing(path.clone()), path: path.clone(), made: None }, info)
                }
                None => match create_journal(&path)? {
                    Some(file) => {
                        // Held by the journal from here, so that a failure
                        // below removes the file again.
                        let journal = Journal { file, before: FileKey::missing(path.clone()), path: path.clone(), made: Some(0) };
                        let info = self.lock_made(&journal)?;
                        (journal, info)
                    }
                    None => continue,
                },
            };
            if info.links == 0 {
                // Removed by another append that made it and then failed:
                // not ours to remove again.
                journal.made = None;
                continue;
            }
            journal.before = FileKey::from_info(path.clone(), &info);
            if journal.made.is_some() {
                self.adopt_legacy_journal(id, &mut journal)?;
            }
            return Ok(journal);
        }
        Err(FsError::new(std::io::Error::from(std::io::ErrorKind::NotFound), "open", &path).into())
    }

    /// How long to wait for the lock of the journal at `path`: once, when
    /// its holder is known to be stuck, else [`JOURNAL_LOCK_PATIENCE`].
    fn patience(&self, path: &Path) -> Duration {
        if self.stuck.contains(path) { Duration::ZERO } else { JOURNAL_LOCK_PATIENCE }
    }

    /// Remembers a journal whose holder kept its lock past the patience as
    /// stuck (its appends then try the lock once, its reads take none), and
    /// forgets it once the lock is had again.
    fn note_lock(&mut self, path: &Path, held: sys::Held) {
        match held {
            // Mostly none is stuck, and then the path is not even hashed.
            sys::Held::Yes if self.stuck.is_empty() => {}
            sys::Held::Yes => {
                self.stuck.remove(path);
            }
            sys::Held::TimedOut => {
                self.stuck.insert(path.to_path_buf());
            }
        }
    }

    /// Locks a journal this call just made, at once: nobody can be holding
    /// it but a writer that opened it in the instant since, and then this
    /// append goes on without the lock, as after a stuck holder. Its status,
    /// read under the lock.
    fn lock_made(&mut self, journal: &Journal) -> Result<sys::FileInfo, StoreError> {
        let held = journal.file.lock_or_time_out(&journal.path, Duration::ZERO)?;
        self.note_lock(&journal.path, held);
        Ok(journal.file.info().at("fstat", &journal.path)?)
    }

    fn apply_own_append(&mut self, id: &str, entry: &Value, held: Option<&Value>, after: FileKey, host: &dyn Host) -> Result<(), StoreError> {
        let session = self.sessions.get_mut(id).ok_or_else(state_missing)?;
        let mut derived = session.derived.take().ok_or_else(state_missing)?;
        let Cached::Model(model) = &mut derived.snapshot else {
            return Err(state_missing());
        };
        model.clear_changes();
        let applied = apply_appended(model, entry, held, host);
        if host.used_placeholders() {
            // The line is in the journal; the state built on placeholders
            // is dropped, and the caller derives it from the journal.
            session.replay = None;
            return Err(StoreError::Unanswered);
        }
        if let Err(refusal) = applied {
            // The line is in the journal; like the old module, report the
            // error (or, with a question still open, ask and derive the
            // state from the journal) and let the next read re-derive.
            session.replay = None;
            return Err(refusal.into());
        }
        let (from, changes) = (session.version, model.changes());
        let seq = entry_seq(entry).unwrap_or(derived.next_seq);
        derived.next_seq = seq + 1.0;
        derived.key = after;
        derived.clean_tail = true;
        derived.holds_host = derived.holds_host || entry.holds_host() || held.is_some();
        session.set(derived);
        session.delta = changes.map(|fields| Delta { from, to: session.version, changed: Changed::Fields(fields) });
        Ok(())
    }
}

/// The journal opened for appending, or `None` when nothing is at its name.
/// Never through a link (`ELOOP`, dangling or not: an append must not
/// create or extend a file elsewhere), and only a regular file once locked
/// (see `sys::Appending::lock`).
fn open_existing_journal(path: &Path) -> Result<Option<sys::Appending>, FsError> {
    match sys::open_to_append(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FsError::new(e, "open", path)),
    }
}

/// A new journal, or `None` when another process made one first.
fn create_journal(path: &Path) -> Result<Option<File>, FsError> {
    match sys::create_to_append(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
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
    while written < bytes.len() {
        let err = match file.write(&bytes[written..]) {
            Ok(0) => std::io::Error::from(std::io::ErrorKind::WriteZero),
            Ok(n) => {
                written += n;
                continue;
            }
            Err(e) => e,
        };
        if written > 0 && file.info().is_ok_and(|m| m.len == size_before + written as u64) {
            let _ = file.set_len(size_before);
        }
        return Err(FsError::new(err, "write", path));
    }
    Ok(())
}

/// `JSON.stringify({ seq, id, type, ts, event }) + '\n'`, after a `\n` that
/// closes a torn fragment when the journal does not end with one.
fn entry_line(seq: f64, event: &NewEvent, torn: bool) -> Result<String, StoreError> {
    let rest = event.entry.strip_prefix(SEQ_PLACEHOLDER).ok_or_else(|| JsError::error("quiver-live-native: the entry text must start with {\"seq\":0,"))?;
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
