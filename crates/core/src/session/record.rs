//! A journal line read field by field, for replay.
//!
//! The old module builds every value of every line with `JSON.parse`, and so
//! did this crate's replay: building values was over half of its time, yet
//! the reducer reads only a few fields of most events and keeps fewer. Here
//! a line is first validated whole (so a line `JSON.parse` would refuse is
//! still refused, and still reported as before), its members and its
//! event's members are located, and a value is built only when the reducer
//! reads it, once.
//!
//! What the reducer sees must not change: a read gives the value of the
//! key's last occurrence (`JSON.parse` keeps the last), and a spread parses
//! the object's whole text with the full parser, so order, repeated keys and
//! escapes come out exactly as a full parse would give them. Lines this
//! module is unsure of (an escaped key, an `event` that is truthy but not an
//! object, invalid UTF-8, deep nesting) are left to the full parser.

use std::cell::OnceCell;

use crate::js::json;
use crate::js::json::skim::{members_with_nested, MemberSpan};
use crate::session::reducer::Record;
use crate::js::{Object, Value, UNDEFINED};

/// Member lists reused from line to line, so a replay allocates them once.
#[derive(Default)]
pub struct Scratch {
    entry: Vec<MemberSpan>,
    event: Vec<MemberSpan>,
    entry_values: Vec<OnceCell<Value>>,
    event_values: Vec<OnceCell<Value>>,
}

/// One object of the line: the entry or its event.
pub struct LazyRecord<'a, 's> {
    /// The object's own text, braces included, for a spread.
    text: &'a str,
    /// The whole line: member ranges index into it.
    line: &'a str,
    members: &'s [MemberSpan],
    values: &'s [OnceCell<Value>],
}

/// A line as the reducer reads it: the entry and the event it carries.
pub struct LazyLine<'a, 's> {
    pub entry: LazyRecord<'a, 's>,
    /// `None` when the entry is its own event (its `event` is falsy).
    pub event: Option<LazyRecord<'a, 's>>,
}

impl<'a, 's> LazyLine<'a, 's> {
    /// Locates the members of `line`; `None` when the full parser must take
    /// it (see the module's note).
    pub fn read(line: &'a str, scratch: &'s mut Scratch) -> Option<LazyLine<'a, 's>> {
        members_with_nested(line, "event", &mut scratch.entry, &mut scratch.event)?;
        LazyLine::assemble(line, scratch)
    }

    /// [`LazyLine::read`] of a line's bytes; `None` also when they are not
    /// UTF-8.
    pub fn read_bytes(body: &'a [u8], scratch: &'s mut Scratch) -> Option<LazyLine<'a, 's>> {
        LazyLine::read(std::str::from_utf8(body).ok()?, scratch)
    }

    /// The line over the members in `scratch`, which must be those
    /// `skim::members_with_nested` found in this very line.
    fn assemble(line: &'a str, scratch: &'s mut Scratch) -> Option<LazyLine<'a, 's>> {
        reset(&mut scratch.entry_values, scratch.entry.len());
        reset(&mut scratch.event_values, scratch.event.len());
        let entry = LazyRecord { text: line, line, members: &scratch.entry, values: &scratch.entry_values };
        let event_text = match entry.position("event") {
            Some(i) => &line[entry.members[i].value.clone()],
            None => "",
        };
        let event = if event_text.starts_with('{') {
            Some(LazyRecord { text: event_text, line, members: &scratch.event, values: &scratch.event_values })
        } else if entry.get("event").truthy() {
            return None;
        } else {
            None
        };
        Some(LazyLine { entry, event })
    }
}

fn reset(values: &mut Vec<OnceCell<Value>>, len: usize) {
    values.clear();
    values.resize_with(len, OnceCell::new);
}

impl LazyRecord<'_, '_> {
    /// The member that a property read finds: the key's last occurrence.
    fn position(&self, key: &str) -> Option<usize> {
        let line = self.line.as_bytes();
        self.members.iter().rposition(|m| m.key.len() == key.len() && line.get(m.key.clone()) == Some(key.as_bytes()))
    }
}

impl Record for LazyRecord<'_, '_> {
    fn get(&self, key: &str) -> &Value {
        match self.position(key) {
            Some(i) => self.values[i].get_or_init(|| build(&self.line[self.members[i].value.clone()])),
            None => &UNDEFINED,
        }
    }

    fn spread(&self) -> Object {
        object_of(self.text)
    }

    fn object_text(&self) -> Option<&str> {
        Some(self.text)
    }
}

/// `{ ...record }` from the record's text, which the skim has validated as
/// one object.
pub fn object_of(text: &str) -> Object {
    json::parse(text).ok().and_then(Value::into_object).unwrap_or_default()
}

/// The value of a member's text, which the skim has already validated (and
/// which the full parser accepts whenever the skim does; `json_skim`'s tests
/// hold the two to that).
fn build(text: &str) -> Value {
    json::parse_simple(text).unwrap_or_else(|| json::parse(text).unwrap_or(Value::Undefined))
}
