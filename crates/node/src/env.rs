//! The raw Node-API calls this binding makes, and nothing else.
//!
//! Safety contract: a [`Js`] is made only from the `napi_env` Node passes to
//! a call into this addon (the `Env` of a `#[napi]` function or method), and
//! is used only during that call, on its thread. Every `napi_value` handed
//! to these methods was produced in the same call and the same handle scope
//! (a value from an earlier call is reached only through a `napi_ref`).
//! Under that contract each Node-API function is called as its
//! documentation requires: with the current env, live handles, and out
//! pointers to initialized locals. Node-API reports misuse by status, which
//! [`Js::check`] turns into a pending exception; nothing here dereferences
//! a handle in Rust.
//!
//! The rest of the binding uses these methods and napi-rs's typed API. The
//! raw API is needed where the store needs exact JS semantics the typed
//! wrappers do not expose: own enumerable keys in V8's order, strings with
//! lone surrogates, errors that are plain `Error`s (no added `code`).

use std::ptr;

use napi::sys::{self, napi_env, napi_value};
use quiver_live_core::js::{ErrorClass, JsStr};

/// A JavaScript exception is pending; unwind to the boundary and let it fly.
#[derive(Debug)]
pub struct Pending;

pub type JsResult<T> = Result<T, Pending>;

impl From<Pending> for napi::Error {
    fn from(_: Pending) -> napi::Error {
        napi::Error::new(napi::Status::PendingException, String::new())
    }
}

/// A value made in this call, as napi-rs's typed return value.
pub fn unknown<'a>(env: &'a napi::Env, v: napi_value) -> napi::bindgen_prelude::Unknown<'a> {
    // SAFETY: `v` was produced in the current call on `env` (the module's
    // contract), which is what `from_raw_unchecked` requires.
    unsafe { napi::bindgen_prelude::Unknown::from_raw_unchecked(env.raw(), v) }
}

#[derive(Clone, Copy)]
pub struct Js {
    env: napi_env,
}

/// Calls a Node-API function and checks its status.
macro_rules! napi_call {
    ($js:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        // SAFETY: see the module's safety contract.
        let status = unsafe { sys::$f($js.env, $($arg),*) };
        $js.check(status)
    }};
}

/// A value out-parameter filled by a Node-API call.
macro_rules! napi_out {
    ($js:expr, $init:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        let mut out = $init;
        napi_call!($js, $f($($arg,)* &mut out)).map(|()| out)
    }};
}

impl Js {
    /// The env of the current call (see the module's safety contract).
    pub fn new(env: napi_env) -> Js {
        Js { env }
    }

    /// Checks a Node-API status; a failure with no exception pending becomes
    /// a thrown `Error`, so every failure reaches JS as an exception.
    ///
    /// Neither step goes through `check` again: in a worker being
    /// terminated every call fails, throwing included, and a check that
    /// reported its own failure recursed until the stack overflowed.
    fn check(self, status: sys::napi_status) -> JsResult<()> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        let mut pending = false;
        // SAFETY: see the module's safety contract; `pending` is an
        // initialized local.
        let asked = unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if asked == sys::Status::napi_ok && !pending {
            let message = format!("quiver-live-native: Node-API call failed with status {status}\0");
            // SAFETY: as above; `message` is NUL-terminated and outlives the
            // call, and a null code is allowed. Its status is ignored: when
            // even throwing fails, the environment is going away.
            let _ = unsafe { sys::napi_throw_error(self.env, ptr::null(), message.as_ptr().cast()) };
        }
        Err(Pending)
    }

    pub fn undefined(self) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_undefined())
    }

    pub fn null(self) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_null())
    }

    pub fn number(self, n: f64) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_create_double(n))
    }

    pub fn string(self, s: &str) -> JsResult<napi_value> {
        // ASCII text is the same bytes in Latin-1, which V8 copies as they
        // are; the UTF-8 entry point decodes byte by byte.
        if s.is_ascii() {
            napi_out!(self, ptr::null_mut(), napi_create_string_latin1(s.as_ptr().cast(), s.len() as isize))
        } else {
            napi_out!(self, ptr::null_mut(), napi_create_string_utf8(s.as_ptr().cast(), s.len() as isize))
        }
    }

    pub fn js_string(self, s: &JsStr) -> JsResult<napi_value> {
        match s {
            JsStr::Utf16(units) => napi_out!(self, ptr::null_mut(), napi_create_string_utf16(units.as_ptr(), units.len() as isize)),
            other => self.string(other.as_str().unwrap_or_default()),
        }
    }

    pub fn array(self, items: &[napi_value]) -> JsResult<napi_value> {
        let arr = napi_out!(self, ptr::null_mut(), napi_create_array_with_length(items.len()))?;
        for (i, item) in items.iter().enumerate() {
            napi_call!(self, napi_set_element(arr, i as u32, *item))?;
        }
        Ok(arr)
    }

    pub fn type_of(self, v: napi_value) -> JsResult<sys::napi_valuetype> {
        napi_out!(self, 0, napi_typeof(v))
    }

    pub fn is_array(self, v: napi_value) -> JsResult<bool> {
        napi_out!(self, false, napi_is_array(v))
    }

    pub fn array_len(self, arr: napi_value) -> JsResult<u32> {
        napi_out!(self, 0, napi_get_array_length(arr))
    }

    pub fn element(self, arr: napi_value, i: u32) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_element(arr, i))
    }

    /// `obj[key]` (getters run).
    pub fn property(self, obj: napi_value, key: napi_value) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_property(obj, key))
    }

    pub fn named(self, obj: napi_value, key: &str) -> JsResult<napi_value> {
        self.property(obj, self.string(key)?)
    }

    /// Own enumerable string keys, in V8's order: what `{ ...obj }` copies.
    pub fn own_keys(self, obj: napi_value) -> JsResult<Vec<napi_value>> {
        use sys::{KeyCollectionMode, KeyConversion, KeyFilter};
        let names = napi_out!(
            self,
            ptr::null_mut(),
            napi_get_all_property_names(
                obj,
                KeyCollectionMode::own_only,
                KeyFilter::enumerable | KeyFilter::skip_symbols,
                KeyConversion::numbers_to_strings,
            )
        )?;
        (0..self.array_len(names)?).map(|i| self.element(names, i)).collect()
    }

    /// `globalThis[ns]` and its `method`, looked up when asked, so test
    /// doubles installed on the global (a fake `Date`) are honoured.
    pub fn global_method(self, ns: &str, method: &str) -> JsResult<(napi_value, napi_value)> {
        let global = napi_out!(self, ptr::null_mut(), napi_get_global())?;
        let owner = self.named(global, ns)?;
        Ok((owner, self.named(owner, method)?))
    }

    /// `f.call(this, ...args)`.
    pub fn call(self, this: napi_value, f: napi_value, args: &[napi_value]) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_call_function(this, f, args.len(), args.as_ptr()))
    }

    /// Runs `f` in a handle scope of its own: every handle it makes is
    /// released when it returns, so `f` must return no handle.
    pub fn scoped<T>(self, f: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
        let scope = napi_out!(self, ptr::null_mut(), napi_open_handle_scope())?;
        let result = f();
        let closed = napi_call!(self, napi_close_handle_scope(scope));
        let value = result?;
        closed.map(|()| value)
    }

    pub fn take_exception(self) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_and_clear_last_exception())
    }

    pub fn to_f64(self, v: napi_value) -> JsResult<f64> {
        napi_out!(self, 0.0, napi_get_value_double(v))
    }

    pub fn to_bool(self, v: napi_value) -> JsResult<bool> {
        napi_out!(self, false, napi_get_value_bool(v))
    }

    /// The UTF-16 content of a JS string, kept exact (lone surrogates too).
    pub fn to_js_str(self, v: napi_value) -> JsResult<JsStr> {
        let len = napi_out!(self, 0usize, napi_get_value_string_utf16(v, ptr::null_mut(), 0))?;
        let mut units = vec![0u16; len + 1];
        let written = napi_out!(self, 0usize, napi_get_value_string_utf16(v, units.as_mut_ptr(), len + 1))?;
        units.truncate(written);
        Ok(JsStr::from_utf16(units))
    }

    /// `String(v)` with JS's own coercion.
    pub fn coerce_string(self, v: napi_value) -> JsResult<JsStr> {
        let s = napi_out!(self, ptr::null_mut(), napi_coerce_to_string(v))?;
        self.to_js_str(s)
    }

    /// A strong reference, keeping `v` alive until [`Js::delete_reference`].
    pub fn reference(self, v: napi_value) -> JsResult<sys::napi_ref> {
        napi_out!(self, ptr::null_mut(), napi_create_reference(v, 1))
    }

    pub fn referenced(self, r: sys::napi_ref) -> JsResult<napi_value> {
        napi_out!(self, ptr::null_mut(), napi_get_reference_value(r))
    }

    pub fn delete_reference(self, r: sys::napi_ref) {
        let _ = napi_call!(self, napi_delete_reference(r));
    }

    pub fn throw(self, value: napi_value) -> Pending {
        let _ = napi_call!(self, napi_throw(value));
        Pending
    }

    /// `new <class>(message)`, with no properties beyond the message: the
    /// one place a core [`ErrorClass`] becomes a JavaScript constructor.
    pub fn error(self, class: ErrorClass, message: &JsStr) -> JsResult<napi_value> {
        let msg = self.js_string(message)?;
        let code = ptr::null_mut();
        match class {
            ErrorClass::Error => napi_out!(self, ptr::null_mut(), napi_create_error(code, msg)),
            ErrorClass::TypeError => napi_out!(self, ptr::null_mut(), napi_create_type_error(code, msg)),
            ErrorClass::RangeError => napi_out!(self, ptr::null_mut(), napi_create_range_error(code, msg)),
            // Node-API 8 has no call that makes one: the global constructor.
            ErrorClass::SyntaxError => {
                let global = napi_out!(self, ptr::null_mut(), napi_get_global())?;
                let constructor = self.named(global, "SyntaxError")?;
                napi_out!(self, ptr::null_mut(), napi_new_instance(constructor, 1, &msg))
            }
        }
    }

    pub fn set(self, obj: napi_value, key: &str, value: napi_value) -> JsResult<()> {
        napi_call!(self, napi_set_property(obj, self.string(key)?, value))
    }
}
