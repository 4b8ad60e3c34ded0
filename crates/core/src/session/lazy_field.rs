//! A snapshot field holding an object as the JSON text it came from, built
//! when something first reads it.
//!
//! A replay sets `pendingEvent` to `{ ...event }` (less its token) for every
//! generate, accept, steer and the like, and most of those are replaced or
//! cleared again before the replay ends: building each one was a third of a
//! cold replay. A [`Slot`] keeps the event's text instead, and
//! [`Slot::value`] builds the object the first time anything reads it, so
//! no reader (the reducer, rendering, a port that reads inside the field)
//! can see the text: every read goes through that one method.

use std::cell::OnceCell;

use crate::js::json;
use crate::js::Value;

/// A field's content: a value, or an object's JSON text built on first read.
#[derive(Clone, Debug)]
pub enum Slot {
    Value(Value),
    Text(Box<LazyObject>),
}

/// `JSON.parse(text)`, less its `token` key when `drop_token`.
#[derive(Clone, Debug)]
pub struct LazyObject {
    text: Box<str>,
    drop_token: bool,
    built: OnceCell<Value>,
    /// Whether `text` is what `JSON.stringify` writes for the value.
    canonical: OnceCell<bool>,
}

impl Slot {
    /// `{ ...JSON.parse(text) }` less `token` when `drop_token`, for text a
    /// validating skim has already found to be one JSON object.
    pub fn object_text(text: &str, drop_token: bool) -> Slot {
        Slot::Text(Box::new(LazyObject { text: text.into(), drop_token, built: OnceCell::new(), canonical: OnceCell::new() }))
    }

    pub fn value(&self) -> &Value {
        match self {
            Slot::Value(v) => v,
            Slot::Text(lazy) => lazy.built.get_or_init(|| lazy.build()),
        }
    }

    /// The value if it is built (text read by nobody yet holds only JSON).
    pub fn built(&self) -> Option<&Value> {
        match self {
            Slot::Value(v) => Some(v),
            Slot::Text(lazy) => lazy.built.get(),
        }
    }

    /// The JSON text `JSON.stringify` writes for the value, when the slot
    /// holds it already: its text copied as it stands (checked once).
    pub fn stringified(&self) -> Option<&str> {
        match self {
            Slot::Value(_) => None,
            Slot::Text(lazy) => {
                let dropped: &[&str] = if lazy.drop_token { &["token"] } else { &[] };
                lazy.canonical.get_or_init(|| json::is_canonical_object(&lazy.text, dropped)).then_some(&*lazy.text)
            }
        }
    }

    /// The value, built if need be, for writing.
    pub fn value_mut(&mut self) -> &mut Value {
        if let Slot::Text(lazy) = self {
            let built = lazy.built.take().unwrap_or_else(|| lazy.build());
            *self = Slot::Value(built);
        }
        match self {
            Slot::Value(v) => v,
            Slot::Text(_) => unreachable!("replaced by its value above"),
        }
    }
}

impl LazyObject {
    fn build(&self) -> Value {
        let Some(mut o) = json::parse(&self.text).ok().and_then(Value::into_object) else { return Value::Undefined };
        if self.drop_token {
            o.remove("token");
        }
        Value::Object(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_slot_reads_as_the_object_its_text_parses_to() {
        let text = r#"{"type":"generate","token":"t","1":2,"__proto__":{"a":1},"token":"u","x":[1,{"y":"\u00e9"}]}"#;
        let lazy = Slot::object_text(text, true);
        let mut eager = json::parse(text).unwrap();
        if let Value::Object(o) = &mut eager {
            o.remove("token");
        }
        let shown = |v: &Value| json::stringify(v).unwrap();
        assert_eq!(shown(lazy.value()), shown(&eager));
        let mut written = lazy.clone();
        written.value_mut();
        assert!(matches!(written, Slot::Value(_)));
        assert_eq!(shown(written.value()), shown(&eager));
        assert_eq!(shown(Slot::object_text(text, false).value()), shown(&json::parse(text).unwrap()));
    }
}
