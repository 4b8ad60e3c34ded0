//! The snapshot file: a read cache other processes use, never the truth.
//!
//! Its bytes are `JSON.stringify({ ...snapshot, __journalBytes, __nextSeq },
//! null, 2) + '\n'`, as the old module writes them. It may be trusted only
//! when `__journalBytes` equals the journal's size right now: the journal is
//! append-only, so an equal size means no event landed since it was written.
//! Readers in other processes must see the old file or the new one, never a
//! mix, and must never wait for a writer: the new text goes to a staged file
//! that is renamed over the old one (see `sys::StagedFile`). An in-place
//! rewrite would need a lock or lease that readers wait on, and a writer
//! stopped while holding it (Ctrl-Z, a debugger) would stop them all.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::sys::{Context, FsError};
use crate::js::json;
use crate::js::{JsStr, Object, Value};
use crate::session::schema::{Field, COMPLETED_PHASES, FIELDS, FIELD_KEYS};
use crate::session::snapshot::{Member, Snapshot};
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

/// Writes the snapshot file's text (see [`render`]) to a file staged at
/// `staged` that then replaces `target`, so a reader sees the old file or
/// the new one. `durable`: the staged text is also fsynced before the
/// rename, so after a power loss the file is the old version or the new
/// one, never pages of both. `guard`: see [`sys::Guard`].
pub fn write(target: &Path, staged: PathBuf, text: &str, durable: bool, guard: sys::Guard) -> Result<(), FsError> {
    let staged = match sys::StagedFile::create(staged, target, guard) {
        Err(e) if e.code() == "EISDIR" => return Ok(()),
        other => other?,
    };
    staged.write_all(text.as_bytes()).at("write", target)?;
    if durable {
        staged.sync_data().at("fsync", target)?;
    }
    commit(staged)
}

/// Renames the staged file over the snapshot file's name. A directory at
/// that name cannot be replaced (`EISDIR`): the cache is then left
/// unwritten, as a file no reader trusts would be, and the append or flush
/// that wrote it goes on; readers derive the session from its journal.
fn commit(staged: sys::StagedFile) -> Result<(), FsError> {
    match staged.commit() {
        Err(e) if e.code() == "EISDIR" => Ok(()),
        other => other,
    }
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
        let survives = |m: &Member| match m {
            Member::Value(v) => survives_json(v),
            Member::Json(_) => true,
        };
        if !matches!(s.get(field), Value::Array(_)) || !s.members_or_json().all(|(_, m)| survives(&m)) {
            return None;
        }
        let texts: usize = s.members_or_json().map(|(_, m)| if let Member::Json(text) = m { text.len() } else { 0 }).sum();
        let mut json = stringify_members_or_json(s.members_or_json(), texts);
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

/// `JSON.stringify` of an object's members, each given as its value or as
/// its text already; for members that all survive JSON (`survives_json`).
fn stringify_members_or_json<'a>(members: impl Iterator<Item = (&'a JsStr, Member<'a>)>, texts_len: usize) -> String {
    // A snapshot renders to one or two kilobytes besides the texts it
    // copies: one allocation, not a string doubling its way up (and copying
    // a long text again).
    let mut out = String::with_capacity(2048 + texts_len);
    out.push('{');
    for (key, member) in members {
        if out.len() > 1 {
            out.push(',');
        }
        json::write_string(&mut out, key);
        out.push(':');
        match member {
            Member::Json(text) => out.push_str(text),
            Member::Value(v) => {
                json::write_to(&mut out, v);
            }
        }
    }
    out.push('}');
    out
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
        // Only a regular file at the name itself is read: a link, FIFO,
        // device or directory there is no cache this package or the old
        // module wrote, and the journal gives the same answer.
        sys::read_regular(path, sys::Links::Refuse, bytes, sys::MAX_TEXT_FILE).ok()?;
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
    // `id` and `phase` are the first two base keys; an escaped string in
    // either is left to the full parser, as is a number the skim cannot
    // read as JSON.parse would.
    let file_id = JsStr::from(plain_string(value(&snapshot[0]))?);
    let numbers = (plain_number(value(&meta[0]))?, plain_number(value(&meta[1]))?);
    let next_seq = trust_rule(Some(numbers.0), Some(numbers.1), Some(&file_id), id, journal_bytes).ok()?;
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
    let next_seq = trust(&parsed, id, journal_bytes).ok()?;
    parsed.remove(META_JOURNAL_BYTES);
    parsed.remove(META_NEXT_SEQ);
    Some((Snapshot::over_base(id, &parsed), next_seq))
}

/// A rule of the trust rule that a snapshot file breaks; the value is the
/// file's (`undefined` when the key is missing).
#[derive(Debug)]
pub enum Distrust {
    /// Not JSON.
    Unparsable,
    /// JSON, but not an object.
    NotObject,
    /// `__journalBytes` is not the journal's size.
    JournalBytes(Value),
    /// `__nextSeq` is not an integer.
    NextSeq(Value),
    /// `id` is not the session's.
    Id(Value),
}

/// A rule of the trust rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    JournalBytes,
    NextSeq,
    Id,
}

/// The trust rule, the one place it is written: readers may trust a
/// snapshot file for session `id` and a journal of `journal_bytes` bytes
/// when its `__journalBytes` is a number equal to that size, its
/// `__nextSeq` an integer number (returned), and its `id` that session's.
/// Each argument is the file's member as the rule reads it: the number, or
/// the string, `None` for any other value or none. Both readers of a file
/// (the skim of a canonical file and the full parser) ask it.
fn trust_rule(journal: Option<f64>, next_seq: Option<f64>, file_id: Option<&JsStr>, id: &JsStr, journal_bytes: u64) -> Result<f64, Vec<Rule>> {
    let mut broken = Vec::new();
    if journal != Some(journal_bytes as f64) {
        broken.push(Rule::JournalBytes);
    }
    let next_seq = next_seq.filter(|n| n.is_finite() && n.trunc() == *n);
    if next_seq.is_none() {
        broken.push(Rule::NextSeq);
    }
    if file_id != Some(id) {
        broken.push(Rule::Id);
    }
    match next_seq {
        Some(n) if broken.is_empty() => Ok(n),
        _ => Err(broken),
    }
}

/// The trust rule on a parsed file: its `__nextSeq` when readers may trust
/// it for a journal of `journal_bytes` bytes, else every rule it breaks,
/// with the file's value.
fn trust(parsed: &Object, id: &JsStr, journal_bytes: u64) -> Result<f64, Vec<Distrust>> {
    let number = |key| match parsed.get(key) {
        Some(Value::Number(n)) => Some(*n),
        _ => None,
    };
    let file_id = match parsed.get("id") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let member = |key| parsed.get(key).cloned().unwrap_or(Value::Undefined);
    trust_rule(number(META_JOURNAL_BYTES), number(META_NEXT_SEQ), file_id, id, journal_bytes).map_err(|broken| {
        broken
            .into_iter()
            .map(|rule| match rule {
                Rule::JournalBytes => Distrust::JournalBytes(member(META_JOURNAL_BYTES)),
                Rule::NextSeq => Distrust::NextSeq(member(META_NEXT_SEQ)),
                Rule::Id => Distrust::Id(member("id")),
            })
            .collect()
    })
}

/// Why readers would not trust a snapshot file holding `bytes` for a
/// journal of `journal_bytes` bytes: empty when they would ([`hydrate`]
/// applies the same rule).
pub fn distrust(bytes: &[u8], id: &JsStr, journal_bytes: u64) -> Vec<Distrust> {
    match json::parse(&String::from_utf8_lossy(bytes)) {
        Err(_) => vec![Distrust::Unparsable],
        Ok(value) => match value.into_object() {
            None => vec![Distrust::NotObject],
            Some(parsed) => trust(&parsed, id, journal_bytes).err().unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::snapshot::Snapshot;

    fn text_of(s: &Snapshot) -> SnapshotText {
        let rendered = render(s, 10, 2.0).unwrap();
        skim_canonical(&rendered, &JsStr::from("s"), 10).expect("a rendered snapshot is canonical").0
    }

    /// `distrust` names each broken rule exactly when `hydrate` refuses the
    /// file: the CLI's verdict is the store's.
    #[test]
    fn distrust_is_empty_exactly_when_hydrate_trusts() {
        let dir = std::env::temp_dir().join(format!("qln-distrust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.snapshot.json");
        let good = render(&Snapshot::base(&JsStr::from("s")), 10, 2.0).unwrap();
        let cases = [
            (good.clone(), 10, "s", vec![]),
            (good.clone(), 11, "s", vec!["journalBytes 10"]),
            (good.clone(), 10, "t", vec!["id \"s\""]),
            (good.replace("\"__nextSeq\": 2", "\"__nextSeq\": 2.5"), 10, "s", vec!["nextSeq 2.5"]),
            (good.replace("\"__journalBytes\": 10,\n", ""), 10, "s", vec!["journalBytes undefined"]),
            ("{".to_owned(), 10, "s", vec!["Unparsable"]),
            ("[1]".to_owned(), 10, "s", vec!["NotObject"]),
        ];
        for (text, bytes, id, expected) in cases {
            std::fs::write(&path, &text).unwrap();
            let id = JsStr::from(id);
            let found = |v: &Value| json::stringify(v).unwrap_or_else(|| "undefined".into());
            let label = |d: &Distrust| match d {
                Distrust::Unparsable => "Unparsable".to_owned(),
                Distrust::NotObject => "NotObject".to_owned(),
                Distrust::JournalBytes(v) => format!("journalBytes {}", found(v)),
                Distrust::NextSeq(v) => format!("nextSeq {}", found(v)),
                Distrust::Id(v) => format!("id {}", found(v)),
            };
            let broken: Vec<String> = distrust(text.as_bytes(), &id, bytes).iter().map(label).collect();
            assert_eq!(broken, expected, "{text}");
            assert_eq!(hydrate(&path, &id, bytes).is_some(), broken.is_empty(), "{text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
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
