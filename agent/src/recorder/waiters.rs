//! Which monitors have a thread in `Object.wait`, as far as instrumented code shows it.
//!
//! Why: a `notify`/`notifyAll` with nobody waiting wakes nobody, and on a server or a database
//! that is nearly every one of them (Jetty notifies once per request, Derby calls `notifyAll`
//! per statement). Writing each as an event with its stack made them most of the log and a
//! stack walk apiece; now such a call is only counted per site ([`Summary::notified`]), and a
//! full event is written when a thread was waiting to be woken, which is what connects a
//! waiter with the thread and site that woke it.
//!
//! The table counts, per slot of the monitor's identity hash, the threads between their
//! `ObjectWait` and `ObjectWaited` as the tracker reports them. A waiter counts itself while
//! it holds the monitor (before `wait` releases it) and uncounts itself after `wait` took it
//! back, and a notifier holds the monitor too, so the monitor orders both: a notifier never
//! misses a waiter that instrumented code reported. Two monitors sharing a slot only make a
//! call written in full that could have been counted. Waits the tracker does not see (the
//! JDK's own code under `jdk=no`, a wait begun before the agent started) are not counted
//! (docs/FORMAT.md, `Notifies`).
//!
//! [`Summary::notified`]: crate::recorder::summary::Summary::notified

use std::sync::atomic::{AtomicU32, Ordering};

use crate::recorder::metadata::zeroed_atomics;

/// Slots of the table (a power of two): 64 KB.
const SLOTS: usize = 1 << 14;

pub struct Waiters {
    slots: Box<[AtomicU32]>,
}

impl Default for Waiters {
    fn default() -> Self {
        Waiters {
            slots: zeroed_atomics::<u32, AtomicU32>(SLOTS),
        }
    }
}

impl Waiters {
    fn slot(&self, monitor: u32) -> &AtomicU32 {
        &self.slots[monitor as usize & (SLOTS - 1)]
    }

    /// A thread is about to wait on `monitor`.
    pub fn enter(&self, monitor: u32) {
        self.slot(monitor).fetch_add(1, Ordering::AcqRel);
    }

    /// The wait on `monitor` returned (never below zero: a wait that began before the
    /// agent counted none).
    pub fn leave(&self, monitor: u32) {
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Whether a thread may be waiting on `monitor` (it, or a monitor sharing its slot).
    pub fn any(&self, monitor: u32) -> bool {
        self.slot(monitor).load(Ordering::Acquire) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_waiters_per_monitor() {
        let w = Waiters::default();
        assert!(!w.any(7));
        w.enter(7);
        w.enter(7);
        assert!(w.any(7));
        assert!(!w.any(8));
        w.leave(7);
        assert!(w.any(7));
        w.leave(7);
        assert!(!w.any(7));
        w.leave(7); // a wait that began before the agent: no underflow
        assert!(!w.any(7));
        w.enter(7 + SLOTS as u32); // shares 7's slot: 7 may have a waiter
        assert!(w.any(7));
    }
}
