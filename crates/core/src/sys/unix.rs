//! What Linux and macOS share: POSIX calls, `flock`, errno values.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use super::uv::UvCode;
use super::{Access, FileId, FileInfo, FileStamp, LinkInfo, Links};

/// `kill(pid, 0)` fails with ESRCH only when no process or group has that id.
pub(crate) fn signal_zero_finds(pid: i32) -> bool {
    // SAFETY: signal 0 sends nothing; kill only checks existence and permission.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

pub(crate) fn file_info(file: &File) -> io::Result<FileInfo> {
    Ok(info_of(&file.metadata()?))
}

pub(crate) fn path_info(path: &Path) -> io::Result<FileInfo> {
    Ok(info_of(&fs::metadata(path)?))
}

pub(crate) fn link_path_info(path: &Path) -> io::Result<FileInfo> {
    Ok(info_of(&fs::symlink_metadata(path)?))
}

fn info_of(m: &fs::Metadata) -> FileInfo {
    FileInfo {
        id: FileId { volume: m.dev(), index: m.ino() },
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        links: m.nlink(),
        is_file: m.is_file(),
        is_dir: m.is_dir(),
    }
}

/// Inode numbers are handed out again as soon as a file is deleted, so the
/// status-change time goes with them: a file created later at the same path
/// has a later one.
pub(crate) fn file_stamp(path: &Path) -> io::Result<FileStamp> {
    let m = fs::symlink_metadata(path)?;
    let id = FileId { volume: m.dev(), index: m.ino() };
    Ok(FileStamp { id, time_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()) })
}

/// std's `File::try_lock` is `flock(LOCK_EX | LOCK_NB)` here: the lock belongs
/// to the open file description, so two `File`s opened separately exclude
/// each other even within one process. `Ok(false)`: someone else holds it.
pub(crate) fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    lock_outcome(file.try_lock())
}

pub(crate) fn try_lock_shared(file: &File) -> io::Result<bool> {
    lock_outcome(file.try_lock_shared())
}

fn lock_outcome(result: Result<(), fs::TryLockError>) -> io::Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

pub(crate) fn unlock(file: &File) -> io::Result<()> {
    file.unlock()
}

/// `O_CREAT | O_EXCL | O_NOFOLLOW`. `O_EXCL` alone already refuses a
/// symlink planted at the name; `O_NOFOLLOW` says so to the reader.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// `fsync` of the directory itself.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Never blocks on a FIFO and never takes a terminal as the controlling
/// one; `O_NOFOLLOW` when links are refused (a link is then `ELOOP`).
fn no_wait(links: Links) -> libc::c_int {
    let follow = if links == Links::Refuse { libc::O_NOFOLLOW } else { 0 };
    libc::O_NONBLOCK | libc::O_NOCTTY | follow
}

pub(crate) fn open_to_read(path: &Path, links: Links) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(no_wait(links)).open(path)
}

pub(crate) fn open_to_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).append(true).custom_flags(no_wait(Links::Refuse)).open(path)
}

/// `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0o666 less the umask as Node's.
pub(crate) fn create_to_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).append(true).create_new(true).custom_flags(no_wait(Links::Refuse)).open(path)
}

/// `rename(2)` replaces the target atomically; readers that have the old file
/// open keep reading it.
pub(crate) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    fs::remove_file(path)
}

/// `mkdir(path, 0o777)` less the umask, as Node's `mkdirSync`.
pub(crate) fn mkdir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)
}

/// `lstat`: the name itself, a link not followed.
pub(crate) fn link_info(path: &Path) -> io::Result<LinkInfo> {
    let m = fs::symlink_metadata(path)?;
    let access = Access { mode: m.mode() & 0o777, uid: m.uid(), gid: m.gid() };
    Ok(LinkInfo { is_file: m.is_file(), is_dir: m.is_dir(), access })
}

/// `fchmod`: the mode exactly, whatever the umask made of it at creation.
pub(crate) fn set_mode(file: &File, access: &Access) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(access.mode))
}

/// `fstat` of an open file: its mode, owner and group.
pub(crate) fn file_access(file: &File) -> io::Result<Access> {
    let m = file.metadata()?;
    Ok(Access { mode: m.mode() & 0o777, uid: m.uid(), gid: m.gid() })
}

/// `fchown` to the owner and group, or to the group alone where only that
/// is allowed (a group the process is in, without being root).
pub(crate) fn set_owner(file: &File, access: &Access) -> io::Result<()> {
    std::os::unix::fs::fchown(file, Some(access.uid), Some(access.gid)).or_else(|_| std::os::unix::fs::fchown(file, None, Some(access.gid)))
}

pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

/// An open directory whose entries are looked up with `fstatat`, without
/// walking the directory's path again for each of them.
pub(crate) struct Dir(File);

impl Dir {
    /// `O_DIRECTORY`: anything else at the path (a FIFO included) is
    /// ENOTDIR, without waiting.
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK).open(path).map(Dir)
    }

    pub(crate) fn stat(&self, name: &str) -> io::Result<FileInfo> {
        let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: the descriptor is open for as long as `self`, the name is
        // NUL-terminated, and `st` is space for one `stat` the call fills.
        if unsafe { libc::fstatat(self.0.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat returned 0, so it wrote the whole struct.
        let st = unsafe { st.assume_init() };
        // The casts are those std's `MetadataExt` makes, so ids compare equal;
        // the field types differ per OS (macOS: i32 st_dev, u16 st_nlink).
        #[allow(clippy::unnecessary_cast)]
        let info = FileInfo {
            id: FileId { volume: st.st_dev as u64, index: st.st_ino as u64 },
            len: st.st_size as u64,
            mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
            links: st.st_nlink as u64,
            is_file: st.st_mode & libc::S_IFMT == libc::S_IFREG,
            is_dir: st.st_mode & libc::S_IFMT == libc::S_IFDIR,
        };
        Ok(info)
    }
}



/// On unix libuv's numbers are the negated errno values.
pub(crate) fn uv_code(raw: i32) -> UvCode {
    match ERRNO_NAMES.iter().find(|(errno, _)| *errno == raw) {
        Some((_, name)) => UvCode::named(name),
        None => UvCode::unknown(-raw),
    }
}

pub(crate) fn uv_errno(name: &str) -> i32 {
    match ERRNO_NAMES.iter().find(|(_, n)| *n == name) {
        Some((errno, _)) => -errno,
        // Names without an errno of their own get libuv's fixed numbers.
        None => match name {
            "EOF" => -4095,
            "ECHARSET" => -4080,
            "EFTYPE" => -4028,
            _ => -4094, // UNKNOWN
        },
    }
}

#[cfg(test)]
pub(crate) fn uv_names() -> impl Iterator<Item = &'static str> {
    ERRNO_NAMES.iter().map(|(_, name)| *name)
}

/// The errno values with a name in libuv's map on this OS.
const ERRNO_NAMES: &[(i32, &str)] = &[
    (libc::E2BIG, "E2BIG"),
    (libc::EACCES, "EACCES"),
    (libc::EADDRINUSE, "EADDRINUSE"),
    (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
    (libc::EAFNOSUPPORT, "EAFNOSUPPORT"),
    (libc::EAGAIN, "EAGAIN"),
    (libc::EALREADY, "EALREADY"),
    (libc::EBADF, "EBADF"),
    (libc::EBUSY, "EBUSY"),
    (libc::ECANCELED, "ECANCELED"),
    (libc::ECONNABORTED, "ECONNABORTED"),
    (libc::ECONNREFUSED, "ECONNREFUSED"),
    (libc::ECONNRESET, "ECONNRESET"),
    (libc::EDESTADDRREQ, "EDESTADDRREQ"),
    (libc::EEXIST, "EEXIST"),
    (libc::EFAULT, "EFAULT"),
    (libc::EFBIG, "EFBIG"),
    (libc::EHOSTUNREACH, "EHOSTUNREACH"),
    (libc::EINTR, "EINTR"),
    (libc::EINVAL, "EINVAL"),
    (libc::EIO, "EIO"),
    (libc::EISCONN, "EISCONN"),
    (libc::EISDIR, "EISDIR"),
    (libc::ELOOP, "ELOOP"),
    (libc::EMFILE, "EMFILE"),
    (libc::EMSGSIZE, "EMSGSIZE"),
    (libc::ENAMETOOLONG, "ENAMETOOLONG"),
    (libc::ENETDOWN, "ENETDOWN"),
    (libc::ENETUNREACH, "ENETUNREACH"),
    (libc::ENFILE, "ENFILE"),
    (libc::ENOBUFS, "ENOBUFS"),
    (libc::ENODEV, "ENODEV"),
    (libc::ENOENT, "ENOENT"),
    (libc::ENOMEM, "ENOMEM"),
    #[cfg(target_os = "linux")]
    (libc::ENONET, "ENONET"),
    (libc::ENOPROTOOPT, "ENOPROTOOPT"),
    (libc::ENOSPC, "ENOSPC"),
    (libc::ENOSYS, "ENOSYS"),
    (libc::ENOTCONN, "ENOTCONN"),
    (libc::ENOTDIR, "ENOTDIR"),
    (libc::ENOTEMPTY, "ENOTEMPTY"),
    (libc::ENOTSOCK, "ENOTSOCK"),
    (libc::ENOTSUP, "ENOTSUP"),
    (libc::EOVERFLOW, "EOVERFLOW"),
    (libc::EPERM, "EPERM"),
    (libc::EPIPE, "EPIPE"),
    (libc::EPROTO, "EPROTO"),
    (libc::EPROTONOSUPPORT, "EPROTONOSUPPORT"),
    (libc::EPROTOTYPE, "EPROTOTYPE"),
    (libc::ERANGE, "ERANGE"),
    (libc::EROFS, "EROFS"),
    (libc::ESHUTDOWN, "ESHUTDOWN"),
    (libc::ESPIPE, "ESPIPE"),
    (libc::ESRCH, "ESRCH"),
    (libc::ETIMEDOUT, "ETIMEDOUT"),
    (libc::ETXTBSY, "ETXTBSY"),
    (libc::EXDEV, "EXDEV"),
    (libc::ENXIO, "ENXIO"),
    (libc::EMLINK, "EMLINK"),
    (libc::EHOSTDOWN, "EHOSTDOWN"),
    #[cfg(target_os = "linux")]
    (libc::EREMOTEIO, "EREMOTEIO"),
    (libc::ENOTTY, "ENOTTY"),
    #[cfg(target_os = "macos")]
    (libc::EFTYPE, "EFTYPE"),
    (libc::EILSEQ, "EILSEQ"),
    (libc::ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"),
    (libc::ENODATA, "ENODATA"),
    #[cfg(target_os = "linux")]
    (libc::EUNATCH, "EUNATCH"),
    (libc::ENOEXEC, "ENOEXEC"),
];

#[cfg(test)]
mod tests {
}
