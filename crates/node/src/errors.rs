//! The core's errors as the old module's JavaScript would throw them.

use napi::sys::napi_value;
use quiver_live_core::sys::FsError;
use quiver_live_core::js::ops::STACK_EXCEEDED;
use quiver_live_core::js::JsStr;
use quiver_live_core::session::store::StoreError;

use crate::env::{ErrorKind, Js, JsResult, Pending};

/// An error shaped like Node's own fs errors: message `CODE: description,
/// syscall 'path'` and `errno`, `code`, `syscall`, `path`.
fn fs_error(js: Js, e: &FsError) -> JsResult<napi_value> {
    let err = js.error(ErrorKind::Error, &JsStr::from(e.to_string()))?;
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

pub fn throw(js: Js, kind: ErrorKind, message: &str) -> Pending {
    match js.error(kind, &JsStr::from(message)) {
        Ok(err) => js.throw(err),
        Err(p) => p,
    }
}

pub fn throw_store(js: Js, e: &StoreError) -> Pending {
    match e {
        StoreError::Message(m) => throw(js, ErrorKind::Error, m),
        // The reducer's conversions raise TypeErrors, and V8's RangeError
        // for arrays nested past its stack (see `ops::JOIN_DEPTH_LIMIT`).
        StoreError::Type(m) if m == STACK_EXCEEDED => throw(js, ErrorKind::Range, m),
        StoreError::Type(m) => throw(js, ErrorKind::Type, m),
        StoreError::Fs(fs) => throw_fs(js, fs),
        // NativeStore::answered throws the value itself, which it holds.
        StoreError::HostThrew(_) => throw(js, ErrorKind::Error, "quiver-live-native: a value the store held was thrown"),
        // NativeStore::answered asks and runs the operation again; this is
        // reached only if an operation gave up with questions still open.
        StoreError::Unanswered => throw(js, ErrorKind::Error, "quiver-live-native: an operation stopped with questions for V8 open"),
    }
}
