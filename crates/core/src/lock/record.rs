//! The one-line JSON record in a lock file: written as the old module writes
//! it (plus two keys it never reads), read as `JSON.parse` plus property
//! access sees it.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use crate::js::json;
use crate::js::{JsStr, Value};
use crate::sys;

/// The content of a lock file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LockRecord {
    /// The owner as JSON text (already `JSON.stringify`-ed); `None` omits the
    /// key, as `JSON.stringify` does for `undefined`.
    pub owner_json: Option<String>,
    pub token: String,
    pub pid: u32,
    /// Milliseconds since the epoch (`Date.now()`).
    pub at: i64,
    /// The locked file's absolute path as JSON text (`JSON.stringify` of
    /// it, by V8: a lone surrogate stays escaped, as the old module writes it).
    pub file_json: String,
    /// The owner's [`sys::process_start_time`], for pid-reuse detection.
    pub start_time: Option<u64>,
    /// The owner's [`sys::boot_id`]; start times compare only within a boot.
    pub boot_id: Option<String>,
}

impl LockRecord {
    /// A fresh record for this process, with a new random token.
    pub(crate) fn for_this_process(owner_json: Option<&str>, file_json: &str) -> Self {
        let me = own_identity();
        LockRecord {
            owner_json: owner_json.map(str::to_string),
            token: uuid::Uuid::new_v4().to_string(),
            pid: std::process::id(),
            at: sys::now_ms() as i64,
            file_json: file_json.to_string(),
            start_time: me.start_time,
            boot_id: me.boot_id.clone(),
        }
    }

    /// `JSON.stringify({ owner, token, pid, at, file }) + "\n"`, with
    /// `startTime` and `bootId` appended inside the object when known.
    pub(crate) fn to_json_line(&self) -> String {
        let mut out = String::from("{");
        if let Some(owner) = &self.owner_json {
            out.push_str("\"owner\":");
            out.push_str(owner);
            out.push(',');
        }
        out.push_str("\"token\":");
        push_json_string(&mut out, &self.token);
        out.push_str(&format!(",\"pid\":{},\"at\":{},\"file\":", self.pid, self.at));
        out.push_str(&self.file_json);
        if let Some(ticks) = self.start_time {
            out.push_str(&format!(",\"startTime\":{ticks}"));
        }
        if let Some(id) = &self.boot_id {
            out.push_str(",\"bootId\":");
            push_json_string(&mut out, id);
        }
        out.push_str("}\n");
        out
    }
}

/// `JSON.stringify(s)`, appended.
fn push_json_string(out: &mut String, s: &str) {
    json::write_string(out, &JsStr::from(s));
}

pub(crate) struct Identity {
    pub start_time: Option<u64>,
    pub boot_id: Option<String>,
}

/// Our own start time and boot id never change, so ask the OS only once.
pub(crate) fn own_identity() -> &'static Identity {
    static ME: OnceLock<Identity> = OnceLock::new();
    ME.get_or_init(|| Identity { start_time: sys::process_start_time(std::process::id()), boot_id: sys::boot_id() })
}

/// A lock file as the old module's checks see it once `JSON.parse` accepted
/// it with a truthy value: each member present only with the JS type the
/// checks require (`typeof pid === 'number'`, a string token...). For a
/// truthy non-object (`5`, `"x"`, `[]`) all are `None`.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Held {
    pub pid: Option<f64>,
    pub token: Option<String>,
    pub start_time: Option<f64>,
    pub boot_id: Option<String>,
}

/// The lock file at `path` read as `JSON.parse(readFileSync(p, 'utf-8'))`;
/// `None` when the old module's `readLock` gives null or a falsy value (what
/// it treats as unreadable: missing, not JSON, `0`, `""`, `null`...).
pub(crate) fn read_held(path: &Path) -> Option<Held> {
    // A lock is one short line: no size probe, just read it.
    let mut bytes = Vec::with_capacity(512);
    sys::read_file_into(path, &mut bytes).ok()?;
    if let Some(held) = parse_held(&String::from_utf8_lossy(&bytes)) {
        return Some(held);
    }
    // Unreadable content gets a lock removed, so make sure it was not a
    // short read: read to the end the ordinary way before saying so.
    bytes = fs::read(path).ok()?;
    parse_held(&String::from_utf8_lossy(&bytes))
}

/// `Some` when `JSON.parse(text)` succeeds with a truthy value. (Node decodes
/// the file with U+FFFD for invalid UTF-8, as the callers do: outside a
/// string that fails the parse, inside one it only changes that string.)
pub(crate) fn parse_held(text: &str) -> Option<Held> {
    let value = json::parse(text).ok()?;
    if !value.truthy() {
        return None;
    }
    // `held.pid` on a primitive or an array is undefined, as `get` answers.
    let number = |key| match value.get(key) {
        Value::Number(n) => Some(*n),
        _ => None,
    };
    // Lone surrogates become U+FFFD: such strings can then collide only with
    // each other, never with the ASCII tokens and boot ids they meet.
    let string = |key| value.get(key).as_js_str().map(JsStr::to_lossy);
    Some(Held { pid: number("pid"), token: string("token"), start_time: number("startTime"), boot_id: string("bootId") })
}
