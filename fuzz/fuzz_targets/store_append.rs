//! Appends through the store against a cold replay of the journal it wrote:
//! the snapshot the appending store holds, the one a fresh store replays,
//! and the one a fresh store hydrates from the snapshot file all agree.
//!
//! Input: lines. A line that parses to a JSON object is an event appended
//! through the store; a line starting with `%` holding a JSON object is
//! written as a snapshot file that claims the journal's current size (a
//! lying cache: from then on the stores must agree with each other, no
//! longer with the journal); any other line is written raw to the journal (a
//! torn or foreign line from another writer, without its newline when it
//! starts with `#`).
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::{json, JsStr, Value};
use quiver_live_core::session::snapshot_file::Cached;
use quiver_live_core::session::store::{NewEvent, Store};
use quiver_live_fuzz::{scratch_dir, FixedHost};

const ID: &str = "s";
const TS: &str = "2030-01-01T00:00:00.000Z";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let root = scratch_dir().join("project");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    check(&root, text);
});

fn check(root: &std::path::Path, text: &str) {
    let host = FixedHost;
    let mut store = Store::open(root, false).unwrap();
    let journal = store.journal_path(ID);
    let mut lied = false;
    for line in text.split('\n').take(64) {
        // The wrapper refuses an event without a string type before the core sees it.
        let event = json::parse(line).ok().and_then(Value::into_object).filter(|e| e.get("type").is_some_and(|t| t.as_js_str().is_some_and(|s| !s.is_empty())));
        if let Some(lie) = line.strip_prefix('%').and_then(|l| json::parse(l).ok()).and_then(Value::into_object) {
            lied |= write_lying_snapshot(&store, lie);
            // Read by a process that has not seen the session yet: a store
            // that has keeps what it derived while the journal is unchanged.
            store = Store::open(root, false).unwrap();
            continue;
        }
        match event {
            Some(event) => {
                // A reducer error is thrown after the line is written, as the
                // old module throws it; the journal still holds the line.
                let _ = store.append(ID, &mut Some(new_event(event)), &host);
            }
            None => {
                let raw = line.strip_prefix('#').map_or_else(|| format!("{line}\n"), str::to_owned);
                std::fs::OpenOptions::new().create(true).append(true).open(&journal).unwrap().write_all(raw.as_bytes()).unwrap();
            }
        }
    }
    if !store.has(ID).unwrap() {
        return;
    }
    let live = shown(store.read(ID, true, &host).unwrap().snapshot);
    let hydrated = shown(Store::open(root, false).unwrap().read(ID, true, &host).unwrap().snapshot);
    assert_eq!(hydrated, live, "a fresh store reads the snapshot file differently from the appending store");
    if lied {
        return;
    }
    let cold = shown(Store::open(root, false).unwrap().read(ID, false, &host).unwrap().snapshot);
    // An append applies its event to the snapshot as read, whose parse
    // failures come last (the old module does the same): its diagnostic then
    // follows them, where a replay puts every parse failure after the
    // reducer's diagnostics. Same diagnostics, each kind in the same order.
    assert_eq!(parse_failures_last(&live), parse_failures_last(&cold), "the appending store and a cold replay differ");
    // A flush of an unchanged journal keeps the state derived (the old
    // module's cache answers it the same way).
    let flushed = shown(store.flush(ID, &host).unwrap().snapshot);
    assert_eq!(flushed, live, "a flush differs from the state it keeps");
}

/// `object` as a snapshot file for the journal as it is now, with the
/// session's id; whether it was written (there is a journal to describe).
fn write_lying_snapshot(store: &Store, mut object: quiver_live_core::js::Object) -> bool {
    let Ok(meta) = std::fs::metadata(store.journal_path(ID)) else { return false };
    object.set("id", Value::str(ID));
    object.set("__journalBytes", Value::Number(meta.len() as f64));
    if !object.get("__nextSeq").is_some_and(quiver_live_core::js::ops::is_integer) {
        object.set("__nextSeq", Value::Number(1.0));
    }
    let text = json::stringify_pretty(&Value::Object(object)).unwrap() + "\n";
    std::fs::write(store.snapshot_path(ID), text).unwrap();
    true
}

/// An event as the binding hands it over: `{ ...event, id }`, stamped.
fn new_event(mut event: quiver_live_core::js::Object) -> NewEvent {
    event.set("id", Value::str(ID));
    let value = Value::Object(event);
    let mut entry = quiver_live_core::js::Object::new();
    entry.set("seq", Value::Number(0.0));
    entry.set("id", Value::str(ID));
    entry.set("type", value.get("type").clone());
    entry.set("ts", Value::str(TS));
    entry.set("event", value.clone());
    NewEvent { value, ts: Value::str(TS), entry: json::stringify(&Value::Object(entry)).unwrap(), held: None }
}

/// The snapshot text with its `journal_parse_failed` diagnostics moved
/// after the others, each kind keeping its order.
fn parse_failures_last(text: &str) -> String {
    let mut snapshot = json::parse(text).unwrap().into_object().unwrap();
    if let Some(Value::Array(diagnostics)) = snapshot.get_mut("diagnostics") {
        let (parse, other): (Vec<Value>, Vec<Value>) =
            std::mem::take(diagnostics).into_iter().partition(|d| d.get("error").is_str("journal_parse_failed"));
        *diagnostics = other.into_iter().chain(parse).collect();
    }
    json::stringify(&Value::Object(snapshot)).unwrap()
}

fn shown(s: &Cached) -> String {
    let model = s.clone().into_model(&JsStr::from(ID)).expect("a model");
    json::stringify_members(model.members(), None)
}
