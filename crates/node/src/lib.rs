//! quiver-live-native: the napi surface.
//!
//! Everything here is glue between JavaScript calling conventions (default
//! parameters, destructuring, truthiness checks, which error is thrown in
//! which order) and the napi-free core below, which `cargo test` exercises
//! alone. The store object handed to JS is a plain object whose methods are
//! closures over one native store, so they keep working when destructured.

// Node-API handles (`napi_value`, `napi_env`) are opaque pointers owned by V8
// and valid for the current call; the functions taking them never dereference
// them in Rust, they only hand them back to Node-API.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod bridge;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::ptr;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::sys::{self, napi_env, napi_value};
use napi_derive::napi;

use bridge::{attach, Js, JsResult, NodeHost, Pending, ToJs, Walker};
use quiver_live_core::session::snapshot_file::Snapshot;
use quiver_live_core::session::store::{self as store, Store};
use quiver_live_core::session::reducer;
use quiver_live_core::{lock, project as project_root};
use quiver_live_core::js::value::{self as value, JsStr, Value};

/// The phase names after which late generation events are fenced off, as a
/// JavaScript `Set` (the live server calls `.has`).
pub struct PhaseSet(&'static [&'static str]);

impl TypeName for PhaseSet {
    fn type_name() -> &'static str {
        "PhaseSet"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for PhaseSet {
    unsafe fn to_napi_value(env: napi_env, val: Self) -> Result<napi_value> {
        let js = Js { env };
        let make = || -> JsResult<napi_value> {
            let mut arr = ptr::null_mut();
            js.check(unsafe { sys::napi_create_array_with_length(env, val.0.len(), &mut arr) })?;
            for (i, name) in val.0.iter().enumerate() {
                js.check(unsafe { sys::napi_set_element(env, arr, i as u32, js.string(name)?) })?;
            }
            let ctor = js.get(js.global()?, "Set")?;
            let mut set = ptr::null_mut();
            js.check(unsafe { sys::napi_new_instance(env, ctor, 1, &arr, &mut set) })?;
            Ok(set)
        };
        Ok(make()?)
    }
}

/// Phases after which a late write from a canceled generation is journaled
/// as a diagnostic instead of applied.
#[napi]
pub const GENERATION_FENCED_PHASES: PhaseSet = PhaseSet(&reducer::GENERATION_FENCED_PHASES);

fn raw<'a>(env: &Env, v: napi_value) -> Unknown<'a> {
    unsafe { Unknown::from_raw_unchecked(env.raw(), v) }
}

/// Runs a body that reports failures as pending JS exceptions, turning a
/// panic into a thrown `Error` so none crosses into Node.
fn guarded<T>(js: Js, body: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            if js.exception_pending() {
                let _ = js.take_exception();
            }
            Err(js.throw_error(&format!("quiver-live-native internal error: {}", what)))
        }
    }
}

// ---------------------------------------------------------------------------
// Options and paths, as the JS destructures and resolves them

fn is_undefined(js: Js, v: napi_value) -> JsResult<bool> {
    js.is_type(v, sys::ValueType::napi_undefined)
}

/// `({ a, b } = {})` of an argument: `undefined` means `{}`, `null` throws.
fn options_object(js: Js, v: napi_value, first_key: &str) -> JsResult<Option<napi_value>> {
    match js.type_of(v)? {
        sys::ValueType::napi_undefined => Ok(None),
        sys::ValueType::napi_null => {
            Err(js.throw_type_error(&format!("Cannot destructure property '{}' of 'object null' as it is null.", first_key)))
        }
        _ => Ok(Some(v)),
    }
}

fn option(js: Js, opts: Option<napi_value>, key: &str) -> JsResult<Option<napi_value>> {
    let Some(o) = opts else { return Ok(None) };
    let v = js.get(o, key)?;
    Ok(if is_undefined(js, v)? { None } else { Some(v) })
}

fn process_cwd(js: Js) -> JsResult<PathBuf> {
    std::env::current_dir().map_err(|e| js.throw_error(&format!("process.cwd() failed: {}", e)))
}

/// `path.resolve(...)`'s argument check: a non-string throws Node's TypeError.
fn path_arg(js: Js, v: napi_value, index: usize) -> JsResult<String> {
    if js.is_type(v, sys::ValueType::napi_string)? {
        return Ok(js.to_js_str(v)?.to_lossy());
    }
    let received = describe_received(js, v)?;
    let msg = format!("The \"paths[{}]\" argument must be of type string. Received {}", index, received);
    let mut err = ptr::null_mut();
    let code = js.string("ERR_INVALID_ARG_TYPE")?;
    let text = js.string(&msg)?;
    js.check(unsafe { sys::napi_create_type_error(js.env, code, text, &mut err) })?;
    Err(js.throw(err))
}

fn describe_received(js: Js, v: napi_value) -> JsResult<String> {
    use sys::ValueType as T;
    Ok(match js.type_of(v)? {
        T::napi_null => "null".into(),
        T::napi_undefined => "undefined".into(),
        T::napi_object => "an instance of Object".into(),
        T::napi_function => "function".into(),
        T::napi_number => format!("type number ({})", value::number_to_string(js.to_f64(v)?)),
        T::napi_boolean => format!("type boolean ({})", js.to_bool(v)?),
        _ => "an unsupported value".into(),
    })
}

/// `path.resolve(cwd)` with `cwd` defaulting to `process.cwd()`. Like Node,
/// it asks for the process cwd only when `cwd` is missing or relative (so a
/// deleted process cwd does not matter to an absolute `cwd`).
fn resolve_cwd(js: Js, cwd: Option<napi_value>) -> JsResult<PathBuf> {
    let Some(v) = cwd else { return process_cwd(js) };
    let p = path_arg(js, v, 0)?;
    let base = if p.starts_with('/') { PathBuf::from("/") } else { process_cwd(js)? };
    Ok(project_root::resolve_lexical(&base, &p))
}

fn project_root_of(js: Js, abs_cwd: &Path) -> JsResult<PathBuf> {
    let home = project_root::home_dir();
    project_root::try_resolve_project_root(abs_cwd, home.as_deref())
        .map_err(|e| match e.name {
            "RangeError" => js.throw_range_error(e.message),
            _ => js.throw_type_error(e.message),
        })
}

// ---------------------------------------------------------------------------
// The session store

/// `sessionId` as given to `createLiveSessionStore`, kept as what the JS
/// checks need: its truthiness, whether it is a string, and `String(id)`.
#[derive(Clone)]
enum SessionDefault {
    Undefined,
    Str(JsStr),
    Other { truthy: bool, text: JsStr },
}

struct StoreState {
    env: napi_env,
    store: Store,
    session_default: SessionDefault,
    /// The JS object last handed out per session (weakly held), with the
    /// store version it shows: unchanged sessions return the same object, as
    /// the old module does.
    handed_out: HashMap<String, (u64, sys::napi_ref)>,
    /// Functions and symbols found in events, which snapshots refer to by
    /// index (`Value::Host`); held for the life of the store.
    foreign: Vec<sys::napi_ref>,
}

impl Drop for StoreState {
    fn drop(&mut self) {
        for (_, (_, r)) in self.handed_out.drain() {
            unsafe { sys::napi_delete_reference(self.env, r) };
        }
        for r in self.foreign.drain(..) {
            unsafe { sys::napi_delete_reference(self.env, r) };
        }
    }
}

type Shared = Rc<RefCell<StoreState>>;

/// A session id argument after the JS checks: `!id` throws
/// `session id required`, a non-string one `invalid session id: ...`.
fn session_id_arg(js: Js, state: &StoreState, v: napi_value) -> JsResult<String> {
    let id = if is_undefined(js, v)? { state.session_default.clone() } else { session_default_of(js, v)? };
    match id {
        SessionDefault::Undefined | SessionDefault::Other { truthy: false, .. } => Err(js.throw_error("session id required")),
        SessionDefault::Str(s) if s.is_empty() => Err(js.throw_error("session id required")),
        SessionDefault::Str(s) if s.as_str().is_some() => Ok(s.to_lossy()),
        SessionDefault::Str(s) | SessionDefault::Other { text: s, .. } => Err(js.throw_error_with("invalid session id: ", &s)),
    }
}

fn session_default_of(js: Js, v: napi_value) -> JsResult<SessionDefault> {
    use sys::ValueType as T;
    Ok(match js.type_of(v)? {
        T::napi_undefined => SessionDefault::Undefined,
        T::napi_string => SessionDefault::Str(js.to_js_str(v)?),
        T::napi_symbol => SessionDefault::Other { truthy: true, text: JsStr::from("Symbol()") },
        _ => SessionDefault::Other { truthy: js.truthy(v)?, text: js.coerce_string(v)? },
    })
}

impl StoreState {
    /// The JS object for the session's current snapshot: the one handed out
    /// before when nothing changed, a fresh conversion otherwise.
    fn js_snapshot(&mut self, js: Js, id: &str, version: u64, snapshot: &Snapshot) -> JsResult<napi_value> {
        if let Some((v, r)) = self.handed_out.get(id) {
            if *v == version {
                let mut out = ptr::null_mut();
                js.check(unsafe { sys::napi_get_reference_value(js.env, *r, &mut out) })?;
                if !out.is_null() {
                    return Ok(out);
                }
            }
        }
        let obj = match snapshot {
            Snapshot::Model(model) => ToJs { js, foreign: &self.foreign }.object(model)?,
            // The text passed the skim, so V8 accepts it: its own parser
            // builds the objects faster than any conversion through Node-API.
            Snapshot::Text(text) => js.call_global("JSON", "parse", &[js.string(&text.json)?])?,
        };
        // A weak reference: while the caller holds the object it comes back
        // identical, as the old module's cache returns it; once nobody does,
        // V8 may collect it (identity is then unobservable) without waiting
        // for this store to be finalized.
        let mut r = ptr::null_mut();
        js.check(unsafe { sys::napi_create_reference(js.env, obj, 0, &mut r) })?;
        match self.handed_out.get_mut(id) {
            Some(slot) => {
                let (_, old) = std::mem::replace(slot, (version, r));
                unsafe { sys::napi_delete_reference(js.env, old) };
            }
            None => {
                self.handed_out.insert(id.to_owned(), (version, r));
            }
        }
        Ok(obj)
    }

    fn js_for(&mut self, js: Js, id: &str, version: u64) -> JsResult<napi_value> {
        let Some(snapshot) = self.store.current(id) else {
            return Err(js.throw_error("quiver-live-native: session state missing"));
        };
        // Converting reads the store and touches only `handed_out`.
        let snapshot: *const Snapshot = snapshot;
        self.js_snapshot(js, id, version, unsafe { &*snapshot })
    }
}

fn state_of(js: Js, info: sys::napi_callback_info, argv: &mut [napi_value]) -> JsResult<Shared> {
    let mut argc = argv.len();
    let mut data: *mut c_void = ptr::null_mut();
    js.check(unsafe { sys::napi_get_cb_info(js.env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) })?;
    let shared = unsafe { &*(data as *const Shared) };
    Ok(shared.clone())
}

/// Wraps a store method: fetches its arguments and the shared state, refuses
/// re-entry (a JS callback calling back into the store mid-operation), and
/// turns failures into thrown exceptions.
fn method(env: napi_env, info: sys::napi_callback_info, body: fn(Js, &mut StoreState, &[napi_value]) -> JsResult<napi_value>) -> napi_value {
    let js = Js { env };
    let out = guarded(js, || {
        let mut argv = [ptr::null_mut(); 2];
        let shared = state_of(js, info, &mut argv)?;
        for a in argv.iter_mut() {
            if a.is_null() {
                *a = js.undefined()?;
            }
        }
        let mut state = shared.try_borrow_mut().map_err(|_| js.throw_error("quiver-live-native: store re-entered during an operation"))?;
        body(js, &mut state, &argv)
    });
    out.unwrap_or(ptr::null_mut())
}

unsafe extern "C" fn append_event_cb(env: napi_env, info: sys::napi_callback_info) -> napi_value {
    method(env, info, append_event)
}
unsafe extern "C" fn has_cb(env: napi_env, info: sys::napi_callback_info) -> napi_value {
    method(env, info, has)
}
unsafe extern "C" fn get_snapshot_cb(env: napi_env, info: sys::napi_callback_info) -> napi_value {
    method(env, info, get_snapshot)
}
unsafe extern "C" fn flush_cb(env: napi_env, info: sys::napi_callback_info) -> napi_value {
    method(env, info, flush)
}
unsafe extern "C" fn list_active_sessions_cb(env: napi_env, info: sys::napi_callback_info) -> napi_value {
    method(env, info, list_active_sessions)
}

/// `appendEvent(event)`: the old module's checks in its order, then the append.
fn append_event(js: Js, state: &mut StoreState, args: &[napi_value]) -> JsResult<napi_value> {
    let event = args[0];
    if !js.truthy(event)? || !js.is_type(event, sys::ValueType::napi_object)? {
        return Err(js.throw_error("event object required"));
    }
    let own_id = js.get(event, "id")?;
    let id = if js.truthy(own_id)? { session_default_of(js, own_id)? } else { state.session_default.clone() };
    let id = match id {
        SessionDefault::Str(s) if !s.is_empty() => s,
        _ => return Err(js.throw_error("event id required")),
    };
    let ty = js.get(event, "type")?;
    if !js.truthy(ty)? || !js.is_type(ty, sys::ValueType::napi_string)? {
        return Err(js.throw_error("event type required"));
    }
    let mut walker = Walker { js, exotic: false, foreign: &mut state.foreign };
    let mut normalized = walker.object(event, 0)?;
    normalized.set_js(JsStr::from("id"), Value::String(id.clone()));
    let exotic = walker.exotic;
    let id_text = match id.as_str() {
        Some(s) => s.to_owned(),
        None => return Err(js.throw_error_with("invalid session id: ", &id)),
    };
    store::safe_session_id(&id_text).map_err(|e| js.throw_store_error(&e))?;
    let host = NodeHost { js };
    let event_json = if exotic {
        match v8_stringify_normalized(js, event, &id) {
            Ok(text) => Some(text),
            Err(Pending) => {
                // The old module reads the session's state before it
                // serializes the entry, so a refused event still leaves that
                // state cached (visible later, e.g. once the snapshot file
                // is gone). Do the same read (it writes nothing), then throw
                // V8's error.
                let thrown = js.take_exception()?;
                state.store.read(&id_text, true, &host).map_err(|e| js.throw_store_error(&e))?;
                return Err(js.throw(thrown));
            }
        }
    } else {
        None
    };
    let id = id_text;
    let version = state
        .store
        .append(&id, Value::Object(normalized), event_json, &host)
        .map_err(|e| js.throw_store_error(&e))?
        .version;
    state.js_for(js, &id, version)
}

/// `JSON.stringify({ ...event, id })` by V8 itself, for events holding values
/// only V8 knows how to render (or to refuse, with its own error).
fn v8_stringify_normalized(js: Js, event: napi_value, id: &JsStr) -> JsResult<String> {
    let copy = js.object()?;
    for key in js.own_keys(event)? {
        let mut v = ptr::null_mut();
        js.check(unsafe { sys::napi_get_property(js.env, event, key, &mut v) })?;
        js.define(copy, key, v)?;
    }
    js.define(copy, js.string("id")?, js.js_string(id)?)?;
    let text = js.call_global("JSON", "stringify", &[copy])?;
    Ok(js.to_js_str(text)?.to_lossy())
}

fn has(js: Js, state: &mut StoreState, args: &[napi_value]) -> JsResult<napi_value> {
    let v = args[0];
    if !js.truthy(v)? || !js.is_type(v, sys::ValueType::napi_string)? {
        return js.boolean(false);
    }
    let id = js.to_js_str(v)?;
    let Some(id) = id.as_str() else {
        return Err(js.throw_error_with("invalid session id: ", &id));
    };
    let found = state.store.has(id).map_err(|e| js.throw_store_error(&e))?;
    js.boolean(found)
}

fn include_completed(js: Js, opts: napi_value) -> JsResult<bool> {
    match js.type_of(opts)? {
        sys::ValueType::napi_undefined => Ok(false),
        sys::ValueType::napi_null => Err(js.throw_type_error("Cannot read properties of null (reading 'includeCompleted')")),
        _ => js.truthy(js.get(opts, "includeCompleted")?),
    }
}

fn get_snapshot(js: Js, state: &mut StoreState, args: &[napi_value]) -> JsResult<napi_value> {
    let id = session_id_arg(js, state, args[0])?;
    snapshot_unless_completed(js, state, &id, Some(args[1]))
}

fn snapshot_unless_completed(js: Js, state: &mut StoreState, id: &str, opts: Option<napi_value>) -> JsResult<napi_value> {
    let host = NodeHost { js };
    let view = state.store.read(id, true, &host).map_err(|e| js.throw_store_error(&e))?;
    let (version, completed) = (view.version, view.snapshot.is_completed());
    let include = match opts {
        Some(o) => include_completed(js, o)?,
        None => false,
    };
    if completed && !include {
        return js.null();
    }
    state.js_for(js, id, version)
}

fn flush(js: Js, state: &mut StoreState, args: &[napi_value]) -> JsResult<napi_value> {
    let id = session_id_arg(js, state, args[0])?;
    let host = NodeHost { js };
    let version = state.store.flush(&id, &host).map_err(|e| js.throw_store_error(&e))?.version;
    state.js_for(js, &id, version)
}

fn list_active_sessions(js: Js, state: &mut StoreState, _args: &[napi_value]) -> JsResult<napi_value> {
    let host = NodeHost { js };
    let active = state.store.list_active(&host).map_err(|e| js.throw_store_error(&e))?;
    let mut out = ptr::null_mut();
    js.check(unsafe { sys::napi_create_array_with_length(js.env, active.len(), &mut out) })?;
    for (i, (id, version)) in active.iter().enumerate() {
        let snapshot = state.js_for(js, id, *version)?;
        js.check(unsafe { sys::napi_set_element(js.env, out, i as u32, snapshot) })?;
    }
    Ok(out)
}

fn add_method(js: Js, target: napi_value, name: &str, cb: sys::napi_callback, shared: &Shared) -> JsResult<()> {
    let data = Box::new(shared.clone());
    let data_ptr = Box::into_raw(data);
    let mut f = ptr::null_mut();
    let status = unsafe { sys::napi_create_function(js.env, name.as_ptr().cast(), name.len() as isize, cb, data_ptr.cast(), &mut f) };
    let data = unsafe { Box::from_raw(data_ptr) };
    js.check(status)?;
    attach(js, f, data)?;
    js.set(target, name, f)
}

/// Creates a session store for the project that `cwd` belongs to. Mirrors the
/// old module's `createLiveSessionStore({ cwd, sessionId })`; `durable: true`
/// also fsyncs every append before it returns.
#[napi(
    catch_unwind,
    ts_args_type = "options?: LiveSessionStoreOptions",
    ts_return_type = "LiveSessionStore"
)]
pub fn create_live_session_store<'a>(env: Env, options: Unknown<'a>) -> Result<Unknown<'a>> {
    let js = Js { env: env.raw() };
    let out = guarded(js, || create_store(js, options.raw()))?;
    Ok(raw(&env, out))
}

fn create_store(js: Js, options: napi_value) -> JsResult<napi_value> {
    let opts = options_object(js, options, "cwd")?;
    let abs_cwd = resolve_cwd(js, option(js, opts, "cwd")?)?;
    let session_default = match option(js, opts, "sessionId")? {
        None => SessionDefault::Undefined,
        Some(v) => session_default_of(js, v)?,
    };
    let durable = match option(js, opts, "durable")? {
        None => false,
        Some(v) => js.truthy(v)?,
    };
    let root = project_root_of(js, &abs_cwd)?;
    let store = Store::open(&root, durable).map_err(|e| js.throw_fs_error(&e))?;
    let obj = js.object()?;
    js.set(obj, "rootDir", js.string(&store.root_dir.to_string_lossy())?)?;
    js.set(obj, "legacyRootDir", js.string(&store.legacy_root_dir.to_string_lossy())?)?;
    let shared: Shared = Rc::new(RefCell::new(StoreState { env: js.env, store, session_default, handed_out: HashMap::new(), foreign: Vec::new() }));
    add_method(js, obj, "appendEvent", Some(append_event_cb), &shared)?;
    add_method(js, obj, "has", Some(has_cb), &shared)?;
    add_method(js, obj, "getSnapshot", Some(get_snapshot_cb), &shared)?;
    add_method(js, obj, "flush", Some(flush_cb), &shared)?;
    add_method(js, obj, "listActiveSessions", Some(list_active_sessions_cb), &shared)?;
    Ok(obj)
}

// ---------------------------------------------------------------------------
// The source lock

fn lock_target(js: Js, file: napi_value, cwd: Option<napi_value>) -> JsResult<(PathBuf, String)> {
    let abs_cwd = resolve_cwd(js, cwd)?;
    let abs_file = project_root::resolve_lexical(&abs_cwd, &path_arg(js, file, 1)?);
    let root = project_root_of(js, &abs_cwd)?;
    let live_dir = root.join(".impeccable").join("live");
    let abs_file = abs_file.to_string_lossy().into_owned();
    Ok((lock::lock_path(&live_dir, &abs_file), abs_file))
}

/// The lock file guarding `file`: `<root>/.impeccable/live/locks/<24 hex>.lock`.
#[napi(catch_unwind, ts_args_type = "file: string, cwd?: string", ts_return_type = "string")]
pub fn source_lock_path<'a>(env: Env, file: Unknown<'a>, cwd: Unknown<'a>) -> Result<Unknown<'a>> {
    let js = Js { env: env.raw() };
    let out = guarded(js, || {
        let cwd = if is_undefined(js, cwd.raw())? { None } else { Some(cwd.raw()) };
        let (path, _) = lock_target(js, file.raw(), cwd)?;
        js.string(&path.to_string_lossy())
    })?;
    Ok(raw(&env, out))
}

/// Runs `fn` while holding the cross-process lock for `file`; see the README.
#[napi(
    catch_unwind,
    ts_args_type = "file: string, owner: unknown, fn: () => T, options?: SourceLockOptions",
    ts_return_type = "T",
    ts_generic_types = "T"
)]
pub fn with_source_lock_sync<'a>(env: Env, file: Unknown<'a>, owner: Unknown<'a>, callback: Unknown<'a>, options: Unknown<'a>) -> Result<Unknown<'a>> {
    let js = Js { env: env.raw() };
    let out = guarded(js, || run_locked(js, file.raw(), owner.raw(), callback.raw(), options.raw()))?;
    Ok(raw(&env, out))
}

fn run_locked(js: Js, file: napi_value, owner: napi_value, callback: napi_value, options: napi_value) -> JsResult<napi_value> {
    let opts = options_object(js, options, "cwd")?;
    let (lock_path, abs_file) = lock_target(js, file, option(js, opts, "cwd")?)?;
    let wait_ms = match option(js, opts, "waitMs")? {
        None => 0.0,
        Some(v) => js.coerce_number(v)?,
    };
    let retry_ms = match option(js, opts, "retryMs")? {
        None => 5.0,
        Some(v) => js.coerce_number(v)?,
    };
    let owner_json = owner_text(js, owner)?;
    let acquired = lock::acquire(&lock_path, owner_json.as_deref(), &abs_file, wait_ms, retry_ms).map_err(|e| throw_lock_error(js, e))?;
    let result = if js.is_type(callback, sys::ValueType::napi_function)? {
        js.undefined().and_then(|this| js.call(this, callback, &[]))
    } else {
        Err(js.throw_type_error("fn is not a function"))
    };
    // Release whatever happened; a pending exception (the very object `fn`
    // threw) stays pending and reaches the caller unchanged.
    lock::release(&acquired);
    result
}

/// `JSON.stringify(owner)` by V8, or `None` when it has no JSON form.
fn owner_text(js: Js, owner: napi_value) -> JsResult<Option<String>> {
    let text = js.call_global("JSON", "stringify", &[owner])?;
    if is_undefined(js, text)? {
        return Ok(None);
    }
    Ok(Some(js.to_js_str(text)?.to_lossy()))
}

fn throw_lock_error(js: Js, e: lock::LockError) -> Pending {
    match e {
        lock::LockError::Locked { lock_path } => {
            let build = || -> JsResult<napi_value> {
                let msg = js.string("source_locked")?;
                let mut err = ptr::null_mut();
                js.check(unsafe { sys::napi_create_error(js.env, ptr::null_mut(), msg, &mut err) })?;
                js.set(err, "code", js.string("SOURCE_LOCKED")?)?;
                js.set(err, "lockPath", js.string(&lock_path.to_string_lossy())?)?;
                Ok(err)
            };
            match build() {
                Ok(err) => js.throw(err),
                Err(p) => p,
            }
        }
        lock::LockError::Fs(e) => js.throw_fs_error(&e),
    }
}

