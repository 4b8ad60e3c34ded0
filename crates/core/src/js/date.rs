//! The two pieces of `Date` the store needs: `toISOString()` for journal
//! timestamps and a fast `Date.parse` for the one format it writes. Any other
//! text goes to the host's real `Date.parse`, whose legacy grammar is not
//! worth re-implementing: journals written by the store only ever hold the
//! canonical form, so the fallback runs only on hand-edited lines.

/// The last millisecond of 9999-12-31: `iso_string` matches V8's
/// `toISOString` from 0 (the epoch) up to here.
pub const MAX_FOUR_DIGIT_YEAR_MS: f64 = 253_402_300_799_999.0;

/// `new Date(ms).toISOString()` for the years the store meets (0..=9999).
pub fn iso_string(ms: f64) -> String {
    let ms = ms as i64;
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        y,
        m,
        d,
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Parses exactly `YYYY-MM-DDTHH:mm:ss.sssZ`; `None` means "ask the host".
pub fn parse_canonical_iso(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = &s[from..to];
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec, milli) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 24 || mi > 59 || sec > 59 {
        return None;
    }
    if h == 24 && (mi != 0 || sec != 0 || milli != 0) {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + milli) as f64)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's days-from-civil, proleptic Gregorian.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        for ms in [0.0, 1_893_456_000_000.0, 951_782_400_123.0, 1_709_164_800_999.0] {
            let s = iso_string(ms);
            assert_eq!(parse_canonical_iso(&s), Some(ms), "{s}");
        }
        assert_eq!(iso_string(1_893_456_000_000.0), "2030-01-01T00:00:00.000Z");
        assert_eq!(parse_canonical_iso("2030-02-30T00:00:00.000Z"), None);
        assert_eq!(parse_canonical_iso("2030-01-01T00:00:00Z"), None);
    }
}
