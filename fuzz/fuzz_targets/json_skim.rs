//! The skim (a snapshot file's members as byte ranges, without building
//! values) against the full parser: when it says yes, the parser agrees
//! member by member; when it says no to text the parser takes, there is a
//! reason it is allowed to (an escaped key, deep nesting).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::json::{self, skim};
use quiver_live_core::js::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = json::parse(text).ok();
    let members = skim::top_level_members(text);
    match (&members, &parsed) {
        (Some(members), Some(Value::Object(object))) => {
            // Each member's text is a value, and the last of a repeated key
            // is what the parser kept.
            for (i, m) in members.iter().enumerate() {
                let value = json::parse(&text[m.value.clone()]).expect("a member's value text parses");
                if members[i + 1..].iter().all(|later| later.key != m.key) {
                    let kept = object.get(m.key).expect("the parser has the key");
                    assert_eq!(json::stringify(&value), json::stringify(kept), "{text:?} key {:?}", m.key);
                }
            }
            let distinct: std::collections::HashSet<&str> = members.iter().map(|m| m.key).collect();
            assert_eq!(distinct.len(), object.len(), "{text:?}");
        }
        (Some(_), _) => panic!("skim accepts what is not an object for the parser: {text:?}"),
        (None, Some(Value::Object(_))) => {
            assert!(text.contains('\\') || depth(text) > 60, "skim refuses a plain shallow object: {text:?}");
        }
        (None, _) => {}
    }
    // The one-pass variant with a nested object agrees with skimming twice.
    let nested = "event";
    let (mut spans, mut nested_spans) = (Vec::new(), Vec::new());
    let with_nested = skim::members_with_nested(text, nested, &mut spans, &mut nested_spans);
    match (with_nested, &members) {
        (Some(()), Some(members)) => {
            let plain: Vec<_> = members.iter().map(|m| (m.key, m.value.clone())).collect();
            let ranged: Vec<_> = spans.iter().map(|s| (&text[s.key.clone()], s.value.clone())).collect();
            assert_eq!(plain, ranged, "{text:?}");
            let inner = members.iter().rev().find(|m| m.key == nested).map(|m| &text[m.value.clone()]);
            match inner.filter(|t| t.starts_with('{')) {
                Some(inner_text) => {
                    let offset = inner_text.as_ptr() as usize - text.as_ptr() as usize;
                    let inner_members = skim::top_level_members(inner_text).expect("nested object skims alone");
                    let shifted: Vec<_> = inner_members.iter().map(|m| (m.key, m.value.start + offset..m.value.end + offset)).collect();
                    let got: Vec<_> = nested_spans.iter().map(|s| (&text[s.key.clone()], s.value.clone())).collect();
                    assert_eq!(shifted, got, "{text:?}");
                }
                None => assert!(nested_spans.is_empty(), "{text:?}"),
            }
        }
        (Some(()), None) => panic!("members_with_nested accepts what top_level_members refuses: {text:?}"),
        (None, Some(_)) => assert!(text.contains('\\'), "members_with_nested refuses plain text: {text:?}"),
        (None, None) => {}
    }
});

/// Bracket nesting outside strings.
fn depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0, false, false);
    for b in text.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
