//! The JavaScript values the reducer works on.
//!
//! The old module keeps snapshots as plain JS objects, so what a caller sees
//! depends on JS details that JSON alone cannot carry: `undefined` as a value
//! (a key that exists but is dropped from files), `NaN` and `-0` (kept in
//! memory, written as `null` and `0`), strings with lone surrogates, and V8's
//! property order (integer-like keys first, ascending, then insertion order).
//! This model holds exactly those; `ops` has the abstract operations.
//! An object and the values it holds are one recursive type, so both live
//! here.

use crate::js::string::JsStr;

/// A value owns its children, so copying and dropping one walk it: both do
/// so with a stack of their own past a few levels (see the `Clone` and
/// `Drop` impls below), so that the depth of the caller's data never
/// reaches the native stack.
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

pub static UNDEFINED: Value = Value::Undefined;

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(JsStr::from(s))
    }

    /// The object this is, taken out (values cannot be destructured by
    /// move: they implement `Drop`).
    pub fn into_object(mut self) -> Option<Object> {
        match &mut self {
            Value::Object(o) => Some(std::mem::take(o)),
            _ => None,
        }
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

    /// Property read `x.key`. Only object keys are modelled: every other
    /// property of a primitive or an array is `undefined` to the reducer.
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

    /// Whether this is the string `text`.
    pub fn is_str(&self, text: &str) -> bool {
        self.as_js_str().is_some_and(|s| s.eq_str(text))
    }

    /// `a ?? b`
    pub fn or_nullish(&self, fallback: Value) -> Value {
        if self.is_nullish() { fallback } else { self.clone() }
    }

    /// `a || b`
    pub fn or_falsy(&self, fallback: Value) -> Value {
        if self.truthy() { self.clone() } else { fallback }
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

/// Levels copied by plain recursion before [`Value::clone`] switches to a
/// stack of its own: a few kilobytes of native stack at most, and the rare
/// deeper value pays for one allocation.
const CLONE_RECURSION: u32 = 32;

impl Clone for Value {
    fn clone(&self) -> Value {
        clone_within(self, CLONE_RECURSION)
    }
}

fn clone_within(v: &Value, levels: u32) -> Value {
    match v {
        Value::Undefined => Value::Undefined,
        Value::Null => Value::Null,
        Value::Bool(b) => Value::Bool(*b),
        Value::Number(n) => Value::Number(*n),
        Value::String(s) => Value::String(s.clone()),
        Value::Host(h) => Value::Host(*h),
        Value::Array(_) | Value::Object(_) if levels == 0 => clone_deep(v),
        Value::Array(items) => Value::Array(items.iter().map(|item| clone_within(item, levels - 1)).collect()),
        Value::Object(o) => Value::Object(o.clone_within(levels - 1)),
    }
}

/// A copy being built: what is left of the source, and the copy so far.
enum Copying<'a> {
    Array(std::slice::Iter<'a, Value>, Vec<Value>),
    Object(&'a Object, Object),
}

/// [`Value::clone`] with a heap stack, for any depth.
fn clone_deep(root: &Value) -> Value {
    let mut open: Vec<Copying> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(v) = next.take() {
            let copy = match v {
                Value::Array(items) => {
                    open.push(Copying::Array(items.iter(), Vec::with_capacity(items.len())));
                    None
                }
                Value::Object(o) => {
                    // A prototype is an object the reducer made (`__proto__`
                    // assigned a two-key literal): shallow, copied as it is.
                    let proto = o.proto.as_ref().map(|p| Box::new(p.as_ref().clone()));
                    open.push(Copying::Object(o, Object { entries: Vec::with_capacity(o.len()), proto }));
                    None
                }
                leaf => Some(clone_within(leaf, 0)),
            };
            if let Some(copy) = copy {
                match open.last_mut() {
                    None => return copy,
                    Some(Copying::Array(_, items)) => items.push(copy),
                    Some(Copying::Object(source, o)) => {
                        let e = &source.entries[o.entries.len()];
                        o.entries.push(Entry { key: e.key.clone(), value: copy, hash: e.hash });
                    }
                }
            }
        }
        let child = match open.last_mut() {
            Some(Copying::Array(rest, _)) => rest.next(),
            Some(Copying::Object(source, o)) => source.entries.get(o.entries.len()).map(|e| &e.value),
            None => unreachable!("the walk returns once its root is copied"),
        };
        if child.is_some() {
            next = child;
            continue;
        }
        let done = match open.pop() {
            Some(Copying::Array(_, items)) => Value::Array(items),
            Some(Copying::Object(_, o)) => Value::Object(o),
            None => unreachable!("just seen"),
        };
        match open.last_mut() {
            None => return done,
            Some(Copying::Array(_, items)) => items.push(done),
            Some(Copying::Object(source, o)) => {
                let e = &source.entries[o.entries.len()];
                o.entries.push(Entry { key: e.key.clone(), value: done, hash: e.hash });
            }
        }
    }
}

impl Drop for Value {
    /// Drop glue frees a value one native call per level. A container whose
    /// children hold no containers (most are) is left to it; a deeper one is
    /// taken apart here first, its nested children moved onto a heap stack,
    /// so the glue never goes more than two levels down.
    fn drop(&mut self) {
        if !self.holds_nested() {
            return;
        }
        let mut apart = Vec::new();
        self.move_nested_into(&mut apart);
        while let Some(mut v) = apart.pop() {
            v.move_nested_into(&mut apart);
        }
    }
}

impl Value {
    fn is_nonempty_container(&self) -> bool {
        match self {
            Value::Array(items) => !items.is_empty(),
            Value::Object(o) => !o.entries.is_empty() || o.proto.is_some(),
            _ => false,
        }
    }

    fn holds_nested(&self) -> bool {
        match self {
            Value::Array(items) => items.iter().any(Value::is_nonempty_container),
            Value::Object(o) => o.proto.is_some() || o.entries.iter().any(|e| e.value.is_nonempty_container()),
            _ => false,
        }
    }

    fn move_nested_into(&mut self, apart: &mut Vec<Value>) {
        let children: &mut dyn Iterator<Item = &mut Value> = match self {
            Value::Array(items) => &mut items.iter_mut(),
            Value::Object(o) => {
                if let Some(p) = o.proto.take() {
                    apart.push(*p);
                }
                &mut o.entries.iter_mut().map(|e| &mut e.value)
            }
            _ => return,
        };
        for child in children.filter(|c| c.is_nonempty_container()) {
            apart.push(std::mem::replace(child, Value::Null));
        }
    }
}

/// An ordered property bag with V8's ordering: array-index keys first in
/// ascending numeric order, then every other key in insertion order.
#[derive(Debug, Default)]
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
    /// hit.
    hash: u32,
}

impl Entry {
    #[inline]
    fn is(&self, key: &str, hash: u32) -> bool {
        self.hash == hash && self.key.as_str().is_some_and(|k| text_eq(k, key))
    }
}

impl Clone for Object {
    fn clone(&self) -> Object {
        self.clone_within(CLONE_RECURSION)
    }
}

impl Object {
    fn clone_within(&self, levels: u32) -> Object {
        Object {
            entries: self.entries.iter().map(|e| Entry { key: e.key.clone(), value: clone_within(&e.value, levels), hash: e.hash }).collect(),
            proto: self.proto.as_ref().map(|p| Box::new(clone_within(p, levels))),
        }
    }

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

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.entries.iter_mut().map(|e| &mut e.value)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&JsStr, &Value)> {
        self.entries.iter().map(|e| (&e.key, &e.value))
    }

    /// The `i`th member in order, for walks that keep their place by index.
    pub fn member(&self, i: usize) -> Option<(&JsStr, &Value)> {
        self.entries.get(i).map(|e| (&e.key, &e.value))
    }

    #[inline(always)]
    fn position(&self, key: &str) -> Option<usize> {
        self.position_hashed(key, hash_bytes(key.as_bytes()))
    }

    /// Inlined so that for a literal key the hash folds to a constant.
    #[inline(always)]
    fn position_hashed(&self, key: &str, hash: u32) -> Option<usize> {
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
            None => self.insert_new(JsStr::from(key), hash, value),
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
/// time whatever the length. Keys that share length, head and tail only
/// collide, and a collision costs one text compare, never a wrong hit.
/// `const` so that literal keys fold at compile time.
#[inline]
pub(crate) const fn hash_bytes(b: &[u8]) -> u32 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthiness() {
        assert!(!Value::Number(f64::NAN).truthy());
        assert!(!Value::Number(-0.0).truthy());
        assert!(!Value::str("").truthy());
        assert!(Value::str("0").truthy());
        assert!(Value::Array(vec![]).truthy());
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
    fn keys_are_found_by_hash_and_text() {
        let mut o = Object::new();
        let keys = ["", "a", "ab", "abc", "abcd", "abcdefgh", "abcdefghi", "generationCanceledAt", "generationCompletedAt"];
        for k in keys {
            o.set(k, Value::str(k));
        }
        for k in keys {
            assert!(o.get(k).is_some_and(|v| v.is_str(k)), "{k}");
        }
        assert!(o.get("abcdefgz").is_none());
    }
}
