//! Everything that differs between operating systems, behind one small API.
//!
//! Each OS has one module, chosen by one `cfg` (`os` below): `linux.rs`,
//! `macos.rs` (both built on `unix.rs`, the POSIX calls they share) and
//! `windows.rs`. The rest of the crate calls only what this file exports.
//! Where an OS cannot give a guarantee, the function's doc says what happens
//! instead.
//!
//! | item | Linux | macOS | Windows |
//! |---|---|---|---|
//! | [`pid_is_alive`] | `kill(pid, 0)` | `kill(pid, 0)` | `OpenProcess` + exit code + wait, as libuv |
//! | [`process_start_time`] | `/proc/<pid>/stat` field 22 (ticks since boot) | `proc_pidinfo` (µs since epoch; own user only) | `GetProcessTimes` (µs since epoch) |
//! | [`boot_id`] | `/proc/sys/kernel/random/boot_id` | `kern.bootsessionuuid` | none (start times are absolute) |
//! | [`FileInfo`] | `fstat`, dev + inode | `fstat`, dev + inode | `GetFileInformationByHandle`, volume serial + file index |
//! | locks | `flock` (std `File::try_lock*`) | `flock` (std) | `LockFileEx` on one byte past any data |
//! | [`open_regular`] | `O_NONBLOCK`, `O_NOCTTY`, `O_NOFOLLOW` when asked, `fstat` | same | `FILE_FLAG_OPEN_REPARSE_POINT` when asked, handle info |
//! | [`StagedFile::commit`] | `renameat2(RENAME_EXCHANGE)` + `unlink`, else `rename` | `rename` | `MoveFileExW`, retried while busy |
//! | [`Dir::stat`] | `fstatat` | `fstatat` | metadata by path |
//! | [`sync_dir`] | `fsync` of the directory | `fsync` of the directory | nothing (NTFS journals it) |
//! | errors ([`FsError`]) | errno names | errno names | `uv_translate_sys_error` |

use std::fs::File;
use std::io;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod error;
pub use error::{Context, FsError};

mod uv;

#[cfg(unix)]
mod unix;

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod os;
#[cfg(target_os = "macos")]
#[path = "macos.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
compile_error!("quiver-live-core supports Linux, macOS and Windows");

// ---------------------------------------------------------------------------
// Processes

/// Whether Node's `process.kill(pid, 0)` would *not* fail with ESRCH (the
/// old module's `isLiveServerPidReachable`).
///
/// Node rejects any pid with `pid != (pid | 0)` (non-integers, NaN, ±Infinity,
/// anything outside int32) with ERR_INVALID_ARG_TYPE before asking the OS;
/// since only ESRCH counts as dead, all of those are alive. On unix an int32
/// goes to kill(2) unchanged, so 0 and negative values address process groups
/// (0 and -1 succeed; -2**31 is ESRCH on Linux). On Windows libuv opens the
/// process: pid 0 is this process, and a pid Windows does not know, or whose
/// process has exited, is ESRCH.
pub fn pid_is_alive(pid: f64) -> bool {
    // `pid | 0` is ToInt32: this holds exactly for integral values in i32 range
    // (including -0, which Node passes on as 0).
    if !(pid >= f64::from(i32::MIN) && pid <= f64::from(i32::MAX) && pid.fract() == 0.0) {
        return true;
    }
    os::signal_zero_finds(pid as i32)
}

/// When process `pid` started, in a unit of the OS's choosing (see the table
/// above), fixed for the life of the process; `None` when it cannot be read.
/// A lock records its owner's, so a pid reused by a later process is told
/// apart from the owner. On Linux the value counts from boot and is
/// comparable only under the same [`boot_id`]; elsewhere it is absolute.
pub fn process_start_time(pid: u32) -> Option<u64> {
    os::process_start_time(pid)
}

/// An id of the current boot, where the OS keeps one that nothing but a
/// reboot changes; `None` on Windows, whose start times need none.
pub fn boot_id() -> Option<String> {
    os::boot_id()
}

// ---------------------------------------------------------------------------
// File identity and status

/// What makes a file the same file whatever its path (device and inode, or
/// volume and file index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    volume: u64,
    index: u64,
}

/// What one `fstat` / `stat` tells (one `GetFileInformationByHandle` on
/// Windows), in the same form on every OS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileInfo {
    pub id: FileId,
    pub len: u64,
    /// Modification time in nanoseconds since the epoch (negative before it):
    /// exact on unix, in 100 ns steps on Windows.
    pub mtime_ns: i128,
    /// How many names the file has; 0 once it was deleted or renamed over.
    pub links: u64,
    /// A regular file (not a directory, device or pipe).
    pub is_file: bool,
    pub is_dir: bool,
}

impl FileInfo {
    /// The status of an open file.
    pub fn of(file: &File) -> io::Result<FileInfo> {
        os::file_info(file)
    }

    /// The status of the file `path` names now (symlinks followed), e.g. to
    /// check that a held descriptor still is the file at that path.
    pub fn of_path(path: &Path) -> io::Result<FileInfo> {
        os::path_info(path)
    }
}

/// Tells the file at a path (not following a symlink) from any later file
/// at that path: its [`FileId`] plus a time the file system sets when the
/// file is made (unix: the status-change time, since inode numbers are
/// reused at once; Windows: the creation time, since FAT reuses indexes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    id: FileId,
    time_ns: i128,
}

impl FileStamp {
    pub fn of_path(path: &Path) -> io::Result<FileStamp> {
        os::file_stamp(path)
    }
}

// ---------------------------------------------------------------------------
// Advisory locks with a bounded wait

/// Shortest and longest pause between two tries of a busy lock. Polling is
/// the only way to bound the wait (a blocking `flock` cannot be given a
/// timeout); starting short keeps the handover quick when a holder needs
/// only microseconds, as an append does.
const FIRST_PAUSE: Duration = Duration::from_micros(50);
const LONGEST_PAUSE: Duration = Duration::from_millis(2);

/// Tries `try_once` until it succeeds or `patience` has passed (at least
/// once, whatever the patience). `Ok(false)`: still busy at the deadline.
fn wait_for(patience: Duration, mut try_once: impl FnMut() -> io::Result<bool>) -> io::Result<bool> {
    let deadline = Instant::now().checked_add(patience);
    let mut pause = FIRST_PAUSE;
    loop {
        match try_once() {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            pause = pause.min(left);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// An open file holding an exclusive advisory lock, released when dropped or
/// by [`LockedFile::unlock`], which hands the file back open.
///
/// The lock belongs to this open file (its description on unix, its handle
/// on Windows), so it excludes other processes and other `File`s opened
/// separately on the same path, and a duplicate of the descriptor shares it.
/// Owning the `File` keeps it open (so its descriptor cannot be reused) while
/// the lock is held, and lets a caller keep the file between two locked
/// sections. The lock is advisory on every OS: it never stops a reader or
/// writer that does not ask for it (on Windows it covers one byte no read or
/// write reaches, see `windows.rs`).
#[derive(Debug)]
pub struct LockedFile {
    /// Always `Some` until `unlock` takes it.
    file: Option<File>,
}

/// Locks `file` exclusively, waiting at most `patience` for another holder to
/// let go (`Duration::MAX`: for as long as it takes). A wait that runs out is
/// an error whose [`FsError::is_timed_out`] is true (`ETIMEDOUT`), so the
/// caller decides what a stuck holder (a stopped process) means. `path`
/// labels errors; on an error the file is closed.
pub fn lock_exclusive(file: File, path: &Path, patience: Duration) -> Result<LockedFile, FsError> {
    match wait_for(patience, || os::try_lock_exclusive(&file)) {
        Ok(true) => Ok(LockedFile { file: Some(file) }),
        Ok(false) => Err(FsError::new(io::Error::new(io::ErrorKind::TimedOut, "still locked"), "flock", path)),
        Err(e) => Err(FsError::new(e, "flock", path)),
    }
}

impl Deref for LockedFile {
    type Target = File;
    fn deref(&self) -> &File {
        self.file.as_ref().unwrap_or_else(|| unreachable!("taken only by methods consuming self"))
    }
}

impl LockedFile {
    /// Releases the lock and keeps the file open.
    pub fn unlock(mut self) -> File {
        let file = self.file.take().unwrap_or_else(|| unreachable!("taken only here"));
        // Failure is ignored: closing the file releases the lock anyway.
        let _ = os::unlock(&file);
        file
    }
}

impl Drop for LockedFile {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            let _ = os::unlock(file);
        }
    }
}

/// A shared advisory lock, released when dropped. It owns its own descriptor
/// (a duplicate of the caller's, sharing its lock), so it can travel
/// alongside the file it protects.
#[derive(Debug)]
pub struct SharedLock(File);

/// A shared lock on `file`, waited for at most `patience`. Readers take it so
/// they never replay a line a writer of this package is still writing;
/// `None` after the wait (a writer stuck holding the lock) or when the file
/// cannot be locked at all lets the reader go on without it rather than
/// hang, as readers of the old module always did.
pub fn lock_shared(file: &File, patience: Duration) -> Option<SharedLock> {
    let handle = file.try_clone().ok()?;
    match wait_for(patience, || os::try_lock_shared(&handle)) {
        Ok(true) => Some(SharedLock(handle)),
        _ => None,
    }
}

impl Drop for SharedLock {
    fn drop(&mut self) {
        let _ = os::unlock(&self.0);
    }
}

// ---------------------------------------------------------------------------
// Replacing a file atomically for readers

/// A new file beside `target` that becomes `target` in one step on
/// [`StagedFile::commit`], and is removed if dropped before that.
///
/// It is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, `CREATE_NEW`),
/// so a file or link planted at its name is never written through, under the
/// name `.<16 random hex>.<target name>.<pid>.tmp`: unpredictable, never
/// ending in `.jsonl` (so no store lists it as a session), and ending in the
/// pid so that a cleaner can tell the leftovers of dead processes (the CLI's
/// doctor reads `<...>.snapshot.json.<pid>.tmp`).
#[derive(Debug)]
pub struct StagedFile {
    /// Always `Some` until `commit` takes it.
    file: Option<File>,
    path: PathBuf,
    target: PathBuf,
}

impl StagedFile {
    /// A failure names `target`, as the old module's `writeFileSync(target)`
    /// would (`EACCES: permission denied, open '<target>'`): the staged name
    /// is ours, the directory and its permissions are the caller's.
    pub fn create(target: &Path) -> Result<StagedFile, FsError> {
        let random = uuid::Uuid::new_v4().simple().to_string();
        let mut name = std::ffi::OsString::from(format!(".{}.", &random[..16]));
        name.push(target.file_name().unwrap_or_default());
        name.push(format!(".{}.tmp", std::process::id()));
        let path = target.with_file_name(name);
        let file = os::create_new(&path).at("open", target)?;
        Ok(StagedFile { file: Some(file), path, target: target.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the staged file over the target. Readers that have the old
    /// target open keep reading the old bytes; every later open sees the
    /// new. On Windows a target held open without delete sharing is retried
    /// for about a second (see `windows.rs`). On failure the staged file is
    /// removed and the target left as it was.
    pub fn commit(mut self) -> Result<(), FsError> {
        // Closed first: nothing more is written to it, and no handle of ours
        // is left on the file being renamed.
        drop(self.file.take());
        os::rename_over(&self.path, &self.target).at("rename", &self.target)?;
        self.path = PathBuf::new();
        Ok(())
    }
}

/// The pid in a staging file's name (`.<16 hex>.<target>.<pid>.tmp`), or
/// `None` when `name` is not one.
pub fn staged_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (random, rest) = rest.split_at_checked(16)?;
    if !random.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let (target, pid) = rest.strip_prefix('.')?.rsplit_once('.')?;
    if target.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the staging files in `dir` left by processes that no longer
/// exist (killed between creating one and renaming it over its target);
/// how many. A live pid's are never touched, even when the pid was reused
/// since: the file is left, never a writer's file taken from under it.
/// Best effort: an unreadable directory or a file already gone is skipped.
pub fn remove_stale_staged(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(staged_pid) else { continue };
        if pid != std::process::id() && !pid_is_alive(f64::from(pid)) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

impl Deref for StagedFile {
    type Target = File;
    fn deref(&self) -> &File {
        self.file.as_ref().unwrap_or_else(|| unreachable!("taken only by commit, which consumes self"))
    }
}

impl DerefMut for StagedFile {
    fn deref_mut(&mut self) -> &mut File {
        self.file.as_mut().unwrap_or_else(|| unreachable!("taken only by commit, which consumes self"))
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

// ---------------------------------------------------------------------------
// Reading, writing and looking up files

/// Makes the entries of directory `dir` durable: a file created in it (and
/// fsynced) then survives a power loss. On unix that is an `fsync` of the
/// directory. Windows cannot open a directory to flush it (`CreateFileW`
/// refuses without backup semantics, and `FlushFileBuffers` needs write
/// access to it); NTFS journals its metadata, so a created file's entry is
/// committed with the file system's log and there is nothing to do.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    os::sync_dir(dir)
}

/// Fills `buf` from `offset`; on Windows this also moves the file's cursor.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    os::read_exact_at(file, buf, offset)
}

/// A new file created for writing: `O_CREAT | O_EXCL | O_NOFOLLOW`
/// (`CREATE_NEW` on Windows), so nothing at the name, a dangling link
/// included, is ever written through; `EEXIST` then.
pub fn create_new(path: &Path) -> io::Result<File> {
    os::create_new(path)
}

/// Whether the last component of a path may be a symbolic link. (Links in
/// the directories above it are always followed: a project may keep its
/// `.impeccable` directory elsewhere.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// As the old module's reads do: the file the link names is read.
    Follow,
    /// A link at the name is `ELOOP`, dangling or not.
    Refuse,
}

/// An existing regular file, opened for reading.
///
/// The open never waits: a FIFO at the name does not block it (`O_NONBLOCK`,
/// which a regular file ignores) and a terminal does not become the
/// process's (`O_NOCTTY`). The open file is then checked: anything but a
/// regular file is an error, `EISDIR` for a directory and `EFTYPE`
/// ("inappropriate file type or format") for a FIFO or device; a socket
/// cannot be opened at all (`ENXIO`). So nothing read here can block or
/// deliver bytes without end.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let file = os::open_to_read(path, links)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// An existing regular file opened to append to (and read), never through
/// a symbolic link, with the checks of [`open_regular`].
pub fn open_regular_to_append(path: &Path) -> io::Result<File> {
    let file = os::open_to_append(path)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// A new file opened to append to (and read): `EEXIST` when anything is at
/// the name, a symbolic link included, so nothing is created through one.
pub fn create_to_append(path: &Path) -> io::Result<File> {
    os::create_to_append(path)
}

fn ensure_regular(file: &File) -> io::Result<()> {
    let info = FileInfo::of(file)?;
    if info.is_file {
        return Ok(());
    }
    Err(if info.is_dir { error::node_error("EISDIR") } else { error::node_error("EFTYPE") })
}

/// The largest text the old module can read: `readFileSync(p, 'utf-8')`
/// throws past V8's longest string (2^29 - 24 UTF-16 units on 64-bit
/// builds), and its callers then take the file as unreadable. Files larger
/// than this are never read whole here either.
pub const MAX_TEXT_FILE: usize = (1 << 29) - 24;

/// Reads the regular file at `path` (see [`open_regular`]) into `bytes`, in
/// chunks that grow with what has been read, never with what the file
/// claims; a file longer than `cap` bytes is `EFBIG`, read no further. No
/// size probe (`fstat`, `lseek`) decides where it ends: a read shorter than
/// the space left is taken as the end of a regular file. Were it not (some
/// network file system), the text would be cut short and fail the
/// validation every caller makes (snapshot files must parse and name the
/// journal size, lock records must parse and carry a token): a slow path,
/// never wrong data.
pub fn read_regular(path: &Path, links: Links, bytes: &mut Vec<u8>, cap: usize) -> io::Result<()> {
    use std::io::Read;
    let mut file = open_regular(path, links)?;
    bytes.clear();
    loop {
        if bytes.len() > cap {
            return Err(error::node_error("EFBIG"));
        }
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(16 * 1024).min(cap + 1 - bytes.len()));
        }
        let start = bytes.len();
        let spare = (bytes.capacity() - start).min(cap + 1 - start);
        bytes.resize(start + spare, 0);
        let read = file.read(&mut bytes[start..]);
        bytes.truncate(start + *read.as_ref().unwrap_or(&0));
        let n = match read {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 || (n < spare && bytes.len() <= cap) {
            return Ok(());
        }
    }
}

/// A directory opened once to look up many of its entries.
pub struct Dir(os::Dir);

impl Dir {
    pub fn open(path: &Path) -> io::Result<Dir> {
        os::Dir::open(path).map(Dir)
    }

    /// The entry `name` (symlinks followed): `fstatat` on unix, without
    /// walking the directory's path again; a stat by path on Windows.
    pub fn stat(&self, name: &str) -> io::Result<FileInfo> {
        self.0.stat(name)
    }
}

// ---------------------------------------------------------------------------
// Environment



// ---------------------------------------------------------------------------
// Time

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

/// [`node_eval`] for a script that prints one JSON value: that value.
#[cfg(test)]
pub(crate) fn node_eval_json(script: &str, args: &[&str]) -> Option<crate::js::Value> {
    let stdout = node_eval(script, args)?;
    let text = std::str::from_utf8(&stdout).expect("node prints UTF-8");
    Some(crate::js::json::parse(text).expect("node prints JSON"))
}

/// The JSON text of a list of strings, an argument for [`node_eval`].
#[cfg(test)]
pub(crate) fn json_strings<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| json_quote(s.as_ref())).collect();
    format!("[{}]", quoted.join(","))
}

/// `s` as a JSON string literal.
#[cfg(test)]
pub(crate) fn json_quote(s: &str) -> String {
    let mut out = String::new();
    crate::js::json::write_string(&mut out, &crate::js::JsStr::from(s));
    out
}

/// The strings of a JSON array of strings (lone surrogates made U+FFFD).
#[cfg(test)]
pub(crate) fn strings_of(v: &crate::js::Value) -> Vec<String> {
    let crate::js::Value::Array(items) = v else { panic!("not an array: {v:?}") };
    items.iter().map(|s| s.as_js_str().expect("a string").to_lossy()).collect()
}

#[cfg(test)]
mod tests;
