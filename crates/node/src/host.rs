//! The answers V8 gives the reducer (the clock, `Date.parse`, `JSON.parse`'s
//! messages), asked for only between two attempts of a store operation:
//! with no journal lock held and the store's state not borrowed, so a fake
//! `Date` may append to the same session or call the same store, and a
//! failing call (a thrown fake clock, a terminating worker) fails the
//! operation before anything is derived from it, let alone written (see
//! `quiver_live_core::session::answers`). The operations on the caller's
//! values that an attempt leaves open are the store's to run
//! (`NativeStore::operate` in `store.rs`): they need the values it holds.
//! So `store.rs` imports this module, and this one nothing of the store.

use napi::sys::napi_value;
use quiver_live_core::js::Value;
use quiver_live_core::session::answers::Answers;
use quiver_live_core::session::host::HostOp;

use crate::env::{Js, JsResult};

/// Asks V8 the clock, `Date.parse` and `JSON.parse` questions the last
/// attempt left open, and returns the open operation on held values, which
/// only a store can answer (a journal's lines are JSON and hold none). Each
/// call runs in a handle scope of its own: a journal of many bad lines asks
/// once per distinct line, and their handles must not pile up until the
/// call returns.
pub fn answer(js: Js, answers: &mut Answers) -> JsResult<Option<(HostOp, Vec<Value>)>> {
    let questions = answers.take_questions();
    if questions.now > 0 {
        let (date, now) = js.global_method("Date", "now")?;
        for _ in 0..questions.now {
            let ms = js.scoped(|| js.to_f64(js.call(date, now, &[])?))?;
            answers.answer_now(ms);
        }
    }
    if !questions.dates.is_empty() {
        let (date, parse) = js.global_method("Date", "parse")?;
        for text in questions.dates.into_values() {
            let ms = js.scoped(|| js.to_f64(js.call(date, parse, &[js.js_string(&text)?])?))?;
            answers.answer_date(&text, ms);
        }
    }
    if !questions.lines.is_empty() {
        let (json, parse) = js.global_method("JSON", "parse")?;
        // Each refused line throws a SyntaxError whose stack trace nobody
        // reads: capturing none makes a storm of bad lines cost a fraction
        // of the time and garbage. No JavaScript runs before it is restored.
        let (error, limit) = js.global_method("Error", "stackTraceLimit")?;
        js.set(error, "stackTraceLimit", js.number(0.0)?)?;
        let asked = questions.lines.into_iter().try_for_each(|line| {
            let message = js.scoped(|| parse_message(js, json, parse, &line))?;
            answers.answer_line(&line, message);
            Ok(())
        });
        js.set(error, "stackTraceLimit", limit)?;
        asked?;
    }
    Ok(questions.operation)
}

/// The message `JSON.parse(line)` throws on this Node.
fn parse_message(js: Js, json: napi_value, parse: napi_value, line: &str) -> JsResult<String> {
    if js.call(json, parse, &[js.string(line)?]).is_ok() {
        return Ok("JSON.parse accepted a line the native parser refused".to_owned());
    }
    let err = js.take_exception()?;
    Ok(js.coerce_string(js.named(err, "message")?)?.to_lossy())
}
