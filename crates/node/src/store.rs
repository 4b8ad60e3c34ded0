//! The session store as functions over a handle the JS wrapper (`lib/api.cjs`)
//! holds: the wrapper does what JavaScript does best (defaults,
//! destructuring, the old module's argument checks and their messages,
//! `JSON.stringify` of the entry, `new Date()`), this does the rest.
//!
//! The handle is an `External`, not a `#[napi]` class: napi-rs registers a
//! class method's receiver in a process-wide borrow table (a mutex and a
//! hash map) on every call, about 0.35 µs: a sixth of a cached
//! `getSnapshot`. Re-entrance is refused by the `RefCell` below either way.

use std::cell::{RefCell, RefMut};
use std::path::Path;

use napi::bindgen_prelude::*;
use napi::sys::{self, napi_value};
use napi_derive::napi;
use quiver_live_core::js::{json, Value};
use quiver_live_core::session::answers::Answers;
use quiver_live_core::session::host::HostOp;
use quiver_live_core::session::snapshot_file::Cached;
use quiver_live_core::session::store::{safe_session_id, Changed, NewEvent, Store, StoreError};

use crate::boundary::{PayloadKind, MATERIALIZE, START_WALK};
use crate::convert::{from_js, Payload};
use crate::env::{unknown as raw, Js, JsResult};
use crate::errors;
use crate::host;

/// What a handle holds: the store's state, borrowed for one operation at a
/// time.
pub struct NativeStore {
    state: RefCell<State>,
}

struct State {
    store: Store,
    /// Values only V8 can hold (functions, symbols) found in events, which
    /// snapshots name by index (`Value::Host`); `None` once released, its
    /// index free for reuse.
    kept: Vec<Option<sys::napi_ref>>,
    free: Vec<u32>,
    /// How many were held after the last sweep (see [`State::sweep_kept`]).
    held_after_sweep: usize,
    /// The wrapper's `HOST_OPS`: the JavaScript the store asks V8 to run
    /// (see [`NativeStore::operate`]).
    ops: sys::napi_ref,
    env: sys::napi_env,
}

/// The fewest values held before a sweep looks for unreferenced ones.
const SWEEP_FLOOR: usize = 64;

impl Drop for State {
    fn drop(&mut self) {
        let js = Js::new(self.env);
        for r in self.kept.drain(..).flatten() {
            js.delete_reference(r);
        }
        js.delete_reference(self.ops);
    }
}


/// Opens the store of a project root, creating its sessions directory:
/// `[handle, rootDir, legacyRootDir]`. `ops` is the wrapper's `HOST_OPS`.
#[napi(catch_unwind)]
pub fn store_open(env: Env, project_root: String, durable: bool, ops: Object) -> Result<(External<NativeStore>, String, String)> {
    let js = Js::new(env.raw());
    let store = Store::open(Path::new(&project_root), durable).map_err(|e| errors::throw_fs(js, &e))?;
    handle(env, store, ops)
}

/// [`store_open`] for reading only (the CLI's): nothing is created, swept
/// or written; `storeAppend`, `storeAppendJson`, `storeFlush` and
/// `storePersist` on it throw, and write nothing.
#[napi(catch_unwind)]
pub fn store_open_read_only(env: Env, project_root: String, ops: Object) -> Result<(External<NativeStore>, String, String)> {
    handle(env, Store::open_read_only(Path::new(&project_root)), ops)
}

fn handle(env: Env, store: Store, ops: Object) -> Result<(External<NativeStore>, String, String)> {
    let js = Js::new(env.raw());
    let (root_dir, legacy_root_dir) = (store.root_dir.to_string_lossy().into_owned(), store.legacy_root_dir.to_string_lossy().into_owned());
    let ops = js.reference(ops.raw())?;
    let state = RefCell::new(State { store, kept: Vec::new(), free: Vec::new(), held_after_sweep: 0, ops, env: env.raw() });
    Ok((External::new(NativeStore { state }), root_dir, legacy_root_dir))
}

/// Whether a journal exists for a valid id in either directory.
#[napi(catch_unwind)]
pub fn store_has(env: Env, store: &External<NativeStore>, id: String) -> Result<bool> {
    let js = Js::new(env.raw());
    Ok(store.state(js)?.store.has(&id).map_err(|e| errors::throw_store(js, &e))?)
}

/// Brings the session's snapshot up to date; returns its version, or -1
/// when `id` cannot name a session (the wrapper words that error).
#[napi(catch_unwind)]
pub fn store_read(env: Env, store: &External<NativeStore>, id: String) -> Result<f64> {
    if safe_session_id(&id).is_err() {
        return Ok(-1.0);
    }
    let js = Js::new(env.raw());
    Ok(store.answered(js, |state, answers| state.store.read_version(&id, answers).map(|v| v as f64))?)
}

/// Re-derives the session from its journal and rewrites its snapshot
/// file; returns `[version, what its file awaits]` (see [`store_persist`]).
#[napi(catch_unwind)]
pub fn store_flush(env: Env, store: &External<NativeStore>, id: String) -> Result<(f64, Option<Vec<f64>>)> {
    let js = Js::new(env.raw());
    let version = store.answered(js, |state, answers| state.store.flush(&id, answers).map(|v| v.version as f64))?;
    Ok((version, awaited_render(&*store.state(js)?, &id)))
}

/// `[__journalBytes, __nextSeq]` when the snapshot file of the session's
/// current state is left for V8 to render (see [`store_persist`]), else
/// `None`.
fn awaited_render(state: &State, id: &str) -> Option<Vec<f64>> {
    state.store.awaited_render(id).map(|(bytes, next_seq)| vec![bytes as f64, next_seq])
}

/// Writes the snapshot file of `version`, which an append or a flush left
/// for V8 to render: `text` is the wrapper's `JSON.stringify` of the
/// snapshot with its two bookkeeping keys, as the old module writes it.
/// Where that throws, the wrapper calls [`store_drop_unrendered`] instead.
#[napi(catch_unwind)]
pub fn store_persist(env: Env, store: &External<NativeStore>, id: String, version: f64, text: String) -> Result<()> {
    let js = Js::new(env.raw());
    let mut state = store.state(js)?;
    state.store.persist_rendered(&id, version as u64, &text).map_err(|e| errors::throw_store(js, &e))?;
    Ok(())
}

/// What becomes of a session whose snapshot file V8 could not render (see
/// `Store::drop_unrendered`): whether its state, and the object handed out
/// for it, stay (after a flush) or go (after an append).
#[napi(catch_unwind)]
pub fn store_drop_unrendered(env: Env, store: &External<NativeStore>, id: String) -> Result<bool> {
    let js = Js::new(env.raw());
    Ok(store.state(js)?.store.drop_unrendered(&id))
}

/// Journals `{ ...event, id }` as `entry` (`JSON.stringify` of the whole
/// entry with `seq: 0`, which is replaced), stamped `ts`. Returns
/// `[version, snapshot payload against base, what the snapshot file
/// awaits]` (see [`store_snapshot`] and [`store_flush`]). `hold` says the
/// event has own symbol-keyed members, which the model has no place for: it
/// is then held too, for V8 to copy into the pending event.
// One call per append carries all the wrapper has prepared: a struct would
// cost an object per append.
#[allow(clippy::too_many_arguments)]
#[napi(catch_unwind, ts_return_type = "[number, string | [number, string, string | null, Array<unknown>], [number, number] | null]")]
pub fn store_append<'a>(env: &'a Env, store: &External<NativeStore>, id: String, event: Unknown, entry: String, ts: Unknown, base: f64, hold: bool) -> Result<Unknown<'a>> {
    let js = Js::new(env.raw());
    let start_walk = store.state(js)?.op(js, START_WALK)?;
    let mut found = Vec::new();
    let value = from_js(js, event.raw(), &mut found, start_walk)?;
    let ts = from_js(js, ts.raw(), &mut found, start_walk)?;
    let mut state = store.state(js)?;
    let (value, ts) = state.keep(js, found, value, ts)?;
    let held = if hold { Some(Value::Host(state.hold(js, event.raw())?)) } else { None };
    drop(state);
    Ok(raw(env, store.append_event(js, &id, NewEvent { value, ts, entry, held }, base)?))
}

/// [`store_append`] for an event whose JSON text says all of it (no
/// `undefined`, `NaN`, `-0`, function or symbol anywhere): the model is
/// parsed from `entry` instead of read through Node-API.
#[napi(catch_unwind, ts_return_type = "[number, string | [number, string, string | null, Array<unknown>], [number, number] | null]")]
pub fn store_append_json<'a>(env: &'a Env, store: &External<NativeStore>, id: String, entry: String, base: f64) -> Result<Unknown<'a>> {
    let js = Js::new(env.raw());
    let Some(mut parsed) = json::parse(&entry).ok().and_then(Value::into_object) else {
        return Err(errors::throw_error(js, "quiver-live-native: the entry text is not a JSON object").into());
    };
    let value = parsed.remove("event").unwrap_or(Value::Undefined);
    let ts = parsed.remove("ts").unwrap_or(Value::Undefined);
    Ok(raw(env, store.append_event(js, &id, NewEvent { value, ts, entry, held: None }, base)?))
}

/// The session's current snapshot for `JSON.parse`: its text, or
/// `[kind, text, patches, kept values]`, where the kind ([`PayloadKind`])
/// says whether the text holds the whole snapshot or only the fields that
/// changed since version `base` (the wrapper holds that one); `patches` is
/// null when JSON carries everything.
#[napi(catch_unwind, ts_return_type = "string | [number, string, string | null, Array<unknown>]")]
pub fn store_snapshot<'a>(env: &'a Env, store: &External<NativeStore>, id: String, base: f64) -> Result<Unknown<'a>> {
    let js = Js::new(env.raw());
    // A session read as unchanged since its state was dropped (see
    // `Store::read_version`) is derived again for its payload.
    if store.state(js)?.store.current(&id).is_none() {
        store.answered(js, |state, answers| state.store.read(&id, true, answers).map(|_| ()))?;
    }
    Ok(raw(env, store.state(js)?.payload_for(js, &id, base)?))
}

/// The sessions `listActiveSessions()` returns, in JS sort order,
/// brought up to date: `[ids, versions]`.
#[napi(catch_unwind)]
pub fn store_read_active(env: Env, store: &External<NativeStore>) -> Result<(Vec<String>, Vec<f64>)> {
    let js = Js::new(env.raw());
    let active = store.answered(js, |state, answers| state.store.read_active(answers))?;
    Ok(active.into_iter().map(|(id, version)| (id, version as f64)).unzip())
}

/// Panics, on purpose, halfway through an operation on the session `id`
/// (its state read and borrowed): the only way to show from JavaScript that
/// a panic becomes a thrown Error and leaves the store usable. Only in the
/// test build (the `test-hooks` feature): no release binary has it.
#[cfg(feature = "test-hooks")]
#[napi(catch_unwind)]
pub fn store_panic_for_test(env: Env, store: &External<NativeStore>, id: String) -> Result<()> {
    let js = Js::new(env.raw());
    store.answered(js, |state, answers| {
        state.store.read(&id, true, answers)?;
        panic!("quiver-live-native: the panic store_panic_for_test asked for")
    })?;
    Ok(())
}

/// The state, borrowed for one operation. A panic inside it (a bug: the
/// entry points turn it into a thrown Error) may leave a derivation half
/// changed, so unwinding drops every cached one, and the next call derives
/// them again from the files, which a panic never leaves half written
/// (appends are single writes, snapshot files are renamed into place).
struct Borrowed<'a>(RefMut<'a, State>);

impl Drop for Borrowed<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store.forget();
        }
    }
}

impl std::ops::Deref for Borrowed<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.0
    }
}

impl std::ops::DerefMut for Borrowed<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.0
    }
}

/// How many times an operation is run again with new answers from V8 before
/// it gives up: each run asks only what the journal's lines added since the
/// run before need, so only a peer appending lines that need V8 as fast as
/// this reads them gets this far.
const ATTEMPTS: usize = 16;

impl NativeStore {
    /// The state, or a thrown error when JS the store's caller runs inside
    /// an operation (none does: see [`NativeStore::answered`]) calls it.
    fn state(&self, js: Js) -> JsResult<Borrowed<'_>> {
        let state = self.state.try_borrow_mut().map_err(|_| errors::throw_error(js, "quiver-live-native: store re-entered during an operation"))?;
        Ok(Borrowed(state))
    }

    /// Runs a store operation, which never runs JavaScript: when it needs
    /// answers from V8 it stops without keeping or writing anything, and
    /// they are asked here, with no lock held and the state released, before
    /// it runs again.
    fn answered<T>(&self, js: Js, mut op: impl FnMut(&mut State, &Answers) -> std::result::Result<T, StoreError>) -> JsResult<T> {
        let mut answers = Answers::default();
        for _ in 0..ATTEMPTS {
            let outcome = {
                let mut state = self.state(js)?;
                op(&mut state, &answers)
            };
            match outcome {
                Err(StoreError::Unanswered) => self.answer(js, &mut answers)?,
                Err(StoreError::HostThrew(h)) => {
                    let thrown = self.state(js)?.kept_value(js, h)?;
                    return Err(js.throw(thrown));
                }
                other => return other.map_err(|e| errors::throw_store(js, &e)),
            }
        }
        Err(errors::throw_error(js, "quiver-live-native: the journal kept changing while it was read; nothing was written"))
    }

    /// Asks V8 the questions the last attempt of an operation left open
    /// (see [`host::answer`]), the operation on values only V8 can
    /// interpret included.
    fn answer(&self, js: Js, answers: &mut Answers) -> JsResult<()> {
        if let Some((op, operands)) = host::answer(js, answers)? {
            let outcome = js.scoped(|| self.operate(js, op, &operands))?;
            answers.answer_operation(outcome);
        }
        Ok(())
    }

    /// Runs the wrapper's function for `op` on `operands`: what it returns,
    /// in the model or held whole (see [`HostOp::holds_answer`]), or the
    /// handle of what it threw. The state is borrowed only to build the
    /// operands and to keep what came back, never while the caller's code
    /// runs (it may call the store).
    fn operate(&self, js: Js, op: HostOp, operands: &[Value]) -> JsResult<std::result::Result<Value, u32>> {
        let (f, start_walk, args) = {
            let state = self.state(js)?;
            let args = operands.iter().map(|v| state.to_js(js, v)).collect::<JsResult<Vec<_>>>()?;
            (state.op(js, op.name())?, state.op(js, START_WALK)?, args)
        };
        let Ok(result) = js.call(f, f, &args) else {
            let thrown = js.take_exception()?;
            return Ok(Err(self.state(js)?.hold(js, thrown)?));
        };
        if op.holds_answer() {
            return Ok(Ok(Value::Host(self.state(js)?.hold(js, result)?)));
        }
        let mut found = Vec::new();
        let value = from_js(js, result, &mut found, start_walk)?;
        Ok(Ok(self.state(js)?.keep(js, found, value, Value::Undefined)?.0))
    }

    /// Appends, and returns `[version, payload against base, what the
    /// snapshot file awaits]`. Once the line is written the event is gone, and a
    /// run that still needs answers finishes as a flush, which derives the
    /// same state from the journal and writes the snapshot file.
    fn append_event(&self, js: Js, id: &str, event: NewEvent, base: f64) -> JsResult<napi_value> {
        let mut event = Some(event);
        let version = self.answered(js, |state, answers| {
            let view = if event.is_some() { state.store.append(id, &mut event, answers) } else { state.store.flush(id, answers) };
            view.map(|v| v.version as f64)
        })?;
        let mut state = self.state(js)?;
        let awaited = match state.store.awaited_render(id) {
            Some((bytes, next_seq)) => js.array(&[js.number(bytes as f64)?, js.number(next_seq)?])?,
            None => js.null()?,
        };
        let result = js.array(&[js.number(version)?, state.payload_for(js, id, base)?, awaited])?;
        state.sweep_kept(js);
        Ok(result)
    }
}

impl State {
    /// The wrapper's function `name` of `HOST_OPS`.
    fn op(&self, js: Js, name: &str) -> JsResult<napi_value> {
        js.named(js.referenced(self.ops)?, name)
    }

    /// The host value kept at `handle` (`undefined` if released).
    fn kept_value(&self, js: Js, handle: u32) -> JsResult<napi_value> {
        self.kept.get(handle as usize).copied().flatten().map_or_else(|| js.undefined(), |r| js.referenced(r))
    }

    /// `v` as a JavaScript value: built by the wrapper from its payload, the
    /// host values in it the very ones kept.
    fn to_js(&self, js: Js, v: &Value) -> JsResult<napi_value> {
        let payload = self.payload(js, PayloadKind::Whole, &Payload::of_value(v))?;
        let materialize = self.op(js, MATERIALIZE)?;
        js.call(materialize, materialize, &[payload])
    }

    /// The session's current snapshot for `JSON.parse`, as
    /// [`store_snapshot`] describes it.
    fn payload_for(&self, js: Js, id: &str, base: f64) -> JsResult<napi_value> {
        let delta = self.store.delta(id).filter(|d| d.from as f64 == base).map(|d| &d.changed);
        match (self.store.current(id), delta) {
            (Some(Cached::Text(_)), Some(Changed::Members(members))) => {
                js.array(&[js.number(f64::from(PayloadKind::ChangedFields as u32))?, js.string(members)?, js.null()?, js.array(&[])?])
            }
            (Some(Cached::Text(text)), _) => js.string(&text.json),
            (Some(Cached::Model(snapshot)), Some(Changed::Fields(fields))) => self.payload(js, PayloadKind::ChangedFields, &Payload::of_fields(snapshot, fields)),
            (Some(Cached::Model(snapshot)), _) => self.payload(js, PayloadKind::Whole, &Payload::of_snapshot(snapshot)),
            (None, _) => Err(errors::throw_error(js, "quiver-live-native: session state missing")),
        }
    }

    /// Holds the values `found` by reference until no snapshot names them
    /// (see [`State::sweep_kept`]), renumbering the handles in `value` and
    /// `ts` to their places.
    fn keep(&mut self, js: Js, found: Vec<napi_value>, mut value: Value, mut ts: Value) -> JsResult<(Value, Value)> {
        if found.is_empty() {
            return Ok((value, ts));
        }
        let places = found.into_iter().map(|v| self.hold(js, v)).collect::<JsResult<Vec<u32>>>()?;
        renumber(&mut value, &places);
        renumber(&mut ts, &places);
        Ok((value, ts))
    }

    /// Holds `v` by reference until a sweep finds no snapshot naming it;
    /// its handle.
    fn hold(&mut self, js: Js, v: napi_value) -> JsResult<u32> {
        let r = Some(js.reference(v)?);
        Ok(match self.free.pop() {
            Some(i) => {
                self.kept[i as usize] = r;
                i
            }
            None => {
                self.kept.push(r);
                (self.kept.len() - 1) as u32
            }
        })
    }

    /// Releases the kept values no cached snapshot names any more (the
    /// event that held one was replaced, or re-derived from the journal,
    /// whose JSON has none). It walks every snapshot, so it runs only once
    /// as many values are held as after the last sweep doubled: constant
    /// time per value kept, and a store appending events that carry
    /// functions holds only those its snapshots show.
    fn sweep_kept(&mut self, js: Js) {
        let held = self.kept.len() - self.free.len();
        if held < SWEEP_FLOOR.max(2 * self.held_after_sweep) {
            return;
        }
        let mut named = vec![false; self.kept.len()];
        self.store.host_handles(&mut |h| {
            if let Some(n) = named.get_mut(h as usize) {
                *n = true;
            }
        });
        for (i, slot) in self.kept.iter_mut().enumerate() {
            if !named[i] {
                if let Some(r) = slot.take() {
                    js.delete_reference(r);
                    self.free.push(i as u32);
                }
            }
        }
        self.held_after_sweep = self.kept.len() - self.free.len();
    }

    fn payload(&self, js: Js, kind: PayloadKind, p: &Payload) -> JsResult<napi_value> {
        let text = js.string(&p.json)?;
        let patches = p.patches();
        if matches!(kind, PayloadKind::Whole) && patches.is_none() {
            return Ok(text);
        }
        let kept = p.kept.iter().map(|&h| self.kept_value(js, h)).collect::<JsResult<Vec<_>>>()?;
        let patches = match patches {
            Some(p) => js.string(&p)?,
            None => js.null()?,
        };
        js.array(&[js.number(f64::from(kind as u32))?, text, patches, js.array(&kept)?])
    }
}

/// Replaces every `Value::Host(i)` in `v` by `Value::Host(places[i])`.
fn renumber(v: &mut Value, places: &[u32]) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Host(h) => *h = places[*h as usize],
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(o) => stack.extend(o.values_mut()),
            _ => {}
        }
    }
}
