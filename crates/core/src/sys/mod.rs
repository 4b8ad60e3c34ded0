//! Platform specifics (pid liveness, process start time, advisory file locks).
//!
//! Everything OS-dependent that the lock and the session store need sits
//! behind this small API so the callers stay portable. Fallible I/O reports
//! the path it concerns through [`PathError`], wrapped in an `io::Error` of
//! the same kind so callers can keep using `io::Result`.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An OS error together with the operation (named like Node's `syscall`,
/// e.g. `"open"`, `"flock"`) and the path it concerns.
#[derive(Debug)]
pub struct PathError {
    pub op: &'static str,
    pub path: PathBuf,
    pub source: io::Error,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.op, self.path.display(), self.source)
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Wraps `source` so that its message names `op` and `path`; the kind is
/// kept, and the original error (with its errno) stays reachable through
/// `get_ref()` + `downcast_ref::<PathError>()`.
pub fn path_error(op: &'static str, path: &Path, source: io::Error) -> io::Error {
    let kind = source.kind();
    io::Error::new(
        kind,
        PathError {
            op,
            path: path.to_path_buf(),
            source,
        },
    )
}

/// Whether Node's `process.kill(pid, 0)` would *not* fail with ESRCH.
///
/// Node rejects any pid with `pid != (pid | 0)` (non-integers, NaN, ±Infinity,
/// anything outside int32) with ERR_INVALID_ARG_TYPE before calling kill(2);
/// since only ESRCH counts as dead, all of those are "alive". Integers in
/// int32 range go to kill(2) unchanged, so 0 and negative values address
/// process groups (0 and -1 succeed; -2**31 is ESRCH on Linux).
pub fn pid_is_alive(pid: f64) -> bool {
    // `pid | 0` is ToInt32: this holds exactly for integral values in i32 range
    // (including -0, which Node passes on as 0).
    if !(pid >= i32::MIN as f64 && pid <= i32::MAX as f64 && pid.fract() == 0.0) {
        return true;
    }
    signal_zero_finds_target(pid as i32)
}

#[cfg(unix)]
fn signal_zero_finds_target(pid: i32) -> bool {
    // SAFETY: signal 0 only performs the existence/permission check.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn signal_zero_finds_target(_pid: i32) -> bool {
    // No probe available: claiming "dead" could break a live holder's lock.
    true
}

/// Start time of `pid` in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`); together with [`boot_id`] it tells a pid's current
/// process apart from an earlier one that had the same pid.
#[cfg(target_os = "linux")]
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and ')', so count fields
    // from the last ')'; the first field after it is field 3.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    rest.split_ascii_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
pub fn process_start_time(_pid: u32) -> Option<u64> {
    None
}

/// This boot's random id; start times are only comparable within one boot.
#[cfg(target_os = "linux")]
pub fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = text.trim();
    (!id.is_empty()).then(|| id.to_string())
}

#[cfg(not(target_os = "linux"))]
pub fn boot_id() -> Option<String> {
    None
}

/// What makes a file the same file whatever its path: device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    #[cfg(unix)]
    pub fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId { dev: m.dev(), ino: m.ino() }
    }
}

/// An open file holding an exclusive `flock(2)`, released when dropped or
/// by [`LockedFile::unlock`], which hands the file back open.
///
/// The lock belongs to the open file description, so it excludes other
/// processes and other `File`s opened separately on the same path. Owning the
/// `File` guarantees it stays open (its fd cannot be reused) while the lock is
/// held, and lets a caller keep the file open between two locked sections.
#[derive(Debug)]
pub struct LockedFile {
    /// Always `Some` until `unlock` takes it.
    file: Option<File>,
}

/// Blocks until `file` is exclusively locked; `path` only labels errors. On
/// an error the file is closed.
#[cfg(unix)]
pub fn lock_exclusive(file: File, path: &Path) -> io::Result<LockedFile> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: the fd is valid for as long as `file` is owned here.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(LockedFile { file: Some(file) });
        }
        let err = io::Error::last_os_error();
        // A signal delivered while blocked interrupts the wait, not the intent.
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(path_error("flock", path, err));
        }
    }
}

#[cfg(not(unix))]
pub fn lock_exclusive(_file: File, path: &Path) -> io::Result<LockedFile> {
    let err = io::Error::new(io::ErrorKind::Unsupported, "flock is not available");
    Err(path_error("flock", path, err))
}

impl std::ops::Deref for LockedFile {
    type Target = File;
    fn deref(&self) -> &File {
        self.file.as_ref().unwrap_or_else(|| unreachable!("taken only by methods consuming self"))
    }
}

impl LockedFile {
    /// Releases the lock and keeps the file open.
    pub fn unlock(mut self) -> File {
        unlock(&self);
        self.file.take().unwrap_or_else(|| unreachable!("taken only here"))
    }
}

fn unlock(file: &File) {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a valid fd owned by the caller. Failure is ignored: closing
        // the file would release the lock anyway, and Drop cannot report it.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl Drop for LockedFile {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            unlock(file);
        }
    }
}

/// Reads the file into `bytes` with `open`, `read`s and `close` only: no
/// size probe (`fstat`, `lseek`) first. A read shorter than the space left
/// is taken as the end of a regular file; were it not (some network file
/// system), the text would be cut short and fail the validation every
/// caller makes (snapshot files must parse and name the journal size, lock
/// records must parse and carry a token): a slow path, never wrong data.
pub fn read_file_into(path: &Path, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    let mut file = File::open(path)?;
    bytes.clear();
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(16 * 1024));
        }
        let spare = bytes.capacity() - bytes.len();
        let start = bytes.len();
        bytes.resize(bytes.capacity(), 0);
        let read = file.read(&mut bytes[start..]);
        bytes.truncate(start + *read.as_ref().unwrap_or(&0));
        let n = match read {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 || n < spare {
            return Ok(());
        }
    }
}

/// Milliseconds since the epoch, whole like `Date.now()`.
pub fn now_ms() -> f64 {
    system_time_ms(SystemTime::now()).floor()
}

/// A time as fractional milliseconds since the epoch (like `stat.mtimeMs`).
pub fn system_time_ms(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

/// Sleeps `ms` milliseconds; NaN, zero or negative return at once, and a
/// value too large for a `Duration` (e.g. Infinity) sleeps "forever", as
/// `Atomics.wait` would.
pub fn sleep_ms(ms: f64) {
    // Written so that NaN also returns.
    if ms.is_nan() || ms <= 0.0 {
        return;
    }
    let d = Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX);
    std::thread::sleep(d);
}

/// `fstatat(dir, name)`: size and mtime (ns) of an entry of an open
/// directory, without walking the directory's path again for every entry.
#[cfg(unix)]
pub fn stat_at(dir: &File, name: &str) -> io::Result<(u64, i128)> {
    use std::os::unix::io::AsRawFd;
    let c_name = std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `st` is plain old data filled by the kernel; the fd and the
    // NUL-terminated name are valid for the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir.as_raw_fd(), c_name.as_ptr(), &mut st, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_size as u64, i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec)))
}

/// A shared advisory lock, waited for at most `patience_ms`. Readers take
/// it so they never replay a line a writer of this package is still writing;
/// `None` after the wait (a writer stuck holding the lock) lets the reader go
/// on without it rather than hang, as readers of the old module always did.
/// The guard owns its descriptor (a duplicate of the caller's), so it can
/// travel alongside the file it protects.
pub struct SharedLock(File);

#[cfg(unix)]
pub fn lock_shared_for(file: &File, patience_ms: u64) -> Option<SharedLock> {
    use std::os::unix::io::AsRawFd;
    let handle = file.try_clone().ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(patience_ms);
    loop {
        // SAFETY: the fd is valid for as long as `handle` lives.
        if unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return Some(SharedLock(handle));
        }
        let err = io::Error::last_os_error();
        let busy = err.kind() == io::ErrorKind::WouldBlock || err.kind() == io::ErrorKind::Interrupted;
        if !busy || std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

#[cfg(not(unix))]
pub fn lock_shared_for(_file: &File, _patience_ms: u64) -> Option<SharedLock> {
    None
}

impl Drop for SharedLock {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: unlocks the lock taken on this same descriptor.
            unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
        }
    }
}

/// A write lease on an open file (Linux `F_SETLEASE`, `F_WRLCK`), released
/// when dropped; the file stays open.
///
/// The kernel grants it only when no other open file description refers to
/// the file, and while it is held any `open()` of the file by someone else
/// waits until it is released. Rewriting a small file in place under it is
/// therefore atomic for readers: nobody has the old bytes open, and nobody can
/// open the file mid-write. It is what lets the snapshot file be refreshed
/// in place (no block freed, which on a disk mounted with `discard` costs a
/// millisecond) without a reader ever seeing half a file.
pub struct WriteLease<'a>(&'a File);

#[cfg(target_os = "linux")]
pub fn write_lease(file: &File) -> io::Result<WriteLease<'_>> {
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    // A reader opening the file during the lease makes the kernel signal the
    // holder (SIGIO by default, which would terminate Node). SIGURG is ignored
    // by default, so the notification is harmless; the release follows anyway.
    // It is set before every lease: releasing one resets it to SIGIO.
    // SAFETY: plain fcntl calls on an fd the caller owns.
    const F_SETSIG: libc::c_int = 10; // <fcntl.h>, not exported by the libc crate
    if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } == -1 {
        return Err(io::Error::last_os_error());
    }
    if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(WriteLease(file))
}

#[cfg(not(target_os = "linux"))]
pub fn write_lease(_file: &File) -> io::Result<WriteLease<'_>> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "file leases need Linux"))
}

impl Drop for WriteLease<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: as above. Should the release fail, the lease ends with
            // the file's last close, and a reader waits at most until then.
            unsafe { libc::fcntl(self.0.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
        }
    }
}

/// Runs `node -e script args...` for tests that compare with Node itself:
/// its stdout, or `None` (after saying so) when node is not on PATH.
#[cfg(test)]
pub(crate) fn node_eval(script: &str, args: &[&str]) -> Option<Vec<u8>> {
    let Ok(out) = std::process::Command::new("node").arg("-e").arg(script).args(args).output() else {
        println!("skipped: node is not on PATH");
        return None;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(out.stdout)
}

/// The processor the calling thread is running on, where the system says.
#[cfg(target_os = "linux")]
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments; returns -1 on failure.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

#[cfg(not(target_os = "linux"))]
pub fn current_cpu() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn dead_pid() -> u32 {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        child.wait().expect("wait true");
        pid
    }

    #[test]
    fn platform_pid_is_alive_basic_verdicts() {
        assert!(pid_is_alive(std::process::id() as f64));
        assert!(!pid_is_alive(dead_pid() as f64));
        for p in [
            0.0,
            -0.0,
            -1.0,
            1.5,
            -1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert!(pid_is_alive(p), "{p}");
        }
        for p in [2f64.powi(31), 2f64.powi(32), 1e300] {
            assert!(pid_is_alive(p), "{p}");
        }
        #[cfg(target_os = "linux")]
        assert!(
            !pid_is_alive(-(2f64.powi(31))),
            "Linux answers ESRCH for INT_MIN"
        );
    }

    /// Runs `process.kill(p, 0)` in Node for each pid and compares verdicts.
    #[test]
    fn platform_pid_is_alive_matches_node() {
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
        let ours: String = [
            me as f64,
            dead as f64,
            0.0,
            -0.0,
            -1.0,
            1.0,
            1.5,
            -1.5,
            p31,
            p31 - 1.0,
            -p31,
            -p31 + 1.0,
            2f64.powi(32),
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            4194305.0,
            -5.0,
            -(me as f64),
        ]
        .iter()
        .map(|&p| if pid_is_alive(p) { '1' } else { '0' })
        .collect();
        assert_eq!(String::from_utf8_lossy(&stdout).trim(), ours);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn platform_start_time_and_boot_id() {
        let mine = process_start_time(std::process::id()).expect("own start time");
        assert_eq!(process_start_time(std::process::id()), Some(mine));
        assert_eq!(process_start_time(dead_pid()), None);
        let id = boot_id().expect("boot id");
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(boot_id().as_deref(), Some(id.as_str()));
    }

    #[test]
    #[cfg(unix)]
    fn platform_flock_excludes_a_second_open_file() {
        let path = std::env::temp_dir().join(format!("platform-flock-{}", uuid::Uuid::new_v4()));
        let a = File::create(&path).expect("create");
        let b = File::open(&path).expect("open");
        let guard = lock_exclusive(a, &path).expect("lock a");
        let busy = {
            use std::os::unix::io::AsRawFd;
            // SAFETY: probing with a non-blocking flock on a valid fd.
            unsafe { libc::flock(b.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }
        };
        assert_eq!(
            busy, -1,
            "second description must be refused while a holds it"
        );
        let a = guard.unlock();
        let again = lock_exclusive(b, &path).expect("lock b after unlock");
        let busy = {
            use std::os::unix::io::AsRawFd;
            // SAFETY: as above.
            unsafe { libc::flock(a.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }
        };
        assert_eq!(busy, -1, "a, still open, is refused while b holds it");
        drop(again);
        drop(lock_exclusive(a, &path).expect("lock a after b dropped its lock"));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    #[cfg(unix)]
    fn platform_flock_error_names_path() {
        // A descriptor opened with O_PATH refers to the file but cannot be locked.
        use std::fs::OpenOptions;
        use std::os::unix::fs::OpenOptionsExt;
        let path = std::env::temp_dir().join(format!("platform-flock-path-{}", uuid::Uuid::new_v4()));
        File::create(&path).expect("create");
        let no_io = OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(&path).expect("open O_PATH");
        let err = lock_exclusive(no_io, Path::new("/nonexistent/label")).expect_err("EBADF");
        assert!(err.to_string().starts_with("flock /nonexistent/label: "), "{err}");
        let inner = err.get_ref().and_then(|e| e.downcast_ref::<PathError>()).expect("PathError");
        assert_eq!(inner.source.raw_os_error(), Some(libc::EBADF));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn platform_time_helpers() {
        let a = now_ms();
        assert_eq!(a.fract(), 0.0);
        assert!(a > 1.6e12);
        sleep_ms(f64::NAN);
        sleep_ms(-3.0);
        sleep_ms(2.0);
        assert!(now_ms() - a >= 2.0);
    }
}
