//! Snapshot-file hydration: a file's bytes, trusted or not for a journal
//! size, against the old module's rule (`JSON.parse`, then `__journalBytes`
//! equal to the size, `__nextSeq` an integer, `id` the session's; then
//! `{ ...baseSnapshot(id), ...file }` minus the two keys). The fast path
//! that hands the text on unparsed must describe the same snapshot.
//!
//! Input: two bytes of journal size, then the file's bytes. When those bytes
//! are a JSON object, it is also written as a snapshot file the way the store
//! writes one, and that file must hydrate to what was written.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::ops::is_integer;
use quiver_live_core::js::{json, JsStr, Value};
use quiver_live_core::session::schema::Field;
use quiver_live_core::session::snapshot::Snapshot;
use quiver_live_core::session::snapshot_file::{self, Cached};
use quiver_live_fuzz::scratch_dir;

fuzz_target!(|data: &[u8]| {
    let Some((size, file)) = data.split_first_chunk::<2>() else { return };
    let journal_bytes = u64::from(u16::from_le_bytes(*size));
    let id = JsStr::from("s");
    let path = scratch_dir().join("s.snapshot.json");
    std::fs::write(&path, file).unwrap();
    let ours = snapshot_file::hydrate(&path, &id, journal_bytes).map(|(cached, next_seq)| (shown(cached, &id), next_seq));
    assert_eq!(ours, old_module(file, &id, journal_bytes), "hydration differs from the old module's rule");

    let Some(object) = std::str::from_utf8(file).ok().and_then(|t| json::parse(t).ok()).and_then(Value::into_object) else { return };
    let snapshot = Snapshot::over_base(&id, &object);
    let Some(rendered) = snapshot_file::render(&snapshot, journal_bytes as i64, 7.0) else { return };
    std::fs::write(&path, &rendered).unwrap();
    let got = snapshot_file::hydrate(&path, &id, journal_bytes).map(|(cached, next_seq)| (shown(cached, &id), next_seq));
    let want = old_module(rendered.as_bytes(), &id, journal_bytes);
    assert_eq!(got, want, "a written file hydrates differently: {rendered}");
    let own_id = matches!(snapshot.get(Field::Id), Value::String(s) if s == &id);
    assert_eq!(want.is_some(), own_id, "a file the store wrote for this session is trusted: {rendered}");
});

fn shown(cached: Cached, id: &JsStr) -> (String, bool) {
    let completed = cached.is_completed();
    let model = cached.into_model(id).expect("a model");
    assert_eq!(completed, model.is_completed());
    (json::stringify_members(model.members(), None), completed)
}

/// The old module's `readSnapshotFile`, on this crate's `JSON.parse`.
fn old_module(bytes: &[u8], id: &JsStr, journal_bytes: u64) -> Option<((String, bool), f64)> {
    let mut parsed = json::parse(&String::from_utf8_lossy(bytes)).ok()?.into_object()?;
    if !matches!(parsed.get("__journalBytes"), Some(Value::Number(n)) if *n == journal_bytes as f64) {
        return None;
    }
    let next_seq = parsed.get("__nextSeq").filter(|v| is_integer(v))?.clone();
    parsed.remove("__journalBytes");
    parsed.remove("__nextSeq");
    if !matches!(parsed.get("id"), Some(Value::String(s)) if s == id) {
        return None;
    }
    let snapshot = Snapshot::over_base(id, &parsed);
    let Value::Number(next_seq) = next_seq else { unreachable!() };
    Some(((json::stringify_members(snapshot.members(), None), snapshot.is_completed()), next_seq))
}
