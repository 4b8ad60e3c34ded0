//! Windows: process handles, byte-range locks, file ids, libuv's error table.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::*;
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, LockFileEx, UnlockFileEx, BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LOCK_FILE_FLAGS,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, GetProcessTimes, OpenProcess,
    WaitForSingleObject, PROCESS_ACCESS_RIGHTS, PROCESS_QUERY_INFORMATION, PROCESS_QUERY_LIMITED_INFORMATION,
    PROCESS_SYNCHRONIZE, PROCESS_TERMINATE,
};
use windows_sys::Win32::System::IO::{OVERLAPPED, OVERLAPPED_0, OVERLAPPED_0_0};

use super::uv::UvCode;
use super::{Access, FileId, FileInfo, FileStamp, LinkInfo, Links};

/// libuv's `uv_kill(pid, 0)`: pid 0 is this process; otherwise the process
/// is opened (as for a kill) and counts as gone only when Windows says no
/// such process (`ERROR_INVALID_PARAMETER`, libuv's ESRCH) or it has exited.
/// Any other failure (access denied: EPERM) is not ESRCH, so alive.
pub(crate) fn signal_zero_finds(pid: i32) -> bool {
    if pid == 0 {
        return true;
    }
    // A negative pid reaches OpenProcess as the same bits, as in libuv.
    let access = PROCESS_TERMINATE | PROCESS_QUERY_INFORMATION | PROCESS_SYNCHRONIZE;
    let Some(process) = open_process(access, pid as u32) else {
        return last_error() != ERROR_INVALID_PARAMETER;
    };
    let handle = process.as_raw_handle();
    let mut status = 0u32;
    // SAFETY: a process handle we own and a local to write the code into.
    if unsafe { GetExitCodeProcess(handle, &mut status) } == 0 {
        return true;
    }
    if status != STILL_ACTIVE as u32 {
        return false;
    }
    // An exit code of 259 (STILL_ACTIVE) can also be a real one: ask whether
    // the process object is signaled. WAIT_FAILED is an error, not ESRCH.
    // SAFETY: a process handle we own, opened with SYNCHRONIZE.
    let signaled = unsafe { WaitForSingleObject(handle, 0) } == WAIT_OBJECT_0;
    !signaled
}

fn open_process(access: PROCESS_ACCESS_RIGHTS, pid: u32) -> Option<OwnedHandle> {
    // SAFETY: OpenProcess takes plain values; it returns null or a handle
    // that we then own and close once.
    let raw = unsafe { OpenProcess(access, 0, pid) };
    // SAFETY: non-null, so a valid handle that nothing else will close.
    (!raw.is_null()).then(|| unsafe { OwnedHandle::from_raw_handle(raw) })
}

fn last_error() -> u32 {
    // SAFETY: reads this thread's last-error value.
    unsafe { GetLastError() }
}

/// The Windows heap decommits free pages itself.
pub(crate) fn return_free_memory() {}

/// Creation time of the process, in microseconds since the Unix epoch: fixed
/// for its life and absolute, so unlike Linux's ticks it needs no boot id to
/// be compared (a pid reused after a reboot has a later creation time).
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let process = open_process(PROCESS_QUERY_LIMITED_INFORMATION, pid)?;
    let [mut created, mut exited, mut kernel, mut user] = [FILETIME::default(); 4];
    // SAFETY: a process handle we own and four locals for the times.
    let ok = unsafe { GetProcessTimes(process.as_raw_handle(), &mut created, &mut exited, &mut kernel, &mut user) };
    if ok == 0 {
        return None;
    }
    (filetime_100ns(created) / 10).checked_sub(FILETIME_UNIX_EPOCH_US)
}

/// 1970-01-01 in FILETIME's count from 1601, in microseconds.
const FILETIME_UNIX_EPOCH_US: u64 = 11_644_473_600_000_000;

fn filetime_100ns(t: FILETIME) -> u64 {
    (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)
}

/// None: Windows start times are absolute (see `process_start_time`), and no
/// per-boot id is at hand that a clock change could not move.
pub(crate) fn boot_id() -> Option<String> {
    None
}

fn handle_info(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    let mut info = BY_HANDLE_FILE_INFORMATION::default();
    // SAFETY: a handle `file` keeps open and a local for the answer.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// Volume serial number and file index. On NTFS the index carries a sequence
/// number that changes when the record is reused; on ReFS the 64-bit index
/// is not guaranteed unique (its ids are 128 bits).
fn id_of(info: &BY_HANDLE_FILE_INFORMATION) -> FileId {
    let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
    FileId { volume: u64::from(info.dwVolumeSerialNumber), index }
}

pub(crate) fn file_info(file: &File) -> io::Result<FileInfo> {
    let info = handle_info(file)?;
    Ok(FileInfo {
        id: id_of(&info),
        len: (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
        mtime_ns: (i128::from(filetime_100ns(info.ftLastWriteTime)) - FILETIME_UNIX_EPOCH_100NS) * 100,
        links: u64::from(info.nNumberOfLinks),
        is_file: info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0,
        is_dir: info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0,
    })
}

/// 1970-01-01 in FILETIME's count from 1601.
const FILETIME_UNIX_EPOCH_100NS: i128 = 116_444_736_000_000_000;

/// No access rights are needed to read a file's status, and the default
/// sharing mode lets everyone else go on reading, writing and deleting it.
fn open_for_info(path: &Path, flags: u32) -> io::Result<File> {
    OpenOptions::new().access_mode(0).custom_flags(FILE_FLAG_BACKUP_SEMANTICS | flags).open(path)
}

pub(crate) fn path_info(path: &Path) -> io::Result<FileInfo> {
    file_info(&open_for_info(path, 0)?)
}

pub(crate) fn link_path_info(path: &Path) -> io::Result<FileInfo> {
    file_info(&open_for_info(path, FILE_FLAG_OPEN_REPARSE_POINT)?)
}

/// The id plus the creation time, for file systems (FAT) whose index is the
/// slot in the directory and so is reused by the next file created there.
pub(crate) fn file_stamp(path: &Path) -> io::Result<FileStamp> {
    let info = handle_info(&open_for_info(path, FILE_FLAG_OPEN_REPARSE_POINT)?)?;
    Ok(FileStamp { id: id_of(&info), time_ns: i128::from(filetime_100ns(info.ftCreationTime)) * 100 })
}

/// The byte the locks are taken on. Windows byte-range locks are mandatory:
/// while one handle holds a range, reads and writes of it through other
/// handles fail (std's `File::lock` locks the whole file, so an old-module
/// reader of a locked journal would get EBUSY). No file here grows to 8 EiB,
/// so no read or write ever touches this byte and the lock stays advisory,
/// as `flock` is. It is below 2^63 because SMB servers keep offsets signed.
const LOCK_OFFSET: u64 = (1 << 63) - 2;

fn lock_overlapped() -> OVERLAPPED {
    let at = OVERLAPPED_0_0 { Offset: LOCK_OFFSET as u32, OffsetHigh: (LOCK_OFFSET >> 32) as u32 };
    OVERLAPPED { Anonymous: OVERLAPPED_0 { Anonymous: at }, ..OVERLAPPED::default() }
}

/// `Ok(false)`: another handle holds a conflicting lock. Locks belong to the
/// handle, so two `File`s opened separately exclude each other, as with flock.
fn try_lock(file: &File, flags: LOCK_FILE_FLAGS) -> io::Result<bool> {
    let mut at = lock_overlapped();
    // SAFETY: a handle `file` keeps open; `at` names the byte and outlives the
    // call, which with LOCKFILE_FAIL_IMMEDIATELY on a synchronous handle
    // completes before returning.
    if unsafe { LockFileEx(file.as_raw_handle(), flags | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &mut at) } != 0 {
        return Ok(true);
    }
    match last_error() {
        ERROR_LOCK_VIOLATION => Ok(false),
        code => Err(io::Error::from_raw_os_error(code as i32)),
    }
}

pub(crate) fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    try_lock(file, LOCKFILE_EXCLUSIVE_LOCK)
}

pub(crate) fn try_lock_shared(file: &File) -> io::Result<bool> {
    try_lock(file, 0)
}

pub(crate) fn unlock(file: &File) -> io::Result<()> {
    let mut at = lock_overlapped();
    // SAFETY: as in `try_lock`; the range is the one locked there.
    if unsafe { UnlockFileEx(file.as_raw_handle(), 0, 1, 0, &mut at) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `CREATE_NEW`; std adds `FILE_FLAG_OPEN_REPARSE_POINT` to it, so a link
/// planted at the name is not followed.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// Nothing: see `sys::sync_dir`.
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Windows has no FIFOs or devices in the file system to wait on; a
/// refused link is opened as the link itself (`FILE_FLAG_OPEN_REPARSE_POINT`)
/// and then refused as `ELOOP` would be on unix.
pub(crate) fn open_to_read(path: &Path, links: Links) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    refuse_links(options, path, links)
}

pub(crate) fn open_to_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true);
    refuse_links(options, path, Links::Refuse)
}

/// `CREATE_NEW`, which std opens with `FILE_FLAG_OPEN_REPARSE_POINT`: a link
/// at the name is never followed.
pub(crate) fn create_to_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).append(true).create_new(true).open(path)
}

fn refuse_links(mut options: OpenOptions, path: &Path, links: Links) -> io::Result<File> {
    if links == Links::Follow {
        return options.open(path);
    }
    let file = options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)?;
    if handle_info(&file)?.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(io::Error::from_raw_os_error(ERROR_CANT_RESOLVE_FILENAME as i32));
    }
    Ok(file)
}

/// How often a rename over a busy target is tried before giving up.
const RENAME_ATTEMPTS: u32 = 10;

/// `std::fs::rename` is `MoveFileExW(MOVEFILE_REPLACE_EXISTING)`, retried
/// with POSIX semantics when that is denied. Files opened by Node, by std and
/// by most programs share delete access, and then the POSIX rename replaces
/// the target while readers keep their open old file. A reader that opened
/// it without sharing delete (or a scanner holding it briefly) makes the
/// rename fail with ERROR_SHARING_VIOLATION or ERROR_ACCESS_DENIED: retried
/// for about a second in all, then the error is returned.
pub(crate) fn replace(from: &Path, to: &Path) -> io::Result<()> {
    let mut wait_ms = 1;
    for _ in 1..RENAME_ATTEMPTS {
        match super::call("rename", || fs::rename(from, to)) {
            Err(e) if is_busy(&e) => std::thread::sleep(std::time::Duration::from_millis(wait_ms)),
            other => return other,
        }
        wait_ms *= 2;
    }
    super::call("rename", || fs::rename(from, to))
}

pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    fs::remove_file(path)
}

pub(crate) fn mkdir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)
}

/// The name itself (a link not followed). Windows gives a new file the ACL
/// its directory passes on, so there is nothing to carry over.
pub(crate) fn link_info(path: &Path) -> io::Result<LinkInfo> {
    let info = handle_info(&open_for_info(path, FILE_FLAG_OPEN_REPARSE_POINT)?)?;
    let is_dir = info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0;
    let is_link = info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0;
    Ok(LinkInfo { is_file: !is_dir && !is_link, is_dir, access: Access::default() })
}

pub(crate) fn set_mode(_file: &File, _access: &Access) -> io::Result<()> {
    Ok(())
}

/// Windows files take their ACL from the directory: nothing to compare.
pub(crate) fn file_access(_file: &File) -> io::Result<Access> {
    Ok(Access::default())
}

pub(crate) fn set_owner(_file: &File, _access: &Access) -> io::Result<()> {
    Ok(())
}

fn is_busy(e: &io::Error) -> bool {
    matches!(e.raw_os_error().map(|c| c as u32), Some(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION))
}

/// `seek_read`; it moves the file cursor too.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek_read(buf, offset)
}

/// A directory whose entries are looked up by path: Windows has no
/// `fstatat`, and opening each entry is what a stat by path does anyway.
pub(crate) struct Dir(PathBuf);

impl Dir {
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        if path_info(path)?.is_file {
            return Err(io::Error::from_raw_os_error(ERROR_DIRECTORY as i32));
        }
        Ok(Dir(path.to_path_buf()))
    }

    pub(crate) fn stat(&self, name: &str) -> io::Result<FileInfo> {
        path_info(&self.0.join(name))
    }
}




/// A Win32 error as libuv's `uv_translate_sys_error` names it; everything
/// it does not list is UNKNOWN.
pub(crate) fn uv_code(raw: i32) -> UvCode {
    UvCode::named(uv_name(raw as u32))
}

fn uv_name(code: u32) -> &'static str {
    match code {
        ERROR_ELEVATION_REQUIRED | ERROR_CANT_ACCESS_FILE | WSAEACCES => "EACCES",
        ERROR_ADDRESS_ALREADY_ASSOCIATED | WSAEADDRINUSE => "EADDRINUSE",
        WSAEADDRNOTAVAIL => "EADDRNOTAVAIL",
        WSAEAFNOSUPPORT => "EAFNOSUPPORT",
        ERROR_NO_DATA | WSAEWOULDBLOCK => "EAGAIN",
        WSAEALREADY => "EALREADY",
        ERROR_INVALID_FLAGS | ERROR_INVALID_HANDLE => "EBADF",
        ERROR_LOCK_VIOLATION | ERROR_PIPE_BUSY | ERROR_SHARING_VIOLATION => "EBUSY",
        ERROR_OPERATION_ABORTED | WSAEINTR => "ECANCELED",
        ERROR_NO_UNICODE_TRANSLATION => "ECHARSET",
        ERROR_CONNECTION_ABORTED | WSAECONNABORTED => "ECONNABORTED",
        ERROR_CONNECTION_REFUSED | WSAECONNREFUSED => "ECONNREFUSED",
        ERROR_NETNAME_DELETED | WSAECONNRESET => "ECONNRESET",
        ERROR_ALREADY_EXISTS | ERROR_FILE_EXISTS => "EEXIST",
        ERROR_NOACCESS | WSAEFAULT => "EFAULT",
        ERROR_HOST_UNREACHABLE | WSAEHOSTUNREACH => "EHOSTUNREACH",
        ERROR_INSUFFICIENT_BUFFER
        | ERROR_INVALID_DATA
        | ERROR_INVALID_PARAMETER
        | ERROR_SYMLINK_NOT_SUPPORTED
        | WSAEINVAL
        | WSAEPFNOSUPPORT => "EINVAL",
        ERROR_BEGINNING_OF_MEDIA
        | ERROR_BUS_RESET
        | ERROR_CRC
        | ERROR_DEVICE_DOOR_OPEN
        | ERROR_DEVICE_REQUIRES_CLEANING
        | ERROR_DISK_CORRUPT
        | ERROR_EOM_OVERFLOW
        | ERROR_FILEMARK_DETECTED
        | ERROR_GEN_FAILURE
        | ERROR_INVALID_BLOCK_LENGTH
        | ERROR_IO_DEVICE
        | ERROR_NO_DATA_DETECTED
        | ERROR_NO_SIGNAL_SENT
        | ERROR_OPEN_FAILED
        | ERROR_SETMARK_DETECTED
        | ERROR_SIGNAL_REFUSED => "EIO",
        WSAEISCONN => "EISCONN",
        ERROR_CANT_RESOLVE_FILENAME => "ELOOP",
        ERROR_TOO_MANY_OPEN_FILES | WSAEMFILE => "EMFILE",
        WSAEMSGSIZE => "EMSGSIZE",
        ERROR_BUFFER_OVERFLOW | ERROR_FILENAME_EXCED_RANGE => "ENAMETOOLONG",
        ERROR_NETWORK_UNREACHABLE | WSAENETUNREACH => "ENETUNREACH",
        WSAENOBUFS => "ENOBUFS",
        ERROR_BAD_PATHNAME
        | ERROR_DIRECTORY
        | ERROR_ENVVAR_NOT_FOUND
        | ERROR_FILE_NOT_FOUND
        | ERROR_INVALID_NAME
        | ERROR_INVALID_DRIVE
        | ERROR_INVALID_REPARSE_DATA
        | ERROR_MOD_NOT_FOUND
        | ERROR_PATH_NOT_FOUND
        | WSAHOST_NOT_FOUND
        | WSANO_DATA => "ENOENT",
        ERROR_NOT_ENOUGH_MEMORY | ERROR_OUTOFMEMORY => "ENOMEM",
        ERROR_CANNOT_MAKE | ERROR_DISK_FULL | ERROR_EA_TABLE_FULL | ERROR_END_OF_MEDIA | ERROR_HANDLE_DISK_FULL => {
            "ENOSPC"
        }
        ERROR_NOT_CONNECTED | WSAENOTCONN => "ENOTCONN",
        ERROR_DIR_NOT_EMPTY => "ENOTEMPTY",
        WSAENOTSOCK => "ENOTSOCK",
        ERROR_NOT_SUPPORTED => "ENOTSUP",
        ERROR_BROKEN_PIPE => "EOF",
        ERROR_ACCESS_DENIED | ERROR_PRIVILEGE_NOT_HELD => "EPERM",
        ERROR_BAD_PIPE | ERROR_PIPE_NOT_CONNECTED | WSAESHUTDOWN => "EPIPE",
        WSAEPROTONOSUPPORT => "EPROTONOSUPPORT",
        ERROR_WRITE_PROTECT => "EROFS",
        ERROR_SEM_TIMEOUT | WSAETIMEDOUT => "ETIMEDOUT",
        ERROR_NOT_SAME_DEVICE => "EXDEV",
        ERROR_INVALID_FUNCTION => "EISDIR",
        ERROR_META_EXPANSION_TOO_LONG => "E2BIG",
        WSAESOCKTNOSUPPORT => "ESOCKTNOSUPPORT",
        ERROR_BAD_EXE_FORMAT => "EFTYPE",
        _ => "UNKNOWN",
    }
}

// Winsock codes, for the table to be libuv's whole (the WinSock feature of
// windows-sys is not otherwise needed).
const WSAEINTR: u32 = 10004;
const WSAEACCES: u32 = 10013;
const WSAEFAULT: u32 = 10014;
const WSAEINVAL: u32 = 10022;
const WSAEMFILE: u32 = 10024;
const WSAEWOULDBLOCK: u32 = 10035;
const WSAEALREADY: u32 = 10037;
const WSAENOTSOCK: u32 = 10038;
const WSAEMSGSIZE: u32 = 10040;
const WSAEPROTONOSUPPORT: u32 = 10043;
const WSAESOCKTNOSUPPORT: u32 = 10044;
const WSAEPFNOSUPPORT: u32 = 10046;
const WSAEAFNOSUPPORT: u32 = 10047;
const WSAEADDRINUSE: u32 = 10048;
const WSAEADDRNOTAVAIL: u32 = 10049;
const WSAENETUNREACH: u32 = 10051;
const WSAECONNABORTED: u32 = 10053;
const WSAECONNRESET: u32 = 10054;
const WSAENOBUFS: u32 = 10055;
const WSAEISCONN: u32 = 10056;
const WSAENOTCONN: u32 = 10057;
const WSAESHUTDOWN: u32 = 10058;
const WSAETIMEDOUT: u32 = 10060;
const WSAECONNREFUSED: u32 = 10061;
const WSAEHOSTUNREACH: u32 = 10065;
const WSAHOST_NOT_FOUND: u32 = 11001;
const WSANO_DATA: u32 = 11004;

/// libuv's own numbers on Windows (`uv/errno.h`), which Node reports as
/// `errno`.
pub(crate) fn uv_errno(name: &str) -> i32 {
    UV_ERRNOS.iter().find(|(n, _)| *n == name).map_or(-4094, |(_, errno)| *errno)
}

#[cfg(test)]
pub(crate) fn uv_names() -> impl Iterator<Item = &'static str> {
    UV_ERRNOS.iter().map(|(name, _)| *name)
}

const UV_ERRNOS: &[(&str, i32)] = &[
    ("E2BIG", -4093),
    ("EACCES", -4092),
    ("EADDRINUSE", -4091),
    ("EADDRNOTAVAIL", -4090),
    ("EAFNOSUPPORT", -4089),
    ("EAGAIN", -4088),
    ("EALREADY", -4084),
    ("EBADF", -4083),
    ("EBUSY", -4082),
    ("ECANCELED", -4081),
    ("ECHARSET", -4080),
    ("ECONNABORTED", -4079),
    ("ECONNREFUSED", -4078),
    ("ECONNRESET", -4077),
    ("EDESTADDRREQ", -4076),
    ("EEXIST", -4075),
    ("EFAULT", -4074),
    ("EFBIG", -4036),
    ("EFTYPE", -4028),
    ("EHOSTDOWN", -4031),
    ("EHOSTUNREACH", -4073),
    ("EILSEQ", -4027),
    ("EINTR", -4072),
    ("EINVAL", -4071),
    ("EIO", -4070),
    ("EISCONN", -4069),
    ("EISDIR", -4068),
    ("ELOOP", -4067),
    ("EMFILE", -4066),
    ("EMLINK", -4032),
    ("EMSGSIZE", -4065),
    ("ENAMETOOLONG", -4064),
    ("ENETDOWN", -4063),
    ("ENETUNREACH", -4062),
    ("ENFILE", -4061),
    ("ENOBUFS", -4060),
    ("ENODATA", -4024),
    ("ENODEV", -4059),
    ("ENOENT", -4058),
    ("ENOEXEC", -4022),
    ("ENOMEM", -4057),
    ("ENONET", -4056),
    ("ENOPROTOOPT", -4035),
    ("ENOSPC", -4055),
    ("ENOSYS", -4054),
    ("ENOTCONN", -4053),
    ("ENOTDIR", -4052),
    ("ENOTEMPTY", -4051),
    ("ENOTSOCK", -4050),
    ("ENOTSUP", -4049),
    ("ENOTTY", -4029),
    ("ENXIO", -4033),
    ("EOF", -4095),
    ("EOVERFLOW", -4026),
    ("EPERM", -4048),
    ("EPIPE", -4047),
    ("EPROTO", -4046),
    ("EPROTONOSUPPORT", -4045),
    ("EPROTOTYPE", -4044),
    ("ERANGE", -4034),
    ("EREMOTEIO", -4030),
    ("EROFS", -4043),
    ("ESHUTDOWN", -4042),
    ("ESOCKTNOSUPPORT", -4025),
    ("ESPIPE", -4041),
    ("ESRCH", -4040),
    ("ETIMEDOUT", -4039),
    ("ETXTBSY", -4038),
    ("EUNATCH", -4023),
    ("EXDEV", -4037),
    ("UNKNOWN", -4094),
];
