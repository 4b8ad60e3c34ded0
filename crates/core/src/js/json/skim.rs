//! A JSON validator that builds nothing: it checks text against the grammar
//! V8's `JSON.parse` accepts and reports where the top-level object's
//! members are.
//!
//! It exists so a snapshot file can be handed to V8 as text: a fresh store
//! listing hundreds of sessions would otherwise build each snapshot twice
//! (once as this crate's value model, once as JS objects), which made it
//! slower than the old module's plain `JSON.parse`. Validating first keeps
//! the promise that V8 will accept the text, so a file either module wrote
//! never reaches V8 broken; anything this module is unsure of (escaped keys,
//! nesting past 64 levels) returns `None` and the caller takes the full parser.

use std::ops::Range;

/// One member of the top-level object: its key (raw text between the quotes,
/// known to hold no escapes) and the byte range of its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member<'a> {
    pub key: &'a str,
    pub value: Range<usize>,
}

/// A member as byte ranges of the text: its key (between the quotes, known
/// to hold no escapes) and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberSpan {
    pub key: Range<usize>,
    pub value: Range<usize>,
}

/// Deeper nesting than this is left to the full parser, which keeps its
/// nesting on the heap (V8 accepts more, but the skim need not: it only has
/// to be sure when it says yes). The skim recurses, and this bound keeps it
/// to a few kilobytes of native stack: it may run with little left (a
/// worker's JavaScript at its stack limit leaves the native code under
/// 200 KB).
const MAX_DEPTH: usize = 64;

/// The members of `text` when it is exactly one JSON object (surrounded by
/// optional whitespace) that `JSON.parse` accepts and whose keys hold no
/// escapes; `None` otherwise.
pub fn top_level_members(text: &str) -> Option<Vec<Member<'_>>> {
    let mut s = Skim { b: text.as_bytes(), i: 0 };
    let mut members = Vec::with_capacity(40);
    s.ws();
    s.object(1, &mut |key, escaped, value| {
        (!escaped).then(|| members.push(Member { key: &text[key], value }))
    })?;
    s.ws();
    (s.i == s.b.len()).then_some(members)
}

/// [`top_level_members`] into reused vectors, also reporting the members of
/// the object held by the last `nested` key, when that value is an object
/// (`nested_members` is left empty otherwise). `None` when the text is not
/// one object `JSON.parse` accepts, or when a key at either level holds an
/// escape; the vectors' contents are then meaningless.
///
/// One pass: the nested object is validated while its members are noted,
/// instead of skimming it once as a value and again as an object.
pub fn members_with_nested(text: &str, nested: &str, members: &mut Vec<MemberSpan>, nested_members: &mut Vec<MemberSpan>) -> Option<()> {
    members.clear();
    nested_members.clear();
    let mut s = Skim { b: text.as_bytes(), i: 0 };
    s.ws();
    s.object_with(1, |s, key, escaped| {
        if escaped {
            return None;
        }
        let start = s.i;
        let is_nested = &text[key.clone()] == nested;
        if is_nested {
            // A repeated key: only the last value counts, as in `JSON.parse`,
            // object or not.
            nested_members.clear();
        }
        if is_nested && s.peek() == Some(b'{') {
            s.object(2, &mut |key, escaped, value| (!escaped).then(|| nested_members.push(MemberSpan { key, value })))?;
        } else {
            s.value(1)?;
        }
        members.push(MemberSpan { key, value: start..s.i });
        Some(())
    })?;
    s.ws();
    (s.i == s.b.len()).then_some(())
}

struct Skim<'a> {
    b: &'a [u8],
    i: usize,
}

impl Skim<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// JSON whitespace: exactly these four bytes, as V8 has it.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' => self.object(depth + 1, &mut |_, _, _| Some(())),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// Skips ASCII digits; how many there were.
    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    /// A string; returns whether it held an escape. Raw control characters
    /// are refused, as V8 refuses them.
    fn string(&mut self) -> Option<bool> {
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            self.i += crate::js::json::plain_len(&self.b[self.i..]);
            match self.next()? {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.b.get(self.i..self.i + 4)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i += 4;
                        }
                        _ => return None,
                    }
                }
                // A raw control character: V8 refuses it.
                _ => return None,
            }
        }
    }

    /// An object; `member` gets each key's range (quotes excluded), whether
    /// the key held an escape, and its value's range, and can refuse it.
    fn object(&mut self, depth: usize, member: &mut dyn FnMut(Range<usize>, bool, Range<usize>) -> Option<()>) -> Option<()> {
        self.object_with(depth, |s, key, escaped| {
            let start = s.i;
            s.value(depth)?;
            member(key, escaped, start..s.i)
        })
    }

    /// An object whose values `value` skims itself, each positioned at the
    /// value after its key's range (quotes excluded) and whether the key
    /// held an escape.
    fn object_with(&mut self, depth: usize, mut value: impl FnMut(&mut Self, Range<usize>, bool) -> Option<()>) -> Option<()> {
        self.sequence(b'{', b'}', depth, |s| {
            let key_start = s.i + 1;
            let escaped = s.string()?;
            let key = key_start..s.i - 1;
            s.ws();
            s.eat(b':')?;
            s.ws();
            value(s, key, escaped)
        })
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.sequence(b'[', b']', depth, |s| s.value(depth))
    }

    /// `open item, item, ... close`, with whitespace anywhere between.
    fn sequence(&mut self, open: u8, close: u8, depth: usize, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(open)?;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.next()? {
                b',' => continue,
                c if c == close => return Some(()),
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(text: &str) -> bool {
        let wrapped = format!("{{\"k\": {}}}", text);
        top_level_members(&wrapped).is_some()
    }

    #[test]
    fn skim_reports_members_and_their_value_ranges() {
        let text = "{\n  \"id\": \"s1\",\n  \"n\": -1.5e+3,\n  \"o\": {\"a\": [1, {\"b\": null}]},\n  \"t\": true\n}\n";
        let m = top_level_members(text).expect("valid");
        let keys: Vec<&str> = m.iter().map(|m| m.key).collect();
        assert_eq!(keys, ["id", "n", "o", "t"]);
        assert_eq!(&text[m[0].value.clone()], "\"s1\"");
        assert_eq!(&text[m[1].value.clone()], "-1.5e+3");
        assert_eq!(&text[m[2].value.clone()], "{\"a\": [1, {\"b\": null}]}");
        assert_eq!(&text[m[3].value.clone()], "true");
        assert_eq!(top_level_members(" {} ").map(|m| m.len()), Some(0));
    }

    #[test]
    fn nested_members_are_those_of_the_last_object_under_the_key() {
        let text = r#"{"seq":1,"event":{"a":1},"x":[{"event":{}}],"event":{"type":"t","b":{"c":2}}}"#;
        let (mut top, mut nested) = (Vec::new(), Vec::new());
        assert!(members_with_nested(text, "event", &mut top, &mut nested).is_some());
        let keys = |m: &[MemberSpan]| m.iter().map(|m| &text[m.key.clone()]).collect::<Vec<_>>();
        assert_eq!(keys(&top), ["seq", "event", "x", "event"]);
        assert_eq!(keys(&nested), ["type", "b"]);
        assert_eq!(&text[nested[1].value.clone()], r#"{"c":2}"#);
        assert_eq!(&text[top[3].value.clone()], r#"{"type":"t","b":{"c":2}}"#);
        // Not an object under the key: no nested members, also when an
        // object came under the same key before.
        assert!(members_with_nested(r#"{"event":"x"}"#, "event", &mut top, &mut nested).is_some());
        assert!(nested.is_empty());
        assert!(members_with_nested(r#"{"se`q":1,"event":{"type":"x"},"event":"k:1}{"}"#, "event", &mut top, &mut nested).is_some());
        assert!(nested.is_empty(), "the last event is a string");
        // An escaped key at either level, or bad JSON anywhere, is refused.
        assert!(members_with_nested(r#"{"ev\u0065nt":{}}"#, "event", &mut top, &mut nested).is_none());
        assert!(members_with_nested(r#"{"event":{"\u0074ype":1}}"#, "event", &mut top, &mut nested).is_none());
        assert!(members_with_nested(r#"{"event":{"a":[1,]}}"#, "event", &mut top, &mut nested).is_none());
        assert!(members_with_nested(r#"{"event":{}} x"#, "event", &mut top, &mut nested).is_none());
    }

    #[test]
    fn skim_accepts_what_json_parse_accepts() {
        for ok in ["0", "-0", "10", "1.25", "1e5", "1E-5", "-0.0e+00", "\"\\u00e9\\n\\\"\"", "\"é\"", "[]", "{}", "[ 1 , 2 ]", "{\"\":1}", "null", "false"] {
            assert!(accepts(ok), "{ok}");
        }
    }

    #[test]
    fn skim_refuses_what_json_parse_refuses() {
        for bad in ["01", "1.", ".5", "+1", "1e", "1e+", "-", "\"\t\"", "\"\\x\"", "\"\\u12g4\"", "tru", "nul", "[1,]", "{\"a\":1,}", "[1 2]", "NaN", "'a'", "\"abc", "{\"a\" 1}", "[", "{"] {
            assert!(!accepts(bad), "{bad}");
        }
        assert!(top_level_members("[1]").is_none(), "not an object");
        assert!(top_level_members("{} x").is_none(), "trailing text");
        assert!(top_level_members("{\"a\\u0062\": 1}").is_none(), "escaped key goes to the full parser");
        let deep = format!("{{\"k\": {}{}}}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(top_level_members(&deep).is_none(), "too deep for the skim");
    }

    /// The skim and this crate's V8-exact parser agree on every sample.
    #[test]
    fn skim_agrees_with_the_parser() {
        let samples = [
            "{\"a\": 1}", "{\"a\": 01}", "{\"a\": [1,2,]}", "{\"a\": \"\\ud800\"}", "{\"a\": 1e999}", "{\"a\": -}",
            "{\"a\": {\"b\": {\"c\": []}}}", "{\"a\": \"x\u{7f}\"}", "{\"a\": 1} ", "{\"a\": 1}}", "{\"a\": tRue}",
        ];
        for s in samples {
            assert_eq!(top_level_members(s).is_some(), crate::js::json::parse(s).is_ok(), "{s}");
        }
    }
}
