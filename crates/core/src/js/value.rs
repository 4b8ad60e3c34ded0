//! The JavaScript value model the reducer works on.
//!
//! The old module keeps snapshots as plain JS objects, so what a caller sees
//! depends on JS details that JSON alone cannot carry: `undefined` as a value
//! (a key that exists but is dropped from files), `NaN` and `-0` (kept in
//! memory, written as `null` and `0`), strings with lone surrogates, and V8's
//! property order (integer-like keys first, ascending, then insertion order).
//! This module models exactly those values and the handful of abstract
//! operations the reducer needs (`ToNumber`, `ToString`, truthiness, `>=`).

use std::cmp::Ordering;

/// A JavaScript string. Almost every string is valid UTF-16 and is kept as
/// UTF-8 text; one holding a lone surrogate (legal in JS and in JSON via
/// `\udXXX` escapes) is kept as raw UTF-16 so it round-trips unchanged.
/// Invariant: `Utf16` always contains at least one lone surrogate, so it never
/// holds a string equal to one of the UTF-8 variants. Which UTF-8 variant
/// holds a text is not observable: everything compares through `as_str`.
#[derive(Debug)]
pub enum JsStr {
    Utf8(String),
    /// A well-known key (`seq`, `phase`, ...): no allocation per occurrence,
    /// which is most of what replaying a long journal would otherwise allocate.
    Static(&'static str),
    /// Short text (ids, event types, timestamps, urls) held in place: no
    /// allocation to parse, copy or free it, at no cost in size.
    Inline(InlineStr),
    Utf16(Vec<u16>),
}

pub use inline::InlineStr;

mod inline {
    /// Bytes held in place: with the length byte, 31 bytes, padded to 32.
    /// ISO timestamps (24) and most ids, types and short paths fit.
    pub const CAPACITY: usize = 30;

    /// UTF-8 text of at most [`CAPACITY`] bytes, stored in place.
    /// Invariant: `bytes[..len]` is a copy of a `&str`, hence valid UTF-8;
    /// the fields are private to this module so nothing else can break it.
    ///
    /// Aligned to 8 so it starts on a word after `JsStr`'s tag: unaligned,
    /// it sat one byte past the tag and every move of a string (returned by
    /// the parser, pushed into an object, cloned) was copied in odd-sized
    /// pieces that stalled on store forwarding. Aligned, parsing a small
    /// plan object went from about 600 to 470 ns, for 8 bytes more per
    /// `JsStr` (an object entry is 88 bytes instead of 80).
    #[derive(Clone, Copy)]
    #[repr(C, align(8))]
    pub struct InlineStr {
        len: u8,
        bytes: [u8; CAPACITY],
    }

    impl InlineStr {
        #[inline]
        pub fn new(s: &str) -> Option<InlineStr> {
            if s.len() > CAPACITY {
                return None;
            }
            let mut bytes = [0u8; CAPACITY];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Some(InlineStr { len: s.len() as u8, bytes })
        }

        #[inline]
        pub fn as_str(&self) -> &str {
            let b = &self.bytes[..usize::from(self.len)];
            // SAFETY: `new` is the only constructor and copies `len` bytes of
            // a `&str`, so `b` is valid UTF-8; it runs on every property read
            // and string compare, where re-validating would cost a scan.
            unsafe { std::str::from_utf8_unchecked(b) }
        }
    }

    impl std::fmt::Debug for InlineStr {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.as_str().fmt(f)
        }
    }
}

impl Clone for JsStr {
    /// The variants that own nothing are copied whole, in two aligned moves:
    /// the derived clone rebuilt them field by field through the stack, and
    /// cloning a plan object of a dozen short strings took about 330 ns
    /// instead of 160.
    #[inline]
    fn clone(&self) -> JsStr {
        match self {
            JsStr::Utf8(s) => JsStr::Utf8(s.clone()),
            JsStr::Utf16(u) => JsStr::Utf16(u.clone()),
            // SAFETY: `Static` holds a `&'static str` and `Inline` a `Copy`
            // array; neither owns memory, so a bitwise copy is a valid clone
            // and nothing is freed twice.
            JsStr::Static(_) | JsStr::Inline(_) => unsafe { std::ptr::read(self) },
        }
    }
}

impl JsStr {
    pub fn from_utf16(units: Vec<u16>) -> JsStr {
        match String::from_utf16(&units) {
            Ok(s) => JsStr::Utf8(s),
            Err(_) => JsStr::Utf16(units),
        }
    }

    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsStr::Utf8(s) => Some(s),
            JsStr::Static(s) => Some(s),
            JsStr::Inline(s) => Some(s.as_str()),
            JsStr::Utf16(_) => None,
        }
    }

    /// A key as parsed, with its [`Object`] hash: interned when it is one
    /// the store knows.
    #[inline]
    pub fn key(s: &str) -> (JsStr, u32) {
        let hash = hash_bytes(s.as_bytes());
        (JsStr::interned_or_owned(s, hash), hash)
    }

    #[inline]
    fn interned_or_owned(s: &str, hash: u32) -> JsStr {
        match intern(s, hash) {
            Some(k) => JsStr::Static(k),
            None => JsStr::from(s),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            JsStr::Utf16(u) => u.is_empty(),
            other => other.as_str().is_some_and(str::is_empty),
        }
    }

    pub fn eq_str(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }

    /// The UTF-16 code units, the unit JS compares and indexes strings by.
    pub fn units(&self) -> Box<dyn Iterator<Item = u16> + '_> {
        match self {
            JsStr::Utf16(u) => Box::new(u.iter().copied()),
            other => Box::new(other.as_str().unwrap_or_default().encode_utf16()),
        }
    }

    /// Lossy text for error messages and file names (lone surrogates become U+FFFD).
    pub fn to_lossy(&self) -> String {
        match self {
            JsStr::Utf16(u) => String::from_utf16_lossy(u),
            other => other.as_str().unwrap_or_default().to_owned(),
        }
    }
}

impl PartialEq for JsStr {
    fn eq(&self, other: &JsStr) -> bool {
        match (self, other) {
            (JsStr::Utf16(a), JsStr::Utf16(b)) => a == b,
            (JsStr::Utf16(_), _) | (_, JsStr::Utf16(_)) => false,
            (a, b) => a.as_str() == b.as_str(),
        }
    }
}

impl From<&str> for JsStr {
    #[inline]
    fn from(s: &str) -> JsStr {
        match InlineStr::new(s) {
            Some(inline) => JsStr::Inline(inline),
            None => JsStr::Utf8(s.to_owned()),
        }
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> JsStr {
        JsStr::Utf8(s)
    }
}

#[derive(Debug)]
pub enum Value {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(JsStr),
    Array(Vec<Value>),
    Object(Object),
    /// A value only the host can hold (a function or a symbol in an event),
    /// by handle. JSON drops it as it drops `undefined`; in memory the host
    /// hands the very same value back.
    Host(u32),
}

impl Clone for Value {
    /// As for [`JsStr`]: the variants that own nothing are copied whole.
    #[inline]
    fn clone(&self) -> Value {
        match self {
            Value::String(s @ (JsStr::Utf8(_) | JsStr::Utf16(_))) => Value::String(s.clone()),
            Value::Array(items) => Value::Array(items.clone()),
            Value::Object(o) => Value::Object(o.clone()),
            // SAFETY: every other variant (including strings held in place or
            // static) owns no memory, so a bitwise copy is a valid clone and
            // nothing is freed twice.
            _ => unsafe { std::ptr::read(self) },
        }
    }
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(JsStr::from(s))
    }

    pub fn is_nullish(&self) -> bool {
        matches!(self, Value::Undefined | Value::Null)
    }

    /// JS truthiness (`if (x)`, `x || y`).
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => !(n.is_nan() || *n == 0.0),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) | Value::Host(_) => true,
        }
    }

    /// `typeof x === 'object' && x !== null` (arrays included).
    pub fn is_object_like(&self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }

    /// Property read `x.key`. Only object keys are modelled: the reducer never
    /// reads `length` or indices through this path, and every other property
    /// of a primitive or array is `undefined`.
    pub fn get(&self, key: &str) -> &Value {
        match self {
            Value::Object(o) => o.get(key).unwrap_or(&UNDEFINED),
            _ => &UNDEFINED,
        }
    }

    pub fn as_js_str(&self) -> Option<&JsStr> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// `a ?? b`
    pub fn or_nullish(&self, fallback: Value) -> Value {
        if self.is_nullish() { fallback } else { self.clone() }
    }

    /// `a || b`
    pub fn or_falsy(&self, fallback: Value) -> Value {
        if self.truthy() { self.clone() } else { fallback }
    }

    /// `Number(x)`.
    pub fn to_number(&self) -> f64 {
        match self {
            Value::Undefined => f64::NAN,
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Number(n) => *n,
            Value::String(s) => string_to_number(s),
            Value::Array(_) | Value::Object(_) => string_to_number(&self.to_js_string()),
            Value::Host(_) => f64::NAN,
        }
    }

    /// `Number(x)`, or the TypeError it raises.
    pub fn try_to_number(&self) -> Result<f64, String> {
        match self {
            Value::Array(_) | Value::Object(_) => Ok(string_to_number(&self.try_to_js_string()?)),
            other => Ok(other.to_number()),
        }
    }

    /// `String(x)`, or the TypeError it raises: an object parsed from JSON
    /// that owns a `toString` key has no callable conversion left (its own
    /// `toString` is not a function and `valueOf` returns the object).
    pub fn try_to_js_string(&self) -> Result<JsStr, String> {
        match self {
            Value::Object(o) if o.get("toString").is_some() && !matches!(o.get("toString"), Some(Value::Host(_))) => {
                Err(NOT_PRIMITIVE.to_owned())
            }
            Value::Array(items) => {
                for item in items {
                    if !item.is_nullish() {
                        item.try_to_js_string()?;
                    }
                }
                Ok(self.to_js_string())
            }
            other => Ok(other.to_js_string()),
        }
    }

    /// `String(x)` (objects through their default `toString`).
    pub fn to_js_string(&self) -> JsStr {
        match self {
            Value::Undefined => JsStr::from("undefined"),
            Value::Null => JsStr::from("null"),
            Value::Bool(b) => JsStr::from(if *b { "true" } else { "false" }),
            Value::Number(n) => JsStr::Utf8(number_to_string(*n)),
            Value::String(s) => s.clone(),
            Value::Object(_) => JsStr::from("[object Object]"),
            Value::Array(items) => join_array(items),
            Value::Host(_) => JsStr::from("[host value]"),
        }
    }

    /// `a === b` for the primitives the reducer compares.
    pub fn strict_equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Host(a), Value::Host(b)) => a == b,
            _ => false,
        }
    }
}

pub static UNDEFINED: Value = Value::Undefined;

/// The keys events repeat on every line, beside the snapshot's own.
const EVENT_KEYS: [&str; 23] = [
    "seq", "type", "ts", "event", "revision", "revisionDomain", "reason", "owner", "variant", "variantId", "count",
    "at", "durationMs", "plan", "waivers", "url", "error", "message", "file", "token", "line", "screenshotPath",
    "carbonize",
];

const BASE: [&str; 32] = crate::session::reducer::BASE_KEYS;
const KNOWN_KEYS: [&str; BASE.len() + EVENT_KEYS.len()] = {
    let mut all = [""; BASE.len() + EVENT_KEYS.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < BASE.len() { BASE[i] } else { EVENT_KEYS[i - BASE.len()] };
        i += 1;
    }
    all
};

/// Every known key is ASCII letters only, so the interned keys (the only
/// `JsStr::Static` values) are JSON strings as they stand: written without
/// an escape scan (`json::write_string`). The build fails otherwise.
const _: () = {
    let mut i = 0;
    while i < KNOWN_KEYS.len() {
        let b = KNOWN_KEYS[i].as_bytes();
        let mut j = 0;
        while j < b.len() {
            assert!(b[j].is_ascii_alphabetic(), "a known key needs escaping in JSON");
            j += 1;
        }
        i += 1;
    }
};

/// Table over [`KNOWN_KEYS`] by [`hash_bytes`]: slot holds index + 1, 0 is
/// empty. Built at compile time, and sized so that every known key has a
/// slot of its own (the build fails otherwise): interning a parsed key then
/// costs one hash (which the object needs anyway) and one compare, and every
/// base key's slot says where the snapshot keeps it. With a smaller table,
/// four base keys (`mountedVariants` among them, read twice per event) lost
/// their slot to a collision and every read of them scanned the snapshot.
const INTERN_SLOTS: usize = 2048;
static INTERN_TABLE: [u8; INTERN_SLOTS] = {
    let mut table = [0u8; INTERN_SLOTS];
    let mut i = 0;
    while i < KNOWN_KEYS.len() {
        let slot = hash_bytes(KNOWN_KEYS[i].as_bytes()) as usize % INTERN_SLOTS;
        assert!(table[slot] == 0, "two known keys share an intern slot: grow INTERN_SLOTS");
        table[slot] = (i + 1) as u8;
        i += 1;
    }
    table
};

/// Where the base snapshot holds the key with this hash, if it is one of its
/// keys (a guess: the caller still compares). A snapshot keeps those keys
/// first and in order, and the reducer reads a dozen of them per event, so
/// trying this slot first spares scanning up to 32 hashes each time.
#[inline]
fn base_position(hash: u32) -> Option<usize> {
    let i = usize::from(INTERN_TABLE[hash as usize % INTERN_SLOTS]).checked_sub(1)?;
    (i < BASE.len()).then_some(i)
}

/// The interned copy of `s`, given `hash == hash_bytes(s)`.
#[inline]
fn intern(s: &str, hash: u32) -> Option<&'static str> {
    let known = KNOWN_KEYS[usize::from(INTERN_TABLE[hash as usize % INTERN_SLOTS]).checked_sub(1)?];
    (known == s).then_some(known)
}

fn join_array(items: &[Value]) -> JsStr {
    let mut units: Vec<u16> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            units.push(u16::from(b','));
        }
        if !item.is_nullish() && !matches!(item, Value::Host(_)) {
            units.extend(item.to_js_string().units());
        }
    }
    JsStr::from_utf16(units)
}

/// `a >= b` with JS's abstract relational comparison: both sides go to
/// primitives, two strings compare by UTF-16 code units, anything else
/// compares as numbers (NaN makes it false).
pub fn loose_ge(a: &Value, b: &Value) -> bool {
    try_loose_ge(a, b).unwrap_or(false)
}

/// [`loose_ge`] with the TypeError JS raises for an object that cannot be
/// made primitive.
pub fn try_loose_ge(a: &Value, b: &Value) -> Result<bool, String> {
    let pa = to_primitive(a)?;
    let pb = to_primitive(b)?;
    if let (Value::String(x), Value::String(y)) = (&pa, &pb) {
        return Ok(x.units().cmp(y.units()) != Ordering::Less);
    }
    let (x, y) = (pa.to_number(), pb.to_number());
    Ok(!(x.is_nan() || y.is_nan()) && x >= y)
}

fn to_primitive(v: &Value) -> Result<Value, String> {
    match v {
        Value::Array(_) | Value::Object(_) => v.try_to_js_string().map(Value::String),
        other => Ok(other.clone()),
    }
}

pub const NOT_PRIMITIVE: &str = "Cannot convert object to primitive value";

/// `Number.isInteger(x)`.
pub fn is_integer(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.is_finite() && n.trunc() == *n)
}

/// JS whitespace and line terminators, what `String.prototype.trim` removes.
pub fn is_js_space(u: u16) -> bool {
    matches!(
        u,
        0x09 | 0x0A | 0x0B | 0x0C | 0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A
            | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

pub fn js_trim_is_empty(s: &str) -> bool {
    s.encode_utf16().all(is_js_space)
}

/// `StringToNumber`: what `Number(' 3 ')`, `Number('0x10')` and friends give.
pub fn string_to_number(s: &JsStr) -> f64 {
    let units: Vec<u16> = s.units().collect();
    let start = units.iter().position(|u| !is_js_space(*u));
    let Some(start) = start else { return 0.0 };
    let end = units.iter().rposition(|u| !is_js_space(*u)).map_or(start, |e| e + 1);
    let Ok(text) = String::from_utf16(&units[start..end]) else { return f64::NAN };
    parse_numeric_literal(&text)
}

fn parse_numeric_literal(t: &str) -> f64 {
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            return parse_radix(&t[2..], radix);
        }
    }
    let (sign, body) = match b.first() {
        Some(b'+') => (1.0, &t[1..]),
        Some(b'-') => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(body) {
        return f64::NAN;
    }
    body.parse::<f64>().map_or(f64::NAN, |n| sign * n)
}

fn parse_radix(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    let mut acc = 0f64;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => acc = acc * f64::from(radix) + f64::from(d),
            None => return f64::NAN,
        }
    }
    acc
}

/// StrUnsignedDecimalLiteral: digits with an optional fraction and exponent,
/// at least one digit in the mantissa (`5.`, `.5` are fine, `.` is not).
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = count_digits(&b[i..]);
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `Number.prototype.toString()` (radix 10): the shortest digits that round
/// trip, laid out by the ECMAScript rules (`1e+21`, `5e-324`, `0.000001`).
pub fn number_to_string(n: f64) -> String {
    // Integers below 2^53 (sequence numbers, sizes, timestamps) print as
    // themselves; only the rest need the shortest-digits layout.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 && n != 0.0 {
        return (n as i64).to_string();
    }
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n < 0.0 {
        return format!("-{}", number_to_string(-n));
    }
    let sci = format!("{:e}", n);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    layout_digits(&digits, exp + 1)
}

/// Digits `d1..dk` with the decimal point after position `n` (k, n as in the
/// spec's Number::toString).
fn layout_digits(digits: &str, n: i32) -> String {
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        format!("{}{}", digits, "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{}e{}{}", first, sign, e.abs())
        } else {
            format!("{}.{}e{}{}", first, rest, sign, e.abs())
        }
    }
}

/// An ordered property bag with V8's ordering: array-index keys first in
/// ascending numeric order, then every other key in insertion order.
#[derive(Clone, Debug, Default)]
pub struct Object {
    /// One allocation per object: a parsed event builds several objects per
    /// line, and a second vector of hashes doubled their allocations.
    entries: Vec<Entry>,
    /// A prototype other than `Object.prototype`. Only `obj.__proto__ = {...}`
    /// (an agent phase named `__proto__`) sets one; spreads and JSON drop it.
    proto: Option<Box<Value>>,
}

#[derive(Clone, Debug)]
struct Entry {
    key: JsStr,
    value: Value,
    /// `key_hash(&key)`: lookups compare these and compare text only on a
    /// hit, which matters for a 32-key snapshot read dozens of times per
    /// replayed event.
    hash: u32,
}

impl Entry {
    #[inline]
    fn is(&self, key: &str, hash: u32) -> bool {
        self.hash == hash && self.key.as_str().is_some_and(|k| text_eq(k, key))
    }
}

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    pub fn with_capacity(n: usize) -> Object {
        Object { entries: Vec::with_capacity(n), proto: None }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A hash of the key list in order (from the per-key hashes already
    /// kept), for caches keyed by an object's shape.
    pub fn shape_hash(&self) -> u64 {
        self.entries.iter().fold(self.entries.len() as u64, |h, e| (h.rotate_left(5) ^ u64::from(e.hash)).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&JsStr, &Value)> {
        self.entries.iter().map(|e| (&e.key, &e.value))
    }

    #[inline(always)]
    fn position(&self, key: &str) -> Option<usize> {
        self.position_hashed(key, hash_bytes(key.as_bytes()))
    }

    /// Inlined so that, for a literal key (most of the reducer's reads),
    /// the hash and the base slot fold to constants and the usual hit is
    /// one compare at a known index; only a miss calls out to the scan.
    #[inline(always)]
    fn position_hashed(&self, key: &str, hash: u32) -> Option<usize> {
        if let Some(i) = base_position(hash) {
            if self.entries.get(i).is_some_and(|e| e.is(key, hash)) {
                return Some(i);
            }
        }
        self.scan(key, hash)
    }

    #[inline(never)]
    fn scan(&self, key: &str, hash: u32) -> Option<usize> {
        self.entries.iter().position(|e| e.is(key, hash))
    }

    fn position_js(&self, key: &JsStr) -> Option<usize> {
        self.position_js_hashed(key, key_hash(key))
    }

    fn position_js_hashed(&self, key: &JsStr, hash: u32) -> Option<usize> {
        match key.as_str() {
            Some(s) => self.position_hashed(s, hash),
            None => self.entries.iter().position(|e| e.hash == hash && e.key == *key),
        }
    }

    #[inline(always)]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].value)
    }

    #[inline(always)]
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position(key).map(move |i| &mut self.entries[i].value)
    }

    pub fn contains_key(&self, key: &JsStr) -> bool {
        self.position_js(key).is_some()
    }

    /// `obj[key] = value` as a data property: an existing key keeps its place.
    #[inline(always)]
    pub fn set(&mut self, key: &str, value: Value) {
        let hash = hash_bytes(key.as_bytes());
        match self.position_hashed(key, hash) {
            Some(i) => self.entries[i].value = value,
            None => self.insert_new(JsStr::interned_or_owned(key, hash), hash, value),
        }
    }

    pub fn set_js(&mut self, key: JsStr, value: Value) {
        let hash = key_hash(&key);
        self.set_js_hashed(key, hash, value);
    }

    /// [`Object::set_js`] for a caller that already has `hash == key_hash(&key)`.
    pub fn set_js_hashed(&mut self, key: JsStr, hash: u32, value: Value) {
        match self.position_js_hashed(&key, hash) {
            Some(i) => self.entries[i].value = value,
            None => self.insert_new(key, hash, value),
        }
    }

    /// `obj[key] = value` for a parser building an object from text: no
    /// prototype, no base-slot guess (parsed objects are rarely snapshots),
    /// and a plain key that is not an index simply goes last.
    pub(crate) fn set_parsed(&mut self, key: JsStr, hash: u32, value: Value) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.hash == hash && e.key == key) {
            e.value = value;
            return;
        }
        let first = match &key {
            JsStr::Utf16(_) => 0,
            k => k.as_str().map_or(0, |s| s.as_bytes().first().copied().unwrap_or(0)),
        };
        if first.is_ascii_digit() {
            self.insert_new(key, hash, value);
        } else {
            self.entries.push(Entry { key, value, hash });
        }
    }

    fn insert_new(&mut self, key: JsStr, hash: u32, value: Value) {
        // Index keys lead in ascending order, so "index below `idx`" holds
        // for a prefix of all entries and the insertion point is where it
        // stops holding; any other key goes last.
        let at = match array_index(&key) {
            Some(idx) => self.entries.partition_point(|e| array_index(&e.key).is_some_and(|i| i < idx)),
            None => self.entries.len(),
        };
        self.entries.insert(at, Entry { key, value, hash });
    }

    pub fn proto(&self) -> Option<&Value> {
        self.proto.as_deref()
    }

    /// `obj.__proto__ = value` where `obj` has no own `__proto__` key: an
    /// object value becomes the prototype, anything else is ignored.
    pub fn assign_proto(&mut self, value: Value) {
        if value.is_object_like() || matches!(value, Value::Null) {
            self.proto = Some(Box::new(value));
        }
    }

    /// What `{ ...obj }` keeps: the own keys, not the prototype.
    pub fn without_proto(&self) -> Option<Object> {
        self.proto.as_ref().map(|_| Object { entries: self.entries.clone(), proto: None })
    }

    /// `delete obj[key]`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        Some(self.entries.remove(i).value)
    }
}

/// `a == b`, inline: keys are short, and on a hash hit they are almost
/// always equal, so a library `memcmp` call per lookup cost more than the
/// compare. Interned keys are usually the very same bytes.
#[inline]
fn text_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if std::ptr::eq(a.as_ptr(), b.as_ptr()) {
        return true;
    }
    let n = a.len();
    if (8..=16).contains(&n) {
        return load_le(a, 0, 8) == load_le(b, 0, 8) && load_le(a, n - 8, 8) == load_le(b, n - 8, 8);
    }
    a == b
}

/// The hash lookups compare before comparing text. A UTF-16 key always holds
/// a lone surrogate, so it never equals a UTF-8 one and may hash its units
/// (FNV-1a) instead.
pub fn key_hash(key: &JsStr) -> u32 {
    match key.as_str() {
        Some(s) => hash_bytes(s.as_bytes()),
        None => key.units().fold(0x811c_9dc5u32, |h, u| (h ^ u32::from(u)).wrapping_mul(0x0100_0193)),
    }
}

/// A hash of a key's length and its first and last eight bytes: constant
/// time whatever the length, because a replayed event looks up dozens of
/// keys of up to 29 bytes in the snapshot, and a byte-at-a-time hash was a
/// serial multiply chain per byte. Keys that share length, head and tail
/// only collide, and a collision costs one text compare, never a wrong hit.
/// `const` so the intern table and literal keys fold at compile time.
#[inline]
const fn hash_bytes(b: &[u8]) -> u32 {
    let n = b.len();
    let (head, tail) = if n >= 8 {
        (load_le(b, 0, 8), load_le(b, n - 8, 8))
    } else if n >= 4 {
        (load_le(b, 0, 4), load_le(b, n - 4, 4))
    } else if n > 0 {
        ((b[0] as u64) | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16, 0)
    } else {
        (0, 0)
    };
    let x = (head ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ tail.rotate_left(31) ^ n as u64;
    let x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    (x >> 32) as u32
}

/// `len` bytes (at most 8) of `b` from `at`, little-endian.
const fn load_le(b: &[u8], at: usize, len: usize) -> u64 {
    let mut v = 0u64;
    let mut i = 0;
    while i < len {
        v |= (b[at + i] as u64) << (8 * i);
        i += 1;
    }
    v
}

/// A canonical array index (`"0"`, `"17"`, below 2^32 - 1), which V8 orders
/// before all other keys.
pub fn array_index(key: &JsStr) -> Option<u32> {
    let s = key.as_str()?;
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let n: u64 = s.parse().ok()?;
    if n < u64::from(u32::MAX) { Some(n as u32) } else { None }
}

/// `{ ...x }` for a source of any type: objects copy their own keys, arrays and
/// strings contribute their indices, other primitives contribute nothing.
pub fn spread_object(source: &Value) -> Object {
    let mut out = Object::new();
    match source {
        Value::Object(o) => out = o.without_proto().unwrap_or_else(|| o.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                out.set(&i.to_string(), item.clone());
            }
        }
        Value::String(s) => {
            for (i, unit) in s.units().enumerate() {
                out.set(&i.to_string(), Value::String(JsStr::from_utf16(vec![unit])));
            }
        }
        _ => {}
    }
    out
}

/// `[...x]` for an iterable source. Strings iterate by code point; anything
/// that is not iterable is the TypeError V8 raises.
pub fn spread_array(source: &Value, what: &str) -> Result<Vec<Value>, String> {
    match source {
        Value::Array(items) => Ok(items.clone()),
        Value::String(s) => Ok(string_code_points(s)),
        other => Err(not_iterable_message(other, what)),
    }
}

fn string_code_points(s: &JsStr) -> Vec<Value> {
    let units: Vec<u16> = s.units().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < units.len() {
        let hi = units[i];
        let pair = (0xD800..0xDC00).contains(&hi)
            && units.get(i + 1).is_some_and(|lo| (0xDC00..0xE000).contains(lo));
        let width = if pair { 2 } else { 1 };
        out.push(Value::String(JsStr::from_utf16(units[i..i + width].to_vec())));
        i += width;
    }
    out
}

/// V8 names the spread expression itself: `(snapshot.x || []) is not iterable`.
fn not_iterable_message(_v: &Value, what: &str) -> String {
    format!("{} is not iterable", what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_text_matches_js() {
        let cases = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (5e-324, "5e-324"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (123.456, "123.456"),
            (-0.0, "0"),
            (f64::NAN, "NaN"),
            (-1.5e300, "-1.5e+300"),
            (9007199254740993.0, "9007199254740992"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "Infinity"),
        ];
        for (n, want) in cases {
            assert_eq!(number_to_string(n), want, "{n:e}");
        }
    }

    #[test]
    fn to_number_coerces_like_js() {
        let s = |x: &str| Value::str(x).to_number();
        assert_eq!(s(" 3 "), 3.0);
        assert_eq!(s("0x10"), 16.0);
        assert_eq!(s("1e1"), 10.0);
        assert_eq!(s(""), 0.0);
        assert_eq!(s("\u{a0}\n"), 0.0);
        assert_eq!(s(".5"), 0.5);
        assert_eq!(s("5."), 5.0);
        assert_eq!(s("-Infinity"), f64::NEG_INFINITY);
        assert!(s("-0x10").is_nan());
        assert!(s("inf").is_nan());
        assert!(s("1_000").is_nan());
        assert!(s(".").is_nan());
        assert_eq!(Value::Array(vec![Value::Number(2.0)]).to_number(), 2.0);
        assert_eq!(Value::Array(vec![]).to_number(), 0.0);
        assert!(Value::Array(vec![Value::Number(1.0), Value::Number(2.0)]).to_number().is_nan());
        assert_eq!(Value::Bool(true).to_number(), 1.0);
        assert_eq!(Value::Null.to_number(), 0.0);
        assert!(Value::Undefined.to_number().is_nan());
        assert!(Value::Object(Object::new()).to_number().is_nan());
    }

    #[test]
    fn relational_compare_mixed_types() {
        let n = Value::Number;
        assert!(loose_ge(&Value::str("10"), &n(9.0)));
        assert!(!loose_ge(&Value::str("10"), &Value::str("9")));
        assert!(loose_ge(&Value::Null, &n(0.0)));
        assert!(!loose_ge(&Value::Undefined, &n(0.0)));
        assert!(loose_ge(&Value::Array(vec![n(2.0)]), &n(2.0)));
        assert!(loose_ge(&Value::Bool(true), &n(1.0)));
        assert!(!loose_ge(&Value::str("abc"), &n(0.0)));
    }

    #[test]
    fn object_orders_index_keys_first() {
        let mut o = Object::new();
        o.set("b", Value::Null);
        o.set("10", Value::Null);
        o.set("a", Value::Null);
        o.set("2", Value::Null);
        o.set("4294967295", Value::Null);
        o.set("01", Value::Null);
        let keys: Vec<String> = o.iter().map(|(k, _)| k.to_lossy()).collect();
        assert_eq!(keys, ["2", "10", "b", "a", "4294967295", "01"]);
        o.remove("2");
        o.set("1", Value::Null);
        let keys: Vec<String> = o.iter().map(|(k, _)| k.to_lossy()).collect();
        assert_eq!(keys, ["1", "10", "b", "a", "4294967295", "01"]);
    }

    #[test]
    fn known_keys_intern_and_others_do_not() {
        for k in KNOWN_KEYS {
            assert!(matches!(JsStr::key(k).0, JsStr::Static(s) if s == k), "{k}");
        }
        for (i, k) in BASE.iter().enumerate() {
            assert_eq!(base_position(hash_bytes(k.as_bytes())), Some(i), "{k} has its own slot");
        }
        for k in ["", "x", "Phase", "phase ", "seqs", "generationCanceledAtX"] {
            assert!(!matches!(JsStr::key(k).0, JsStr::Static(_)), "{k}");
        }
        let mut o = Object::new();
        for k in KNOWN_KEYS.iter().chain(["", "a", "ab", "abc", "abcd", "abcdefgh", "abcdefghi"].iter()) {
            o.set(k, Value::str(k));
        }
        for (k, v) in o.iter() {
            assert!(o.get(k.as_str().unwrap()).unwrap().strict_equals(v));
        }
        // Base keys out of their usual slots are still found, and only where they are.
        let mut reversed = Object::new();
        for k in BASE.iter().rev().skip(1) {
            reversed.set(k, Value::str(k));
        }
        for k in BASE.iter().rev().skip(1) {
            assert!(reversed.get(k).unwrap().strict_equals(&Value::str(k)), "{k}");
        }
        assert!(reversed.get(BASE[BASE.len() - 1]).is_none());
    }

    /// Clones copy the variants that own nothing bitwise: each clone must
    /// equal its source, and owning variants must be deep copies (dropping
    /// one side leaves the other intact, and nothing is freed twice).
    #[test]
    fn clones_of_every_variant_are_equal_and_independent() {
        let long = "a string longer than thirty bytes, so it owns a heap buffer";
        let strings = [
            JsStr::from("short"),
            JsStr::from(long),
            JsStr::key("phase").0,
            JsStr::from_utf16(vec![0xd800, 0x61]),
            JsStr::from(""),
        ];
        assert!(matches!(strings[0], JsStr::Inline(_)) && matches!(strings[1], JsStr::Utf8(_)));
        assert!(matches!(strings[2], JsStr::Static(_)) && matches!(strings[3], JsStr::Utf16(_)));
        for s in &strings {
            let c = s.clone();
            assert!(c == *s, "{s:?}");
            drop(c);
            assert!(s.clone() == *s, "source intact after its clone is dropped: {s:?}");
        }
        let mut o = Object::new();
        for (i, s) in strings.iter().enumerate() {
            o.set(&format!("k{i}"), Value::String(s.clone()));
        }
        o.assign_proto(Value::Object(obj_of(&[("p", Value::Number(1.0))])));
        let scalars = [Value::Undefined, Value::Null, Value::Bool(true), Value::Number(-0.0), Value::Number(f64::NAN), Value::Host(7)];
        let tree = Value::Array(scalars.iter().cloned().chain([Value::Object(o)]).collect());
        let copy = tree.clone();
        assert_eq!(format!("{copy:?}"), format!("{tree:?}"));
        let Value::Array(items) = &copy else { unreachable!() };
        assert!(items[3].to_number().is_sign_negative() && items[4].to_number().is_nan());
        assert!(matches!(items[5], Value::Host(7)));
        drop(tree);
        assert_eq!(items[6].get("k1").as_js_str().and_then(JsStr::as_str), Some(long));
        assert!(matches!(&items[6], Value::Object(o) if o.proto().is_some()));
    }

    fn obj_of(pairs: &[(&str, Value)]) -> Object {
        let mut o = Object::new();
        for (k, v) in pairs {
            o.set(k, v.clone());
        }
        o
    }

    #[test]
    fn truthiness() {
        assert!(!Value::Number(f64::NAN).truthy());
        assert!(!Value::Number(-0.0).truthy());
        assert!(!Value::str("").truthy());
        assert!(Value::str("0").truthy());
        assert!(Value::Array(vec![]).truthy());
    }

    #[test]
    fn spreads() {
        let o = spread_object(&Value::str("ab"));
        assert_eq!(o.len(), 2);
        assert!(spread_array(&Value::Number(5.0), "x").is_err());
        assert_eq!(spread_array(&Value::str("a\u{1F600}"), "x").unwrap().len(), 2);
    }
}

