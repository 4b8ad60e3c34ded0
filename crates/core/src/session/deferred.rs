//! Whole values a replay builds once, after its last line.
//!
//! Two snapshot fields take a whole object from an event: `pendingEvent`
//! (`{ ...event }` without its token, on every generate) and `variantPlan`
//! (`event.plan`, on every plan). Building them was about a quarter of a
//! replay's time, yet the next cycle replaces both, so a long journal built
//! thousands of objects to keep only the last of each. During a replay the
//! reducer now stores a placeholder in such a field and the object's JSON
//! text here; [`Deferred::fill`] builds whichever placeholder is still in
//! place when the replay's lines are done.
//!
//! What must hold for no one to tell the difference:
//! - The reducer reads these fields during a replay only for truthiness,
//!   and only objects and arrays are deferred: a placeholder is truthy, as
//!   they are. Falsy or scalar values are stored as they come.
//! - A placeholder never leaves the replay: `fill` runs at the end of every
//!   reading pass (`journal`), whether or not the pass ended in an error.
//! - Each field keeps only the text of its latest deferral, and a later
//!   store of a real value into the field replaces the placeholder, so a
//!   placeholder still in place at the end always belongs to the text kept.
//! - The text is built by the functions the eager path uses (a lazy line's
//!   spread and the reducer's token removal; the full parser for the plan),
//!   so the result is the same object, key order and escapes included.

use crate::js::json;
use crate::session::record::object_of;
use crate::session::reducer::without_token;
use crate::js::value::{Object, Value};

/// Placeholders: handles no host value ever gets (a replay reads JSON, which
/// holds no host values, and appends number theirs from 0 per call).
const PENDING_EVENT: u32 = u32::MAX;
const VARIANT_PLAN: u32 = u32::MAX - 1;

/// The texts a replay has put off building, one per field.
#[derive(Default)]
pub struct Deferred {
    pending_event: String,
    variant_plan: String,
}

impl Deferred {
    /// Records `{ ...event }` (the event's JSON text) for `pendingEvent`;
    /// returns the placeholder to store there.
    pub fn pending_event(&mut self, event_text: &str) -> Value {
        keep(&mut self.pending_event, event_text);
        Value::Host(PENDING_EVENT)
    }

    /// Records the plan's JSON text for `variantPlan` when it is an object
    /// or an array (truthy whatever it holds) and returns the placeholder;
    /// `None` for any other value, which the caller stores as it is.
    pub fn variant_plan(&mut self, plan_text: &str) -> Option<Value> {
        if !(plan_text.starts_with('{') || plan_text.starts_with('[')) {
            return None;
        }
        keep(&mut self.variant_plan, plan_text);
        Some(Value::Host(VARIANT_PLAN))
    }

    /// Builds every placeholder still in `snapshot`.
    pub fn fill(&self, snapshot: &mut Object) {
        if let Some(v @ Value::Host(PENDING_EVENT)) = snapshot.get_mut("pendingEvent") {
            *v = without_token(object_of(&self.pending_event));
        }
        if let Some(v @ Value::Host(VARIANT_PLAN)) = snapshot.get_mut("variantPlan") {
            *v = json::parse(&self.variant_plan).unwrap_or(Value::Undefined);
        }
    }
}

fn keep(buffer: &mut String, text: &str) {
    buffer.clear();
    buffer.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_with(pending: Value, plan: Value) -> Object {
        let mut s = Object::new();
        s.set("pendingEvent", pending);
        s.set("variantPlan", plan);
        s
    }

    fn text_of(s: &Object, key: &str) -> String {
        json::stringify(s.get(key).unwrap()).unwrap_or_else(|| "undefined".to_owned())
    }

    #[test]
    fn fills_the_latest_text_of_each_field() {
        let mut d = Deferred::default();
        d.pending_event(r#"{"type":"generate","n":1}"#);
        let pending = d.pending_event(r#"{"type":"generate","token":"t","n":2,"n":3}"#);
        let plan = d.variant_plan(r#"[{"n":1},{"n":2}]"#).unwrap();
        let mut s = snapshot_with(pending, plan);
        d.fill(&mut s);
        assert_eq!(text_of(&s, "pendingEvent"), r#"{"type":"generate","n":3}"#);
        assert_eq!(text_of(&s, "variantPlan"), r#"[{"n":1},{"n":2}]"#);
    }

    #[test]
    fn a_replaced_placeholder_is_left_alone() {
        let mut d = Deferred::default();
        d.pending_event(r#"{"type":"generate"}"#);
        d.variant_plan("{}").unwrap();
        // Both placeholders were replaced by later events.
        let mut s = snapshot_with(Value::Null, Value::Number(7.0));
        d.fill(&mut s);
        assert_eq!(text_of(&s, "pendingEvent"), "null");
        assert_eq!(text_of(&s, "variantPlan"), "7");
    }

    #[test]
    fn only_objects_and_arrays_are_deferred() {
        let mut d = Deferred::default();
        for scalar in ["0", "false", "\"\"", "null", "\"plan\"", "3"] {
            assert!(d.variant_plan(scalar).is_none(), "{scalar}");
        }
        for whole in ["{}", "[]", r#"{"count":0}"#] {
            let placeholder = d.variant_plan(whole).unwrap();
            assert!(placeholder.truthy(), "{whole}");
        }
        assert!(d.pending_event("{}").truthy());
    }
}
