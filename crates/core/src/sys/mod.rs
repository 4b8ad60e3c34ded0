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
//! | [`open_to_append`] + [`Appending::lock`] | `O_APPEND`, `flock`, then one `fstat` for type and size | same | append access, `LockFileEx`, handle info |
//! | [`open_regular`] | `O_NONBLOCK`, `O_NOCTTY`, `O_NOFOLLOW` when asked, `fstat` | same | `FILE_FLAG_OPEN_REPARSE_POINT` when asked, handle info |
//! | [`StagedFile::create`] | `O_EXCL`, `fchmod`/`fchown` as the replaced file, `flock` when [`Guard::Locked`] | same | `CREATE_NEW`, `LockFileEx` when locked |
//! | [`StagedFile::commit`] | `renameat2(RENAME_EXCHANGE)` + `unlink`, else `rename` | `rename` | `MoveFileExW`, retried while busy |
//! | [`mkdir_all`] | Node's `MKDirpSync` over `mkdir` | same | same |
//! | [`Dir::stat`] | `fstatat` | `fstatat` | metadata by path |
//! | [`sync_dir`] | `fsync` of the directory | `fsync` of the directory | nothing (NTFS journals it) |
//! | errors ([`FsError`]) | errno names | errno names | `uv_translate_sys_error` |

// The one module where std's file-system API is used (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::io::{self, Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod error;
pub use error::{Context, FsError};

pub mod fault;

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
// Memory

/// Hands the pages the C allocator holds free back to the OS. Called after
/// the session cache drops many sessions' state at once: glibc keeps what
/// is freed in the middle of its heap resident until it is used again, so
/// a process that walked thousands of sessions would otherwise keep
/// megabytes it no longer needs. Elsewhere the allocator returns them itself.
pub fn return_free_memory() {
    os::return_free_memory();
}

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
        file.info()
    }

    /// The status of the file `path` names now (symlinks followed), e.g. to
    /// check that a held descriptor still is the file at that path.
    pub fn of_path(path: &Path) -> io::Result<FileInfo> {
        call("stat", || os::path_info(path))
    }

    /// The status of the name itself, a link not followed (`lstat`).
    pub fn of_link(path: &Path) -> io::Result<FileInfo> {
        call("lstat", || os::link_path_info(path))
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
        call("lstat", || os::file_stamp(path))
    }
}

// ---------------------------------------------------------------------------
// Every call through one place

/// Makes one file-system call, named as `strace` would name it, through the
/// fault seam ([`fault::point`]); an interrupted call (`EINTR`) is made
/// again, so no caller ever sees one.
fn call<T>(name: &'static str, mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match fault::point(name).and_then(|()| f()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// An open file. Every operation on it is one call through [`call`], which
/// is why the crate holds its files as this type and never as a
/// `std::fs::File` (clippy's `disallowed-types` keeps it so outside `sys`).
#[derive(Debug)]
pub struct File(std::fs::File);

impl File {
    /// The status of the open file (`fstat`).
    pub fn info(&self) -> io::Result<FileInfo> {
        call("fstat", || os::file_info(&self.0))
    }

    /// One `read` at the file's cursor.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        call("read", || (&self.0).read(buf))
    }

    /// Fills `buf` from `offset`, in as many reads as it takes; on Windows
    /// this also moves the cursor.
    pub fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset)? {
                0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }

    /// One `pread` at `offset`.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        call("pread", || os::read_at(&self.0, buf, offset))
    }

    /// The file from `offset` on, as a reader that never moves the cursor.
    pub fn reader_from(&self, offset: u64) -> ReaderAt<'_> {
        ReaderAt { file: self, offset }
    }

    /// One `write`: how many bytes it took.
    pub fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        call("write", || (&self.0).write(bytes))
    }

    /// Writes all of `bytes`, one [`File::write`] after another.
    pub fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match self.write(bytes)? {
                0 => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                n => bytes = &bytes[n..],
            }
        }
        Ok(())
    }

    pub fn sync_data(&self) -> io::Result<()> {
        call("fsync", || self.0.sync_data())
    }

    /// Cuts the file to `len` bytes (`ftruncate`).
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        call("ftruncate", || self.0.set_len(len))
    }

    fn try_lock_exclusive(&self) -> io::Result<bool> {
        call("flock", || os::try_lock_exclusive(&self.0))
    }

    fn try_lock_shared(&self) -> io::Result<bool> {
        call("flock", || os::try_lock_shared(&self.0))
    }

    /// Releases a lock held on the file; closing it does too.
    pub fn unlock(&self) -> io::Result<()> {
        call("flock", || os::unlock(&self.0))
    }
}

/// Reads a [`File`] from an offset on with `pread`s (see
/// [`File::reader_from`]).
pub struct ReaderAt<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for ReaderAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
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
        if try_once()? {
            return Ok(true);
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

impl File {
    /// Takes an exclusive advisory lock on the file, waiting at most
    /// `patience` for another holder to let go (`Duration::MAX`: for as long
    /// as it takes); it is held until [`File::unlock`] or until the file is
    /// closed. A wait that runs out is an error whose
    /// [`FsError::is_timed_out`] is true (`ETIMEDOUT`), so the caller decides
    /// what a stuck holder (a stopped process) means; the file stays open,
    /// unlocked. `path` labels errors.
    ///
    /// The lock belongs to this open file (its description on unix, its
    /// handle on Windows), so it excludes other processes and other `File`s
    /// opened separately on the same path. It is advisory on every OS: it
    /// never stops a reader or writer that does not ask for it (on Windows it
    /// covers one byte no read or write reaches, see `windows.rs`).
    pub fn lock_exclusive(&self, path: &Path, patience: Duration) -> Result<(), FsError> {
        match wait_for(patience, || self.try_lock_exclusive()) {
            Ok(true) => Ok(()),
            Ok(false) => Err(FsError::new(io::Error::new(io::ErrorKind::TimedOut, "still locked"), "flock", path)),
            Err(e) => Err(FsError::new(e, "flock", path)),
        }
    }

    /// [`File::lock_exclusive`], with a wait that runs out answered as
    /// [`Held::TimedOut`] instead of an error.
    pub fn lock_or_time_out(&self, path: &Path, patience: Duration) -> Result<Held, FsError> {
        match self.lock_exclusive(path, patience) {
            Ok(()) => Ok(Held::Yes),
            Err(e) if e.is_timed_out() => Ok(Held::TimedOut),
            Err(e) => Err(e),
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
    let handle = File(call("dup", || file.0.try_clone()).ok()?);
    match wait_for(patience, || handle.try_lock_shared()) {
        Ok(true) => Some(SharedLock(handle)),
        _ => None,
    }
}

impl Drop for SharedLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

// ---------------------------------------------------------------------------
// Replacing a file atomically for readers

/// A new file beside `target`, under a name the caller chose, that becomes
/// `target` in one step on [`StagedFile::commit`], and is removed if dropped
/// before that.
///
/// It is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, `CREATE_NEW`),
/// so a file or link planted at its name is never written through, with the
/// permissions of the file it replaces (and its owner and group where this
/// process may set them). With [`Guard::Locked`] it is locked from its
/// creation until it replaces `target`: a sweep ([`StagedFile::judge`]) never
/// takes a file a writer still holds, whatever process, PID namespace or
/// machine the writer is in.
#[derive(Debug)]
pub struct StagedFile {
    /// Always `Some` until `commit` takes it.
    file: Option<File>,
    path: PathBuf,
    target: PathBuf,
}

/// How a staged file is kept from sweeps until its rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Locked: a sweep never takes it. For a writer whose call fails when
    /// the file is lost.
    Locked,
    /// Not locked: a sweep takes it once nothing has touched it for its
    /// minimum age, that is, only from a writer stopped for that long. For a
    /// writer that loses nothing with it, and so need not pay for a lock and
    /// its release.
    AgeOnly,
}

/// What [`StagedFile::judge`] makes of a staged file left at a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StagedVerdict {
    /// Locked: its writer is between creating it and putting it in place.
    InUse,
    /// Not locked, but modified within `min_age`: possibly a writer with
    /// [`Guard::AgeOnly`], or one that has created it and not yet taken its
    /// lock.
    Fresh,
    /// Neither: left behind by a writer that stopped between creating it and
    /// putting it in place (killed, or the rename failed), or held by an
    /// unlocking writer stopped for longer than `min_age`, which loses
    /// nothing with it. Safe to remove.
    Abandoned,
    /// Nothing (or no regular file) at the name.
    Absent,
}

impl StagedFile {
    /// A failure names `target`, as the old module's `writeFileSync(target)`
    /// would (`EACCES: permission denied, open '<target>'`): the staged name
    /// is ours, the directory and its permissions are the caller's. A
    /// directory at `target` is `EISDIR`, as a write there would be.
    pub fn create(path: PathBuf, target: &Path, guard: Guard) -> Result<StagedFile, FsError> {
        let replaced = match call("lstat", || os::link_info(target)) {
            Ok(info) if info.is_dir => return Err(FsError::new(uv::node_error("EISDIR"), "open", target)),
            Ok(info) if info.is_file => Some(info.access),
            _ => None,
        };
        let file = File(call("open", || os::create_new(&path)).at("open", target)?);
        let staged = StagedFile { file: Some(file), path, target: target.to_path_buf() };
        if let Some(access) = replaced {
            staged.take_access(&access).at("open", target)?;
        }
        if guard == Guard::Locked {
            // A sweep that has the file open at this instant holds the lock
            // for a moment: the file is fresh, so it will let go without
            // removing it; the lock only matters for a writer stopped for
            // longer than `min_age` before its rename.
            let _ = wait_for(Duration::from_millis(20), || staged.try_lock_exclusive());
        }
        Ok(staged)
    }

    /// Gives the new file the replaced one's mode, owner and group, with a
    /// call for each only where the new file differs (mostly it does not:
    /// both were made by a writer of the same user and umask).
    fn take_access(&self, replaced: &Access) -> io::Result<()> {
        let file = &self.file.as_ref().unwrap_or_else(|| unreachable!("set by create")).0;
        let made = call("fstat", || os::file_access(file))?;
        if made.mode != replaced.mode {
            call("fchmod", || os::set_mode(file, replaced))?;
        }
        if (made.uid, made.gid) != (replaced.uid, replaced.gid) {
            // Only where the process may: root, or a group it is in.
            let _ = call("fchown", || os::set_owner(file, replaced));
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the staged file in place of the target. Readers that have the
    /// old target open keep reading the old bytes; every later open sees the
    /// new. On Windows a target held open without delete sharing is retried
    /// for about a second (see `windows.rs`). On failure the staged file is
    /// removed and the target left as it was.
    pub fn commit(mut self) -> Result<(), FsError> {
        os::replace(&self.path, &self.target).at("rename", &self.target)?;
        self.path = PathBuf::new();
        // Closed only now: the lock is held until the name is replaced.
        drop(self.file.take());
        Ok(())
    }

    /// Whether the staged file at `path` may be removed: not while it is
    /// locked (its writer holds it until its rename), and not while it was
    /// modified within `min_age`. Neither rule depends on which process,
    /// PID namespace or machine the writer runs in.
    pub fn judge(path: &Path, min_age: Duration) -> StagedVerdict {
        let Ok(file) = open_regular(path, Links::Refuse) else { return StagedVerdict::Absent };
        match file.try_lock_exclusive() {
            Ok(true) => {}
            _ => return StagedVerdict::InUse,
        }
        let verdict = match file.info() {
            Ok(info) if modified_within(&info, min_age) => StagedVerdict::Fresh,
            Ok(_) => StagedVerdict::Abandoned,
            Err(_) => StagedVerdict::InUse,
        };
        let _ = file.unlock();
        verdict
    }

    /// Removes the staged file at `path` if [`StagedFile::judge`] finds it
    /// abandoned; whether it did.
    pub fn remove_if_abandoned(path: &Path, min_age: Duration) -> bool {
        StagedFile::judge(path, min_age) == StagedVerdict::Abandoned && remove_file(path).is_ok()
    }
}

fn modified_within(info: &FileInfo, age: Duration) -> bool {
    let now_ns = i128::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos()).unwrap_or(i128::MAX);
    now_ns - info.mtime_ns < i128::try_from(age.as_nanos()).unwrap_or(i128::MAX)
}

impl Deref for StagedFile {
    type Target = File;
    fn deref(&self) -> &File {
        self.file.as_ref().unwrap_or_else(|| unreachable!("taken only by commit, which consumes self"))
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            // Should this fail, the file is left unlocked, and a sweep
            // removes it once it is old enough.
            let _ = remove_file(&self.path);
        }
    }
}

/// The permissions and owner a replaced file had, for its replacement
/// (unix; Windows files take their ACL from the directory, as a file
/// written in place keeps it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Access {
    #[cfg_attr(windows, allow(dead_code))]
    mode: u32,
    #[cfg_attr(windows, allow(dead_code))]
    uid: u32,
    #[cfg_attr(windows, allow(dead_code))]
    gid: u32,
}

/// What an `lstat` of a name tells a replacement of it.
pub(crate) struct LinkInfo {
    is_file: bool,
    is_dir: bool,
    access: Access,
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
    call("fsync", || os::sync_dir(dir))
}

/// A new file created for writing: `O_CREAT | O_EXCL | O_NOFOLLOW`
/// (`CREATE_NEW` on Windows), so nothing at the name, a dangling link
/// included, is ever written through; `EEXIST` then.
pub fn create_new(path: &Path) -> io::Result<File> {
    call("open", || os::create_new(path)).map(File)
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
    let file = File(call("open", || os::open_to_read(path, links))?);
    ensure_regular(&file)?;
    Ok(file)
}

/// An existing file opened to append to (and read), never through a
/// symbolic link, without waiting (as [`open_regular`] opens). What is at
/// the name is checked by [`Appending::lock`], the only way to the file.
pub fn open_to_append(path: &Path) -> io::Result<Appending> {
    call("open", || os::open_to_append(path)).map(|f| Appending(File(f)))
}

/// A new file opened to append to (and read): `EEXIST` when anything is at
/// the name, a symbolic link included, so nothing is created through one;
/// what it opens is the regular file it made.
pub fn create_to_append(path: &Path) -> io::Result<File> {
    call("open", || os::create_to_append(path)).map(File)
}

/// A file opened to append to that is not yet known to be a regular file.
#[derive(Debug)]
pub struct Appending(File);

/// How a wait for a lock ended (see [`File::lock_or_time_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    Yes,
    /// Another holder kept it for all of the patience: the caller decides
    /// whether to go on without it.
    TimedOut,
}

impl Appending {
    /// Takes the file's exclusive lock, waiting at most `patience` for
    /// another holder (see [`File::lock_exclusive`]), and then its status,
    /// refusing anything but a regular file as [`open_regular`] does. The
    /// lock is mostly free at once, and then one `fstat` under it both checks
    /// the type and reads the size; only a lock held elsewhere makes the type
    /// be checked first, so a device or FIFO is refused at once, never waited
    /// on. `path` labels errors.
    pub fn lock(self, path: &Path, patience: Duration) -> Result<(File, FileInfo, Held), FsError> {
        let file = self.0;
        let first = file.try_lock_exclusive();
        if !matches!(first, Ok(true)) {
            regular(file.info().at("fstat", path)?).at("open", path)?;
        }
        let held = match first {
            Ok(true) => Held::Yes,
            Ok(false) => file.lock_or_time_out(path, patience)?,
            Err(e) => return Err(FsError::new(e, "flock", path)),
        };
        let info = regular(file.info().at("fstat", path)?).at("open", path)?;
        Ok((file, info, held))
    }
}

fn ensure_regular(file: &File) -> io::Result<()> {
    regular(file.info()?).map(|_| ())
}

/// `info`, when it is a regular file's.
fn regular(info: FileInfo) -> io::Result<FileInfo> {
    if info.is_file {
        return Ok(info);
    }
    Err(if info.is_dir { uv::node_error("EISDIR") } else { uv::node_error("EFTYPE") })
}

/// Removes the name `path` (`unlink`; never a directory).
pub fn remove_file(path: &Path) -> io::Result<()> {
    call("unlink", || os::remove_file(path))
}

/// Whether anything answers a `stat` of `path` (links followed), as Node's
/// `fs.existsSync`: any error is `false`.
pub fn exists(path: &Path) -> bool {
    FileInfo::of_path(path).is_ok()
}

/// The names in directory `path` (not `.` and `..`), in the order the
/// file system gives them; one call.
pub fn list_dir(path: &Path) -> io::Result<Vec<std::ffi::OsString>> {
    call("scandir", || std::fs::read_dir(path)?.map(|entry| entry.map(|e| e.file_name())).collect())
}

/// The directories named by `path` (each with a name and a directory type
/// as the listing reports it); one call.
pub fn list_subdirs(path: &Path) -> io::Result<Vec<std::ffi::OsString>> {
    call("scandir", || {
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                dirs.push(entry.file_name());
            }
        }
        Ok(dirs)
    })
}

/// Reads the whole regular file at `path` (see [`read_regular`]) as text,
/// with invalid UTF-8 replaced, as `readFileSync(p, 'utf-8')` reads it;
/// `None` when it cannot be read.
pub fn read_text(path: &Path, cap: usize) -> Option<String> {
    let mut bytes = Vec::new();
    read_regular(path, Links::Follow, &mut bytes, cap).ok()?;
    Some(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// `fs.mkdirSync(dir, { recursive: true })`, with Node's errors: the
/// code a step met, `syscall` `mkdir`, and `dir` itself as the path,
/// whichever of its ancestors the step was at. A file in the way below
/// `dir` is `ENOTDIR`, at `dir` itself `EEXIST`.
pub fn mkdir_all(dir: &Path) -> Result<(), FsError> {
    if FileInfo::of_path(dir).is_ok_and(|info| info.is_dir) {
        return Ok(());
    }
    mkdir_steps(dir).map_err(|e| FsError::new(e, "mkdir", dir))
}

/// Node's `MKDirpSync`: create `dir`, and on `ENOENT` its parent first.
/// Where Node would loop forever (a parent that exists but in which `mkdir`
/// keeps answering `ENOENT`, as in `/proc`), that `ENOENT` is the answer.
fn mkdir_steps(dir: &Path) -> io::Result<()> {
    use io::ErrorKind::{AlreadyExists, NotADirectory, NotFound, PermissionDenied, StorageFull};
    let mut todo = vec![dir];
    // The directory whose parent was just made (or found): an ENOENT there
    // cannot be cured by making the parent again.
    let mut parent_ready: Option<&Path> = None;
    while let Some(&next) = todo.last() {
        let err = match call("mkdir", || os::mkdir(next)) {
            Ok(()) => {
                todo.pop();
                parent_ready = todo.last().copied();
                continue;
            }
            Err(e) => e,
        };
        match err.kind() {
            PermissionDenied | StorageFull | NotADirectory => return Err(err),
            NotFound => match next.parent() {
                Some(parent) if parent_ready != Some(next) => todo.push(parent),
                Some(_) => return Err(err),
                None => return Err(uv::node_error("EEXIST")),
            },
            kind => match FileInfo::of_path(next) {
                Ok(info) if info.is_dir => {
                    todo.pop();
                    parent_ready = todo.last().copied();
                }
                Ok(_) if kind == AlreadyExists && todo.len() > 1 => return Err(uv::node_error("ENOTDIR")),
                Ok(_) if kind == AlreadyExists => return Err(err),
                Ok(_) => return Err(uv::node_error("EEXIST")),
                Err(e) => return Err(e),
            },
        }
    }
    Ok(())
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
    let file = open_regular(path, links)?;
    bytes.clear();
    loop {
        if bytes.len() > cap {
            return Err(uv::node_error("EFBIG"));
        }
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(16 * 1024).min(cap + 1 - bytes.len()));
        }
        let start = bytes.len();
        let spare = (bytes.capacity() - start).min(cap + 1 - start);
        bytes.resize(start + spare, 0);
        let read = file.read(&mut bytes[start..]);
        bytes.truncate(start + *read.as_ref().unwrap_or(&0));
        let n = read?;
        if n == 0 || (n < spare && bytes.len() <= cap) {
            return Ok(());
        }
    }
}

/// A directory opened once to look up many of its entries.
pub struct Dir(os::Dir);

impl Dir {
    pub fn open(path: &Path) -> io::Result<Dir> {
        call("open", || os::Dir::open(path)).map(Dir)
    }

    /// The entry `name` (symlinks followed): `fstatat` on unix, without
    /// walking the directory's path again; a stat by path on Windows.
    pub fn stat(&self, name: &str) -> io::Result<FileInfo> {
        call("fstatat", || self.0.stat(name))
    }
}

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
