use super::record::{parse_held, Held};
use super::*;
use crate::sys;
use std::fs;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A fresh live dir under the system temp dir, removed on drop.
struct TempLive(PathBuf);

impl TempLive {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "lock-test-{}-{n}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        fs::create_dir_all(&dir).expect("temp dir");
        TempLive(dir)
    }

    fn lock(&self, name: &str) -> PathBuf {
        lock_path(&Layout::of(&self.0), &format!("/project/{name}"))
    }
}

impl Drop for TempLive {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn write_lock(path: &Path, content: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("locks dir");
    fs::write(path, content).expect("write lock");
}

fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait true");
    pid
}

/// `JSON.stringify(s)`, as the JS wrapper hands a path to `try_acquire`.
fn json_text(s: &str) -> String {
    let mut out = String::new();
    crate::js::json::write_string(&mut out, &crate::js::JsStr::from(s));
    out
}

/// Retries until it holds the lock, as the JS wrapper's loop does.
fn acquire_retrying(path: &Path, owner: Option<&str>, file: &str) -> Acquired {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(acquired) = try_acquire(path, owner, file).expect("attempt") {
            return acquired;
        }
        assert!(std::time::Instant::now() < deadline, "not acquired within 10 s");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn must_acquire(path: &Path) -> Acquired {
    match try_acquire(path, None, "\"/project/f\"") {
        Ok(Some(acquired)) => acquired,
        other => panic!("expected to acquire {}: {other:?}", path.display()),
    }
}

fn is_held(path: &Path) -> bool {
    matches!(try_acquire(path, None, "\"/project/f\""), Ok(None))
}

#[test]
fn lock_path_shape() {
    let p = lock_path(&Layout::of(Path::new("/r")), "/r/src/a.css");
    let name = p.file_name().and_then(|n| n.to_str()).expect("name");
    assert_eq!(p.parent(), Some(Path::new("/r/.impeccable/live/locks")));
    assert_eq!(name.len(), 24 + 5);
    assert!(name.ends_with(".lock"));
    // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    let abc = lock_path(&Layout::of(Path::new("/x")), "abc");
    assert_eq!(abc, Path::new("/x/.impeccable/live/locks/ba7816bf8f01cfea414140de.lock"));
}

#[test]
fn lock_creation_is_exclusive() {
    let live = TempLive::new();
    let path = live.lock("a");
    let first = must_acquire(&path);
    assert!(is_held(&path));
    let text = fs::read_to_string(&path).expect("lock content");
    assert!(
        text.contains(&format!("\"token\":\"{}\"", first.token)),
        "{text}"
    );
    release(&first);
    assert!(!path.exists());
    release(&must_acquire(&path));
}

#[test]
fn lock_of_dead_pid_is_cleared_at_once() {
    let live = TempLive::new();
    let path = live.lock("d");
    let record = format!(
        "{{\"owner\":null,\"token\":\"x\",\"pid\":{},\"at\":1,\"file\":\"/f\"}}\n",
        dead_pid()
    );
    write_lock(&path, &record);
    release(&must_acquire(&path));
}

#[test]
fn lock_readable_without_numeric_pid_is_cleared() {
    let live = TempLive::new();
    for (i, content) in [
        "{\"token\":\"x\"}",
        "{\"pid\":\"1\"}",
        "5",
        "[1]",
        "\"x\"",
        "true",
    ]
    .iter()
    .enumerate()
    {
        let path = live.lock(&format!("n{i}"));
        write_lock(&path, content);
        release(&must_acquire(&path));
    }
}

#[test]
#[cfg(target_os = "linux")]
fn lock_of_reused_pid_is_cleared() {
    let live = TempLive::new();
    let path = live.lock("e");
    let me = std::process::id();
    let ticks = sys::process_start_time(me).expect("own start time");
    let boot = sys::boot_id().expect("boot id");
    let record = format!(
        "{{\"token\":\"x\",\"pid\":{me},\"at\":1,\"file\":\"/f\",\
         \"startTime\":{},\"bootId\":\"{boot}\"}}\n",
        ticks + 12345
    );
    write_lock(&path, &record);
    release(&must_acquire(&path));
}

#[test]
#[cfg(target_os = "linux")]
fn lock_of_live_pid_is_respected() {
    let live = TempLive::new();
    let me = std::process::id();
    let ticks = sys::process_start_time(me).expect("own start time");
    let boot = sys::boot_id().expect("boot id");
    let variants = [
        String::new(),
        format!(",\"startTime\":{ticks},\"bootId\":\"{boot}\""),
        // Only one of the two fields: cannot prove reuse.
        format!(",\"startTime\":{}", ticks + 1),
    ];
    for (i, extra) in variants.iter().enumerate() {
        let path = live.lock(&format!("l{i}"));
        write_lock(&path, &format!("{{\"token\":\"x\",\"pid\":{me}{extra}}}\n"));
        assert!(is_held(&path), "variant {i} must be respected");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn lock_from_an_earlier_boot_is_stale_even_if_its_pid_is_alive() {
    let live = TempLive::new();
    let me = std::process::id();
    let path = live.lock("boot");
    write_lock(&path, &format!("{{\"token\":\"x\",\"pid\":{me},\"startTime\":1,\"bootId\":\"an-earlier-boot\"}}\n"));
    release(&must_acquire(&path));
}

#[test]
fn lock_unreadable_is_cleared_only_when_old() {
    let live = TempLive::new();
    for (i, content) in ["", "{\"pid\":", "null", "0", "\"\"", "false", "\u{feff}{}"]
        .iter()
        .enumerate()
    {
        let path = live.lock(&format!("u{i}"));
        write_lock(&path, content);
        assert!(
            is_held(&path),
            "fresh unreadable {content:?} must be respected"
        );
        let old = SystemTime::now() - Duration::from_secs(61);
        let file = fs::File::options()
            .write(true)
            .open(&path)
            .expect("open lock");
        file.set_modified(old).expect("set mtime");
        drop(file);
        release(&must_acquire(&path));
    }
}

#[test]
fn lock_release_leaves_a_replacement_alone() {
    let live = TempLive::new();
    let path = live.lock("r");
    let ours = must_acquire(&path);
    let theirs = format!("{{\"token\":\"other\",\"pid\":{}}}\n", std::process::id());
    fs::write(&path, &theirs).expect("replace lock");
    release(&ours);
    assert_eq!(fs::read_to_string(&path).expect("still there"), theirs);
    // Unreadable content is removed by release, as in the JS.
    fs::write(&path, "garbage").expect("garbage");
    release(&ours);
    assert!(!path.exists());
    release(&ours); // nothing there: ignored
}

#[test]
fn lock_release_if_held_removes_only_its_own_lock() {
    let live = TempLive::new();
    let path = live.lock("h");
    let ours = must_acquire(&path);
    for other in [format!("{{\"token\":\"other\",\"pid\":{}}}\n", std::process::id()), "garbage".to_owned(), String::new()] {
        fs::write(&path, &other).expect("replace lock");
        release_if_held(&ours);
        assert_eq!(fs::read_to_string(&path).expect("left alone"), other);
    }
    fs::remove_file(&path).expect("remove");
    release_if_held(&ours); // nothing there: ignored
    assert!(!path.exists());
    let ours = must_acquire(&path);
    release_if_held(&ours);
    assert!(!path.exists());
    let again = must_acquire(&path);
    release_if_held(&ours); // released before: the next holder's lock stays
    assert!(is_held(&path));
    release(&again);
}

#[test]
fn lock_record_byte_format() {
    let record = LockRecord {
        owner_json: Some("{\"kind\":\"accept\",\"n\":[1,null]}".into()),
        token: "6f1c0b8e-2d1f-4c4e-9d7a-0c4b2b8e5a11".into(),
        pid: 4242,
        at: 1_700_000_000_123,
        file_json: json_text("/p/a \"b\"\\c\u{1}\u{7f}\u{2028}é.css"),
        start_time: Some(98765),
        boot_id: Some("c74a15a7-97e9-4230-8bd5-f60d426e9567".into()),
    };
    let expected = concat!(
        r#"{"owner":{"kind":"accept","n":[1,null]},"#,
        r#""token":"6f1c0b8e-2d1f-4c4e-9d7a-0c4b2b8e5a11","pid":4242,"#,
        r#""at":1700000000123,"file":"/p/a \"b\"\\c\u0001"#,
        "\u{7f}\u{2028}é.css\",",
        r#""startTime":98765,"bootId":"c74a15a7-97e9-4230-8bd5-f60d426e9567"}"#,
        "\n"
    );
    assert_eq!(record.to_json_line(), expected);
    let bare = LockRecord {
        owner_json: None,
        start_time: None,
        boot_id: None,
        ..record
    };
    assert!(bare.to_json_line().starts_with("{\"token\":"));
    assert!(bare
        .to_json_line()
        .ends_with("\"file\":\"/p/a \\\"b\\\"\\\\c\\u0001\u{7f}\u{2028}é.css\"}\n"));
}

/// The JS prefix of our record must be what Node's JSON.stringify writes.
#[test]
fn lock_record_matches_node_json_stringify() {
    let file = "/p/\u{1}\u{1f}\"\\/\u{7f}\u{2028}\u{2029}é😀";
    let record = LockRecord {
        owner_json: Some("{\"a\":[1,\"x\"]}".into()),
        token: "t".into(),
        pid: 7,
        at: 1_700_000_000_000,
        file_json: json_text(file),
        start_time: None,
        boot_id: None,
    };
    let script = "const f=process.argv[1];process.stdout.write(JSON.stringify(\
        {owner:{a:[1,'x']},token:'t',pid:7,at:1700000000000,file:f})+'\\n')";
    let Some(stdout) = sys::node_eval(script, &[file]) else { return };
    assert_eq!(String::from_utf8_lossy(&stdout), record.to_json_line());
}

#[test]
fn lock_parse_held_follows_json_parse() {
    let held = |t: &str| parse_held(t);
    assert_eq!(held("null"), None);
    assert_eq!(held("-0"), None);
    assert_eq!(held("1e-400"), None, "underflows to 0: falsy");
    assert_eq!(held("01"), None);
    assert_eq!(held("{\"a\":1,}"), None);
    assert_eq!(held("{\"a\":1} x"), None);
    assert_eq!(held("\"\\x\""), None);
    assert_eq!(held("\"\t\""), None);
    assert_eq!(held("5"), Some(Held::default()));
    assert_eq!(held(" [] \n"), Some(Held::default()));
    let h = held("{\"\\u0070id\":1e400,\"token\":\"a\",\"token\":\"b\",\"x\":{\"pid\":3}}")
        .expect("readable");
    assert_eq!(h.pid, Some(f64::INFINITY));
    assert_eq!(h.token.as_deref(), Some("b"));
    let h = held("{\"pid\":[1],\"token\":5,\"bootId\":\"\\ud83d\\ude00\\ud800\"}").expect("ok");
    assert_eq!(
        h,
        Held {
            boot_id: Some("😀\u{fffd}".into()),
            ..Held::default()
        }
    );
    // An owner nested deeper than any V8 writes is read as JSON.parse reads
    // it (the core parser keeps its nesting on the heap).
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert_eq!(held(&format!("{{\"pid\":1,\"owner\":{}}}", nest(4_300))).map(|h| h.pid), Some(Some(1.0)));
    assert_eq!(held(&format!("{{\"pid\":1,\"owner\":{}}}", nest(200_000))).map(|h| h.pid), Some(Some(1.0)));
    assert_eq!(held(&"[".repeat(200_000)), None);
}

/// Same readable/unreadable verdict and same pid/token as Node for a
/// batch of odd lock contents.
#[test]
fn lock_parse_held_matches_node() {
    let cases = [
        "",
        " ",
        "null",
        "0",
        "-0",
        "0.0",
        "5",
        "\"\"",
        "\"a\"",
        "[]",
        "{}",
        "true",
        "false",
        "{\"pid\":12}",
        "{\"pid\":-1.5e3,\"token\":\"z\"}",
        "{\"pid\":\"12\"}",
        "{\"pid\":1e999}",
        "{\"pid\":1,\"pid\":null}",
        "{\"token\":\"\\u0041\\/\"}",
        "{\"pid\":1,}",
        "[1,]",
        "{\"a\":[{\"b\":[]}],\"pid\":3}",
        "\u{feff}{}",
        "{\"pid\":0x10}",
        "{\"pid\":+1}",
        "{\"pid\":1.}",
        "{\"pid\":.5}",
        "{\"pid\":1e}",
        "{\"pid\":-}",
        "nul",
        "{\"a\"}",
        "{\"t\":\"\\ud800\"}",
        "{\"token\":\"\\uD83D\\uDE00\"}",
        "{'pid':1}",
        "{\"pid\":1}\u{0}",
        "\u{a0}{}",
        "{\"pid\":1}\n\r\t ",
        "[\"\\u00e9\"]",
        "{\"pid\":007}",
    ];
    // Numbers shown as JS's String(n) would, for the values used above.
    let js_number = |p: f64| match p {
        _ if p.is_infinite() => {
            if p > 0.0 {
                "Infinity".into()
            } else {
                "-Infinity".into()
            }
        }
        _ if p.fract() == 0.0 && p.abs() < 1e21 => format!("{}", p as i64),
        _ => format!("{p}"),
    };
    let describe = |h: Option<Held>| match h {
        None => "U".to_string(),
        Some(h) => format!(
            "R {} {}",
            h.pid.map_or("-".into(), js_number),
            h.token.unwrap_or_else(|| "-".into())
        ),
    };
    let ours: Vec<String> = cases.iter().map(|c| describe(parse_held(c))).collect();
    let script = "const cs=JSON.parse(process.argv[1]);const out=cs.map(c=>{let h;\
        try{h=JSON.parse(c)}catch{h=null}if(!h)return 'U';\
        const p=typeof h.pid==='number'?String(h.pid):'-';\
        return 'R '+p+' '+(typeof h.token==='string'?h.token:'-')});\
        console.log(JSON.stringify(out))";
    let arg = sys::json_strings(&cases[..]);
    let Some(output) = sys::node_eval_json(script, &[&arg]) else { return };
    let theirs = sys::strings_of(&output);
    assert_eq!(theirs.len(), cases.len());
    for ((case, a), b) in cases.iter().zip(&ours).zip(&theirs) {
        assert_eq!(a, b, "case {case:?}");
    }
}

/// The error Node's `mkdirSync(dir, { recursive: true })` throws when a
/// file stands where `locks/` should be, with the OS error kept.
#[test]
fn lock_io_error_names_op_and_path() {
    let live = TempLive::new();
    let blocker = live.0.join("locks");
    fs::write(&blocker, "not a dir").expect("blocker");
    let path = live.0.join("locks").join("x.lock");
    match try_acquire(&path, None, "\"/f\"") {
        Err(e) => {
            assert_eq!(e.to_string(), format!("EEXIST: file already exists, mkdir '{}'", blocker.display()));
            assert_eq!((e.syscall(), e.path()), ("mkdir", blocker.as_path()));
            assert_eq!(e.io_error().kind(), io::ErrorKind::AlreadyExists);
        }
        other => panic!("expected Fs: {other:?}"),
    }
}

#[test]
fn lock_stress_counter_is_exact() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 200;
    let live = TempLive::new();
    let path = Arc::new(live.lock("stress"));
    let counter = Arc::new(live.0.join("counter"));
    fs::write(&*counter, "0").expect("counter");
    // Start behind a dead owner's lock, so all threads race to clear it.
    let dead = format!("{{\"token\":\"x\",\"pid\":{}}}\n", dead_pid());
    write_lock(&path, &dead);
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (path, counter) = (Arc::clone(&path), Arc::clone(&counter));
            std::thread::spawn(move || {
                for _ in 0..ROUNDS {
                    let acquired = acquire_retrying(&path, Some("\"stress\""), "\"/project/stress\"");
                    let n: usize = fs::read_to_string(&*counter)
                        .expect("read counter")
                        .parse()
                        .expect("counter number");
                    fs::write(&*counter, (n + 1).to_string()).expect("write counter");
                    release(&acquired);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker");
    }
    let total = fs::read_to_string(&*counter).expect("counter");
    assert_eq!(total, (THREADS * ROUNDS).to_string());
    assert!(!path.exists());
}

/// `judge` names the rule behind each verdict, for a CLI to show.
#[test]
fn lock_judge_says_why() {
    let live = TempLive::new();
    let verdict = |name: &str, content: Option<&str>| {
        let path = live.lock(name);
        if let Some(content) = content {
            write_lock(&path, content);
        }
        judge(&path)
    };
    let me = std::process::id();
    assert_eq!(verdict("absent", None), Verdict::Absent);
    assert_eq!(verdict("alive", Some(&format!("{{\"pid\":{me}}}"))), Verdict::OwnerAlive);
    assert_eq!(verdict("gone", Some(&format!("{{\"pid\":{}}}", dead_pid()))), Verdict::OwnerGone);
    assert_eq!(verdict("nopid", Some("{\"pid\":\"1\"}")), Verdict::NoNumericPid);
    assert_eq!(verdict("fresh", Some("{")), Verdict::UnreadableFresh);
    #[cfg(target_os = "linux")]
    {
        let ticks = sys::process_start_time(me).expect("own start time");
        let boot = sys::boot_id().expect("boot id");
        let reused = format!("{{\"pid\":{me},\"startTime\":{},\"bootId\":\"{boot}\"}}", ticks + 1);
        assert_eq!(verdict("reused", Some(&reused)), Verdict::PidReused);
        let earlier = format!("{{\"pid\":{me},\"startTime\":{ticks},\"bootId\":\"an-earlier-boot\"}}");
        assert_eq!(verdict("boot", Some(&earlier)), Verdict::EarlierBoot);
    }
    let old = live.lock("old");
    write_lock(&old, "");
    fs::File::options().write(true).open(&old).expect("open").set_modified(SystemTime::now() - Duration::from_secs(61)).expect("mtime");
    assert_eq!(judge(&old), Verdict::UnreadableOld);
    let stale: Vec<bool> = [Verdict::Absent, Verdict::OwnerAlive, Verdict::UnreadableFresh].map(Verdict::is_stale).to_vec();
    assert_eq!(stale, [false, false, false]);
    assert!([Verdict::OwnerGone, Verdict::NoNumericPid, Verdict::EarlierBoot, Verdict::PidReused, Verdict::UnreadableOld]
        .iter()
        .all(|v| v.is_stale()));
}

/// A record this process writes is judged held by its own rules: the start
/// time and boot id it records are the ones the check reads back.
#[test]
fn lock_own_record_is_respected() {
    let live = TempLive::new();
    let path = live.lock("own");
    let acquired = must_acquire(&path);
    assert_eq!(judge(&path), Verdict::OwnerAlive);
    #[cfg(target_os = "linux")]
    {
        let text = fs::read_to_string(&path).expect("record");
        assert!(text.contains("\"startTime\":") && text.contains("\"bootId\":"), "{text}");
    }
    release(&acquired);
}
