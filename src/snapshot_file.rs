//! The snapshot file: a read cache other processes use, never the truth.
//!
//! Its bytes are `JSON.stringify({ ...snapshot, __journalBytes, __nextSeq },
//! null, 2) + '\n'`, as the old module writes them. It may be trusted only
//! when `__journalBytes` equals the journal's size right now: the journal is
//! append-only, so an equal size means no event landed since it was written.
//! Readers in other processes must see the old file or the new one, never a
//! mix. The cheap way that guarantees it is an in-place rewrite under a write
//! lease (see `platform::write_lease`): granted only when nobody has the file
//! open, and holding off any open until the write is done. When the lease is
//! refused (a reader has the file open), the file must shrink (which would
//! take a second syscall), or leases are unavailable, the new text goes to a
//! temporary file that is renamed over the old one.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::fs_error::{Context, FsError};
use crate::json;
use crate::platform;
use crate::reducer::base_snapshot;
use crate::value::{is_integer, JsStr, Object, Value};

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

/// Where the next version is staged before it is renamed over the snapshot.
/// The name does not end in `.jsonl`, so no store lists it as a session.
fn staging_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    PathBuf::from(name)
}

pub fn write(path: &Path, snapshot: &Object, journal_bytes: i64, next_seq: f64) -> Result<(), FsError> {
    let text = render(snapshot, journal_bytes, next_seq);
    if rewrite_in_place(path, text.as_bytes())? {
        return Ok(());
    }
    let staging = staging_path(path);
    let result = write_staged(&staging, text.as_bytes()).and_then(|()| fs::rename(&staging, path).at("rename", path));
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result
}

/// The crash-safe variant for `durable` stores: the new text is staged,
/// fsynced and renamed over, so after a power loss the file is the old
/// version or the new one, never pages of both.
pub fn write_durable(path: &Path, snapshot: &Object, journal_bytes: i64, next_seq: f64) -> Result<(), FsError> {
    let text = render(snapshot, journal_bytes, next_seq);
    let staging = staging_path(path);
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create(true).truncate(true).open(&staging).at("open", &staging)?;
        f.write_all(text.as_bytes()).at("write", &staging)?;
        f.sync_data().at("fsync", &staging)?;
        fs::rename(&staging, path).at("rename", path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result
}

/// `Ok(false)` when the in-place path does not apply and the caller must
/// stage and rename instead.
fn rewrite_in_place(path: &Path, bytes: &[u8]) -> Result<bool, FsError> {
    use std::os::unix::fs::FileExt;
    let Ok(file) = OpenOptions::new().write(true).open(path) else { return Ok(false) };
    match file.metadata() {
        Ok(m) if m.is_file() && m.len() <= bytes.len() as u64 => {}
        _ => return Ok(false),
    }
    let Ok(_lease) = platform::write_lease(&file) else { return Ok(false) };
    file.write_all_at(bytes, 0).at("write", path)?;
    Ok(true)
}

fn write_staged(staging: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let mut f: File = OpenOptions::new().write(true).create(true).truncate(true).open(staging).at("open", staging)?;
    f.write_all(bytes).at("write", staging)
}

/// The snapshot a file provably describes for a journal of `journal_bytes`
/// bytes, as `{ ...baseSnapshot(id), ...file }` minus the bookkeeping keys,
/// with its `__nextSeq`. `None` sends the caller to replay.
pub fn hydrate(path: &Path, id: &JsStr, journal_bytes: u64) -> Option<(Object, f64)> {
    // No size probe first: snapshot files are small, and a fresh listing
    // reads one per session.
    let mut bytes = Vec::with_capacity(16 * 1024);
    std::io::Read::read_to_end(&mut File::open(path).ok()?, &mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
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
    let keys = crate::reducer::BASE_KEYS;
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
