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

use std::sync::atomic::{AtomicU64, Ordering};

use crate::recorder::metadata::zeroed_atomics;

/// Slots of the table (a power of two): 128 KB.
const SLOTS: usize = 1 << 14;

/// Per slot: an epoch (high 32 bits), which a `notifyAll` that found waiters advances, and
/// the threads waiting since the epoch began (low 32 bits).
///
/// Why the epoch: after `notifyAll` every waiter is awake, but it reports `ObjectWaited` only
/// once it has the monitor back; Derby calls `notifyAll` on one object 100,000 times a second
/// while its waiters are on their way out, and each call was written as a wake-up of nobody
/// new. A waiter leaves the count only if no `notifyAll` has emptied it since it entered.
pub struct Waiters {
    slots: Box<[AtomicU64]>,
}

impl Default for Waiters {
    fn default() -> Self {
        Waiters {
            slots: zeroed_atomics::<u64, AtomicU64>(SLOTS),
        }
    }
}

impl Waiters {
    fn slot(&self, monitor: u32) -> &AtomicU64 {
        &self.slots[monitor as usize & (SLOTS - 1)]
    }

    /// A thread is about to wait on `monitor`: the epoch it waits in, for [`Waiters::leave`].
    pub fn enter(&self, monitor: u32) -> u32 {
        let v = self.slot(monitor).fetch_add(1, Ordering::AcqRel);
        (v >> 32) as u32
    }

    /// The wait on `monitor` that began in `epoch` returned. Not counted any more if a
    /// `notifyAll` emptied the count since (never below zero: a wait that began before the
    /// agent counted none).
    pub fn leave(&self, monitor: u32, epoch: u32) {
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                ((v >> 32) as u32 == epoch && v as u32 > 0).then_some(v - 1)
            });
    }

    /// Whether a thread may be waiting on `monitor` and not woken yet (it, or an object
    /// sharing its slot).
    pub fn any(&self, monitor: u32) -> bool {
        self.slot(monitor).load(Ordering::Acquire) as u32 != 0
    }

    /// A `notifyAll` (`signalAll`) on `monitor` woke every thread waiting on it.
    pub fn woke_all(&self, monitor: u32) {
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                Some(((v >> 32).wrapping_add(1) & 0xFFFF_FFFF) << 32)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_waiters_per_monitor() {
        let w = Waiters::default();
        assert!(!w.any(7));
        let e = w.enter(7);
        w.enter(7);
        assert!(w.any(7));
        assert!(!w.any(8));
        w.leave(7, e);
        assert!(w.any(7));
        w.leave(7, e);
        assert!(!w.any(7));
        w.leave(7, e); // a wait that began before the agent: no underflow
        assert!(!w.any(7));
        w.enter(7 + SLOTS as u32); // shares 7's slot: 7 may have a waiter
        assert!(w.any(7));
    }

    #[test]
    fn a_notify_all_wakes_every_waiter_at_once() {
        let w = Waiters::default();
        let (a, b) = (w.enter(9), w.enter(9));
        w.woke_all(9);
        assert!(!w.any(9)); // the next notifyAll wakes nobody
        let c = w.enter(9); // a new waiter, after the notifyAll
        w.leave(9, a); // the woken ones leave: the new one still counts
        w.leave(9, b);
        assert!(w.any(9));
        w.leave(9, c);
        assert!(!w.any(9));
    }
}
