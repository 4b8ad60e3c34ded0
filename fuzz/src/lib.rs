//! What the fuzz targets share: a fixed host, a scratch directory, value
//! comparison against serde_json, and the JS whitespace set.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use quiver_live_core::js::json;
use quiver_live_core::js::{JsStr, Value};
use quiver_live_core::session::host::Host;

/// A clock that never moves and `Date.parse` that knows only the ISO form:
/// runs are reproducible from the input alone.
pub struct FixedHost;

impl Host for FixedHost {
    fn now_ms(&self) -> f64 {
        1_893_456_000_000.0
    }
    fn date_parse_fallback(&self, _s: &JsStr) -> f64 {
        f64::NAN
    }
    fn json_parse_message(&self, line: &str) -> String {
        json::parse(line).err().map_or_else(String::new, |e| e.message)
    }
}

/// A directory of this process's own for the targets that read files,
/// removed when libFuzzer exits normally (`-max_total_time`, `-runs`).
/// tmpfs when there is one: the targets write a file per input.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() && std::env::var_os("TMPDIR").is_none() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        remove_orphans(&base);
        let dir = base.join(format!("qln-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        extern "C" fn remove_scratch() {
            if let Some(dir) = DIR.get() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        // SAFETY: registers a plain function with no captured state.
        unsafe { libc::atexit(remove_scratch) };
        dir
    })
}

/// Scratch directories of runs that ended without `exit` (a finding, a
/// signal): their process is gone.
fn remove_orphans(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("qln-fuzz-")) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether our value and serde_json's are the same JSON value: numbers
/// bit for bit (so `-0` stays `-0`), object keys in V8's order (array
/// indices ascending, then the others where each first appeared; serde_json
/// keeps the latter and its last value for a repeated key, as V8 does).
pub fn same_as_serde(ours: &Value, theirs: &serde_json::Value) -> bool {
    use serde_json::Value as S;
    match (ours, theirs) {
        (Value::Null, S::Null) => true,
        (Value::Bool(a), S::Bool(b)) => a == b,
        (Value::Number(a), S::Number(b)) => b.as_f64().is_some_and(|b| a.to_bits() == b.to_bits()),
        (Value::String(a), S::String(b)) => a.as_str() == Some(b.as_str()),
        (Value::Array(a), S::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_as_serde(x, y)),
        (Value::Object(a), S::Object(b)) => {
            let mut theirs: Vec<(&String, &S)> = b.iter().collect();
            // Stable: the named keys keep their order.
            theirs.sort_by_key(|(k, _)| array_index(k).map_or((1, 0), |i| (0, i)));
            a.len() == theirs.len() && a.iter().zip(theirs).all(|((k, v), (l, w))| k.as_str() == Some(l.as_str()) && same_as_serde(v, w))
        }
        _ => false,
    }
}

/// A key V8 orders first: the canonical text of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()));
    key.parse::<u32>().ok().filter(|&i| canonical && i != u32::MAX)
}

/// serde_json refusals of text that `JSON.parse` accepts: lone surrogates
/// in `\u` escapes (JS strings may hold them), numbers beyond f64 (JS reads
/// Infinity), and nesting past serde_json's recursion limit.
pub fn serde_refuses_what_js_accepts(err: &serde_json::Error, text: &str) -> bool {
    let message = err.to_string();
    let surrogate = message.contains("surrogate") || message.contains("unicode code point") || message.contains("hex escape");
    (surrogate && text.to_ascii_lowercase().contains("\\ud"))
        || message.contains("number out of range")
        || message.contains("recursion limit exceeded")
}

/// Characters JS's `trim` and regex `\s` take: WhiteSpace and LineTerminator.
pub const JS_SPACE: &str = "\t\n\u{b}\u{c}\r \u{a0}\u{1680}\u{2000}\u{2001}\u{2002}\u{2003}\u{2004}\u{2005}\u{2006}\u{2007}\u{2008}\u{2009}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";

pub fn is_js_space(c: char) -> bool {
    JS_SPACE.contains(c)
}

/// `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// A regex character class of [`JS_SPACE`].
pub fn js_space_class() -> String {
    let mut class = String::from("[");
    for c in JS_SPACE.chars() {
        class.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
    }
    class.push(']');
    class
}
