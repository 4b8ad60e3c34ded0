//! quiver-live-native's Node-API binding: `#[napi]` items only. The JS
//! wrapper (`index.js` at the package root) gives them the old module's
//! calling conventions; the work is done by `quiver-live-core`.

mod convert;
mod env;
mod errors;
mod host;
mod lock;
mod store;

use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use quiver_live_core::project;
use quiver_live_core::session::schema::{ADDED_FIELDS, COMPLETED_PHASES, EVENT_TYPES, FIELDS, GENERATION_FENCED_PHASES, MOUNT_FAILURE_HISTORY};
use quiver_live_core::session::store::safe_session_id;

use env::{ErrorKind, Js, JsResult};

pub use lock::{lock_path, try_lock, unlock};
pub use store::{store_append, store_append_json, store_drop_unrendered, store_flush, store_has, store_open, store_persist, store_read, store_read_active, store_snapshot};

/// The project root of an absolute, resolved `cwd` (`home` is
/// `os.homedir()`), as quiver-cli resolves it.
#[napi]
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
#[napi]
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

#[napi]
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
