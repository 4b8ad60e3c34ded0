//! One directory's files as the walk up from the cwd looks at them.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::js::json;
use crate::js::Value;

/// The files of `dir` the walk asks about, each name looked up once: the
/// pnpm and lerna files are read for their patterns and then checked again
/// as markers, and the JS pays two lookups where this pays one.
pub(super) struct DirFiles<'a> {
    dir: &'a Path,
    known: RefCell<Vec<(&'static str, bool)>>,
}

impl<'a> DirFiles<'a> {
    pub(super) fn new(dir: &'a Path) -> Self {
        DirFiles { dir, known: RefCell::new(Vec::new()) }
    }

    /// `existsSync(join(dir, name))`.
    pub(super) fn exists(&self, name: &'static str) -> bool {
        if let Some(&(_, found)) = self.known.borrow().iter().find(|(n, _)| *n == name) {
            return found;
        }
        let found = crate::sys::exists(&self.path(name));
        self.known.borrow_mut().push((name, found));
        found
    }

    /// `JSON.parse(readFileSync(p, 'utf-8'))`, `None` when unreadable or invalid.
    pub(super) fn read_json(&self, name: &'static str) -> Option<Value> {
        json::parse(&self.read_text(name)?).ok()
    }

    /// File text as `readFileSync(p, 'utf-8')` gives it (invalid UTF-8
    /// becomes U+FFFD, a BOM is kept); `None` when unreadable.
    ///
    /// Most of the files looked for are missing, and a stat finds that out
    /// for about half what a failed open costs (Linux allocates an open file
    /// before the lookup fails). The stat walks the same path the open
    /// would, so it fails wherever the open would: no answer changes.
    pub(super) fn read_text(&self, name: &'static str) -> Option<String> {
        if !self.exists(name) {
            return None;
        }
        // A regular file only, read in bounded chunks: a FIFO or device
        // named like a marker file never blocks or floods the walk.
        let mut bytes = Vec::new();
        crate::sys::read_regular(&self.path(name), crate::sys::Links::Follow, &mut bytes, crate::sys::MAX_TEXT_FILE).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `name` may hold `/`, which becomes the OS's separator.
    fn path(&self, name: &str) -> PathBuf {
        name.split('/').fold(self.dir.to_path_buf(), |path, part| path.join(part))
    }
}
