//! File-system errors that read like Node's own.
//!
//! The old module let `fs` errors escape unchanged, so callers (and their
//! tests) see `EACCES: permission denied, open '/p/x.jsonl'` with `code`,
//! `errno`, `syscall` and `path`. Every error here carries the path it
//! concerns and renders in that same shape.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct FsError {
    pub code: String,
    /// Negative, as libuv reports it (`-13` for EACCES).
    pub errno: i32,
    pub syscall: &'static str,
    pub path: PathBuf,
    pub description: String,
}

impl FsError {
    pub fn new(err: &io::Error, syscall: &'static str, path: &Path) -> FsError {
        let raw = err.raw_os_error().unwrap_or(libc::EIO);
        let (code, description) = describe(raw);
        FsError { code, errno: -raw, syscall, path: path.to_path_buf(), description }
    }

    pub fn is_not_found(&self) -> bool {
        self.code == "ENOENT"
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}, {} '{}'", self.code, self.description, self.syscall, self.path.display())
    }
}

impl std::error::Error for FsError {}

/// Attaches the syscall and path to an `io::Result`.
pub trait Context<T> {
    fn at(self, syscall: &'static str, path: &Path) -> Result<T, FsError>;
}

impl<T> Context<T> for io::Result<T> {
    fn at(self, syscall: &'static str, path: &Path) -> Result<T, FsError> {
        self.map_err(|e| FsError::new(&e, syscall, path))
    }
}

/// libuv's names and texts for the errors a store meets.
fn describe(raw: i32) -> (String, String) {
    let known = match raw {
        libc::ENOENT => Some(("ENOENT", "no such file or directory")),
        libc::EACCES => Some(("EACCES", "permission denied")),
        libc::EPERM => Some(("EPERM", "operation not permitted")),
        libc::EEXIST => Some(("EEXIST", "file already exists")),
        libc::EISDIR => Some(("EISDIR", "illegal operation on a directory")),
        libc::ENOTDIR => Some(("ENOTDIR", "not a directory")),
        libc::ENOSPC => Some(("ENOSPC", "no space left on device")),
        libc::EROFS => Some(("EROFS", "read-only file system")),
        libc::EDQUOT => Some(("EDQUOT", "disk quota exceeded")),
        libc::EIO => Some(("EIO", "i/o error")),
        libc::EMFILE => Some(("EMFILE", "too many open files")),
        libc::ENAMETOOLONG => Some(("ENAMETOOLONG", "name too long")),
        libc::ELOOP => Some(("ELOOP", "too many symbolic links encountered")),
        libc::EBUSY => Some(("EBUSY", "resource busy or locked")),
        libc::EINVAL => Some(("EINVAL", "invalid argument")),
        libc::EFBIG => Some(("EFBIG", "file too large")),
        _ => None,
    };
    match known {
        Some((c, d)) => (c.to_owned(), d.to_owned()),
        None => (format!("E{}", raw), io::Error::from_raw_os_error(raw).to_string().to_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_node() {
        let e = FsError::new(&io::Error::from_raw_os_error(libc::EACCES), "open", Path::new("/x/a.jsonl"));
        assert_eq!(e.to_string(), "EACCES: permission denied, open '/x/a.jsonl'");
        assert_eq!(e.errno, -13);
    }
}
