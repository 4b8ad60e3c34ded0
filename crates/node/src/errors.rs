//! The core's errors as the old module's JavaScript would throw them.

use napi::sys::napi_value;
use quiver_live_core::js::{ErrorClass, JsError, JsStr};
use quiver_live_core::session::store::StoreError;
use quiver_live_core::sys::FsError;

use crate::env::{Js, JsResult, Pending};

/// An error shaped like Node's own fs errors: message `CODE: description,
/// syscall 'path'` and `errno`, `code`, `syscall`, `path`.
fn fs_error(js: Js, e: &FsError) -> JsResult<napi_value> {
    let err = js.error(ErrorClass::Error, &JsStr::from(e.to_string()))?;
    js.set(err, "errno", js.number(f64::from(e.errno()))?)?;
    js.set(err, "code", js.string(&e.code())?)?;
    js.set(err, "syscall", js.string(e.syscall())?)?;
    js.set(err, "path", js.string(&e.path().to_string_lossy())?)?;
    Ok(err)
}

pub fn throw_fs(js: Js, e: &FsError) -> Pending {
    match fs_error(js, e) {
        Ok(err) => js.throw(err),
        Err(p) => p,
    }
}

/// Throws `new <class>(message)`.
pub fn throw(js: Js, e: &JsError) -> Pending {
    match js.error(e.class, &JsStr::from(e.message.as_str())) {
        Ok(err) => js.throw(err),
        Err(p) => p,
    }
}

/// Throws a plain `Error` of the binding's own.
pub fn throw_error(js: Js, message: &str) -> Pending {
    throw(js, &JsError::error(message))
}

pub fn throw_store(js: Js, e: &StoreError) -> Pending {
    match e {
        StoreError::Js(e) => throw(js, e),
        StoreError::Fs(fs) => throw_fs(js, fs),
        // NativeStore::answered throws the value itself, which it holds.
        StoreError::HostThrew(_) => throw_error(js, "quiver-live-native: a value the store held was thrown"),
        // NativeStore::answered asks and runs the operation again; this is
        // reached only if an operation gave up with questions still open.
        StoreError::Unanswered => throw_error(js, "quiver-live-native: an operation stopped with questions for V8 open"),
    }
}
