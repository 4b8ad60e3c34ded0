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

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::fs_error::{Context, FsError};
use crate::json;
use crate::platform;
use crate::reducer::{apply_event, base_snapshot, entry_seq, obj, Host};
use crate::value::{js_trim_is_empty, JsStr, Object, Value};

/// How many bytes before the end of a replayed prefix are kept to check, on
/// the next read, that the prefix is still the same file content.
const PREFIX_SIGNATURE_BYTES: u64 = 64;

/// A journal prefix replayed the way the old module replays a whole file.
#[derive(Clone, Debug)]
pub struct Replay {
    /// Reducer state before the parse diagnostics are appended.
    pub snapshot: Object,
    /// `journal_parse_failed` diagnostics, in line order.
    pub parse_diags: Vec<Value>,
    pub next_seq: f64,
    /// Bytes consumed; always the end of a line when `clean_end`.
    pub offset: u64,
    /// `\n` characters seen: the next line's number minus one.
    pub newlines: u64,
    /// The prefix ends with `\n` (or is empty), so later bytes start a new line.
    pub clean_end: bool,
    pub dev: u64,
    pub ino: u64,
    pub signature: Vec<u8>,
    /// Some line read the clock (no usable `ts`): a full replay would read it
    /// again and get a later time, so only a full replay reproduces one.
    pub clock_dependent: bool,
}

impl Replay {
    pub fn empty(id: &JsStr) -> Replay {
        Replay {
            snapshot: base_snapshot(id),
            parse_diags: Vec::new(),
            next_seq: 1.0,
            offset: 0,
            newlines: 0,
            clean_end: true,
            dev: 0,
            ino: 0,
            signature: Vec::new(),
            clock_dependent: false,
        }
    }

    /// The snapshot a full replay hands out: reducer state, then the parse
    /// diagnostics.
    pub fn visible(&self) -> Object {
        let mut s = self.snapshot.clone();
        if !self.parse_diags.is_empty() {
            if let Some(Value::Array(d)) = s.get_mut("diagnostics") {
                d.extend(self.parse_diags.iter().cloned());
            }
        }
        s
    }

    /// Applies one complete line (without its `\n`), numbered `line_no`.
    pub fn apply_line(&mut self, line: &str, line_no: u64, host: &dyn Host) {
        let parsed = ParsedLine::of(line);
        self.apply_parsed(parsed, line_no, host);
    }

    /// The second half of [`apply_line`]: what the JS replay loop does with
    /// a parsed line.
    fn apply_parsed(&mut self, parsed: ParsedLine, line_no: u64, host: &dyn Host) {
        let host = &ClockWatch { inner: host, used: std::cell::Cell::new(false) };
        let failure = match parsed {
            ParsedLine::Blank => return,
            ParsedLine::Invalid(line) => Some(host.json_parse_message(&line)),
            ParsedLine::Entry(entry) if !entry.is_object_like() => Some("entry is not object".to_owned()),
            ParsedLine::Entry(entry) => {
                if let Some(seq) = entry_seq(&entry) {
                    self.next_seq = self.next_seq.max(seq + 1.0);
                }
                apply_event(&mut self.snapshot, &entry, host).err()
            }
        };
        self.clock_dependent |= host.used.get();
        if let Some(message) = failure {
            self.parse_diags.push(Value::Object(obj(&[
                ("error", Value::str("journal_parse_failed")),
                ("line", Value::Number(line_no as f64)),
                ("message", Value::String(JsStr::from(message))),
            ])));
        }
    }

    /// Reads from `reader` (positioned at `self.offset`) to its end.
    fn consume(&mut self, reader: &mut impl BufRead, host: &dyn Host) -> io::Result<()> {
        let mut buf = Vec::new();
        while let Some(raw) = RawLine::read(reader, &mut buf)? {
            self.apply_parsed(ParsedLine::of_bytes(&buf[..raw.body_len]), self.newlines + 1, host);
            self.advance(raw);
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
        if js_trim_is_empty(line) {
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
fn record_identity(r: &mut Replay, file: &mut File, path: &Path) -> Result<(), FsError> {
    let meta = file.metadata().at("fstat", path)?;
    r.dev = meta.dev();
    r.ino = meta.ino();
    r.signature = read_signature(file, r.offset).at("read", path)?;
    Ok(())
}

fn read_signature(file: &mut File, end: u64) -> io::Result<Vec<u8>> {
    let start = end.saturating_sub(PREFIX_SIGNATURE_BYTES);
    let mut sig = vec![0u8; (end - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut sig)?;
    Ok(sig)
}

/// How long a reader waits for a writer's lock before reading anyway.
const READER_PATIENCE_MS: u64 = 200;

/// Whether a replay must take the shared lock: not when the caller already
/// holds the exclusive one (a second descriptor of the same process would
/// wait for itself).
#[derive(Clone, Copy, PartialEq)]
pub enum Locking {
    TakeShared,
    AlreadyExclusive,
}

/// The journal opened for reading, with the shared lock when asked for;
/// `None` when it does not exist.
fn open_for_replay(path: &Path, locking: Locking) -> Result<Option<(File, Option<platform::SharedLock>)>, FsError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FsError::new(&e, "open", path)),
    };
    let shared = match locking {
        Locking::TakeShared => platform::lock_shared_for(&file, READER_PATIENCE_MS),
        Locking::AlreadyExclusive => None,
    };
    Ok(Some((file, shared)))
}

/// Replays a whole journal; a missing file is an empty journal.
pub fn replay_file(path: &Path, id: &JsStr, host: &dyn Host, locking: Locking) -> Result<Replay, FsError> {
    let mut r = Replay::empty(id);
    let Some((mut file, _shared)) = open_for_replay(path, locking)? else { return Ok(r) };
    let mut reader = BufReader::with_capacity(1 << 20, &mut file);
    r.consume(&mut reader, host).at("read", path)?;
    record_identity(&mut r, &mut file, path)?;
    Ok(r)
}

/// Extends a replay with the lines appended since. Returns `Ok(false)` when
/// the file is not the same one grown by appends (replaced, truncated, or the
/// prefix ended mid-line), in which case the caller replays from scratch.
pub fn replay_tail(r: &mut Replay, path: &Path, host: &dyn Host, locking: Locking) -> Result<bool, FsError> {
    if !r.clean_end || r.ino == 0 || r.clock_dependent {
        return Ok(false);
    }
    let Some((mut file, _shared)) = open_for_replay(path, locking)? else { return Ok(false) };
    let meta = file.metadata().at("fstat", path)?;
    if meta.dev() != r.dev || meta.ino() != r.ino || meta.len() < r.offset {
        return Ok(false);
    }
    if read_signature(&mut file, r.offset).at("read", path)? != r.signature {
        return Ok(false);
    }
    let mut reader = BufReader::with_capacity(1 << 16, &mut file);
    r.consume(&mut reader, host).at("read", path)?;
    record_identity(r, &mut file, path)?;
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
    std::os::unix::fs::FileExt::read_exact_at(file, &mut last, size - 1)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reducer::tests::TestHost;
    use std::io::Write;

    /// The non-blank lines of a journal named by an environment variable, or
    /// `None` (saying why on stderr) so an ignored benchmark run without it
    /// skips instead of failing.
    fn bench_journal(var: &str) -> Option<(std::path::PathBuf, Vec<String>)> {
        let Some(path) = std::env::var_os(var) else {
            eprintln!("skipped: set {var}=<journal.jsonl>");
            return None;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.lines().filter(|l| !js_trim_is_empty(l)).map(str::to_owned).collect();
        Some((path.into(), lines))
    }

    /// Median over `iters` runs of `f`, in microseconds per event.
    fn median_us(iters: usize, events: usize, mut f: impl FnMut()) -> f64 {
        let mut times: Vec<f64> = (0..iters)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6 / events as f64
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    }

    fn replay_us(path: &Path, iters: usize, events: usize) -> f64 {
        let host = TestHost(0.0);
        median_us(iters, events, || {
            std::hint::black_box(replay_file(path, &JsStr::from("s"), &host, Locking::TakeShared).unwrap());
        })
    }

    fn ours_parse_us(lines: &[String], iters: usize) -> f64 {
        median_us(iters, lines.len(), || {
            for l in lines {
                std::hint::black_box(json::parse(l).unwrap());
            }
        })
    }

    /// Our parse alone and the full replay of a real journal:
    /// `QLN_REPLAY_JOURNAL=/path cargo test --release --lib replay_bench -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn replay_bench() {
        let Some((path, lines)) = bench_journal("QLN_REPLAY_JOURNAL") else { return };
        let iters: usize = std::env::var("QLN_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(9);
        for _ in 0..2 {
            let parse = ours_parse_us(&lines, iters);
            let replay = replay_us(&path, iters, lines.len());
            println!("{} events: parse {parse:.3} us/event, replay {replay:.3} us/event", lines.len());
        }
    }

    /// What parsing alone costs with the standard crate, against ours and the
    /// full replay, in one run so the numbers share a machine state:
    /// `QLN_FLOOR_JOURNAL=/path cargo test --release --lib replay_floor -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn replay_floor() {
        const ITERS: usize = 7;
        let Some((path, lines)) = bench_journal("QLN_FLOOR_JOURNAL") else { return };
        let serde_value = median_us(ITERS, lines.len(), || {
            for l in &lines {
                std::hint::black_box(serde_json::from_str::<serde_json::Value>(l).unwrap());
            }
        });
        let validate = median_us(ITERS, lines.len(), || {
            for l in &lines {
                std::hint::black_box(serde_json::from_str::<serde::de::IgnoredAny>(l).unwrap());
            }
        });
        let ours = ours_parse_us(&lines, ITERS);
        let replay = replay_us(&path, ITERS, lines.len());
        println!(
            "replay-floor parse_serde_value_us_per_event={serde_value:.3} validate_us_per_event={validate:.3} \
             ours_parse_us_per_event={ours:.3} replay_us_per_event={replay:.3}"
        );
    }

    /// `cargo test --release replay_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn replay_speed() {
        let dir = std::env::temp_dir().join(format!("qln-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let mut f = std::io::BufWriter::new(File::create(&path).unwrap());
        let types = ["checkpoint", "agent_phase", "variant_mounted", "generate", "agent_done"];
        let n: usize = std::env::var("QLN_REPLAY_N").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
        let iters: usize = std::env::var("QLN_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
        for i in 1..=n {
            let t = types[i % 5];
            writeln!(f, r#"{{"seq":{i},"id":"s","type":"{t}","ts":"2030-01-01T00:00:00.{:03}Z","event":{{"type":"{t}","id":"s","revision":{i},"phase":"scaffolding","variant":{},"count":3}}}}"#, i % 1000, i % 3 + 1).unwrap();
        }
        drop(f);
        let host = TestHost(0.0);
        for _ in 0..iters {
            let t = std::time::Instant::now();
            let r = replay_file(&path, &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
            println!("{:.3} us/event ({} diags)", t.elapsed().as_secs_f64() * 1e6 / n as f64, r.parse_diags.len());
            let t = std::time::Instant::now();
            let mut seq = Replay::empty(&JsStr::from("s"));
            seq.consume(&mut BufReader::new(File::open(&path).unwrap()), &host).unwrap();
            println!("{:.3} us/event sequential", t.elapsed().as_secs_f64() * 1e6 / n as f64);
            assert_eq!(json::stringify(&Value::Object(seq.visible())), json::stringify(&Value::Object(r.visible())));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
