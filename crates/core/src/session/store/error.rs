//! What a store operation can fail with.

use crate::js::JsError;
use crate::session::host::Refusal;
use crate::sys::FsError;

#[derive(Debug)]
pub enum StoreError {
    /// The exception the old module throws: its own errors (a plain `Error`,
    /// `invalid session id: …`), or what the reducer raises on odd stored
    /// data (a `TypeError`, V8's `RangeError`).
    Js(JsError),
    Fs(FsError),
    /// The reducer ran the caller's code through the host (see
    /// [`crate::session::host::Host::ask`]), which threw the host value
    /// with this handle: the one to throw.
    HostThrew(u32),
    /// The operation needs answers from JavaScript it was not given (see
    /// [`crate::session::answers`]); nothing derived from its placeholders
    /// was kept or written. Ask, then run it again.
    Unanswered,
}

impl From<FsError> for StoreError {
    fn from(e: FsError) -> StoreError {
        StoreError::Fs(e)
    }
}

impl From<JsError> for StoreError {
    fn from(e: JsError) -> StoreError {
        StoreError::Js(e)
    }
}

/// The reducer's refusal as the store reports it.
impl From<Refusal> for StoreError {
    fn from(r: Refusal) -> StoreError {
        match r {
            Refusal::Js(e) => StoreError::Js(e),
            Refusal::Unanswered => StoreError::Unanswered,
            Refusal::Threw(handle) => StoreError::HostThrew(handle),
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Js(e) => e.fmt(f),
            StoreError::Fs(e) => e.fmt(f),
            StoreError::HostThrew(_) => f.write_str("the host threw an exception"),
            StoreError::Unanswered => f.write_str("questions for the host are open"),
        }
    }
}

/// A session's derived state was expected and is not there: a bug, reported
/// as an error rather than a panic.
pub(super) fn state_missing() -> StoreError {
    JsError::error("session state missing").into()
}
