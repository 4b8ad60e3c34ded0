//! Moving values between V8 and the value model, and raising JS errors.
//!
//! This is the only module besides `lib.rs` that knows about Node-API. It
//! talks to the raw C API because the store needs exact JS semantics that
//! typed wrappers hide: own enumerable keys in V8 order, `undefined` values,
//! strings with lone surrogates, `__proto__` as a plain key, and errors that
//! are plain `Error`s (no added `code`) or the very object a callback threw.

use std::ffi::c_void;
use std::ptr;

use napi::sys;
use napi::sys::{napi_env, napi_value};

use quiver_live_core::error::FsError;
use quiver_live_core::session::reducer::Host;
use quiver_live_core::session::store::StoreError;
use quiver_live_core::js::value::{JsStr, Object, Value};

/// A JavaScript exception is pending; unwind to the boundary and let it fly.
#[derive(Debug)]
pub struct Pending;

pub type JsResult<T> = Result<T, Pending>;

impl From<Pending> for napi::Error {
    fn from(_: Pending) -> napi::Error {
        napi::Error::new(napi::Status::PendingException, String::new())
    }
}

/// Walking deeper than this stops treating the event as plain data; V8's own
/// `JSON.stringify` then decides (it throws near 4,200 levels, and on cycles).
const WALK_DEPTH_LIMIT: usize = 4_500;

/// Objects nested deeper than this are built property by property instead of
/// by a compiled literal (see `shapes`).
const SHAPE_DEPTH_LIMIT: usize = 64;

/// A writable, enumerable, configurable own data property: what an object
/// literal, a spread or `JSON.parse` creates.
fn data_property(name: napi_value, value: napi_value) -> sys::napi_property_descriptor {
    use sys::PropertyAttributes as A;
    sys::napi_property_descriptor {
        utf8name: ptr::null(),
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: A::writable | A::enumerable | A::configurable,
        data: ptr::null_mut(),
    }
}

#[derive(Clone, Copy)]
pub struct Js {
    pub env: napi_env,
}

impl Js {
    /// Checks a Node-API status; a failure with no exception pending becomes a
    /// thrown `Error` so every failure reaches JS as an exception.
    pub fn check(&self, status: sys::napi_status) -> JsResult<()> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        if !self.exception_pending() {
            let _ = self.throw_error(&format!("quiver-live-native: Node-API call failed with status {}", status));
        }
        Err(Pending)
    }

    pub fn exception_pending(&self) -> bool {
        let mut pending = false;
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        pending
    }

    pub fn undefined(&self) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_get_undefined(self.env, &mut v) })?;
        Ok(v)
    }

    pub fn null(&self) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_get_null(self.env, &mut v) })?;
        Ok(v)
    }

    pub fn boolean(&self, b: bool) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_get_boolean(self.env, b, &mut v) })?;
        Ok(v)
    }

    pub fn number(&self, n: f64) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_create_double(self.env, n, &mut v) })?;
        Ok(v)
    }

    pub fn string(&self, s: &str) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        // ASCII text is the same bytes in Latin-1, which V8 copies as they
        // are; the UTF-8 entry point decodes byte by byte, and snapshots are
        // nearly all ASCII.
        let create = if s.is_ascii() { sys::napi_create_string_latin1 } else { sys::napi_create_string_utf8 };
        self.check(unsafe { create(self.env, s.as_ptr().cast(), s.len() as isize, &mut v) })?;
        Ok(v)
    }

    pub fn js_string(&self, s: &JsStr) -> JsResult<napi_value> {
        match s {
            JsStr::Utf8(text) => self.string(text),
            JsStr::Static(text) => self.string(text),
            JsStr::Inline(text) => self.string(text.as_str()),
            JsStr::Utf16(units) => {
                let mut v = ptr::null_mut();
                self.check(unsafe { sys::napi_create_string_utf16(self.env, units.as_ptr(), units.len() as isize, &mut v) })?;
                Ok(v)
            }
        }
    }

    pub fn object(&self) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_create_object(self.env, &mut v) })?;
        Ok(v)
    }

    pub fn type_of(&self, v: napi_value) -> JsResult<i32> {
        let mut t = 0;
        self.check(unsafe { sys::napi_typeof(self.env, v, &mut t) })?;
        Ok(t)
    }

    pub fn is_array(&self, v: napi_value) -> JsResult<bool> {
        let mut b = false;
        self.check(unsafe { sys::napi_is_array(self.env, v, &mut b) })?;
        Ok(b)
    }

    pub fn get(&self, obj: napi_value, key: &str) -> JsResult<napi_value> {
        let k = self.string(key)?;
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_get_property(self.env, obj, k, &mut v) })?;
        Ok(v)
    }

    pub fn set(&self, obj: napi_value, key: &str, value: napi_value) -> JsResult<()> {
        let k = self.string(key)?;
        self.check(unsafe { sys::napi_set_property(self.env, obj, k, value) })
    }

    /// Defines an own data property, the way object literals and spreads do,
    /// so a key named `__proto__` is a key and not the prototype setter.
    pub fn define(&self, obj: napi_value, key: napi_value, value: napi_value) -> JsResult<()> {
        let desc = data_property(key, value);
        self.check(unsafe { sys::napi_define_properties(self.env, obj, 1, &desc) })
    }

    pub fn global(&self) -> JsResult<napi_value> {
        let mut g = ptr::null_mut();
        self.check(unsafe { sys::napi_get_global(self.env, &mut g) })?;
        Ok(g)
    }

    /// Calls `f` with `this` = `recv`; a throw leaves the exception pending.
    pub fn call(&self, recv: napi_value, f: napi_value, args: &[napi_value]) -> JsResult<napi_value> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_call_function(self.env, recv, f, args.len(), args.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// `globalThis[ns][method](...args)`, looked up at each call so test
    /// doubles installed on the global (a fake `Date`) are honoured.
    pub fn call_global(&self, ns: &str, method: &str, args: &[napi_value]) -> JsResult<napi_value> {
        let owner = self.get(self.global()?, ns)?;
        let f = self.get(owner, method)?;
        self.call(owner, f, args)
    }

    pub fn take_exception(&self) -> JsResult<napi_value> {
        let mut e = ptr::null_mut();
        self.check(unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut e) })?;
        Ok(e)
    }

    pub fn throw(&self, value: napi_value) -> Pending {
        unsafe { sys::napi_throw(self.env, value) };
        Pending
    }

    pub fn to_f64(&self, v: napi_value) -> JsResult<f64> {
        let mut n = 0.0;
        self.check(unsafe { sys::napi_get_value_double(self.env, v, &mut n) })?;
        Ok(n)
    }

    pub fn to_bool(&self, v: napi_value) -> JsResult<bool> {
        let mut b = false;
        self.check(unsafe { sys::napi_get_value_bool(self.env, v, &mut b) })?;
        Ok(b)
    }

    /// The UTF-16 content of a JS string, kept exact (lone surrogates too).
    pub fn to_js_str(&self, v: napi_value) -> JsResult<JsStr> {
        // Most strings (keys, ids, phases, timestamps) are short ASCII: one
        // call into a stack buffer, and no allocation unless it is long.
        const SHORT: usize = 64;
        let mut buf = [0u16; SHORT];
        let mut written = 0usize;
        self.check(unsafe { sys::napi_get_value_string_utf16(self.env, v, buf.as_mut_ptr(), SHORT, &mut written) })?;
        // `written` < SHORT - 1 proves the whole string fit (V8 fills the
        // buffer but for the terminator when it is longer).
        if written < SHORT - 1 {
            let units = &buf[..written];
            if units.iter().all(|&u| u < 0x80) {
                let mut ascii = [0u8; SHORT];
                for (b, &u) in ascii.iter_mut().zip(units) {
                    *b = u as u8;
                }
                // SAFETY: every byte is below 0x80, so this is ASCII text.
                return Ok(JsStr::from(unsafe { std::str::from_utf8_unchecked(&ascii[..written]) }));
            }
            return Ok(JsStr::from_utf16(units.to_vec()));
        }
        let mut len = 0usize;
        self.check(unsafe { sys::napi_get_value_string_utf16(self.env, v, ptr::null_mut(), 0, &mut len) })?;
        let mut units = vec![0u16; len + 1];
        let mut written = 0usize;
        self.check(unsafe { sys::napi_get_value_string_utf16(self.env, v, units.as_mut_ptr(), len + 1, &mut written) })?;
        units.truncate(written);
        Ok(JsStr::from_utf16(units))
    }

    /// `String(v)` with JS's own coercion (symbols throw as they do in JS).
    pub fn coerce_string(&self, v: napi_value) -> JsResult<JsStr> {
        let mut s = ptr::null_mut();
        self.check(unsafe { sys::napi_coerce_to_string(self.env, v, &mut s) })?;
        self.to_js_str(s)
    }

    /// `Number(v)` with JS's own coercion.
    pub fn coerce_number(&self, v: napi_value) -> JsResult<f64> {
        let mut n = ptr::null_mut();
        self.check(unsafe { sys::napi_coerce_to_number(self.env, v, &mut n) })?;
        self.to_f64(n)
    }

    pub fn truthy(&self, v: napi_value) -> JsResult<bool> {
        let mut b = ptr::null_mut();
        self.check(unsafe { sys::napi_coerce_to_bool(self.env, v, &mut b) })?;
        self.to_bool(b)
    }

    pub fn is_type(&self, v: napi_value, t: i32) -> JsResult<bool> {
        Ok(self.type_of(v)? == t)
    }

    fn error_with(&self, make: ErrorKind, message: &str) -> JsResult<napi_value> {
        let msg = self.string(message)?;
        let mut e = ptr::null_mut();
        let status = unsafe {
            match make {
                ErrorKind::Error => sys::napi_create_error(self.env, ptr::null_mut(), msg, &mut e),
                ErrorKind::Type => sys::napi_create_type_error(self.env, ptr::null_mut(), msg, &mut e),
                ErrorKind::Range => sys::napi_create_range_error(self.env, ptr::null_mut(), msg, &mut e),
            }
        };
        self.check(status)?;
        Ok(e)
    }

    /// Throws `new Error(message)`, with no extra properties.
    pub fn throw_error(&self, message: &str) -> Pending {
        match self.error_with(ErrorKind::Error, message) {
            Ok(e) => self.throw(e),
            Err(p) => p,
        }
    }

    /// Throws `new Error(prefix + text)` keeping `text` exact (lone surrogates too).
    pub fn throw_error_with(&self, prefix: &str, text: &JsStr) -> Pending {
        let mut units: Vec<u16> = prefix.encode_utf16().collect();
        units.extend(text.units());
        let build = || -> JsResult<napi_value> {
            let msg = self.js_string(&JsStr::from_utf16(units))?;
            let mut e = ptr::null_mut();
            self.check(unsafe { sys::napi_create_error(self.env, ptr::null_mut(), msg, &mut e) })?;
            Ok(e)
        };
        match build() {
            Ok(e) => self.throw(e),
            Err(p) => p,
        }
    }

    pub fn throw_type_error(&self, message: &str) -> Pending {
        match self.error_with(ErrorKind::Type, message) {
            Ok(e) => self.throw(e),
            Err(p) => p,
        }
    }

    pub fn throw_range_error(&self, message: &str) -> Pending {
        match self.error_with(ErrorKind::Range, message) {
            Ok(e) => self.throw(e),
            Err(p) => p,
        }
    }

    /// Throws an error shaped like Node's own fs errors: message
    /// `CODE: description, syscall 'path'` and `errno`, `code`, `syscall`, `path`.
    pub fn throw_fs_error(&self, e: &FsError) -> Pending {
        let build = || -> JsResult<napi_value> {
            let err = self.error_with(ErrorKind::Error, &e.to_string())?;
            self.set(err, "errno", self.number(f64::from(e.errno()))?)?;
            self.set(err, "code", self.string(&e.code())?)?;
            self.set(err, "syscall", self.string(e.syscall())?)?;
            self.set(err, "path", self.string(&e.path().to_string_lossy())?)?;
            Ok(err)
        };
        match build() {
            Ok(err) => self.throw(err),
            Err(p) => p,
        }
    }

    pub fn throw_store_error(&self, e: &StoreError) -> Pending {
        match e {
            StoreError::Message(m) => self.throw_error(m),
            StoreError::Type(m) => self.throw_type_error(m),
            StoreError::Fs(fs) => self.throw_fs_error(fs),
            // Already pending: nothing to add.
            StoreError::Thrown => Pending,
        }
    }

    /// Own enumerable string keys, in V8's order.
    pub fn own_keys(&self, obj: napi_value) -> JsResult<Vec<napi_value>> {
        use sys::{KeyCollectionMode, KeyConversion, KeyFilter};
        let mut names = ptr::null_mut();
        self.check(unsafe {
            sys::napi_get_all_property_names(
                self.env,
                obj,
                KeyCollectionMode::own_only,
                KeyFilter::enumerable | KeyFilter::skip_symbols,
                KeyConversion::numbers_to_strings,
                &mut names,
            )
        })?;
        let mut len = 0u32;
        self.check(unsafe { sys::napi_get_array_length(self.env, names, &mut len) })?;
        (0..len).map(|i| self.element(names, i)).collect()
    }

    pub fn element(&self, arr: napi_value, i: u32) -> JsResult<napi_value> {
        let mut v = ptr::null_mut();
        self.check(unsafe { sys::napi_get_element(self.env, arr, i, &mut v) })?;
        Ok(v)
    }

    pub fn array_len(&self, arr: napi_value) -> JsResult<u32> {
        let mut len = 0u32;
        self.check(unsafe { sys::napi_get_array_length(self.env, arr, &mut len) })?;
        Ok(len)
    }
}

#[derive(Clone, Copy)]
enum ErrorKind {
    Error,
    Type,
    #[allow(dead_code)]
    Range,
}

/// Reads a JS value into the model. `exotic` is set when the journal text
/// must come from V8's own `JSON.stringify` (BigInt, cycles, extreme depth,
/// `toJSON`), which also throws its exact errors. Functions and symbols are
/// kept by reference in `foreign` (JSON drops them exactly as it drops
/// `undefined`, so they need no V8 text).
pub struct Walker<'a> {
    pub js: Js,
    pub exotic: bool,
    pub foreign: &'a mut Vec<sys::napi_ref>,
}

impl Walker<'_> {
    pub fn value(&mut self, v: napi_value, depth: usize) -> JsResult<Value> {
        use sys::ValueType as T;
        Ok(match self.js.type_of(v)? {
            T::napi_undefined => Value::Undefined,
            T::napi_null => Value::Null,
            T::napi_boolean => Value::Bool(self.js.to_bool(v)?),
            T::napi_number => Value::Number(self.js.to_f64(v)?),
            T::napi_string => Value::String(self.js.to_js_str(v)?),
            T::napi_object => self.object_like(v, depth)?,
            T::napi_function | T::napi_symbol => self.keep(v)?,
            _ => {
                self.exotic = true;
                Value::Undefined
            }
        })
    }

    fn keep(&mut self, v: napi_value) -> JsResult<Value> {
        let mut r = ptr::null_mut();
        self.js.check(unsafe { sys::napi_create_reference(self.js.env, v, 1, &mut r) })?;
        self.foreign.push(r);
        Ok(Value::Host((self.foreign.len() - 1) as u32))
    }

    fn object_like(&mut self, v: napi_value, depth: usize) -> JsResult<Value> {
        if depth > WALK_DEPTH_LIMIT {
            self.exotic = true;
            return Ok(Value::Null);
        }
        let to_json = self.js.get(v, "toJSON")?;
        if self.js.is_type(to_json, sys::ValueType::napi_function)? {
            // A Date and the like: held as the JSON V8 makes of it.
            self.exotic = true;
            let text = self.js.call_global("JSON", "stringify", &[v])?;
            if !self.js.is_type(text, sys::ValueType::napi_string)? {
                return Ok(Value::Undefined);
            }
            let text = self.js.to_js_str(text)?.to_lossy();
            return Ok(quiver_live_core::js::json::parse(&text).unwrap_or(Value::Undefined));
        }
        if self.js.is_array(v)? {
            let len = self.js.array_len(v)?;
            let mut items = Vec::with_capacity(len as usize);
            for i in 0..len {
                items.push(self.value(self.js.element(v, i)?, depth + 1)?);
            }
            return Ok(Value::Array(items));
        }
        Ok(Value::Object(self.object(v, depth)?))
    }

    /// The own enumerable string-keyed properties, as `{ ...v }` copies them.
    pub fn object(&mut self, v: napi_value, depth: usize) -> JsResult<Object> {
        let mut out = Object::new();
        for key in self.js.own_keys(v)? {
            let mut value = ptr::null_mut();
            self.js.check(unsafe { sys::napi_get_property(self.js.env, v, key, &mut value) })?;
            let k = self.js.to_js_str(key)?;
            out.set_js(k, self.value(value, depth + 1)?);
        }
        Ok(out)
    }
}

/// Builds JS values from the model; `foreign` resolves `Value::Host` handles.
#[derive(Clone, Copy)]
pub struct ToJs<'a> {
    pub js: Js,
    pub foreign: &'a [sys::napi_ref],
}

impl ToJs<'_> {
    pub fn object(&self, o: &Object) -> JsResult<napi_value> {
        self.object_at(o, 0)
    }

    fn value(&self, v: &Value, depth: usize) -> JsResult<napi_value> {
        let js = self.js;
        match v {
            Value::Undefined => js.undefined(),
            Value::Null => js.null(),
            Value::Bool(b) => js.boolean(*b),
            Value::Number(n) => js.number(*n),
            Value::String(s) => js.js_string(s),
            Value::Host(h) => match self.foreign.get(*h as usize) {
                Some(r) => {
                    let mut out = ptr::null_mut();
                    js.check(unsafe { sys::napi_get_reference_value(js.env, *r, &mut out) })?;
                    if out.is_null() { js.undefined() } else { Ok(out) }
                }
                None => js.undefined(),
            },
            Value::Array(items) => {
                let mut arr = ptr::null_mut();
                js.check(unsafe { sys::napi_create_array_with_length(js.env, items.len(), &mut arr) })?;
                for (i, item) in items.iter().enumerate() {
                    let value = self.value(item, depth + 1)?;
                    js.check(unsafe { sys::napi_set_element(js.env, arr, i as u32, value) })?;
                }
                Ok(arr)
            }
            Value::Object(o) => self.object_at(o, depth),
        }
    }

    /// The values a compiled literal for `o` takes, in its order: each
    /// member's, or for an object written into the literal, its members'.
    fn leaves(&self, o: &Object, depth: usize, inline: bool, args: &mut [napi_value; shapes::MAX_LEAVES], n: &mut usize) -> JsResult<()> {
        for (_, v) in o.iter() {
            match shapes::inlined(v, depth, inline) {
                Some(child) => self.leaves(child, depth + 1, inline, args, n)?,
                None => {
                    args[*n] = self.value(v, depth + 1)?;
                    *n += 1;
                }
            }
        }
        Ok(())
    }

    fn object_at(&self, o: &Object, depth: usize) -> JsResult<napi_value> {
        let js = self.js;
        // Deep in a nested value the native stack is too low for V8 to take
        // a call (it throws RangeError); the deep levels go key by key.
        if o.proto().is_none() && depth < SHAPE_DEPTH_LIMIT {
            if let Some((ctor, inline)) = shapes::constructor(js, o, depth)? {
                // A compiled literal takes at most MAX_LEAVES values: they fit here.
                let mut args = [ptr::null_mut(); shapes::MAX_LEAVES];
                let mut n = 0;
                self.leaves(o, depth, inline, &mut args, &mut n)?;
                let this = js.undefined()?;
                return js.call(this, ctor, &args[..n]);
            }
        }
        // Own data properties, defined as an object literal or `JSON.parse`
        // would (assignment would run a setter inherited from a polluted
        // `Object.prototype`, or set the prototype for `__proto__`).
        let obj = js.object()?;
        let mut props = Vec::with_capacity(o.len());
        for (k, v) in o.iter() {
            props.push(data_property(js.js_string(k)?, self.value(v, depth + 1)?));
        }
        js.check(unsafe { sys::napi_define_properties(js.env, obj, props.len(), props.as_ptr()) })?;
        if let Some(proto) = o.proto() {
            let proto = self.value(proto, depth + 1)?;
            js.call_global("Object", "setPrototypeOf", &[obj, proto])?;
        }
        Ok(obj)
    }
}

/// Object literals compiled per key list.
///
/// Building an object key by key through Node-API costs a key string, a
/// string-table lookup and a hidden-class transition per property. A function
/// whose body is the object literal (`(a0, a1) => ({ "type": a0, "id": a1 })`)
/// makes V8 allocate the object with its final hidden class at once, and the
/// literal defines own data properties exactly as `JSON.parse` and the old
/// module's spreads do. Snapshots repeat the same few shapes (the snapshot
/// itself, pending events, timings, artifacts), so a shape is compiled once it
/// has been seen a few times, and the cache is bounded.
mod shapes {
    use super::*;
    use std::collections::HashMap;

    /// A shape is compiled after this many sightings: compiling costs about as
    /// much as building a few dozen objects the slow way.
    const COMPILE_AFTER: u32 = 3;
    /// Values one compiled literal takes (V8 allows far more arguments).
    pub(super) const MAX_LEAVES: usize = 128;
    /// Compiled literals kept; when a new one would pass this, all are
    /// dropped (V8 collects them) and the ones still in use are compiled
    /// again, so a long-lived process keeps up with shapes that change.
    const MAX_COMPILED: usize = 512;
    /// Shapes seen but not yet compiled; the count is reset when it fills.
    const MAX_PENDING: usize = 4096;

    enum Lookup {
        Ready(sys::napi_ref, bool),
        Compile(bool),
        Slow,
    }

    /// One step of a literal's layout, in source order: an object and its
    /// member count, a member's key, or a value passed in built.
    #[derive(Debug, PartialEq)]
    enum Slot {
        Object(usize),
        Key(String),
        Leaf,
    }

    struct Shape {
        slots: Vec<Slot>,
        /// Whether nested objects are written into the literal (else each
        /// is passed in, built by its own literal).
        inline: bool,
        seen: u32,
        ctor: Option<sys::napi_ref>,
        /// Compiling it failed once (the engine refused the script): it is
        /// built key by key from then on.
        refused: bool,
    }

    /// The map's keys are already hashes of shapes: hashing them again
    /// (SipHash, the std default) cost more per object than the lookup.
    #[derive(Default)]
    struct AlreadyHashed(u64);

    impl std::hash::Hasher for AlreadyHashed {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(b);
            }
        }
        fn write_u64(&mut self, n: u64) {
            self.0 = n;
        }
    }

    /// The shapes seen in one environment (kept in `env_cache`).
    #[derive(Default)]
    pub(super) struct Cache {
        by_hash: HashMap<u64, Vec<Shape>, std::hash::BuildHasherDefault<AlreadyHashed>>,
        compiled: usize,
        pending: usize,
    }

    /// A key a literal can hold: text with a UTF-8 form that is not
    /// `__proto__` (which in a literal sets the prototype).
    fn literal_key(k: &JsStr) -> bool {
        k.as_str().is_some_and(|k| k != "__proto__")
    }

    /// The object `v` is, when the literal of the object holding it (at
    /// `depth`) writes it in place: every nested plain object, so building
    /// a snapshot is one call into V8 rather than one per object. Depends
    /// only on `v` and `depth`, so every walk of one object agrees.
    pub(super) fn inlined(v: &Value, depth: usize, inline: bool) -> Option<&Object> {
        match v {
            Value::Object(c) if inline && c.proto().is_none() && depth + 1 < SHAPE_DEPTH_LIMIT && c.iter().all(|(k, _)| literal_key(k)) => Some(c),
            _ => None,
        }
    }

    /// A hash of `o`'s layout, and the number of values its literal takes.
    fn layout_hash(o: &Object, depth: usize, inline: bool) -> (u64, usize) {
        let mut h = o.shape_hash();
        let mut leaves = 0;
        for (i, (_, v)) in o.iter().enumerate() {
            match inlined(v, depth, inline) {
                Some(child) => {
                    let (ch, cl) = layout_hash(child, depth + 1, inline);
                    h = (h.rotate_left(7) ^ ch ^ i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    leaves += cl;
                }
                None => leaves += 1,
            }
        }
        (h, leaves)
    }

    fn layout(o: &Object, depth: usize, inline: bool, out: &mut Vec<Slot>) -> Option<()> {
        out.push(Slot::Object(o.len()));
        for (k, v) in o.iter() {
            out.push(Slot::Key(k.as_str().filter(|_| literal_key(k))?.to_owned()));
            match inlined(v, depth, inline) {
                Some(child) => layout(child, depth + 1, inline, out)?,
                None => out.push(Slot::Leaf),
            }
        }
        Some(())
    }

    /// Whether `o` has the layout `slots` describes; returns the slots left.
    fn same_layout<'s>(slots: &'s [Slot], o: &Object, depth: usize, inline: bool) -> Option<&'s [Slot]> {
        let (Slot::Object(len), mut rest) = slots.split_first()? else { return None };
        if *len != o.len() {
            return None;
        }
        for (k, v) in o.iter() {
            let (Slot::Key(key), after) = rest.split_first()? else { return None };
            if k.as_str() != Some(key.as_str()) {
                return None;
            }
            rest = match inlined(v, depth, inline) {
                Some(child) => same_layout(after, child, depth + 1, inline)?,
                None => match after.split_first()? {
                    (Slot::Leaf, after) => after,
                    _ => return None,
                },
            };
        }
        Some(rest)
    }

    /// The compiled literal for `o` and whether it writes nested objects in
    /// place, or `None` while the shape is still rare (or cannot be written
    /// as a literal: `__proto__` would set the prototype, and lone
    /// surrogates have no UTF-8 form).
    pub(super) fn constructor(js: Js, o: &Object, depth: usize) -> JsResult<Option<(napi_value, bool)>> {
        if o.is_empty() {
            return Ok(None);
        }
        // Nested objects in place when all the values fit one call, else
        // this object's members alone (and each nested one its own call).
        let (mut hash, leaves) = layout_hash(o, depth, true);
        let inline = leaves <= MAX_LEAVES;
        if !inline {
            if o.len() > MAX_LEAVES {
                return Ok(None);
            }
            hash = layout_hash(o, depth, false).0;
        }
        let found = env_cache::with(js, |caches| {
            let c = &mut caches.shapes;
            let full = c.compiled >= MAX_COMPILED;
            if let Some(shape) = find(c, o, depth, inline, hash) {
                if let Some(r) = shape.ctor {
                    return Lookup::Ready(r, inline);
                }
                shape.seen = shape.seen.saturating_add(1);
                if shape.seen < COMPILE_AFTER || shape.refused {
                    return Lookup::Slow;
                }
                if full {
                    drop_compiled(js, c);
                    // This shape was dropped too: seen again from now on.
                    return Lookup::Slow;
                }
                return Lookup::Compile(inline);
            }
            if c.pending >= MAX_PENDING {
                c.by_hash.retain(|_, b| {
                    b.retain(|s| s.ctor.is_some());
                    !b.is_empty()
                });
                c.pending = 0;
            }
            let mut slots = Vec::new();
            if layout(o, depth, inline, &mut slots).is_some() {
                c.by_hash.entry(hash).or_default().push(Shape { slots, inline, seen: 1, ctor: None, refused: false });
                c.pending += 1;
            }
            Lookup::Slow
        })
        .unwrap_or(Lookup::Slow);
        let (ctor, inline) = match found {
            Lookup::Ready(r, inline) => (r, inline),
            Lookup::Slow => return Ok(None),
            Lookup::Compile(inline) => {
                return match compile(js, o, depth, inline, hash) {
                    Ok(f) => Ok(Some((f, inline))),
                    // A faster path is never a reason to fail: drop the
                    // engine's error and build this shape key by key.
                    Err(Pending) => {
                        js.take_exception()?;
                        env_cache::with(js, |c| find(&mut c.shapes, o, depth, inline, hash).map(|shape| shape.refused = true));
                        Ok(None)
                    }
                };
            }
        };
        let mut f = ptr::null_mut();
        js.check(unsafe { sys::napi_get_reference_value(js.env, ctor, &mut f) })?;
        Ok((!f.is_null()).then_some((f, inline)))
    }

    fn drop_compiled(js: Js, c: &mut Cache) {
        for shape in c.by_hash.drain().flat_map(|(_, shapes)| shapes) {
            if let Some(r) = shape.ctor {
                unsafe { sys::napi_delete_reference(js.env, r) };
            }
        }
        c.compiled = 0;
        c.pending = 0;
    }

    /// `{ "k": a0, "nested": { "x": a1 }, ... }`, numbering the values in
    /// the order `ToJs::leaves` passes them.
    fn write_literal(source: &mut String, o: &Object, depth: usize, inline: bool, next: &mut usize) {
        source.push('{');
        for (k, v) in o.iter() {
            // A JSON string literal is a JS string literal with the same value.
            quiver_live_core::js::json::write_string(source, k);
            source.push(':');
            match inlined(v, depth, inline) {
                Some(child) => write_literal(source, child, depth + 1, inline, next),
                None => {
                    source.push('a');
                    source.push_str(&next.to_string());
                    *next += 1;
                }
            }
            source.push(',');
        }
        source.push('}');
    }

    fn compile(js: Js, o: &Object, depth: usize, inline: bool, hash: u64) -> JsResult<napi_value> {
        let mut body = String::new();
        let mut leaves = 0;
        write_literal(&mut body, o, depth, inline, &mut leaves);
        let params: Vec<String> = (0..leaves).map(|i| format!("a{i}")).collect();
        let source = format!("(function ({}) {{ return {}; }})", params.join(", "), body);
        let (f, r) = env_cache::compile(js, &source)?;
        let kept = env_cache::with(js, |caches| {
            let c = &mut caches.shapes;
            let Some(shape) = find(c, o, depth, inline, hash) else { return false };
            shape.ctor = Some(r);
            c.compiled += 1;
            c.pending = c.pending.saturating_sub(1);
            true
        });
        if kept != Some(true) {
            unsafe { sys::napi_delete_reference(js.env, r) };
        }
        Ok(f)
    }

    /// The cached shape with `o`'s layout (`hash` is its `layout_hash`).
    fn find<'c>(c: &'c mut Cache, o: &Object, depth: usize, inline: bool, hash: u64) -> Option<&'c mut Shape> {
        c.by_hash.get_mut(&hash)?.iter_mut().find(|s| s.inline == inline && same_layout(&s.slots, o, depth, inline).is_some_and(|rest| rest.is_empty()))
    }
}

/// Small JavaScript functions compiled once per Node-API environment: one
/// call into such a function costs less than the property lookups it makes,
/// done through Node-API (each key a new string to internalize).
mod compiled {
    use super::*;

    pub(super) const DATE_NOW: &str = "(function () { return Date.now(); })";
    pub(super) const NEW_DATE_TIME: &str = "(function () { return new Date().getTime(); })";
    pub(super) const NEW_DATE_ISO: &str = "(function () { return new Date().toISOString(); })";

    /// The functions compiled in one environment (kept in `env_cache`).
    pub(super) type Cache = Vec<(&'static str, sys::napi_ref)>;

    /// Calls the function `source` evaluates to, without arguments.
    pub(super) fn call(js: Js, source: &'static str) -> JsResult<napi_value> {
        js.call(js.undefined()?, function(js, source)?, &[])
    }

    /// The function `source` evaluates to, compiled on first use.
    fn function(js: Js, source: &'static str) -> JsResult<napi_value> {
        let held = env_cache::with(js, |c| c.functions.iter().find(|(s, _)| *s == source).map(|&(_, r)| r)).flatten();
        if let Some(r) = held {
            let mut f = ptr::null_mut();
            js.check(unsafe { sys::napi_get_reference_value(js.env, r, &mut f) })?;
            if !f.is_null() {
                return Ok(f);
            }
        }
        let (f, r) = env_cache::compile(js, source)?;
        let kept = env_cache::with(js, |c| {
            c.functions.retain(|(s, _)| *s != source);
            c.functions.push((source, r));
        });
        if kept.is_none() {
            unsafe { sys::napi_delete_reference(js.env, r) };
        }
        Ok(f)
    }
}

/// What this crate compiles once and holds by reference (object literals,
/// small functions), kept per thread for the Node-API environment running on
/// it (Node runs one per thread) and emptied when that environment ends: its
/// references end with it.
mod env_cache {
    use super::*;
    use std::cell::RefCell;

    #[derive(Default)]
    pub(super) struct Caches {
        env: usize,
        pub(super) shapes: shapes::Cache,
        pub(super) functions: compiled::Cache,
    }

    thread_local! {
        static CACHES: RefCell<Caches> = RefCell::new(Caches::default());
    }

    unsafe extern "C" fn forget(env: *mut c_void) {
        // The environment is going away and frees its references itself.
        CACHES.with_borrow_mut(|c| {
            if c.env == env as usize {
                *c = Caches::default();
            }
        });
    }

    /// Runs `f` on the caches of `js`'s environment; `None` (and nothing may
    /// be kept) when the environment refuses the hook that would empty them.
    pub(super) fn with<R>(js: Js, f: impl FnOnce(&mut Caches) -> R) -> Option<R> {
        let env = js.env as usize;
        CACHES.with_borrow_mut(|c| {
            if c.env != env {
                *c = Caches::default();
                if unsafe { sys::napi_add_env_cleanup_hook(js.env, Some(forget), js.env.cast()) } != sys::Status::napi_ok {
                    return None;
                }
                c.env = env;
            }
            Some(f(c))
        })
    }

    /// The value of the script `source`, with a strong reference to it.
    pub(super) fn compile(js: Js, source: &str) -> JsResult<(napi_value, sys::napi_ref)> {
        let mut f = ptr::null_mut();
        js.check(unsafe { sys::napi_run_script(js.env, js.string(source)?, &mut f) })?;
        let mut r = ptr::null_mut();
        js.check(unsafe { sys::napi_create_reference(js.env, f, 1, &mut r) })?;
        Ok((f, r))
    }
}

/// The reducer's clock and parsers, answered by the running V8.
pub struct NodeHost {
    pub js: Js,
}

impl Host for NodeHost {
    fn now_ms(&self) -> f64 {
        let js = self.js;
        // `Date` is looked up when the function runs, so a test's fake clock
        // (a replaced `Date` or `Date.now`) is the one read.
        compiled::call(js, compiled::DATE_NOW).and_then(|v| js.to_f64(v)).unwrap_or_else(|_| {
            let _ = js.take_exception();
            quiver_live_core::sys::now_ms()
        })
    }

    fn timestamp(&self) -> Option<String> {
        let js = self.js;
        // The old module stamps entries with `new Date().toISOString()`: the
        // same `new Date()` here, so a fake clock (a replaced `Date`) stamps
        // them as it would there, and a replaced `Date.now` alone does not,
        // there either. Its time is formatted here (a string made by V8 and
        // copied out costs more than the number) when it is an ordinary one.
        let ms = compiled::call(js, compiled::NEW_DATE_TIME).and_then(|v| js.to_f64(v)).ok()?;
        if (0.0..=quiver_live_core::js::date::MAX_FOUR_DIGIT_YEAR_MS).contains(&ms) {
            return Some(quiver_live_core::js::date::iso_string(ms));
        }
        // Years outside 0000-9999 (V8 writes six digits and a sign), or an
        // invalid date (V8 throws a RangeError, left pending).
        Some(compiled::call(js, compiled::NEW_DATE_ISO).and_then(|v| js.to_js_str(v)).ok()?.to_lossy())
    }

    fn date_parse_fallback(&self, s: &JsStr) -> f64 {
        let js = self.js;
        let run = || -> JsResult<f64> {
            let arg = js.js_string(s)?;
            let out = js.call_global("Date", "parse", &[arg])?;
            js.to_f64(out)
        };
        run().unwrap_or_else(|_| {
            let _ = js.take_exception();
            f64::NAN
        })
    }

    fn json_parse_message(&self, line: &str) -> String {
        let js = self.js;
        let run = || -> JsResult<String> {
            let arg = js.string(line)?;
            match js.call_global("JSON", "parse", &[arg]) {
                Ok(_) => Ok("JSON.parse accepted a line the native parser refused".to_owned()),
                Err(Pending) => {
                    let err = js.take_exception()?;
                    let msg = js.get(err, "message")?;
                    Ok(js.coerce_string(msg)?.to_lossy())
                }
            }
        };
        run().unwrap_or_else(|_| {
            let _ = js.take_exception();
            "Unexpected token in JSON".to_owned()
        })
    }
}

/// Attaches a boxed Rust value to a JS object, dropped when V8 collects it.
pub fn attach<T: 'static>(js: Js, obj: napi_value, data: Box<T>) -> JsResult<*mut T> {
    unsafe extern "C" fn drop_box<T>(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    }
    let raw = Box::into_raw(data);
    let status = unsafe { sys::napi_add_finalizer(js.env, obj, raw.cast(), Some(drop_box::<T>), ptr::null_mut(), ptr::null_mut()) };
    if status != sys::Status::napi_ok {
        drop(unsafe { Box::from_raw(raw) });
        js.check(status)?;
    }
    Ok(raw)
}
