//! Cross-process source lock (core, napi-free).
//!
//! One lock file per source file, created with O_EXCL and holding a one-line
//! JSON record. Files written here are readable by the old JS module and vice
//! versa: the record starts with the keys the JS writes, in its order, and the
//! two extra keys (`startTime`, `bootId`) are ones the JS never looks at.
//!
//! A lock is stale when its owner is gone, never merely because it is old;
//! only a lock whose content cannot be read falls back to an age limit. The
//! JS-visible decisions (what counts as readable, which pid is alive) follow
//! what `JSON.parse` and `process.kill(pid, 0)` do, so both implementations
//! judge a shared lock directory the same way.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::sys;

/// Age after which a lock we cannot read is presumed abandoned by a crash
/// mid-write (a readable lock is judged by its owner's liveness instead).
const UNREADABLE_STALE_MS: f64 = 60_000.0;

/// Hex digits of the path digest used as the lock file's name.
const DIGEST_HEX_LEN: usize = 24;

/// `<live_dir>/locks/<first 24 hex of sha256(abs_file)>.lock`.
pub fn lock_path(live_dir: &Path, abs_file: &str) -> PathBuf {
    let digest = Sha256::digest(abs_file.as_bytes());
    let mut name = String::with_capacity(DIGEST_HEX_LEN + 5);
    for byte in &digest[..DIGEST_HEX_LEN / 2] {
        name.push(hex_digit(byte >> 4));
        name.push(hex_digit(byte & 0xf));
    }
    name.push_str(".lock");
    live_dir.join("locks").join(name)
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(nibble & 0xf)])
}

// ---------------------------------------------------------------------------
// Errors

#[derive(Debug)]
pub enum LockError {
    /// The lock stayed held until the deadline (JS: `code: 'SOURCE_LOCKED'`).
    Locked { lock_path: PathBuf },
    /// A filesystem operation failed; `op` is named like Node's `syscall`.
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

impl LockError {
    fn io(op: &'static str, path: &Path, source: io::Error) -> Self {
        LockError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Locked { .. } => f.write_str("source_locked"),
            LockError::Io { op, path, source } => write!(f, "{op} {}: {source}", path.display()),
        }
    }
}

impl std::error::Error for LockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockError::Locked { .. } => None,
            LockError::Io { source, .. } => Some(source),
        }
    }
}

// ---------------------------------------------------------------------------
// The record

/// The content of a lock file.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRecord {
    /// The owner as JSON text (already `JSON.stringify`-ed); `None` omits the
    /// key, as `JSON.stringify` does for `undefined`.
    pub owner_json: Option<String>,
    pub token: String,
    pub pid: u32,
    /// Milliseconds since the epoch (`Date.now()`).
    pub at: i64,
    pub file: String,
    /// Owner's start time in clock ticks since boot, for pid-reuse detection.
    pub start_time: Option<u64>,
    pub boot_id: Option<String>,
}

impl LockRecord {
    /// A fresh record for this process, with a new random token.
    pub fn for_this_process(owner_json: Option<&str>, abs_file: &str) -> Self {
        let me = own_identity();
        LockRecord {
            owner_json: owner_json.map(str::to_string),
            token: uuid::Uuid::new_v4().to_string(),
            pid: std::process::id(),
            at: sys::now_ms() as i64,
            file: abs_file.to_string(),
            start_time: me.start_time,
            boot_id: me.boot_id.clone(),
        }
    }

    /// `JSON.stringify({ owner, token, pid, at, file }) + "\n"`, with
    /// `startTime` and `bootId` appended inside the object when known.
    pub fn to_json_line(&self) -> String {
        let mut out = String::from("{");
        if let Some(owner) = &self.owner_json {
            out.push_str("\"owner\":");
            out.push_str(owner);
            out.push(',');
        }
        out.push_str("\"token\":");
        out.push_str(&json_string(&self.token));
        out.push_str(&format!(
            ",\"pid\":{},\"at\":{},\"file\":",
            self.pid, self.at
        ));
        out.push_str(&json_string(&self.file));
        if let Some(ticks) = self.start_time {
            out.push_str(&format!(",\"startTime\":{ticks}"));
        }
        if let Some(id) = &self.boot_id {
            out.push_str(",\"bootId\":");
            out.push_str(&json_string(id));
        }
        out.push_str("}\n");
        out
    }
}

/// `JSON.stringify(s)`.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::js::json::write_string(&mut out, &crate::js::JsStr::from(s));
    out
}

struct Identity {
    start_time: Option<u64>,
    boot_id: Option<String>,
}

/// Our own start time and boot id never change, so read /proc only once.
fn own_identity() -> &'static Identity {
    static ME: OnceLock<Identity> = OnceLock::new();
    ME.get_or_init(|| Identity {
        start_time: sys::process_start_time(std::process::id()),
        boot_id: sys::boot_id(),
    })
}

// ---------------------------------------------------------------------------
// Acquire / release

/// A lock this process created; pass it to [`release`] when done. Dropping it
/// does not release (release must happen exactly once, after the critical
/// section, and re-checks the token).
#[derive(Debug, Clone)]
pub struct Acquired {
    pub lock_path: PathBuf,
    pub token: String,
}

/// One attempt: creates `locks/`, clears a stale lock, then creates the lock
/// exclusively. `Ok(None)` when another holder has it.
pub fn try_acquire(
    path: &Path,
    owner_json: Option<&str>,
    abs_file: &str,
) -> Result<Option<Acquired>, LockError> {
    let record = LockRecord::for_this_process(owner_json, abs_file);
    let line = record.to_json_line();
    // The uncontended case first: one exclusive create. Equivalent to the JS
    // order (sweep, then create) because with no lock file there is nothing
    // to sweep; a missing `locks/` or a present lock takes the longer way.
    let created = match create_exclusive(path, &line) {
        Err(LockError::Io { source, .. })
            if matches!(source.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) =>
        {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(|e| LockError::io("mkdir", dir, e))?;
            }
            create_exclusive(path, &line)?
        }
        Ok(false) => {
            clear_stale(path);
            create_exclusive(path, &line)?
        }
        other => other?,
    };
    if !created {
        return Ok(None);
    }
    Ok(Some(Acquired {
        lock_path: path.to_path_buf(),
        token: record.token,
    }))
}

/// Writes `line` into a newly created file; `Ok(false)` if it already exists.
fn create_exclusive(path: &Path, line: &str) -> Result<bool, LockError> {
    let mut file = match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(LockError::io("open", path, e)),
    };
    // One write keeps the create-to-content window (where others see an
    // unreadable lock) as short as possible.
    if let Err(e) = file.write_all(line.as_bytes()) {
        drop(file);
        // The file is ours and empty or partial; leaving it would block the
        // source for a minute (the JS module leaves it; removing is strictly
        // better and invisible to it).
        let _ = fs::remove_file(path);
        return Err(LockError::io("write", path, e));
    }
    Ok(true)
}

/// Polls like the JS module: `wait_ms` / `retry_ms` are `Number(x)` values;
/// NaN or 0 fall back as `|| 0` / `|| 5` would.
pub fn acquire(
    path: &Path,
    owner_json: Option<&str>,
    abs_file: &str,
    wait_ms: f64,
    retry_ms: f64,
) -> Result<Acquired, LockError> {
    let deadline = sys::now_ms() + js_or(wait_ms, 0.0).max(0.0);
    let retry = js_or(retry_ms, 5.0);
    loop {
        if let Some(acquired) = try_acquire(path, owner_json, abs_file)? {
            return Ok(acquired);
        }
        let now = sys::now_ms();
        if now >= deadline {
            return Err(LockError::Locked {
                lock_path: path.to_path_buf(),
            });
        }
        sys::sleep_ms(retry.min(deadline - now).max(1.0));
    }
}

/// JS `x || fallback` for a number (0, -0 and NaN are falsy).
fn js_or(x: f64, fallback: f64) -> f64 {
    if x == 0.0 || x.is_nan() {
        fallback
    } else {
        x
    }
}

/// Removes the lock unless it now carries another acquisition's token: if a
/// sweeper took ours and someone else re-created it, unlinking would end
/// their critical section. Unreadable content is removed (as in the JS).
pub fn release(acquired: &Acquired) {
    if let Some(held) = read_held(&acquired.lock_path) {
        if held.token.as_deref() != Some(acquired.token.as_str()) {
            return;
        }
    }
    let _ = fs::remove_file(&acquired.lock_path);
}

// ---------------------------------------------------------------------------
// Staleness

/// Removes the lock at `path` if its owner is gone; never fails (a lock we
/// cannot judge is left for the exclusive create to report as held).
fn clear_stale(path: &Path) {
    // Nothing there (the common case): one syscall and done.
    let Some(judged) = entry_stamp(path) else {
        return;
    };
    let stale = match read_held(path) {
        Some(held) => !owner_alive(&held),
        None => unreadable_and_old(path),
    };
    // Another contender may have cleared the same stale lock and created its
    // own meanwhile; unlinking that would admit two writers. Only unlink the
    // file we judged (the JS module has this race in full; this narrows it
    // to the gap between two syscalls).
    if stale && entry_stamp(path) == Some(judged) {
        let _ = fs::remove_file(path);
    }
}

/// Tells one file at `path` from a later one: inode, plus change time in
/// case the inode number was recycled.
#[cfg(unix)]
fn entry_stamp(path: &Path) -> Option<(u64, u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
}

#[cfg(not(unix))]
fn entry_stamp(path: &Path) -> Option<(u64, u64, i64, i64)> {
    fs::symlink_metadata(path).ok().map(|_| (0, 0, 0, 0))
}

/// JS: `typeof held.pid === 'number' && isLiveServerPidReachable(held.pid)`,
/// plus the pid-reuse check when the lock records its owner's identity.
fn owner_alive(held: &Held) -> bool {
    match held.pid {
        Some(pid) => sys::pid_is_alive(pid) && !pid_reused(held, pid),
        None => false,
    }
}

/// True only when we can prove the live `pid` is a different process from
/// the one that wrote the lock: written during an earlier boot (every process
/// of that boot is gone), or same boot but another start time. Locks without
/// the identity fields (the JS module's) never qualify.
fn pid_reused(held: &Held, pid: f64) -> bool {
    let (Some(recorded), Some(boot)) = (held.start_time, held.boot_id.as_deref()) else {
        return false;
    };
    let Some(our_boot) = own_identity().boot_id.clone() else { return false };
    if our_boot != boot {
        return true;
    }
    let plausible = recorded >= 0.0 && recorded.fract() == 0.0;
    let in_proc = (1.0..=f64::from(u32::MAX)).contains(&pid);
    if !(plausible && in_proc) {
        return false;
    }
    match sys::process_start_time(pid as u32) {
        Some(current) => current as f64 != recorded,
        None => false,
    }
}

/// An unreadable lock is either a crash's leftover or a live acquisition
/// caught between create and write; only age tells them apart.
fn unreadable_and_old(path: &Path) -> bool {
    let Ok(modified) = fs::metadata(path).and_then(|m| m.modified()) else {
        return false;
    };
    sys::now_ms() - sys::system_time_ms(modified) > UNREADABLE_STALE_MS
}

fn read_held(path: &Path) -> Option<Held> {
    // A lock is one short line: no size probe, just read it.
    let mut bytes = Vec::with_capacity(512);
    sys::read_file_into(path, &mut bytes).ok()?;
    // Node decodes with U+FFFD replacement; invalid bytes outside a string
    // then fail JSON.parse, inside one they only change that string.
    if let Some(held) = parse_held(&String::from_utf8_lossy(&bytes)) {
        return Some(held);
    }
    // Unreadable content gets a lock removed, so make sure it was not a
    // short read: read to the end the ordinary way before saying so.
    bytes = fs::read(path).ok()?;
    parse_held(&String::from_utf8_lossy(&bytes))
}

// ---------------------------------------------------------------------------
// Reading a lock file the way `JSON.parse` + property access sees it

/// The top-level members that matter, each present only with the JS type
/// the checks require (`pid`/`startTime` numbers, `token`/`bootId` strings).
/// For a truthy non-object (`5`, `"x"`, `[]`) all are `None`.
#[derive(Debug, Default, PartialEq)]
struct Held {
    pid: Option<f64>,
    token: Option<String>,
    start_time: Option<f64>,
    boot_id: Option<String>,
}

/// `Some` when `JSON.parse(text)` succeeds with a truthy value, i.e. when the
/// JS treats the lock as readable. Iterative, so nesting depth (an owner may
/// be deep) cannot overflow the stack, and with no depth limit, like V8.
fn parse_held(text: &str) -> Option<Held> {
    let mut scan = Scan { text, i: 0 };
    let mut stack: Vec<Frame> = Vec::new();
    let mut held = Held::default();
    let mut member = Member::Other;
    let mut truthy = false;
    let mut next = Next::Value;
    loop {
        scan.ws();
        next = match next {
            Next::Key => {
                let key = scan.string()?;
                scan.ws();
                scan.expect(b':')?;
                if stack.len() == 1 {
                    member = Member::of(&key);
                }
                Next::Value
            }
            Next::Value => {
                let depth = stack.len();
                let (value, next) = scan.value(&mut stack)?;
                if depth == 0 {
                    truthy = value.truthy();
                } else if depth == 1 && stack[0] == Frame::Object {
                    held.set(member, value);
                }
                next
            }
            Next::AfterValue => match stack.last() {
                None => break,
                Some(&frame) => scan.after_value(frame, &mut stack)?,
            },
        };
    }
    scan.ws();
    (scan.i == text.len() && truthy).then_some(held)
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Object,
    Array,
}

#[derive(Clone, Copy)]
enum Next {
    Key,
    Value,
    AfterValue,
}

#[derive(Clone, Copy)]
enum Member {
    Pid,
    Token,
    StartTime,
    BootId,
    Other,
}

impl Member {
    fn of(key: &str) -> Self {
        match key {
            "pid" => Member::Pid,
            "token" => Member::Token,
            "startTime" => Member::StartTime,
            "bootId" => Member::BootId,
            _ => Member::Other,
        }
    }
}

enum Value {
    Number(f64),
    String(String),
    /// true, or any object or array
    Truthy,
    /// false or null
    Falsy,
}

impl Value {
    fn truthy(&self) -> bool {
        match self {
            Value::Number(n) => *n != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Truthy => true,
            Value::Falsy => false,
        }
    }
}

impl Held {
    /// Later duplicates overwrite earlier ones, as in `JSON.parse`.
    fn set(&mut self, member: Member, value: Value) {
        let (num, string) = match value {
            Value::Number(n) => (Some(n), None),
            Value::String(s) => (None, Some(s)),
            _ => (None, None),
        };
        match member {
            Member::Pid => self.pid = num,
            Member::StartTime => self.start_time = num,
            Member::Token => self.token = string,
            Member::BootId => self.boot_id = string,
            Member::Other => {}
        }
    }
}

struct Scan<'a> {
    text: &'a str,
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// JSON whitespace only (not the wider JS set).
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &str) -> bool {
        let found = self.text.as_bytes()[self.i..].starts_with(word.as_bytes());
        if found {
            self.i += word.len();
        }
        found
    }

    /// Parses a value, or opens a non-empty container (pushing its frame);
    /// returns the value's JS truthiness class and what comes next.
    fn value(&mut self, stack: &mut Vec<Frame>) -> Option<(Value, Next)> {
        let (open, close, frame, first) = match self.peek()? {
            b'{' => (b'{', b'}', Frame::Object, Next::Key),
            b'[' => (b'[', b']', Frame::Array, Next::Value),
            _ => return Some((self.scalar()?, Next::AfterValue)),
        };
        self.expect(open)?;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Some((Value::Truthy, Next::AfterValue));
        }
        stack.push(frame);
        Some((Value::Truthy, first))
    }

    fn scalar(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            _ if self.literal("true") => Some(Value::Truthy),
            _ if self.literal("false") || self.literal("null") => Some(Value::Falsy),
            _ => None,
        }
    }

    /// After a value inside `frame`: a comma, or the frame's closer.
    fn after_value(&mut self, frame: Frame, stack: &mut Vec<Frame>) -> Option<Next> {
        match (frame, self.peek()?) {
            (Frame::Object, b',') => self.i += 1,
            (Frame::Array, b',') => {
                self.i += 1;
                return Some(Next::Value);
            }
            (Frame::Object, b'}') | (Frame::Array, b']') => {
                self.i += 1;
                stack.pop();
                return Some(Next::AfterValue);
            }
            _ => return None,
        }
        Some(Next::Key)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// JSON number grammar; the value is the correctly rounded double (Rust's
    /// parser, like V8's, rounds correctly and overflows to ±Infinity).
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            (self.digits() > 0).then_some(())?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            (self.digits() > 0).then_some(())?;
        }
        self.text[start..self.i].parse().ok()
    }

    /// A JSON string, decoded. A lone surrogate escape becomes U+FFFD: such
    /// strings can then collide only with each other, never with the ASCII
    /// keys, tokens and boot ids they are compared against.
    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.i;
            // '"', '\\' and controls are ASCII, so the run ends on a char boundary.
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                _ => return None, // raw control character
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = match self.peek()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.i += 1;
                out.push(self.unicode_escape()?);
                return Some(());
            }
            _ => return None,
        };
        self.i += 1;
        out.push(c);
        Some(())
    }

    /// After `\u`: four hex digits, joined with a following `\uDC00-DFFF`
    /// escape when they are a high surrogate.
    fn unicode_escape(&mut self) -> Option<char> {
        let unit = self.hex4()?;
        if (0xD800..0xDC00).contains(&unit) && self.text.as_bytes()[self.i..].starts_with(b"\\u") {
            let save = self.i;
            self.i += 2;
            match self.hex4() {
                Some(low) if (0xDC00..0xE000).contains(&low) => {
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    return char::from_u32(code);
                }
                // Not a pair: re-read the second escape on its own.
                _ => self.i = save,
            }
        }
        Some(char::from_u32(unit).unwrap_or('\u{FFFD}'))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.as_bytes().get(self.i..self.i + 4)?;
        let mut unit = 0;
        for &d in digits {
            unit = unit * 16 + char::from(d).to_digit(16)?;
        }
        self.i += 4;
        Some(unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    /// A fresh live dir under the system temp dir, removed on drop.
    struct TempLive(PathBuf);

    impl TempLive {
        fn new() -> Self {
            static N: AtomicUsize = AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "lock-test-{}-{n}-{}",
                std::process::id(),
                uuid::Uuid::new_v4()
            ));
            fs::create_dir_all(&dir).expect("temp dir");
            TempLive(dir)
        }

        fn lock(&self, name: &str) -> PathBuf {
            lock_path(&self.0, &format!("/project/{name}"))
        }
    }

    impl Drop for TempLive {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn write_lock(path: &Path, content: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("locks dir");
        fs::write(path, content).expect("write lock");
    }

    fn dead_pid() -> u32 {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        child.wait().expect("wait true");
        pid
    }

    fn must_acquire(path: &Path) -> Acquired {
        match try_acquire(path, None, "/project/f") {
            Ok(Some(acquired)) => acquired,
            other => panic!("expected to acquire {}: {other:?}", path.display()),
        }
    }

    fn is_held(path: &Path) -> bool {
        matches!(try_acquire(path, None, "/project/f"), Ok(None))
    }

    #[test]
    fn lock_path_shape() {
        let p = lock_path(Path::new("/r/.impeccable/live"), "/r/src/a.css");
        let name = p.file_name().and_then(|n| n.to_str()).expect("name");
        assert_eq!(p.parent(), Some(Path::new("/r/.impeccable/live/locks")));
        assert_eq!(name.len(), 24 + 5);
        assert!(name.ends_with(".lock"));
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        let abc = lock_path(Path::new("/x"), "abc");
        assert_eq!(abc, Path::new("/x/locks/ba7816bf8f01cfea414140de.lock"));
    }

    #[test]
    fn lock_creation_is_exclusive() {
        let live = TempLive::new();
        let path = live.lock("a");
        let first = must_acquire(&path);
        assert!(is_held(&path));
        let text = fs::read_to_string(&path).expect("lock content");
        assert!(
            text.contains(&format!("\"token\":\"{}\"", first.token)),
            "{text}"
        );
        release(&first);
        assert!(!path.exists());
        release(&must_acquire(&path));
    }

    #[test]
    fn lock_second_acquire_with_no_wait_is_locked() {
        let live = TempLive::new();
        let path = live.lock("b");
        let first = acquire(&path, Some("1"), "/project/b", 0.0, 5.0).expect("first");
        let start = sys::now_ms();
        for wait in [0.0, -5.0, f64::NAN] {
            match acquire(&path, None, "/project/b", wait, f64::NAN) {
                Err(LockError::Locked { lock_path }) => assert_eq!(lock_path, path),
                other => panic!("expected Locked: {other:?}"),
            }
        }
        assert!(sys::now_ms() - start < 1000.0);
        assert_eq!(
            LockError::Locked {
                lock_path: path.clone()
            }
            .to_string(),
            "source_locked"
        );
        release(&first);
    }

    #[test]
    fn lock_waiting_acquire_succeeds_after_release_in_another_thread() {
        let live = TempLive::new();
        let path = live.lock("c");
        let first = must_acquire(&path);
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            release(&first);
        });
        let start = sys::now_ms();
        let second = acquire(&path, None, "/project/c", 5000.0, 2.0).expect("after release");
        assert!(sys::now_ms() - start >= 40.0);
        releaser.join().expect("releaser");
        release(&second);
    }

    #[test]
    fn lock_waiting_acquire_times_out() {
        let live = TempLive::new();
        let path = live.lock("t");
        let first = must_acquire(&path);
        let start = sys::now_ms();
        assert!(matches!(
            acquire(&path, None, "/project/t", 60.0, 1000.0),
            Err(LockError::Locked { .. })
        ));
        let took = sys::now_ms() - start;
        assert!(
            (55.0..1000.0).contains(&took),
            "retry is capped by the deadline: {took}"
        );
        release(&first);
    }

    #[test]
    fn lock_of_dead_pid_is_cleared_at_once() {
        let live = TempLive::new();
        let path = live.lock("d");
        let record = format!(
            "{{\"owner\":null,\"token\":\"x\",\"pid\":{},\"at\":1,\"file\":\"/f\"}}\n",
            dead_pid()
        );
        write_lock(&path, &record);
        release(&must_acquire(&path));
    }

    #[test]
    fn lock_readable_without_numeric_pid_is_cleared() {
        let live = TempLive::new();
        for (i, content) in [
            "{\"token\":\"x\"}",
            "{\"pid\":\"1\"}",
            "5",
            "[1]",
            "\"x\"",
            "true",
        ]
        .iter()
        .enumerate()
        {
            let path = live.lock(&format!("n{i}"));
            write_lock(&path, content);
            release(&must_acquire(&path));
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn lock_of_reused_pid_is_cleared() {
        let live = TempLive::new();
        let path = live.lock("e");
        let me = std::process::id();
        let ticks = sys::process_start_time(me).expect("own start time");
        let boot = sys::boot_id().expect("boot id");
        let record = format!(
            "{{\"token\":\"x\",\"pid\":{me},\"at\":1,\"file\":\"/f\",\
             \"startTime\":{},\"bootId\":\"{boot}\"}}\n",
            ticks + 12345
        );
        write_lock(&path, &record);
        release(&must_acquire(&path));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn lock_of_live_pid_is_respected() {
        let live = TempLive::new();
        let me = std::process::id();
        let ticks = sys::process_start_time(me).expect("own start time");
        let boot = sys::boot_id().expect("boot id");
        let variants = [
            String::new(),
            format!(",\"startTime\":{ticks},\"bootId\":\"{boot}\""),
            // Only one of the two fields: cannot prove reuse.
            format!(",\"startTime\":{}", ticks + 1),
        ];
        for (i, extra) in variants.iter().enumerate() {
            let path = live.lock(&format!("l{i}"));
            write_lock(&path, &format!("{{\"token\":\"x\",\"pid\":{me}{extra}}}\n"));
            assert!(is_held(&path), "variant {i} must be respected");
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn lock_from_an_earlier_boot_is_stale_even_if_its_pid_is_alive() {
        let live = TempLive::new();
        let me = std::process::id();
        let path = live.lock("boot");
        write_lock(&path, &format!("{{\"token\":\"x\",\"pid\":{me},\"startTime\":1,\"bootId\":\"an-earlier-boot\"}}\n"));
        release(&must_acquire(&path));
    }

    #[test]
    fn lock_unreadable_is_cleared_only_when_old() {
        let live = TempLive::new();
        for (i, content) in ["", "{\"pid\":", "null", "0", "\"\"", "false", "\u{feff}{}"]
            .iter()
            .enumerate()
        {
            let path = live.lock(&format!("u{i}"));
            write_lock(&path, content);
            assert!(
                is_held(&path),
                "fresh unreadable {content:?} must be respected"
            );
            let old = SystemTime::now() - Duration::from_secs(61);
            let file = fs::File::options()
                .write(true)
                .open(&path)
                .expect("open lock");
            file.set_modified(old).expect("set mtime");
            drop(file);
            release(&must_acquire(&path));
        }
    }

    #[test]
    fn lock_release_leaves_a_replacement_alone() {
        let live = TempLive::new();
        let path = live.lock("r");
        let ours = must_acquire(&path);
        let theirs = format!("{{\"token\":\"other\",\"pid\":{}}}\n", std::process::id());
        fs::write(&path, &theirs).expect("replace lock");
        release(&ours);
        assert_eq!(fs::read_to_string(&path).expect("still there"), theirs);
        // Unreadable content is removed by release, as in the JS.
        fs::write(&path, "garbage").expect("garbage");
        release(&ours);
        assert!(!path.exists());
        release(&ours); // nothing there: ignored
    }

    #[test]
    fn lock_record_byte_format() {
        let record = LockRecord {
            owner_json: Some("{\"kind\":\"accept\",\"n\":[1,null]}".into()),
            token: "6f1c0b8e-2d1f-4c4e-9d7a-0c4b2b8e5a11".into(),
            pid: 4242,
            at: 1_700_000_000_123,
            file: "/p/a \"b\"\\c\u{1}\u{7f}\u{2028}é.css".into(),
            start_time: Some(98765),
            boot_id: Some("c74a15a7-97e9-4230-8bd5-f60d426e9567".into()),
        };
        let expected = concat!(
            r#"{"owner":{"kind":"accept","n":[1,null]},"#,
            r#""token":"6f1c0b8e-2d1f-4c4e-9d7a-0c4b2b8e5a11","pid":4242,"#,
            r#""at":1700000000123,"file":"/p/a \"b\"\\c\u0001"#,
            "\u{7f}\u{2028}é.css\",",
            r#""startTime":98765,"bootId":"c74a15a7-97e9-4230-8bd5-f60d426e9567"}"#,
            "\n"
        );
        assert_eq!(record.to_json_line(), expected);
        let bare = LockRecord {
            owner_json: None,
            start_time: None,
            boot_id: None,
            ..record
        };
        assert!(bare.to_json_line().starts_with("{\"token\":"));
        assert!(bare
            .to_json_line()
            .ends_with("\"file\":\"/p/a \\\"b\\\"\\\\c\\u0001\u{7f}\u{2028}é.css\"}\n"));
    }

    /// The JS prefix of our record must be what Node's JSON.stringify writes.
    #[test]
    fn lock_record_matches_node_json_stringify() {
        let file = "/p/\u{1}\u{1f}\"\\/\u{7f}\u{2028}\u{2029}é😀";
        let record = LockRecord {
            owner_json: Some("{\"a\":[1,\"x\"]}".into()),
            token: "t".into(),
            pid: 7,
            at: 1_700_000_000_000,
            file: file.into(),
            start_time: None,
            boot_id: None,
        };
        let script = "const f=process.argv[1];process.stdout.write(JSON.stringify(\
            {owner:{a:[1,'x']},token:'t',pid:7,at:1700000000000,file:f})+'\\n')";
        let Some(stdout) = sys::node_eval(script, &[file]) else { return };
        assert_eq!(String::from_utf8_lossy(&stdout), record.to_json_line());
    }

    #[test]
    fn lock_parse_held_follows_json_parse() {
        let held = |t: &str| parse_held(t);
        assert_eq!(held("null"), None);
        assert_eq!(held("-0"), None);
        assert_eq!(held("1e-400"), None, "underflows to 0: falsy");
        assert_eq!(held("01"), None);
        assert_eq!(held("{\"a\":1,}"), None);
        assert_eq!(held("{\"a\":1} x"), None);
        assert_eq!(held("\"\\x\""), None);
        assert_eq!(held("\"\t\""), None);
        assert_eq!(held("5"), Some(Held::default()));
        assert_eq!(held(" [] \n"), Some(Held::default()));
        let h = held("{\"\\u0070id\":1e400,\"token\":\"a\",\"token\":\"b\",\"x\":{\"pid\":3}}")
            .expect("readable");
        assert_eq!(h.pid, Some(f64::INFINITY));
        assert_eq!(h.token.as_deref(), Some("b"));
        let h = held("{\"pid\":[1],\"token\":5,\"bootId\":\"\\ud83d\\ude00\\ud800\"}").expect("ok");
        assert_eq!(
            h,
            Held {
                boot_id: Some("😀\u{fffd}".into()),
                ..Held::default()
            }
        );
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert_eq!(
            held(&format!("{{\"pid\":1,\"owner\":{deep}}}")).map(|h| h.pid),
            Some(Some(1.0))
        );
        assert_eq!(held(&"[".repeat(200_000)), None);
    }

    /// Same readable/unreadable verdict and same pid/token as Node for a
    /// batch of odd lock contents.
    #[test]
    fn lock_parse_held_matches_node() {
        let cases = [
            "",
            " ",
            "null",
            "0",
            "-0",
            "0.0",
            "5",
            "\"\"",
            "\"a\"",
            "[]",
            "{}",
            "true",
            "false",
            "{\"pid\":12}",
            "{\"pid\":-1.5e3,\"token\":\"z\"}",
            "{\"pid\":\"12\"}",
            "{\"pid\":1e999}",
            "{\"pid\":1,\"pid\":null}",
            "{\"token\":\"\\u0041\\/\"}",
            "{\"pid\":1,}",
            "[1,]",
            "{\"a\":[{\"b\":[]}],\"pid\":3}",
            "\u{feff}{}",
            "{\"pid\":0x10}",
            "{\"pid\":+1}",
            "{\"pid\":1.}",
            "{\"pid\":.5}",
            "{\"pid\":1e}",
            "{\"pid\":-}",
            "nul",
            "{\"a\"}",
            "{\"t\":\"\\ud800\"}",
            "{\"token\":\"\\uD83D\\uDE00\"}",
            "{'pid':1}",
            "{\"pid\":1}\u{0}",
            "\u{a0}{}",
            "{\"pid\":1}\n\r\t ",
            "[\"\\u00e9\"]",
            "{\"pid\":007}",
        ];
        // Numbers shown as JS's String(n) would, for the values used above.
        let js_number = |p: f64| match p {
            _ if p.is_infinite() => {
                if p > 0.0 {
                    "Infinity".into()
                } else {
                    "-Infinity".into()
                }
            }
            _ if p.fract() == 0.0 && p.abs() < 1e21 => format!("{}", p as i64),
            _ => format!("{p}"),
        };
        let describe = |h: Option<Held>| match h {
            None => "U".to_string(),
            Some(h) => format!(
                "R {} {}",
                h.pid.map_or("-".into(), js_number),
                h.token.unwrap_or_else(|| "-".into())
            ),
        };
        let ours: Vec<String> = cases.iter().map(|c| describe(parse_held(c))).collect();
        let script = "const cs=JSON.parse(process.argv[1]);const out=cs.map(c=>{let h;\
            try{h=JSON.parse(c)}catch{h=null}if(!h)return 'U';\
            const p=typeof h.pid==='number'?String(h.pid):'-';\
            return 'R '+p+' '+(typeof h.token==='string'?h.token:'-')});\
            console.log(JSON.stringify(out))";
        let arg = serde_json::to_string(&cases[..]).expect("cases");
        let Some(stdout) = sys::node_eval(script, &[&arg]) else { return };
        let theirs: Vec<String> = serde_json::from_slice(&stdout).expect("node output");
        assert_eq!(theirs.len(), cases.len());
        for ((case, a), b) in cases.iter().zip(&ours).zip(&theirs) {
            assert_eq!(a, b, "case {case:?}");
        }
    }

    #[test]
    fn lock_io_error_names_op_and_path() {
        let live = TempLive::new();
        let blocker = live.0.join("locks");
        fs::write(&blocker, "not a dir").expect("blocker");
        let path = live.0.join("locks").join("x.lock");
        match try_acquire(&path, None, "/f") {
            Err(e @ LockError::Io { .. }) => {
                let text = e.to_string();
                assert!(
                    text.starts_with(&format!("mkdir {}: ", blocker.display())),
                    "{text}"
                );
            }
            other => panic!("expected Io: {other:?}"),
        }
    }

    #[test]
    fn lock_stress_counter_is_exact() {
        const THREADS: usize = 4;
        const ROUNDS: usize = 200;
        let live = TempLive::new();
        let path = Arc::new(live.lock("stress"));
        let counter = Arc::new(live.0.join("counter"));
        fs::write(&*counter, "0").expect("counter");
        // Start behind a dead owner's lock, so all threads race to clear it.
        let dead = format!("{{\"token\":\"x\",\"pid\":{}}}\n", dead_pid());
        write_lock(&path, &dead);
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let (path, counter) = (Arc::clone(&path), Arc::clone(&counter));
                std::thread::spawn(move || {
                    for _ in 0..ROUNDS {
                        let acquired =
                            acquire(&path, Some("\"stress\""), "/project/stress", 10_000.0, 1.0)
                                .expect("acquire within 10 s");
                        let n: usize = fs::read_to_string(&*counter)
                            .expect("read counter")
                            .parse()
                            .expect("counter number");
                        fs::write(&*counter, (n + 1).to_string()).expect("write counter");
                        release(&acquired);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("worker");
        }
        let total = fs::read_to_string(&*counter).expect("counter");
        assert_eq!(total, (THREADS * ROUNDS).to_string());
        assert!(!path.exists());
    }
}
