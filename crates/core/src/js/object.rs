//! The object map: a JavaScript object's own properties in V8's order.
//! Its values are [`Value`]s, which hold objects in turn: the two are one
//! recursive type, split as serde_json splits `Value` and `Map`.

use std::collections::{btree_map, BTreeMap};
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

use crate::js::string::JsStr;
use crate::js::value::{clone_within, Value, CLONE_RECURSION};

/// An ordered property bag with V8's ordering: array-index keys first in
/// ascending numeric order, then every other key in insertion order.
/// Every operation costs the same whatever order the keys came in, and
/// a lookup stays constant-time however many keys there are (the old
/// module's objects do too, and callers' events may be wide).
#[derive(Debug, Default)]
pub struct Object {
    /// The keys that are not array indices, in insertion order. One
    /// allocation per object: a parsed event builds several objects per
    /// line, and most have a handful of plain keys and nothing else.
    named: Vec<Entry>,
    /// What few objects need, out of line so that an object stays small.
    rare: Option<Box<Rare>>,
}

#[derive(Debug)]
struct Entry {
    key: JsStr,
    value: Value,
    /// `key_hash(&key)`: scans compare these and compare text only on a
    /// hit.
    hash: u32,
}

impl Entry {
    #[inline]
    fn is(&self, key: &str, hash: u32) -> bool {
        self.hash == hash && self.key.as_str().is_some_and(|k| text_eq(k, key))
    }
}

#[derive(Debug, Default)]
struct Rare {
    /// Array-index keys by index: a tree keeps them ascending whatever
    /// order they are set in.
    indexed: BTreeMap<u32, (JsStr, Value)>,
    /// Where each named key sits, once there are too many to scan.
    positions: Option<Positions>,
    /// A prototype other than `Object.prototype`. Only `obj.__proto__ = {...}`
    /// (an agent phase named `__proto__`) sets one; spreads and JSON drop it.
    proto: Option<Box<Value>>,
}

/// More named keys than this and lookups go through [`Positions`]: below
/// it a scan of the entries' short hashes is faster than hashing the key.
const SCAN_LIMIT: usize = 32;

/// The positions in `named` by key: the table holds only positions, and
/// hashes whole keys with per-table random keys, so no choice of keys
/// makes lookups collide.
#[derive(Clone, Debug)]
struct Positions {
    table: HashTable<usize>,
    hasher: RandomState,
}

impl Positions {
    fn of(named: &[Entry]) -> Positions {
        let mut p = Positions { table: HashTable::with_capacity(named.len()), hasher: RandomState::new() };
        for (i, e) in named.iter().enumerate() {
            p.add(named, i, &e.key);
        }
        p
    }

    fn hash(&self, key: &JsStr) -> u64 {
        hash_key(&self.hasher, key)
    }

    fn hash_str(&self, key: &str) -> u64 {
        self.hasher.hash_one(key.as_bytes())
    }

    /// `named[i]`, whose key is `key`, joins the table.
    fn add(&mut self, named: &[Entry], i: usize, key: &JsStr) {
        let hash = self.hash(key);
        let hasher = &self.hasher;
        self.table.insert_unique(hash, i, |&j| hash_key(hasher, &named[j].key));
    }

    fn find_str(&self, named: &[Entry], key: &str) -> Option<usize> {
        self.table.find(self.hash_str(key), |&i| named[i].key.as_str() == Some(key)).copied()
    }

    fn find(&self, named: &[Entry], key: &JsStr) -> Option<usize> {
        self.table.find(self.hash(key), |&i| named[i].key == *key).copied()
    }
}

/// A key's hash in a [`Positions`] table: text keys by their UTF-8 bytes
/// (so that [`Positions::hash_str`] of the same text agrees), others by
/// their code units.
fn hash_key(hasher: &RandomState, key: &JsStr) -> u64 {
    match key {
        JsStr::Utf16(units) => hasher.hash_one(units.as_slice()),
        text => hasher.hash_one(text.as_str().unwrap_or_default().as_bytes()),
    }
}

impl Clone for Object {
    fn clone(&self) -> Object {
        self.clone_within(CLONE_RECURSION)
    }
}

impl Object {
    /// Takes the prototype out (for `Value`'s drop, which frees deep
    /// values on a heap stack).
    pub(crate) fn take_proto(&mut self) -> Option<Value> {
        self.rare.as_mut().and_then(|r| r.proto.take()).map(|p| *p)
    }

    /// An empty object to copy this one's members into: room for them, and
    /// this one's prototype. A prototype is an object the reducer made
    /// (`__proto__` assigned a two-key literal): shallow, copied as it is.
    pub(crate) fn empty_copy(&self) -> Object {
        let mut copy = Object::with_capacity(self.named.len());
        if let Some(p) = self.proto() {
            copy.rare_mut().proto = Some(Box::new(p.clone()));
        }
        copy
    }
}

impl Object {
    /// A copy whose values are copied with `levels` of recursion left.
    pub(crate) fn clone_within(&self, levels: u32) -> Object {
        let copy = |v: &Value| clone_within(v, levels);
        Object {
            named: self.named.iter().map(|e| Entry { key: e.key.clone(), value: copy(&e.value), hash: e.hash }).collect(),
            rare: self.rare.as_ref().map(|r| {
                Box::new(Rare {
                    indexed: r.indexed.iter().map(|(&i, (k, v))| (i, (k.clone(), copy(v)))).collect(),
                    positions: r.positions.clone(),
                    proto: r.proto.as_ref().map(|p| Box::new(copy(p))),
                })
            }),
        }
    }
}

/// An object's members in order: index keys, then the others.
pub struct Members<'a> {
    indexed: Option<btree_map::Values<'a, u32, (JsStr, Value)>>,
    named: std::slice::Iter<'a, Entry>,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a JsStr, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some((k, v)) = self.indexed.as_mut().and_then(Iterator::next) {
            return Some((k, v));
        }
        self.named.next().map(|e| (&e.key, &e.value))
    }
}

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    pub fn with_capacity(n: usize) -> Object {
        Object { named: Vec::with_capacity(n), rare: None }
    }

    pub fn len(&self) -> usize {
        self.named.len() + self.rare.as_ref().map_or(0, |r| r.indexed.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        let indexed = self.rare.iter_mut().flat_map(|r| r.indexed.values_mut().map(|(_, v)| v));
        indexed.chain(self.named.iter_mut().map(|e| &mut e.value))
    }

    pub fn iter(&self) -> Members<'_> {
        Members { indexed: self.rare.as_ref().map(|r| r.indexed.values()), named: self.named.iter() }
    }

    fn indexed(&self) -> Option<&BTreeMap<u32, (JsStr, Value)>> {
        self.rare.as_ref().map(|r| &r.indexed)
    }

    fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Inlined so that for a literal key the hash folds to a constant.
    #[inline(always)]
    fn named_position(&self, key: &str, hash: u32) -> Option<usize> {
        match self.rare.as_ref().and_then(|r| r.positions.as_ref()) {
            Some(p) => p.find_str(&self.named, key),
            None => self.named.iter().position(|e| e.is(key, hash)),
        }
    }

    fn named_position_js(&self, key: &JsStr, hash: u32) -> Option<usize> {
        match (key.as_str(), self.rare.as_ref().and_then(|r| r.positions.as_ref())) {
            (Some(s), _) => self.named_position(s, hash),
            (None, Some(p)) => p.find(&self.named, key),
            (None, None) => self.named.iter().position(|e| e.hash == hash && e.key == *key),
        }
    }

    #[inline(always)]
    pub fn get(&self, key: &str) -> Option<&Value> {
        if let Some(i) = str_index(key) {
            return self.indexed()?.get(&i).map(|(_, v)| v);
        }
        self.named_position(key, hash_bytes(key.as_bytes())).map(|p| &self.named[p].value)
    }

    #[inline(always)]
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        if let Some(i) = str_index(key) {
            return self.rare.as_mut()?.indexed.get_mut(&i).map(|(_, v)| v);
        }
        self.named_position(key, hash_bytes(key.as_bytes())).map(move |p| &mut self.named[p].value)
    }

    pub fn contains_key(&self, key: &JsStr) -> bool {
        match array_index(key) {
            Some(i) => self.indexed().is_some_and(|m| m.contains_key(&i)),
            None => self.named_position_js(key, key_hash(key)).is_some(),
        }
    }

    /// `obj[key] = value` as a data property: an existing key keeps its place.
    #[inline(always)]
    pub fn set(&mut self, key: &str, value: Value) {
        if let Some(i) = str_index(key) {
            return self.set_indexed(i, JsStr::from(key), value);
        }
        let hash = hash_bytes(key.as_bytes());
        match self.named_position(key, hash) {
            Some(p) => self.named[p].value = value,
            None => self.push_named(JsStr::from(key), hash, value),
        }
    }

    pub fn set_js(&mut self, key: JsStr, value: Value) {
        let hash = key_hash(&key);
        self.set_js_hashed(key, hash, value);
    }

    /// [`Object::set_js`] for a caller that already has `hash == key_hash(&key)`.
    pub fn set_js_hashed(&mut self, key: JsStr, hash: u32, value: Value) {
        if let Some(i) = array_index(&key) {
            return self.set_indexed(i, key, value);
        }
        match self.named_position_js(&key, hash) {
            Some(p) => self.named[p].value = value,
            None => self.push_named(key, hash, value),
        }
    }

    fn set_indexed(&mut self, i: u32, key: JsStr, value: Value) {
        match self.rare_mut().indexed.entry(i) {
            btree_map::Entry::Occupied(mut e) => e.get_mut().1 = value,
            btree_map::Entry::Vacant(e) => {
                e.insert((key, value));
            }
        }
    }

    fn push_named(&mut self, key: JsStr, hash: u32, value: Value) {
        self.named.push(Entry { key, value, hash });
        let at = self.named.len() - 1;
        if let Some(p) = self.rare.as_mut().and_then(|r| r.positions.as_mut()) {
            p.add(&self.named, at, &self.named[at].key);
        } else if self.named.len() > SCAN_LIMIT {
            self.rare_mut().positions = Some(Positions::of(&self.named));
        }
    }

    pub fn proto(&self) -> Option<&Value> {
        self.rare.as_ref()?.proto.as_deref()
    }

    /// `obj.__proto__ = value` where `obj` has no own `__proto__` key: an
    /// object value becomes the prototype, anything else is ignored.
    pub fn assign_proto(&mut self, value: Value) {
        if value.is_object_like() || matches!(value, Value::Null) {
            self.rare_mut().proto = Some(Box::new(value));
        }
    }

    /// What `{ ...obj }` keeps: the own keys, not the prototype.
    pub fn without_proto(&self) -> Option<Object> {
        self.proto()?;
        let mut own = self.clone();
        own.rare_mut().proto = None;
        Some(own)
    }

    /// `delete obj[key]`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        if let Some(i) = str_index(key) {
            return self.rare.as_mut()?.indexed.remove(&i).map(|(_, v)| v);
        }
        let p = self.named_position(key, hash_bytes(key.as_bytes()))?;
        let removed = self.named.remove(p).value;
        // Every later key moved up one place.
        if let Some(r) = self.rare.as_mut().filter(|r| r.positions.is_some()) {
            r.positions = (self.named.len() > SCAN_LIMIT).then(|| Positions::of(&self.named));
        }
        Some(removed)
    }
}

/// [`array_index`] of a `&str` key, testing the first byte inline so that
/// for a literal key that is not a number the test folds away.
#[inline(always)]
fn str_index(key: &str) -> Option<u32> {
    if !key.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    parse_index(key)
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
    parse_index(key.as_str()?)
}

fn parse_index(s: &str) -> Option<u32> {
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

    /// V8's order and last-write-wins, the slow way: what [`Object`] must
    /// agree with at every size, through the switch to a key table and
    /// removals that move keys.
    #[test]
    fn object_agrees_with_a_list_at_every_width() {
        let mut model: Vec<(String, f64)> = Vec::new();
        let mut o = Object::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for step in 0..4000 {
            let r = next();
            let key = match r % 4 {
                0 => (r >> 8) % 300,
                1 => (r >> 8) % 40,
                _ => u64::MAX - (r >> 8) % 500,
            };
            let key = if key > 1000 { format!("key{}", u64::MAX - key) } else { key.to_string() };
            if r % 7 == 0 {
                let found = model.iter().position(|(k, _)| *k == key).map(|i| model.remove(i).1);
                assert_eq!(o.remove(&key).map(|v| v.to_number().unwrap()), found, "remove {key} at {step}");
            } else {
                let v = step as f64;
                match model.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = v,
                    None => model.push((key.clone(), v)),
                }
                o.set(&key, Value::Number(v));
            }
            let mut ordered = model.clone();
            ordered.sort_by_key(|(k, _)| k.parse::<u32>().ok().map_or((1, 0), |i| (0, i)));
            let seen: Vec<(String, f64)> = o.iter().map(|(k, v)| (k.to_lossy(), v.to_number().unwrap())).collect();
            assert_eq!(seen, ordered, "after step {step}");
            assert_eq!(o.len(), model.len());
            assert!(model.iter().all(|(k, v)| o.get(k).is_some_and(|got| got.to_number().unwrap() == *v)));
            assert!(model.iter().all(|(k, _)| o.contains_key(&JsStr::from(k.as_str()))));
        }
        assert!(o.named.len() > SCAN_LIMIT, "the walk reached the key table");
    }

    #[test]
    fn a_wide_object_finds_lone_surrogate_keys() {
        let mut o = Object::new();
        for i in 0..SCAN_LIMIT + 8 {
            o.set(&format!("k{i}"), Value::Null);
        }
        let lone = JsStr::Utf16(vec![0x61, 0xD800]);
        o.set_js(lone.clone(), Value::Number(1.0));
        o.set_js(lone.clone(), Value::Number(2.0));
        assert!(o.contains_key(&lone));
        assert_eq!(o.len(), SCAN_LIMIT + 9);
        assert!(o.iter().last().is_some_and(|(k, v)| *k == lone && v.to_number() == Ok(2.0)));
        assert!(!o.contains_key(&JsStr::Utf16(vec![0x62, 0xD800])));
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
