//! JSON text in and out of the value model, as V8 reads and writes it.
//!
//! Reading follows `JSON.parse`: strict grammar, a repeated key keeps its first
//! position and its last value, `\udXXX` escapes may leave lone surrogates.
//! Writing follows `JSON.stringify`: `undefined` keys are dropped (and become
//! `null` in arrays), non-finite numbers become `null`, `-0` becomes `0`, lone
//! surrogates are escaped as `\udxxx`. Byte-identical output is what lets a JS
//! process and a native one share a sessions directory.

pub mod skim;

use crate::js::value::{key_hash, number_to_string, JsStr, Object, Value};

/// Nesting deeper than this is refused. V8's own `JSON.stringify` fails near
/// 4,200 levels on Node 20, so no line the old module could write comes near
/// it; the limit keeps recursion well within the native stack.
pub const MAX_DEPTH: usize = 5_000;

#[derive(Debug, PartialEq)]
pub struct ParseError {
    /// Byte offset where the text stopped being JSON.
    pub offset: usize,
    pub message: String,
}

pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser { b: text.as_bytes(), i: 0, text };
    p.skip_ws();
    let v = p.value(0).map_err(|e| *e)?;
    p.skip_ws();
    if p.i != p.b.len() {
        return Err(*p.err("Unexpected non-whitespace character after JSON"));
    }
    Ok(v)
}

/// The value of text already known to be one valid JSON value, without
/// starting a parser, when it is one of the common simple forms: a string
/// with no escapes, an integer [`small_integer`] takes, or a literal.
/// `None` means "use [`parse`]", never "invalid".
pub fn parse_simple(text: &str) -> Option<Value> {
    let b = text.as_bytes();
    match b.first()? {
        b'"' if b.len() >= 2 && plain_len(&b[1..]) == b.len() - 2 => Some(Value::String(JsStr::from(&text[1..text.len() - 1]))),
        b'-' | b'0'..=b'9' => small_integer(text).map(Value::Number),
        _ => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => None,
        },
    }
}

/// Errors travel boxed inside the parser: `Result<Value, Box<_>>` is no
/// bigger than a `Value`, and every nested value passes through one, so an
/// unboxed error made each level copy and test a larger result.
type Parsed<T> = Result<T, Box<ParseError>>;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    text: &'a str,
}

impl<'a> Parser<'a> {
    fn err(&self, what: &str) -> Box<ParseError> {
        Box::new(ParseError { offset: self.i, message: format!("{} at position {}", what, self.utf16_offset()) })
    }

    fn utf16_offset(&self) -> usize {
        let end = self.i.min(self.text.len());
        let mut cut = end;
        while !self.text.is_char_boundary(cut) {
            cut -= 1;
        }
        self.text[..cut].encode_utf16().count()
    }

    fn skip_ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Parsed<Value> {
        if depth > MAX_DEPTH {
            return Err(self.err("Nesting too deep"));
        }
        match self.b.get(self.i) {
            None => Err(self.err("Unexpected end of JSON input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("Unexpected token")),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Parsed<Value> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("Unexpected token"))
        }
    }

    fn object(&mut self, depth: usize) -> Parsed<Value> {
        self.i += 1;
        let mut obj = Object::with_capacity(8);
        self.skip_ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Object(obj));
        }
        loop {
            self.skip_ws();
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.err("Expected property name or '}' in JSON"));
            }
            let (key, hash) = self.key()?;
            self.skip_ws();
            if self.b.get(self.i) != Some(&b':') {
                return Err(self.err("Expected ':' after property name in JSON"));
            }
            self.i += 1;
            self.skip_ws();
            let v = self.value(depth + 1)?;
            obj.set_parsed(key, hash, v);
            self.skip_ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(obj));
                }
                _ => return Err(self.err("Expected ',' or '}' after property value in JSON")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Parsed<Value> {
        self.i += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.err("Expected ',' or ']' after array element in JSON")),
            }
        }
    }

    fn number(&mut self) -> Parsed<Value> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("No number after minus sign in JSON")),
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                return Err(self.err("Unterminated fractional number in JSON"));
            }
            self.digits();
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                return Err(self.err("Exponent part is missing a number in JSON"));
            }
            self.digits();
        }
        let text = &self.text[start..self.i];
        if let Some(n) = small_integer(text) {
            return Ok(Value::Number(n));
        }
        text.parse::<f64>().map(Value::Number).map_err(|_| self.err("Bad number"))
    }

    fn digits(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
    }

    /// A property name and its [`Object`] hash: the common plain ones are
    /// interned.
    fn key(&mut self) -> Parsed<(JsStr, u32)> {
        let start = self.i + 1;
        let n = plain_len(&self.b[start..]);
        if self.b.get(start + n) == Some(&b'"') {
            self.i = start + n + 1;
            return Ok(JsStr::key(&self.text[start..start + n]));
        }
        let key = self.string()?;
        let hash = key_hash(&key);
        Ok((key, hash))
    }

    fn string(&mut self) -> Parsed<JsStr> {
        let start = self.i + 1;
        let n = plain_len(&self.b[start..]);
        if self.b.get(start + n) == Some(&b'"') {
            self.i = start + n + 1;
            return Ok(JsStr::from(&self.text[start..start + n]));
        }
        self.i += 1;
        let mut out = StrBuilder::default();
        loop {
            let run_start = self.i;
            self.i += plain_len(&self.b[self.i..]);
            out.push_str(&self.text[run_start..self.i]);
            match self.b.get(self.i) {
                None => return Err(self.err("Unterminated string in JSON")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out.finish());
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => return Err(self.err("Bad control character in string literal in JSON")),
            }
        }
    }

    fn escape(&mut self, out: &mut StrBuilder) -> Parsed<()> {
        self.i += 1;
        let c = self.b.get(self.i).copied();
        self.i += 1;
        let simple = match c {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex4()?;
                out.push_unit(unit);
                return Ok(());
            }
            _ => {
                self.i -= 1;
                return Err(self.err("Bad escaped character in JSON"));
            }
        };
        out.push_char(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Parsed<u16> {
        let digits = self.b.get(self.i..self.i + 4).ok_or_else(|| self.err("Bad Unicode escape in JSON"))?;
        let mut unit = 0u16;
        for d in digits {
            let v = (*d as char).to_digit(16).ok_or_else(|| self.err("Bad Unicode escape in JSON"))?;
            unit = unit * 16 + v as u16;
        }
        self.i += 4;
        Ok(unit)
    }
}

/// How many leading bytes of `b` a string literal takes as they are: up to
/// the first quote, backslash or control character.
#[inline]
pub(crate) fn plain_len(b: &[u8]) -> usize {
    b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(b.len())
}

/// A JSON integer of at most 15 digits (sequence numbers, revisions, counts,
/// epoch milliseconds) is exact in an f64 built from a u64, so it needs no
/// general decimal conversion. `-0` keeps its sign, as in `JSON.parse`.
fn small_integer(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n = digits.bytes().fold(0u64, |n, c| n * 10 + u64::from(c - b'0')) as f64;
    Some(if negative { -n } else { n })
}

/// Builds a JS string, staying in UTF-8 until a lone surrogate forces UTF-16.
#[derive(Default)]
struct StrBuilder {
    s: String,
    pending_high: Option<u16>,
    wide: Option<Vec<u16>>,
}

impl StrBuilder {
    fn flush_high(&mut self) {
        if let Some(h) = self.pending_high.take() {
            self.widen().push(h);
        }
    }

    fn widen(&mut self) -> &mut Vec<u16> {
        if self.wide.is_none() {
            self.wide = Some(self.s.encode_utf16().collect());
        }
        self.wide.as_mut().unwrap_or_else(|| unreachable!())
    }

    fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.flush_high();
        match &mut self.wide {
            Some(w) => w.extend(s.encode_utf16()),
            None => self.s.push_str(s),
        }
    }

    fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_str(c.encode_utf8(&mut buf));
    }

    fn push_unit(&mut self, unit: u16) {
        match unit {
            0xD800..=0xDBFF => {
                self.flush_high();
                self.pending_high = Some(unit);
            }
            0xDC00..=0xDFFF => match self.pending_high.take() {
                Some(h) => {
                    let c = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                    self.push_char(char::from_u32(c).unwrap_or('\u{FFFD}'));
                }
                None => self.widen().push(unit),
            },
            _ => self.push_char(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}')),
        }
    }

    fn finish(mut self) -> JsStr {
        self.flush_high();
        match self.wide {
            Some(w) => JsStr::from_utf16(w),
            None => JsStr::Utf8(self.s),
        }
    }
}

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

/// `JSON.stringify(o, null, 2)` for an object, without wrapping it in a `Value`.
pub fn stringify_pretty_object(o: &Object) -> String {
    // A snapshot renders to one or two kilobytes: one allocation, not a
    // string doubling its way up.
    let mut out = String::with_capacity(2048);
    write_object(&mut out, o, Some(2), 0);
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
    let mut wrote_any = false;
    out.push('{');
    for (k, v) in o.iter() {
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

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_written_in_place_match_number_to_string() {
        for n in [1.0, -1.0, 9.0, 10.0, -10.0, 1234567.0, 9_007_199_254_740_991.0, -9_007_199_254_740_991.0, 0.0, -0.0, 0.5, 1e21, 9_007_199_254_740_992.0, f64::NAN] {
            let mut out = String::new();
            write_number(&mut out, n);
            let want = if n.is_finite() { crate::js::value::number_to_string(n) } else { "null".to_owned() };
            assert_eq!(out, want, "{n}");
        }
    }

    #[test]
    fn deep_indentation_is_whole() {
        let mut v = Value::Array(vec![]);
        for _ in 0..40 {
            v = Value::Array(vec![v]);
        }
        let text = stringify_pretty(&v).unwrap();
        assert!(text.contains(&format!("\n{}[]", " ".repeat(80))), "{text}");
    }

    use super::*;

    fn roundtrip(text: &str) -> String {
        stringify(&parse(text).unwrap()).unwrap()
    }

    #[test]
    fn keeps_v8_key_order_and_duplicates() {
        assert_eq!(roundtrip(r#"{"10":1,"b":2,"2":3}"#), r#"{"2":3,"10":1,"b":2}"#);
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(roundtrip(r#"{"__proto__":{"x":1}}"#), r#"{"__proto__":{"x":1}}"#);
    }

    #[test]
    fn numbers_and_strings() {
        assert_eq!(roundtrip("[1e21,5e-324,-0,1E2,0.5e-6,1e400]"), "[1e+21,5e-324,0,100,5e-7,null]");
        assert_eq!(roundtrip(r#""\ud800x\udc00\ud83d\ude00""#), r#""\ud800x\udc00😀""#);
        assert_eq!(roundtrip(r#""\u0001\u001f\"\\\/\b\f\n\r\t\u2028""#), "\"\\u0001\\u001f\\\"\\\\/\\b\\f\\n\\r\\t\u{2028}\"");
    }

    /// Escapes at every position of strings long and short, so runs end on
    /// and across eight-byte chunk boundaries; serde_json escapes exactly
    /// the same set (quote, backslash, controls) the same way.
    #[test]
    fn string_escapes_at_every_position() {
        for len in 0..40 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '\u{2028}'] {
                    let text: String = (0..len).map(|i| if i == at || i == len - 1 - at / 2 { special } else { 'a' }).collect();
                    let mut out = String::new();
                    write_string(&mut out, &JsStr::from(text.as_str()));
                    assert_eq!(out, serde_json::to_string(&text).unwrap(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in ["", " ", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "'a'", "\"\t\"", "nul", "[1] 2", "\u{feff}{}", "{\"a\" 1}", "\"\\x\"", "-", "1e", "NaN"] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        assert!(parse(" \r\n\t{} \r").is_ok());
    }

    #[test]
    fn integers_take_the_short_path_exactly() {
        for text in ["0", "-0", "7", "-42", "999999999999999", "-999999999999999", "1000000000000000", "12345678901234567890", "1796032802000"] {
            let want: f64 = text.parse().unwrap();
            let got = match parse(text).unwrap() {
                Value::Number(n) => n,
                other => panic!("{other:?}"),
            };
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
    }

    #[test]
    fn pretty_matches_json_stringify_indent_2() {
        let v = parse(r#"{"a":[],"b":{},"c":[1,{"d":null}],"e":"x"}"#).unwrap();
        let want = "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"e\": \"x\"\n}";
        assert_eq!(stringify_pretty(&v).unwrap(), want);
    }

    #[test]
    fn undefined_and_nan() {
        let mut o = Object::new();
        o.set("u", Value::Undefined);
        o.set("n", Value::Number(f64::NAN));
        o.set("a", Value::Array(vec![Value::Undefined, Value::Number(-0.0)]));
        assert_eq!(stringify(&Value::Object(o)).unwrap(), r#"{"n":null,"a":[null,0]}"#);
        let mut only_undef = Object::new();
        only_undef.set("u", Value::Undefined);
        assert_eq!(stringify_pretty(&Value::Object(only_undef)).unwrap(), "{}");
        assert_eq!(stringify(&Value::Undefined), None);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        std::thread::Builder::new().stack_size(64 << 20).spawn(deep_nesting_body).unwrap().join().unwrap();
    }

    fn deep_nesting_body() {
        let deep = "[".repeat(3000) + &"]".repeat(3000);
        assert!(parse(&deep).is_ok());
        let too_deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert!(parse(&too_deep).is_err());
    }
}
