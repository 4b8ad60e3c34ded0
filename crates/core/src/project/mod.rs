//! Project root resolution, as quiver-cli's context.mjs resolves it.
//!
//! The live session store and the source lock put their files under
//! `<root>/.impeccable/...`, where `<root>` is the "project root" that
//! quiver-cli derives from a cwd: the cwd itself, unless a monorepo (workspace)
//! root is found above it, in which case the workspace package holding the cwd.
//! Old and new module must agree on `<root>` or they would not share sessions,
//! so this is a faithful port of the JS, including its quirks (string-level
//! `..` checks, `String()` of arbitrary JSON values, a line-based YAML reader).
//! Only the path without `--target` options matters here.
//!
//! All paths are handled lexically (no symlink resolution), as Node's
//! `path.resolve` does on the OS at hand ([`path`]). File system errors never
//! escape: an unreadable file reads as empty, as the JS `try/catch` blocks
//! make it. Which patterns a workspace declares, and how they match, is in
//! [`workspace`]; the pnpm file's reader in [`pnpm`].

mod files;
pub mod layout;
mod path;
pub(crate) mod pnpm;
pub(crate) mod workspace;

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::js::JsError;
use files::DirFiles;
use path::absolutize;
pub use path::resolve_lexical;
use workspace::{
    literal_prefix, normalize_pattern, pattern_covers, pattern_units, read_pattern_groups, segments, is_double_star,
    units_eq, Pattern, PatternGroups, Units, BANG, DOT,
};

/// Files whose presence (plus app/package children) marks a monorepo root.
const MARKER_FILES: [&str; 4] = ["pnpm-workspace.yaml", "turbo.json", "nx.json", "lerna.json"];
/// Conventional parents of workspace packages.
const PACKAGE_PARENTS: [&str; 2] = ["apps", "packages"];
/// Children of `apps/`/`packages/` that never count as packages (besides dotdirs).
const IGNORED_CHILDREN: [&str; 12] = [
    "node_modules",
    ".git",
    "dist",
    "build",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".cache",
    "coverage",
    "vendor",
    "vendors",
];
/// Files that make a directory look like a project in the last fallback.
const PROJECT_FILES: [&str; 7] = [
    "PRODUCT.md",
    "Product.md",
    "product.md",
    "DESIGN.md",
    "Design.md",
    "design.md",
    "package.json",
];

// ---------------------------------------------------------------------------
// Public API

/// The project root for an ABSOLUTE, already lexically-normalized cwd.
/// `home` is `os.homedir()`; a relative one (Node's
/// `os.homedir()` is `""` when `HOME=""`) is resolved against the process cwd
/// like `path.resolve` would. `None` disables the home stop.
///
/// Where the JS would throw (see [`try_resolve_project_root`]) this returns
/// the cwd.
pub fn resolve_project_root(abs_cwd: &Path, home: Option<&Path>) -> PathBuf {
    try_resolve_project_root(abs_cwd, home).unwrap_or_else(|_| absolutize(abs_cwd))
}

/// [`resolve_project_root`], but reporting the exception the JS would throw.
/// The only one reachable is the TypeError of `String(obj)` on a workspace
/// entry that is a JSON object with an own `toString` key (its value is not
/// callable, so `ToPrimitive` fails).
pub fn try_resolve_project_root(abs_cwd: &Path, home: Option<&Path>) -> Result<PathBuf, JsError> {
    let cwd = absolutize(abs_cwd);
    let home = home.map(absolutize);
    match find_workspace_root(&cwd, home.as_deref())? {
        None => Ok(cwd),
        Some((root, groups)) => workspace_project_root(&root, &cwd, &groups),
    }
}

// ---------------------------------------------------------------------------
// Finding the workspace root

/// Walks up from `start`: the home dir stops the walk, a workspace root is the
/// answer, and a `.git` entry stops it after its dir was considered (so a
/// workspace root carrying its own `.git` is still found).
fn find_workspace_root(
    start: &Path,
    home: Option<&Path>,
) -> Result<Option<(PathBuf, PatternGroups)>, JsError> {
    let mut dir = start;
    loop {
        // By text, as the JS compares (`dir === homeDir`).
        if home.is_some_and(|home| home.as_os_str() == dir.as_os_str()) {
            return Ok(None);
        }
        let files = DirFiles::new(dir);
        let groups = read_pattern_groups(&files);
        if is_workspace_root(dir, &files, &groups)? {
            return Ok(Some((dir.to_path_buf(), groups)));
        }
        if files.exists(".git") {
            return Ok(None);
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => return Ok(None),
        }
    }
}

/// A dir declaring any non-negated pattern is a root (even one normalizing to
/// ""); otherwise a marker file plus a real child under apps/ or packages/.
fn is_workspace_root(dir: &Path, files: &DirFiles, groups: &PatternGroups) -> Result<bool, JsError> {
    for pattern in groups.iter().flatten() {
        if normalize_pattern(pattern_units(pattern)?).first() != Some(&BANG) {
            return Ok(true);
        }
    }
    let has_marker = MARKER_FILES.iter().any(|name| files.exists(name));
    Ok(has_marker
        && PACKAGE_PARENTS
            .iter()
            .any(|name| has_package_child(&dir.join(name))))
}

/// Whether `parent` lists a real subdirectory (symlinks do not count, as
/// Dirent.isDirectory() says). A listing that fails anywhere counts as empty,
/// since readdirSync then throws as a whole.
fn has_package_child(parent: &Path) -> bool {
    crate::sys::list_subdirs(parent).is_ok_and(|dirs| dirs.iter().any(|name| !is_ignored_child(name)))
}

fn is_ignored_child(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') || IGNORED_CHILDREN.contains(&name.as_ref())
}

// ---------------------------------------------------------------------------
// From the workspace root to the project root

/// The package holding `cwd` inside the workspace rooted at `root`.
fn workspace_project_root(
    root: &Path,
    cwd: &Path,
    groups: &PatternGroups,
) -> Result<PathBuf, JsError> {
    let Some(rel) = RelPath::new(root, cwd) else {
        return Ok(root.to_path_buf());
    };
    // The JS checks `rel.startsWith('..')` on the string, so a first segment
    // like "..cache" also counts as "outside the workspace".
    if rel.names.is_empty() || rel.names[0].starts_with(&[DOT, DOT]) {
        return Ok(root.to_path_buf());
    }
    for group in groups {
        if is_excluded(&rel, group)? {
            return Ok(root.to_path_buf());
        }
        for pattern in group {
            if let Some(found) = root_from_pattern(root, cwd, &rel, pattern_units(pattern)?) {
                return Ok(found);
            }
        }
    }
    if rel.names.len() >= 2 && PACKAGE_PARENTS.iter().any(|p| units_eq(&rel.names[0], p)) {
        return Ok(rel.join_first(root, 2));
    }
    Ok(nearest_holding(cwd, root, &PROJECT_FILES).unwrap_or_else(|| root.to_path_buf()))
}

/// The cwd relative to the workspace root, as raw names (for joining) and as
/// JS strings (for matching; a non-UTF-8 name reads as Node's lossy decoding).
struct RelPath<'a> {
    raw: Vec<&'a OsStr>,
    names: Vec<Units>,
}

impl<'a> RelPath<'a> {
    fn new(root: &Path, cwd: &'a Path) -> Option<RelPath<'a>> {
        let rest = cwd.strip_prefix(root).ok()?;
        let raw: Vec<&OsStr> = rest
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let names = raw
            .iter()
            .map(|name| name.to_string_lossy().encode_utf16().collect())
            .collect();
        Some(RelPath { raw, names })
    }

    fn join_first(&self, root: &Path, count: usize) -> PathBuf {
        let mut out = root.to_path_buf();
        out.extend(&self.raw[..count.min(self.raw.len())]);
        out
    }
}

/// Whether a `!` pattern of the group covers `rel`. The text after `!` is
/// normalized once more, as the JS does.
fn is_excluded(rel: &RelPath, group: &[Pattern]) -> Result<bool, JsError> {
    for pattern in group {
        let normalized = normalize_pattern(pattern_units(pattern)?);
        if let Some(negated) = normalized.strip_prefix(&[BANG]) {
            if pattern_covers(&segments(normalize_pattern(negated)), &rel.names) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The root a positive pattern assigns to `rel`, if it matches.
fn root_from_pattern(root: &Path, cwd: &Path, rel: &RelPath, raw: &[u16]) -> Option<PathBuf> {
    let normalized = normalize_pattern(raw);
    if normalized.is_empty() || normalized[0] == BANG {
        return None;
    }
    let segs = segments(normalized);
    if !pattern_covers(&segs, &rel.names) {
        return None;
    }
    if !segs.iter().any(|s| is_double_star(s)) {
        return Some(rel.join_first(root, segs.len()));
    }
    // `**`: the nearest package.json below the literal prefix, else the
    // first segment after the prefix.
    let prefix_len = literal_prefix(&segs).len();
    let stop = rel.join_first(root, prefix_len);
    nearest_holding(cwd, &stop, &["package.json"])
        .or_else(|| Some(rel.join_first(root, prefix_len + 1)))
}

/// Walks up from `from` (inclusive) to `stop` (exclusive) for a dir holding
/// any of `names`.
fn nearest_holding(from: &Path, stop: &Path, names: &[&str]) -> Option<PathBuf> {
    let mut dir = from;
    while dir != stop {
        if names.iter().any(|name| crate::sys::exists(&dir.join(name))) {
            return Some(dir.to_path_buf());
        }
        dir = dir.parent()?;
    }
    None
}

#[cfg(test)]
mod tests;

/// A quote a pattern or a pnpm list item may be wrapped in.
fn is_quote(c: char) -> bool {
    c == '"' || c == '\''
}

