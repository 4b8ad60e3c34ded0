//! `Number.prototype.toString()` as journal lines and snapshot files write
//! numbers, against the ECMAScript rule worked out from the exact decimal
//! expansion: the fewest digits that read back as the number, the closest
//! such digits to it, the even one on an exact tie; then the spec's layout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::js::json;
use quiver_live_core::js::number::number_to_string;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = data.get(..8) else { return };
    let n = f64::from_le_bytes(bytes.try_into().unwrap());
    let ours = number_to_string(n);
    let mut written = String::new();
    json::write_number(&mut written, n);
    if !n.is_finite() {
        assert_eq!(ours, if n.is_nan() { "NaN" } else if n > 0.0 { "Infinity" } else { "-Infinity" });
        assert_eq!(written, "null");
        return;
    }
    assert_eq!(written, ours, "JSON writes {n:e} as Number toString does");
    let want = expected(n);
    assert_eq!(ours, want, "{n:e} ({:#x})", n.to_bits());
});

/// The exact decimal expansion of positive `n`: all its significant digits
/// (an f64 has at most 767) and the power of ten of the first.
fn exact(n: f64) -> (Vec<u8>, i32) {
    let text = format!("{:.800e}", n);
    let (mantissa, exp) = text.split_once('e').unwrap();
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    (digits, exp.parse().unwrap())
}

/// Whether `digits × 10^(exp - len + 1)` reads back as `n`.
fn reads_back(digits: &[u8], exp: i32, n: f64) -> bool {
    let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    format!("{text}e{}", exp - digits.len() as i32 + 1).parse::<f64>().unwrap() == n
}

/// The two k-digit candidates around the exact value: truncated, and one
/// unit up in the last place (with its carry).
fn candidates(exact_digits: &[u8], exp: i32, k: usize) -> ((Vec<u8>, i32), (Vec<u8>, i32)) {
    let mut down: Vec<u8> = exact_digits.iter().copied().chain(std::iter::repeat(0)).take(k).collect();
    let truncated = down.clone();
    let mut i = k;
    loop {
        if i == 0 {
            down = std::iter::once(1).chain(std::iter::repeat(0)).take(k).collect();
            return ((truncated, exp), (down, exp + 1));
        }
        i -= 1;
        if down[i] == 9 {
            down[i] = 0;
        } else {
            down[i] += 1;
            return ((truncated, exp), (down, exp));
        }
    }
}

/// How the rest after k digits compares with half a unit in the last place.
fn rest_vs_half(exact_digits: &[u8], k: usize) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    let rest = exact_digits.get(k..).unwrap_or(&[]);
    match rest.first() {
        None => Less,
        Some(&d) if d < 5 => Less,
        Some(&d) if d > 5 => Greater,
        Some(_) => if rest[1..].iter().any(|&d| d != 0) { Greater } else { Equal },
    }
}

/// Number::toString's digits and layout, from the rule itself.
fn expected(n: f64) -> String {
    if n == 0.0 {
        return "0".into();
    }
    if n < 0.0 {
        return format!("-{}", expected(-n));
    }
    let (digits, exp) = exact(n);
    for k in 1..=17 {
        let ((low, low_exp), (high, high_exp)) = candidates(&digits, exp, k);
        let (low_ok, high_ok) = (reads_back(&low, low_exp, n), reads_back(&high, high_exp, n));
        let pick_high = match (low_ok, high_ok) {
            (false, false) => continue,
            (true, false) => false,
            (false, true) => true,
            (true, true) => match rest_vs_half(&digits, k) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => low[k - 1] % 2 == 1,
            },
        };
        let (mut chosen, chosen_exp) = if pick_high { (high, high_exp) } else { (low, low_exp) };
        while chosen.len() > 1 && chosen.last() == Some(&0) {
            chosen.pop();
        }
        return layout(&chosen, chosen_exp + 1);
    }
    unreachable!("17 digits always read back")
}

/// The spec's layout of digits `s` (k of them) with the point after `n`.
fn layout(digits: &[u8], n: i32) -> String {
    let s: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    let k = s.len() as i32;
    if k <= n && n <= 21 {
        s + &"0".repeat((n - k) as usize)
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &s[..n as usize], &s[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat(-n as usize), s)
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        if k == 1 { format!("{s}e{sign}{}", e.abs()) } else { format!("{}.{}e{sign}{}", &s[..1], &s[1..], e.abs()) }
    }
}
