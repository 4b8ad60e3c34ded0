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
//! refused (a reader has the file open) or leases are unavailable (macOS,
//! Windows), the new text goes to a staged file that is renamed over the old
//! one.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use crate::sys::{Context, FsError};
use crate::js::json;
use crate::js::ops::is_integer;
use crate::js::{JsStr, Value};
use crate::session::schema::{Field, COMPLETED_PHASES, FIELDS, FIELD_KEYS};
use crate::session::snapshot::Snapshot;
use crate::sys;

const META_JOURNAL_BYTES: &str = "__journalBytes";
const META_NEXT_SEQ: &str = "__nextSeq";

/// How deeply a snapshot may nest and still be written without asking V8.
/// The old module's `JSON.stringify` of the snapshot throws V8's RangeError
/// past a depth that depends on the stack its caller left (about 4,000
/// levels on a main thread, 16,000 in a worker): a deeper snapshot's file
/// is rendered by V8 itself (see `Store::awaited_render`), so it fails
/// exactly where the old module's write would. Below this every V8
/// stringifies it.
pub const DEPTH_WITHOUT_CHECK: usize = 1_000;

/// The exact text written for a snapshot, or `None` when it nests past
/// [`DEPTH_WITHOUT_CHECK`].
pub fn render(snapshot: &Snapshot, journal_bytes: i64, next_seq: f64) -> Option<String> {
    // The bookkeeping keys go last, as `{ ...snapshot, __journalBytes, __nextSeq }`
    // puts them: render the snapshot and reopen its closing brace rather than
    // copying the whole snapshot to add two keys.
    let mut text = json::stringify_members_within(snapshot.members(), Some(2), DEPTH_WITHOUT_CHECK)?;
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
    Some(text)
}

/// Writes the snapshot file's text (see [`render`]): in place when the
/// kernel grants the lease, else staged and renamed over.
pub fn write(path: &Path, text: &str) -> Result<(), FsError> {
    if rewrite_in_place(path, text.as_bytes())? {
        return Ok(());
    }
    let mut staged = sys::StagedFile::create(path)?;
    staged.write_all(text.as_bytes()).at("write", staged.path())?;
    staged.commit()
}

/// The crash-safe variant for `durable` stores: the new text is staged,
/// fsynced and renamed over, so after a power loss the file is the old
/// version or the new one, never pages of both.
pub fn write_durable(path: &Path, text: &str) -> Result<(), FsError> {
    let mut staged = sys::StagedFile::create(path)?;
    staged.write_all(text.as_bytes()).at("write", staged.path())?;
    staged.sync_data().at("fsync", staged.path())?;
    staged.commit()
}

/// Rewrites the file in place under a write lease, which the kernel grants
/// only while nobody else has the file open and which holds off any open
/// until it is released: readers see the old text or the new one, and the
/// file keeps its blocks (replacing it costs a block freed and one
/// allocated, a millisecond on a disk mounted with `discard`). A shorter
/// text is written and the file cut to it, both under the lease.
/// `Ok(false)` when that does not apply (no file yet, or the lease refused)
/// and the caller must stage and rename instead.
fn rewrite_in_place(path: &Path, bytes: &[u8]) -> Result<bool, FsError> {
    let Ok(file) = sys::open_to_rewrite(path) else { return Ok(false) };
    let Ok(_lease) = sys::write_lease(&file) else { return Ok(false) };
    let m = sys::FileInfo::of(&file).at("fstat", path)?;
    if !m.is_file {
        return Ok(false);
    }
    let written = sys::write_all_at(&file, bytes, 0).at("write", path).and_then(|()| {
        if m.len > bytes.len() as u64 {
            file.set_len(bytes.len() as u64).at("ftruncate", path)?;
        }
        Ok(())
    });
    if written.is_err() {
        // Part of the new text now lies over the old (a disk that filled
        // while the file grew): no reader may see it. Still under the lease,
        // so nobody has it open; removed, readers of either module replay
        // the journal, as they do when there is no snapshot file. Only if
        // the path still names this file (a rename may have replaced it).
        if sys::FileInfo::of_path(path).is_ok_and(|now| now.id == m.id) {
            let _ = std::fs::remove_file(path);
        }
    }
    written.map(|()| true)
}


/// A session's snapshot as a store holds it.
#[derive(Clone, Debug)]
pub enum Cached {
    /// The model the reducer works on (boxed: a store holding many sessions
    /// read from their files keeps only their text).
    Model(Box<Snapshot>),
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
    /// Where each member's key (between its quotes) and value are in `json`.
    members: Vec<(Range<usize>, Range<usize>)>,
}

impl SnapshotText {
    /// The text of `s` with `extra` appended to the array in `field`, when
    /// `JSON.parse` of it gives that very snapshot back (nothing JSON drops
    /// or changes, no key JSON.parse or the skim treats apart); `None` when
    /// not, or when `field` holds no array.
    pub fn of_model_with(s: &Snapshot, field: Field, extra: impl Iterator<Item = Value>) -> Option<SnapshotText> {
        if !matches!(s.get(field), Value::Array(_)) || !s.members().all(|(_, v)| survives_json(v)) {
            return None;
        }
        let mut json = json::stringify_members(s.members(), None);
        let mut extra = extra.peekable();
        if extra.peek().is_some() {
            json = append_to_array(&json, FIELD_KEYS[field as usize].as_str()?, extra)?;
        }
        if json.contains("__proto__") {
            return None;
        }
        let at = |key: &str| key.as_ptr() as usize - json.as_ptr() as usize;
        let members = json::skim::top_level_members(&json)?.iter().map(|m| (at(m.key)..at(m.key) + m.key.len(), m.value.clone())).collect();
        Some(SnapshotText { completed: s.is_completed(), members, json })
    }

    /// `{ ...members of self whose value text differs from before's }`, when
    /// both hold the same keys in the same order: then the snapshot this
    /// text parses to is the one `before` parsed to with those members
    /// replaced.
    pub fn changed_since(&self, before: &SnapshotText) -> Option<String> {
        if self.members.len() != before.members.len() {
            return None;
        }
        let mut out = String::from("{");
        for ((key, value), (was_key, was_value)) in self.members.iter().zip(&before.members) {
            if self.json[key.clone()] != before.json[was_key.clone()] {
                return None;
            }
            if self.json[value.clone()] != before.json[was_value.clone()] {
                if out.len() > 1 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(&self.json[key.clone()]);
                out.push_str("\":");
                out.push_str(&self.json[value.clone()]);
            }
        }
        out.push('}');
        Some(out)
    }
}

impl Cached {
    pub fn is_completed(&self) -> bool {
        match self {
            Cached::Model(s) => s.is_completed(),
            Cached::Text(t) => t.completed,
        }
    }

    /// The model, parsing the text if need be; `None` only if this crate's
    /// parser refuses text the skim accepted (which would be a bug; the
    /// caller then re-derives from the journal).
    pub fn into_model(self, id: &JsStr) -> Option<Snapshot> {
        match self {
            Cached::Model(s) => Some(*s),
            Cached::Text(t) => json::parse(&t.json).ok()?.into_object().map(|o| Snapshot::over_base(id, &o)),
        }
    }
}

/// `text` (one JSON object) with `items` appended to the array held by its
/// top-level `key`; `None` if an item has no exact JSON form.
fn append_to_array(text: &str, key: &str, items: impl Iterator<Item = Value>) -> Option<String> {
    let array = json::skim::top_level_members(text)?.into_iter().find(|m| m.key == key)?.value;
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..array.end - 1]);
    let mut first = array.len() == 2;
    for item in items {
        if !survives_json(&item) {
            return None;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&json::stringify(&item)?);
    }
    out.push_str(&text[array.end - 1..]);
    Some(out)
}

/// Whether `JSON.parse(JSON.stringify(v))` is `v` again: no `undefined`,
/// host value, NaN, infinity or -0 anywhere in it.
fn survives_json(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Undefined | Value::Host(_) => return false,
            Value::Number(n) if !n.is_finite() || (*n == 0.0 && n.is_sign_negative()) => return false,
            Value::Array(items) => stack.extend(items),
            Value::Object(o) => stack.extend(o.iter().map(|(_, v)| v)),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    true
}

/// The snapshot a file provably describes for a journal of `journal_bytes`
/// bytes, as `{ ...baseSnapshot(id), ...file }` minus the bookkeeping keys,
/// with its `__nextSeq`. `None` sends the caller to replay.
pub fn hydrate(path: &Path, id: &JsStr, journal_bytes: u64) -> Option<(Cached, f64)> {
    READ_BUFFER.with_borrow_mut(|bytes| {
        sys::read_file_into(path, bytes).ok()?;
        let parsed = match std::str::from_utf8(bytes).ok().and_then(|text| skim_canonical(text, id, journal_bytes)) {
            Some((text, next_seq)) => Some((Cached::Text(text), next_seq)),
            None => parse_over_base(bytes, id, journal_bytes).map(|(s, n)| (Cached::Model(Box::new(s)), n)),
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
    let members = json::skim::top_level_members(text)?;
    let n = members.len();
    if n < FIELDS.len() + 2 || text.contains("__proto__") {
        return None;
    }
    let (snapshot, meta) = members.split_at(n - 2);
    let value = |m: &json::skim::Member| &text[m.value.clone()];
    let starts_with_base = snapshot.iter().zip(FIELDS.iter()).all(|(m, field)| m.key == field.name);
    if !starts_with_base || meta[0].key != META_JOURNAL_BYTES || meta[1].key != META_NEXT_SEQ {
        return None;
    }
    // The base and bookkeeping keys are distinct; only keys beyond them can
    // repeat one (and JSON.parse would keep the last value at the first place).
    let has_extra_keys = n > FIELDS.len() + 2;
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
        Some(p) => COMPLETED_PHASES.contains(&p),
        None if phase.starts_with('"') => return None,
        None => false,
    };
    let last = snapshot.last()?.value.end;
    let mut json = String::with_capacity(last + 2);
    json.push_str(&text[..last]);
    json.push_str("\n}");
    let at = |key: &str| key.as_ptr() as usize - text.as_ptr() as usize;
    let members = snapshot.iter().map(|m| (at(m.key)..at(m.key) + m.key.len(), m.value.clone())).collect();
    Some((SnapshotText { json, completed, members }, next_seq))
}

/// The text of a JSON string value without escapes; `None` for any other value.
fn plain_string(json: &str) -> Option<&str> {
    json.strip_prefix('"')?.strip_suffix('"').filter(|t| !t.contains('\\'))
}

/// A JSON number the skim accepted, as `JSON.parse` reads it.
fn plain_number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

fn parse_over_base(bytes: &[u8], id: &JsStr, journal_bytes: u64) -> Option<(Snapshot, f64)> {
    let text = String::from_utf8_lossy(bytes);
    let mut parsed = json::parse(&text).ok()?.into_object()?;
    match parsed.get(META_JOURNAL_BYTES) {
        Some(Value::Number(n)) if *n == journal_bytes as f64 => {}
        _ => return None,
    }
    let next_seq = match parsed.get(META_NEXT_SEQ) {
        Some(v @ Value::Number(n)) if is_integer(v) => *n,
        _ => return None,
    };
    parsed.remove(META_JOURNAL_BYTES);
    parsed.remove(META_NEXT_SEQ);
    if !parsed.get("id").is_some_and(|v| matches!(v, Value::String(s) if s == id)) {
        return None;
    }
    Some((Snapshot::over_base(id, &parsed), next_seq))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::snapshot::Snapshot;

    fn text_of(s: &Snapshot) -> SnapshotText {
        let rendered = render(s, 10, 2.0).unwrap();
        skim_canonical(&rendered, &JsStr::from("s"), 10).expect("a rendered snapshot is canonical").0
    }

    /// Two snapshot files with the same keys: only the members whose text
    /// differs, and parsing the before text with them laid over gives the
    /// after text's value. Different keys: no such object.
    #[test]
    fn changed_members_of_two_files_with_the_same_keys() {
        use crate::session::schema::Field;
        let before = Snapshot::base(&JsStr::from("s"));
        let mut after = before.clone();
        after.set(Field::Phase, Value::str("generate_requested"));
        after.set(Field::ExpectedVariants, Value::Number(3.0));
        let changed = text_of(&after).changed_since(&text_of(&before)).expect("same keys");
        assert_eq!(changed, r#"{"phase":"generate_requested","expectedVariants":3}"#);
        assert_eq!(text_of(&after).changed_since(&text_of(&after)).as_deref(), Some("{}"));
        let mut more = after.clone();
        more.set_other("message", Value::str("m"));
        assert!(text_of(&more).changed_since(&text_of(&after)).is_none(), "a key was added");
    }
}
