//! File-system errors that read like Node's own.
//!
//! The old module let `fs` errors escape unchanged, so callers (and their
//! tests) see `EACCES: permission denied, open '/p/x.jsonl'` with `code`,
//! `errno`, `syscall` and `path`. [`FsError`] keeps the `io::Error` itself
//! (its `raw_os_error()` included) with the syscall and the path, and derives
//! Node's code, number and text from the OS error as libuv does on the OS at
//! hand (see `sys/uv.rs`).

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::uv::UvCode;

#[derive(Debug)]
pub struct FsError {
    syscall: &'static str,
    path: PathBuf,
    source: io::Error,
}

impl FsError {
    /// `syscall` is named as Node names it (`"open"`, `"rename"`, `"scandir"`).
    pub fn new(source: io::Error, syscall: &'static str, path: &Path) -> FsError {
        FsError { syscall, path: path.to_path_buf(), source }
    }

    /// Node's `code`: `'ENOENT'`, `'EBUSY'`...
    pub fn code(&self) -> Cow<'static, str> {
        self.uv().code
    }

    /// Node's `errno`: libuv's negative number for the code on this OS.
    pub fn errno(&self) -> i32 {
        self.uv().errno
    }

    /// The text after the code in the message (`permission denied`).
    pub fn description(&self) -> Cow<'static, str> {
        self.uv().description
    }

    pub fn syscall(&self) -> &'static str {
        self.syscall
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn io_error(&self) -> &io::Error {
        &self.source
    }

    pub fn is_not_found(&self) -> bool {
        self.code() == "ENOENT"
    }

    /// A wait for a lock that ran out (see `sys::lock_exclusive`).
    pub fn is_timed_out(&self) -> bool {
        self.source.kind() == io::ErrorKind::TimedOut
    }

    fn uv(&self) -> UvCode {
        UvCode::of(&self.source)
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let uv = self.uv();
        write!(f, "{}: {}, {} '{}'", uv.code, uv.description, self.syscall, self.path.display())
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Attaches the syscall and path to an `io::Result`.
pub trait Context<T> {
    fn at(self, syscall: &'static str, path: &Path) -> Result<T, FsError>;
}

impl<T> Context<T> for io::Result<T> {
    fn at(self, syscall: &'static str, path: &Path) -> Result<T, FsError> {
        self.map_err(|e| FsError::new(e, syscall, path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn renders_like_node() {
        let e = FsError::new(io::Error::from_raw_os_error(libc::EACCES), "open", Path::new("/x/a.jsonl"));
        assert_eq!(e.to_string(), "EACCES: permission denied, open '/x/a.jsonl'");
        assert_eq!((e.code().as_ref(), e.errno(), e.syscall()), ("EACCES", -13, "open"));
        assert_eq!(e.io_error().raw_os_error(), Some(libc::EACCES));
        assert!(!e.is_not_found());
    }

    /// An errno libuv has no name for reads as Node 22+ throws it.
    #[test]
    #[cfg(target_os = "linux")]
    fn unnamed_errno_renders_as_libuv_does() {
        let e = FsError::new(io::Error::from_raw_os_error(libc::EDQUOT), "write", Path::new("/p"));
        assert_eq!(e.to_string(), "Unknown system error -122: Unknown system error -122, write '/p'");
        assert_eq!(e.errno(), -122);
    }

    #[test]
    fn the_io_error_is_kept() {
        let e: Result<(), FsError> = Err(io::Error::from(io::ErrorKind::NotFound)).at("stat", Path::new("p"));
        let e = e.expect_err("error");
        assert!(e.is_not_found());
        assert_eq!(e.io_error().kind(), io::ErrorKind::NotFound);
        assert_eq!(e.path(), Path::new("p"));
        assert!(std::error::Error::source(&e).is_some());
    }
}
