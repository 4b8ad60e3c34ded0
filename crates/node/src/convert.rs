//! Values crossing between V8 and the core's value model.
//!
//! Into the model: a value as `{ ...value }` sees it (own enumerable string
//! keys), walked with a stack of its own so that no depth of the caller's
//! data can exhaust the native stack. What is read as data is decided for
//! each object by a test the wrapper makes for one walk (`HOST_OPS.startWalk`):
//! plain data (no conversion, getter, class or Proxy: see its `plainData`),
//! met for the first time in this walk, and within the walk's budget of
//! values. Everything else (functions, symbols, BigInts, objects the test
//! refuses) is kept by handle (`Value::Host`), as the old module holds every
//! value: by reference. So a cycle, an object met twice, or an array of any
//! length (sparse ones included) is held where it is met again or would
//! exceed the budget, and V8 answers for it as it does for the old module:
//! no value makes the walk loop, recurse or copy without bound.
//!
//! Out of the model: JSON text for V8's own `JSON.parse` (faster than
//! building objects through Node-API one property at a time), plus, for the
//! few values JSON cannot carry (`undefined`, `NaN`, `-0`, `±Infinity`, kept
//! values, a set prototype), a list of patches the JS wrapper applies to the
//! parsed object. A snapshot has none as a rule, and is then a plain string.

use napi::sys::{self, napi_value};
use quiver_live_core::js::{json, JsStr, Members, Object, Value};
use quiver_live_core::session::schema::{Field, FIELD_KEYS};
use quiver_live_core::session::snapshot::Snapshot;

use crate::boundary::{Patch, WalkAnswer};
use crate::env::{Js, JsResult};

/// A container being walked: the object read, its place in the order the
/// walk met objects (see [`Walk`]), and what it has gathered so far.
struct Open {
    source: napi_value,
    met: u32,
    gathered: Gathered,
}

enum Gathered {
    Array { len: u32, items: Vec<Value> },
    Object { keys: Vec<napi_value>, members: Vec<(JsStr, Value)> },
}

impl Open {
    fn new(js: Js, source: napi_value, met: u32) -> JsResult<Open> {
        let gathered = if js.is_array(source)? {
            Gathered::Array { len: js.array_len(source)?, items: Vec::new() }
        } else {
            Gathered::Object { keys: js.own_keys(source)?, members: Vec::new() }
        };
        Ok(Open { source, met, gathered })
    }

    /// The next child still to read, if any.
    fn next_child(&self, js: Js) -> JsResult<Option<napi_value>> {
        match &self.gathered {
            Gathered::Array { len, items } => {
                let i = items.len() as u32;
                if i < *len { js.element(self.source, i).map(Some) } else { Ok(None) }
            }
            Gathered::Object { keys, members } => match keys.get(members.len()) {
                Some(key) => js.property(self.source, *key).map(Some),
                None => Ok(None),
            },
        }
    }

    fn push(&mut self, js: Js, v: Value) -> JsResult<()> {
        match &mut self.gathered {
            Gathered::Array { items, .. } => items.push(v),
            Gathered::Object { keys, members } => {
                let key = js.to_js_str(keys[members.len()])?;
                members.push((key, v));
            }
        }
        Ok(())
    }

    fn close(self) -> Value {
        match self.gathered {
            Gathered::Array { items, .. } => Value::Array(items),
            Gathered::Object { members, .. } => {
                let mut o = Object::with_capacity(members.len());
                for (k, v) in members {
                    o.set_js(k, v);
                }
                Value::Object(o)
            }
        }
    }
}

/// The wrapper's test of one walk (a function `HOST_OPS.startWalk()`
/// returns, made when the first object is met), asked about every object
/// met. It numbers the objects in the order it first meets them, as
/// [`Walk::met`] counts them here, and answers an object met before with
/// its number.
struct Walk {
    start: napi_value,
    test: Option<napi_value>,
    met: u32,
}

enum Meeting {
    /// Met for the first time: its number, and whether to read it as data.
    First { at: u32, read: bool },
    /// Met before, as the object numbered so.
    Again(u32),
}

impl Walk {
    fn meet(&mut self, js: Js, v: napi_value) -> JsResult<Meeting> {
        let test = match self.test {
            Some(test) => test,
            None => *self.test.insert(js.call(self.start, self.start, &[])?),
        };
        let answer = js.to_f64(js.call(test, test, &[v])?)?;
        if answer >= 0.0 {
            return Ok(Meeting::Again(answer as u32));
        }
        let at = self.met;
        self.met += 1;
        Ok(Meeting::First { at, read: answer == f64::from(WalkAnswer::Read as i32) })
    }
}

/// Reads a JS value into the model; `kept` receives the values only V8 can
/// interpret, which `Value::Host(i)` then names by position. `start_walk`
/// is the wrapper's `HOST_OPS.startWalk`. The root is read whatever the
/// test says (the reducer reads an event's members).
///
/// An object met again is held, not copied again. When it is one still
/// being read (a cycle), the copy of it is dropped and the object itself
/// held, so the value holds the caller's own object wherever the old
/// module's would first meet the cycle, and `JSON.stringify` names the same
/// circle; the root cannot be held, so a cycle through it holds the root's
/// member it runs through.
pub fn from_js(js: Js, v: napi_value, kept: &mut Vec<napi_value>, start_walk: napi_value) -> JsResult<Value> {
    let mut walk = Walk { start: start_walk, test: None, met: 0 };
    let mut stack: Vec<Open> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            match meet(js, v, kept, &mut walk, &mut stack)? {
                Ok(leaf) => match stack.last_mut() {
                    Some(top) => top.push(js, leaf)?,
                    None => return Ok(leaf),
                },
                Err(open) => stack.push(open),
            }
        }
        let Some(top) = stack.last() else { unreachable!("the walk returns once its root is read") };
        match top.next_child(js)? {
            Some(child) => next = Some(child),
            None => {
                let done = stack.pop().map(Open::close).unwrap_or(Value::Undefined);
                match stack.last_mut() {
                    Some(parent) => parent.push(js, done)?,
                    None => return Ok(done),
                }
            }
        }
    }
}

/// `v` as a leaf of the walk, or as a container to read.
fn meet(js: Js, v: napi_value, kept: &mut Vec<napi_value>, walk: &mut Walk, stack: &mut Vec<Open>) -> JsResult<Result<Value, Open>> {
    if js.type_of(v)? != sys::ValueType::napi_object {
        return leaf(js, v, kept).map(Ok);
    }
    let held = match walk.meet(js, v)? {
        Meeting::First { at, read } if read || stack.is_empty() => return Open::new(js, v, at).map(Err),
        Meeting::First { .. } => v,
        Meeting::Again(at) => match stack.binary_search_by_key(&at, |open| open.met) {
            Ok(0) if stack.len() > 1 => {
                let member = stack[1].source;
                stack.truncate(1);
                member
            }
            Ok(p) => {
                stack.truncate(p.max(1));
                v
            }
            Err(_) => v,
        },
    };
    Ok(Ok(hold(kept, held)))
}

fn hold(kept: &mut Vec<napi_value>, v: napi_value) -> Value {
    kept.push(v);
    Value::Host((kept.len() - 1) as u32)
}

/// A value that is not an object.
fn leaf(js: Js, v: napi_value, kept: &mut Vec<napi_value>) -> JsResult<Value> {
    use sys::ValueType as T;
    Ok(match js.type_of(v)? {
        T::napi_undefined => Value::Undefined,
        T::napi_null => Value::Null,
        T::napi_boolean => Value::Bool(js.to_bool(v)?),
        T::napi_number => Value::Number(js.to_f64(v)?),
        T::napi_string => Value::String(js.to_js_str(v)?),
        _ => hold(kept, v),
    })
}

/// A step from a parent to a child in a patch's path.
enum Step<'a> {
    Key(&'a JsStr),
    Index(usize),
}

/// JSON text of a snapshot for `JSON.parse`, with the patches that make the
/// parsed object equal the model.
pub struct Payload {
    pub json: String,
    /// JSON text of `[[path, code, ...args], ...]` (codes: [`Patch`]),
    /// empty when none.
    patches: String,
    /// The `Value::Host` handles met, in the order patches name them.
    pub kept: Vec<u32>,
}

impl Payload {
    pub fn of_snapshot(s: &Snapshot) -> Payload {
        Payload::of_members(s.members())
    }

    pub fn of_value(v: &Value) -> Payload {
        let mut w = Writer::default();
        w.value(v);
        w.finish()
    }

    /// Only the base fields `fields` of `s`, as an object.
    pub fn of_fields(s: &Snapshot, fields: &[Field]) -> Payload {
        Payload::of_members(fields.iter().map(|f| (&FIELD_KEYS[*f as usize], s.get(*f))))
    }

    fn of_members<'a>(members: impl Iterator<Item = (&'a JsStr, &'a Value)>) -> Payload {
        let mut w = Writer { out: String::with_capacity(4096), ..Writer::default() };
        w.members(members);
        w.finish()
    }

    /// The patches as JSON text, or `None` when the text says it all.
    pub fn patches(&self) -> Option<String> {
        (!self.patches.is_empty()).then(|| format!("[{}]", self.patches))
    }
}

/// A container being written and where its members stand.
enum Writing<'a> {
    Array(&'a [Value]),
    Object(&'a Object, Members<'a>),
}

#[derive(Default)]
struct Writer<'a> {
    out: String,
    patches: String,
    kept: Vec<u32>,
    path: Vec<Step<'a>>,
}

impl<'a> Writer<'a> {
    fn finish(self) -> Payload {
        Payload { json: self.out, patches: self.patches, kept: self.kept }
    }

    fn members(&mut self, members: impl Iterator<Item = (&'a JsStr, &'a Value)>) {
        self.out.push('{');
        for (i, (k, v)) in members.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            json::write_string(&mut self.out, k);
            self.out.push(':');
            self.path.push(Step::Key(k));
            self.value(v);
            self.path.pop();
        }
        self.out.push('}');
    }

    /// Writes `root`, its nested containers on a stack of their own (no
    /// depth of the value reaches the native stack). `self.path` leads to
    /// the value being written, for the patches of the values JSON cannot
    /// carry.
    fn value(&mut self, root: &'a Value) {
        let mut open: Vec<(Writing<'a>, usize)> = Vec::new();
        let mut next = Some(root);
        loop {
            if let Some(v) = next.take() {
                match v {
                    Value::Array(_) => self.out.push('['),
                    Value::Object(_) => self.out.push('{'),
                    leaf => self.leaf(leaf),
                }
                match v {
                    Value::Array(items) => open.push((Writing::Array(items), 0)),
                    Value::Object(o) => open.push((Writing::Object(o, o.iter()), 0)),
                    _ => {}
                }
            }
            let Some((container, started)) = open.last_mut() else { return };
            if *started > 0 {
                // The child started last is done.
                self.path.pop();
            }
            let i = *started;
            let child = match container {
                Writing::Array(items) => items.get(i).map(|item| (Step::Index(i), item)),
                Writing::Object(_, members) => members.next().map(|(k, v)| (Step::Key(k), v)),
            };
            match child {
                Some((step, child)) => {
                    *started += 1;
                    if i > 0 {
                        self.out.push(',');
                    }
                    if let Step::Key(k) = step {
                        json::write_string(&mut self.out, k);
                        self.out.push(':');
                    }
                    self.path.push(step);
                    next = Some(child);
                }
                None => match open.pop() {
                    Some((Writing::Object(o, _), _)) => {
                        self.out.push('}');
                        if let Some(proto) = o.proto() {
                            let args = self.apart(proto);
                            self.patch(Patch::Proto, &args);
                        }
                    }
                    _ => self.out.push(']'),
                },
            }
        }
    }

    fn leaf(&mut self, v: &'a Value) {
        match v {
            Value::Undefined => self.special(Patch::Undefined, String::new()),
            Value::Number(n) if n.is_nan() => self.special(Patch::NaN, String::new()),
            Value::Number(n) if n.is_infinite() => self.special(if *n > 0.0 { Patch::Infinity } else { Patch::NegativeInfinity }, String::new()),
            Value::Number(n) if *n == 0.0 && n.is_sign_negative() => self.special(Patch::NegativeZero, String::new()),
            Value::Host(h) => {
                self.kept.push(*h);
                self.special(Patch::Host, (self.kept.len() - 1).to_string());
            }
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => json::write_number(&mut self.out, *n),
            Value::String(text) => json::write_string(&mut self.out, text),
            Value::Array(_) | Value::Object(_) => unreachable!("containers are opened by value"),
        }
    }

    /// `v` as a payload of its own (text and patches), for a patch's
    /// arguments; kept values are numbered with this payload's.
    fn apart(&mut self, v: &'a Value) -> String {
        let mut sub = Writer { kept: std::mem::take(&mut self.kept), ..Writer::default() };
        sub.value(v);
        let Payload { json: text, patches, kept } = sub.finish();
        self.kept = kept;
        let mut args = String::new();
        json::write_string(&mut args, &JsStr::from(text));
        args.push_str(&format!(",[{patches}]"));
        args
    }

    /// A value JSON has no form for: `null` in the text, the patch beside it.
    fn special(&mut self, code: Patch, args: String) {
        self.out.push_str("null");
        self.patch(code, &args);
    }

    fn patch(&mut self, code: Patch, args: &str) {
        if !self.patches.is_empty() {
            self.patches.push(',');
        }
        self.patches.push_str("[[");
        for (i, step) in self.path.iter().enumerate() {
            if i > 0 {
                self.patches.push(',');
            }
            match step {
                Step::Key(k) => json::write_string(&mut self.patches, k),
                Step::Index(n) => self.patches.push_str(&n.to_string()),
            }
        }
        self.patches.push_str("],");
        self.patches.push_str(&(code as u32).to_string());
        if !args.is_empty() {
            self.patches.push(',');
            self.patches.push_str(args);
        }
        self.patches.push(']');
    }
}
