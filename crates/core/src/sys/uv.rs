//! Errors as Node names them: libuv's code names and messages.
//!
//! Node builds an fs error from the libuv error number alone: `code` is
//! `uv_err_name(errno)`, the message text `uv_strerror(errno)`. Each OS module
//! says which libuv name a system error has (on unix the errno itself, on
//! Windows what `uv_translate_sys_error` makes of a Win32 code) and which
//! number libuv gives that name there; the texts are the same everywhere.

use std::borrow::Cow;
use std::fmt;
use std::io;

use super::os;

/// How Node names one OS error: libuv's code, number and text, the three
/// fields an [`FsError`](super::FsError) shows. A description of an error,
/// not an error: nothing returns it as one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UvCode {
    /// `'ENOENT'`, or libuv's `Unknown system error -N` for numbers it has no
    /// name for (Node 22 and later put that text in `code` as is).
    pub code: Cow<'static, str>,
    /// Negative, as libuv numbers errors (`-2` for ENOENT on Linux, `-4058` on
    /// Windows).
    pub errno: i32,
    pub description: Cow<'static, str>,
}

impl UvCode {
    /// The error an `io::Error` stands for: its OS code when it has one,
    /// otherwise the name that fits its kind (errors made in Rust, such as a
    /// lock wait that ran out).
    pub(crate) fn of(err: &io::Error) -> UvCode {
        if let Some(code) = err.get_ref().and_then(|e| e.downcast_ref::<NodeCode>()) {
            return UvCode::named(code.0);
        }
        match err.raw_os_error() {
            Some(raw) => os::uv_code(raw),
            None => UvCode::named(name_for_kind(err.kind())),
        }
    }

    /// A libuv error by name, numbered as libuv numbers it on this OS.
    pub(crate) fn named(name: &'static str) -> UvCode {
        UvCode {
            code: Cow::Borrowed(name),
            errno: os::uv_errno(name),
            description: Cow::Borrowed(message(name).unwrap_or("unknown error")),
        }
    }

    /// An errno libuv has no name for: `uv_err_name` and `uv_strerror` both
    /// answer `Unknown system error N`.
    #[cfg(unix)]
    pub(crate) fn unknown(errno: i32) -> UvCode {
        let text = format!("Unknown system error {errno}");
        UvCode { code: Cow::Owned(text.clone()), errno, description: Cow::Owned(text) }
    }
}

fn name_for_kind(kind: io::ErrorKind) -> &'static str {
    use io::ErrorKind as K;
    match kind {
        K::NotFound => "ENOENT",
        K::PermissionDenied => "EACCES",
        K::AlreadyExists => "EEXIST",
        K::WouldBlock => "EAGAIN",
        K::InvalidInput | K::InvalidData => "EINVAL",
        K::TimedOut => "ETIMEDOUT",
        K::Interrupted => "EINTR",
        K::Unsupported => "ENOTSUP",
        K::OutOfMemory => "ENOMEM",
        _ => "EIO",
    }
}

/// An error the OS has no number for, made here under the name libuv (and
/// so Node) gives it: `EFTYPE` for a FIFO or device where a regular file
/// belongs, `EISDIR` for a directory there, `EFBIG` for a file past what is
/// read whole. Node reports it with libuv's number and text for that name.
pub(crate) fn node_error(name: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NodeCode(name))
}

#[derive(Debug)]
pub(crate) struct NodeCode(pub(crate) &'static str);

impl fmt::Display for NodeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(message(self.0).unwrap_or(self.0))
    }
}

impl std::error::Error for NodeCode {}

/// `uv_strerror` for each name of libuv's `UV_ERRNO_MAP` (the `EAI_*` resolver
/// errors left out: no file operation reports them).
pub(crate) fn message(name: &str) -> Option<&'static str> {
    MESSAGES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

const MESSAGES: &[(&str, &str)] = &[
    ("E2BIG", "argument list too long"),
    ("EACCES", "permission denied"),
    ("EADDRINUSE", "address already in use"),
    ("EADDRNOTAVAIL", "address not available"),
    ("EAFNOSUPPORT", "address family not supported"),
    ("EAGAIN", "resource temporarily unavailable"),
    ("EALREADY", "connection already in progress"),
    ("EBADF", "bad file descriptor"),
    ("EBUSY", "resource busy or locked"),
    ("ECANCELED", "operation canceled"),
    ("ECHARSET", "invalid Unicode character"),
    ("ECONNABORTED", "software caused connection abort"),
    ("ECONNREFUSED", "connection refused"),
    ("ECONNRESET", "connection reset by peer"),
    ("EDESTADDRREQ", "destination address required"),
    ("EEXIST", "file already exists"),
    ("EFAULT", "bad address in system call argument"),
    ("EFBIG", "file too large"),
    ("EHOSTUNREACH", "host is unreachable"),
    ("EINTR", "interrupted system call"),
    ("EINVAL", "invalid argument"),
    ("EIO", "i/o error"),
    ("EISCONN", "socket is already connected"),
    ("EISDIR", "illegal operation on a directory"),
    ("ELOOP", "too many symbolic links encountered"),
    ("EMFILE", "too many open files"),
    ("EMSGSIZE", "message too long"),
    ("ENAMETOOLONG", "name too long"),
    ("ENETDOWN", "network is down"),
    ("ENETUNREACH", "network is unreachable"),
    ("ENFILE", "file table overflow"),
    ("ENOBUFS", "no buffer space available"),
    ("ENODEV", "no such device"),
    ("ENOENT", "no such file or directory"),
    ("ENOMEM", "not enough memory"),
    ("ENONET", "machine is not on the network"),
    ("ENOPROTOOPT", "protocol not available"),
    ("ENOSPC", "no space left on device"),
    ("ENOSYS", "function not implemented"),
    ("ENOTCONN", "socket is not connected"),
    ("ENOTDIR", "not a directory"),
    ("ENOTEMPTY", "directory not empty"),
    ("ENOTSOCK", "socket operation on non-socket"),
    ("ENOTSUP", "operation not supported on socket"),
    ("EOVERFLOW", "value too large for defined data type"),
    ("EPERM", "operation not permitted"),
    ("EPIPE", "broken pipe"),
    ("EPROTO", "protocol error"),
    ("EPROTONOSUPPORT", "protocol not supported"),
    ("EPROTOTYPE", "protocol wrong type for socket"),
    ("ERANGE", "result too large"),
    ("EROFS", "read-only file system"),
    ("ESHUTDOWN", "cannot send after transport endpoint shutdown"),
    ("ESPIPE", "invalid seek"),
    ("ESRCH", "no such process"),
    ("ETIMEDOUT", "connection timed out"),
    ("ETXTBSY", "text file is busy"),
    ("EXDEV", "cross-device link not permitted"),
    ("UNKNOWN", "unknown error"),
    ("EOF", "end of file"),
    ("ENXIO", "no such device or address"),
    ("EMLINK", "too many links"),
    ("EHOSTDOWN", "host is down"),
    ("EREMOTEIO", "remote I/O error"),
    ("ENOTTY", "inappropriate ioctl for device"),
    ("EFTYPE", "inappropriate file type or format"),
    ("EILSEQ", "illegal byte sequence"),
    ("ESOCKTNOSUPPORT", "socket type not supported"),
    ("ENODATA", "no data available"),
    ("EUNATCH", "protocol driver not attached"),
    ("ENOEXEC", "exec format error"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sys_uv_names_are_unique_and_every_os_name_has_a_message() {
        for (i, (name, _)) in MESSAGES.iter().enumerate() {
            assert!(MESSAGES[i + 1..].iter().all(|(n, _)| n != name), "{name} twice");
        }
        for name in os::uv_names() {
            assert!(message(name).is_some(), "{name} has no message");
        }
    }

    #[test]
    fn sys_uv_errors_made_in_rust_get_a_name_by_kind() {
        let timed_out = UvCode::of(&io::Error::from(io::ErrorKind::TimedOut));
        assert_eq!((timed_out.code.as_ref(), timed_out.description.as_ref()), ("ETIMEDOUT", "connection timed out"));
        let zero = UvCode::of(&io::Error::from(io::ErrorKind::WriteZero));
        assert_eq!(zero.code, "EIO");
        assert_eq!(zero, UvCode::named("EIO"));
    }

    /// Node's own error map (errno -> [name, message]) for every errno this
    /// OS has below 150: same name, number and text, or libuv's "Unknown
    /// system error" where Node's map has no entry. The table is libuv 1.51's
    /// (Node 22.23); ENOEXEC joined it in libuv 1.50, so an older Node calls
    /// that errno unknown.
    #[test]
    #[cfg(unix)]
    fn sys_uv_errors_match_node() {
        use crate::js::Value;
        let script = "const m=require('util').getSystemErrorMap();const o={};\
            for(let e=1;e<150;e++){const v=m.get(-e);o[e]=v?v:null}\
            const [a,b]=process.versions.uv.split('.').map(Number);\
            console.log(JSON.stringify({o,enoexec:a>1||b>=50}))";
        let Some(theirs) = super::super::node_eval_json(script, &[]) else { return };
        let node_knows_enoexec = matches!(theirs.get("enoexec"), Value::Bool(true));
        for errno in 1..150 {
            let ours = os::uv_code(errno);
            assert_eq!(ours.errno, -errno);
            match theirs.get("o").get(&errno.to_string()) {
                Value::Null if ours.code == "ENOEXEC" && !node_knows_enoexec => {}
                Value::Null => assert_eq!(ours, UvCode::unknown(-errno), "errno {errno}"),
                entry => {
                    let [name, text] = &super::super::strings_of(entry)[..] else { panic!("errno {errno}: {entry:?}") };
                    assert_eq!((ours.code.as_ref(), ours.description.as_ref()), (name.as_str(), text.as_str()), "errno {errno}")
                }
            }
        }
    }
}
