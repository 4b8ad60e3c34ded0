//! `JSON.parse` into the value model.

use crate::js::error::{ErrorClass, JsError};
use crate::js::object::{hash_bytes, key_hash, Object};
use crate::js::string::JsStr;
use crate::js::value::Value;

/// `JSON.parse(text)`, or its SyntaxError. The message names the UTF-16
/// position as V8's does, in words of its own: what a caller is shown of a
/// journal line V8 words itself (see `Host::json_parse_message`).
pub fn parse(text: &str) -> Result<Value, JsError> {
    let mut p = Parser { b: text.as_bytes(), i: 0, text };
    p.skip_ws();
    let v = p.value().map_err(|e| *e)?;
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
type Parsed<T> = Result<T, Box<JsError>>;

/// A container the parser is inside of, with what it holds so far (an
/// object also holds the key whose value is being read).
enum Open {
    Array(Vec<Value>),
    Object(Object, JsStr, u32),
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    text: &'a str,
}

impl<'a> Parser<'a> {
    fn err(&self, what: &str) -> Box<JsError> {
        Box::new(JsError::new(ErrorClass::SyntaxError, format!("{} at position {}", what, self.utf16_offset())))
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

    /// One value, with its nested containers on a stack of their own: the
    /// depth of the text never reaches the native stack (V8's `JSON.parse`
    /// is iterative too, and accepts a line nested a million deep).
    fn value(&mut self) -> Parsed<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // Start a value: a scalar is complete at once, a container is
            // either empty (complete) or opened with its first slot pending.
            let mut done = match self.b.get(self.i) {
                None => return Err(self.err("Unexpected end of JSON input")),
                Some(b'{') => {
                    self.i += 1;
                    self.skip_ws();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        Value::Object(Object::new())
                    } else {
                        let (key, hash) = self.member_key()?;
                        open.push(Open::Object(Object::with_capacity(8), key, hash));
                        continue;
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    self.skip_ws();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                        Value::Array(Vec::new())
                    } else {
                        open.push(Open::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(_) => return Err(self.err("Unexpected token")),
            };
            // Hand the finished value to its container; close every
            // container that this completes, up to one expecting more.
            loop {
                let Some(top) = open.last_mut() else { return Ok(done) };
                self.skip_ws();
                let next = self.b.get(self.i).copied();
                match top {
                    Open::Array(items) => {
                        items.push(done);
                        match next {
                            Some(b',') => {
                                self.i += 1;
                                self.skip_ws();
                                break;
                            }
                            Some(b']') => self.i += 1,
                            _ => return Err(self.err("Expected ',' or ']' after array element in JSON")),
                        }
                    }
                    Open::Object(obj, key, hash) => {
                        obj.set_js_hashed(std::mem::replace(key, JsStr::Static("")), *hash, done);
                        match next {
                            Some(b',') => {
                                self.i += 1;
                                let (k, h) = self.member_key()?;
                                (*key, *hash) = (k, h);
                                break;
                            }
                            Some(b'}') => self.i += 1,
                            _ => return Err(self.err("Expected ',' or '}' after property value in JSON")),
                        }
                    }
                }
                done = match open.pop() {
                    Some(Open::Array(items)) => Value::Array(items),
                    Some(Open::Object(obj, ..)) => Value::Object(obj),
                    None => unreachable!("the top was just seen"),
                };
            }
        }
    }

    /// `"key" :` and the whitespace around it, leaving the parser at the
    /// member's value.
    fn member_key(&mut self) -> Parsed<(JsStr, u32)> {
        self.skip_ws();
        if self.b.get(self.i) != Some(&b'"') {
            return Err(self.err("Expected property name or '}' in JSON"));
        }
        let key = self.key()?;
        self.skip_ws();
        if self.b.get(self.i) != Some(&b':') {
            return Err(self.err("Expected ':' after property name in JSON"));
        }
        self.i += 1;
        self.skip_ws();
        Ok(key)
    }

    fn literal(&mut self, word: &str, v: Value) -> Parsed<Value> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("Unexpected token"))
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

    /// A property name and its [`Object`] hash.
    fn key(&mut self) -> Parsed<(JsStr, u32)> {
        let start = self.i + 1;
        let n = plain_len(&self.b[start..]);
        if self.b.get(start + n) == Some(&b'"') {
            self.i = start + n + 1;
            let text = &self.text[start..start + n];
            return Ok((JsStr::from(text), hash_bytes(text.as_bytes())));
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
/// the first quote, backslash or control character. Journal lines are mostly
/// string text, and this scan was a replay's largest cost a byte at a time,
/// so it tests eight bytes per step (the zero-byte trick on a `u64`).
#[inline]
pub(crate) fn plain_len(b: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `x` that is zero (exact for the lowest).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let special = zero(x ^ (ONES * u64::from(b'"'))) | zero(x ^ (ONES * u64::from(b'\\'))) | (x.wrapping_sub(ONES * 0x20) & !x);
        let flags = special & HIGH;
        if flags != 0 {
            return i + flags.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + b[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(b.len() - i)
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
