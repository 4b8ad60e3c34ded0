//! Workspace patterns against a path, as quiver-cli matches them: the
//! pattern normalized (trim, quotes, `./`, trailing slashes), split on `/`,
//! `**` checking only the segments before the first glob, each segment
//! matched by the regex `^<escaped, * as [^/]*>$` on UTF-16 code units.
//! The reference here is a straightforward reading of that JavaScript:
//! wildcard matching by dynamic programming over code units.
//!
//! Input: NUL-separated parts, the pattern first, then path segments; bytes
//! map onto code units so `*`, `/`, quotes, spaces and lone surrogates come
//! up often.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_live_core::fuzzing::{pattern_covers, segment_matches};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0).map(|part| part.iter().map(|&b| unit(b)).collect::<Vec<u16>>());
    let Some(pattern) = parts.next() else { return };
    let rel: Vec<Vec<u16>> = parts.map(|s| s.into_iter().filter(|&u| u != SLASH).collect::<Vec<u16>>()).filter(|s| !s.is_empty()).collect();
    assert_eq!(pattern_covers(&pattern, &rel), covers(&pattern, &rel), "{pattern:?} over {rel:?}");
    let segment: Vec<u16> = pattern.iter().copied().filter(|&u| u != SLASH).collect();
    for name in &rel {
        assert_eq!(segment_matches(&segment, name), glob(&segment, name), "{segment:?} against {name:?}");
    }
});

const SLASH: u16 = b'/' as u16;
const STAR: u16 = b'*' as u16;

/// ASCII as itself; the high bytes as lone surrogates (both halves), JS
/// whitespace, and letters beyond ASCII.
fn unit(b: u8) -> u16 {
    match b {
        0x00..=0x7f => u16::from(b),
        0x80..=0x87 => 0xd800 + u16::from(b - 0x80),
        0x88..=0x8f => 0xdc00 + u16::from(b - 0x88),
        0x90 => 0xa0,
        0x91 => 0xfeff,
        0x92 => 0x2028,
        0x93 => 0x3000,
        _ => 0xe0 + u16::from(b),
    }
}

fn is_space(u: u16) -> bool {
    char::from_u32(u32::from(u)).is_some_and(quiver_live_fuzz::is_js_space)
}

fn is_quote(u: u16) -> bool {
    u == u16::from(b'"') || u == u16::from(b'\'')
}

/// `String(p).trim().replace(/^['"]|['"]$/g, '').replace(/^\.\//, '').replace(/\/+$/, '')`.
fn normalize(p: &[u16]) -> Vec<u16> {
    let mut s: Vec<u16> = p.to_vec();
    while s.first().is_some_and(|&u| is_space(u)) {
        s.remove(0);
    }
    while s.last().is_some_and(|&u| is_space(u)) {
        s.pop();
    }
    let leading = s.first().is_some_and(|&u| is_quote(u));
    // The global replace finds its matches in the original string: a lone
    // quote is removed once, by the `^` alternative.
    if leading {
        s.remove(0);
    }
    if s.last().is_some_and(|&u| is_quote(u)) && !(leading && s.is_empty()) {
        s.pop();
    }
    if s.starts_with(&[u16::from(b'.'), SLASH]) {
        s.drain(..2);
    }
    while s.last() == Some(&SLASH) {
        s.pop();
    }
    s
}

fn covers(raw: &[u16], rel: &[Vec<u16>]) -> bool {
    let pattern = normalize(raw);
    let segs: Vec<&[u16]> = pattern.split(|&u| u == SLASH).filter(|s| !s.is_empty()).collect();
    if segs.is_empty() {
        return false;
    }
    if segs.iter().any(|s| *s == [STAR, STAR]) {
        let first_glob = segs.iter().position(|s| s.contains(&STAR)).unwrap_or(segs.len());
        let prefix = &segs[..first_glob];
        return rel.len() >= prefix.len() + 1 && prefix.iter().zip(rel).all(|(p, r)| matches(p, r));
    }
    rel.len() >= segs.len() && segs.iter().zip(rel).all(|(p, r)| matches(p, r))
}

fn matches(p: &[u16], name: &[u16]) -> bool {
    if p == [STAR] {
        return true;
    }
    if !p.contains(&STAR) {
        return p == name;
    }
    glob(p, name)
}

/// `*` as any run of code units, everything else literal; `table[i][j]`:
/// the first i pattern units match the first j name units.
fn glob(p: &[u16], s: &[u16]) -> bool {
    let mut table = vec![vec![false; s.len() + 1]; p.len() + 1];
    table[0][0] = true;
    for i in 1..=p.len() {
        for j in 0..=s.len() {
            table[i][j] = if p[i - 1] == STAR {
                table[i - 1][j] || (j > 0 && table[i][j - 1])
            } else {
                j > 0 && table[i - 1][j - 1] && p[i - 1] == s[j - 1]
            };
        }
    }
    table[p.len()][s.len()]
}
