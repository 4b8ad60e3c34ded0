//! Linux: `/proc` for process identity, write leases for in-place rewrites.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

pub(crate) use super::unix::*;

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

/// `F_SETSIG`, which the libc crate exports only for some architectures.
const F_SETSIG: libc::c_int = 10;

pub(crate) fn write_lease(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // A reader opening the file during the lease makes the kernel signal the
    // holder: SIGIO by default, which would end Node. SIGURG is ignored by
    // default, so the notice is harmless; the release follows anyway. It is
    // set before every lease because a release resets it to SIGIO.
    // SAFETY: fcntl with integer arguments on a descriptor `file` keeps open.
    if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(crate) fn release_lease(file: &File) {
    // SAFETY: as in `write_lease`. Should the release fail, the lease ends
    // with the file's last close, and a reader waits at most until then.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
}

