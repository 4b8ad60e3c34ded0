//! `JSON.stringify` of the value model, compact or indented.

use crate::js::json::parse::plain_len;
use crate::js::number::number_to_string;
use crate::js::value::Object;
use crate::js::string::JsStr;
use crate::js::value::Value;

/// `JSON.stringify(v)`; `None` when the top-level value has no JSON form
/// (`undefined`), as JS returns `undefined` then.
pub fn stringify(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, None, 0).then_some(out)
}

/// `JSON.stringify(v, null, 2)`.
pub fn stringify_pretty(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, Some(2), 0).then_some(out)
}

/// `JSON.stringify(o)` (or with `indent`, `JSON.stringify(o, null, indent)`)
/// of an object given by its members in order.
pub fn stringify_members<'a>(members: impl Iterator<Item = (&'a JsStr, &'a Value)>, indent: Option<usize>) -> String {
    // A snapshot renders to one or two kilobytes: one allocation, not a
    // string doubling its way up.
    let mut out = String::with_capacity(2048);
    write_members(&mut out, members, indent, 0);
    out
}

/// Writes `v`; returns false (writing nothing) for `undefined`.
fn write_value(out: &mut String, v: &Value, indent: Option<usize>, level: usize) -> bool {
    match v {
        Value::Undefined | Value::Host(_) => return false,
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, *n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => write_array(out, items, indent, level),
        Value::Object(o) => write_object(out, o, indent, level),
    }
    true
}

pub fn write_number(out: &mut String, n: f64) {
    // Integers below 2^53 print as themselves (what `number_to_string` does
    // for them too), written in place rather than through a new string.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 && n != 0.0 {
        write_integer(out, n as i64);
    } else if n.is_finite() {
        out.push_str(&number_to_string(n));
    } else {
        out.push_str("null");
    }
}

fn write_integer(out: &mut String, n: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// Enough spaces for any indentation a snapshot reaches; deeper levels take
/// them in several pieces.
const SPACES: &str = "                                                                ";

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(w) = indent {
        out.push('\n');
        let mut left = w * level;
        while left > 0 {
            let n = left.min(SPACES.len());
            out.push_str(&SPACES[..n]);
            left -= n;
        }
    }
}

fn write_array(out: &mut String, items: &[Value], indent: Option<usize>, level: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, indent, level + 1);
        if !write_value(out, item, indent, level + 1) {
            out.push_str("null");
        }
    }
    newline(out, indent, level);
    out.push(']');
}

fn write_object(out: &mut String, o: &Object, indent: Option<usize>, level: usize) {
    write_members(out, o.iter(), indent, level);
}

fn write_members<'a>(out: &mut String, members: impl Iterator<Item = (&'a JsStr, &'a Value)>, indent: Option<usize>, level: usize) {
    let mut wrote_any = false;
    out.push('{');
    for (k, v) in members {
        if matches!(v, Value::Undefined | Value::Host(_)) {
            continue;
        }
        if wrote_any {
            out.push(',');
        }
        wrote_any = true;
        newline(out, indent, level + 1);
        write_string(out, k);
        out.push(':');
        if indent.is_some() {
            out.push(' ');
        }
        write_value(out, v, indent, level + 1);
    }
    if wrote_any {
        newline(out, indent, level);
    }
    out.push('}');
}

pub fn write_string(out: &mut String, s: &JsStr) {
    out.push('"');
    match s {
        // Interned keys are letters only (checked when the table is built).
        JsStr::Static(key) => out.push_str(key),
        JsStr::Utf16(units) => write_escaped_utf16(out, units),
        text => write_escaped_utf8(out, text.as_str().unwrap_or_default()),
    }
    out.push('"');
}

fn write_escaped_utf8(out: &mut String, text: &str) {
    // Runs without a quote, a backslash or a control character are copied
    // whole, found eight bytes at a time: the strings of a snapshot rarely
    // hold any, and a byte-at-a-time scan was the largest part of rendering
    // an append's bytes. Every byte that stops a run is ASCII, so each cut
    // falls on a character boundary.
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        let n = plain_len(&bytes[i..]);
        out.push_str(&text[i..i + n]);
        i += n;
        let Some(&b) = bytes.get(i) else { return };
        push_escape(out, u16::from(b));
        i += 1;
    }
}

fn write_escaped_utf16(out: &mut String, units: &[u16]) {
    for item in char::decode_utf16(units.iter().copied()) {
        match item {
            Ok(c) if (c as u32) < 0x20 || c == '"' || c == '\\' => push_escape(out, c as u16),
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
}

fn push_escape(out: &mut String, unit: u16) {
    match unit {
        0x22 => out.push_str("\\\""),
        0x5C => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x0C => out.push_str("\\f"),
        0x0A => out.push_str("\\n"),
        0x0D => out.push_str("\\r"),
        0x09 => out.push_str("\\t"),
        other => out.push_str(&format!("\\u{:04x}", other)),
    }
}
