//! The JavaScript values the reducer works on.
//!
//! The old module keeps snapshots as plain JS objects, so what a caller sees
//! depends on JS details that JSON alone cannot carry: `undefined` as a value
//! (a key that exists but is dropped from files), `NaN` and `-0` (kept in
//! memory, written as `null` and `0`), strings with lone surrogates, and V8's
//! property order (integer-like keys first, ascending, then insertion order).
//! This model holds exactly those; `ops` has the abstract operations.

use crate::js::object::Object;
use crate::js::string::JsStr;

#[derive(Clone, Debug)]
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
