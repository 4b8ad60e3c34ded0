//! Numbers as JS reads and writes them: `StringToNumber` and
//! `Number.prototype.toString()`.

use crate::js::string::is_js_space_unit;
use crate::js::string::JsStr;

/// `StringToNumber`: what `Number(' 3 ')`, `Number('0x10')` and friends give.
pub fn string_to_number(s: &JsStr) -> f64 {
    let units: Vec<u16> = s.units().collect();
    let start = units.iter().position(|u| !is_js_space_unit(*u));
    let Some(start) = start else { return 0.0 };
    let end = units.iter().rposition(|u| !is_js_space_unit(*u)).map_or(start, |e| e + 1);
    let Ok(text) = String::from_utf16(&units[start..end]) else { return f64::NAN };
    parse_numeric_literal(&text)
}

fn parse_numeric_literal(t: &str) -> f64 {
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            return parse_radix(&t[2..], radix);
        }
    }
    let (sign, body) = match b.first() {
        Some(b'+') => (1.0, &t[1..]),
        Some(b'-') => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(body) {
        return f64::NAN;
    }
    body.parse::<f64>().map_or(f64::NAN, |n| sign * n)
}

fn parse_radix(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    let mut acc = 0f64;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => acc = acc * f64::from(radix) + f64::from(d),
            None => return f64::NAN,
        }
    }
    acc
}

/// StrUnsignedDecimalLiteral: digits with an optional fraction and exponent,
/// at least one digit in the mantissa (`5.`, `.5` are fine, `.` is not).
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = count_digits(&b[i..]);
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `Number.prototype.toString()` (radix 10): the shortest digits that round
/// trip, the even ones when two are equally close, laid out by the
/// ECMAScript rules (`1e+21`, `5e-324`, `0.000001`).
pub fn number_to_string(n: f64) -> String {
    // Integers below 2^53 (sequence numbers, sizes, timestamps) print as
    // themselves, without the general search.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 && n != 0.0 {
        return (n as i64).to_string();
    }
    ryu_js::Buffer::new().format(n).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::excessive_precision, reason = "the exact value ...580.25, which prints as ...580.2, is the case")]
    fn number_text_matches_js() {
        let cases = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (5e-324, "5e-324"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (123.456, "123.456"),
            (-0.0, "0"),
            (f64::NAN, "NaN"),
            (-1.5e300, "-1.5e+300"),
            (9007199254740993.0, "9007199254740992"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            // Halfway between ...580.2 and ...580.3: V8 takes the even digit.
            (562949953824580.25, "562949953824580.2"),
        ];
        for (n, want) in cases {
            assert_eq!(number_to_string(n), want, "{n:e}");
        }
    }

    /// Every line of fixtures/number-text.txt, which V8 wrote
    /// (fixtures/gen-number-text.mjs): half of them halfway cases.
    #[test]
    fn number_text_matches_v8() {
        let mut checked = 0;
        for line in include_str!("../../fixtures/number-text.txt").lines() {
            let (bits, want) = line.split_once(' ').unwrap();
            let n = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            assert_eq!(number_to_string(n), want, "bits {bits}");
            checked += 1;
        }
        assert!(checked > 5000);
    }
}
