//! `JSON.stringify` of the value model, compact or indented.

use crate::js::json::parse::plain_len;
use crate::js::number::number_to_string;
use crate::js::object::Members;
use crate::js::string::JsStr;
use crate::js::value::Value;

/// `JSON.stringify(v)`; `None` when the top-level value has no JSON form
/// (`undefined`), as JS returns `undefined` then.
pub fn stringify(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, None, 0, &mut Stack::default()).then_some(out)
}

/// [`stringify`] appended to `out`; `false` (and `out` unchanged) for a
/// value JSON cannot write.
pub fn write_to(out: &mut String, v: &Value) -> bool {
    let at = out.len();
    let wrote = write_value(out, v, None, 0, &mut Stack::default());
    if !wrote {
        out.truncate(at);
    }
    wrote
}

/// `JSON.stringify(v, null, 2)`.
pub fn stringify_pretty(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, Some(2), 0, &mut Stack::default()).then_some(out)
}

/// `JSON.stringify(o)` (or with `indent`, `JSON.stringify(o, null, indent)`)
/// of an object given by its members in order.
pub fn stringify_members<'a>(members: impl Iterator<Item = (&'a JsStr, &'a Value)>, indent: Option<usize>) -> String {
    render_members(members, indent, usize::MAX).0
}

/// [`stringify_members`], or `None` as soon as the object turns out to nest
/// deeper than `max_depth` (1: no member is a non-empty array or object).
/// Indented text grows with the square of the depth, so the check comes
/// before the text, not after.
pub fn stringify_members_within<'a>(members: impl Iterator<Item = (&'a JsStr, &'a Value)>, indent: Option<usize>, max_depth: usize) -> Option<String> {
    let (text, depth) = render_members(members, indent, max_depth.saturating_sub(1));
    (depth <= max_depth).then_some(text)
}

/// The members' text and how deeply they nest, the text stopping short
/// once the nesting passes `max_open` containers below the object.
fn render_members<'a>(members: impl Iterator<Item = (&'a JsStr, &'a Value)>, indent: Option<usize>, max_open: usize) -> (String, usize) {
    // A snapshot renders to one or two kilobytes: one allocation, not a
    // string doubling its way up.
    let mut out = String::with_capacity(2048);
    let mut open = Stack { max_open, ..Stack::default() };
    out.push('{');
    let mut wrote_any = false;
    for (k, v) in members {
        if !matches!(v, Value::Undefined | Value::Host(_)) {
            member_head(&mut out, k, indent, 1, &mut wrote_any);
            write_value(&mut out, v, indent, 1, &mut open);
            if open.deepest > open.max_open {
                break;
            }
        }
    }
    close(&mut out, b'}', indent, 0, wrote_any);
    (out, open.deepest + 1)
}

/// A container being written: what is left of it, and whether anything of
/// it was written yet.
enum Open<'a> {
    Array(std::slice::Iter<'a, Value>, bool),
    Object(Members<'a>, bool),
}

/// The containers being written, innermost last, and the most there were;
/// writing stops once there are more than `max_open`.
struct Stack<'a> {
    open: Vec<Open<'a>>,
    deepest: usize,
    max_open: usize,
}

impl Default for Stack<'_> {
    fn default() -> Self {
        Stack { open: Vec::new(), deepest: 0, max_open: usize::MAX }
    }
}

impl<'a> Stack<'a> {
    fn push(&mut self, container: Open<'a>) {
        self.open.push(container);
        self.deepest = self.deepest.max(self.open.len());
    }
}

/// Writes `v` at indentation `level`; returns false (writing nothing) for
/// `undefined`. Nested containers go on `open`, a stack of their own, so no
/// depth of the value reaches the native stack; callers pass one stack down
/// to save its allocation.
fn write_value<'a>(out: &mut String, v: &'a Value, indent: Option<usize>, level: usize, stack: &mut Stack<'a>) -> bool {
    let base = stack.open.len();
    if !write_scalar_or_open(out, v, stack) {
        return false;
    }
    while stack.open.len() > base {
        if stack.deepest > stack.max_open {
            // Too deep for the caller: the text is abandoned.
            stack.open.truncate(base);
            break;
        }
        // Items of the container on top sit one level below it.
        let at = level + (stack.open.len() - base);
        let next = match stack.open.last_mut() {
            Some(Open::Array(items, wrote_any)) => items.next().inspect(|_| {
                separator(out, wrote_any);
                newline(out, indent, at);
            }),
            Some(Open::Object(members, wrote_any)) => loop {
                let Some((k, v)) = members.next() else { break None };
                if !matches!(v, Value::Undefined | Value::Host(_)) {
                    member_head(out, k, indent, at, wrote_any);
                    break Some(v);
                }
            },
            None => unreachable!("the loop runs while the stack is above its base"),
        };
        match next {
            Some(child) => {
                if !write_scalar_or_open(out, child, stack) {
                    // An array item with no JSON form.
                    out.push_str("null");
                }
            }
            None => match stack.open.pop() {
                Some(Open::Array(_, wrote_any)) => close(out, b']', indent, at - 1, wrote_any),
                Some(Open::Object(_, wrote_any)) => close(out, b'}', indent, at - 1, wrote_any),
                None => unreachable!("just seen"),
            },
        }
    }
    true
}

/// Writes a scalar or an empty container whole, or opens a container
/// (pushing it on `open`); false for a value with no JSON form.
fn write_scalar_or_open<'a>(out: &mut String, v: &'a Value, stack: &mut Stack<'a>) -> bool {
    match v {
        Value::Undefined | Value::Host(_) => return false,
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, *n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(o) if o.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            stack.push(Open::Array(items.iter(), false));
        }
        Value::Object(o) => {
            out.push('{');
            stack.push(Open::Object(o.iter(), false));
        }
    }
    true
}

fn separator(out: &mut String, wrote_any: &mut bool) {
    if *wrote_any {
        out.push(',');
    }
    *wrote_any = true;
}

/// `,` when needed, the line break and indentation, and `"key":`.
fn member_head(out: &mut String, k: &JsStr, indent: Option<usize>, level: usize, wrote_any: &mut bool) {
    separator(out, wrote_any);
    newline(out, indent, level);
    write_string(out, k);
    out.push(':');
    if indent.is_some() {
        out.push(' ');
    }
}

/// The closing bracket of a container at `level`, on a line of its own
/// when it holds anything.
fn close(out: &mut String, bracket: u8, indent: Option<usize>, level: usize, wrote_any: bool) {
    if wrote_any {
        newline(out, indent, level);
    }
    out.push(char::from(bracket));
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
