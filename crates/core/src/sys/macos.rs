//! macOS: `proc_pidinfo` and `sysctl` for process identity.

pub(crate) use super::unix::*;

/// `rename(2)`.
pub(crate) fn replace(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    super::call("rename", || rename(from, to))
}

/// macOS's allocator returns free pages to the OS as it frees them.
pub(crate) fn return_free_memory() {}

/// The start time the kernel keeps for the process (`PROC_PIDTBSDINFO`),
/// in microseconds since the epoch: fixed for the life of the process.
/// `None` for a process of another user (the call is refused unless we are
/// root), so a lock held by one is never judged reused.
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let pid = libc::c_int::try_from(pid).ok()?;
    let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::uninit();
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is space for one proc_bsdinfo and `size` says so; the
    // call writes at most that many bytes and returns how many it wrote.
    let written = unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, info.as_mut_ptr().cast(), size) };
    if written != size {
        return None;
    }
    // SAFETY: the call filled all `size` bytes.
    let info = unsafe { info.assume_init() };
    Some(info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec)
}

/// `kern.bootsessionuuid`, a random id the kernel draws at each boot.
/// (`kern.boottime` would not do: the kernel moves it when the clock is set,
/// so one boot could look like two and a live holder's lock be swept.)
pub(crate) fn boot_id() -> Option<String> {
    let mut buf = [0u8; 64];
    let mut len = buf.len();
    // SAFETY: the name is NUL-terminated, `buf` has `len` bytes of room, and
    // no new value is passed.
    let rc = unsafe {
        libc::sysctlbyname(c"kern.bootsessionuuid".as_ptr(), buf.as_mut_ptr().cast(), &mut len, std::ptr::null_mut(), 0)
    };
    if rc != 0 {
        return None;
    }
    let text = std::str::from_utf8(&buf[..len.min(buf.len())]).ok()?;
    let id = text.trim_end_matches('\0').trim();
    (!id.is_empty()).then(|| id.to_string())
}
