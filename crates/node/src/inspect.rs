//! The store's own verdicts, for the CLI (`bin/`): whether a lock is stale,
//! whether readers trust a snapshot file, what a sweep makes of a staged
//! file, what a replay makes of a journal. Each verdict crosses as a
//! `string_enum` of `lib.rs` mapped here from the core's enum by an
//! exhaustive match, so a verdict the core adds cannot compile without
//! reaching the CLI, which refuses one it has no words for. The CLI asks
//! these rather than re-deriving them, so it never judges a file
//! differently from the store on any OS.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use quiver_live_core::js::string::js_trim;
use quiver_live_core::js::{json, JsStr, Value};
use quiver_live_core::lock::{self, Verdict};
use quiver_live_core::session::answers::Answers;
use quiver_live_core::session::journal::{self, Locking, Replay};
use quiver_live_core::session::host::Host;
use quiver_live_core::session::snapshot_file::{self, Distrust};
use quiver_live_core::project::layout;
use quiver_live_core::sys::{self, Context, FsError};

use crate::env::{Js, JsResult};
use crate::{errors, host};

/// How much of a line the CLI is shown (it prints less).
const EXCERPT_CHARS: usize = 120;

/// The store's verdict on the lock at `path`, and whether it makes the
/// lock stale.
pub fn lock_verdict(path: &str) -> (crate::LockVerdict, bool) {
    use crate::LockVerdict as V;
    let verdict = lock::judge(Path::new(path));
    let shown = match verdict {
        Verdict::Absent => V::Absent,
        Verdict::OwnerAlive => V::OwnerAlive,
        Verdict::UnreadableFresh => V::UnreadableFresh,
        Verdict::OwnerGone => V::OwnerGone,
        Verdict::NoNumericPid => V::NoNumericPid,
        Verdict::EarlierBoot => V::EarlierBoot,
        Verdict::PidReused => V::PidReused,
        Verdict::UnreadableOld => V::UnreadableOld,
    };
    (shown, verdict.is_stale())
}

/// What a sweep makes of the staged snapshot file at `path`; `None` when
/// its name is not a staged file's, or nothing is there.
pub fn staged_verdict(path: &Path) -> Option<crate::StagedFileVerdict> {
    path.file_name()?.to_str().and_then(layout::staged_session)?;
    match sys::StagedFile::judge(path, layout::STAGED_MIN_AGE) {
        sys::StagedVerdict::InUse => Some(crate::StagedFileVerdict::InUse),
        sys::StagedVerdict::Fresh => Some(crate::StagedFileVerdict::Fresh),
        sys::StagedVerdict::Abandoned => Some(crate::StagedFileVerdict::Abandoned),
        sys::StagedVerdict::Absent => None,
    }
}

/// Each part of the trust rule a snapshot file holding `bytes` breaks, with
/// the file's value for it as JSON text (`None` for `undefined`).
pub fn snapshot_distrust(bytes: &[u8], id: &str, journal_bytes: u64) -> Vec<(crate::SnapshotDistrust, Option<String>)> {
    use crate::SnapshotDistrust as D;
    let value = |v: &Value| json::stringify(v);
    snapshot_file::distrust(bytes, &JsStr::from(id), journal_bytes)
        .iter()
        .map(|d| match d {
            Distrust::Unparsable => (D::Unparsable, None),
            Distrust::NotObject => (D::NotObject, None),
            Distrust::JournalBytes(v) => (D::JournalBytes, value(v)),
            Distrust::NextSeq(v) => (D::NextSeq, value(v)),
            Distrust::Id(v) => (D::Id, value(v)),
        })
        .collect()
}

/// What a full replay of a journal finds, for the CLI.
pub struct JournalFacts {
    pub bytes: u64,
    pub lines: u64,
    pub blank_lines: u64,
    pub next_seq: f64,
    /// (line, message, excerpt) of each line the replay records as
    /// `journal_parse_failed`.
    pub rejected: Vec<(u64, String, String)>,
    /// (line, bytes, excerpt) of a last line without its newline.
    pub torn_tail: Option<(u64, u64, String)>,
    /// The snapshot the replay derives, as `JSON.stringify` gives it.
    pub snapshot_json: String,
}

/// Replays the journal at `path` as session `id` (V8 words the parse
/// errors, as in the store), then reads the lines the replay consumed once
/// more for what a reader is shown of them. A missing journal is an empty
/// one, as for the store.
pub fn journal_facts(js: Js, path: &str, id: &str) -> JsResult<JournalFacts> {
    let path = Path::new(path);
    let replay = replay(js, path, id)?;
    let snapshot_json = json::stringify_members(replay.visible().members(), None);
    let mut facts = JournalFacts { bytes: replay.offset, lines: 0, blank_lines: 0, next_seq: replay.next_seq, rejected: Vec::new(), torn_tail: None, snapshot_json };
    let mut messages = replay.parse_diags.iter().peekable();
    if replay.offset == 0 {
        return Ok(facts);
    }
    let file = sys::open_regular(path, sys::Links::Follow).map_err(|e| errors::throw_fs(js, &FsError::new(e, "open", path)))?;
    let mut reader = BufReader::new(file.reader_from(0).take(replay.offset));
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf).at("read", path).map_err(|e| errors::throw_fs(js, &e))?;
        if read == 0 {
            break;
        }
        facts.lines += 1;
        let complete = buf.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&buf[..buf.len() - usize::from(complete)]);
        if js_trim(&text).is_empty() {
            facts.blank_lines += 1;
        }
        if !complete {
            facts.torn_tail = Some((facts.lines, read as u64, excerpt(&text)));
        }
        if let Some((_, message)) = messages.next_if(|(line, _)| *line == facts.lines) {
            facts.rejected.push((facts.lines, message.to_lossy(), excerpt(&text)));
        }
    }
    Ok(facts)
}

fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}

/// A replay whose questions for V8 are answered, as the store's are.
fn replay(js: Js, path: &Path, id: &str) -> JsResult<Replay> {
    let id = JsStr::from(id);
    let mut answers = Answers::default();
    for _ in 0..4 {
        let replay = journal::replay_file(path, &id, &answers, Locking::TakeShared).map_err(|e| errors::throw_fs(js, &e))?;
        if !answers.used_placeholders() {
            return Ok(replay);
        }
        // A journal's lines are JSON: they hold no value only V8 can interpret.
        if host::answer(js, &mut answers)?.is_some() {
            break;
        }
    }
    Err(errors::throw_error(js, "quiver-live-native: the journal kept changing while it was read"))
}
