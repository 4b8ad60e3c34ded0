//! Whether an object's JSON text is already what `JSON.stringify` writes for
//! `JSON.parse` of it, so that a writer may copy the text instead of parsing
//! and rendering it again (a 200 MB event costs two passes less).
//!
//! The check is conservative: it accepts compact text whose strings use
//! only the escapes `JSON.stringify` itself writes, whose numbers are
//! written as `Number::toString` writes them, and whose objects hold
//! distinct keys that V8 keeps in their written order (no array-index-like
//! key, no `__proto__`). Anything else, even where it would round trip, is
//! left to the parser and the writer.

use crate::js::number::number_to_string;

/// Whether `text`, known to be one valid JSON object, equals
/// `JSON.stringify(JSON.parse(text))` with the top-level keys in `dropped`
/// removed, which must then not occur.
pub(crate) fn is_canonical_object(text: &str, dropped: &[&str]) -> bool {
    let b = text.as_bytes();
    if b.first() != Some(&b'{') {
        return false;
    }
    // Per open container: for an object, its keys so far.
    let mut open: Vec<Option<Vec<&[u8]>>> = Vec::new();
    let mut i = 0;
    let mut expect_key = false;
    while i < b.len() {
        match b[i] {
            b'{' => {
                open.push(Some(Vec::new()));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                open.push(None);
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                open.pop();
                i += 1;
                if open.is_empty() {
                    return i == b.len();
                }
            }
            b',' => {
                expect_key = matches!(open.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
            }
            b'"' => {
                let Some(end) = canonical_string_end(b, i) else { return false };
                if expect_key {
                    let key = &b[i + 1..end - 1];
                    let top = open.len() == 1;
                    let Some(Some(keys)) = open.last_mut() else { return false };
                    if key.first().is_some_and(u8::is_ascii_digit) || key == b"__proto__" || keys.contains(&key) || (top && dropped.iter().any(|d| d.as_bytes() == key)) {
                        return false;
                    }
                    keys.push(key);
                }
                i = end;
            }
            b't' if b[i..].starts_with(b"true") => i += 4,
            b'f' if b[i..].starts_with(b"false") => i += 5,
            b'n' if b[i..].starts_with(b"null") => i += 4,
            b'-' | b'0'..=b'9' => {
                let len = b[i..].iter().take_while(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')).count();
                let token = &text[i..i + len];
                match token.parse::<f64>() {
                    Ok(n) if n.is_finite() && number_to_string(n) == token => i += len,
                    _ => return false,
                }
            }
            _ => return false,
        }
    }
    false
}

/// One past the closing quote of the string opening at `start`, if it uses
/// only the escapes `JSON.stringify` writes: `\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, and `\u00xx` (lowercase) for the other control characters.
/// Lone surrogates cannot be in UTF-8 text, so no other escape is needed.
fn canonical_string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        // Valid JSON holds no raw control character in a string.
        let at = i + b[i..].iter().position(|&c| c == b'"' || c == b'\\')?;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        match *b.get(at + 1)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i = at + 2,
            b'u' => {
                let hex = b.get(at + 2..at + 6)?;
                let short = |c: u8| matches!(c, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                let lower_hex = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
                if &hex[..2] != b"00" || !hex[2..].iter().all(lower_hex) {
                    return None;
                }
                let code = u8::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
                if code >= 0x20 || short(code) {
                    return None;
                }
                i = at + 6;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::json::{parse, stringify};
    use crate::js::Value;

    fn round_trip(text: &str, dropped: &[&str]) -> Option<String> {
        let mut o = parse(text).ok()?.into_object()?;
        for d in dropped {
            o.remove(d);
        }
        stringify(&Value::Object(o))
    }

    #[test]
    fn accepted_text_is_what_stringify_writes() {
        let accepted = [
            r#"{}"#,
            r#"{"type":"generate","id":"s","count":3,"note":"a \"b\" \\ \n\t\u0001 é —"}"#,
            r#"{"a":[1,-2.5,1e+21,5e-324,0.000001,true,false,null,{},[]],"b":{"c":{"d":[[]]}}}"#,
            r#"{"x":{"x":1},"y":[{"x":1,"y":2},{"x":3}]}"#,
        ];
        for text in accepted {
            assert!(is_canonical_object(text, &["token"]), "{text}");
            assert_eq!(round_trip(text, &["token"]).as_deref(), Some(text));
        }
        let refused = [
            r#"{"a":1,"a":2}"#,
            r#"{"1":1,"a":2}"#,
            r#"{"__proto__":{}}"#,
            r#"{"token":"t","a":1}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1E5}"#,
            r#"{"a":-0}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{ "a":1}"#,
            r#"{"a":1} "#,
            r#"[1]"#,
            r#"{"a":tru}"#,
        ];
        for text in refused {
            assert!(!is_canonical_object(text, &["token"]), "{text}");
        }
        // Nested keys named as a dropped key stay: only the top level drops.
        assert!(is_canonical_object(r#"{"a":{"token":1}}"#, &["token"]));
    }

    /// Random texts built from pieces that do and do not round trip: every
    /// one accepted is exactly what stringify writes.
    #[test]
    fn random_texts_accepted_only_when_they_round_trip() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let keys = ["a", "b", "token", "1", "é", "a\\\"b", "\\u0041", "x\\n"];
        let scalars = ["1", "-0", "0", "1.5", "1.50", "1e21", "1e+21", "2E3", "true", "null", "\"s\"", "\"\\u00e9\"", "\"\\u0007\"", "\"\\/\"", "\"\\t\"", "-1e-7", "100"];
        let (mut accepted, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::from("{");
            let n = random(4);
            for j in 0..n {
                if j > 0 {
                    text.push(',');
                }
                text.push_str(&format!("\"{}\":", keys[random(keys.len())]));
                match random(4) {
                    0 => text.push_str(&format!("{{\"{}\":{}}}", keys[random(keys.len())], scalars[random(scalars.len())])),
                    1 => text.push_str(&format!("[{},{}]", scalars[random(scalars.len())], scalars[random(scalars.len())])),
                    _ => text.push_str(scalars[random(scalars.len())]),
                }
            }
            text.push('}');
            total += 1;
            if is_canonical_object(&text, &["token"]) {
                accepted += 1;
                assert_eq!(round_trip(&text, &["token"]).as_deref(), Some(text.as_str()));
            }
        }
        assert!(accepted > total / 20, "{accepted} of {total}");
    }
}
