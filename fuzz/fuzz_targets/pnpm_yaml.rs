//! `pnpm-workspace.yaml` as quiver-cli reads it (line by line with regular
//! expressions, not as YAML), against those regular expressions run by the
//! regex crate with JavaScript's `\s`, `.` and `trim`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use quiver_live_core::fuzzing::pnpm_packages;
use quiver_live_fuzz::js_trim;
use regex::Regex;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    assert_eq!(pnpm_packages(&text), by_regex(&text), "{text:?}");
});

struct Patterns {
    lines: Regex,
    flow: Regex,
    block_start: Regex,
    key: Regex,
    item: Regex,
    quotes: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let s = quiver_live_fuzz::js_space_class();
        // JavaScript's `.`: anything but a line terminator.
        let dot = r"[^\n\r\x{2028}\x{2029}]";
        Patterns {
            lines: Regex::new(r"\r?\n").unwrap(),
            flow: Regex::new(&format!(r"^packages:{s}*\[({dot}*)\]{s}*$")).unwrap(),
            block_start: Regex::new(&format!(r"^packages:{s}*$")).unwrap(),
            key: Regex::new(&format!(r"^[A-Za-z0-9_-]+:{s}*")).unwrap(),
            item: Regex::new(&format!(r"^-{s}*({dot}+)$")).unwrap(),
            quotes: Regex::new(r#"^['"]|['"]$"#).unwrap(),
        }
    })
}

fn by_regex(body: &str) -> Vec<String> {
    let p = patterns();
    let mut out = Vec::new();
    let mut in_packages = false;
    for line in p.lines.split(body) {
        let trimmed = js_trim(strip_comment(line));
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(m) = p.flow.captures(trimmed) {
            out.extend(flow_list(&m[1]));
            in_packages = false;
            continue;
        }
        if p.block_start.is_match(trimmed) {
            in_packages = true;
            continue;
        }
        if in_packages && p.key.is_match(trimmed) {
            break;
        }
        if in_packages {
            if let Some(m) = p.item.captures(trimmed) {
                out.push(unquote(&m[1]));
            }
        }
    }
    out
}

fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = None;
    for (i, ch) in line.char_indices() {
        let escaped = prev == Some('\\');
        prev = Some(ch);
        if (ch == '"' || ch == '\'') && !escaped {
            quote = toggle_quote(quote, ch);
            continue;
        }
        if ch == '#' && quote.is_none() {
            return &line[..i];
        }
    }
    line
}

/// The quote a line is inside after the quote character `ch`: it opens
/// one, closes the one it matches, or is text inside the other kind.
fn toggle_quote(quote: Option<char>, ch: char) -> Option<char> {
    match quote {
        Some(q) if q == ch => None,
        Some(q) => Some(q),
        None => Some(ch),
    }
}

fn flow_list(body: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut quote: Option<char> = None;
    let mut current = String::new();
    let mut prev = None;
    for ch in body.chars() {
        let escaped = prev == Some('\\');
        prev = Some(ch);
        if (ch == '"' || ch == '\'') && !escaped {
            quote = toggle_quote(quote, ch);
            current.push(ch);
            continue;
        }
        if ch == ',' && quote.is_none() {
            let value = unquote(&current);
            if !value.is_empty() {
                items.push(value);
            }
            current.clear();
            continue;
        }
        current.push(ch);
    }
    let value = unquote(&current);
    if !value.is_empty() {
        items.push(value);
    }
    items
}

/// `String(value || '').trim().replace(/^['"]|['"]$/g, '')`.
fn unquote(value: &str) -> String {
    patterns().quotes.replace_all(js_trim(value), "").into_owned()
}
