//! Values crossing between V8 and the core's value model.
//!
//! Into the model: an event object as `{ ...event }` sees it (own
//! enumerable string keys), walked with a stack of its own so that no depth
//! of the caller's data can exhaust the native stack. Below the root only
//! plain data is walked: functions, symbols, BigInts and every object the
//! wrapper's `plainData` refuses (it converts itself, has getters, a class,
//! is a Proxy...) are kept by handle (`Value::Host`), as the old module
//! holds them: by reference.
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

use crate::env::{Js, JsResult};

/// A container being walked, with what it has gathered so far.
enum Open {
    Array { source: napi_value, len: u32, items: Vec<Value> },
    Object { source: napi_value, keys: Vec<napi_value>, members: Vec<(JsStr, Value)> },
}

impl Open {
    /// The next child still to read, if any.
    fn next_child(&self, js: Js) -> JsResult<Option<napi_value>> {
        match self {
            Open::Array { source, len, items } => {
                let i = items.len() as u32;
                if i < *len { js.element(*source, i).map(Some) } else { Ok(None) }
            }
            Open::Object { source, keys, members } => match keys.get(members.len()) {
                Some(key) => js.property(*source, *key).map(Some),
                None => Ok(None),
            },
        }
    }

    fn push(&mut self, js: Js, v: Value) -> JsResult<()> {
        match self {
            Open::Array { items, .. } => items.push(v),
            Open::Object { keys, members, .. } => {
                let key = js.to_js_str(keys[members.len()])?;
                members.push((key, v));
            }
        }
        Ok(())
    }

    fn close(self) -> Value {
        match self {
            Open::Array { items, .. } => Value::Array(items),
            Open::Object { members, .. } => {
                let mut o = Object::with_capacity(members.len());
                for (k, v) in members {
                    o.set_js(k, v);
                }
                Value::Object(o)
            }
        }
    }
}

/// Reads a JS value into the model; `kept` receives the values only V8 can
/// interpret, which `Value::Host(i)` then names by position. `plain` is the
/// wrapper's `plainData`, asked about every object below the root.
pub fn from_js(js: Js, v: napi_value, kept: &mut Vec<napi_value>, plain: napi_value) -> JsResult<Value> {
    let mut stack: Vec<Open> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            let walk = stack.is_empty() || is_plain(js, v, plain)?;
            match leaf_or_open(js, v, kept, walk)? {
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

/// Whether `v` is an object `plain` accepts (other values are not asked).
fn is_plain(js: Js, v: napi_value, plain: napi_value) -> JsResult<bool> {
    if js.type_of(v)? != sys::ValueType::napi_object {
        return Ok(true);
    }
    let answer = js.call(plain, plain, &[v])?;
    js.to_bool(answer)
}

fn leaf_or_open(js: Js, v: napi_value, kept: &mut Vec<napi_value>, walk: bool) -> JsResult<Result<Value, Open>> {
    use sys::ValueType as T;
    Ok(Ok(match js.type_of(v)? {
        T::napi_object if !walk => {
            kept.push(v);
            Value::Host((kept.len() - 1) as u32)
        }
        T::napi_undefined => Value::Undefined,
        T::napi_null => Value::Null,
        T::napi_boolean => Value::Bool(js.to_bool(v)?),
        T::napi_number => Value::Number(js.to_f64(v)?),
        T::napi_string => Value::String(js.to_js_str(v)?),
        T::napi_object if js.is_array(v)? => return Ok(Err(Open::Array { source: v, len: js.array_len(v)?, items: Vec::new() })),
        T::napi_object => return Ok(Err(Open::Object { source: v, keys: js.own_keys(v)?, members: Vec::new() })),
        _ => {
            kept.push(v);
            Value::Host((kept.len() - 1) as u32)
        }
    }))
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
    /// JSON text of `[[path, code, ...args], ...]`, empty when none.
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
                            self.patch("proto", &args);
                        }
                    }
                    _ => self.out.push(']'),
                },
            }
        }
    }

    fn leaf(&mut self, v: &'a Value) {
        match v {
            Value::Undefined => self.special("undefined", String::new()),
            Value::Number(n) if n.is_nan() => self.special("NaN", String::new()),
            Value::Number(n) if n.is_infinite() => self.special(if *n > 0.0 { "Infinity" } else { "-Infinity" }, String::new()),
            Value::Number(n) if *n == 0.0 && n.is_sign_negative() => self.special("-0", String::new()),
            Value::Host(h) => {
                self.kept.push(*h);
                self.special("host", (self.kept.len() - 1).to_string());
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
    fn special(&mut self, code: &str, args: String) {
        self.out.push_str("null");
        self.patch(code, &args);
    }

    fn patch(&mut self, code: &str, args: &str) {
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
        self.patches.push_str("],\"");
        self.patches.push_str(code);
        self.patches.push('"');
        if !args.is_empty() {
            self.patches.push(',');
            self.patches.push_str(args);
        }
        self.patches.push(']');
    }
}
