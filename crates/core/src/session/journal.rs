//! The append-only journal: replay (whole, streamed, or just the new tail)
//! and append.
//!
//! Replay reproduces the old module's reading exactly: the file is split on
//! `\n`, blank lines (by JS `trim`) are skipped, a line that fails to parse or
//! to apply becomes a `journal_parse_failed` diagnostic carrying its 1-based
//! line number and `JSON.parse`'s own message, and those diagnostics are
//! appended after everything the reducer recorded. Unlike the old module it
//! streams, so a journal larger than V8's largest string still replays, and it
//! can resume from a known prefix so another process's append costs only the
//! new lines.

use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::time::Duration;

use crate::sys::{Context, File, FsError};
use crate::js::json;
use crate::js::string::js_trim;
use crate::js::{JsStr, Value};
use crate::session::record::{self, LazyLine};
use crate::session::host::{Host, Refusal};
use crate::session::reducer::{apply_entry, entry_seq, obj, Record};
use crate::session::schema::Field;
use crate::session::snapshot::Snapshot;
use crate::session::snapshot_file::SnapshotText;
use crate::sys;

/// How many bytes before the end of a replayed prefix are kept to check, on
/// the next read, that the prefix is still the same file content.
const PREFIX_SIGNATURE_BYTES: u64 = 64;

/// A journal prefix replayed the way the old module replays a whole file.
#[derive(Clone, Debug)]
pub struct Replay {
    /// Reducer state before the parse diagnostics are appended.
    pub snapshot: Snapshot,
    /// `journal_parse_failed` diagnostics, in line order, as (line number,
    /// message): a journal of many bad lines keeps these for as long as the
    /// replay is kept, and the objects, several times larger, are built
    /// only for the snapshot handed out.
    pub parse_diags: Vec<(u64, JsStr)>,
    pub next_seq: f64,
    /// Bytes consumed; always the end of a line when `clean_end`.
    pub offset: u64,
    /// `\n` characters seen: the next line's number minus one.
    pub newlines: u64,
    /// The prefix ends with `\n` (or is empty), so later bytes start a new line.
    pub clean_end: bool,
    /// The replayed file, once its prefix is known.
    pub file_id: Option<sys::FileId>,
    pub signature: Vec<u8>,
    /// Some line read the clock (no usable `ts`): a full replay would read it
    /// again and get a later time, so only a full replay reproduces one.
    pub clock_dependent: bool,
}

impl Replay {
    pub fn empty(id: &JsStr) -> Replay {
        Replay {
            snapshot: Snapshot::base(id),
            parse_diags: Vec::new(),
            next_seq: 1.0,
            offset: 0,
            newlines: 0,
            clean_end: true,
            file_id: None,
            signature: Vec::new(),
            clock_dependent: false,
        }
    }

    /// The snapshot a full replay hands out: reducer state, then the parse
    /// diagnostics.
    pub fn visible(&self) -> Snapshot {
        let mut s = self.snapshot.clone();
        if let Value::Array(d) = s.get_mut(Field::Diagnostics) {
            d.extend(self.parse_diags.iter().map(|(line, message)| parse_diagnostic(*line, message.clone())));
        }
        s
    }

    /// [`Replay::visible`] as text, when its text is exact (see
    /// [`SnapshotText::of_model_with`]), rendered without building the parse
    /// diagnostics' objects all at once: a journal of many bad lines has
    /// one per line, several times the size of their text.
    pub fn visible_text(&self) -> Option<SnapshotText> {
        let diags = self.parse_diags.iter().map(|(line, message)| parse_diagnostic(*line, message.clone()));
        SnapshotText::of_model_with(&self.snapshot, Field::Diagnostics, diags)
    }

    /// Applies one complete line (without its `\n`), numbered `line_no`,
    /// through the full parser. A replay reads lines field by field where it
    /// can; the tests hold the two ways to the same result.
    pub fn apply_line(&mut self, line: &str, line_no: u64, host: &dyn Host) {
        let parsed = ParsedLine::of(line);
        self.apply_parsed(parsed, line_no, host);
    }

    /// The second half of [`apply_line`]: what the JS replay loop does with
    /// a parsed line.
    fn apply_parsed(&mut self, parsed: ParsedLine, line_no: u64, host: &dyn Host) {
        match parsed {
            ParsedLine::Blank => {}
            ParsedLine::Invalid(line) => {
                let message = host.json_parse_message(&line);
                self.parse_failed(line_no, message);
            }
            ParsedLine::Entry(entry) if !entry.is_object_like() => self.parse_failed(line_no, "entry is not object".to_owned()),
            ParsedLine::Entry(entry) => {
                let event = if entry.get("event").truthy() { entry.get("event") } else { &entry };
                self.apply_entry(&entry, event, line_no, host);
            }
        }
    }

    /// One line of the file: applied as read field by field when `lazy`
    /// holds it, else through the full parser; then counted.
    fn take_line(&mut self, body: &[u8], lazy: Option<LazyLine>, raw: RawLine, host: &dyn Host) {
        let line_no = self.newlines + 1;
        match lazy {
            Some(lazy) => {
                let event = lazy.event.as_ref().unwrap_or(&lazy.entry);
                self.apply_entry(&lazy.entry, event, line_no, host);
            }
            None => self.apply_parsed(ParsedLine::of_bytes(body), line_no, host),
        }
        self.advance(raw);
    }

    /// An object entry: its `seq` advances the next one, and a reducer
    /// failure becomes the line's diagnostic.
    fn apply_entry<R: Record + ?Sized>(&mut self, entry: &R, event: &R, line_no: u64, host: &dyn Host) {
        if let Some(seq) = entry_seq(entry) {
            self.next_seq = self.next_seq.max(seq + 1.0);
        }
        let host = &ClockWatch { inner: host, used: std::cell::Cell::new(false) };
        let failure = apply_entry(&mut self.snapshot, entry, event, host).err();
        self.clock_dependent |= host.used.get();
        if let Some(refusal) = failure {
            self.parse_failed(line_no, line_failure(refusal));
        }
    }

    fn parse_failed(&mut self, line_no: u64, message: String) {
        self.parse_diags.push((line_no, JsStr::from(message)));
    }

    /// Reads from `reader` (positioned at `self.offset`) to its end.
    fn consume(&mut self, reader: &mut impl BufRead, host: &dyn Host) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut scratch = record::Scratch::default();
        while let Some(raw) = RawLine::read(reader, &mut buf)? {
            let body = &buf[..raw.body_len];
            let lazy = LazyLine::read_bytes(body, &mut scratch);
            self.take_line(body, lazy, raw, host);
        }
        Ok(())
    }

    fn advance(&mut self, raw: RawLine) {
        self.offset += raw.len as u64;
        if raw.complete {
            self.newlines += 1;
        }
        self.clean_end = raw.complete;
    }
}

/// The message of the diagnostic of a line the reducer refused: the
/// exception's, as the old module records it. A line is JSON, so it holds no
/// host value for V8 to run an operation on, and [`ClockWatch`] asks none.
fn line_failure(refusal: Refusal) -> String {
    match refusal {
        Refusal::Js(e) => e.message,
        Refusal::Unanswered | Refusal::Threw(_) => "quiver-live-native: a journal line asked V8 to run an operation".to_owned(),
    }
}

/// The `error` of the diagnostic a replay records for a line it rejects.
pub const PARSE_FAILED: &str = "journal_parse_failed";

/// `{ error: PARSE_FAILED, line, message }`.
fn parse_diagnostic(line: u64, message: JsStr) -> Value {
    Value::Object(obj(&[
        ("error", Value::str(PARSE_FAILED)),
        ("line", Value::Number(line as f64)),
        ("message", Value::String(message)),
    ]))
}

/// One line as read: its length in the file and whether a `\n` ended it.
#[derive(Clone, Copy)]
struct RawLine {
    len: usize,
    body_len: usize,
    complete: bool,
}

impl RawLine {
    /// Reads the next line into `buf`; `None` at the end of the file.
    fn read(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<RawLine>> {
        buf.clear();
        let len = reader.read_until(b'\n', buf)?;
        if len == 0 {
            return Ok(None);
        }
        let complete = buf.last() == Some(&b'\n');
        Ok(Some(RawLine { len, body_len: if complete { len - 1 } else { len }, complete }))
    }
}

/// A journal line after decoding and `JSON.parse`.
enum ParsedLine {
    /// Empty or whitespace only (JS `trim`): skipped without a diagnostic.
    Blank,
    Entry(Value),
    /// Not JSON: the text, for V8 to word the error.
    Invalid(String),
}

impl ParsedLine {
    /// Valid UTF-8 is the rule; the lossy pass (U+FFFD, as Node's decoder
    /// does) only runs for a line that is not.
    fn of_bytes(body: &[u8]) -> ParsedLine {
        match std::str::from_utf8(body) {
            Ok(line) => ParsedLine::of(line),
            Err(_) => ParsedLine::of(&String::from_utf8_lossy(body)),
        }
    }

    fn of(line: &str) -> ParsedLine {
        if js_trim(line).is_empty() {
            return ParsedLine::Blank;
        }
        match json::parse(line) {
            Ok(v) => ParsedLine::Entry(v),
            Err(_) => ParsedLine::Invalid(line.to_owned()),
        }
    }
}

/// A host that notes whether the reducer asked for the time.
struct ClockWatch<'a> {
    inner: &'a dyn Host,
    used: std::cell::Cell<bool>,
}

impl Host for ClockWatch<'_> {
    fn now_ms(&self) -> f64 {
        self.used.set(true);
        self.inner.now_ms()
    }
    fn date_parse_fallback(&self, s: &JsStr) -> f64 {
        self.inner.date_parse_fallback(s)
    }
    fn json_parse_message(&self, line: &str) -> String {
        self.inner.json_parse_message(line)
    }
}

/// Identity and tail of a file, to tell "appended to" from "replaced".
fn record_identity(r: &mut Replay, file: &File, path: &Path) -> Result<(), FsError> {
    r.file_id = Some(file.info().at("fstat", path)?.id);
    r.signature = read_signature(file, r.offset).at("read", path)?;
    Ok(())
}

fn read_signature(file: &File, end: u64) -> io::Result<Vec<u8>> {
    let start = end.saturating_sub(PREFIX_SIGNATURE_BYTES);
    let mut sig = vec![0u8; (end - start) as usize];
    file.read_exact_at(&mut sig, start)?;
    Ok(sig)
}

/// How long a reader waits for a writer's lock before reading anyway.
const READER_PATIENCE_MS: u64 = 200;

/// Whether a replay must take the shared lock: not when the caller already
/// holds the exclusive one (a second descriptor of the same process would
/// wait for itself), nor when a writer is known to be stuck holding it.
#[derive(Clone, Copy, PartialEq)]
pub enum Locking {
    TakeShared,
    AlreadyExclusive,
    Unlocked,
}

/// The journal opened for reading, with the shared lock when asked for;
/// `None` when it does not exist. A link at its name is followed, as the old
/// module's read follows it; what it names must be a regular file (see
/// `sys::open_regular`), so a FIFO or device there is an error naming the
/// path, never a read that blocks or has no end.
fn open_for_replay(path: &Path, locking: Locking) -> Result<Option<(File, Option<sys::SharedLock>)>, FsError> {
    let file = match sys::open_regular(path, sys::Links::Follow) {
        Ok(f) => f,
        // A journal its caller holds open and locked cannot be missing:
        // reading it as empty would hand out its sequence numbers again.
        Err(e) if e.kind() == io::ErrorKind::NotFound && locking != Locking::AlreadyExclusive => return Ok(None),
        Err(e) => return Err(FsError::new(e, "open", path)),
    };
    let shared = match locking {
        Locking::TakeShared => sys::lock_shared(&file, Duration::from_millis(READER_PATIENCE_MS)),
        Locking::AlreadyExclusive | Locking::Unlocked => None,
    };
    Ok(Some((file, shared)))
}

/// Replays a whole journal; a missing file is an empty journal.
pub fn replay_file(path: &Path, id: &JsStr, host: &dyn Host, locking: Locking) -> Result<Replay, FsError> {
    let mut r = Replay::empty(id);
    let Some((file, _shared)) = open_for_replay(path, locking)? else { return Ok(r) };
    let mut reader = BufReader::with_capacity(1 << 16, file.reader_from(0));
    r.consume(&mut reader, host).at("read", path)?;
    record_identity(&mut r, &file, path)?;
    Ok(r)
}

/// Extends a replay with the lines appended since. Returns `Ok(false)` when
/// the file is not the same one grown by appends (replaced, truncated, or the
/// prefix ended mid-line), in which case the caller replays from scratch.
pub fn replay_tail(r: &mut Replay, path: &Path, host: &dyn Host, locking: Locking) -> Result<bool, FsError> {
    if !r.clean_end || r.file_id.is_none() || r.clock_dependent {
        return Ok(false);
    }
    let Some((file, _shared)) = open_for_replay(path, locking)? else { return Ok(false) };
    let info = file.info().at("fstat", path)?;
    if Some(info.id) != r.file_id || info.len < r.offset {
        return Ok(false);
    }
    if read_signature(&file, r.offset).at("read", path)? != r.signature {
        return Ok(false);
    }
    let mut reader = BufReader::with_capacity(1 << 16, file.reader_from(r.offset));
    r.consume(&mut reader, host).at("read", path)?;
    record_identity(r, &file, path)?;
    Ok(true)
}

/// Whether the file's last byte is a newline (true for an empty file). A
/// crash mid-append leaves a fragment without one; the next line must not be
/// glued onto it.
pub fn ends_with_newline(file: &File, size: u64) -> io::Result<bool> {
    if size == 0 {
        return Ok(true);
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, size - 1)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::reducer::tests::TestHost;
    use crate::session::schema::EVENT_TYPES;

    /// Replays `lines` as a journal file (the way a replay reads, field by
    /// field where it can) and again line by line through the full parser;
    /// returns both results as comparable text.
    fn replay_both_ways(lines: &[String]) -> (String, String) {
        let (dir, path) = write_journal(lines);
        let host = TestHost(1_700_000_000_000.0);
        let lazy = replay_file(&path, &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let full = full_replay(lines, &host);
        let show = |r: &Replay| format!("{:?} {} {}", json::stringify_members(r.visible().members(), None), r.next_seq, r.clock_dependent);
        (show(&lazy), show(&full))
    }

    /// `lines` as a journal file in a directory of its own, which the
    /// caller removes.
    fn write_journal(lines: &[String]) -> (std::path::PathBuf, std::path::PathBuf) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("qln-journal-{}-{case}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        (dir, path)
    }

    /// Each line through the full parser, numbered from 1.
    fn full_replay(lines: &[String], host: &dyn Host) -> Replay {
        let mut full = Replay::empty(&JsStr::from("s"));
        for (i, line) in lines.iter().enumerate() {
            full.apply_line(line, i as u64 + 1, host);
        }
        full
    }

    /// Lines a field-by-field read could get wrong: repeated keys, events
    /// that are not objects, escaped keys, keys V8 orders first, odd values.
    #[test]
    fn field_by_field_replay_agrees_with_full_parse_on_edge_cases() {
        let lines: Vec<String> = [
            r#"{"seq":1,"ts":"2030-01-01T00:00:00.000Z","event":{"type":"generate","id":"s","pageUrl":"/a","count":2,"token":"t","screenshotPath":"/x.png"}}"#,
            r#"{"seq":2,"event":{"type":"agent_phase","phase":"a","type":"agent_phase","phase":"b","durationMs":3}}"#,
            r#"{"seq":3,"event":"not an object","type":"checkpoint","revision":4}"#,
            r#"{"seq":4,"event":{"type":"checkpoint","revision":9},"event":null,"type":"variant_mounted","variant":2}"#,
            r#"{"seq":5,"event":null,"event":{"type":"variant_mounted","variant":"3"}}"#,
            r#"{"seq":6,"event":0,"type":"variant_mounted","variant":1}"#,
            r#"{"seq":7,"event":"","type":"steer","pageUrl":"/b","prompt":"p"}"#,
            r#"{"seq":8,"event":[1],"type":"steer"}"#,
            r#"{"seq":9,"event":true}"#,
            r#"{"seq":10,"\u0065vent":{"type":"discard"}}"#,
            r#"{"seq":11,"event":{"\u0074ype":"complete","type":"steer_done","message":"m"}}"#,
            r#"{"seq":12,"event":{"type":"generate","1":"one","0":"zero","__proto__":{"a":1},"token":"x","b":"\ud800"}}"#,
            r#"{"seq":13,"event":{"type":"variant_plan","plan":{"count":3,"variants":[{"n":1,"label":"A\n\"q\""}]}}}"#,
            r#"  {"seq" : 14 , "event" : { "type" : "agent_phase" , "phase" : "generating" , "at" : 1.5e3 } }  "#,
            r#"{"seq":15,"event":{"type":"checkpoint","revision":-0,"paramValues":{"w":700,"w":800},"owner":"tab"}}"#,
            r#"{"seq":"16","event":{"type":"accept","variantId":"2"}}"#,
            r#"{"seq":17,"event":{"type":"nope"}} trailing"#,
            r#"[1,2,3]"#,
            r#""just a string""#,
            r#"   "#,
            r#"{"seq":18,"ts":"not a date","event":{"type":"variant_mount_failed","variant":1,"url":"/u","error":"e"}}"#,
            r#"{"seq":19.5,"event":{"type":"agent_error","message":"","sourceEventType":"generate"}}"#,
            r#"{"seq":20,"event":{"type":"detector_waivers","waivers":["a","b"]}}"#,
            r#"{"seq":21,"event":{"type":"checkpoint","revision":{"toString":1}}}"#,
            r#"{"seq":22,"event":{"type":"variant_mounted","variant":1e400}}"#,
            r#"{"seq":23,"event":{"type":"complete","carbonize":true}}"#,
            r#"{"seq":24,"event":{}}"#,
            r#"{"seq":25,"event":{"type":"discard","x":1},"event":{"type":"steer_done","message":"two"}}"#,
            r#"{}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (lazy, full) = replay_both_ways(&lines);
        assert_eq!(lazy, full);
        // Each prefix too: a line's effect must not depend on what follows.
        for n in 1..lines.len() {
            let (lazy, full) = replay_both_ways(&lines[..n]);
            assert_eq!(lazy, full, "first {n} lines");
        }
    }

    /// The text a read keeps is the visible snapshot: the same members
    /// after a parse, parse diagnostics last; and it is refused exactly
    /// when the snapshot holds what JSON cannot carry (here -0 and a
    /// variant of 1e400).
    #[test]
    fn visible_text_parses_to_the_visible_snapshot() {
        let host = TestHost(1_700_000_000_000.0);
        let good = [
            r#"{"seq":1,"ts":"2030-01-01T00:00:00.000Z","event":{"type":"generate","id":"s","pageUrl":"/a","count":2}}"#,
            r#"{"seq":2,"event":{"type":"nope"}}"#,
            r#"{"seq":3,"event":{"type":"generate","1":"one","__proto__":{"a":1},"b":"\ud800"}}"#,
            r#"{"seq":4,"event":{"type":"checkpoint","revision":-0}}"#,
            r#"{"seq":5,"event":{"type":"generate","count":3}}"#,
            r#"{"seq":6,"event":{"type":"variant_mounted","variant":1e400}}"#,
        ];
        let mut lines: Vec<String> = Vec::new();
        for (i, line) in good.iter().enumerate() {
            lines.push(line.to_string());
            lines.push(format!(r#"{{"seq":{},"oops {i}"#, 100 + i));
        }
        let mut kept_as_text = 0;
        for n in 0..=lines.len() {
            let replay = full_replay(&lines[..n], &host);
            let visible = replay.visible();
            let exact = visible.members().all(|(_, v)| survives_json(v));
            match replay.visible_text() {
                Some(text) => {
                    assert!(exact, "first {n} lines: text kept for a snapshot JSON cannot carry");
                    let parsed = json::parse(&text.json).unwrap().into_object().unwrap();
                    let back = Snapshot::over_base(&JsStr::from("s"), &parsed);
                    assert_eq!(json::stringify_members(back.members(), None), json::stringify_members(visible.members(), None), "first {n} lines");
                    assert_eq!(text.completed, visible.is_completed());
                    kept_as_text += 1;
                }
                None => assert!(!exact || parsed_key_apart(&visible), "first {n} lines: the text refused"),
            }
        }
        assert!(kept_as_text >= 4, "only {kept_as_text} prefixes kept as text");
    }

    /// A key the text form leaves to the model.
    fn parsed_key_apart(s: &Snapshot) -> bool {
        json::stringify_members(s.members(), None).contains("__proto__")
    }

    /// Whether JSON carries `v` unchanged (the same rule as the text form's,
    /// written again so that a change there must convince this test).
    fn survives_json(v: &Value) -> bool {
        match v {
            Value::Undefined | Value::Host(_) => false,
            Value::Number(n) => n.is_finite() && !(*n == 0.0 && n.is_sign_negative()),
            Value::Array(items) => items.iter().all(survives_json),
            Value::Object(o) => o.iter().all(|(_, v)| survives_json(v)),
            Value::Null | Value::Bool(_) | Value::String(_) => true,
        }
    }

    /// A pending event and a plan, set, kept, replaced and cleared in every
    /// order these lines allow, outside any fence (which would ignore them).
    #[test]
    fn whole_objects_agree_with_full_parse() {
        let lines: Vec<String> = [
            r#"{"seq":1,"ts":"2030-01-01T00:00:00.000Z","event":{"type":"generate","count":3,"token":"t","element":{"a":[1,{"b":"\u00e9"}]},"token":"u"}}"#,
            // Falsy plans other than null stay until the next event, which
            // replaces them with null; the last of repeated keys counts.
            r#"{"seq":2,"event":{"type":"variant_plan","plan":0}}"#,
            r#"{"seq":3,"event":{"type":"agent_phase","phase":"generating"}}"#,
            r#"{"seq":4,"event":{"type":"variant_plan","plan":[]}}"#,
            r#"{"seq":5,"event":{"type":"variant_plan","plan":"","plan":{"a":1,"a":2,"1":0}}}"#,
            r#"{"seq":6,"event":{"type":"variant_plan","plan":{"a":1},"plan":false}}"#,
            r#"{"seq":7,"event":{"type":"variant_plan","plan":null}}"#,
            r#"{"seq":8,"event":{"type":"variant_plan","plan":{"count":2,"variants":[{"n":1}]}}}"#,
            // A pending generate is kept by a failed mount, cleared when the
            // variants are ready, then replaced by the failure itself.
            r#"{"seq":9,"event":{"type":"variant_mount_failed","variant":1,"url":"/u","error":"e","at":5}}"#,
            r#"{"seq":10,"event":{"type":"variants_ready","arrivedVariants":3,"at":6}}"#,
            r#"{"seq":11,"event":{"type":"variant_mount_failed","variant":2,"token":"x","at":7}}"#,
            r#"{"seq":12,"type":"generate","count":1,"token":"own"}"#,
            r#"{"seq":13,"event":{"type":"variant_plan","plan":{"b":1}}}"#,
            r#"{"seq":14,"event":{"type":"generate","count":2}}"#,
            r#"{"seq":15,"e\u0076ent":{"type":"variant_plan","plan":{"escaped":true}}}"#,
            r#"{"seq":16,"event":{"type":"steer","pageUrl":"/p"}}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in 1..=lines.len() {
            let (lazy, full) = replay_both_ways(&lines[..n]);
            assert_eq!(lazy, full, "first {n} lines");
        }
    }

    /// Random journals over the reducer's event types and keys, with
    /// repeats, escapes and malformed lines: both ways of reading agree.
    #[test]
    fn field_by_field_replay_agrees_with_full_parse_on_random_journals() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let vocab = vocabulary();
        for case in 0..200 {
            let lines: Vec<String> = (0..40).map(|i| random_line(&mut rng, i, &vocab)).collect();
            let (lazy, full) = replay_both_ways(&lines);
            assert_eq!(lazy, full, "case {case}: {lines:#?}");
        }
    }

    fn next(rng: &mut u64) -> u64 {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    }

    fn one_in(rng: &mut u64, n: u64) -> bool {
        next(rng).is_multiple_of(n)
    }

    fn pick<'a>(rng: &mut u64, items: &[&'a str]) -> &'a str {
        items[(next(rng) % items.len() as u64) as usize]
    }

    fn random_value(rng: &mut u64, depth: u32) -> String {
        let scalars = [
            "null", "true", "false", "0", "-0", "1", "2", "3", "7", "1.5", "-2", "1e400", "\"\"", "\"x\"", "\"1\"", "\"2\"",
            "\"generating\"", "\"variants_ready\"", "\"publication\"", "\"variants_progress\"", "\"tab-a\"", "\"\\u00e9\\n\"",
            "\"\\ud800\"", "\"2030-01-01T00:00:00.000Z\"", "\"__proto__\"", "\"accept_requested\"", "\"completed\"",
        ];
        match next(rng) % 10 {
            0 if depth < 3 => format!("[{}]", (0..next(rng) % 3).map(|_| random_value(rng, depth + 1)).collect::<Vec<_>>().join(",")),
            1 if depth < 3 => random_object(rng, depth + 1, &["a", "n", "label", "path", "type", "0", "__proto__"]),
            _ => pick(rng, &scalars).to_string(),
        }
    }

    fn random_object(rng: &mut u64, depth: u32, keys: &[&str]) -> String {
        let members: Vec<String> = (0..next(rng) % 7).map(|_| format!("\"{}\":{}", pick(rng, keys), random_value(rng, depth))).collect();
        format!("{{{}}}", members.join(","))
    }

    /// The reducer's event types and the keys its cases read (found by
    /// watching it: a case or key added later is in here without an edit),
    /// plus keys that stress the readers rather than the reducer.
    struct Vocabulary {
        types: Vec<&'static str>,
        keys: Vec<String>,
    }

    fn vocabulary() -> Vocabulary {
        let mut types: Vec<&'static str> = EVENT_TYPES.to_vec();
        types.extend(["unknown", "", "generate"]);
        let mut keys = crate::session::reducer::tests::event_keys_read();
        keys.extend(["id", "token", "__proto__", "0"].map(String::from));
        Vocabulary { types, keys }
    }

    fn random_line(rng: &mut u64, i: usize, vocab: &Vocabulary) -> String {
        let types = &vocab.types;
        let keys: Vec<&str> = vocab.keys.iter().map(String::as_str).collect();
        let mut event: Vec<String> = Vec::new();
        for _ in 0..next(rng) % 8 {
            let key = pick(rng, &keys);
            let key = if one_in(rng, 40) { "\\u0074ype" } else { key };
            event.push(format!("\"{}\":{}", key, random_value(rng, 1)));
        }
        let at = (next(rng) % (event.len() as u64 + 1)) as usize;
        event.insert(at, format!("\"type\":\"{}\"", pick(rng, types)));
        if one_in(rng, 10) {
            event.push(format!("\"type\":\"{}\"", pick(rng, types)));
        }
        let event = format!("{{{}}}", event.join(","));
        let event = match next(rng) % 20 {
            0 => "null".to_string(),
            1 => "\"text\"".to_string(),
            2 => "0".to_string(),
            3 => "[]".to_string(),
            _ => event,
        };
        let mut top = vec![format!("\"seq\":{}", i + 1), "\"id\":\"s\"".to_string()];
        if !one_in(rng, 4) {
            top.push(format!("\"ts\":\"2030-01-01T00:00:{:02}.000Z\"", i % 60));
        }
        top.push(format!("\"event\":{event}"));
        if one_in(rng, 15) {
            top.push(format!("\"event\":{}", random_value(rng, 1)));
        }
        if one_in(rng, 8) {
            top.push(format!("\"type\":\"{}\"", pick(rng, types)));
        }
        let line = format!("{{{}}}", top.join(","));
        match next(rng) % 30 {
            0 => line[..line.len() / 2].to_string(),
            1 => String::new(),
            2 => format!(" {line}\r"),
            _ => line,
        }
    }
}
