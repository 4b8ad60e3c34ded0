//! Workspace patterns: where a monorepo declares its packages, and how a
//! pattern matches a path, as quiver-cli's context.mjs reads and matches them.
//!
//! Patterns are kept as UTF-16 code units because that is what the JS
//! compares and what its (non-`u`) glob regex matches: a JSON pattern may
//! hold a lone surrogate, and that matches half of an astral character in a
//! dir name. An unreadable file reads as empty, as the JS `try/catch`
//! blocks make it.

use super::files::DirFiles;
use super::pnpm::pnpm_packages;
use super::is_quote;
use crate::js::string::is_js_space_unit;
use crate::js::ops::not_primitive;
use crate::js::{JsError, Value};

/// A JS string as UTF-16 code units.
pub(super) type Units = Vec<u16>;
/// A workspace pattern as JS sees it: `String(entry)`, or the exception that
/// conversion throws. Kept lazy because the JS only converts the entries it
/// reaches, so whether it throws depends on evaluation order.
pub(super) type Pattern = Result<Units, JsError>;
/// Group 1: `.impeccable` projectRoots; group 2: package-manager workspaces.
pub(super) type PatternGroups = [Vec<Pattern>; 2];

pub(super) const STAR: u16 = b'*' as u16;
const SLASH: u16 = b'/' as u16;
pub(super) const DOT: u16 = b'.' as u16;
pub(super) const BANG: u16 = b'!' as u16;

/// Pattern-vs-path test shared by inclusion and exclusion. With `**`, only
/// the segments before the first one containing `*` are checked (so in
/// `a*/**` the `a*` is never compared), and one more path segment is needed.
pub(crate) fn pattern_covers(segs: &[&[u16]], rel: &[Units]) -> bool {
    if segs.is_empty() {
        return false;
    }
    let double_star = segs.iter().any(|s| is_double_star(s));
    let checked = if double_star {
        literal_prefix(segs)
    } else {
        segs
    };
    let needed = checked.len() + usize::from(double_star);
    rel.len() >= needed
        && checked
            .iter()
            .zip(rel)
            .all(|(p, name)| segment_matches(p, name))
}

pub(super) fn literal_prefix<'s, 'a>(segs: &'s [&'a [u16]]) -> &'s [&'a [u16]] {
    let first_glob = segs
        .iter()
        .position(|s| s.contains(&STAR))
        .unwrap_or(segs.len());
    &segs[..first_glob]
}

// ---------------------------------------------------------------------------
// Patterns (UTF-16, as JS strings)

pub(super) fn pattern_units(pattern: &Pattern) -> Result<&[u16], JsError> {
    pattern.as_deref().map_err(JsError::clone)
}

/// trim, one leading and one trailing quote off, a leading `./` off,
/// trailing slashes off.
pub(crate) fn normalize_pattern(raw: &[u16]) -> &[u16] {
    let s = strip_quote_units(trim_units(raw));
    let s = s.strip_prefix(&[DOT, SLASH]).unwrap_or(s);
    let end = s.iter().rposition(|&u| u != SLASH).map_or(0, |i| i + 1);
    &s[..end]
}

pub(crate) fn segments(pattern: &[u16]) -> Vec<&[u16]> {
    pattern
        .split(|&u| u == SLASH)
        .filter(|s| !s.is_empty())
        .collect()
}

pub(super) fn is_double_star(segment: &[u16]) -> bool {
    segment == [STAR, STAR]
}

/// `*` alone matches anything; otherwise `*` is any run of code units (path
/// segments never hold `/`) and everything else is literal, case-sensitive.
pub(crate) fn segment_matches(pattern: &[u16], name: &[u16]) -> bool {
    if pattern == [STAR] {
        return true;
    }
    if !pattern.contains(&STAR) {
        return pattern == name;
    }
    glob_matches(pattern, name)
}

/// Iterative wildcard match: on a mismatch, let the last `*` absorb one more
/// unit and retry from there.
fn glob_matches(p: &[u16], s: &[u16]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while si < s.len() {
        if p.get(pi) == Some(&STAR) {
            backtrack = Some((pi, si));
            pi += 1;
        } else if p.get(pi) == Some(&s[si]) {
            pi += 1;
            si += 1;
        } else if let Some((star, absorbed)) = backtrack {
            backtrack = Some((star, absorbed + 1));
            pi = star + 1;
            si = absorbed + 1;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&u| u == STAR)
}

pub(super) fn trim_units(s: &[u16]) -> &[u16] {
    let start = s
        .iter()
        .position(|&u| !is_js_space_unit(u))
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&u| !is_js_space_unit(u))
        .map_or(start, |i| i + 1);
    &s[start..end]
}

/// `s.replace(/^['"]|['"]$/g, '')` on code units.
fn strip_quote_units(s: &[u16]) -> &[u16] {
    let is_quote_unit = |u: &u16| char::from_u32(u32::from(*u)).is_some_and(is_quote);
    let s = if s.first().is_some_and(is_quote_unit) {
        &s[1..]
    } else {
        s
    };
    if s.last().is_some_and(is_quote_unit) {
        &s[..s.len() - 1]
    } else {
        s
    }
}

/// Every JS whitespace character is in the BMP, so a unit test suffices
/// (surrogates are never whitespace).
pub(super) fn units_eq(units: &[u16], s: &str) -> bool {
    units.iter().copied().eq(s.encode_utf16())
}

// ---------------------------------------------------------------------------
// Reading the pattern lists

pub(super) fn read_pattern_groups(files: &DirFiles) -> PatternGroups {
    [impeccable_project_roots(files), package_manager_patterns(files)]
}

/// `projectRoots` of `.impeccable/config.json` then `config.local.json`:
/// only non-empty strings, trimmed.
fn impeccable_project_roots(files: &DirFiles) -> Vec<Pattern> {
    let mut out = Vec::new();
    for name in [".impeccable/config.json", ".impeccable/config.local.json"] {
        let config = files.read_json(name);
        let Some(Value::Array(entries)) = field(config.as_ref(), "projectRoots") else {
            continue;
        };
        for entry in entries {
            if let Value::String(s) = entry {
                let units: Units = s.units().collect();
                let trimmed = trim_units(&units);
                if !trimmed.is_empty() {
                    out.push(Ok(trimmed.to_vec()));
                }
            }
        }
    }
    out
}

/// package.json workspaces, pnpm packages, lerna packages; falsy entries
/// dropped (`.filter(Boolean)`), the rest converted as `String(entry)`.
fn package_manager_patterns(files: &DirFiles) -> Vec<Pattern> {
    let mut out = Vec::new();
    let package = files.read_json("package.json");
    push_entries(&mut out, package_json_workspaces(package.as_ref()));
    if let Some(text) = files.read_text("pnpm-workspace.yaml") {
        let values = pnpm_packages(&text).into_iter().filter(|v| !v.is_empty());
        out.extend(values.map(|v| Ok(v.encode_utf16().collect())));
    }
    let lerna = files.read_json("lerna.json");
    if let Some(Value::Array(list)) = field(lerna.as_ref(), "packages") {
        push_entries(&mut out, list);
    }
    out
}

/// `workspaces` when it is an array, else `workspaces.packages` when that is.
pub(super) fn package_json_workspaces(package: Option<&Value>) -> &[Value] {
    match field(package, "workspaces") {
        Some(Value::Array(list)) => list,
        workspaces => match field(workspaces, "packages") {
            Some(Value::Array(list)) => list,
            _ => &[],
        },
    }
}

fn push_entries(out: &mut Vec<Pattern>, entries: &[Value]) {
    out.extend(entries.iter().filter(|v| v.truthy()).map(js_string));
}

/// `value?.[key]` for the JSON values the readers look into.
fn field<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    match value? {
        Value::Object(object) => object.get(key),
        _ => None,
    }
}

/// JS `String(v)` as UTF-16 units, or the TypeError V8 throws (an object
/// owning a non-callable `toString`).
pub(super) fn js_string(v: &Value) -> Pattern {
    v.to_js_string().map(|s| s.units().collect()).map_err(|_| not_primitive())
}

// ---------------------------------------------------------------------------
// JS character classes


