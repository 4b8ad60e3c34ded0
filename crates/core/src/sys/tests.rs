use super::*;
use std::fs;

/// A new file at `p`, as the crate holds files.
fn make(p: &Path) -> File {
    create_new(p).expect("create")
}

/// The regular file at `p`, opened again.
fn reopen(p: &Path) -> File {
    open_regular(p, Links::Follow).expect("open")
}

/// A scratch file path under the temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        Scratch(std::env::temp_dir().join(format!("sys-{tag}-{}", uuid::Uuid::new_v4())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(unix)]
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait true");
    pid
}

#[test]
fn sys_pid_is_alive_basic_verdicts() {
    assert!(pid_is_alive(f64::from(std::process::id())));
    #[cfg(unix)]
    assert!(!pid_is_alive(f64::from(dead_pid())));
    for p in [0.0, -0.0, 1.5, -1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 2f64.powi(31), 2f64.powi(32), 1e300] {
        assert!(pid_is_alive(p), "{p}");
    }
    #[cfg(unix)]
    assert!(pid_is_alive(-1.0), "kill(-1, 0) reaches some process");
    #[cfg(target_os = "linux")]
    assert!(!pid_is_alive(-(2f64.powi(31))), "Linux answers ESRCH for INT_MIN");
}

/// Runs `process.kill(p, 0)` in Node for each pid and compares verdicts.
#[test]
#[cfg(unix)]
fn sys_pid_is_alive_matches_node() {
    let dead = dead_pid();
    let me = std::process::id();
    let pids = format!(
        "[{me},{dead},0,-0,-1,1,1.5,-1.5,2**31,2**31-1,-(2**31),-(2**31)+1,\
         2**32,NaN,Infinity,-Infinity,1e300,4194305,-5,-{me}]"
    );
    let script = format!(
        "const r=[];for(const p of {pids}){{try{{process.kill(p,0);r.push(1)}}\
         catch(e){{r.push(e.code==='ESRCH'?0:1)}}}}console.log(r.join(''))"
    );
    let Some(stdout) = node_eval(&script, &[]) else { return };
    let p31 = 2f64.powi(31);
    let (me, dead) = (f64::from(me), f64::from(dead));
    let ours: String = [
        me, dead, 0.0, -0.0, -1.0, 1.0, 1.5, -1.5, p31, p31 - 1.0, -p31, -p31 + 1.0, 2f64.powi(32),
        f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, 4194305.0, -5.0, -me,
    ]
    .iter()
    .map(|&p| if pid_is_alive(p) { '1' } else { '0' })
    .collect();
    assert_eq!(String::from_utf8_lossy(&stdout).trim(), ours);
}

#[test]
fn sys_start_time_and_boot_id() {
    let mine = process_start_time(std::process::id()).expect("own start time");
    assert_eq!(process_start_time(std::process::id()), Some(mine));
    #[cfg(unix)]
    assert_eq!(process_start_time(dead_pid()), None);
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    {
        let id = boot_id().expect("boot id");
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(boot_id().as_deref(), Some(id.as_str()));
    }
    #[cfg(windows)]
    assert_eq!(boot_id(), None);
}

/// A locked file's lock, in place: held until unlocked or closed.
fn locked(file: File, path: &Path, patience: Duration) -> Result<File, FsError> {
    file.lock_exclusive(path, patience).map(|()| file)
}

#[test]
fn sys_lock_excludes_a_second_open_file() {
    let s = Scratch::new("flock");
    let a = locked(make(&s.0), &s.0, Duration::ZERO).expect("lock a");
    let b = reopen(&s.0);
    assert!(!b.try_lock_exclusive().expect("try b"), "a second open file is refused while a holds it");
    assert!(!b.try_lock_shared().expect("try b shared"), "shared too");
    a.unlock().expect("unlock");
    let b = locked(b, &s.0, Duration::ZERO).expect("lock b after unlock");
    assert!(!a.try_lock_exclusive().expect("try a"), "a, still open, is refused while b holds it");
    drop(b);
    drop(locked(a, &s.0, Duration::ZERO).expect("lock a after b was closed"));
}

#[test]
fn sys_lock_wait_runs_out_with_a_timed_out_error() {
    let s = Scratch::new("flock-wait");
    let holder = locked(make(&s.0), &s.0, Duration::ZERO).expect("hold");
    let start = Instant::now();
    let err = locked(reopen(&s.0), &s.0, Duration::from_millis(60)).expect_err("busy");
    let waited = start.elapsed();
    assert!(err.is_timed_out(), "{err}");
    assert_eq!(err.to_string(), format!("ETIMEDOUT: connection timed out, flock '{}'", s.0.display()));
    assert!(waited >= Duration::from_millis(60) && waited < Duration::from_secs(2), "{waited:?}");
    assert!(lock_shared(&reopen(&s.0), Duration::from_millis(5)).is_none());
    drop(holder);
    let shared = lock_shared(&reopen(&s.0), Duration::ZERO).expect("free now");
    assert!(lock_shared(&reopen(&s.0), Duration::ZERO).is_some(), "shared locks coexist");
    let err = locked(reopen(&s.0), &s.0, Duration::ZERO).expect_err("readers hold it");
    assert!(err.is_timed_out());
    drop(shared);
}

#[test]
fn sys_lock_is_handed_over_while_waiting() {
    let s = Scratch::new("flock-handover");
    let holder = locked(make(&s.0), &s.0, Duration::ZERO).expect("hold");
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(holder);
    });
    let got = locked(reopen(&s.0), &s.0, Duration::MAX).expect("after release");
    releaser.join().expect("releaser");
    drop(got);
}

/// A descriptor opened with O_PATH refers to the file but cannot be locked:
/// the OS error survives, with the syscall and the path.
#[test]
#[cfg(target_os = "linux")]
fn sys_lock_error_keeps_the_os_error_and_names_the_path() {
    use std::os::unix::fs::OpenOptionsExt;
    let s = Scratch::new("flock-path");
    make(&s.0);
    let no_io = File(fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(&s.0).expect("open O_PATH"));
    let err = no_io.lock_exclusive(Path::new("/nonexistent/label"), Duration::MAX).expect_err("EBADF");
    assert_eq!(err.to_string(), "EBADF: bad file descriptor, flock '/nonexistent/label'");
    assert_eq!(err.io_error().raw_os_error(), Some(libc::EBADF));
    assert_eq!((err.code().as_ref(), err.errno(), err.syscall()), ("EBADF", -libc::EBADF, "flock"));
}

#[test]
fn sys_file_info_and_stamp() {
    let s = Scratch::new("id");
    fs::write(&s.0, "abc").expect("write");
    let a = reopen(&s.0);
    let info = FileInfo::of(&a).expect("info");
    assert_eq!((info.len, info.links, info.is_file), (3, 1, true));
    assert_eq!(FileInfo::of(&reopen(&s.0)).expect("info"), info);
    assert_eq!(FileInfo::of_path(&s.0).expect("info by path"), info);
    let m = fs::metadata(&s.0).expect("meta");
    let modified = m.modified().expect("mtime").duration_since(UNIX_EPOCH).expect("after 1970");
    assert_eq!(info.mtime_ns, modified.as_nanos() as i128);
    let stamp = FileStamp::of_path(&s.0).expect("stamp");
    assert_eq!(FileStamp::of_path(&s.0).expect("stamp"), stamp);
    fs::remove_file(&s.0).expect("remove");
    assert_eq!(FileInfo::of(&a).expect("info").links, 0);
    std::thread::sleep(Duration::from_millis(20));
    fs::write(&s.0, "b").expect("write again");
    assert_ne!(FileStamp::of_path(&s.0).expect("stamp"), stamp, "a later file at the same path");
    assert!(FileInfo::of_path(&s.0.with_extension("missing")).is_err());
}

/// A staged file its writer holds is in use whatever its age; an
/// unlocked one is fresh until `min_age` has passed, then abandoned; only
/// that is removed.
#[test]
fn sys_staged_files_are_judged_by_their_lock_and_their_age() {
    let dir = Scratch::new("judge");
    fs::create_dir(&dir.0).expect("dir");
    let target = dir.0.join("t.json");
    let held = StagedFile::create(dir.0.join(".held"), &target, Guard::Locked).expect("stage");
    let left = dir.0.join(".left");
    fs::write(&left, "x").expect("left behind");
    let hour = Duration::from_secs(3600);
    assert_eq!(StagedFile::judge(held.path(), Duration::ZERO), StagedVerdict::InUse);
    assert_eq!(StagedFile::judge(&left, hour), StagedVerdict::Fresh);
    assert_eq!(StagedFile::judge(&left, Duration::ZERO), StagedVerdict::Abandoned);
    assert_eq!(StagedFile::judge(&dir.0.join(".none"), Duration::ZERO), StagedVerdict::Absent);
    assert!(!StagedFile::remove_if_abandoned(held.path(), Duration::ZERO), "a writer's file is never taken");
    // Unguarded, a writer's file is fresh for min_age, and then the writer
    // (stopped that long) finds it gone, and the target as it was.
    fs::write(&target, "old").expect("target");
    let unguarded = StagedFile::create(dir.0.join(".unguarded"), &target, Guard::AgeOnly).expect("stage");
    assert_eq!(StagedFile::judge(unguarded.path(), hour), StagedVerdict::Fresh);
    assert!(StagedFile::remove_if_abandoned(unguarded.path(), Duration::ZERO));
    unguarded.write_all(b"lost").expect("write to the removed file");
    assert_eq!(unguarded.commit().expect_err("gone").code(), "ENOENT");
    assert_eq!(fs::read_to_string(&target).expect("read"), "old");
    assert!(!StagedFile::remove_if_abandoned(&left, hour));
    assert!(StagedFile::remove_if_abandoned(&left, Duration::ZERO));
    assert!(!left.exists());
    held.write_all(b"new").expect("write");
    held.commit().expect("the writer still puts it in place");
    assert_eq!(fs::read_to_string(&target).expect("read"), "new");
}

/// The replacement has the replaced file's permissions, whatever the umask
/// would give a new file.
#[test]
#[cfg(unix)]
fn sys_staged_file_keeps_the_replaced_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("mode");
    fs::create_dir(&dir.0).expect("dir");
    let target = dir.0.join("t.json");
    let mode = |p: &Path| fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    let replace = |n: &str| {
        let staged = StagedFile::create(dir.0.join(n), &target, Guard::Locked).expect("stage");
        staged.write_all(b"x").expect("write");
        staged.commit().expect("commit");
    };
    replace(".a");
    let fresh = mode(&target);
    for restricted in [0o600, 0o640, 0o664, 0o444] {
        fs::set_permissions(&target, fs::Permissions::from_mode(restricted)).expect("chmod");
        replace(".b");
        assert_eq!(mode(&target), restricted);
    }
    fs::remove_file(&target).expect("rm");
    replace(".c");
    assert_eq!(mode(&target), fresh, "a new file gets the default mode");
}

#[test]
fn sys_staged_file_replaces_the_target_or_leaves_nothing() {
    let dir = Scratch::new("staged");
    fs::create_dir(&dir.0).expect("dir");
    let target = dir.0.join("s.json");
    fs::write(&target, "old").expect("old");
    let reader = reopen(&target);

    let staged = StagedFile::create(dir.0.join(".s.1"), &target, Guard::Locked).expect("stage");
    staged.write_all(b"new").expect("write");
    staged.commit().expect("commit");
    assert_eq!(fs::read_to_string(&target).expect("read"), "new");
    let mut old = String::new();
    std::io::Read::read_to_string(&mut reader.reader_from(0), &mut old).expect("old bytes");
    assert_eq!(old, "old");

    let dropped = StagedFile::create(dir.0.join(".s.2"), &target, Guard::Locked).expect("stage");
    let staged_path = dropped.path().to_path_buf();
    assert!(staged_path.exists());
    drop(dropped);
    assert!(!staged_path.exists(), "removed when not committed");
    assert_eq!(fs::read_dir(&dir.0).expect("list").count(), 1, "only the target is left");

    let missing = dir.0.join("missing").join("t.json");
    let err = StagedFile::create(missing.with_file_name(".t.1"), &missing, Guard::Locked).expect_err("no such dir");
    assert_eq!((err.code().as_ref(), err.syscall(), err.path()), ("ENOENT", "open", missing.as_path()));
}

/// A commit replaces whatever file or link is at the target's name, never
/// what a link names, and never a directory: that stays, with its entries,
/// and the commit is EISDIR with nothing else left behind.
#[test]
#[cfg(unix)]
fn sys_staged_file_replaces_names_not_what_they_lead_to() {
    let dir = Scratch::new("replace");
    fs::create_dir(&dir.0).expect("dir");
    let outside = dir.0.join("outside.json");
    fs::write(&outside, "theirs").expect("outside");
    let commit = |target: &Path| {
        let staged = StagedFile::create(target.with_file_name(".staged"), target, Guard::Locked)?;
        staged.write_all(b"new").expect("write");
        staged.commit()
    };
    let link = dir.0.join("link.json");
    std::os::unix::fs::symlink(&outside, &link).expect("link");
    commit(&link).expect("over a link");
    assert_eq!((fs::read_to_string(&link).expect("read"), fs::read_to_string(&outside).expect("read")), ("new".into(), "theirs".into()));
    assert!(fs::symlink_metadata(&link).expect("lstat").is_file());

    let sub = dir.0.join("sub.json");
    fs::create_dir(&sub).expect("subdir");
    fs::write(sub.join("kept"), "k").expect("entry");
    let err = commit(&sub).expect_err("a directory is not replaced");
    assert_eq!(err.code(), "EISDIR");
    assert_eq!(fs::read_to_string(sub.join("kept")).expect("still there"), "k");
    let mut names: Vec<_> = fs::read_dir(&dir.0).expect("list").map(|e| e.expect("entry").file_name()).collect();
    names.sort();
    assert_eq!(names, ["link.json", "outside.json", "sub.json"], "no staged file left");
}

#[test]
#[cfg(unix)]
fn sys_staged_file_never_writes_through_a_planted_name() {
    let s = Scratch::new("planted");
    let err = os::create_new(Path::new("/")).expect_err("exists");
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    std::os::unix::fs::symlink("/nonexistent-target", &s.0).expect("symlink");
    let err = os::create_new(&s.0).expect_err("a dangling link is not followed");
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert!(!Path::new("/nonexistent-target").exists());
}

#[test]
fn sys_positioned_and_whole_reads() {
    let s = Scratch::new("io");
    fs::write(&s.0, b"hello World").expect("write");
    let file = reopen(&s.0);
    let mut buf = [0u8; 5];
    file.read_exact_at(&mut buf, 6).expect("read at");
    assert_eq!(&buf, b"World");
    let err = file.read_exact_at(&mut buf, 9).expect_err("past the end");
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    let mut bytes = Vec::with_capacity(4);
    read_regular(&s.0, Links::Refuse, &mut bytes, MAX_TEXT_FILE).expect("read whole");
    assert_eq!(bytes, b"hello World");
    let big = vec![b'x'; 40_000];
    fs::write(&s.0, &big).expect("big");
    read_regular(&s.0, Links::Refuse, &mut bytes, MAX_TEXT_FILE).expect("read whole");
    assert_eq!(bytes, big);
    read_regular(&s.0, Links::Refuse, &mut bytes, 40_000).expect("exactly the cap");
    let err = read_regular(&s.0, Links::Refuse, &mut bytes, 39_999).expect_err("past the cap");
    assert_eq!(FsError::new(err, "read", &s.0).code(), "EFBIG");
    assert!(bytes.len() <= 40_000 && bytes.capacity() < 200_000, "read no further than the cap");
}

/// Whatever sits at a name, opening it as a regular file returns at once:
/// the file, or an error Node would name.
#[test]
#[cfg(unix)]
fn sys_only_regular_files_are_opened() {
    let dir = Scratch::new("kinds");
    fs::create_dir(&dir.0).expect("mkdir");
    let at = |name: &str| dir.0.join(name);
    fs::write(at("file"), "x").expect("file");
    fs::create_dir(at("dir")).expect("dir");
    let fifo = std::ffi::CString::new(at("fifo").into_os_string().into_encoded_bytes()).expect("path");
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    let _socket = std::os::unix::net::UnixListener::bind(at("socket")).expect("socket");
    std::os::unix::fs::symlink("/dev/zero", at("zero")).expect("link");
    std::os::unix::fs::symlink(at("file"), at("link")).expect("link");
    std::os::unix::fs::symlink(at("nowhere"), at("dangling")).expect("link");
    let code = |name: &str, links: Links| match open_regular(&at(name), links) {
        Ok(_) => "ok".to_string(),
        Err(e) => FsError::new(e, "open", &at(name)).code().into_owned(),
    };
    let cases = [
        ("file", Links::Refuse, "ok"),
        ("link", Links::Follow, "ok"),
        ("link", Links::Refuse, "ELOOP"),
        ("dangling", Links::Follow, "ENOENT"),
        ("dangling", Links::Refuse, "ELOOP"),
        ("dir", Links::Follow, "EISDIR"),
        ("fifo", Links::Follow, "EFTYPE"),
        ("socket", Links::Follow, "ENXIO"),
        ("zero", Links::Follow, "EFTYPE"),
        ("zero", Links::Refuse, "ELOOP"),
    ];
    for (name, links, want) in cases {
        assert_eq!(code(name, links), want, "{name} {links:?}");
    }
    let err = FsError::new(open_regular(&at("fifo"), Links::Follow).expect_err("fifo"), "open", &at("fifo"));
    assert_eq!(err.to_string(), format!("EFTYPE: inappropriate file type or format, open '{}'", at("fifo").display()));
    assert_eq!(err.errno(), -4028);
    for name in ["link", "dangling", "fifo", "dir"] {
        let code = match open_to_append(&at(name)) {
            Ok(opened) => opened.lock(&at(name), Duration::ZERO).expect_err(name).code().into_owned(),
            Err(e) => FsError::new(e, "open", &at(name)).code().into_owned(),
        };
        assert!(matches!(code.as_ref(), "ELOOP" | "EFTYPE" | "EISDIR"), "{name}: {code}");
        assert_eq!(create_to_append(&at(name)).expect_err(name).kind(), io::ErrorKind::AlreadyExists, "{name}");
    }
    // A FIFO whose lock another open file holds is refused, not waited on.
    let holder = open_to_append(&at("fifo")).expect("open the FIFO");
    assert!(holder.0.try_lock_exclusive().expect("flock"), "the first lock is free");
    let started = Instant::now();
    let err = open_to_append(&at("fifo")).expect("open again").lock(&at("fifo"), Duration::from_secs(60)).expect_err("a FIFO");
    assert_eq!(err.to_string(), format!("EFTYPE: inappropriate file type or format, open '{}'", at("fifo").display()));
    assert!(started.elapsed() < Duration::from_secs(30), "refused without waiting out the patience");
    assert!(!at("nowhere").exists(), "nothing created through the dangling link");
    assert!(Dir::open(&at("fifo")).is_err(), "a FIFO is no directory, and opening it does not wait");
}

#[test]
fn sys_dir_stat_agrees_with_a_stat_by_path() {
    let dir = Scratch::new("dir");
    fs::create_dir(&dir.0).expect("dir");
    fs::write(dir.0.join("a.jsonl"), "12345").expect("write");
    let d = Dir::open(&dir.0).expect("open dir");
    let info = d.stat("a.jsonl").expect("stat");
    assert_eq!(info, FileInfo::of_path(&dir.0.join("a.jsonl")).expect("stat by path"));
    assert_eq!(info.len, 5);
    assert_eq!(d.stat("b.jsonl").expect_err("missing").kind(), io::ErrorKind::NotFound);
    assert!(!FileInfo::of_path(&dir.0).expect("dir").is_file);
}

#[test]
fn sys_time_helpers() {
    let a = now_ms();
    assert_eq!(a.fract(), 0.0);
    assert!(a > 1.6e12);
    std::thread::sleep(Duration::from_millis(2));
    assert!(now_ms() - a >= 2.0);
}

#[test]
fn sys_sync_dir_of_a_directory_with_a_new_file() {
    let s = Scratch::new("syncdir");
    fs::create_dir(&s.0).expect("mkdir");
    let file = s.0.join("new");
    fs::File::create(&file).and_then(|f| f.sync_all()).expect("create");
    sync_dir(&s.0).expect("a directory syncs");
    fs::remove_file(&file).expect("rm");
    #[cfg(unix)]
    assert!(sync_dir(&s.0.join("missing")).is_err(), "no such directory");
}
