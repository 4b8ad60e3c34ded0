//! The JavaScript values the reducer works on.
//!
//! The old module keeps snapshots as plain JS objects, so what a caller sees
//! depends on JS details that JSON alone cannot carry: `undefined` as a value
//! (a key that exists but is dropped from files), `NaN` and `-0` (kept in
//! memory, written as `null` and `0`), strings with lone surrogates, and V8's
//! property order (integer-like keys first, ascending, then insertion order).
//! This model holds exactly those; `ops` has the abstract operations, and
//! `object` the object map.

use crate::js::object::{Members, Object};
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
    /// A value of the caller's that only the host can interpret, by handle:
    /// a function, a symbol, or an object that is not plain data (one that
    /// converts itself, has getters, a class or is a Proxy). In memory the
    /// host hands the very same value back; its JSON text and every
    /// coercion of it are asked of the host.
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

    /// Whether a host value is anywhere in this value.
    pub fn holds_host(&self) -> bool {
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            match v {
                Value::Host(_) => return true,
                Value::Array(items) => stack.extend(items),
                Value::Object(o) => {
                    stack.extend(o.iter().map(|(_, v)| v));
                    stack.extend(o.proto());
                }
                _ => {}
            }
        }
        false
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
pub(crate) const CLONE_RECURSION: u32 = 32;

impl Clone for Value {
    fn clone(&self) -> Value {
        clone_within(self, CLONE_RECURSION)
    }
}

pub(crate) fn clone_within(v: &Value, levels: u32) -> Value {
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

/// A copy being built: what is left of the source, the copy so far, and
/// (for an object) the key of the member being copied.
enum Copying<'a> {
    Array(std::slice::Iter<'a, Value>, Vec<Value>),
    Object(Members<'a>, Object, Option<&'a JsStr>),
}

impl Copying<'_> {
    /// The copy of the member last started joins the copy so far.
    fn attach(&mut self, copy: Value) {
        match self {
            Copying::Array(_, items) => items.push(copy),
            Copying::Object(_, o, key) => {
                if let Some(k) = key.take() {
                    o.set_js(k.clone(), copy);
                }
            }
        }
    }
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
                    open.push(Copying::Object(o.iter(), o.empty_copy(), None));
                    None
                }
                leaf => Some(clone_within(leaf, 0)),
            };
            if let Some(copy) = copy {
                match open.last_mut() {
                    None => return copy,
                    Some(top) => top.attach(copy),
                }
            }
        }
        let child = match open.last_mut() {
            Some(Copying::Array(rest, _)) => rest.next(),
            Some(Copying::Object(members, _, key)) => members.next().map(|(k, v)| {
                *key = Some(k);
                v
            }),
            None => unreachable!("the walk returns once its root is copied"),
        };
        if child.is_some() {
            next = child;
            continue;
        }
        let done = match open.pop() {
            Some(Copying::Array(_, items)) => Value::Array(items),
            Some(Copying::Object(_, o, _)) => Value::Object(o),
            None => unreachable!("just seen"),
        };
        match open.last_mut() {
            None => return done,
            Some(top) => top.attach(done),
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
            Value::Object(o) => !o.is_empty() || o.proto().is_some(),
            _ => false,
        }
    }

    fn holds_nested(&self) -> bool {
        match self {
            Value::Array(items) => items.iter().any(Value::is_nonempty_container),
            Value::Object(o) => o.proto().is_some() || o.iter().any(|(_, v)| v.is_nonempty_container()),
            _ => false,
        }
    }

    fn move_nested_into(&mut self, apart: &mut Vec<Value>) {
        let children: &mut dyn Iterator<Item = &mut Value> = match self {
            Value::Array(items) => &mut items.iter_mut(),
            Value::Object(o) => {
                if let Some(p) = o.take_proto() {
                    apart.push(p);
                }
                &mut o.values_mut()
            }
            _ => return,
        };
        for child in children.filter(|c| c.is_nonempty_container()) {
            apart.push(std::mem::replace(child, Value::Null));
        }
    }
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
}
