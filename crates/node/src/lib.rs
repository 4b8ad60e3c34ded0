//! quiver-live-native's Node-API binding: `#[napi]` items only. The JS
//! wrapper (`index.js` at the package root) gives them the old module's
//! calling conventions; the work is done by `quiver-live-core`.

mod boundary;
mod convert;
mod engine;
mod env;
mod errors;
mod host;
mod inspect;
mod lock;
mod store;

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use quiver_live_core::project;
use quiver_live_core::session::schema::{ADDED_FIELDS, COMPLETED_PHASES, EVENT_TYPES, FIELDS, GENERATION_FENCED_PHASES, MOUNT_FAILURE_HISTORY};
use quiver_live_core::session::store::safe_session_id;

use env::{ErrorKind, Js, JsResult};

pub use boundary::boundary;
pub use lock::{lock_path, try_lock, unlock};
pub use store::{store_append, store_append_json, store_drop_unrendered, store_flush, store_has, store_open, store_persist, store_read, store_read_active, store_snapshot};

/// Runs as each environment (the main thread, a worker) loads the addon.
#[napi(module_exports)]
pub fn init(_exports: Object, env: Env) -> Result<()> {
    engine::learn_sort(&env)?;
    lock::keep_held_locks(&env)
}

/// The project root of an absolute, resolved `cwd` (`home` is
/// `os.homedir()`), as quiver-cli resolves it.
#[napi(catch_unwind)]
pub fn project_root_of(env: Env, abs_cwd: String, home: String) -> Result<String> {
    let js = Js::new(env.raw());
    Ok(project_root(js, &abs_cwd, &home)?.to_string_lossy().into_owned())
}

fn project_root(js: Js, abs_cwd: &str, home: &str) -> JsResult<PathBuf> {
    project::try_resolve_project_root(Path::new(abs_cwd), Some(Path::new(home))).map_err(|e| {
        let kind = if e.name == "RangeError" { ErrorKind::Range } else { ErrorKind::Type };
        errors::throw(js, kind, e.message)
    })
}

/// Whether `id` may name a session (`[A-Za-z0-9_-]{1,128}`).
#[napi(catch_unwind)]
pub fn is_session_id(id: String) -> bool {
    safe_session_id(&id).is_ok()
}

/// One row of the snapshot schema.
#[napi(object)]
pub struct SchemaField {
    pub name: String,
    /// How the head of `applyEvent` rebuilds it (`Copied`, `ObjectCopy`, ...).
    pub rebuild: String,
    /// Its TypeScript type; `?` after the name for fields events add.
    pub ts_type: String,
    pub added: bool,
}

/// The snapshot schema, for the wrapper (phase sets), tools and tests.
#[napi(object)]
pub struct Schema {
    pub fields: Vec<SchemaField>,
    pub event_types: Vec<String>,
    pub completed_phases: Vec<String>,
    pub generation_fenced_phases: Vec<String>,
    pub mount_failure_history: u32,
}

#[napi(catch_unwind)]
pub fn schema() -> Schema {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    let base = FIELDS.iter().map(|f| SchemaField { name: f.name.into(), rebuild: format!("{:?}", f.rebuild), ts_type: f.ts_type.into(), added: false });
    let added = ADDED_FIELDS.iter().map(|(name, ts)| SchemaField { name: (*name).into(), rebuild: "Copied".into(), ts_type: (*ts).into(), added: true });
    Schema {
        fields: base.chain(added).collect(),
        event_types: strings(&EVENT_TYPES),
        completed_phases: strings(&COMPLETED_PHASES),
        generation_fenced_phases: strings(&GENERATION_FENCED_PHASES),
        mount_failure_history: MOUNT_FAILURE_HISTORY as u32,
    }
}

/// The store's verdict on a lock file, for the CLI.
#[napi(object)]
pub struct LockVerdict {
    /// `absent`, `owner_alive`, `unreadable_fresh`, `owner_gone`,
    /// `no_numeric_pid`, `earlier_boot`, `pid_reused` or `unreadable_old`.
    pub verdict: String,
    pub stale: bool,
}

/// Judges the lock file at `path` as the store does before sweeping it.
#[napi(catch_unwind)]
pub fn judge_lock(path: String) -> LockVerdict {
    let (verdict, stale) = inspect::lock_verdict(&path);
    LockVerdict { verdict: verdict.into(), stale }
}

/// Removes the lock at `path` if the store judges it stale right now (and
/// it is still the file judged); whether it did.
#[napi(catch_unwind)]
pub fn clear_stale_lock(path: String) -> bool {
    quiver_live_core::lock::clear_stale(Path::new(&path))
}

/// A rule of the snapshot-file trust rule a file breaks.
#[napi(object)]
pub struct Distrust {
    /// `unparsable`, `not_object`, `journal_bytes`, `next_seq` or `id`.
    pub rule: String,
    /// The file's value for that rule's key as JSON text (absent for `undefined`).
    pub found: Option<String>,
}

/// Why readers would not trust a snapshot file holding `bytes` for session
/// `id` and a journal of `journal_bytes` bytes: empty when they would.
#[napi(catch_unwind)]
pub fn judge_snapshot_file(bytes: Buffer, id: String, journal_bytes: i64) -> Vec<Distrust> {
    let broken = inspect::snapshot_distrust(&bytes, &id, u64::try_from(journal_bytes).unwrap_or(u64::MAX));
    broken.into_iter().map(|(rule, found)| Distrust { rule: rule.into(), found }).collect()
}

/// A journal line a replay records as `journal_parse_failed`.
#[napi(object)]
pub struct RejectedLine {
    pub line: i64,
    pub message: String,
    /// The line's first characters.
    pub text: String,
}

/// A last line without its newline.
#[napi(object)]
pub struct TornTail {
    pub line: i64,
    pub bytes: i64,
    pub text: String,
}

/// What a full replay of a journal finds.
#[napi(object)]
pub struct JournalReport {
    pub bytes: i64,
    pub lines: i64,
    /// Lines the replay applied (neither blank nor rejected).
    pub entries: i64,
    pub next_seq: f64,
    pub rejected: Vec<RejectedLine>,
    pub torn_tail: Option<TornTail>,
    /// The snapshot the replay derives, as JSON text.
    pub snapshot_json: String,
}

/// Replays the journal at `path` as session `id`, as the store would, and
/// reports on its lines.
#[napi(catch_unwind)]
pub fn inspect_journal(env: Env, path: String, id: String) -> Result<JournalReport> {
    let js = Js::new(env.raw());
    let facts = inspect::journal_facts(js, &path, &id)?;
    let n = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
    Ok(JournalReport {
        bytes: n(facts.bytes),
        lines: n(facts.lines),
        entries: n(facts.lines - facts.blank_lines - facts.rejected.len() as u64),
        next_seq: facts.next_seq,
        rejected: facts.rejected.into_iter().map(|(line, message, text)| RejectedLine { line: n(line), message, text }).collect(),
        torn_tail: facts.torn_tail.map(|(line, bytes, text)| TornTail { line: n(line), bytes: n(bytes), text }),
        snapshot_json: facts.snapshot_json,
    })
}

/// The process that wrote a snapshot staging file.
#[napi(object)]
pub struct StagedWriter {
    pub pid: u32,
    pub alive: bool,
}

/// The writer of the staging file named `name` (`.<16 hex>.<target>.<pid>.tmp`),
/// as a store opened on its directory judges it before removing the files of
/// dead writers; `null` when `name` is not a staging file's.
#[napi(catch_unwind)]
pub fn staged_file_writer(name: String) -> Option<StagedWriter> {
    inspect::staged_writer(&name).map(|(pid, alive)| StagedWriter { pid, alive })
}
