//! A session snapshot: the base fields in their slots, any other key beside
//! them.
//!
//! The old module's snapshot is a plain object made as
//! `{ ...baseSnapshot(id), ...fileContents }` and then spread once per event,
//! so every base key is always present and always in the schema's order.
//! Keeping the base fields in slots indexed by [`Field`] makes the reducer's
//! reads an array index instead of a key search; the keys beyond them (what
//! events add, what a snapshot file carried) keep V8's order: index-like
//! keys come before everything else, the rest after the base fields in the
//! order they were set.

use crate::js::object::array_index;
use crate::js::{JsStr, Object, Value};
use crate::session::lazy_field::Slot;
use crate::session::schema::{is_completed, Field, FIELD_COUNT, FIELD_KEYS};
#[cfg(test)]
use crate::session::schema::FIELDS;

#[derive(Clone, Debug)]
pub struct Snapshot {
    fields: [Slot; FIELD_COUNT],
    /// Every key that is not a base field.
    others: Object,
    /// What changed since [`Snapshot::clear_changes`]: a bit per base field
    /// (see [`Snapshot::changes`]), and whether any other key did.
    changed: u64,
    others_changed: bool,
}

const _: () = assert!(FIELD_COUNT <= 64, "a snapshot's change bits are one u64");

/// A member's value, or the JSON text `JSON.stringify` writes for it.
pub enum Member<'a> {
    Value(&'a Value),
    Json(&'a str),
}

/// What a change left different: `None` when a key beyond the base fields
/// changed, else the base fields that did (in the snapshot's order).
pub type Changes = Option<Vec<Field>>;

impl Snapshot {
    /// `baseSnapshot(id)`.
    pub fn base(id: &JsStr) -> Snapshot {
        Snapshot { fields: Field::ALL.map(|f| Slot::Value(f.initial(id))), others: Object::new(), changed: 0, others_changed: false }
    }

    /// `{ ...baseSnapshot(id), ...o }`.
    pub fn over_base(id: &JsStr, o: &Object) -> Snapshot {
        let mut s = Snapshot::base(id);
        for (k, v) in o.iter() {
            s.set_key(k.clone(), v.clone());
        }
        s
    }

    pub fn get(&self, f: Field) -> &Value {
        self.fields[f as usize].value()
    }

    pub fn get_mut(&mut self, f: Field) -> &mut Value {
        self.changed |= 1 << f as usize;
        self.fields[f as usize].value_mut()
    }

    pub fn set(&mut self, f: Field, v: Value) {
        self.set_slot(f, Slot::Value(v));
    }

    /// Sets a field to an object that is built when first read (see
    /// `lazy_field`).
    pub fn set_slot(&mut self, f: Field, slot: Slot) {
        self.changed |= 1 << f as usize;
        self.fields[f as usize] = slot;
    }

    /// Replaces a field, handing back what it held.
    pub fn replace(&mut self, f: Field, v: Value) -> Value {
        std::mem::replace(self.get_mut(f), v)
    }

    /// Starts noting changes afresh.
    pub fn clear_changes(&mut self) {
        self.changed = 0;
        self.others_changed = false;
    }

    /// What was written since [`Snapshot::clear_changes`] (a field written
    /// with the value it held counts as changed).
    pub fn changes(&self) -> Changes {
        (!self.others_changed).then(|| Field::ALL.into_iter().filter(|f| self.changed & (1 << *f as usize) != 0).collect())
    }

    /// `snapshot[key]` for a key that is not a base field.
    pub fn other(&self, key: &str) -> Option<&Value> {
        debug_assert!(Field::by_name(key).is_none(), "{key} is a base field");
        self.others.get(key)
    }

    /// `snapshot[key] = v` for a key that is not a base field.
    pub fn set_other(&mut self, key: &str, v: Value) {
        debug_assert!(Field::by_name(key).is_none(), "{key} is a base field");
        self.others_changed = true;
        self.others.set(key, v);
    }

    /// `snapshot[key] = v` for any key.
    pub fn set_key(&mut self, key: JsStr, v: Value) {
        match key.as_str().and_then(Field::by_name) {
            Some(f) => self.set(f, v),
            None => {
                self.others_changed = true;
                self.others.set_js(key, v);
            }
        }
    }

    pub fn is_completed(&self) -> bool {
        is_completed(self.get(Field::Phase))
    }

    /// The members in the order JS gives them.
    /// Every value built so far, in no particular order: what a field
    /// still held as JSON text is skipped (it cannot hold a host value).
    pub fn built_values(&self) -> impl Iterator<Item = &Value> {
        self.fields.iter().filter_map(Slot::built).chain(self.others.iter().map(|(_, v)| v))
    }

    /// Whether a host value is anywhere in the snapshot.
    pub fn holds_host(&self) -> bool {
        self.built_values().any(Value::holds_host)
    }

    /// [`Snapshot::members`], a field whose JSON text it holds already (see
    /// [`Slot::stringified`]) given as that text, unbuilt.
    pub fn members_or_json(&self) -> impl Iterator<Item = (&JsStr, Member<'_>)> {
        let leading = self.others.iter().take_while(|(k, _)| array_index(k).is_some()).count();
        let indices = self.others.iter().take(leading).map(|(k, v)| (k, Member::Value(v)));
        let rest = self.others.iter().skip(leading).map(|(k, v)| (k, Member::Value(v)));
        let fields = self.fields.iter().map(|slot| slot.stringified().map_or_else(|| Member::Value(slot.value()), Member::Json));
        indices.chain(FIELD_KEYS.iter().zip(fields)).chain(rest)
    }

    pub fn members(&self) -> impl Iterator<Item = (&JsStr, &Value)> {
        let leading = self.others.iter().take_while(|(k, _)| array_index(k).is_some()).count();
        let indices = self.others.iter().take(leading);
        let rest = self.others.iter().skip(leading);
        indices.chain(FIELD_KEYS.iter().zip(self.fields.iter().map(Slot::value))).chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::json;

    fn keys(s: &Snapshot) -> Vec<String> {
        s.members().map(|(k, _)| k.to_lossy()).collect()
    }

    #[test]
    fn base_snapshot_lists_the_schema_in_order() {
        let s = Snapshot::base(&JsStr::from("x"));
        let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(keys(&s), names);
        assert!(s.get(Field::Id).is_str("x"));
    }

    /// `{ ...base, ...file }` as V8 orders it: index keys first, base keys
    /// where the base put them, then the file's other keys in its order.
    #[test]
    fn over_base_keeps_v8_order() {
        let o = json::parse(r#"{"zeta":1,"phase":"p","10":2,"2":3,"id":"x","alpha":4}"#).unwrap().into_object().unwrap();
        let s = Snapshot::over_base(&JsStr::from("x"), &o);
        let k = keys(&s);
        assert_eq!(&k[..3], ["2", "10", "id"]);
        assert_eq!(&k[k.len() - 2..], ["zeta", "alpha"]);
        assert!(s.get(Field::Phase).is_str("p"));
    }
}
