//! Entry points for the fuzz targets in `fuzz/`: the readers of untrusted
//! bytes that are private to their modules, wrapped so the rest stays private.
//! Built only with the `fuzzing` feature.

use std::path::Path;

use crate::lock::record;
use crate::project::{pnpm, workspace};

/// A lock record as the staleness checks see it (see `lock::record::Held`).
#[derive(Debug, PartialEq)]
pub struct HeldLock {
    pub pid: Option<f64>,
    pub token: Option<String>,
    pub start_time: Option<f64>,
    pub boot_id: Option<String>,
}

impl From<record::Held> for HeldLock {
    fn from(h: record::Held) -> HeldLock {
        HeldLock { pid: h.pid, token: h.token, start_time: h.start_time, boot_id: h.boot_id }
    }
}

/// A lock file's text as `JSON.parse` plus property access reads it.
pub fn parse_lock_record(text: &str) -> Option<HeldLock> {
    record::parse_held(text).map(HeldLock::from)
}

/// A lock file read from disk, as a sweeper reads it.
pub fn read_lock_record(path: &Path) -> Option<HeldLock> {
    record::read_held(path).map(HeldLock::from)
}

/// The `packages` of a `pnpm-workspace.yaml` text.
pub fn pnpm_packages(text: &str) -> Vec<String> {
    pnpm::pnpm_packages(text)
}

/// Whether one pattern segment matches one path segment (UTF-16 units).
pub fn segment_matches(pattern: &[u16], name: &[u16]) -> bool {
    workspace::segment_matches(pattern, name)
}

/// Whether a raw workspace pattern (before normalizing) covers a path given
/// as its segments.
pub fn pattern_covers(raw_pattern: &[u16], rel: &[Vec<u16>]) -> bool {
    workspace::pattern_covers(&workspace::segments(workspace::normalize_pattern(raw_pattern)), rel)
}
