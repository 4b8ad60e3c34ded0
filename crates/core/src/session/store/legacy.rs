//! Journals in the legacy directory (`.impeccable-live/sessions`): read
//! where no primary journal exists, and copied forward on the first append,
//! as the old module does.

use super::append::Journal;
use super::cache::FileKey;
use super::{Store, StoreError};
use crate::sys::{self, Context, File, FsError};

impl Store {
    /// Copies the legacy journal of `id`, if there is one, into `journal`,
    /// which this append has just made (empty, and locked); everything
    /// derived from the legacy path is dropped. The copy is read as a
    /// journal is (a regular file, links followed). A copy that fails is
    /// cut back to nothing, so that the append's failure removes the file
    /// (see `Journal::drop`).
    pub(super) fn adopt_legacy_journal(&mut self, id: &str, journal: &mut Journal) -> Result<(), StoreError> {
        let legacy = self.legacy_journal_path(id);
        let from = match sys::open_regular(&legacy, sys::Links::Follow) {
            Ok(file) => file,
            // Only a journal that is not there is no journal to adopt: one
            // the open could not find but a stat can is an error, not an
            // empty history.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !sys::exists(&legacy) => return Ok(()),
            Err(e) => return Err(FsError::new(e, "copyfile", &legacy).into()),
        };
        let copied = match copy(&from, &journal.file) {
            Ok(copied) => copied,
            Err(e) => {
                let _ = journal.file.set_len(0);
                return Err(FsError::new(e, "copyfile", &legacy).into());
            }
        };
        journal.made = Some(copied);
        journal.before = FileKey::from_info(journal.path.clone(), &journal.file.info().at("fstat", &journal.path)?);
        self.sessions.remove(id);
        Ok(())
    }
}

/// Copies all of `from` to the end of `to`; how many bytes.
fn copy(from: &File, to: &File) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut copied = 0u64;
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(copied);
        }
        to.write_all(&buf[..n])?;
        copied += n as u64;
    }
}
