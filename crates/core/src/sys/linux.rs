//! Linux: `/proc` for process identity.

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
