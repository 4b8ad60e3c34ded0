//! Linux: `/proc` for process identity, name exchange for replacing files.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub(crate) use super::unix::*;

/// glibc's `malloc_trim`, which releases free pages anywhere in its heaps,
/// not only at their tops; musl's allocator returns them as it frees.
pub(crate) fn return_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only walks the allocator's own free lists, under its locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Field 22 of `/proc/<pid>/stat`: clock ticks from boot to the start.
///
/// The path goes through `/proc/./` so that qemu-user passes the read to the
/// kernel: it answers a process's reads of its own `/proc/self/stat` and
/// `/proc/<own pid>/stat` itself, with a start time of its own making (often
/// a tick off the kernel's), while every other process reads the kernel's.
/// An emulated lock owner would otherwise record a start time that the next
/// contender takes for a reused pid, and take a live lock.
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/./{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and ')', so count fields
    // from the last ')'; the first field after it is field 3.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    rest.split_ascii_whitespace().nth(22 - 3)?.parse().ok()
}

/// The kernel's random id of this boot.
pub(crate) fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = text.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// Replaces `to` by `from`, atomically for readers, as `rename(2)` does,
/// for about a tenth of its cost on ext4. A `rename` over an existing file
/// makes ext4 start writing the new file's data out at once (its
/// `auto_da_alloc` guard for programs that skip `fsync`), and the append
/// waits on that. Exchanging the two names (`renameat2(RENAME_EXCHANGE)`)
/// is just as atomic (`to` names the old file, then the new one, never
/// nothing), and the old file, now at `from`, is then removed; should that
/// fail, it stays there, unlocked, for a sweep to remove. A directory found
/// at `to` is put back (unlink refuses it: `EISDIR`), as `rename` refuses to
/// replace one. Wherever the exchange is refused for any reason that means
/// "not here" (no file at `to` yet; a kernel, file system or seccomp
/// profile without it: `EINVAL`, `ENOSYS`, `EOPNOTSUPP`, `EPERM`) this is a
/// plain `rename`, which then answers for itself. The call goes through
/// `syscall(2)`: glibc's `renameat2` wrapper is newer than the glibc the
/// binaries support.
pub(crate) fn replace(from: &Path, to: &Path) -> io::Result<()> {
    match super::call("renameat2", || exchange(from, to)) {
        Ok(()) => {}
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINVAL | libc::ENOSYS | libc::EPERM | libc::EOPNOTSUPP)) => {
            return super::call("rename", || rename(from, to));
        }
        Err(e) => return Err(e),
    }
    match super::call("unlink", || remove_file(from)) {
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
            let _ = exchange(from, to);
            Err(e)
        }
        _ => Ok(()),
    }
}

fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    let a = CString::new(a.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: two NUL-terminated paths that outlive the call, relative to
    // the working directory (AT_FDCWD) only when not absolute, as rename's.
    let rc = unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
