//! The fault seam: every file-system call the crate makes passes through
//! [`point`] first (see `sys::call`), so that a test build can make the Nth
//! call of an operation fail with a chosen errno, or stop the process right
//! before it, as SQLite's test VFS does for its I/O layer.
//!
//! Only the `faults` cargo feature compiles the seam in; without it (every
//! release build) [`point`] is an empty inline function. The feature exists
//! for the fault suite (`__test__/faults/matrix.test.mjs`), which builds a
//! separate binary with it.

#[cfg(feature = "faults")]
pub use armed::{arm, disarm, Action};

#[cfg(not(feature = "faults"))]
#[inline(always)]
pub(crate) fn point(_call: &'static str) -> std::io::Result<()> {
    Ok(())
}

#[cfg(feature = "faults")]
pub(crate) use armed::point;

#[cfg(feature = "faults")]
mod armed {
    use std::io;
    use std::sync::Mutex;

    /// What happens at the chosen call.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Action {
        /// The call fails with this errno, and is not made.
        Fail(i32),
        /// The process is killed before the call (SIGKILL on unix), as a
        /// crash or `kill -9` would stop it there.
        Crash,
    }

    struct Plan {
        /// The calls made since the plan was armed, in order.
        calls: Vec<&'static str>,
        /// 1-based index of the call that fails; `None` only records.
        at: Option<usize>,
        action: Action,
    }

    static PLAN: Mutex<Option<Plan>> = Mutex::new(None);

    fn plan() -> std::sync::MutexGuard<'static, Option<Plan>> {
        PLAN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts recording calls; the `at`th from now (1-based) then does
    /// `action`. `at: None` records without failing anything.
    pub fn arm(at: Option<usize>, action: Action) {
        *plan() = Some(Plan { calls: Vec::new(), at, action });
    }

    /// Stops, and returns the calls made since [`arm`].
    pub fn disarm() -> Vec<&'static str> {
        plan().take().map(|p| p.calls).unwrap_or_default()
    }

    pub(crate) fn point(call: &'static str) -> io::Result<()> {
        let mut guard = plan();
        let Some(plan) = guard.as_mut() else { return Ok(()) };
        plan.calls.push(call);
        if plan.at != Some(plan.calls.len()) {
            return Ok(());
        }
        match plan.action {
            Action::Fail(errno) => Err(io::Error::from_raw_os_error(errno)),
            Action::Crash => crash(),
        }
    }

    #[cfg(unix)]
    fn crash() -> ! {
        // SAFETY: signalling our own process; SIGKILL cannot be caught, so
        // nothing runs after this (no destructor, no handler), as in a crash.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        std::process::abort()
    }

    #[cfg(not(unix))]
    fn crash() -> ! {
        std::process::abort()
    }
}
