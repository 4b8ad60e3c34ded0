//! `JSON.parse` as the core reads journal lines, snapshot files and lock
//! records: against serde_json on every text both accept, and through its own
//! writer and back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::{json, ErrorClass};
use quiver_live_fuzz::{same_as_serde, serde_refuses_what_js_accepts};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let ours = json::parse(text);
    match (&ours, serde_json::from_str::<serde_json::Value>(text)) {
        (Ok(v), Ok(theirs)) => assert!(same_as_serde(v, &theirs), "values differ: {text:?}"),
        (Ok(_), Err(e)) => assert!(serde_refuses_what_js_accepts(&e, text), "only we accept {text:?}: serde_json says {e}"),
        (Err(e), Ok(_)) => panic!("only serde_json accepts {text:?}: we say {}", e.message),
        (Err(e), Err(_)) => {
            // `… at position N`, N in UTF-16 units, as V8 counts.
            let at = e.message.rsplit(' ').next().and_then(|n| n.parse::<usize>().ok());
            assert_eq!(e.class, ErrorClass::SyntaxError, "{e}");
            assert!(at.is_some_and(|at| at <= text.encode_utf16().count()), "{e}: no position in the text {text:?}");
        }
    }
    let Ok(v) = ours else { return };
    // The shortcut for text known to be valid agrees where it answers.
    if let Some(simple) = json::parse_simple(text) {
        assert_eq!(json::stringify(&simple), json::stringify(&v), "{text:?}");
    }
    // Writing is a fixed point after one round: parse(stringify(v)) writes
    // the same text again, compact and indented.
    if let Some(written) = json::stringify(&v) {
        let again = json::parse(&written).unwrap_or_else(|e| panic!("own output refused: {written:?}: {}", e.message));
        assert_eq!(json::stringify(&again).as_deref(), Some(written.as_str()));
        let pretty = json::stringify_pretty(&v).expect("pretty of a value with compact text");
        let from_pretty = json::parse(&pretty).unwrap_or_else(|e| panic!("own indented output refused: {pretty:?}: {}", e.message));
        assert_eq!(json::stringify(&from_pretty).as_deref(), Some(written.as_str()));
    }
});
