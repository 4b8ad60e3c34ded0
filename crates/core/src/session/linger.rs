//! A value kept for reuse while it is being used, and dropped by a
//! background thread once it has not been for a while.
//!
//! The store keeps the files of the session it appended to last open, so a
//! burst of appends skips opening and closing them. Open files have costs a
//! caller can see, though: a file system with a file open for writing cannot
//! be remounted read-only or unmounted, and a deleted journal keeps its disk
//! space. So nothing is held longer than `idle` after its last use, even when
//! the process makes no further call: one thread for the whole process wakes
//! every `TICK` while anything is held, and exits when nothing is.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// How often the reaper looks; the longest a value outlives its `idle` time.
const TICK: Duration = Duration::from_millis(50);

pub struct Lingering<T: Send + 'static> {
    shared: Arc<Shared<T>>,
    idle: Duration,
}

struct Shared<T> {
    slot: Mutex<Option<(T, Instant, Duration)>>,
    /// Whether the reaper's list holds this slot. Read and written only with
    /// `slot` locked, so a value put in while the reaper lets go of an empty
    /// slot is never left unwatched.
    watched: AtomicBool,
}

impl<T: Send + 'static> Lingering<T> {
    /// Values put in are dropped `idle` after their last use; a zero `idle`
    /// keeps nothing.
    pub fn new(idle: Duration) -> Lingering<T> {
        Lingering { shared: Arc::new(Shared { slot: Mutex::new(None), watched: AtomicBool::new(false) }), idle }
    }

    /// The value, if one is held; the caller owns it until it puts it back.
    pub fn take(&self) -> Option<T> {
        lock(&self.shared.slot).take().map(|(value, _, _)| value)
    }

    /// Holds `value` for the next `take`, for at most `idle` from now.
    pub fn put(&self, value: T) {
        if self.idle.is_zero() {
            return;
        }
        let start_watching = {
            let mut slot = lock(&self.shared.slot);
            *slot = Some((value, Instant::now(), self.idle));
            !self.shared.watched.swap(true, Ordering::Relaxed)
        };
        // The slot's lock is released first: the reaper takes the list's
        // lock, then a slot's, and taking them the other way round here
        // could deadlock with it.
        if start_watching {
            let weak: Weak<dyn Expire> = Arc::downgrade(&self.shared) as Weak<dyn Expire>;
            watch(weak);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the slot leaves nothing half-done in it.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

trait Expire: Send + Sync {
    /// Drops the value if it has been idle at `now` (whatever its age when
    /// `now` is `None`); false once the slot is empty (the reaper stops
    /// watching it).
    fn expire(&self, now: Option<Instant>) -> bool;
}

impl<T: Send> Expire for Shared<T> {
    fn expire(&self, now: Option<Instant>) -> bool {
        let mut slot = lock(&self.slot);
        if slot.as_ref().is_some_and(|(_, used, idle)| now.is_none_or(|now| now.duration_since(*used) >= *idle)) {
            *slot = None;
        }
        let held = slot.is_some();
        if !held {
            self.watched.store(false, Ordering::Relaxed);
        }
        held
    }
}

struct Reaper {
    watched: Vec<Weak<dyn Expire>>,
    running: bool,
}

static REAPER: Mutex<Reaper> = Mutex::new(Reaper { watched: Vec::new(), running: false });

fn watch(slot: Weak<dyn Expire>) {
    let mut reaper = lock(&REAPER);
    reaper.watched.push(slot);
    if reaper.running {
        return;
    }
    // If no thread can be started, nothing is held: the values are dropped
    // here, and the next `take` opens the files again.
    let spawned = std::thread::Builder::new().name("quiver-live-linger".into()).spawn(reap);
    if spawned.is_ok() {
        reaper.running = true;
    } else {
        let slots = std::mem::take(&mut reaper.watched);
        drop(reaper);
        for s in slots.iter().filter_map(Weak::upgrade) {
            s.expire(None);
        }
    }
}

fn reap() {
    loop {
        std::thread::sleep(TICK);
        let mut reaper = lock(&REAPER);
        let now = Instant::now();
        reaper.watched.retain(|w| w.upgrade().is_some_and(|s| s.expire(Some(now))));
        if reaper.watched.is_empty() {
            reaper.running = false;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts its drops, so a test sees when the reaper let go of it.
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn wait_until(what: &str, cond: impl Fn() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting until {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn linger_value_is_reused_then_dropped_when_idle() {
        let drops = Arc::new(AtomicUsize::new(0));
        let l = Lingering::new(Duration::from_millis(150));
        l.put(Counted(drops.clone()));
        let v = l.take().expect("held right after put");
        assert!(l.take().is_none(), "taken once");
        l.put(v);
        wait_until("the idle value is dropped", || drops.load(Ordering::SeqCst) == 1);
        assert!(l.take().is_none());
        // Watched again after the reaper let go of the empty slot.
        l.put(Counted(drops.clone()));
        wait_until("the second value is dropped", || drops.load(Ordering::SeqCst) == 2);
    }

    #[test]
    fn linger_use_keeps_a_value_past_its_idle_time() {
        let drops = Arc::new(AtomicUsize::new(0));
        let l = Lingering::new(Duration::from_millis(200));
        l.put(Counted(drops.clone()));
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(600) {
            let v = l.take().expect("in use, so still held");
            l.put(v);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        wait_until("dropped once unused", || drops.load(Ordering::SeqCst) == 1);
    }

    #[test]
    fn linger_zero_idle_or_dropped_owner_keeps_nothing() {
        let drops = Arc::new(AtomicUsize::new(0));
        let l = Lingering::new(Duration::ZERO);
        l.put(Counted(drops.clone()));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(l.take().is_none());
        let l = Lingering::new(Duration::from_secs(3600));
        l.put(Counted(drops.clone()));
        drop(l);
        assert_eq!(drops.load(Ordering::SeqCst), 2, "the owner's drop drops the value");
    }
}
