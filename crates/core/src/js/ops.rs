//! The abstract operations of JavaScript the reducer needs: `Number(x)`,
//! `String(x)`, `>=` between mixed types, spreads, `Number.isInteger`.
//! Each conversion that JS can refuse returns the exception it raises (a
//! [`JsError`]), so a port cannot coerce a value without handling that case.

use std::cmp::Ordering;

use crate::js::error::{ErrorClass, JsError};
use crate::js::number::{number_to_string, string_to_number};
use crate::js::object::Object;
use crate::js::string::JsStr;
use crate::js::value::Value;

/// V8's message for a recursion past its stack, which it throws as a
/// `RangeError`.
const STACK_EXCEEDED: &str = "Maximum call stack size exceeded";

/// How many arrays nested in one another `String()` joins (and so
/// `Number()`, a comparison and a property key convert) before it throws
/// V8's `RangeError`. V8's own join recurses, and its limit depends on the
/// stack left: at least 3,138 levels on a main thread of Node 20 to 26 (Node
/// 22's), far more in a worker. The conversion runs in the reducer, away
/// from V8, so one fixed bound stands for it, just below the main thread's.
pub const JOIN_DEPTH_LIMIT: usize = 3000;

impl Value {
    /// `Number(x)`, or the exception it raises.
    pub fn to_number(&self) -> Result<f64, JsError> {
        Ok(match self {
            Value::Undefined | Value::Host(_) => f64::NAN,
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Number(n) => *n,
            Value::String(s) => string_to_number(s),
            Value::Array(_) | Value::Object(_) => string_to_number(&self.to_js_string()?),
        })
    }

    /// `String(x)`, or the exception it raises: the TypeError of an object
    /// parsed from JSON that owns a `toString` key (its own `toString` is not
    /// a function and `valueOf` returns the object), or V8's RangeError for
    /// arrays nested too deep (see [`join_array`]).
    pub fn to_js_string(&self) -> Result<JsStr, JsError> {
        match self {
            Value::Object(o) if owns_to_string(o) => Err(not_primitive()),
            Value::Array(items) => join_array(items),
            other => Ok(other.string_of()),
        }
    }

    /// `String(x)` of a value that is not an array (arrays join, see
    /// [`join_array`]).
    fn string_of(&self) -> JsStr {
        match self {
            Value::Undefined => JsStr::from("undefined"),
            Value::Null => JsStr::from("null"),
            Value::Bool(b) => JsStr::from(if *b { "true" } else { "false" }),
            Value::Number(n) => JsStr::Utf8(number_to_string(*n)),
            Value::String(s) => s.clone(),
            Value::Object(_) => JsStr::from("[object Object]"),
            Value::Host(_) => JsStr::from("[host value]"),
            Value::Array(_) => unreachable!("arrays are joined by join_array"),
        }
    }
}

fn owns_to_string(o: &Object) -> bool {
    o.get("toString").is_some_and(|f| !matches!(f, Value::Host(_)))
}

/// `items.join(',')`, nested arrays joined in turn, walked with a stack of
/// its own (no depth of nesting reaches the native stack); or the TypeError
/// of the first element that cannot be converted, or V8's RangeError for
/// arrays nested past [`JOIN_DEPTH_LIMIT`], where V8's recursive join runs
/// out of stack.
fn join_array(items: &[Value]) -> Result<JsStr, JsError> {
    let mut units: Vec<u16> = Vec::new();
    let mut open = vec![(items.iter(), false)];
    while let Some((rest, started)) = open.last_mut() {
        let Some(item) = rest.next() else {
            open.pop();
            continue;
        };
        if *started {
            units.push(u16::from(b','));
        }
        *started = true;
        match item {
            Value::Undefined | Value::Null | Value::Host(_) => {}
            Value::Array(_) if open.len() == JOIN_DEPTH_LIMIT => return Err(JsError::new(ErrorClass::RangeError, STACK_EXCEEDED)),
            Value::Array(inner) => open.push((inner.iter(), false)),
            Value::Object(o) if owns_to_string(o) => return Err(not_primitive()),
            other => units.extend(other.string_of().units()),
        }
    }
    Ok(JsStr::from_utf16(units))
}

/// `a >= b` with JS's abstract relational comparison: both sides go to
/// primitives, two strings compare by UTF-16 code units, anything else
/// compares as numbers (NaN makes it false); or the TypeError JS raises for
/// an object that cannot be made primitive.
pub fn loose_ge(a: &Value, b: &Value) -> Result<bool, JsError> {
    let pa = to_primitive(a)?;
    let pb = to_primitive(b)?;
    if let (Value::String(x), Value::String(y)) = (&pa, &pb) {
        return Ok(x.units().cmp(y.units()) != Ordering::Less);
    }
    let (x, y) = (pa.to_number()?, pb.to_number()?);
    Ok(!(x.is_nan() || y.is_nan()) && x >= y)
}

fn to_primitive(v: &Value) -> Result<Value, JsError> {
    match v {
        Value::Array(_) | Value::Object(_) => v.to_js_string().map(Value::String),
        other => Ok(other.clone()),
    }
}

/// The TypeError of an object that cannot be made primitive.
pub fn not_primitive() -> JsError {
    JsError::type_error("Cannot convert object to primitive value")
}

/// `Number.isInteger(x)`.
pub fn is_integer(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.is_finite() && n.trunc() == *n)
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
pub fn spread_array(source: &Value, what: &str) -> Result<Vec<Value>, JsError> {
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
fn not_iterable_message(_v: &Value, what: &str) -> JsError {
    JsError::type_error(format!("{} is not iterable", what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_number_coerces_like_js() {
        let s = |x: &str| Value::str(x).to_number().unwrap();
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
        assert_eq!(Value::Array(vec![Value::Number(2.0)]).to_number().unwrap(), 2.0);
        assert_eq!(Value::Array(vec![]).to_number().unwrap(), 0.0);
        assert!(Value::Array(vec![Value::Number(1.0), Value::Number(2.0)]).to_number().unwrap().is_nan());
        assert_eq!(Value::Bool(true).to_number().unwrap(), 1.0);
        assert_eq!(Value::Null.to_number().unwrap(), 0.0);
        assert!(Value::Undefined.to_number().unwrap().is_nan());
        assert!(Value::Object(Object::new()).to_number().unwrap().is_nan());
    }

    #[test]
    fn relational_compare_mixed_types() {
        let n = Value::Number;
        assert!(loose_ge(&Value::str("10"), &n(9.0)).unwrap());
        assert!(!loose_ge(&Value::str("10"), &Value::str("9")).unwrap());
        assert!(loose_ge(&Value::Null, &n(0.0)).unwrap());
        assert!(!loose_ge(&Value::Undefined, &n(0.0)).unwrap());
        assert!(loose_ge(&Value::Array(vec![n(2.0)]), &n(2.0)).unwrap());
        assert!(loose_ge(&Value::Bool(true), &n(1.0)).unwrap());
        assert!(!loose_ge(&Value::str("abc"), &n(0.0)).unwrap());
    }

    /// `[[...[]...]]`, `depth` arrays in all.
    fn nested(depth: usize) -> Value {
        (1..depth).fold(Value::Array(Vec::new()), |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn arrays_nested_past_the_limit_throw_v8s_range_error() {
        assert!(nested(JOIN_DEPTH_LIMIT).to_js_string().unwrap().is_empty());
        assert!(loose_ge(&Value::Number(3.0), &nested(JOIN_DEPTH_LIMIT)).unwrap());
        let e = nested(JOIN_DEPTH_LIMIT + 1).to_js_string().unwrap_err();
        assert_eq!(e.to_string(), "RangeError: Maximum call stack size exceeded");
        for refused in [nested(20_000).to_number(), loose_ge(&Value::Number(3.0), &nested(20_000)).map(f64::from)] {
            assert_eq!(refused.unwrap_err().class, ErrorClass::RangeError);
        }
        // Only arrays in arrays recurse: an object joins as `[object Object]`.
        let mut v = Value::Null;
        for _ in 0..20_000 {
            let mut o = Object::new();
            o.set("a", v);
            v = Value::Array(vec![Value::Object(o)]);
        }
        assert!(v.to_js_string().is_ok());
    }

    #[test]
    fn spreads() {
        let o = spread_object(&Value::str("ab"));
        assert_eq!(o.len(), 2);
        assert!(spread_array(&Value::Number(5.0), "x").is_err());
        assert_eq!(spread_array(&Value::str("a\u{1F600}"), "x").unwrap().len(), 2);
    }
}
