//! The reducer's clock and parsers, answered by the running V8, so a fake
//! `Date` applies and parse errors are worded as this Node words them.

use quiver_live_core::js::JsStr;
use quiver_live_core::session::reducer::Host;

use crate::env::{Js, JsResult};

pub struct NodeHost {
    pub js: Js,
}

impl NodeHost {
    /// Runs a call whose throw must not escape: the reducer has no way to
    /// stop mid-event, so a throwing fake clock reads as `fallback`.
    fn quietly<T>(&self, fallback: T, f: impl FnOnce() -> JsResult<T>) -> T {
        f().unwrap_or_else(|_| {
            let _ = self.js.take_exception();
            fallback
        })
    }
}

impl Host for NodeHost {
    fn now_ms(&self) -> f64 {
        let js = self.js;
        self.quietly(quiver_live_core::sys::now_ms(), || js.to_f64(js.call_global("Date", "now", &[])?))
    }

    fn date_parse_fallback(&self, s: &JsStr) -> f64 {
        let js = self.js;
        self.quietly(f64::NAN, || js.to_f64(js.call_global("Date", "parse", &[js.js_string(s)?])?))
    }

    fn json_parse_message(&self, line: &str) -> String {
        let js = self.js;
        self.quietly("Unexpected token in JSON".to_owned(), || {
            let arg = js.string(line)?;
            if js.call_global("JSON", "parse", &[arg]).is_ok() {
                return Ok("JSON.parse accepted a line the native parser refused".to_owned());
            }
            let err = js.take_exception()?;
            Ok(js.coerce_string(js.named(err, "message")?)?.to_lossy())
        })
    }
}
