//! JavaScript strings: UTF-8 text when they are valid UTF-16, the UTF-16
//! code units themselves when they hold a lone surrogate.

/// A JavaScript string. Almost every string is valid UTF-16 and is kept as
/// UTF-8 text; one holding a lone surrogate (legal in JS and in JSON via
/// `\udXXX` escapes) is kept as raw UTF-16 so it round-trips unchanged.
/// Invariant: `Utf16` always contains at least one lone surrogate, so it never
/// holds a string equal to one of the UTF-8 variants. Which UTF-8 variant
/// holds a text is not observable: everything compares through `as_str`.
#[derive(Clone, Debug)]
pub enum JsStr {
    Utf8(String),
    /// Text known when the program was built (a snapshot field's name).
    Static(&'static str),
    /// Short text (ids, event types, timestamps, urls) held in place: no
    /// allocation to parse, copy or free it, at no cost in size.
    Inline(InlineStr),
    Utf16(Vec<u16>),
}

pub use inline::InlineStr;

mod inline {
    /// Bytes held in place: with the length byte, 31 bytes, padded to 32.
    /// ISO timestamps (24) and most ids, types and short paths fit.
    pub const CAPACITY: usize = 30;

    /// UTF-8 text of at most [`CAPACITY`] bytes, stored in place.
    /// Invariant: `bytes[..len]` is a copy of a `&str`, hence valid UTF-8;
    /// the fields are private to this module so nothing else can break it.
    ///
    /// Aligned to 8 so it starts on a word after `JsStr`'s tag: unaligned,
    /// it sat one byte past the tag and every move of a string (returned by
    /// the parser, pushed into an object, cloned) was copied in odd-sized
    /// pieces that stalled on store forwarding. Aligned, parsing a small
    /// plan object went from about 600 to 470 ns, for 8 bytes more per
    /// `JsStr` (an object entry is 88 bytes instead of 80).
    #[derive(Clone, Copy)]
    #[repr(C, align(8))]
    pub struct InlineStr {
        len: u8,
        bytes: [u8; CAPACITY],
    }

    impl InlineStr {
        #[inline]
        pub fn new(s: &str) -> Option<InlineStr> {
            if s.len() > CAPACITY {
                return None;
            }
            let mut bytes = [0u8; CAPACITY];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Some(InlineStr { len: s.len() as u8, bytes })
        }

        #[inline]
        pub fn as_str(&self) -> &str {
            let b = &self.bytes[..usize::from(self.len)];
            // SAFETY: `new` is the only constructor and copies `len` bytes of
            // a `&str`, so `b` is valid UTF-8; it runs on every property read
            // and string compare, where re-validating would cost a scan.
            unsafe { std::str::from_utf8_unchecked(b) }
        }
    }

    impl std::fmt::Debug for InlineStr {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.as_str().fmt(f)
        }
    }
}

impl JsStr {
    pub fn from_utf16(units: Vec<u16>) -> JsStr {
        match String::from_utf16(&units) {
            Ok(s) => JsStr::Utf8(s),
            Err(_) => JsStr::Utf16(units),
        }
    }

    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsStr::Utf8(s) => Some(s),
            JsStr::Static(s) => Some(s),
            JsStr::Inline(s) => Some(s.as_str()),
            JsStr::Utf16(_) => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            JsStr::Utf16(u) => u.is_empty(),
            other => other.as_str().is_some_and(str::is_empty),
        }
    }

    pub fn eq_str(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }

    /// The UTF-16 code units, the unit JS compares and indexes strings by.
    pub fn units(&self) -> Box<dyn Iterator<Item = u16> + '_> {
        match self {
            JsStr::Utf16(u) => Box::new(u.iter().copied()),
            other => Box::new(other.as_str().unwrap_or_default().encode_utf16()),
        }
    }

    /// Lossy text for error messages and file names (lone surrogates become U+FFFD).
    pub fn to_lossy(&self) -> String {
        match self {
            JsStr::Utf16(u) => String::from_utf16_lossy(u),
            other => other.as_str().unwrap_or_default().to_owned(),
        }
    }
}

impl PartialEq for JsStr {
    fn eq(&self, other: &JsStr) -> bool {
        match (self, other) {
            (JsStr::Utf16(a), JsStr::Utf16(b)) => a == b,
            (JsStr::Utf16(_), _) | (_, JsStr::Utf16(_)) => false,
            (a, b) => a.as_str() == b.as_str(),
        }
    }
}

impl From<&str> for JsStr {
    #[inline]
    fn from(s: &str) -> JsStr {
        match InlineStr::new(s) {
            Some(inline) => JsStr::Inline(inline),
            None => JsStr::Utf8(s.to_owned()),
        }
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> JsStr {
        JsStr::Utf8(s)
    }
}

/// JS WhiteSpace and LineTerminator: what `String.prototype.trim` removes
/// and `\s` matches (Unicode White_Space but U+0085, plus U+FEFF).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{09}'..='\u{0D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}'
            | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// [`is_js_space`] of one UTF-16 code unit (no surrogate is a space).
pub fn is_js_space_unit(u: u16) -> bool {
    char::from_u32(u32::from(u)).is_some_and(is_js_space)
}

/// A JS LineTerminator: what `.` in a regex without the `s` flag refuses to match.
pub fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// `String.prototype.trim()`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list is Unicode's White_Space less U+0085, plus U+FEFF.
    #[test]
    fn js_space_is_unicode_white_space_but_nel_plus_bom() {
        for c in (0..=0x3000u32).chain([0xFEFF]).filter_map(char::from_u32) {
            assert_eq!(is_js_space(c), (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}', "{c:?}");
        }
    }
}

