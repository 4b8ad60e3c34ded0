//! The host contract: what the reducer asks of the JavaScript it runs
//! under. The reducer reads time only through [`Host`], so the same entries
//! give the same snapshot under test, and has V8 run the operations
//! ([`HostOp`]) on the caller's values only V8 can interpret. The store
//! answers for V8 between attempts ([`crate::session::answers`]); the
//! binding asks V8 the questions left open.

use crate::js::{JsError, JsStr, Value};

/// Why the reducer, or one operation it asks the host to run, gave no value.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// The exception JavaScript raises there: a conversion's TypeError, V8's
    /// RangeError past its stack.
    Js(JsError),
    /// The host has no answer yet: it noted the question, to be asked of V8
    /// before the operation runs again.
    Unanswered,
    /// V8's answer was an exception: the host value with this handle, the
    /// very one to throw.
    Threw(u32),
}

impl From<JsError> for Refusal {
    fn from(e: JsError) -> Refusal {
        Refusal::Js(e)
    }
}

/// What the reducer needs from its JavaScript host.
pub trait Host {
    /// `Date.now()`.
    fn now_ms(&self) -> f64;
    /// `Date.parse(s)` for text that is not the canonical ISO form.
    fn date_parse_fallback(&self, s: &JsStr) -> f64;
    /// The message `JSON.parse(line)` throws; called only for lines this
    /// crate's parser rejected, so its wording matches the running Node.
    fn json_parse_message(&self, line: &str) -> String;
    /// Whether one of the three questions above got a placeholder instead
    /// of its answer (see [`crate::session::answers`]). These do not
    /// refuse: a replay goes on past a placeholder, so that one attempt
    /// collects every question its lines raise. So the caller asks this
    /// once the attempt is over, and keeps nothing derived from an attempt
    /// that did.
    fn used_placeholders(&self) -> bool {
        false
    }
    /// `op` run by V8 on `args`, at least one of which holds a host value;
    /// [`Refusal::Unanswered`] when the host has no answer yet,
    /// [`Refusal::Threw`] when the answer was an exception.
    fn ask(&self, op: HostOp, _args: &[&Value]) -> Result<Value, Refusal> {
        Err(JsError::type_error(format!("quiver-live-native: no host to run {} on a host value", op.name())).into())
    }
    /// Hands out the same answers again from the first: a store tries an
    /// event on a copy of the snapshot to collect its questions before its
    /// line is written, then applies it for real.
    fn rewind(&self) {}
}

/// The operations the reducer asks V8 to run on values holding host
/// values; [`HostOp::name`] is the wrapper's function for each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostOp {
    /// `Number(x)`.
    Number,
    /// `a >= b`.
    GreaterOrEqual,
    /// The key `obj[x] = ...` creates (a string, or a symbol).
    PropertyKey,
    /// `[...list, ...(Array.isArray(x) ? x : [])]`: the detector waivers
    /// so far, then an event's, kept as V8's array.
    AppendItems,
    /// `{ ...x }`, kept as V8's object (see [`HostOp::holds_answer`]).
    SpreadHeld,
    /// `{ ...o }` with `copy[k] = v` set on it, kept as V8's object.
    SetOnCopy,
    /// `toPendingEvent(event)`: `{ ...event }` without its `token`, kept as
    /// V8's object.
    PendingEvent,
}

impl HostOp {
    pub const ALL: [HostOp; 7] = [
        HostOp::Number,
        HostOp::GreaterOrEqual,
        HostOp::PropertyKey,
        HostOp::AppendItems,
        HostOp::SpreadHeld,
        HostOp::SetOnCopy,
        HostOp::PendingEvent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HostOp::Number => "number",
            HostOp::GreaterOrEqual => "greaterOrEqual",
            HostOp::PropertyKey => "propertyKey",
            HostOp::AppendItems => "appendItems",
            HostOp::SpreadHeld => "spreadHeld",
            HostOp::SetOnCopy => "setOnCopy",
            HostOp::PendingEvent => "toPendingEvent",
        }
    }

    /// Whether the answer is kept whole, by reference (`Value::Host`),
    /// rather than read into the model: it may have symbol-keyed members,
    /// which the model has no place for, and which spreads copy; or hold
    /// the caller's objects as the old module's value does, which only
    /// V8 can tell apart from copies (`JSON.stringify` names the objects
    /// that close a cycle).
    pub fn holds_answer(self) -> bool {
        matches!(self, HostOp::SpreadHeld | HostOp::SetOnCopy | HostOp::PendingEvent | HostOp::AppendItems)
    }
}
