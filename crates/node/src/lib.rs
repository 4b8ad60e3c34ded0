//! quiver-live-native's Node-API binding: `#[napi]` items only. The JS
//! wrapper (`lib/api.cjs`, made over this binding by `index.js`) gives them the old module's
//! calling conventions; the work is done by `quiver-live-core`.

mod boundary;
mod convert;
mod engine;
mod env;
mod errors;
#[cfg(feature = "faults")]
mod faults;
mod host;
mod inspect;
mod lock;
mod store;

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use quiver_live_core::project;
use quiver_live_core::session::schema::{ADDED_FIELDS, COMPLETED_PHASES, EVENT_TYPES, FIELDS, GENERATION_FENCED_PHASES, MOUNT_FAILURE_HISTORY};
use quiver_live_core::project::layout::{self, Layout};

use env::{Js, JsResult};

pub use boundary::boundary;
#[cfg(feature = "faults")]
pub use faults::{fault_arm, fault_disarm};
pub use lock::{lock_path, try_lock, unlock};
pub use store::{store_append, store_append_json, store_drop_unrendered, store_flush, store_has, store_open, store_open_read_only, store_persist, store_read, store_read_active, store_snapshot};

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
    project::try_resolve_project_root(Path::new(abs_cwd), Some(Path::new(home))).map_err(|e| errors::throw(js, &e))
}

/// Whether `id` may name a session (`[A-Za-z0-9_-]{1,128}`).
#[napi(catch_unwind)]
pub fn is_session_id(id: String) -> bool {
    layout::is_session_id(&id)
}

/// `isSessionId`'s rule as the source of a regular expression matching one
/// id, unanchored: for messages saying what an id may be.
#[napi(catch_unwind)]
pub fn session_id_pattern() -> String {
    layout::session_id_pattern()
}

/// Where the live server's files are under a project root, and how they are
/// named (the core's `project::layout`): everything the CLI needs to find
/// them without spelling a name itself.
#[napi(object)]
pub struct ProjectLayout {
    /// The live directory, which holds the sessions and locks directories.
    pub live_dir: String,
    pub sessions_dir: String,
    pub legacy_sessions_dir: String,
    pub locks_dir: String,
    pub journal_suffix: String,
    pub snapshot_suffix: String,
    pub lock_suffix: String,
    /// The source of a regular expression matching the name of a staged
    /// snapshot file (`.<id>.<12 hex>`), capturing its session id.
    pub staged_name_pattern: String,
    /// How long an unlocked staged file must have been left untouched
    /// before a sweep removes it.
    pub staged_min_age_ms: f64,
}

/// The layout of the project rooted at `root` (a resolved project root, see
/// `projectRootOf`).
#[napi(catch_unwind)]
pub fn layout(root: String) -> ProjectLayout {
    let l = Layout::of(Path::new(&root));
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    ProjectLayout {
        live_dir: text(l.live_dir),
        sessions_dir: text(l.sessions_dir),
        legacy_sessions_dir: text(l.legacy_sessions_dir),
        locks_dir: text(l.locks_dir),
        journal_suffix: layout::JOURNAL_SUFFIX.into(),
        snapshot_suffix: layout::SNAPSHOT_SUFFIX.into(),
        lock_suffix: layout::LOCK_SUFFIX.into(),
        staged_name_pattern: layout::staged_name_pattern(),
        staged_min_age_ms: layout::STAGED_MIN_AGE.as_secs_f64() * 1000.0,
    }
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

/// What the store makes of a lock file (the core's `lock::Verdict`).
#[napi(string_enum = "snake_case")]
pub enum LockVerdict {
    /// No lock file there.
    Absent,
    /// Held: its pid is alive and not shown to be another process.
    OwnerAlive,
    /// Held: unreadable, but younger than `LOCK_UNREADABLE_STALE_MS`
    /// (possibly caught between its creation and its write).
    UnreadableFresh,
    /// Stale: no process has its pid.
    OwnerGone,
    /// Stale: readable, but its `pid` is not a number.
    NoNumericPid,
    /// Stale: written during an earlier boot.
    EarlierBoot,
    /// Stale: its pid belongs to a process started after the lock was written.
    PidReused,
    /// Stale: unreadable, and older than `LOCK_UNREADABLE_STALE_MS`.
    UnreadableOld,
}

/// How long a lock file that cannot be read is held before it is stale.
#[napi]
pub const LOCK_UNREADABLE_STALE_MS: f64 = quiver_live_core::lock::UNREADABLE_STALE_MS;

/// The store's judgement of a lock file, for the CLI.
#[napi(object)]
pub struct LockJudgement {
    pub verdict: LockVerdict,
    /// Whether the verdict lets anyone remove the lock.
    pub stale: bool,
}

/// Judges the lock file at `path` as the store does before sweeping it.
#[napi(catch_unwind)]
pub fn judge_lock(path: String) -> LockJudgement {
    let (verdict, stale) = inspect::lock_verdict(&path);
    LockJudgement { verdict, stale }
}

/// Removes the lock at `path` if the store judges it stale right now (and
/// it is still the file judged); whether it did.
#[napi(catch_unwind)]
pub fn clear_stale_lock(path: String) -> bool {
    quiver_live_core::lock::clear_stale(Path::new(&path))
}

/// A part of the snapshot-file trust rule (the core's
/// `snapshot_file::Distrust`): readers trust a file only when it breaks none.
#[napi(string_enum = "snake_case")]
pub enum SnapshotDistrust {
    /// Not JSON.
    Unparsable,
    /// JSON, but not an object.
    NotObject,
    /// `__journalBytes` is not the journal's size.
    JournalBytes,
    /// `__nextSeq` is not an integer.
    NextSeq,
    /// `id` is not the session's.
    Id,
}

/// A part of the snapshot-file trust rule a file breaks.
#[napi(object)]
pub struct Distrust {
    pub rule: SnapshotDistrust,
    /// The file's value for that rule's key as JSON text (absent for `undefined`).
    pub found: Option<String>,
}

/// Why readers would not trust a snapshot file holding `bytes` for session
/// `id` and a journal of `journal_bytes` bytes: empty when they would.
#[napi(catch_unwind)]
pub fn judge_snapshot_file(bytes: Buffer, id: String, journal_bytes: i64) -> Vec<Distrust> {
    let broken = inspect::snapshot_distrust(&bytes, &id, u64::try_from(journal_bytes).unwrap_or(u64::MAX));
    broken.into_iter().map(|(rule, found)| Distrust { rule, found }).collect()
}

/// The `error` of the diagnostic a replay records for a journal line it
/// rejects.
#[napi]
pub const JOURNAL_PARSE_FAILED: &str = quiver_live_core::session::journal::PARSE_FAILED;

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

/// What a sweep makes of a staged snapshot file (see `StagedFile::judge`).
#[napi(string_enum = "snake_case")]
pub enum StagedFileVerdict {
    /// Its writer holds its lock: between creating it and its rename.
    InUse,
    /// Unlocked but touched within the last minute: possibly an append
    /// between staging and its rename (appends do not lock it), or a flush
    /// that has not taken its lock yet.
    Fresh,
    /// Left behind by a writer: a sweep (every `flush`) removes it.
    Abandoned,
}

/// How a sweep judges the file at `path`, when its name is a staged
/// snapshot file's (`.<id>.<12 hex>`); `null` for any other name, or when
/// no regular file is there.
#[napi(catch_unwind)]
pub fn staged_file_verdict(path: String) -> Option<StagedFileVerdict> {
    inspect::staged_verdict(Path::new(&path))
}
