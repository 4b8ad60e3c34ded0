//! The session reducer: one journal entry in, the next snapshot out.
//!
//! Pure apart from the clock: it reads time only through [`Host`], so the
//! same entries give the same snapshot under test. It mirrors the old
//! module's `applyEvent` operator for operator (`??` versus `||`, `Number()`,
//! `>=` between mixed types), because callers compare snapshots with
//! `deepStrictEqual`. It updates the snapshot in place instead of copying it
//! per event: a copy per event made replay quadratic in the diagnostics.

use crate::js::date;
use crate::js::value::{is_integer, loose_ge, spread_array, spread_object, JsStr, Object, Value, UNDEFINED};

/// What the reducer needs from its JavaScript host.
pub trait Host {
    /// `Date.now()`.
    fn now_ms(&self) -> f64;
    /// `new Date().toISOString()`, an append's timestamp; `None` when the
    /// host's clock threw (a broken fake one), whose exception then stands
    /// and the append must not happen, as in the old module.
    fn timestamp(&self) -> Option<String> {
        Some(date::iso_string(self.now_ms()))
    }
    /// `Date.parse(s)` for text that is not the canonical ISO form.
    fn date_parse_fallback(&self, s: &JsStr) -> f64;
    /// The message `JSON.parse(line)` throws; called only for lines this
    /// crate's parser rejected, so its wording matches the running Node.
    fn json_parse_message(&self, line: &str) -> String;
}

/// `Date.parse(x)`: canonical ISO text is parsed here, the rest by the host.
pub fn date_parse(host: &dyn Host, v: &Value) -> f64 {
    let text = v.to_js_string();
    if let Some(ms) = text.as_str().and_then(date::parse_canonical_iso) {
        return ms;
    }
    host.date_parse_fallback(&text)
}

/// Phases that end a session's active life.
pub const COMPLETED_PHASES: [&str; 2] = ["completed", "discarded"];

/// Phases after which a late write from a canceled generation is a ghost:
/// it is journaled as a diagnostic instead of applied.
pub const GENERATION_FENCED_PHASES: [&str; 5] =
    ["accept_requested", "discard_requested", "carbonize_required", "completed", "discarded"];

/// The browser keeps at most this many mount failures: enough for the agent to
/// spot a variant that fails on every republish, not the whole retry storm.
const MOUNT_FAILURE_HISTORY: usize = 5;

pub fn is_completed(phase: &Value) -> bool {
    phase.as_js_str().is_some_and(|p| COMPLETED_PHASES.iter().any(|c| p.eq_str(c)))
}

fn is_fenced(phase: &Value) -> bool {
    phase.as_js_str().is_some_and(|p| GENERATION_FENCED_PHASES.iter().any(|c| p.eq_str(c)))
}

/// The keys of [`base_snapshot`], in order.
pub const BASE_KEYS: [&str; 32] = [
    "id", "phase", "pageUrl", "sourceFile", "previewFile", "previewMode", "expectedVariants", "arrivedVariants",
    "visibleVariant", "paramValues", "pendingEventSeq", "pendingEvent", "deliveryLease", "checkpointRevision",
    "browserCheckpointRevision", "publicationCheckpointRevision", "activeOwner", "sourceMarkers", "fallbackMode",
    "generationPhase", "generationCompletedAt", "generationTimings", "variantPlan", "generationCanceled",
    "generationCanceledAt", "cancelReason", "annotationArtifacts", "mountedVariants", "mountFailures",
    "renderState", "diagnostics", "updatedAt",
];

/// The snapshot of a session no event has touched. Key order is part of the
/// contract: it is the order callers and snapshot files see.
pub fn base_snapshot(id: &JsStr) -> Object {
    let mut s = Object::new();
    let null = || Value::Null;
    s.set_js(JsStr::from("id"), Value::String(id.clone()));
    s.set("phase", Value::str("new"));
    for k in ["pageUrl", "sourceFile", "previewFile", "previewMode"] {
        s.set(k, null());
    }
    s.set("expectedVariants", Value::Number(0.0));
    s.set("arrivedVariants", Value::Number(0.0));
    s.set("visibleVariant", null());
    s.set("paramValues", Value::Object(Object::new()));
    for k in ["pendingEventSeq", "pendingEvent", "deliveryLease"] {
        s.set(k, null());
    }
    for k in ["checkpointRevision", "browserCheckpointRevision", "publicationCheckpointRevision"] {
        s.set(k, Value::Number(0.0));
    }
    s.set("activeOwner", null());
    s.set("sourceMarkers", Value::Object(Object::new()));
    s.set("fallbackMode", null());
    s.set("generationPhase", null());
    s.set("generationCompletedAt", null());
    s.set("generationTimings", Value::Object(Object::new()));
    s.set("variantPlan", null());
    s.set("generationCanceled", Value::Bool(false));
    s.set("generationCanceledAt", null());
    s.set("cancelReason", null());
    s.set("annotationArtifacts", Value::Array(Vec::new()));
    s.set("mountedVariants", Value::Array(Vec::new()));
    s.set("mountFailures", Value::Array(Vec::new()));
    s.set("renderState", null());
    s.set("diagnostics", Value::Array(Vec::new()));
    s.set("updatedAt", null());
    s
}

/// What the reducer reads of a journal entry and of its event: properties
/// by name, and for a pending event the whole object as `{ ...event }`.
/// A [`Value`] is one; a replayed line is another that builds only the
/// values read (see `lazy_record`), which is most of a replay's cost.
pub trait Record {
    /// `record[key]`, `undefined` when absent.
    fn get(&self, key: &str) -> &Value;
    /// `{ ...record }`.
    fn spread(&self) -> Object;
}

impl Record for Value {
    fn get(&self, key: &str) -> &Value {
        Value::get(self, key)
    }
    fn spread(&self) -> Object {
        spread_object(self)
    }
}

/// Applies one journal entry. On `Err` (the TypeError message JS would
/// throw) the snapshot is left exactly as it was, as the JS leaves its
/// previous snapshot when building the next one throws.
pub fn apply_event(snap: &mut Object, entry: &Value, host: &dyn Host) -> Result<(), String> {
    let event = if entry.get("event").truthy() { entry.get("event") } else { entry };
    apply_entry(snap, entry, event, host)
}

/// [`apply_event`] with the event already picked out of the entry: its
/// `event` property when that is truthy, else the entry itself.
pub fn apply_entry<R: Record + ?Sized>(snap: &mut Object, entry: &R, event: &R, host: &dyn Host) -> Result<(), String> {
    // Read once: the precheck and the dispatch both match on it.
    let ty = event.get("type").as_js_str().and_then(JsStr::as_str).unwrap_or("");
    let normalized = normalize_fields(snap)?;
    precheck(snap, entry, event, ty)?;
    for (k, v) in normalized {
        snap.set(k, v);
    }
    let updated = entry.get("ts").or_falsy(Value::Undefined);
    let updated = if updated.truthy() { updated } else { Value::String(JsStr::Utf8(date::iso_string(host.now_ms()))) };
    snap.set("updatedAt", updated);
    let mut r = Reduction { s: snap, entry, event, host };
    r.dispatch(ty);
    Ok(())
}

/// The old module rebuilds a few fields with spreads on every event; for the
/// usual types these are no-ops, for odd hydrated values they coerce (or
/// throw, which must happen before anything is changed).
fn normalize_fields(s: &Object) -> Result<Vec<(&'static str, Value)>, String> {
    if already_normal(s) {
        return Ok(Vec::new());
    }
    rebuilt_fields(s)
}

/// What [`normalize_fields`] changes, worked out field by field.
fn rebuilt_fields(s: &Object) -> Result<Vec<(&'static str, Value)>, String> {
    let get = |k: &str| s.get(k).unwrap_or(&UNDEFINED);
    let mut out = Vec::new();
    for k in ["paramValues", "sourceMarkers", "generationTimings"] {
        match get(k) {
            Value::Object(o) => {
                if let Some(own) = o.without_proto() {
                    out.push((k, Value::Object(own)));
                }
            }
            v => out.push((k, Value::Object(spread_object(if v.truthy() { v } else { &UNDEFINED })))),
        }
    }
    let plan = get("variantPlan");
    if !plan.truthy() && !matches!(plan, Value::Null) {
        out.push(("variantPlan", Value::Null));
    }
    for k in ["annotationArtifacts", "mountedVariants", "mountFailures"] {
        push_array_spread(&mut out, k, get(k))?;
    }
    if matches!(get("renderState"), Value::Undefined) {
        out.push(("renderState", Value::Null));
    }
    push_array_spread(&mut out, "diagnostics", get("diagnostics"))?;
    Ok(out)
}

/// Whether every field [`normalize_fields`] rebuilds already has the type
/// its rebuild gives, so there is nothing to rebuild: true for every
/// snapshot this reducer makes from a base snapshot. Each key is a literal,
/// so each read folds to one compare at a known slot (see `Object::get`);
/// looping over the keys instead cost some 900 instructions per event.
#[inline]
fn already_normal(s: &Object) -> bool {
    let plain_object = |v: Option<&Value>| matches!(v, Some(Value::Object(o)) if o.proto().is_none());
    let array = |v: Option<&Value>| matches!(v, Some(Value::Array(_)));
    plain_object(s.get("paramValues"))
        && plain_object(s.get("sourceMarkers"))
        && plain_object(s.get("generationTimings"))
        && s.get("variantPlan").is_some_and(|p| p.truthy() || matches!(p, Value::Null))
        && array(s.get("annotationArtifacts"))
        && array(s.get("mountedVariants"))
        && array(s.get("mountFailures"))
        && !matches!(s.get("renderState"), None | Some(Value::Undefined))
        && array(s.get("diagnostics"))
}

fn push_array_spread(out: &mut Vec<(&'static str, Value)>, key: &'static str, v: &Value) -> Result<(), String> {
    if matches!(v, Value::Array(_)) {
        return Ok(());
    }
    let items = if v.truthy() { spread_array(v, &format!("(snapshot.{} || [])", key))? } else { Vec::new() };
    out.push((key, Value::Array(items)));
    Ok(())
}

/// Checks whose failure must leave the snapshot untouched: every coercion
/// the case will make that can throw in JS (`Number(x)`, `String(x)`, `>=`
/// on an object owning a non-callable `toString`) is tried here first.
/// `ty` is the event's type when it is a string (else empty).
fn precheck<R: Record + ?Sized>(s: &Object, entry: &R, event: &R, ty: &str) -> Result<(), String> {
    // One match on the type instead of a string compare per case: this runs
    // for every event replayed or appended.
    let get = |k: &str| s.get(k).unwrap_or(&UNDEFINED);
    let fenced = get("generationCanceled").truthy() || is_fenced(get("phase"));
    let ts_text = || entry.get("ts").or_falsy(Value::str("")).try_to_js_string().map(|_| ());
    let uses_event_time = || event.get("at").is_nullish();
    match ty {
        "variant_mounted" | "variant_mount_failed" => {
            let n = event.get("variant").try_to_number()?;
            if ty == "variant_mount_failed" && n.is_finite() && n.trunc() == n && n >= 1.0 && uses_event_time() {
                ts_text()?;
            }
        }
        "checkpoint" if !fenced => {
            let publication = event.get("revisionDomain").as_js_str().is_some_and(|d| d.eq_str("publication"))
                || (event.get("reason").as_js_str().is_some_and(|r| r.eq_str("variants_progress")) && !event.get("owner").truthy());
            let field = if publication { "publicationCheckpointRevision" } else { "browserCheckpointRevision" };
            let fallback = if publication { Value::Number(0.0) } else { get("checkpointRevision").clone() };
            let current = get(field).or_nullish(fallback).or_nullish(Value::Number(0.0));
            crate::js::value::try_loose_ge(&event.get("revision").or_nullish(Value::Number(0.0)), &current)?;
        }
        "accept" | "accept_intent" | "discard" => {
            if uses_event_time() {
                ts_text()?;
            }
            if ty != "discard" {
                event.get("variantId").or_nullish(get("visibleVariant").clone()).try_to_number()?;
            }
        }
        "variants_ready" | "agent_done" => {
            let carbonize_after_accept = ty == "agent_done"
                && matches!(event.get("carbonize"), Value::Bool(true))
                && get("phase").as_js_str().is_some_and(|p| p.eq_str("accept_requested"));
            if (!fenced || carbonize_after_accept) && uses_event_time() {
                ts_text()?;
            }
        }
        "agent_phase" if event.get("phase").truthy() => {
            event.get("phase").try_to_js_string()?;
            if uses_event_time() {
                ts_text()?;
            }
        }
        "generate" if event.get("screenshotPath").truthy() => {
            if let Some(Value::Array(items)) = s.get("annotationArtifacts") {
                artifact_position(items, event.get("screenshotPath"))?;
            }
        }
        "detector_waivers" if !fenced => {
            let current = get("detectorWaivers");
            if current.truthy() {
                spread_array(current, "(next.detectorWaivers || [])")?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `artifacts.some(a => a.path === path && a.type === 'screenshot')`, with the
/// TypeError JS throws on reaching a null or undefined element.
fn artifact_position(items: &[Value], path: &Value) -> Result<bool, String> {
    for item in items {
        match item {
            Value::Undefined | Value::Null => {
                let what = if matches!(item, Value::Null) { "null" } else { "undefined" };
                return Err(format!("Cannot read properties of {} (reading 'path')", what));
            }
            _ if item.get("path").strict_equals(path) && item.get("type").strict_equals(&Value::str("screenshot")) => {
                return Ok(true)
            }
            _ => {}
        }
    }
    Ok(false)
}

struct Reduction<'a, R: Record + ?Sized> {
    s: &'a mut Object,
    entry: &'a R,
    event: &'a R,
    host: &'a dyn Host,
}

impl<R: Record + ?Sized> Reduction<'_, R> {
    fn ev(&self, k: &str) -> &Value {
        self.event.get(k)
    }

    fn cur(&self, k: &str) -> Value {
        self.peek(k).clone()
    }

    fn peek(&self, k: &str) -> &Value {
        self.s.get(k).unwrap_or(&UNDEFINED)
    }

    fn set(&mut self, k: &str, v: Value) {
        self.s.set(k, v);
    }

    /// `next.k = event.ek ?? next.k`: a nullish event value leaves the key
    /// as it is, except that a missing key is created holding `undefined`.
    fn take_or_keep(&mut self, k: &str, ek: &str) {
        let v = self.ev(ek);
        if !v.is_nullish() {
            let v = v.clone();
            self.set(k, v);
        } else if self.s.get(k).is_none() {
            self.set(k, Value::Undefined);
        }
    }

    /// `next.k = event.a ?? event.b ?? next.k`
    fn take_either_or_keep(&mut self, k: &str, a: &str, b: &str) {
        if self.ev(a).is_nullish() {
            self.take_or_keep(k, b);
        } else {
            self.take_or_keep(k, a);
        }
    }

    fn diag(&mut self, d: Object) {
        if let Some(Value::Array(items)) = self.s.get_mut("diagnostics") {
            items.push(Value::Object(d));
        }
    }

    fn canceled_or_fenced(&self) -> bool {
        self.peek("generationCanceled").truthy() || is_fenced(self.peek("phase"))
    }

    /// `Date.parse(entry.ts || '')`
    fn entry_time(&self) -> f64 {
        date_parse(self.host, &self.entry.get("ts").or_falsy(Value::str("")))
    }

    /// `event.at ?? (Date.parse(entry.ts || '') || Date.now())`
    fn event_time_or_now(&self) -> Value {
        let at = self.ev("at");
        if !at.is_nullish() {
            return at.clone();
        }
        let parsed = self.entry_time();
        Value::Number(if parsed.is_nan() || parsed == 0.0 { self.host.now_ms() } else { parsed })
    }

    /// `next.pendingEventSeq = entry.seq ?? next.pendingEventSeq; next.pendingEvent = {...event} - token`
    fn make_pending(&mut self) {
        let seq = self.entry.get("seq");
        if !seq.is_nullish() {
            let seq = seq.clone();
            self.set("pendingEventSeq", seq);
        }
        self.set_pending_event();
    }

    /// `next.pendingEvent = {...event} - token`
    fn set_pending_event(&mut self) {
        let pending = pending_event(self.event);
        self.set("pendingEvent", pending);
    }

    fn clear_pending(&mut self) {
        self.set("pendingEventSeq", Value::Null);
        self.set("pendingEvent", Value::Null);
    }

    fn dispatch(&mut self, ty: &str) {
        match ty {
            "generate" => self.generate(),
            "variant_plan" => self.variant_plan(),
            "detector_waivers" => self.detector_waivers(),
            "agent_phase" => self.agent_phase(),
            "variants_ready" | "agent_done" => self.generation_done(),
            "variant_mounted" => self.variant_mounted(),
            "variant_mount_failed" => self.variant_mount_failed(),
            "checkpoint" => self.checkpoint(),
            "accept" | "accept_intent" => self.accept(),
            "manual_edit_apply" => self.request_with_page("manual_edit_apply_requested"),
            "steer" => self.request_with_page("steer_requested"),
            "carbonize_cleanup" => self.carbonize_cleanup(),
            "steer_done" => self.steer_done(),
            "discard" => self.discard(),
            "discarded" => {
                self.set("phase", Value::str("discarded"));
                self.clear_pending();
            }
            "complete" => self.complete(),
            "agent_error" => self.agent_error(),
            _ => {
                let t = self.ev("type").clone();
                self.diag(obj(&[("error", Value::str("unknown_event_type")), ("type", t)]));
            }
        }
    }

    fn generate(&mut self) {
        self.set("phase", Value::str("generate_requested"));
        self.take_or_keep("pageUrl", "pageUrl");
        self.take_or_keep("expectedVariants", "count");
        self.make_pending();
        self.set("variantPlan", Value::Null);
        // A new cycle publishes new modules: what the browser said about the
        // previous batch no longer describes anything on screen.
        self.set("mountedVariants", Value::Array(Vec::new()));
        self.set("mountFailures", Value::Array(Vec::new()));
        self.set("renderState", Value::Null);
        let shot = self.ev("screenshotPath").clone();
        if shot.truthy() {
            if let Some(Value::Array(items)) = self.s.get_mut("annotationArtifacts") {
                if !artifact_position(items, &shot).unwrap_or(true) {
                    items.push(Value::Object(obj(&[("type", Value::str("screenshot")), ("path", shot)])));
                }
            }
        }
    }

    fn variant_plan(&mut self) {
        if self.canceled_or_fenced() {
            return;
        }
        self.take_or_keep("variantPlan", "plan");
    }

    fn detector_waivers(&mut self) {
        if self.canceled_or_fenced() {
            return;
        }
        let current = self.cur("detectorWaivers");
        let mut items = if current.truthy() { spread_array(&current, "").unwrap_or_default() } else { Vec::new() };
        if let Value::Array(extra) = self.ev("waivers") {
            items.extend(extra.iter().cloned());
        }
        self.set("detectorWaivers", Value::Array(items));
    }

    fn agent_phase(&mut self) {
        self.take_or_keep("generationPhase", "phase");
        let phase = self.ev("phase").clone();
        if !phase.truthy() {
            return;
        }
        let parsed = self.entry_time();
        let at = self.ev("at").or_nullish(if parsed.is_nan() || parsed == 0.0 { Value::Null } else { Value::Number(parsed) });
        let timing = obj(&[("at", at), ("durationMs", self.ev("durationMs").or_nullish(Value::Null))]);
        if let Some(Value::Object(timings)) = self.s.get_mut("generationTimings") {
            let key = phase.to_js_string();
            // Assigning `obj.__proto__` goes through the prototype setter and
            // creates no key, unless the object already owns such a key.
            if !key.eq_str("__proto__") || timings.contains_key(&key) {
                timings.set_js(key, Value::Object(timing));
            } else {
                timings.assign_proto(Value::Object(timing));
            }
        }
    }

    fn generation_done(&mut self) {
        let carbonize = matches!(self.ev("carbonize"), Value::Bool(true));
        let is_agent_done = self.ev("type").as_js_str().is_some_and(|t| t.eq_str("agent_done"));
        let phase = self.cur("phase");
        let carbonize_after_accept = is_agent_done && carbonize && phase.as_js_str().is_some_and(|p| p.eq_str("accept_requested"));
        if self.canceled_or_fenced() && !carbonize_after_accept {
            let t = self.ev("type").clone();
            self.diag(obj(&[("error", Value::str("late_generation_event_ignored")), ("type", t), ("phase", phase)]));
            return;
        }
        self.set("phase", Value::str(if carbonize { "carbonize_required" } else { "variants_ready" }));
        // Monotone completion marker: a resumed browser may regress `phase`,
        // but finished generation stays finished (missed-`done` redelivery keys on it).
        let done_at = self.event_time_or_now();
        self.set("generationCompletedAt", done_at);
        self.take_either_or_keep("sourceFile", "sourceFile", "file");
        self.take_or_keep("previewFile", "previewFile");
        self.take_or_keep("previewMode", "previewMode");
        let fallback = self.cur("expectedVariants").or_falsy(self.cur("arrivedVariants").or_falsy(Value::Number(0.0)));
        let arrived = self.ev("arrivedVariants").or_nullish(fallback);
        self.set("arrivedVariants", arrived);
        self.clear_pending();
        if carbonize {
            let file = self.ev("file").or_falsy(Value::Null);
            self.diag(obj(&[
                ("error", Value::str("carbonize_cleanup_required")),
                ("file", file),
                ("message", Value::str("Accepted variant still has carbonize markers that must be folded into source CSS.")),
            ]));
        }
        self.update_render_state();
    }

    /// `Number(event.variant)` when it is a positive integer; otherwise records
    /// the malformed ack and returns `None`.
    fn mount_variant(&mut self) -> Option<f64> {
        let variant = self.ev("variant").to_number();
        if variant.is_finite() && variant.trunc() == variant && variant >= 1.0 {
            return Some(variant);
        }
        let raw = self.ev("variant").or_nullish(Value::Null);
        let t = self.ev("type").clone();
        self.diag(obj(&[("error", Value::str("malformed_mount_ack")), ("type", t), ("variant", raw)]));
        None
    }

    fn variant_mounted(&mut self) {
        let Some(variant) = self.mount_variant() else { return };
        if let Some(Value::Array(items)) = self.s.get_mut("mountedVariants") {
            if !items.iter().any(|v| same_value_zero(v, variant)) {
                items.push(Value::Number(variant));
                items.sort_by(|a, b| {
                    let d = a.to_number() - b.to_number();
                    d.partial_cmp(&0.0).unwrap_or(std::cmp::Ordering::Equal)
                });
            }
        }
        self.update_render_state();
    }

    fn variant_mount_failed(&mut self) {
        let Some(variant) = self.mount_variant() else { return };
        let string_or_null = |v: &Value| if matches!(v, Value::String(_)) { v.clone() } else { Value::Null };
        let failure = obj(&[
            ("variant", Value::Number(variant)),
            ("url", string_or_null(self.ev("url"))),
            ("error", string_or_null(self.ev("error"))),
            ("at", self.event_time_or_now()),
        ]);
        if let Some(Value::Array(items)) = self.s.get_mut("mountFailures") {
            items.push(Value::Object(failure));
            let excess = items.len().saturating_sub(MOUNT_FAILURE_HISTORY);
            items.drain(..excess);
        }
        self.update_render_state();
        // The failure needs an agent reply, so it must survive a helper restart
        // like a generate does, but never clobbers a generate still pending.
        if !self.peek("pendingEvent").truthy() {
            self.set_pending_event();
        }
    }

    fn update_render_state(&mut self) {
        let len = |v: &Value| match v {
            Value::Array(items) => items.len(),
            _ => 0,
        };
        let state = if len(self.peek("mountedVariants")) > 0 {
            Value::str("mounted")
        } else if len(self.peek("mountFailures")) > 0 {
            Value::str("failed")
        } else if self.peek("generationCompletedAt").truthy() {
            Value::str("pending")
        } else {
            Value::Null
        };
        self.set("renderState", state);
    }

    fn checkpoint(&mut self) {
        if self.canceled_or_fenced() {
            let phase = self.ev("phase").or_nullish(Value::Null);
            let revision = self.ev("revision").or_nullish(Value::Null);
            self.diag(obj(&[("error", Value::str("checkpoint_after_terminal_ignored")), ("phase", phase), ("revision", revision)]));
            return;
        }
        let publication = self.ev("revisionDomain").as_js_str().is_some_and(|d| d.eq_str("publication"))
            || (self.ev("reason").as_js_str().is_some_and(|r| r.eq_str("variants_progress")) && !self.ev("owner").truthy());
        let (domain, field) = if publication {
            ("publication", "publicationCheckpointRevision")
        } else {
            ("browser", "browserCheckpointRevision")
        };
        let fallback = if publication { Value::Number(0.0) } else { self.cur("checkpointRevision") };
        let current = self.cur(field).or_nullish(fallback).or_nullish(Value::Number(0.0));
        let revision = self.ev("revision").clone();
        if !loose_ge(&revision.or_nullish(Value::Number(0.0)), &current) {
            self.diag(obj(&[("error", Value::str("stale_checkpoint_ignored")), ("revision", revision), ("revisionDomain", Value::str(domain))]));
            return;
        }
        self.take_or_keep("phase", "phase");
        self.set(field, revision.or_nullish(current));
        if !publication {
            self.take_or_keep("checkpointRevision", "revision");
            self.take_or_keep("activeOwner", "owner");
        }
        self.take_or_keep("arrivedVariants", "arrivedVariants");
        if !publication {
            self.take_or_keep("visibleVariant", "visibleVariant");
        }
        self.take_or_keep("sourceFile", "sourceFile");
        self.take_or_keep("previewFile", "previewFile");
        self.take_or_keep("previewMode", "previewMode");
        if !publication {
            self.copy_param_values();
        }
    }

    /// `if (event.paramValues) next.paramValues = { ...event.paramValues }`
    fn copy_param_values(&mut self) {
        let pv = self.ev("paramValues");
        if pv.truthy() {
            let copy = spread_object(pv);
            self.set("paramValues", Value::Object(copy));
        }
    }

    fn cancel(&mut self, phase: &str, reason: &str) {
        self.set("phase", Value::str(phase));
        self.set("generationCanceled", Value::Bool(true));
        let at = self.event_time_or_now();
        self.set("generationCanceledAt", at);
        self.set("cancelReason", Value::str(reason));
    }

    fn accept(&mut self) {
        self.cancel("accept_requested", "accept");
        let visible = self.ev("variantId").or_nullish(self.cur("visibleVariant")).to_number();
        self.set("visibleVariant", Value::Number(visible));
        self.copy_param_values();
        self.make_pending();
    }

    fn request_with_page(&mut self, phase: &str) {
        self.set("phase", Value::str(phase));
        self.take_or_keep("pageUrl", "pageUrl");
        self.make_pending();
    }

    fn carbonize_cleanup(&mut self) {
        self.set("phase", Value::str("carbonize_cleanup_requested"));
        self.take_or_keep("sourceFile", "file");
        self.make_pending();
    }

    fn finish_with_files(&mut self, phase: &str) {
        self.set("phase", Value::str(phase));
        self.take_either_or_keep("sourceFile", "sourceFile", "file");
        self.take_or_keep("previewFile", "previewFile");
        self.take_or_keep("previewMode", "previewMode");
    }

    fn steer_done(&mut self) {
        self.finish_with_files("steer_done");
        self.take_or_keep("message", "message");
        self.clear_pending();
    }

    fn discard(&mut self) {
        self.cancel("discard_requested", "discard");
        self.make_pending();
    }

    fn complete(&mut self) {
        self.finish_with_files("completed");
        self.clear_pending();
    }

    fn agent_error(&mut self) {
        let from_generate = self.ev("sourceEventType").as_js_str().is_some_and(|t| t.eq_str("generate"));
        if self.peek("generationCanceled").truthy() && from_generate {
            let (t, phase) = (self.ev("type").clone(), self.cur("phase"));
            self.diag(obj(&[("error", Value::str("late_generation_event_ignored")), ("type", t), ("phase", phase)]));
            return;
        }
        self.set("phase", Value::str("agent_error"));
        self.clear_pending();
        let message = self.ev("message").or_falsy(Value::str("unknown agent error"));
        self.diag(obj(&[("error", Value::str("agent_error")), ("message", message)]));
    }
}

fn same_value_zero(v: &Value, n: f64) -> bool {
    matches!(v, Value::Number(x) if *x == n || (x.is_nan() && n.is_nan()))
}

/// `{ ...event }` without the delivery token, which must never be replayed to
/// another reader.
fn pending_event<R: Record + ?Sized>(event: &R) -> Value {
    without_token(event.spread())
}

/// A pending event from the copy of its event: the token removed.
pub fn without_token(mut copy: Object) -> Value {
    copy.remove("token");
    Value::Object(copy)
}

pub fn obj(pairs: &[(&str, Value)]) -> Object {
    let mut o = Object::new();
    for (k, v) in pairs {
        o.set(k, v.clone());
    }
    o
}

/// Whether an entry's `seq` advances the next sequence number (`Number.isInteger`).
pub fn entry_seq<R: Record + ?Sized>(entry: &R) -> Option<f64> {
    let seq = entry.get("seq");
    is_integer(seq).then(|| seq.to_number())
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::js::json;

    /// A fixed clock; `Date.parse` only understands the canonical form.
    pub struct TestHost(pub f64);

    impl Host for TestHost {
        fn now_ms(&self) -> f64 {
            self.0
        }
        fn date_parse_fallback(&self, _s: &JsStr) -> f64 {
            f64::NAN
        }
        fn json_parse_message(&self, line: &str) -> String {
            json::parse(line).err().map_or_else(String::new, |e| e.message)
        }
    }

    fn run(events: &[&str]) -> Object {
        let host = TestHost(1_893_456_000_000.0);
        let mut s = base_snapshot(&JsStr::from("s"));
        for (i, e) in events.iter().enumerate() {
            let text = format!(r#"{{"seq":{},"id":"s","ts":"2030-01-01T00:00:0{}.000Z","event":{}}}"#, i + 1, i % 10, e);
            apply_event(&mut s, &json::parse(&text).unwrap(), &host).unwrap();
        }
        s
    }

    fn field(s: &Object, k: &str) -> String {
        json::stringify(s.get(k).unwrap_or(&Value::Undefined)).unwrap_or_else(|| "undefined".into())
    }

    #[test]
    fn base_snapshot_key_order() {
        let keys: Vec<String> = base_snapshot(&JsStr::from("x")).iter().map(|(k, _)| k.to_lossy()).collect();
        assert_eq!(keys, BASE_KEYS);
    }

    #[test]
    fn generate_then_done_sets_render_pending() {
        let s = run(&[r#"{"type":"generate","count":3,"token":"t","screenshotPath":"/a.png"}"#, r#"{"type":"agent_done"}"#]);
        assert_eq!(field(&s, "phase"), r#""variants_ready""#);
        assert_eq!(field(&s, "arrivedVariants"), "3");
        assert_eq!(field(&s, "renderState"), r#""pending""#);
        assert_eq!(field(&s, "generationCompletedAt"), "1893456001000");
        assert_eq!(field(&s, "annotationArtifacts"), r#"[{"type":"screenshot","path":"/a.png"}]"#);
    }

    #[test]
    fn pending_event_drops_token() {
        let s = run(&[r#"{"type":"generate","token":"secret","x":1}"#]);
        assert_eq!(field(&s, "pendingEvent"), r#"{"type":"generate","x":1}"#);
        assert_eq!(field(&s, "pendingEventSeq"), "1");
    }

    #[test]
    fn mounts_sort_and_failures_keep_five() {
        let mut evs = vec![r#"{"type":"variant_mounted","variant":"3"}"#, r#"{"type":"variant_mounted","variant":[1]}"#, r#"{"type":"variant_mounted","variant":"x"}"#];
        let fail = r#"{"type":"variant_mount_failed","variant":2,"url":5}"#;
        evs.extend(std::iter::repeat_n(fail, 7));
        let s = run(&evs);
        assert_eq!(field(&s, "mountedVariants"), "[1,3]");
        assert_eq!(field(&s, "renderState"), r#""mounted""#);
        match s.get("mountFailures") {
            Some(Value::Array(f)) => assert_eq!(f.len(), 5),
            other => panic!("{other:?}"),
        }
        assert!(field(&s, "diagnostics").contains(r#"{"error":"malformed_mount_ack","type":"variant_mounted","variant":"x"}"#));
    }

    #[test]
    fn checkpoint_domains_and_mixed_type_revisions() {
        let s = run(&[
            r#"{"type":"checkpoint","revision":" 3 ","phase":"generating"}"#,
            r#"{"type":"checkpoint","revision":2}"#,
            r#"{"type":"checkpoint","revisionDomain":"publication","revision":1,"arrivedVariants":2}"#,
            r#"{"type":"checkpoint","reason":"variants_progress","revision":0}"#,
        ]);
        assert_eq!(field(&s, "browserCheckpointRevision"), r#"" 3 ""#);
        assert_eq!(field(&s, "publicationCheckpointRevision"), "1");
        assert_eq!(field(&s, "arrivedVariants"), "2");
        let d = field(&s, "diagnostics");
        assert!(d.contains(r#"{"error":"stale_checkpoint_ignored","revision":2,"revisionDomain":"browser"}"#), "{d}");
        assert!(d.contains(r#""revision":0,"revisionDomain":"publication""#), "{d}");
    }

    #[test]
    fn stale_checkpoint_without_revision_keeps_undefined_key() {
        let s = run(&[r#"{"type":"checkpoint","revision":5}"#, r#"{"type":"checkpoint","revision":-1}"#, r#"{"type":"checkpoint"}"#]);
        let Some(Value::Array(d)) = s.get("diagnostics") else { panic!() };
        // `{}` (no revision) is `0 >= 5`: stale, and `revision: undefined` is a real key.
        let Value::Object(last) = &d[1] else { panic!() };
        assert!(matches!(last.get("revision"), Some(Value::Undefined)));
        assert_eq!(json::stringify(&d[1]).unwrap(), r#"{"error":"stale_checkpoint_ignored","revisionDomain":"browser"}"#);
    }

    #[test]
    fn fencing_after_accept() {
        let s = run(&[
            r#"{"type":"generate"}"#,
            r#"{"type":"accept","variantId":"2"}"#,
            r#"{"type":"variants_ready"}"#,
            r#"{"type":"variant_plan","plan":[1]}"#,
            r#"{"type":"checkpoint","revision":9}"#,
            r#"{"type":"agent_error","sourceEventType":"generate"}"#,
            r#"{"type":"agent_done","carbonize":true}"#,
        ]);
        assert_eq!(field(&s, "phase"), r#""carbonize_required""#);
        assert_eq!(field(&s, "visibleVariant"), "2");
        assert_eq!(field(&s, "variantPlan"), "null");
        assert_eq!(field(&s, "cancelReason"), r#""accept""#);
        let d = field(&s, "diagnostics");
        for e in ["late_generation_event_ignored", "checkpoint_after_terminal_ignored", "carbonize_cleanup_required"] {
            assert!(d.contains(e), "{e} in {d}");
        }
    }

    #[test]
    fn accept_with_bad_variant_is_nan_in_memory_null_on_disk() {
        let s = run(&[r#"{"type":"accept","variantId":"abc"}"#]);
        assert!(matches!(s.get("visibleVariant"), Some(Value::Number(n)) if n.is_nan()));
        assert_eq!(field(&s, "visibleVariant"), "null");
    }

    #[test]
    fn agent_phase_timings_and_proto_key() {
        let s = run(&[r#"{"type":"agent_phase","phase":"scaffolding","durationMs":5}"#, r#"{"type":"agent_phase","phase":"__proto__"}"#, r#"{"type":"agent_phase","phase":7}"#]);
        assert_eq!(field(&s, "generationTimings"), r#"{"7":{"at":1893456002000,"durationMs":null},"scaffolding":{"at":1893456000000,"durationMs":5}}"#);
        assert_eq!(field(&s, "generationPhase"), "7");
    }

    #[test]
    fn steer_done_adds_message_key_even_when_undefined() {
        let s = run(&[r#"{"type":"steer_done"}"#]);
        assert!(matches!(s.get("message"), Some(Value::Undefined)));
        let keys: Vec<String> = s.iter().map(|(k, _)| k.to_lossy()).collect();
        assert_eq!(keys.last().map(String::as_str), Some("message"));
    }

    /// The shortcut agrees with the field-by-field work on every field and
    /// every kind of value: it may skip the work only when nothing changes.
    #[test]
    fn normal_snapshots_are_those_nothing_is_rebuilt_in() {
        let fields = [
            "paramValues", "sourceMarkers", "generationTimings", "variantPlan", "annotationArtifacts", "mountedVariants",
            "mountFailures", "renderState", "diagnostics",
        ];
        let mut with_proto = Object::new();
        with_proto.assign_proto(Value::Object(Object::new()));
        let values = [
            None, Some(Value::Undefined), Some(Value::Null), Some(Value::Bool(false)), Some(Value::Bool(true)),
            Some(Value::Number(0.0)), Some(Value::Number(2.0)), Some(Value::str("")), Some(Value::str("ab")),
            Some(Value::Array(Vec::new())), Some(Value::Array(vec![Value::Number(1.0)])), Some(Value::Object(Object::new())),
            Some(Value::Object(with_proto)), Some(Value::Host(0)),
        ];
        let base = base_snapshot(&JsStr::from("s"));
        assert!(already_normal(&base));
        for field in fields {
            for value in &values {
                let mut s = base.clone();
                match value {
                    Some(v) => s.set(field, v.clone()),
                    None => drop(s.remove(field)),
                }
                if let Ok(rebuilt) = rebuilt_fields(&s) {
                    assert_eq!(already_normal(&s), rebuilt.is_empty(), "{field} = {value:?}");
                } else {
                    assert!(!already_normal(&s), "{field} = {value:?}");
                }
            }
        }
    }

    #[test]
    fn unknown_and_odd_entries() {
        let host = TestHost(0.0);
        let mut s = base_snapshot(&JsStr::from("s"));
        apply_event(&mut s, &json::parse(r#"{"seq":1,"type":"nope"}"#).unwrap(), &host).unwrap();
        apply_event(&mut s, &json::parse("[1,2]").unwrap(), &host).unwrap();
        assert_eq!(field(&s, "diagnostics"), r#"[{"error":"unknown_event_type","type":"nope"},{"error":"unknown_event_type"}]"#);
        assert_eq!(field(&s, "updatedAt"), r#""1970-01-01T00:00:00.000Z""#);
    }

    #[test]
    fn objects_owning_to_string_cannot_be_coerced() {
        let host = TestHost(0.0);
        for e in [
            r#"{"type":"checkpoint","revision":{"toString":"x"}}"#,
            r#"{"type":"variant_mounted","variant":[{"toString":1}]}"#,
            r#"{"type":"accept","variantId":{"toString":null}}"#,
            r#"{"type":"agent_phase","phase":{"toString":"p"}}"#,
        ] {
            let mut s = base_snapshot(&JsStr::from("s"));
            let before = json::stringify(&Value::Object(s.clone()));
            let err = apply_event(&mut s, &json::parse(e).unwrap(), &host).unwrap_err();
            assert_eq!(err, "Cannot convert object to primitive value", "{e}");
            assert_eq!(json::stringify(&Value::Object(s)), before, "{e}");
        }
        // Without an own toString the default conversion applies.
        let s = run(&[r#"{"type":"checkpoint","revision":{"valueOf":1}}"#]);
        assert!(field(&s, "diagnostics").contains("stale_checkpoint_ignored"));
    }

    #[test]
    fn odd_hydrated_fields_throw_without_changing_anything() {
        let host = TestHost(0.0);
        let mut s = base_snapshot(&JsStr::from("s"));
        s.set("mountedVariants", Value::Number(5.0));
        let before = json::stringify(&Value::Object(s.clone()));
        let err = apply_event(&mut s, &json::parse(r#"{"type":"generate"}"#).unwrap(), &host).unwrap_err();
        assert_eq!(err, "(snapshot.mountedVariants || []) is not iterable");
        assert_eq!(json::stringify(&Value::Object(s)), before);
    }
}
