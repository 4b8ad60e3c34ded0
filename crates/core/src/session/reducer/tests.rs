use std::cell::RefCell;

use super::*;
use crate::js::json;
use crate::session::schema::{EVENT_TYPES, FIELDS};

/// A fixed clock; `Date.parse` only understands the canonical form.
pub struct TestHost(pub f64);

impl Host for TestHost {
    fn now_ms(&self) -> f64 {
        self.0
    }
    fn date_parse_fallback(&self, _s: &JsStr) -> f64 {
        f64::NAN
    }
    fn json_parse_message(&self, line: &str) -> String {
        json::parse(line).err().map_or_else(String::new, |e| e.message)
    }
}

fn base() -> Snapshot {
    Snapshot::base(&JsStr::from("s"))
}

fn parse(text: &str) -> Value {
    json::parse(text).unwrap()
}

fn run(events: &[&str]) -> Snapshot {
    let host = TestHost(1_893_456_000_000.0);
    let mut s = base();
    for (i, e) in events.iter().enumerate() {
        let text = format!(r#"{{"seq":{},"id":"s","ts":"2030-01-01T00:00:0{}.000Z","event":{}}}"#, i + 1, i % 10, e);
        apply_event(&mut s, &parse(&text), &host).unwrap();
    }
    s
}

fn member(s: &Snapshot, key: &str) -> String {
    let v = s.members().find(|(k, _)| k.eq_str(key)).map(|(_, v)| v);
    v.and_then(json::stringify).unwrap_or_else(|| "undefined".into())
}

fn text(s: &Snapshot) -> String {
    json::stringify_members(s.members(), None)
}

#[test]
fn generate_then_done_sets_render_pending() {
    let s = run(&[r#"{"type":"generate","count":3,"token":"t","screenshotPath":"/a.png"}"#, r#"{"type":"agent_done"}"#]);
    assert_eq!(member(&s, "phase"), r#""variants_ready""#);
    assert_eq!(member(&s, "arrivedVariants"), "3");
    assert_eq!(member(&s, "renderState"), r#""pending""#);
    assert_eq!(member(&s, "generationCompletedAt"), "1893456001000");
    assert_eq!(member(&s, "annotationArtifacts"), r#"[{"type":"screenshot","path":"/a.png"}]"#);
}

#[test]
fn pending_event_drops_token() {
    let s = run(&[r#"{"type":"generate","token":"secret","x":1}"#]);
    assert_eq!(member(&s, "pendingEvent"), r#"{"type":"generate","x":1}"#);
    assert_eq!(member(&s, "pendingEventSeq"), "1");
}

#[test]
fn mounts_sort_and_failures_keep_five() {
    let mut evs = vec![r#"{"type":"variant_mounted","variant":"3"}"#, r#"{"type":"variant_mounted","variant":[1]}"#, r#"{"type":"variant_mounted","variant":"x"}"#];
    let fail = r#"{"type":"variant_mount_failed","variant":2,"url":5}"#;
    evs.extend(std::iter::repeat_n(fail, 7));
    let s = run(&evs);
    assert_eq!(member(&s, "mountedVariants"), "[1,3]");
    assert_eq!(member(&s, "renderState"), r#""mounted""#);
    let Value::Array(f) = s.get(Field::MountFailures) else { panic!() };
    assert_eq!(f.len(), 5);
    assert!(member(&s, "diagnostics").contains(r#"{"error":"malformed_mount_ack","type":"variant_mounted","variant":"x"}"#));
}

#[test]
fn checkpoint_domains_and_mixed_type_revisions() {
    let s = run(&[
        r#"{"type":"checkpoint","revision":" 3 ","phase":"generating"}"#,
        r#"{"type":"checkpoint","revision":2}"#,
        r#"{"type":"checkpoint","revisionDomain":"publication","revision":1,"arrivedVariants":2}"#,
        r#"{"type":"checkpoint","reason":"variants_progress","revision":0}"#,
    ]);
    assert_eq!(member(&s, "browserCheckpointRevision"), r#"" 3 ""#);
    assert_eq!(member(&s, "publicationCheckpointRevision"), "1");
    assert_eq!(member(&s, "arrivedVariants"), "2");
    let d = member(&s, "diagnostics");
    assert!(d.contains(r#"{"error":"stale_checkpoint_ignored","revision":2,"revisionDomain":"browser"}"#), "{d}");
    assert!(d.contains(r#""revision":0,"revisionDomain":"publication""#), "{d}");
}

#[test]
fn stale_checkpoint_without_revision_keeps_undefined_key() {
    let s = run(&[r#"{"type":"checkpoint","revision":5}"#, r#"{"type":"checkpoint","revision":-1}"#, r#"{"type":"checkpoint"}"#]);
    let Value::Array(d) = s.get(Field::Diagnostics) else { panic!() };
    // `{}` (no revision) is `0 >= 5`: stale, and `revision: undefined` is a real key.
    let Value::Object(last) = &d[1] else { panic!() };
    assert!(matches!(last.get("revision"), Some(Value::Undefined)));
    assert_eq!(json::stringify(&d[1]).unwrap(), r#"{"error":"stale_checkpoint_ignored","revisionDomain":"browser"}"#);
}

#[test]
fn fencing_after_accept() {
    let s = run(&[
        r#"{"type":"generate"}"#,
        r#"{"type":"accept","variantId":"2"}"#,
        r#"{"type":"variants_ready"}"#,
        r#"{"type":"variant_plan","plan":[1]}"#,
        r#"{"type":"checkpoint","revision":9}"#,
        r#"{"type":"agent_error","sourceEventType":"generate"}"#,
        r#"{"type":"agent_done","carbonize":true}"#,
    ]);
    assert_eq!(member(&s, "phase"), r#""carbonize_required""#);
    assert_eq!(member(&s, "visibleVariant"), "2");
    assert_eq!(member(&s, "variantPlan"), "null");
    assert_eq!(member(&s, "cancelReason"), r#""accept""#);
    let d = member(&s, "diagnostics");
    for e in ["late_generation_event_ignored", "checkpoint_after_terminal_ignored", "carbonize_cleanup_required"] {
        assert!(d.contains(e), "{e} in {d}");
    }
}

#[test]
fn accept_with_bad_variant_is_nan_in_memory_null_on_disk() {
    let s = run(&[r#"{"type":"accept","variantId":"abc"}"#]);
    assert!(matches!(s.get(Field::VisibleVariant), Value::Number(n) if n.is_nan()));
    assert_eq!(member(&s, "visibleVariant"), "null");
}

#[test]
fn agent_phase_timings_and_proto_key() {
    let s = run(&[r#"{"type":"agent_phase","phase":"scaffolding","durationMs":5}"#, r#"{"type":"agent_phase","phase":"__proto__"}"#, r#"{"type":"agent_phase","phase":7}"#]);
    assert_eq!(member(&s, "generationTimings"), r#"{"7":{"at":1893456002000,"durationMs":null},"scaffolding":{"at":1893456000000,"durationMs":5}}"#);
    assert_eq!(member(&s, "generationPhase"), "7");
}

/// The clock of [`TestHost`]; each operation answered with the next of
/// `answers`, and noted.
struct ScriptedHost {
    answers: RefCell<Vec<Value>>,
    asked: RefCell<Vec<HostOp>>,
}

impl Host for ScriptedHost {
    fn now_ms(&self) -> f64 {
        TestHost(0.0).now_ms()
    }
    fn date_parse_fallback(&self, s: &JsStr) -> f64 {
        TestHost(0.0).date_parse_fallback(s)
    }
    fn json_parse_message(&self, line: &str) -> String {
        TestHost(0.0).json_parse_message(line)
    }
    fn ask(&self, op: HostOp, _args: &[&Value]) -> Result<Value, Refusal> {
        self.asked.borrow_mut().push(op);
        Ok(self.answers.borrow_mut().remove(0))
    }
}

/// A phase V8 keys as a symbol: V8 sets the timing on a copy, which the
/// snapshot then holds, and every later event's head spread of it is V8's
/// too, string phases included.
#[test]
fn agent_phase_with_a_symbol_key_has_v8_set_the_timing() {
    let host = ScriptedHost { answers: RefCell::new((1..=5).map(Value::Host).collect()), asked: RefCell::new(Vec::new()) };
    let mut s = base();
    let mut event = parse(r#"{"type":"agent_phase","at":2}"#).into_object().unwrap();
    event.set("phase", Value::Host(0));
    let mut entry = parse(r#"{"seq":1,"ts":"2030-01-01T00:00:00.000Z"}"#).into_object().unwrap();
    entry.set("event", Value::Object(event));
    apply_event(&mut s, &Value::Object(entry), &host).unwrap();
    assert_eq!(*host.asked.borrow(), [HostOp::PropertyKey, HostOp::SetOnCopy]);
    assert!(s.get(Field::GenerationTimings).strict_equals(&Value::Host(2)));
    assert!(s.get(Field::GenerationPhase).strict_equals(&Value::Host(0)));
    apply_event(&mut s, &parse(r#"{"event":{"type":"checkpoint","revision":1}}"#), &host).unwrap();
    assert!(s.get(Field::GenerationTimings).strict_equals(&Value::Host(3)));
    apply_event(&mut s, &parse(r#"{"event":{"type":"agent_phase","phase":"render"}}"#), &host).unwrap();
    assert_eq!(host.asked.borrow()[2..], [HostOp::SpreadHeld, HostOp::SpreadHeld, HostOp::SetOnCopy]);
    assert!(s.get(Field::GenerationTimings).strict_equals(&Value::Host(5)));
    assert_eq!(member(&s, "generationPhase"), r#""render""#);
}

/// An event V8 holds whole (it has symbol-keyed members): its pending event
/// is V8's `toPendingEvent`, asked only by the cases that set one, and
/// carried along by later events as it is.
#[test]
fn a_held_event_has_v8_make_its_pending_event() {
    let host = ScriptedHost { answers: RefCell::new(vec![Value::Host(1)]), asked: RefCell::new(Vec::new()) };
    let mut s = base();
    let held = Value::Host(0);
    let checkpoint = parse(r#"{"seq":1,"event":{"type":"checkpoint","revision":1}}"#);
    apply_appended(&mut s, &checkpoint, Some(&held), &host).unwrap();
    assert!(host.asked.borrow().is_empty());
    let generate = parse(r#"{"seq":2,"event":{"type":"generate","count":2,"token":"t"}}"#);
    apply_appended(&mut s, &generate, Some(&held), &host).unwrap();
    assert_eq!(*host.asked.borrow(), [HostOp::PendingEvent]);
    assert!(s.get(Field::PendingEvent).strict_equals(&Value::Host(1)));
    assert_eq!(member(&s, "pendingEventSeq"), "2");
    apply_event(&mut s, &parse(r#"{"event":{"type":"agent_phase","phase":"plan"}}"#), &host).unwrap();
    assert_eq!(host.asked.borrow().len(), 1);
    assert!(s.get(Field::PendingEvent).strict_equals(&Value::Host(1)));
}

/// Waivers only V8 can read: V8 appends them to the list so far, and the
/// snapshot holds the array it makes, which holds the caller's objects as
/// the old module's does. Later waivers, plain ones too, are appended to
/// that array by V8 as well.
#[test]
fn held_waivers_have_v8_append_them_and_the_list_stays_held() {
    let host = ScriptedHost { answers: RefCell::new(vec![Value::Host(1), Value::Host(2)]), asked: RefCell::new(Vec::new()) };
    let mut s = base();
    apply_event(&mut s, &parse(r#"{"event":{"type":"detector_waivers","waivers":["a"]}}"#), &host).unwrap();
    assert!(host.asked.borrow().is_empty());
    assert_eq!(member(&s, "detectorWaivers"), r#"["a"]"#);
    let mut event = parse(r#"{"type":"detector_waivers"}"#).into_object().unwrap();
    event.set("waivers", Value::Host(0));
    let mut entry = parse(r#"{"seq":2}"#).into_object().unwrap();
    entry.set("event", Value::Object(event));
    apply_event(&mut s, &Value::Object(entry), &host).unwrap();
    assert_eq!(*host.asked.borrow(), [HostOp::AppendItems]);
    assert!(s.other("detectorWaivers").unwrap().strict_equals(&Value::Host(1)));
    apply_event(&mut s, &parse(r#"{"event":{"type":"detector_waivers","waivers":["b"]}}"#), &host).unwrap();
    assert_eq!(*host.asked.borrow(), [HostOp::AppendItems, HostOp::AppendItems]);
    assert!(s.other("detectorWaivers").unwrap().strict_equals(&Value::Host(2)));
}

/// Every case that sets a pending event asks V8 for it before it changes
/// anything: refused, it leaves the snapshot as it was.
#[test]
fn a_refused_pending_event_leaves_the_snapshot_alone() {
    let host = TestHost(1_893_456_000_000.0);
    let mut refused = 0;
    for ty in EVENT_TYPES {
        for start in starting_points() {
            let entry = parse(&format!(r#"{{"seq":1,"ts":"2030-01-01T00:00:00.000Z","event":{{"type":"{ty}","variant":1,"revision":9}}}}"#));
            let mut s = start.clone();
            let before = format!("{s:?}");
            if apply_appended(&mut s, &entry, Some(&Value::Host(0)), &host).is_err() {
                refused += 1;
                assert_eq!(format!("{s:?}"), before, "{ty} changed the snapshot before it was refused");
            }
        }
    }
    assert!(refused >= 4 * 7, "only {refused} cases asked for a pending event");
}

#[test]
fn steer_done_adds_message_key_even_when_undefined() {
    let s = run(&[r#"{"type":"steer_done"}"#]);
    assert!(matches!(s.other("message"), Some(Value::Undefined)));
    let keys: Vec<String> = s.members().map(|(k, _)| k.to_lossy()).collect();
    assert_eq!(keys.last().map(String::as_str), Some("message"));
}

#[test]
fn unknown_and_odd_entries() {
    let host = TestHost(0.0);
    let mut s = base();
    apply_event(&mut s, &parse(r#"{"seq":1,"type":"nope"}"#), &host).unwrap();
    apply_event(&mut s, &parse("[1,2]"), &host).unwrap();
    assert_eq!(member(&s, "diagnostics"), r#"[{"error":"unknown_event_type","type":"nope"},{"error":"unknown_event_type"}]"#);
    assert_eq!(member(&s, "updatedAt"), r#""1970-01-01T00:00:00.000Z""#);
}

/// Every type the schema lists has a case of its own, and no other does.
#[test]
fn schema_event_types_are_the_reducer_cases() {
    let host = TestHost(0.0);
    let unknown = |ty: &str| {
        let mut s = base();
        apply_event(&mut s, &parse(&format!(r#"{{"seq":1,"event":{{"type":"{ty}"}}}}"#)), &host).unwrap();
        member(&s, "diagnostics").contains("unknown_event_type")
    };
    for ty in EVENT_TYPES {
        assert!(!unknown(ty), "{ty} is listed in the schema but has no case");
    }
    for ty in ["", "Generate", "exit", "prefetch", "manual_edits", "variant_hidden"] {
        assert!(unknown(ty), "{ty} is handled but not listed in the schema's EVENT_TYPES");
    }
}

#[test]
fn objects_owning_to_string_cannot_be_coerced() {
    let host = TestHost(0.0);
    for e in [
        r#"{"type":"checkpoint","revision":{"toString":"x"}}"#,
        r#"{"type":"variant_mounted","variant":[{"toString":1}]}"#,
        r#"{"type":"accept","variantId":{"toString":null}}"#,
        r#"{"type":"agent_phase","phase":{"toString":"p"}}"#,
    ] {
        let mut s = base();
        let before = text(&s);
        let err = apply_event(&mut s, &parse(e), &host).unwrap_err();
        assert_eq!(err, Refusal::Js(JsError::type_error("Cannot convert object to primitive value")), "{e}");
        assert_eq!(text(&s), before, "{e}");
    }
    // Without an own toString the default conversion applies.
    let s = run(&[r#"{"type":"checkpoint","revision":{"valueOf":1}}"#]);
    assert!(member(&s, "diagnostics").contains("stale_checkpoint_ignored"));
}

#[test]
fn odd_hydrated_fields_throw_without_changing_anything() {
    let host = TestHost(0.0);
    let mut s = base();
    s.set(Field::MountedVariants, Value::Number(5.0));
    let before = format!("{s:?}");
    let err = apply_event(&mut s, &parse(r#"{"type":"generate"}"#), &host).unwrap_err();
    assert_eq!(err, Refusal::Js(JsError::type_error("(snapshot.mountedVariants || []) is not iterable")));
    assert_eq!(format!("{s:?}"), before);
}

/// The shortcut agrees with the rebuild itself for every rule and every
/// kind of value: it may skip a field only when rebuilding changes nothing.
#[test]
fn schema_already_rebuilt_is_exactly_when_rebuilding_changes_nothing() {
    let mut with_proto = Object::new();
    with_proto.assign_proto(Value::Object(Object::new()));
    let values = [
        Value::Undefined,
        Value::Null,
        Value::Bool(false),
        Value::Bool(true),
        Value::Number(0.0),
        Value::Number(2.0),
        Value::str(""),
        Value::str("ab"),
        Value::Array(Vec::new()),
        Value::Array(vec![Value::Number(1.0)]),
        Value::Object(Object::new()),
        Value::Object(with_proto),
        Value::Host(0),
    ];
    for spec in FIELDS {
        for v in &values {
            let shown = |v: &Value| format!("{v:?}");
            match rebuild(spec.rebuild, v, spec.name, &TestHost(0.0)) {
                Ok(r) => assert_eq!(already_rebuilt(spec.rebuild, v), shown(&r) == shown(v), "{} = {v:?}", spec.name),
                Err(_) => assert!(!already_rebuilt(spec.rebuild, v), "{} = {v:?}", spec.name),
            }
        }
    }
}

/// A record that notes which keys the reducer reads.
struct Watched<'a> {
    value: &'a Value,
    read: &'a RefCell<Vec<String>>,
}

impl Record for Watched<'_> {
    fn get(&self, key: &str) -> &Value {
        self.read.borrow_mut().push(key.to_owned());
        self.value.get(key)
    }
    fn spread(&self) -> Object {
        spread_object(self.value)
    }
}

/// The keys of `event` (and of its entry) the reducer reads from `s`, and
/// whether the event applied.
fn keys_read(s: &Snapshot, entry: &Value) -> (Vec<String>, Vec<String>) {
    let host = TestHost(1_893_456_000_000.0);
    let (entry_read, event_read) = (RefCell::new(Vec::new()), RefCell::new(Vec::new()));
    let event = entry.get("event");
    let mut s = s.clone();
    let _ = apply_entry(&mut s, &Watched { value: entry, read: &entry_read }, &Watched { value: event, read: &event_read }, &host);
    (entry_read.into_inner(), event_read.into_inner())
}

/// Snapshots a case may start from: fresh, mid-cycle, canceled, and with
/// hydrated fields of odd types (what a hand-edited snapshot file gives).
fn starting_points() -> Vec<Snapshot> {
    let mut odd = base();
    odd.set(Field::AnnotationArtifacts, Value::Array(vec![Value::Null]));
    let mut hostile = Object::new();
    hostile.set("toString", Value::Number(1.0));
    odd.set(Field::MountedVariants, Value::Array(vec![Value::Object(hostile)]));
    odd.set_other("detectorWaivers", Value::Number(5.0));
    let mut mid = run(&[r#"{"type":"generate","count":2}"#, r#"{"type":"variant_mounted","variant":1}"#]);
    mid.set(Field::GenerationCompletedAt, Value::Number(1.0));
    vec![base(), mid, run(&[r#"{"type":"accept","variantId":1}"#]), odd]
}

/// Each case first computes whatever can throw, then changes the snapshot:
/// for every event type (the schema's and an unknown one), every key the
/// case reads from the event or the entry, set to a value whose coercion
/// throws, either applies or leaves the snapshot exactly as it was. Keys
/// are found by watching what the reducer reads, so a case added later is
/// covered without touching this test.
#[test]
fn every_case_leaves_the_snapshot_alone_when_it_throws() {
    let host = TestHost(1_893_456_000_000.0);
    let benign = BENIGN;
    let hostile = [r#"{"toString":"x"}"#, r#"[{"toString":1}]"#];
    let mut thrown = 0;
    for ty in EVENT_TYPES.iter().chain(["unknown"].iter()) {
        for start in starting_points() {
            let (event_keys, entry_keys) = keys_read_by_case(ty, &start);
            for target in event_keys.iter().filter(|k| *k != "type").map(|k| (false, k)).chain(entry_keys.iter().map(|k| (true, k))) {
                for b in benign {
                    for h in hostile {
                        let entry = entry_with(ty, &event_keys, &entry_keys, b, Some((target.0, target.1, h)));
                        let mut s = start.clone();
                        let before = format!("{s:?}");
                        if apply_event(&mut s, &entry, &host).is_err() {
                            thrown += 1;
                            assert_eq!(format!("{s:?}"), before, "{ty}: {} = {h} threw after changing the snapshot", target.1);
                        }
                    }
                }
            }
        }
    }
    assert!(thrown > 50, "only {thrown} throwing cases were tried: the test has lost its bite");
}

const BENIGN: [&str; 4] = [r#"1"#, r#""x""#, r#"true"#, r#""2030-01-01T00:00:00.000Z""#];

/// The event keys and entry keys the case for `ty` reads from `start`: every
/// key read with a benign value, until no new key is read.
fn keys_read_by_case(ty: &str, start: &Snapshot) -> (Vec<String>, Vec<String>) {
    let mut event_keys: Vec<String> = vec!["type".into()];
    let mut entry_keys: Vec<String> = Vec::new();
    for _ in 0..4 {
        for b in BENIGN {
            let entry = entry_with(ty, &event_keys, &entry_keys, b, None);
            let (en, ev) = keys_read(start, &entry);
            for k in ev {
                if !event_keys.contains(&k) {
                    event_keys.push(k);
                }
            }
            for k in en {
                if k != "event" && !entry_keys.contains(&k) {
                    entry_keys.push(k);
                }
            }
        }
    }
    (event_keys, entry_keys)
}

/// Every event key some case of the reducer reads, from any starting point:
/// found by watching it, so tests that build events need no list of keys.
pub fn event_keys_read() -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for ty in EVENT_TYPES {
        for start in starting_points() {
            for k in keys_read_by_case(ty, &start).0 {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
    keys
}

/// `{ seq, ts, event: { type, ...keys } }` with every key at `value`, and
/// `hostile` = (on the entry?, key, value) overriding one of them.
fn entry_with(ty: &str, event_keys: &[String], entry_keys: &[String], value: &str, hostile: Option<(bool, &str, &str)>) -> Value {
    let pick = |on_entry: bool, k: &str| match hostile {
        Some((e, key, h)) if e == on_entry && key == k => h.to_owned(),
        _ => value.to_owned(),
    };
    let mut event: Vec<String> = vec![format!(r#""type":"{ty}""#)];
    event.extend(event_keys.iter().filter(|k| *k != "type").map(|k| format!(r#""{k}":{}"#, pick(false, k))));
    let mut entry: Vec<String> = vec![r#""seq":1"#.into()];
    entry.extend(entry_keys.iter().filter(|k| *k != "seq").map(|k| format!(r#""{k}":{}"#, pick(true, k))));
    entry.push(format!(r#""event":{{{}}}"#, event.join(",")));
    parse(&format!("{{{}}}", entry.join(",")))
}
