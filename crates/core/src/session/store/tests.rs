//! The store against real files in a temporary project.

use std::fs;
use std::io::Write;

use super::*;
use crate::js::json;
use crate::session::journal;
use crate::session::reducer::tests::TestHost;

/// A project directory of its own, removed when the test is done with it.
struct TempRoot(PathBuf);

impl std::ops::Deref for TempRoot {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn temp_root(name: &str) -> TempRoot {
    let dir = std::env::temp_dir().join(format!("qln-store-{}-{}", name, std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    TempRoot(dir)
}

/// An event as the binding hands it over, stamped at a fixed time.
fn event(json_text: &str) -> NewEvent {
    let value = json::parse(json_text).unwrap();
    let ts = Value::str("2030-01-01T00:00:00.000Z");
    let entry = crate::session::reducer::obj(&[
        ("seq", Value::Number(0.0)),
        ("id", value.get("id").clone()),
        ("type", value.get("type").clone()),
        ("ts", ts.clone()),
        ("event", value.clone()),
    ]);
    NewEvent { value, ts, entry: json::stringify(&Value::Object(entry)).unwrap(), held: None }
}

/// The snapshot as the value model, whichever form the store holds.
fn model(s: &Cached) -> Snapshot {
    s.clone().into_model(&JsStr::from("s")).expect("model")
}

fn text(s: &Cached) -> String {
    json::stringify_members(model(s).members(), None)
}

/// A `generate` event for session `id`.
fn generate(id: &str) -> NewEvent {
    event(&format!(r#"{{"type":"generate","id":"{id}"}}"#))
}

/// An `agent_done` line appended to the journal of `id` as another process
/// would, behind the store's back.
fn append_elsewhere(store: &Store, id: &str) {
    let line = format!(r#"{{"seq":2,"id":"{id}","type":"agent_done","ts":"2030-01-01T00:00:00.000Z","event":{{"type":"agent_done"}}}}"#);
    append_raw(&store.journal_path(id), &(line + "\n"));
}

fn append_raw(path: &Path, bytes: &str) {
    fs::OpenOptions::new().append(true).open(path).unwrap().write_all(bytes.as_bytes()).unwrap();
}

#[test]
fn append_assigns_sequence_and_writes_files() {
    let root = temp_root("append");
    let host = TestHost(1_893_456_000_000.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
    let v = store.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
    assert_eq!(model(v.snapshot).get(crate::session::schema::Field::Phase).as_js_str().map(JsStr::to_lossy).as_deref(), Some("variants_ready"));
    let journal = fs::read_to_string(store.journal_path("s")).unwrap();
    assert_eq!(
        journal.lines().next().unwrap(),
        r#"{"seq":1,"id":"s","type":"generate","ts":"2030-01-01T00:00:00.000Z","event":{"type":"generate","id":"s"}}"#
    );
    assert_eq!(journal.lines().count(), 2);
    let snap = fs::read_to_string(store.snapshot_path("s")).unwrap();
    assert!(snap.ends_with(&format!("  \"__journalBytes\": {},\n  \"__nextSeq\": 3\n}}\n", journal.len())));
}

/// A listing reads every session, and returns the ones not completed,
/// in id order, also when a completed one was read from its snapshot
/// file by a store that never saw it live.
#[test]
fn read_active_leaves_out_completed_sessions() {
    let root = temp_root("active");
    let host = TestHost(0.0);
    let mut writer = Store::open(&root, false).unwrap();
    for id in ["c", "a", "b"] {
        writer.append(id, &mut Some(generate(id)), &host).unwrap();
    }
    writer.append("b", &mut Some(event(r#"{"type":"complete","id":"b"}"#)), &host).unwrap();
    let ids = |all: Vec<(String, u64)>| all.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    assert_eq!(ids(writer.read_active(&host).unwrap()), ["a", "c"]);
    let mut fresh = Store::open(&root, false).unwrap();
    assert_eq!(ids(fresh.read_active(&host).unwrap()), ["a", "c"]);
    assert!(fresh.current("b").is_some_and(Cached::is_completed), "the completed session was read");
}

#[test]
fn tail_replay_equals_full_replay_with_corrupt_lines() {
    let root = temp_root("tail");
    let host = TestHost(0.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
    let path = store.journal_path("s");
    // Another writer: a corrupt line, a good line and a stale checkpoint.
    append_raw(&path, "{oops\n");
    append_raw(&path, r#"{"seq":3,"id":"s","type":"checkpoint","ts":"2030-01-01T00:00:00.000Z","event":{"type":"checkpoint","revision":4}}"#);
    append_raw(&path, "\n");
    let via_tail = text(store.read("s", false, &host).unwrap().snapshot);
    append_raw(&path, "null\n");
    append_raw(&path, r#"{"seq":9,"event":{"type":"checkpoint","revision":1}}"#);
    append_raw(&path, "\n");
    let via_tail2 = text(store.read("s", false, &host).unwrap().snapshot);
    let full = journal::replay_file(&path, &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
    assert_eq!(via_tail2, text(&Cached::Model(Box::new(full.visible()))));
    assert!(via_tail.contains(r#""line":2"#));
    assert!(via_tail2.contains(r#"{"error":"journal_parse_failed","line":4,"message":"entry is not object"}"#));
    assert_eq!(full.next_seq, 10.0);
}

#[test]
fn torn_tail_is_not_glued_to_the_next_append() {
    let root = temp_root("torn");
    let host = TestHost(0.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).unwrap();
    append_raw(&store.journal_path("s"), r#"{"seq":2,"id":"s","type":"agent_do"#);
    store.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"variant_mounted","variant":1,"id":"s"}"#)), &host).unwrap();
    let replay = journal::replay_file(&store.journal_path("s"), &JsStr::from("s"), &host, Locking::TakeShared).unwrap();
    let s = text(&Cached::Model(Box::new(replay.visible())));
    assert!(s.contains(r#""renderState":"mounted""#), "{s}");
    assert!(s.contains(r#""phase":"variants_ready""#), "{s}");
    assert_eq!(replay.parse_diags.len(), 1);
}

#[test]
fn snapshot_file_is_trusted_only_at_the_journal_size() {
    let root = temp_root("hydrate");
    let host = TestHost(0.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
    // A snapshot file that claims the current size is believed as is...
    let snap_path = store.snapshot_path("s");
    let doctored = fs::read_to_string(&snap_path).unwrap().replace("\"expectedVariants\": 2", "\"expectedVariants\": 7");
    fs::write(&snap_path, doctored).unwrap();
    let mut fresh = Store::open(&root, false).unwrap();
    assert!(text(fresh.read("s", true, &host).unwrap().snapshot).contains(r#""expectedVariants":7"#));
    // ...and ignored once the journal grew past it, or when flushing.
    let mut other = Store::open(&root, false).unwrap();
    assert!(text(other.flush("s", &host).unwrap().snapshot).contains(r#""expectedVariants":2"#));
}

/// A file either module writes is held as text (no model built) and
/// means exactly what the full parser makes of it; an append then works
/// on the model parsed from that text.
#[test]
fn a_canonical_snapshot_file_is_held_as_text_until_an_append() {
    let root = temp_root("text");
    let host = TestHost(1_893_456_000_000.0);
    let mut writer = Store::open(&root, false).unwrap();
    writer.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2,"prompt":"é \"q\" \u2028"}"#)), &host).unwrap();
    let want = text(writer.read("s", false, &host).unwrap().snapshot);
    let mut fresh = Store::open(&root, false).unwrap();
    let got = fresh.read("s", true, &host).unwrap().snapshot;
    let Cached::Text(t) = got else { panic!("expected the text form, got {got:?}") };
    assert!(!t.json.contains("__journalBytes") && !t.json.contains("__nextSeq"), "{}", t.json);
    assert_eq!(text(got), want);
    let mut flusher = Store::open(&root, false).unwrap();
    assert!(matches!(flusher.read("s", true, &host).unwrap().snapshot, Cached::Text(_)));
    assert_eq!(text(flusher.flush("s", &host).unwrap().snapshot), want, "flush writes from the model");
    let after = fresh.append("s", &mut Some(event(r#"{"type":"agent_done","id":"s"}"#)), &host).unwrap();
    assert!(matches!(after.snapshot, Cached::Model(_)));
    let again = text(after.snapshot);
    let mut replayed = Store::open(&root, false).unwrap();
    assert_eq!(again, text(replayed.flush("s", &host).unwrap().snapshot));
}

/// Files the fast path is unsure of take the full parser, which still
/// trusts them when they name the journal's size.
#[test]
fn an_unusual_snapshot_file_takes_the_full_parser() {
    let root = temp_root("unusual");
    let host = TestHost(0.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
    let snap_path = store.snapshot_path("s");
    let original = fs::read_to_string(&snap_path).unwrap();
    let variants = [
        original.replace("\"phase\"", "\"ph\\u0061se\""),
        original.replacen("{", "{\"extra\": 1,", 1),
        original.replace("\"updatedAt\"", "\"__proto__\": {},\n  \"updatedAt\""),
    ];
    for doctored in variants {
        fs::write(&snap_path, &doctored).unwrap();
        let mut fresh = Store::open(&root, false).unwrap();
        let got = fresh.read("s", true, &host).unwrap().snapshot;
        assert!(matches!(got, Cached::Model(_)), "{doctored}");
    }
}

/// The snapshot file names the journal's size and holds the snapshot
/// the store returned: the file a reader in another process trusts.
fn assert_snapshot_file_current(store: &mut Store, id: &str, host: &dyn Host) {
    let journal_len = fs::metadata(store.journal_path(id)).unwrap().len();
    let file = fs::read_to_string(store.snapshot_path(id)).unwrap();
    assert!(file.contains(&format!("\"__journalBytes\": {journal_len},")), "stale snapshot file: {file}");
    let mut fresh = Store::open(&store.root_dir.join("../../.."), false).unwrap();
    let from_file = text(fresh.read(id, true, host).unwrap().snapshot);
    let replayed = text(&Cached::Model(Box::new(journal::replay_file(&store.journal_path(id), &JsStr::from(id), host, Locking::TakeShared).unwrap().visible())));
    assert_eq!(from_file, replayed);
}

fn descriptors_open_on(path: &Path) -> usize {
    let target = fs::canonicalize(path).unwrap();
    fs::read_dir("/proc/self/fd").unwrap().filter_map(|e| fs::read_link(e.ok()?.path()).ok()).filter(|l| *l == target).count()
}

/// No descriptor outlives the call that opened it, and files deleted
/// between appends are made again.
#[test]
fn no_file_stays_open_after_a_call() {
    let root = temp_root("closed");
    let host = TestHost(1_893_456_000_000.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":3}"#)), &host).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"variant_mounted","id":"s","variant":1}"#)), &host).unwrap();
    let (journal, snapshot) = (store.journal_path("s"), store.snapshot_path("s"));
    assert_eq!((descriptors_open_on(&journal), descriptors_open_on(&snapshot)), (0, 0), "after appends");
    store.flush("s", &host).unwrap();
    assert_eq!((descriptors_open_on(&journal), descriptors_open_on(&snapshot)), (0, 0), "after a flush");
    fs::remove_file(&journal).unwrap();
    fs::remove_file(&snapshot).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":2}"#)), &host).unwrap();
    assert_snapshot_file_current(&mut store, "s", &host);
}

#[test]
fn invalid_ids_are_refused_before_any_path_is_built() {
    let root = temp_root("ids");
    let host = TestHost(0.0);
    let mut store = Store::open(&root, false).unwrap();
    for bad in ["../x", "a/b", "", "a\0b", &"x".repeat(129)] {
        let err = store.append(bad, &mut Some(event(r#"{"type":"x"}"#)), &host).err().unwrap();
        assert_eq!(err.to_string(), format!("Error: invalid session id: {}", bad));
    }
    assert!(store.list_ids().unwrap().is_empty());
}

/// An unlocked append landing between an append's stat and its write is
/// neither lost from the returned snapshot nor claimed by a snapshot file
/// that lacks it.
#[test]
fn an_unlocked_append_racing_an_append_is_not_lost() {
    let root = temp_root("race");
    let host = TestHost(1_893_456_000_000.0);
    let mut store = Store::open(&root, false).unwrap();
    store.append("s", &mut Some(event(r#"{"type":"generate","id":"s","count":3}"#)), &host).unwrap();
    let journal = store.journal_path("s");
    let fired = std::rc::Rc::new(std::cell::Cell::new(false));
    let seen = fired.clone();
    store.before_write = Some(Box::new(move || {
        if !seen.replace(true) {
            append_raw(&journal, "{\"seq\":2,\"id\":\"s\",\"type\":\"variant_mounted\",\"ts\":\"2030-01-01T00:00:01.000Z\",\"event\":{\"type\":\"variant_mounted\",\"id\":\"s\",\"variant\":2}}\n");
        }
    }));
    let got = text(store.append("s", &mut Some(event(r#"{"type":"agent_phase","id":"s","phase":"picked_up"}"#)), &host).unwrap().snapshot);
    assert!(fired.get(), "the foreign line went in mid-append");
    assert!(got.contains(r#""mountedVariants":[2]"#), "the foreign event is in the returned snapshot: {got}");
    let journal_len = fs::metadata(store.journal_path("s")).unwrap().len();
    let file = fs::read_to_string(store.snapshot_path("s")).unwrap();
    assert!(file.contains(&format!("\"__journalBytes\": {journal_len},")), "the snapshot file names the whole journal: {file}");
    let mut fresh = Store::open(&root, false).unwrap();
    assert_eq!(text(fresh.flush("s", &host).unwrap().snapshot), got);
    let mut reader = Store::open(&root, false).unwrap();
    assert_eq!(text(reader.read("s", true, &host).unwrap().snapshot), got);
}

/// A store that touches many sessions keeps the derived state of at most
/// `MAX_DERIVED` of them; a dropped one read again from an unchanged journal
/// comes back as the same version (the object a caller holds stays the one
/// returned), from a changed journal as a new one.
#[test]
fn the_cache_is_bounded_and_a_dropped_session_keeps_its_version() {
    let root = temp_root("bound");
    let host = TestHost(1_893_456_000_000.0);
    let mut store = Store::open(&root, false).unwrap();
    let ids: Vec<String> = (0..MAX_DERIVED * 2).map(|i| format!("s{i}")).collect();
    let first = store.append(&ids[0], &mut Some(generate(&ids[0])), &host).unwrap().version;
    for id in &ids[1..] {
        store.append(id, &mut Some(generate(id)), &host).unwrap();
        store.read(id, true, &host).unwrap();
    }
    assert!(store.sessions.derived_count() <= MAX_DERIVED, "{} sessions hold their state", store.sessions.derived_count());
    assert!(store.current(&ids[0]).is_none(), "the least recently used was dropped");
    assert_eq!(store.read(&ids[0], true, &host).unwrap().version, first, "same journal, same version");
    append_elsewhere(&store, &ids[1]);
    let before = store.sessions.version(&ids[1]).unwrap();
    assert_ne!(store.read(&ids[1], true, &host).unwrap().version, before, "a changed journal, a new version");
}

/// A session dropped from the cache whose journal has not changed is read,
/// and listed, as unchanged without being derived again: its version, and
/// whether it is completed, come from what was kept when it was dropped.
/// A changed journal is derived again.
#[test]
fn a_dropped_session_with_an_unchanged_journal_is_not_derived_again() {
    let root = temp_root("dropped-read");
    let host = TestHost(1_893_456_000_000.0);
    let mut store = Store::open(&root, false).unwrap();
    let ids: Vec<String> = (0..MAX_DERIVED * 2).map(|i| format!("s{i:04}")).collect();
    for id in &ids {
        store.append(id, &mut Some(generate(id)), &host).unwrap();
    }
    store.append(&ids[1], &mut Some(event(&format!(r#"{{"type":"complete","id":"{}"}}"#, ids[1]))), &host).unwrap();
    let versions: Vec<u64> = ids.iter().map(|id| store.sessions.version(id).unwrap()).collect();
    for id in &ids[2..] {
        store.read(id, true, &host).unwrap();
    }
    assert!(store.current(&ids[0]).is_none() && store.current(&ids[1]).is_none(), "the first two were dropped");

    assert_eq!(store.read_version(&ids[0], &host).unwrap(), versions[0]);
    assert!(store.current(&ids[0]).is_none(), "read as unchanged, not derived");
    let listed = store.read_active(&host).unwrap();
    assert_eq!(listed.len(), ids.len() - 1, "every session but the completed one");
    assert!(listed.iter().all(|(id, v)| *v == versions[ids.iter().position(|i| i == id).unwrap()]), "each at the version it had");
    assert!(!listed.iter().any(|(id, _)| id == &ids[1]), "the dropped completed session is left out");
    assert!(store.sessions.derived_count() <= MAX_DERIVED, "{} sessions hold their state", store.sessions.derived_count());

    append_elsewhere(&store, &ids[0]);
    assert_ne!(store.read_version(&ids[0], &host).unwrap(), versions[0], "a changed journal, a new version");
    assert!(store.current(&ids[0]).is_some(), "derived again");
}

/// Every file and directory under `dir` with its bytes.
fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.insert(path.clone(), None);
                todo.push(path);
            } else {
                out.insert(path.clone(), Some(fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// A read-only store reads what a writing one reads, and creates, sweeps
/// and writes nothing: not the sessions directory of a bare project, not a
/// legacy journal's copy, not a snapshot file, not the removal of an
/// abandoned staged file. Its appends and flushes fail, naming the store.
#[test]
fn a_read_only_store_reads_and_writes_nothing() {
    let host = TestHost(0.0);
    let bare = temp_root("ro-bare");
    let mut reader = Store::open_read_only(&bare);
    assert!(!reader.has("s").unwrap());
    assert!(reader.read_active(&host).unwrap().is_empty());
    reader.read("s", true, &host).unwrap();
    let refused = reader.append("s", &mut Some(event(r#"{"type":"generate","id":"s"}"#)), &host).map(|_| ()).unwrap_err();
    assert!(refused.to_string().contains("read-only"), "{refused}");
    assert!(reader.flush("s", &host).is_err());
    assert!(tree(&bare).is_empty(), "{:?}", tree(&bare));

    let root = temp_root("ro");
    let mut writer = Store::open(&root, false).unwrap();
    writer.append("a", &mut Some(event(r#"{"type":"generate","id":"a"}"#)), &host).unwrap();
    writer.append("b", &mut Some(event(r#"{"type":"generate","id":"b"}"#)), &host).unwrap();
    // A session only in the legacy directory, the journal of another with
    // no snapshot file yet, and a staged file a writer left long ago.
    let legacy = root.join(".impeccable-live").join("sessions");
    fs::create_dir_all(&legacy).unwrap();
    fs::copy(writer.journal_path("a"), legacy.join("old.jsonl")).unwrap();
    append_raw(&writer.journal_path("b"), "{\"seq\":2,\"id\":\"b\",\"type\":\"agent_done\",\"ts\":\"x\",\"event\":{\"type\":\"agent_done\"}}\n");
    let staged = writer.root_dir.join(".a.0123456789ab");
    fs::write(&staged, "{").unwrap();
    let old = std::time::SystemTime::now() - 2 * layout::STAGED_MIN_AGE;
    fs::File::options().write(true).open(&staged).unwrap().set_modified(old).unwrap();
    let before = tree(&root);

    let mut reader = Store::open_read_only(&root);
    let ids = reader.read_active(&host).unwrap().into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    assert_eq!(ids, ["a", "b", "old"]);
    let mut fresh = Store::open(&root, false).unwrap();
    for id in ["a", "b", "old"] {
        let read = text(reader.read(id, true, &host).unwrap().snapshot);
        assert_eq!(read, text(fresh.read(id, true, &host).unwrap().snapshot), "{id}");
    }
    for id in ["a", "old"] {
        assert!(reader.append(id, &mut Some(event(&format!(r#"{{"type":"steer","id":"{id}"}}"#))), &host).is_err());
        assert!(reader.flush(id, &host).is_err());
    }
    assert!(reader.persist_rendered("a", 1, "{}\n").is_err());
    assert_eq!(reader.sweep_staged(), 0);
    assert_eq!(tree(&root), before);
}
