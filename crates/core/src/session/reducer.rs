//! The session reducer: one journal entry in, the next snapshot out.
//!
//! It mirrors the old module's `applyEvent` operator for operator (`??`
//! versus `||`, `Number()`, `>=` between mixed types), because callers
//! compare snapshots with `deepStrictEqual`. Unlike the JS, which builds a
//! new object per event, it updates the snapshot in place (a copy per event
//! made replay quadratic in the diagnostics). So where the JS may throw
//! midway through a case and drop the half-built object, each case here
//! first computes every value whose coercion can throw, and only then
//! changes the snapshot: on `Err` the snapshot is exactly as it was.
//! `every_case_leaves_the_snapshot_alone_when_it_throws` holds each case to
//! that, including cases added later.
//!
//! The reducer reads time only through [`Host`], so the same entries give
//! the same snapshot under test. Through it too it coerces the caller's
//! values only V8 can interpret (`Value::Host`, anywhere in an operand):
//! `Number()`, `>=`, a property key, a spread run as V8 runs them, by
//! [`Host::ask`]. Every way a case can fail is a [`Refusal`]: the exception
//! JavaScript raises, a question the host has not answered yet, or an
//! answer that is an exception. Each comes in the first half of a case, so
//! the snapshot is left as it was.

use crate::js::date;
use crate::js::sort;
use crate::js::object::Object;
use crate::js::ops::{is_integer, loose_ge, spread_array, spread_object};
use crate::js::{JsError, JsStr, Value, UNDEFINED};
use crate::session::host::{Host, HostOp, Refusal};
use crate::session::lazy_field::Slot;
use crate::session::schema::{is_fenced, Field, Rebuild, MOUNT_FAILURE_HISTORY};
use crate::session::snapshot::Snapshot;

/// `Date.parse(x)`: canonical ISO text is parsed here, the rest by the host.
fn date_parse(host: &dyn Host, v: &Value) -> Result<f64, JsError> {
    let text = v.to_js_string()?;
    Ok(match text.as_str().and_then(date::parse_canonical_iso) {
        Some(ms) => ms,
        None => host.date_parse_fallback(&text),
    })
}

/// What the reducer reads of a journal entry and of its event: properties
/// by name, and for a pending event the whole object as `{ ...event }`.
/// A [`Value`] is one; a replayed line is another that builds only the
/// values read (see `record`), which is most of a replay's cost.
pub trait Record {
    /// `record[key]`, `undefined` when absent.
    fn get(&self, key: &str) -> &Value;
    /// `{ ...record }`.
    fn spread(&self) -> Object;
    /// The record's own JSON text, when it was read from a line: then
    /// `{ ...record }` is `JSON.parse` of it, which can wait until read.
    fn object_text(&self) -> Option<&str> {
        None
    }
}

impl Record for Value {
    fn get(&self, key: &str) -> &Value {
        Value::get(self, key)
    }
    fn spread(&self) -> Object {
        spread_object(self)
    }
}

/// Applies one journal entry: `applyEvent(snapshot, entry)`.
pub fn apply_event(s: &mut Snapshot, entry: &Value, host: &dyn Host) -> Result<(), Refusal> {
    apply_appended(s, entry, None, host)
}

/// [`apply_event`] of an entry whose event V8 also holds whole (`held`, a
/// `Value::Host`), since it has members the model has no place for (own
/// symbol-keyed ones): its pending event is then V8's `toPendingEvent`.
pub fn apply_appended(s: &mut Snapshot, entry: &Value, held: Option<&Value>, host: &dyn Host) -> Result<(), Refusal> {
    let event = if entry.get("event").truthy() { entry.get("event") } else { entry };
    reduce(s, entry, event, held, host)
}

/// [`apply_event`] with the event already picked out of the entry: its
/// `event` property when that is truthy, else the entry itself.
pub fn apply_entry<R: Record + ?Sized>(s: &mut Snapshot, entry: &R, event: &R, host: &dyn Host) -> Result<(), Refusal> {
    reduce(s, entry, event, None, host)
}

fn reduce<R: Record + ?Sized>(s: &mut Snapshot, entry: &R, event: &R, held: Option<&Value>, host: &dyn Host) -> Result<(), Refusal> {
    let rebuilt = rebuilt_fields(s, host)?;
    let updated_at = match entry.get("ts") {
        ts if ts.truthy() => ts.clone(),
        _ => Value::String(JsStr::from(date::iso_string(host.now_ms()))),
    };
    let replaced: Vec<(Field, Value)> = rebuilt.into_iter().map(|(f, v)| (f, s.replace(f, v))).collect();
    let mut r = Reduction { s, entry, event, held, host };
    if let Err(e) = r.dispatch() {
        for (f, v) in replaced {
            s.set(f, v);
        }
        return Err(e);
    }
    s.set(Field::UpdatedAt, updated_at);
    Ok(())
}

/// The fields the head of `applyEvent` would change, with their new values
/// (see [`Rebuild`]); for a snapshot the reducer itself made, none but the
/// objects V8 holds (their copy is V8's too).
fn rebuilt_fields(s: &Snapshot, host: &dyn Host) -> Result<Vec<(Field, Value)>, Refusal> {
    let mut out = Vec::new();
    // Fields `...snapshot` copies as they are are not read (reading one
    // builds it if it is lazy, see `lazy_field`).
    for f in Field::ALL.into_iter().filter(|f| !matches!(f.spec().rebuild, Rebuild::Copied | Rebuild::EntryTime)) {
        let (rule, v) = (f.spec().rebuild, s.get(f));
        if !already_rebuilt(rule, v) {
            out.push((f, rebuild(rule, v, f.name(), host)?));
        }
    }
    Ok(out)
}

/// Whether rebuilding `v` by `rule` gives `v` again.
fn already_rebuilt(rule: Rebuild, v: &Value) -> bool {
    match rule {
        Rebuild::Copied | Rebuild::EntryTime => true,
        Rebuild::ObjectCopy => matches!(v, Value::Object(o) if o.proto().is_none()),
        Rebuild::ArrayCopy => matches!(v, Value::Array(_)),
        Rebuild::OrNull => v.truthy() || matches!(v, Value::Null),
        Rebuild::NullishToNull => !matches!(v, Value::Undefined),
    }
}

fn rebuild(rule: Rebuild, v: &Value, name: &str, host: &dyn Host) -> Result<Value, Refusal> {
    Ok(match rule {
        Rebuild::Copied | Rebuild::EntryTime => v.clone(),
        Rebuild::ObjectCopy if matches!(v, Value::Host(_)) => host.ask(HostOp::SpreadHeld, &[v])?,
        Rebuild::ObjectCopy => Value::Object(spread_object(if v.truthy() { v } else { &UNDEFINED })),
        Rebuild::ArrayCopy if v.truthy() => Value::Array(spread_array(v, &format!("(snapshot.{name} || [])"))?),
        Rebuild::ArrayCopy => Value::Array(Vec::new()),
        Rebuild::OrNull => v.or_falsy(Value::Null),
        Rebuild::NullishToNull => v.or_nullish(Value::Null),
    })
}

struct Reduction<'a, R: Record + ?Sized> {
    s: &'a mut Snapshot,
    entry: &'a R,
    event: &'a R,
    /// The event as V8 holds it, when it has members the model lacks.
    held: Option<&'a Value>,
    host: &'a dyn Host,
}

/// Every case: first the values whose coercion can throw, then the changes.
impl<R: Record + ?Sized> Reduction<'_, R> {
    fn dispatch(&mut self) -> Result<(), Refusal> {
        let ty = self.ev("type").as_js_str().and_then(JsStr::as_str).unwrap_or("");
        match ty {
            "generate" => self.generate(),
            "variant_plan" => {
                self.variant_plan();
                Ok(())
            }
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
            "steer_done" => {
                self.steer_done();
                Ok(())
            }
            "discard" => self.discard(),
            "discarded" => {
                self.set(Field::Phase, Value::str("discarded"));
                self.clear_pending();
                Ok(())
            }
            "complete" => {
                self.complete();
                Ok(())
            }
            "agent_error" => {
                self.agent_error();
                Ok(())
            }
            _ => {
                let t = self.ev("type").clone();
                self.diag(&[("error", Value::str("unknown_event_type")), ("type", t)]);
                Ok(())
            }
        }
    }

    fn generate(&mut self) -> Result<(), Refusal> {
        let shot = self.ev("screenshotPath").clone();
        let add_artifact = shot.truthy() && !has_screenshot(self.field(Field::AnnotationArtifacts), &shot)?;
        let pending = self.held_pending_event()?;
        self.set(Field::Phase, Value::str("generate_requested"));
        self.take_or_keep(Field::PageUrl, "pageUrl");
        self.take_or_keep(Field::ExpectedVariants, "count");
        self.make_pending(pending);
        self.set(Field::VariantPlan, Value::Null);
        // A new cycle publishes new modules: what the browser said about the
        // previous batch no longer describes anything on screen.
        self.set(Field::MountedVariants, Value::Array(Vec::new()));
        self.set(Field::MountFailures, Value::Array(Vec::new()));
        self.set(Field::RenderState, Value::Null);
        if add_artifact {
            let artifact = obj(&[("type", Value::str("screenshot")), ("path", shot)]);
            self.push(Field::AnnotationArtifacts, artifact);
        }
        Ok(())
    }

    fn variant_plan(&mut self) {
        if !self.canceled_or_fenced() {
            self.take_or_keep(Field::VariantPlan, "plan");
        }
    }

    /// `[...(next.detectorWaivers || []), ...(Array.isArray(event.waivers)
    /// ? event.waivers : [])]`: in Rust when both are in the model, else by
    /// V8 (a held list or held waivers).
    fn detector_waivers(&mut self) -> Result<(), Refusal> {
        if self.canceled_or_fenced() {
            return Ok(());
        }
        let list = match self.s.other("detectorWaivers") {
            Some(held @ Value::Host(_)) => Err(held.clone()),
            Some(current) if current.truthy() => Ok(spread_array(current, "(next.detectorWaivers || [])")?),
            _ => Ok(Vec::new()),
        };
        let waivers = self.ev("waivers");
        let items = match list {
            Ok(mut items) => match waivers {
                Value::Array(extra) => {
                    items.extend(extra.iter().cloned());
                    Value::Array(items)
                }
                Value::Host(_) => self.host.ask(HostOp::AppendItems, &[&Value::Array(items), waivers])?,
                _ => Value::Array(items),
            },
            Err(held) => self.host.ask(HostOp::AppendItems, &[&held, waivers])?,
        };
        self.s.set_other("detectorWaivers", items);
        Ok(())
    }

    fn agent_phase(&mut self) -> Result<(), Refusal> {
        let phase = self.ev("phase").clone();
        let timing = if phase.truthy() {
            let at = match self.ev("at") {
                at if at.is_nullish() => self.entry_time()?.map_or(Value::Null, Value::Number),
                at => at.clone(),
            };
            let duration = self.ev("durationMs").or_nullish(Value::Null);
            Some((self.property_key(&phase)?, obj(&[("at", at), ("durationMs", duration)])))
        } else {
            None
        };
        let held = match timing {
            Some((key, timing)) => self.set_member(Field::GenerationTimings, key, timing)?,
            None => None,
        };
        self.take_or_keep(Field::GenerationPhase, "phase");
        if let Some(timings) = held {
            self.set(Field::GenerationTimings, timings);
        }
        Ok(())
    }

    fn generation_done(&mut self) -> Result<(), Refusal> {
        let carbonize = matches!(self.ev("carbonize"), Value::Bool(true));
        let carbonize_after_accept =
            self.ev("type").is_str("agent_done") && carbonize && self.field(Field::Phase).is_str("accept_requested");
        if self.canceled_or_fenced() && !carbonize_after_accept {
            let (t, phase) = (self.ev("type").clone(), self.field(Field::Phase).clone());
            self.diag(&[("error", Value::str("late_generation_event_ignored")), ("type", t), ("phase", phase)]);
            return Ok(());
        }
        let done_at = self.event_time_or_now()?;
        self.set(Field::Phase, Value::str(if carbonize { "carbonize_required" } else { "variants_ready" }));
        // Monotone completion marker: a resumed browser may regress `phase`,
        // but finished generation stays finished (missed-`done` redelivery keys on it).
        self.set(Field::GenerationCompletedAt, done_at);
        self.take_either_or_keep(Field::SourceFile, "sourceFile", "file");
        self.take_or_keep(Field::PreviewFile, "previewFile");
        self.take_or_keep(Field::PreviewMode, "previewMode");
        let fallback = self.field(Field::ExpectedVariants).or_falsy(self.field(Field::ArrivedVariants).or_falsy(Value::Number(0.0)));
        let arrived = self.ev("arrivedVariants").or_nullish(fallback);
        self.set(Field::ArrivedVariants, arrived);
        self.clear_pending();
        if carbonize {
            let file = self.ev("file").or_falsy(Value::Null);
            self.diag(&[
                ("error", Value::str("carbonize_cleanup_required")),
                ("file", file),
                ("message", Value::str("Accepted variant still has carbonize markers that must be folded into source CSS.")),
            ]);
        }
        self.update_render_state();
        Ok(())
    }

    /// `Number(event.variant)` when it is a positive integer.
    fn ack_variant(&self) -> Result<Option<f64>, Refusal> {
        let variant = self.number(self.ev("variant"))?;
        Ok((variant.is_finite() && variant.trunc() == variant && variant >= 1.0).then_some(variant))
    }

    fn malformed_ack(&mut self) {
        let (t, raw) = (self.ev("type").clone(), self.ev("variant").or_nullish(Value::Null));
        self.diag(&[("error", Value::str("malformed_mount_ack")), ("type", t), ("variant", raw)]);
    }

    fn variant_mounted(&mut self) -> Result<(), Refusal> {
        let Some(variant) = self.ack_variant()? else {
            self.malformed_ack();
            return Ok(());
        };
        let added = match self.field(Field::MountedVariants) {
            Value::Array(items) if !items.iter().any(|v| same_value_zero(v, variant)) => {
                let mut items = items.clone();
                items.push(Value::Number(variant));
                Some(sorted_by_number(items)?)
            }
            _ => None,
        };
        if let Some(items) = added {
            self.set(Field::MountedVariants, Value::Array(items));
        }
        self.update_render_state();
        Ok(())
    }

    fn variant_mount_failed(&mut self) -> Result<(), Refusal> {
        let Some(variant) = self.ack_variant()? else {
            self.malformed_ack();
            return Ok(());
        };
        let at = self.event_time_or_now()?;
        // The failure needs an agent reply, so it must survive a helper restart
        // like a generate does, but never clobbers a generate still pending.
        let pending = if self.field(Field::PendingEvent).truthy() { None } else { Some(self.held_pending_event()?) };
        let string_or_null = |v: &Value| if matches!(v, Value::String(_)) { v.clone() } else { Value::Null };
        let failure = obj(&[
            ("variant", Value::Number(variant)),
            ("url", string_or_null(self.ev("url"))),
            ("error", string_or_null(self.ev("error"))),
            ("at", at),
        ]);
        if let Value::Array(items) = self.s.get_mut(Field::MountFailures) {
            items.push(Value::Object(failure));
            let excess = items.len().saturating_sub(MOUNT_FAILURE_HISTORY);
            items.drain(..excess);
        }
        self.update_render_state();
        if let Some(pending) = pending {
            self.set_pending_event(pending);
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<(), Refusal> {
        if self.canceled_or_fenced() {
            let phase = self.ev("phase").or_nullish(Value::Null);
            let revision = self.ev("revision").or_nullish(Value::Null);
            self.diag(&[("error", Value::str("checkpoint_after_terminal_ignored")), ("phase", phase), ("revision", revision)]);
            return Ok(());
        }
        let publication = self.ev("revisionDomain").is_str("publication")
            || (self.ev("reason").is_str("variants_progress") && !self.ev("owner").truthy());
        let (domain, field) = if publication {
            ("publication", Field::PublicationCheckpointRevision)
        } else {
            ("browser", Field::BrowserCheckpointRevision)
        };
        let fallback = if publication { Value::Number(0.0) } else { self.field(Field::CheckpointRevision).clone() };
        let current = self.field(field).or_nullish(fallback).or_nullish(Value::Number(0.0));
        let revision = self.ev("revision").clone();
        if !self.greater_or_equal(&revision.or_nullish(Value::Number(0.0)), &current)? {
            self.diag(&[("error", Value::str("stale_checkpoint_ignored")), ("revision", revision), ("revisionDomain", Value::str(domain))]);
            return Ok(());
        }
        let params = if publication { None } else { self.param_values_copy()? };
        self.take_or_keep(Field::Phase, "phase");
        self.set(field, revision.or_nullish(current));
        if !publication {
            self.take_or_keep(Field::CheckpointRevision, "revision");
            self.take_or_keep(Field::ActiveOwner, "owner");
        }
        self.take_or_keep(Field::ArrivedVariants, "arrivedVariants");
        if !publication {
            self.take_or_keep(Field::VisibleVariant, "visibleVariant");
        }
        self.take_or_keep(Field::SourceFile, "sourceFile");
        self.take_or_keep(Field::PreviewFile, "previewFile");
        self.take_or_keep(Field::PreviewMode, "previewMode");
        if let Some(params) = params {
            self.set(Field::ParamValues, params);
        }
        Ok(())
    }

    fn accept(&mut self) -> Result<(), Refusal> {
        let at = self.event_time_or_now()?;
        let visible = self.number(&self.ev("variantId").or_nullish(self.field(Field::VisibleVariant).clone()))?;
        let params = self.param_values_copy()?;
        let pending = self.held_pending_event()?;
        self.cancel("accept_requested", "accept", at);
        self.set(Field::VisibleVariant, Value::Number(visible));
        if let Some(params) = params {
            self.set(Field::ParamValues, params);
        }
        self.make_pending(pending);
        Ok(())
    }

    fn discard(&mut self) -> Result<(), Refusal> {
        let at = self.event_time_or_now()?;
        let pending = self.held_pending_event()?;
        self.cancel("discard_requested", "discard", at);
        self.make_pending(pending);
        Ok(())
    }

    fn cancel(&mut self, phase: &str, reason: &str, at: Value) {
        self.set(Field::Phase, Value::str(phase));
        self.set(Field::GenerationCanceled, Value::Bool(true));
        self.set(Field::GenerationCanceledAt, at);
        self.set(Field::CancelReason, Value::str(reason));
    }

    fn request_with_page(&mut self, phase: &str) -> Result<(), Refusal> {
        let pending = self.held_pending_event()?;
        self.set(Field::Phase, Value::str(phase));
        self.take_or_keep(Field::PageUrl, "pageUrl");
        self.make_pending(pending);
        Ok(())
    }

    fn carbonize_cleanup(&mut self) -> Result<(), Refusal> {
        let pending = self.held_pending_event()?;
        self.set(Field::Phase, Value::str("carbonize_cleanup_requested"));
        self.take_or_keep(Field::SourceFile, "file");
        self.make_pending(pending);
        Ok(())
    }

    fn finish_with_files(&mut self, phase: &str) {
        self.set(Field::Phase, Value::str(phase));
        self.take_either_or_keep(Field::SourceFile, "sourceFile", "file");
        self.take_or_keep(Field::PreviewFile, "previewFile");
        self.take_or_keep(Field::PreviewMode, "previewMode");
    }

    fn steer_done(&mut self) {
        self.finish_with_files("steer_done");
        // `next.message = event.message ?? next.message` creates the key,
        // holding `undefined` when neither has one.
        let message = self.ev("message").or_nullish(self.s.other("message").cloned().unwrap_or(Value::Undefined));
        self.s.set_other("message", message);
        self.clear_pending();
    }

    fn complete(&mut self) {
        self.finish_with_files("completed");
        self.clear_pending();
    }

    fn agent_error(&mut self) {
        if self.field(Field::GenerationCanceled).truthy() && self.ev("sourceEventType").is_str("generate") {
            let (t, phase) = (self.ev("type").clone(), self.field(Field::Phase).clone());
            self.diag(&[("error", Value::str("late_generation_event_ignored")), ("type", t), ("phase", phase)]);
            return;
        }
        self.set(Field::Phase, Value::str("agent_error"));
        self.clear_pending();
        let message = self.ev("message").or_falsy(Value::str("unknown agent error"));
        self.diag(&[("error", Value::str("agent_error")), ("message", message)]);
    }

    // -- reading

    fn ev(&self, key: &str) -> &Value {
        self.event.get(key)
    }

    fn field(&self, f: Field) -> &Value {
        self.s.get(f)
    }

    fn canceled_or_fenced(&self) -> bool {
        self.field(Field::GenerationCanceled).truthy() || is_fenced(self.field(Field::Phase))
    }

    /// `Date.parse(entry.ts || '') || null` as an optional number.
    fn entry_time(&self) -> Result<Option<f64>, Refusal> {
        let parsed = date_parse(self.host, &self.entry.get("ts").or_falsy(Value::str("")))?;
        Ok((!parsed.is_nan() && parsed != 0.0).then_some(parsed))
    }

    /// `event.at ?? (Date.parse(entry.ts || '') || Date.now())`
    fn event_time_or_now(&self) -> Result<Value, Refusal> {
        match self.ev("at") {
            at if at.is_nullish() => Ok(Value::Number(self.entry_time()?.unwrap_or_else(|| self.host.now_ms()))),
            at => Ok(at.clone()),
        }
    }

    /// `Number(v)`.
    fn number(&self, v: &Value) -> Result<f64, Refusal> {
        if !v.holds_host() {
            return Ok(v.to_number()?);
        }
        Ok(match self.host.ask(HostOp::Number, &[v])? {
            Value::Number(n) => n,
            _ => f64::NAN,
        })
    }

    /// `a >= b`.
    fn greater_or_equal(&self, a: &Value, b: &Value) -> Result<bool, Refusal> {
        if !a.holds_host() && !b.holds_host() {
            return Ok(loose_ge(a, b)?);
        }
        Ok(matches!(self.host.ask(HostOp::GreaterOrEqual, &[a, b])?, Value::Bool(true)))
    }

    /// The key `obj[v] = ...` creates: a string, or a symbol V8 holds.
    fn property_key(&self, v: &Value) -> Result<Value, Refusal> {
        if !v.holds_host() {
            return Ok(Value::String(v.to_js_string()?));
        }
        self.host.ask(HostOp::PropertyKey, &[v])
    }

    /// `{ ...event.paramValues }` when `event.paramValues` is truthy; of a
    /// value only V8 can interpret, V8's copy, held (it may have symbol
    /// keys).
    fn param_values_copy(&self) -> Result<Option<Value>, Refusal> {
        let pv = self.ev("paramValues");
        if !pv.truthy() {
            return Ok(None);
        }
        if !matches!(pv, Value::Host(_)) {
            return Ok(Some(Value::Object(spread_object(pv))));
        }
        self.host.ask(HostOp::SpreadHeld, &[pv]).map(Some)
    }

    /// `toPendingEvent(event)` run by V8 on the event it holds whole (see
    /// [`apply_appended`]), asked before anything changes; `None` when the
    /// model has all of the event.
    fn held_pending_event(&self) -> Result<Option<Value>, Refusal> {
        self.held.map(|event| self.host.ask(HostOp::PendingEvent, &[event])).transpose()
    }

    // -- changing

    fn set(&mut self, f: Field, v: Value) {
        self.s.set(f, v);
    }

    /// `next.f[key] = value` for a field the head of the event made an
    /// object. A string key on a model object is set here and `None`
    /// returned; a symbol key, or an object only V8 holds, has V8 set it on
    /// a copy, returned to replace the field once nothing else can throw.
    fn set_member(&mut self, f: Field, key: Value, value: Object) -> Result<Option<Value>, Refusal> {
        let (Value::String(key), Value::Object(_)) = (&key, self.field(f)) else {
            return self.host.ask(HostOp::SetOnCopy, &[self.field(f), &key, &Value::Object(value)]).map(Some);
        };
        if let Value::Object(o) = self.s.get_mut(f) {
            // Assigning `obj.__proto__` goes through the prototype setter and
            // creates no key, unless the object already owns such a key.
            if !key.eq_str("__proto__") || o.contains_key(key) {
                o.set_js(key.clone(), Value::Object(value));
            } else {
                o.assign_proto(Value::Object(value));
            }
        }
        Ok(None)
    }

    /// `next.f = event[key] ?? next.f`
    fn take_or_keep(&mut self, f: Field, key: &str) {
        let v = self.ev(key);
        if !v.is_nullish() {
            let v = v.clone();
            self.set(f, v);
        }
    }

    /// `next.f = event[a] ?? event[b] ?? next.f`
    fn take_either_or_keep(&mut self, f: Field, a: &str, b: &str) {
        self.take_or_keep(f, if self.ev(a).is_nullish() { b } else { a });
    }

    fn push(&mut self, f: Field, item: Object) {
        if let Value::Array(items) = self.s.get_mut(f) {
            items.push(Value::Object(item));
        }
    }

    fn diag(&mut self, members: &[(&str, Value)]) {
        self.push(Field::Diagnostics, obj(members));
    }

    /// `next.pendingEventSeq = entry.seq ?? next.pendingEventSeq;
    /// next.pendingEvent = toPendingEvent(event)`, `held` being
    /// [`Reduction::held_pending_event`]'s answer.
    fn make_pending(&mut self, held: Option<Value>) {
        let seq = self.entry.get("seq");
        if !seq.is_nullish() {
            let seq = seq.clone();
            self.set(Field::PendingEventSeq, seq);
        }
        self.set_pending_event(held);
    }

    /// `next.pendingEvent = toPendingEvent(event)`: `{ ...event }` without
    /// the delivery token, which must never be replayed to another reader.
    /// V8's copy when V8 holds the event (`held`); else built here, when
    /// first read if the event came from a replayed line (most pending
    /// events are replaced before anyone reads them).
    fn set_pending_event(&mut self, held: Option<Value>) {
        match (held, self.event.object_text()) {
            (Some(copy), _) => self.set(Field::PendingEvent, copy),
            (None, Some(text)) => self.s.set_slot(Field::PendingEvent, Slot::object_text(text, true)),
            (None, None) => {
                let mut copy = self.event.spread();
                copy.remove("token");
                self.set(Field::PendingEvent, Value::Object(copy));
            }
        }
    }

    fn clear_pending(&mut self) {
        self.set(Field::PendingEventSeq, Value::Null);
        self.set(Field::PendingEvent, Value::Null);
    }

    /// `deriveRenderState(next)`
    fn update_render_state(&mut self) {
        let len = |v: &Value| match v {
            Value::Array(items) => items.len(),
            _ => 0,
        };
        let state = if len(self.field(Field::MountedVariants)) > 0 {
            Value::str("mounted")
        } else if len(self.field(Field::MountFailures)) > 0 {
            Value::str("failed")
        } else if self.field(Field::GenerationCompletedAt).truthy() {
            Value::str("pending")
        } else {
            Value::Null
        };
        self.set(Field::RenderState, state);
    }
}

/// `artifacts.some(a => a.path === path && a.type === 'screenshot')`, with
/// the TypeError JS throws on reaching a null or undefined element.
fn has_screenshot(artifacts: &Value, path: &Value) -> Result<bool, JsError> {
    let Value::Array(items) = artifacts else { return Ok(false) };
    for item in items {
        match item {
            Value::Undefined | Value::Null => {
                let what = if matches!(item, Value::Null) { "null" } else { "undefined" };
                return Err(JsError::type_error(format!("Cannot read properties of {what} (reading 'path')")));
            }
            _ if item.get("path").strict_equals(path) && item.get("type").is_str("screenshot") => return Ok(true),
            _ => {}
        }
    }
    Ok(false)
}

/// `items.sort((a, b) => a - b)` in V8's order, also where the comparator
/// is no order at all (NaN, from a string that is not a number, compares as
/// equal to everything). `undefined` goes last without being compared; the
/// comparator converts every other element when there are two or more, and
/// throws where `Number()` would.
fn sorted_by_number(items: Vec<Value>) -> Result<Vec<Value>, JsError> {
    let (mut defined, undefined): (Vec<Value>, Vec<Value>) = items.into_iter().partition(|v| !matches!(v, Value::Undefined));
    if defined.len() >= 2 {
        let keys = defined.iter().map(Value::to_number).collect::<Result<Vec<f64>, _>>()?;
        let order = sort::v8_sort_order(keys.len(), |x, y| keys[x] - keys[y] < 0.0);
        let mut slots: Vec<Option<Value>> = defined.drain(..).map(Some).collect();
        defined = order.into_iter().filter_map(|i| slots[i].take()).collect();
    }
    defined.extend(undefined);
    Ok(defined)
}

fn same_value_zero(v: &Value, n: f64) -> bool {
    matches!(v, Value::Number(x) if *x == n || (x.is_nan() && n.is_nan()))
}

pub fn obj(members: &[(&str, Value)]) -> Object {
    let mut o = Object::with_capacity(members.len());
    for (k, v) in members {
        o.set(k, v.clone());
    }
    o
}

/// Whether an entry's `seq` advances the next sequence number (`Number.isInteger`).
pub fn entry_seq<R: Record + ?Sized>(entry: &R) -> Option<f64> {
    match entry.get("seq") {
        seq @ Value::Number(n) if is_integer(seq) => Some(*n),
        _ => None,
    }
}

#[cfg(test)]
pub mod tests;
