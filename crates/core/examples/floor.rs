//! The benchmark's floors: what the disk work and the parsing behind an
//! append and a replay cost from Rust, without Node-API. `bench/bench.mjs`
//! runs it (`cargo run --release -p quiver-live-core --example floor`) and
//! reads its one output line of `key=value` pairs, µs per append or event.
//!
//!   floor append <dir holding line.txt and snapshot.json>
//!   floor replay <journal.jsonl>
//!   floor read <sessions dir>

// A floor is the least any implementation must do, written with std's own
// file API: the crate's rule (every call through `sys`, clippy.toml) is for
// the crate, and the `guarded` floor uses `sys` where it measures it.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use quiver_live_core::js::{json, JsStr, Value};
use quiver_live_core::session::host::Host;
use quiver_live_core::session::reducer::apply_event;
use quiver_live_core::session::snapshot::Snapshot;
use quiver_live_core::session::snapshot_file;
use quiver_live_core::session::store::Store;
use quiver_live_core::sys;

const ROUNDS: usize = 7;

/// The median over rounds of `f` run `ops` times, in µs per op.
fn median_us(ops: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            (0..ops).for_each(|_| f());
            start.elapsed().as_secs_f64() * 1e6 / ops as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[ROUNDS / 2]
}

/// A fixed clock; the floors do not depend on it.
struct FixedClock;

impl Host for FixedClock {
    fn now_ms(&self) -> f64 {
        0.0
    }
    fn date_parse_fallback(&self, _s: &JsStr) -> f64 {
        f64::NAN
    }
    fn json_parse_message(&self, _line: &str) -> String {
        String::new()
    }
}

/// One append's disk work, without the guarantees (`in_place`: the journal
/// appended to, the snapshot file overwritten in place) and with them
/// (`guarded`: the journal opened as a regular file and locked, the stats
/// that key the cache, the snapshot file staged and renamed over so readers
/// never see half of it nor wait), and rendering the bytes from the model
/// (`render`).
fn append(dir: &Path) {
    let line = fs::read_to_string(dir.join("line.txt")).expect("line.txt");
    let bytes = fs::read(dir.join("snapshot.json")).expect("snapshot.json");
    let (journal, snap) = (dir.join("floor.jsonl"), dir.join("floor.snapshot.json"));
    fs::write(&snap, &bytes).expect("write the snapshot file");
    const OPS: usize = 1500;
    let in_place = median_us(OPS, || {
        let mut j = OpenOptions::new().append(true).create(true).open(&journal).expect("open journal");
        j.write_all(line.as_bytes()).expect("append");
        drop(j);
        let mut s = OpenOptions::new().write(true).open(&snap).expect("open snapshot");
        s.write_all(&bytes).expect("rewrite");
    });
    let guarded = median_us(OPS, || {
        let (j, info, _) = sys::open_to_append(&journal).expect("open journal").lock(&journal, Duration::from_secs(10)).expect("lock");
        std::hint::black_box(info);
        j.write_all(line.as_bytes()).expect("append");
        std::hint::black_box(sys::FileInfo::of(&j).expect("fstat"));
        drop(j);
        let staged = sys::StagedFile::create(snap.with_file_name(".floor.0123456789ab"), &snap, sys::Guard::AgeOnly).expect("stage");
        staged.write_all(&bytes).expect("write");
        staged.commit().expect("rename over");
    });
    let Some(mut parsed) = json::parse(std::str::from_utf8(&bytes).expect("UTF-8")).ok().and_then(Value::into_object) else { panic!("snapshot.json is not an object") };
    let journal_bytes = parsed.remove("__journalBytes").and_then(|v| v.to_number().ok()).unwrap_or(0.0) as i64;
    let next_seq = parsed.remove("__nextSeq").and_then(|v| v.to_number().ok()).unwrap_or(1.0);
    let snapshot = Snapshot::over_base(&JsStr::from("floor"), &parsed);
    let entry = json::parse(line.trim_end()).expect("line.txt is JSON");
    let render = median_us(OPS, || {
        std::hint::black_box(json::stringify(&entry));
        std::hint::black_box(snapshot_file::render(&snapshot, journal_bytes, next_seq));
    });
    let _ = fs::remove_file(&journal);
    let _ = fs::remove_file(&snap);
    println!("append-floor in_place_us={in_place:.2} guarded_us={guarded:.2} render_us={render:.2}");
}

/// Per event of a journal: validating each line (the least a replay must
/// do), this crate's parser, its whole replay through a store, and the
/// reducer alone on lines parsed beforehand.
fn replay(journal: &Path) {
    let text = fs::read_to_string(journal).expect("journal");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let n = lines.len();
    let per_event = |f: &mut dyn FnMut()| median_us(1, f) / n as f64;
    let validate = per_event(&mut || lines.iter().for_each(|l| drop(std::hint::black_box(json::skim::top_level_members(l)))));
    let ours = per_event(&mut || lines.iter().for_each(|l| drop(std::hint::black_box(json::parse(l)))));
    let entries: Vec<Value> = lines.iter().filter_map(|l| json::parse(l).ok()).collect();
    let reduce = per_event(&mut || {
        let mut s = Snapshot::base(&JsStr::from("floor"));
        entries.iter().for_each(|e| drop(apply_event(&mut s, e, &FixedClock)));
        std::hint::black_box(s);
    });
    let scratch = std::env::temp_dir().join(format!("qln-floor-{}", std::process::id()));
    let sessions = scratch.join(".impeccable").join("live").join("sessions");
    fs::create_dir_all(&sessions).expect("scratch project");
    fs::copy(journal, sessions.join("floor.jsonl")).expect("copy the journal");
    let whole = per_event(&mut || {
        let mut store = Store::open(&scratch, false).expect("store");
        std::hint::black_box(store.read("floor", false, &FixedClock).map(|v| v.version).expect("replay"));
    });
    let _ = fs::remove_dir_all(&scratch);
    println!(
        "replay-floor validate_us_per_event={validate:.3} \
         ours_parse_us_per_event={ours:.3} replay_us_per_event={whole:.3} reduce_us_per_event={reduce:.3}"
    );
}

/// Per session of a sessions directory: what a store that has not seen it
/// must do before it can trust the snapshot file, the `stat` of its journal
/// and a read of its snapshot file (into one reused buffer).
fn read(sessions: &Path) {
    let journals: Vec<_> = fs::read_dir(sessions)
        .expect("sessions dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    let snapshots: Vec<_> = journals.iter().map(|j| j.with_extension("snapshot.json")).collect();
    let mut buffer = Vec::new();
    let per_session = median_us(1, || {
        for (journal, snapshot) in journals.iter().zip(&snapshots) {
            std::hint::black_box(sys::FileInfo::of_path(journal).expect("stat"));
            sys::read_regular(snapshot, sys::Links::Refuse, &mut buffer, sys::MAX_TEXT_FILE).expect("read");
        }
    }) / journals.len() as f64;
    println!("read-floor stat_read_us_per_session={per_session:.2}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("append"), Some(dir)) => append(Path::new(dir)),
        (Some("replay"), Some(journal)) => replay(Path::new(journal)),
        (Some("read"), Some(sessions)) => read(Path::new(sessions)),
        _ => {
            eprintln!("usage: floor append <dir> | floor replay <journal.jsonl> | floor read <sessions dir>");
            std::process::exit(2);
        }
    }
}
