//! The snapshot file a store writes after an append or a flush, and the
//! sweep of staged files that writers left behind.

use super::cache::RenderFor;
use super::error::state_missing;
use super::{Store, StoreError};
use crate::project::layout;
use crate::session::snapshot_file::{self, Cached};
use crate::sys;

/// Appends between two sweeps of a store's sessions directory (a flush
/// always sweeps). A staged file is only left by a writer stopped between
/// creating it and its rename (killed, or the rename failed), so sweeps can
/// be rare, and a process that appends a few times never scans the
/// directory.
pub(super) const SWEEP_EVERY: u64 = 1024;

impl Store {
    /// Writes the snapshot file for the current state. It names the journal
    /// size the state was derived from, never a later stat: the old module's
    /// re-stat let a concurrent append be claimed by a snapshot that lacks it,
    /// and writers trusting that file then reused sequence numbers. A state
    /// keyed on no known journal size writes nothing. A snapshot only V8 can
    /// render is left for it (see [`Store::awaited_render`]).
    pub(super) fn persist_snapshot(&mut self, id: &str, by: RenderFor) -> Result<(), StoreError> {
        let session = self.sessions.get_mut(id).ok_or_else(state_missing)?;
        let d = session.derived.as_mut().ok_or_else(state_missing)?;
        if d.key.is_unknown() {
            return Ok(());
        }
        // Only appends and flushes persist, and both work on the model.
        let Cached::Model(model) = &d.snapshot else { return Err(state_missing()) };
        d.holds_host = d.holds_host && model.holds_host();
        let text = if d.holds_host { None } else { snapshot_file::render(model, d.key.size, d.next_seq) };
        let Some(text) = text else {
            session.awaits_render = Some(by);
            return Ok(());
        };
        session.awaits_render = None;
        self.write_snapshot_file(id, &text, by.guard())
    }

    /// What the snapshot file of the current state needs, when the last
    /// append or flush left it unwritten because only V8 can render its
    /// text: the snapshot holds values only V8 can stringify (`toJSON`,
    /// getters, see `Value::Host`), or nests deeper than is written without
    /// V8's own check (see [`snapshot_file::DEPTH_WITHOUT_CHECK`]). Returns
    /// `(__journalBytes, __nextSeq)`: the caller renders
    /// `JSON.stringify({ ...snapshot, __journalBytes, __nextSeq }, null, 2)`
    /// as the old module does (throwing where it throws) and hands the text
    /// to [`Store::persist_rendered`].
    pub fn awaited_render(&self, id: &str) -> Option<(i64, f64)> {
        let session = self.sessions.get(id).filter(|s| s.awaits_render.is_some())?;
        session.derived.as_ref().map(|d| (d.key.size, d.next_seq))
    }

    /// Writes `text`, V8's rendering of the snapshot of `version` (see
    /// [`Store::awaited_render`]) plus its newline, as the snapshot file.
    /// Also when the session has moved on since, which only a getter or
    /// `toJSON` run by that rendering can do by appending: the old module
    /// writes what it rendered then too, and then caches that older state,
    /// so its next call replays the journal (the file, claiming the
    /// journal's earlier size, is not trusted): this store forgets the
    /// session and does the same. A file an append left fails nothing when
    /// it cannot be written: the append's line is in.
    pub fn persist_rendered(&mut self, id: &str, version: u64, text: &str) -> Result<(), StoreError> {
        self.writable("writing a snapshot file")?;
        let id = super::safe_session_id(id)?;
        let by = match self.sessions.get_mut(id) {
            Some(s) if s.version == version => s.awaits_render.take(),
            _ => {
                self.forget_session(id);
                None
            }
        };
        match self.write_snapshot_file(id, text, by.unwrap_or(RenderFor::Flush).guard()) {
            Err(_) if by == Some(RenderFor::Append) => Ok(()),
            other => other,
        }
    }

    /// What becomes of a session whose snapshot file V8 could not render;
    /// whether its state stays. After an append, its cached state is
    /// dropped: the old module's cache then still describes the journal
    /// before the append, so its next read re-derives from the journal.
    /// After a flush, the state stays: the old module cached it when the
    /// flush read it, and returns that very state until the journal changes.
    pub fn drop_unrendered(&mut self, id: &str) -> bool {
        let Some(session) = self.sessions.get_mut(id) else { return false };
        match session.awaits_render.take() {
            Some(RenderFor::Append) => {
                session.forget();
                false
            }
            Some(RenderFor::Flush) => true,
            None => false,
        }
    }

    fn write_snapshot_file(&self, id: &str, text: &str, guard: sys::Guard) -> Result<(), StoreError> {
        let target = self.layout.snapshot_path(id);
        snapshot_file::write(&target, self.layout.staged_path(id), text, self.durable, guard)?;
        Ok(())
    }

    /// Removes the staged files writers abandoned in the sessions directory
    /// (see `sys::StagedFile::judge`: unlocked, and untouched for
    /// [`layout::STAGED_MIN_AGE`]); how many. Best effort: nothing here
    /// fails a call.
    pub fn sweep_staged(&self) -> usize {
        if self.read_only {
            return 0;
        }
        let Ok(names) = sys::list_dir(&self.root_dir) else { return 0 };
        let staged = names.iter().filter(|name| name.to_str().and_then(layout::staged_session).is_some());
        staged.filter(|name| sys::StagedFile::remove_if_abandoned(&self.root_dir.join(name), layout::STAGED_MIN_AGE)).count()
    }
}
