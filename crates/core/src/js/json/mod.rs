//! JSON text in and out of the value model, as V8 reads and writes it.
//!
//! Reading follows `JSON.parse`: strict grammar, a repeated key keeps its first
//! position and its last value, `\udXXX` escapes may leave lone surrogates.
//! Writing follows `JSON.stringify`: `undefined` keys are dropped (and become
//! `null` in arrays), non-finite numbers become `null`, `-0` becomes `0`, lone
//! surrogates are escaped as `\udxxx`. Byte-identical output is what lets a JS
//! process and a native one share a sessions directory.

mod canonical;
mod parse;
pub mod skim;
mod write;

pub(crate) use parse::plain_len;
pub(crate) use canonical::is_canonical_object;
pub use parse::{parse, parse_simple};
pub use write::{stringify, write_to, stringify_members, stringify_members_within, stringify_pretty, write_number, write_string};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::{JsStr, Object, Value};

    #[test]
    fn numbers_written_in_place_match_number_to_string() {
        for n in [1.0, -1.0, 9.0, 10.0, -10.0, 1234567.0, 9_007_199_254_740_991.0, -9_007_199_254_740_991.0, 0.0, -0.0, 0.5, 1e21, 9_007_199_254_740_992.0, f64::NAN] {
            let mut out = String::new();
            write_number(&mut out, n);
            let want = if n.is_finite() { crate::js::number::number_to_string(n) } else { "null".to_owned() };
            assert_eq!(out, want, "{n}");
        }
    }

    #[test]
    fn deep_indentation_is_whole() {
        let mut v = Value::Array(vec![]);
        for _ in 0..40 {
            v = Value::Array(vec![v]);
        }
        let text = stringify_pretty(&v).unwrap();
        assert!(text.contains(&format!("\n{}[]", " ".repeat(80))), "{text}");
    }


    fn roundtrip(text: &str) -> String {
        stringify(&parse(text).unwrap()).unwrap()
    }

    #[test]
    fn keeps_v8_key_order_and_duplicates() {
        assert_eq!(roundtrip(r#"{"10":1,"b":2,"2":3}"#), r#"{"2":3,"10":1,"b":2}"#);
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(roundtrip(r#"{"__proto__":{"x":1}}"#), r#"{"__proto__":{"x":1}}"#);
    }

    #[test]
    fn numbers_and_strings() {
        assert_eq!(roundtrip("[1e21,5e-324,-0,1E2,0.5e-6,1e400]"), "[1e+21,5e-324,0,100,5e-7,null]");
        assert_eq!(roundtrip(r#""\ud800x\udc00\ud83d\ude00""#), r#""\ud800x\udc00😀""#);
        assert_eq!(roundtrip(r#""\u0001\u001f\"\\\/\b\f\n\r\t\u2028""#), "\"\\u0001\\u001f\\\"\\\\/\\b\\f\\n\\r\\t\u{2028}\"");
    }

    /// JSON.stringify of a well-formed string, one character at a time as
    /// ECMA-262's QuoteJSONString spells it out: the slow, plain oracle.
    fn quote_json_string(text: &str) -> String {
        let mut out = String::from('"');
        for c in text.chars() {
            match c {
                '\u{8}' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\u{c}' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// Escapes at every position of strings long and short, so runs end on
    /// and across eight-byte chunk boundaries.
    #[test]
    fn string_escapes_at_every_position() {
        for len in 0..40 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '\u{2028}'] {
                    let text: String = (0..len).map(|i| if i == at || i == len - 1 - at / 2 { special } else { 'a' }).collect();
                    let mut out = String::new();
                    write_string(&mut out, &JsStr::from(text.as_str()));
                    assert_eq!(out, quote_json_string(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in ["", " ", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "'a'", "\"\t\"", "nul", "[1] 2", "\u{feff}{}", "{\"a\" 1}", "\"\\x\"", "-", "1e", "NaN"] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        assert!(parse(" \r\n\t{} \r").is_ok());
    }

    /// The word-at-a-time scan stops exactly where a byte-at-a-time one
    /// does, for every special byte at every offset, after every prefix.
    #[test]
    fn plain_run_stops_at_the_first_special_byte() {
        for len in 0..40 {
            for at in 0..=len {
                for special in [b'"', b'\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff, b'a'] {
                    let mut b = vec![b'x'; len];
                    if at < len {
                        b[at] = special;
                    }
                    let want = b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(b.len());
                    assert_eq!(plain_len(&b), want, "{b:?}");
                }
            }
        }
    }

    #[test]
    fn integers_take_the_short_path_exactly() {
        for text in ["0", "-0", "7", "-42", "999999999999999", "-999999999999999", "1000000000000000", "12345678901234567890", "1796032802000"] {
            let want: f64 = text.parse().unwrap();
            let got = match parse(text).unwrap() {
                Value::Number(n) => n,
                other => panic!("{other:?}"),
            };
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
    }

    #[test]
    fn pretty_matches_json_stringify_indent_2() {
        let v = parse(r#"{"a":[],"b":{},"c":[1,{"d":null}],"e":"x"}"#).unwrap();
        let want = "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"e\": \"x\"\n}";
        assert_eq!(stringify_pretty(&v).unwrap(), want);
    }

    #[test]
    fn undefined_and_nan() {
        let mut o = Object::new();
        o.set("u", Value::Undefined);
        o.set("n", Value::Number(f64::NAN));
        o.set("a", Value::Array(vec![Value::Undefined, Value::Number(-0.0)]));
        assert_eq!(stringify(&Value::Object(o)).unwrap(), r#"{"n":null,"a":[null,0]}"#);
        let mut only_undef = Object::new();
        only_undef.set("u", Value::Undefined);
        assert_eq!(stringify_pretty(&Value::Object(only_undef)).unwrap(), "{}");
        assert_eq!(stringify(&Value::Undefined), None);
    }

    #[test]
    fn members_within_a_depth_or_none() {
        let v = parse(r#"{"a":{"b":[1]},"c":2}"#).unwrap().into_object().unwrap();
        assert_eq!(stringify_members_within(v.iter(), None, 3).as_deref(), Some(r#"{"a":{"b":[1]},"c":2}"#));
        assert_eq!(stringify_members_within(v.iter(), Some(2), 2), None);
        let flat = parse(r#"{"a":[],"b":{}}"#).unwrap().into_object().unwrap();
        assert_eq!(stringify_members_within(flat.iter(), None, 1).as_deref(), Some(r#"{"a":[],"b":{}}"#));
    }

    /// Depth costs heap, never native stack: a thread with a small stack
    /// parses and writes a million levels (V8's `JSON.parse` takes as many).
    #[test]
    fn deep_nesting_needs_no_stack() {
        std::thread::Builder::new().stack_size(128 << 10).spawn(deep_nesting_body).unwrap().join().unwrap();
    }

    fn deep_nesting_body() {
        let n = 1_000_000;
        let deep = "[".repeat(n) + &"]".repeat(n);
        let v = parse(&deep).unwrap();
        assert_eq!(stringify(&v).unwrap(), deep);
        let obj = "{\"a\":".repeat(n) + "{}" + &"}".repeat(n);
        let v = parse(&obj).unwrap();
        let copy = v.clone();
        assert_eq!(stringify(&copy).unwrap(), obj);
        // Indented text grows with the square of the depth: fewer levels.
        let m = 3_000;
        let obj = "{\"a\":".repeat(m) + "[1]" + &"}".repeat(m);
        let pretty = stringify_pretty(&parse(&obj).unwrap()).unwrap();
        assert_eq!(pretty.lines().count(), 2 * m + 3);
        assert!(pretty.contains(&format!("\n{}1\n", " ".repeat(2 * m + 2))));
        assert!(parse(&("[".repeat(n) + &"]".repeat(n - 1))).is_err());
    }
}
