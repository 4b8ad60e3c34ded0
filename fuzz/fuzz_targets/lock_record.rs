//! A lock file's record as the staleness checks read it, against serde_json
//! with JavaScript's property access and truthiness: on every text both
//! parsers accept, the same pid, token, start time and boot id; read from a
//! file, the same as from its text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::fuzzing::{parse_lock_record, read_lock_record, HeldLock};
use quiver_live_fuzz::{scratch_dir, serde_refuses_what_js_accepts};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let ours = parse_lock_record(&text);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => assert_eq!(ours, expected(&v), "{text:?}"),
        Err(e) if serde_refuses_what_js_accepts(&e, &text) => {}
        Err(e) => assert_eq!(ours, None, "a record serde_json refuses ({e}): {text:?}"),
    }
    let path = scratch_dir().join("x.lock");
    std::fs::write(&path, data).unwrap();
    assert_eq!(read_lock_record(&path), ours, "read from a file: {text:?}");
});

/// `JSON.parse` gave `v`: `null` for a falsy value, else each key with the
/// type the checks require, absent otherwise (a primitive or an array has none).
fn expected(v: &Value) -> Option<HeldLock> {
    let truthy = match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0 && !n.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    };
    if !truthy {
        return None;
    }
    let number = |key| v.as_object()?.get(key)?.as_f64();
    let string = |key| v.as_object()?.get(key)?.as_str().map(str::to_owned);
    Some(HeldLock { pid: number("pid"), token: string("token"), start_time: number("startTime"), boot_id: string("bootId") })
}
