//! The snapshot file: a read cache other processes use, never the truth.
//!
//! Its bytes are `JSON.stringify({ ...snapshot, __journalBytes, __nextSeq },
//! null, 2) + '\n'`, as the old module writes them. It may be trusted only
//! when `__journalBytes` equals the journal's size right now: the journal is
//! append-only, so an equal size means no event landed since it was written.
//! Readers in other processes must see the old file or the new one, never a
//! mix. The cheap way that guarantees it is an in-place rewrite under a write
//! lease (see `sys::write_lease`): granted only when nobody has the file
//! open, and holding off any open until the write is done. When the lease is
//! refused (a reader has the file open), the file must shrink (which would
//! take a second syscall), or leases are unavailable (macOS, Windows), the new
//! text goes to a staged file that is renamed over the old one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Context, FsError};
use crate::js::json;
use crate::sys;
use crate::session::reducer::base_snapshot;
use crate::js::value::{is_integer, JsStr, Object, Value};

const META_JOURNAL_BYTES: &str = "__journalBytes";
const META_NEXT_SEQ: &str = "__nextSeq";

/// The exact text written for a snapshot.
pub fn render(snapshot: &Object, journal_bytes: i64, next_seq: f64) -> String {
    // The bookkeeping keys go last, as `{ ...snapshot, __journalBytes, __nextSeq }`
    // puts them: render the snapshot and reopen its closing brace rather than
    // copying the whole snapshot to add two keys.
    let mut text = json::stringify_pretty_object(snapshot);
    let has_members = text.len() > 2;
    text.truncate(text.len().saturating_sub(if has_members { 2 } else { 1 }));
    text.push_str(if has_members { ",\n  \"" } else { "\n  \"" });
    text.push_str(META_JOURNAL_BYTES);
    text.push_str("\": ");
    json::write_number(&mut text, journal_bytes as f64);
    text.push_str(",\n  \"");
    text.push_str(META_NEXT_SEQ);
    text.push_str("\": ");
    json::write_number(&mut text, next_seq);
    text.push_str("\n}\n");
    text
}

/// Writes the snapshot file. `open` is the descriptor kept from this
/// process's last write of the same file, if any (see [`OpenSnapshot`] for
/// when it is used); it holds the descriptor to keep for the next write
/// when this returns.
pub fn write(path: &Path, snapshot: &Object, journal_bytes: i64, next_seq: f64, open: &mut Option<OpenSnapshot>) -> Result<(), FsError> {
    let text = render(snapshot, journal_bytes, next_seq);
    if rewrite_in_place(path, text.as_bytes(), open)? {
        return Ok(());
    }
    // The rename replaces the file a kept descriptor refers to.
    *open = None;
    let mut staged = sys::StagedFile::create(path)?;
    staged.write_all(text.as_bytes()).at("write", staged.path())?;
    staged.commit()
}

/// The crash-safe variant for `durable` stores: the new text is staged,
/// fsynced and renamed over, so after a power loss the file is the old
/// version or the new one, never pages of both.
pub fn write_durable(path: &Path, snapshot: &Object, journal_bytes: i64, next_seq: f64) -> Result<(), FsError> {
    let text = render(snapshot, journal_bytes, next_seq);
    let mut staged = sys::StagedFile::create(path)?;
    staged.write_all(text.as_bytes()).at("write", staged.path())?;
    staged.sync_data().at("fsync", staged.path())?;
    staged.commit()
}

/// The snapshot file held open between writes. Opening and closing it costs
/// a path lookup and a file allocation per append, about a tenth of one. A
/// held descriptor is written only while its file is still linked: one
/// renamed over (by a store that could not rewrite in place) or deleted is
/// reopened by path. That check is an `fstat`, not a `stat` of the path
/// (half the cost): the file is a cache, so one moved away whole would at
/// worst be refreshed where it went while readers replay the journal, and
/// the store drops it anyway once the journal's path names another file
/// (as when the directory moved).
pub struct OpenSnapshot {
    file: File,
}

enum InPlace {
    Written,
    /// The file is no longer linked where it was.
    Stale,
    /// Another process has the file open, or the new text is shorter.
    Refused,
}

impl OpenSnapshot {
    fn open(path: &Path) -> Option<OpenSnapshot> {
        Some(OpenSnapshot { file: OpenOptions::new().write(true).open(path).ok()? })
    }

    fn rewrite(&self, path: &Path, bytes: &[u8]) -> Result<InPlace, FsError> {
        let Ok(_lease) = sys::write_lease(&self.file) else { return Ok(InPlace::Refused) };
        // Under the lease nobody can open the file, so its size holds until
        // the write is done; a rename over it could still unlink it.
        let m = sys::FileInfo::of(&self.file).at("fstat", path)?;
        if m.links == 0 {
            return Ok(InPlace::Stale);
        }
        // Bytes past the new end would stay: shrinking takes the rename.
        if !m.is_file || m.len > bytes.len() as u64 {
            return Ok(InPlace::Refused);
        }
        sys::write_all_at(&self.file, bytes, 0).at("write", path)?;
        Ok(InPlace::Written)
    }
}

/// `Ok(false)` when the in-place path does not apply and the caller must
/// stage and rename instead. `open` as for [`write`]: a descriptor that no
/// longer names the file is replaced by a fresh one, kept if it was written.
pub(crate) fn rewrite_in_place(path: &Path, bytes: &[u8], open: &mut Option<OpenSnapshot>) -> Result<bool, FsError> {
    if let Some(held) = open.as_ref() {
        match held.rewrite(path, bytes)? {
            InPlace::Written => return Ok(true),
            InPlace::Refused => return Ok(false),
            InPlace::Stale => *open = None,
        }
    }
    let Some(fresh) = OpenSnapshot::open(path) else { return Ok(false) };
    let written = matches!(fresh.rewrite(path, bytes)?, InPlace::Written);
    if written {
        *open = Some(fresh);
    }
    Ok(written)
}

/// A session's snapshot as a store holds it.
#[derive(Clone, Debug)]
pub enum Snapshot {
    /// The value model the reducer works on.
    Model(Object),
    /// A snapshot file's text that is the snapshot as it stands, for V8 to
    /// parse: a read that changes nothing need not build the model at all.
    Text(SnapshotText),
}

#[derive(Clone, Debug)]
pub struct SnapshotText {
    /// JSON text of exactly the snapshot object (bookkeeping keys cut out),
    /// validated against `JSON.parse`'s grammar.
    pub json: String,
    /// Its `phase` is one of the completed phases.
    pub completed: bool,
}

impl Snapshot {
    pub fn is_completed(&self) -> bool {
        match self {
            Snapshot::Model(o) => crate::session::reducer::is_completed(o.get("phase").unwrap_or(&crate::js::value::UNDEFINED)),
            Snapshot::Text(t) => t.completed,
        }
    }

    /// The value model, parsing the text if need be; `None` only if this
    /// crate's parser refuses text the skim accepted (which would be a bug;
    /// the caller then re-derives from the journal).
    pub fn into_model(self, id: &JsStr) -> Option<Object> {
        match self {
            Snapshot::Model(o) => Some(o),
            Snapshot::Text(t) => match json::parse(&t.json).ok()? {
                Value::Object(o) => Some(over_base(id, o)),
                _ => None,
            },
        }
    }
}

/// The snapshot a file provably describes for a journal of `journal_bytes`
/// bytes, as `{ ...baseSnapshot(id), ...file }` minus the bookkeeping keys,
/// with its `__nextSeq`. `None` sends the caller to replay.
pub fn hydrate(path: &Path, id: &JsStr, journal_bytes: u64) -> Option<(Snapshot, f64)> {
    READ_BUFFER.with_borrow_mut(|bytes| {
        sys::read_file_into(path, bytes).ok()?;
        let parsed = match std::str::from_utf8(bytes).ok().and_then(|text| skim_canonical(text, id, journal_bytes)) {
            Some((text, next_seq)) => Some((Snapshot::Text(text), next_seq)),
            None => parse_over_base(bytes, id, journal_bytes).map(|(o, n)| (Snapshot::Model(o), n)),
        };
        // A huge file must not pin its buffer for the life of the thread.
        if bytes.capacity() > READ_BUFFER_KEEP {
            *bytes = Vec::new();
        }
        parsed
    })
}

/// Snapshot files are small and a fresh listing reads one per session: one
/// buffer, reused, spares an allocation and the page faults of a new one.
const READ_BUFFER_KEEP: usize = 256 * 1024;
thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(16 * 1024));
}

/// The fast path of [`hydrate`], for a file as either module writes it: the
/// base keys first and in order, no key twice, the two bookkeeping keys
/// last. Then `{ ...baseSnapshot(id), ...file }` minus those keys is the text
/// up to the last snapshot member, closed. Anything else (including a
/// `__proto__` key anywhere, which a JS object treats specially) takes the
/// full parser.
fn skim_canonical(text: &str, id: &JsStr, journal_bytes: u64) -> Option<(SnapshotText, f64)> {
    let members = crate::js::json::skim::top_level_members(text)?;
    let keys = crate::session::reducer::BASE_KEYS;
    let n = members.len();
    if n < keys.len() + 2 || text.contains("__proto__") {
        return None;
    }
    let (snapshot, meta) = members.split_at(n - 2);
    let value = |m: &crate::js::json::skim::Member| &text[m.value.clone()];
    let starts_with_base = snapshot.iter().zip(keys.iter()).all(|(m, want)| m.key == *want);
    if !starts_with_base || meta[0].key != META_JOURNAL_BYTES || meta[1].key != META_NEXT_SEQ {
        return None;
    }
    // The base and bookkeeping keys are distinct; only keys beyond them can
    // repeat one (and JSON.parse would keep the last value at the first place).
    let has_extra_keys = n > keys.len() + 2;
    if has_extra_keys && members.iter().enumerate().any(|(i, m)| members[..i].iter().any(|o| o.key == m.key)) {
        return None;
    }
    if plain_number(value(&meta[0]))? != journal_bytes as f64 {
        return None;
    }
    let next_seq = plain_number(value(&meta[1]))?;
    if next_seq.trunc() != next_seq {
        return None;
    }
    // `id` and `phase` are the first two base keys; an escaped string in
    // either is left to the full parser.
    if plain_string(value(&snapshot[0])) != Some(id.as_str()?) {
        return None;
    }
    let phase = value(&snapshot[1]);
    let completed = match plain_string(phase) {
        Some(p) => crate::session::reducer::COMPLETED_PHASES.contains(&p),
        None if phase.starts_with('"') => return None,
        None => false,
    };
    let last = snapshot.last()?.value.end;
    let mut json = String::with_capacity(last + 2);
    json.push_str(&text[..last]);
    json.push_str("\n}");
    Some((SnapshotText { json, completed }, next_seq))
}

/// The text of a JSON string value without escapes; `None` for any other value.
fn plain_string(json: &str) -> Option<&str> {
    json.strip_prefix('"')?.strip_suffix('"').filter(|t| !t.contains('\\'))
}

/// A JSON number the skim accepted, as `JSON.parse` reads it.
fn plain_number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

fn parse_over_base(bytes: &[u8], id: &JsStr, journal_bytes: u64) -> Option<(Object, f64)> {
    let text = String::from_utf8_lossy(bytes);
    let Value::Object(mut parsed) = json::parse(&text).ok()? else { return None };
    match parsed.get(META_JOURNAL_BYTES) {
        Some(Value::Number(n)) if *n == journal_bytes as f64 => {}
        _ => return None,
    }
    let next_seq = parsed.get(META_NEXT_SEQ).filter(|v| is_integer(v))?.to_number();
    parsed.remove(META_JOURNAL_BYTES);
    parsed.remove(META_NEXT_SEQ);
    if !parsed.get("id").is_some_and(|v| matches!(v, Value::String(s) if s == id)) {
        return None;
    }
    Some((over_base(id, parsed), next_seq))
}

/// `{ ...baseSnapshot(id), ...parsed }`. A file written by either module
/// starts with exactly the base keys, in order, and then the merge is the
/// parsed object itself.
fn over_base(id: &JsStr, parsed: Object) -> Object {
    let keys = crate::session::reducer::BASE_KEYS;
    let starts_with_base = parsed.len() >= keys.len() && parsed.iter().zip(keys.iter()).all(|((k, _), want)| k.eq_str(want));
    if starts_with_base {
        return parsed;
    }
    let mut snapshot = base_snapshot(id);
    for (k, v) in parsed.iter() {
        snapshot.set_js(k.clone(), v.clone());
    }
    snapshot
}
