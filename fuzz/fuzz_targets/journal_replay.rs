//! A journal's bytes replayed three ways that must agree: streamed from the
//! file field by field (what a read does), line by line through the full
//! parser (what the old module does), and as a prefix replayed then its
//! tail read after an append (what a read after another process's append
//! does).
//!
//! Input: one byte choosing where the prefix ends, then the journal bytes.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::{json, JsStr};
use quiver_live_core::session::journal::{replay_file, replay_tail, Locking, Replay};
use quiver_live_core::session::snapshot::Snapshot;
use quiver_live_fuzz::{scratch_dir, FixedHost};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, journal)) = data.split_first() else { return };
    check(usize::from(cut) * journal.len() / 255, journal);
});

fn check(cut: usize, journal: &[u8]) {
    let host = FixedHost;
    let id = JsStr::from("s");
    let path = scratch_dir().join("s.jsonl");
    std::fs::write(&path, journal).unwrap();
    let streamed = replay_file(&path, &id, &host, Locking::TakeShared).unwrap();
    assert_eq!(streamed.offset, journal.len() as u64);
    assert_eq!(streamed.newlines, journal.iter().filter(|&&b| b == b'\n').count() as u64);

    let mut serial = Replay::empty(&id);
    let text = String::from_utf8_lossy(journal);
    for (i, line) in text.split('\n').enumerate() {
        serial.apply_line(line, i as u64 + 1, &host);
    }
    assert_eq!(show(&streamed), show(&serial), "streamed and serial replay differ");
    check_text_form(&streamed);

    std::fs::write(&path, &journal[..cut]).unwrap();
    let mut tail = replay_file(&path, &id, &host, Locking::TakeShared).unwrap();
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&journal[cut..]).unwrap();
    if replay_tail(&mut tail, &path, &host, Locking::TakeShared).unwrap() {
        assert_eq!(show(&tail), show(&streamed), "prefix then tail differs from the whole (cut at {cut})");
        assert_eq!((tail.offset, tail.newlines, tail.clean_end), (streamed.offset, streamed.newlines, streamed.clean_end));
    } else {
        // Refused only for a reason: the prefix ended mid-line or read the clock.
        assert!(!tail.clean_end || tail.clock_dependent, "tail replay refused a clean prefix (cut at {cut})");
    }
}

fn show(r: &Replay) -> String {
    format!("{} next_seq={} clock={}", json::stringify_members(r.visible().members(), None), r.next_seq, r.clock_dependent)
}

/// The text a read keeps, when it keeps one, parses to the visible snapshot.
fn check_text_form(r: &Replay) {
    let Some(text) = r.visible_text() else { return };
    let parsed = json::parse(&text.json).expect("the kept text parses").into_object().expect("an object");
    let back = Snapshot::over_base(&JsStr::from("s"), &parsed);
    let model = r.visible();
    assert_eq!(json::stringify_members(back.members(), None), json::stringify_members(model.members(), None), "kept text differs from the snapshot");
    assert_eq!(text.completed, model.is_completed());
}
