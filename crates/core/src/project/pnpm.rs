//! `pnpm-workspace.yaml` as quiver-cli reads it: line by line, not as YAML.

use super::is_quote;
use crate::js::string::{is_js_space, is_line_terminator, js_trim};

/// The `packages` list: a one-line flow list `packages: [a, 'b']` or a block
/// of `- value` lines after `packages:`, ended by the next `key:` line.
/// Block values may be empty; the caller drops those.
pub(crate) fn pnpm_packages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for raw_line in js_lines(text) {
        let line = js_trim(strip_inline_comment(raw_line));
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(body) = flow_list_body(line) {
            out.extend(flow_list_items(body));
            in_block = false;
        } else if line == "packages:" {
            in_block = true;
        } else if in_block && starts_with_yaml_key(line) {
            break;
        } else if in_block {
            if let Some(value) = block_item(line) {
                out.push(unquote(value).to_string());
            }
        }
    }
    out
}

/// `text.split(/\r?\n/)`: a `\r` is only part of the separator before `\n`.
fn js_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    for line in &mut lines[..last] {
        *line = line.strip_suffix('\r').unwrap_or(line);
    }
    lines
}

/// Cuts a `#` comment that is outside quotes. A quote toggles unless the
/// previous character is a backslash; the other quote kind inside is literal.
fn strip_inline_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = None;
    for (i, ch) in line.char_indices() {
        if is_quote(ch) && prev != Some('\\') {
            quote = toggle_quote(quote, ch);
        } else if ch == '#' && quote.is_none() {
            return &line[..i];
        }
        prev = Some(ch);
    }
    line
}

fn toggle_quote(open: Option<char>, ch: char) -> Option<char> {
    match open {
        Some(q) if q == ch => None,
        Some(q) => Some(q),
        None => Some(ch),
    }
}

/// The inside of `packages: [ ... ]` (regex `^packages:\s*\[(.*)\]\s*$` on a
/// trimmed line; `.` does not match line terminators).
fn flow_list_body(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("packages:")?
        .trim_start_matches(is_js_space);
    let body = rest.strip_prefix('[')?.strip_suffix(']')?;
    (!body.contains(is_line_terminator)).then_some(body)
}

/// Splits a flow list on commas outside quotes; empty items are dropped.
fn flow_list_items(body: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut quote = None;
    let mut prev = None;
    let mut start = 0;
    for (i, ch) in body.char_indices() {
        if is_quote(ch) && prev != Some('\\') {
            quote = toggle_quote(quote, ch);
        } else if ch == ',' && quote.is_none() {
            push_non_empty(&mut items, unquote(&body[start..i]));
            start = i + 1;
        }
        prev = Some(ch);
    }
    push_non_empty(&mut items, unquote(&body[start..]));
    items
}

fn push_non_empty(items: &mut Vec<String>, value: &str) {
    if !value.is_empty() {
        items.push(value.to_string());
    }
}

/// `^[A-Za-z0-9_-]+:` — any YAML key line, which ends the packages block.
fn starts_with_yaml_key(line: &str) -> bool {
    let name_len = line
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        .count();
    name_len > 0 && line.as_bytes().get(name_len) == Some(&b':')
}

/// The value of a `- value` line (regex `^-\s*(.+)$`).
fn block_item(line: &str) -> Option<&str> {
    let value = line.strip_prefix('-')?.trim_start_matches(is_js_space);
    (!value.is_empty() && !value.contains(is_line_terminator)).then_some(value)
}

/// trim, then one quote off each end (`String(v).trim().replace(...)`).
fn unquote(value: &str) -> &str {
    let s = js_trim(value);
    let s = s.strip_prefix(is_quote).unwrap_or(s);
    s.strip_suffix(is_quote).unwrap_or(s)
}
