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

/// Slots of the table of parked threads (a power of two): 128 KB.
const PARK_SLOTS: usize = 1 << 14;

/// What a wake-up call found on its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// No thread waiting (as far as the agent saw).
    Nobody,
    /// Waiters, none of which can have waited the threshold yet.
    Short,
    /// A waiter that may have waited the threshold (or the threshold is 0): the call is an
    /// event, so that the long wait it may end is connected with the thread and site.
    Long,
}

/// Per slot: an epoch (bits 48..64), which a `notifyAll` that found waiters advances; the
/// generation (bits 32..48, the time in units of the wait threshold) in which the slot's
/// **recent** waiters began to wait; the **old** waiters (bits 16..32), who began in an
/// earlier generation; the recent ones (bits 0..16). Counts saturate at 65,535.
///
/// Why the epoch: after `notifyAll` every waiter is awake, but it reports `ObjectWaited` only
/// once it has the monitor back; Derby calls `notifyAll` on one object 100,000 times a second
/// while its waiters are on their way out, and each call was written as a wake-up of nobody
/// new. A waiter leaves the count only if no `notifyAll` has emptied it since it entered.
///
/// Why the generations: a wake-up is written as an event only when it may end a wait of at
/// least the threshold (`waitthreshold`), which is then written as events too; shorter waits
/// and their wake-ups are counted. A waiter that began in generation G has waited less than
/// the threshold while the clock is still in G, so a call that finds only recent waiters of
/// the current generation is counted; one that finds an old waiter, or recent ones of an
/// earlier generation, is written. Never a long wait's wake-up missed (whoever it woke); a
/// short wait's wake-up written when the wait crossed a generation's edge or an old waiter
/// was still counted. The waiter and the waker both hold the monitor (the lock) when they
/// touch a slot, so the monitor orders them.
pub struct Waiters {
    slots: Box<[AtomicU64]>,
    /// Per slot: old waiters that a `notify`/`signal` written as an event has woken and that
    /// have not returned yet. Why: such a call wakes the oldest waiter (HotSpot's wait sets and
    /// AQS's condition queues are first in, first out), but it stays counted until it has its
    /// monitor (lock) back, which on a loaded server takes milliseconds; every call in between
    /// found an old waiter and was written (Jetty on JDK 25: 203,000 `ConditionSignal` lines
    /// in 2 minutes for 14,600 long waits). The call takes it out of the old waiters at once,
    /// and the next old waiter to return takes it out of here instead.
    woken: Box<[AtomicU64]>,
    /// Per slot of a thread ID: the thread parked there (bits 32..64) and when it began, in
    /// milliseconds of the monotonic clock (bits 0..32, wrapping); 0: none.
    parked: Box<[AtomicU64]>,
    /// `waitthreshold` in nanoseconds (0: every wake-up of a waiter is [`Found::Long`]).
    threshold: u64,
}

impl Default for Waiters {
    fn default() -> Self {
        Waiters::new(0)
    }
}

const EPOCH: u32 = 48;
const GEN: u32 = 32;
const OLD: u32 = 16;
const MASK: u64 = 0xFFFF;

fn field(v: u64, at: u32) -> u64 {
    (v >> at) & MASK
}

impl Waiters {
    /// An empty table for wait threshold `threshold` (nanoseconds).
    pub fn new(threshold: u64) -> Waiters {
        Waiters {
            slots: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            woken: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            parked: zeroed_atomics::<u64, AtomicU64>(PARK_SLOTS),
            threshold,
        }
    }

    fn slot(&self, monitor: u32) -> &AtomicU64 {
        &self.slots[monitor as usize & (SLOTS - 1)]
    }

    fn generation(&self, nanos: u64) -> u64 {
        nanos.checked_div(self.threshold).unwrap_or(0) & MASK
    }

    /// A thread is about to wait on `monitor` at `nanos`: the token (epoch and generation)
    /// it waits in, for [`Waiters::leave`].
    pub fn enter(&self, monitor: u32, nanos: u64) -> u32 {
        let gen = self.generation(nanos);
        let v = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let (mut old, mut recent) = (field(v, OLD), field(v, 0));
                if field(v, GEN) != gen {
                    old = (old + recent).min(MASK);
                    recent = 0;
                }
                recent = (recent + 1).min(MASK);
                Some((field(v, EPOCH) << EPOCH) | (gen << GEN) | (old << OLD) | recent)
            })
            .unwrap_or(0);
        ((field(v, EPOCH) << 16) | gen) as u32
    }

    /// The wait on `monitor` that began with `token` returned. Not counted any more if a
    /// `notifyAll` emptied the count since (never below zero: a wait that began before the
    /// agent counted none).
    pub fn leave(&self, monitor: u32, token: u32) {
        let (epoch, gen) = ((token >> 16) as u64, (token & 0xFFFF) as u64);
        let slot = self.slot(monitor);
        let v = slot.load(Ordering::Acquire);
        if field(v, EPOCH) != epoch {
            return;
        }
        if field(v, GEN) != gen || field(v, 0) == 0 {
            // An old waiter: one that a call already took out of the old ones, if any.
            let woken = &self.woken[monitor as usize & (SLOTS - 1)];
            if woken
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| w.checked_sub(1))
                .is_ok()
            {
                return;
            }
        }
        let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            if field(v, EPOCH) != epoch {
                return None;
            }
            let (old, recent) = (field(v, OLD), field(v, 0));
            let (old, recent) = if field(v, GEN) == gen && recent > 0 {
                (old, recent - 1)
            } else if old > 0 {
                (old - 1, recent)
            } else if recent > 0 {
                (old, recent - 1)
            } else {
                return None;
            };
            Some((v & !((MASK << OLD) | MASK)) | (old << OLD) | recent)
        });
    }

    /// A `notify`/`signal` (`all`: `notifyAll`/`signalAll`) on `monitor` at `nanos`: what it
    /// found. A `notifyAll` that found waiters woke every one of them at once; a `notify`
    /// that found an old waiter woke the oldest, which then counts among the woken.
    pub fn wake(&self, monitor: u32, nanos: u64, all: bool) -> Found {
        let gen = self.generation(nanos);
        let mut found = Found::Nobody;
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let (mut old, mut recent) = (field(v, OLD), field(v, 0));
                if old == 0 && recent == 0 {
                    found = Found::Nobody;
                    return None;
                }
                if field(v, GEN) != gen {
                    // The recent waiters began in an earlier period: old ones now.
                    old = (old + recent).min(MASK);
                    recent = 0;
                }
                found = if self.threshold == 0 || old > 0 {
                    Found::Long
                } else {
                    Found::Short
                };
                let mut epoch = field(v, EPOCH);
                if all {
                    epoch = (epoch + 1) & MASK;
                    (old, recent) = (0, 0);
                } else {
                    // It wakes the oldest waiter, an old one (if any): not one for the next call.
                    old = old.saturating_sub(1);
                }
                Some((epoch << EPOCH) | (gen << GEN) | (old << OLD) | recent)
            });
        let woken = &self.woken[monitor as usize & (SLOTS - 1)];
        if all && found != Found::Nobody {
            woken.store(0, Ordering::Release);
        } else if !all && found == Found::Long && self.threshold > 0 {
            woken.fetch_add(1, Ordering::AcqRel);
        }
        found
    }

    /// Whether a thread may be waiting on `monitor` and not woken yet (it, or an object
    /// sharing its slot).
    pub fn any(&self, monitor: u32) -> bool {
        self.slot(monitor).load(Ordering::Acquire) & ((MASK << OLD) | MASK) != 0
    }

    fn park_slot(&self, thread: u32) -> &AtomicU64 {
        &self.parked[thread as usize & (PARK_SLOTS - 1)]
    }

    /// Thread `thread` is about to park at `nanos` (`LockSupport.park*`).
    pub fn park(&self, thread: u32, nanos: u64) {
        let ms = (nanos / 1_000_000) as u32 as u64;
        self.park_slot(thread)
            .store(((thread as u64) << 32) | ms, Ordering::Release);
    }

    /// Thread `thread`'s park returned.
    pub fn unparked(&self, thread: u32) {
        let slot = self.park_slot(thread);
        let v = slot.load(Ordering::Acquire);
        if v >> 32 == thread as u64 && v != 0 {
            let _ = slot.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// `LockSupport.unpark(thread)` at `nanos`: what it found. Nothing orders it with the
    /// park, so a park that begins just after is [`Found::Nobody`] (it returns at once: the
    /// permit was given). A slot held by another parked thread is [`Found::Long`] (the agent
    /// cannot tell).
    pub fn unpark(&self, thread: u32, nanos: u64) -> Found {
        let v = self.park_slot(thread).load(Ordering::Acquire);
        if v == 0 {
            return Found::Nobody;
        }
        if v >> 32 != thread as u64 || self.threshold == 0 {
            return Found::Long;
        }
        let now_ms = (nanos / 1_000_000) as u32;
        let waited = now_ms.wrapping_sub(v as u32) as u64 + 1; // ms, rounded up
        if waited.saturating_mul(1_000_000) >= self.threshold {
            Found::Long
        } else {
            Found::Short
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_waiters_per_monitor() {
        let w = Waiters::default();
        assert!(!w.any(7));
        let e = w.enter(7, 0);
        w.enter(7, 0);
        assert!(w.any(7));
        assert!(!w.any(8));
        w.leave(7, e);
        assert!(w.any(7));
        w.leave(7, e);
        assert!(!w.any(7));
        w.leave(7, e); // a wait that began before the agent: no underflow
        assert!(!w.any(7));
        w.enter(7 + SLOTS as u32, 0); // shares 7's slot: 7 may have a waiter
        assert!(w.any(7));
    }

    #[test]
    fn a_notify_all_wakes_every_waiter_at_once() {
        let w = Waiters::default();
        let (a, b) = (w.enter(9, 0), w.enter(9, 0));
        assert_eq!(w.wake(9, 0, true), Found::Long); // threshold 0: every wake-up
        assert!(!w.any(9)); // the next notifyAll wakes nobody
        assert_eq!(w.wake(9, 0, true), Found::Nobody);
        let c = w.enter(9, 0); // a new waiter, after the notifyAll
        w.leave(9, a); // the woken ones leave: the new one still counts
        w.leave(9, b);
        assert!(w.any(9));
        w.leave(9, c);
        assert!(!w.any(9));
    }

    #[test]
    fn a_wake_up_is_long_once_a_waiter_may_have_waited_the_threshold() {
        let ms = 1_000_000;
        let w = Waiters::new(10 * ms);
        let a = w.enter(5, 101 * ms); // generation 10
        assert_eq!(w.wake(5, 105 * ms, false), Found::Short);
        assert_eq!(w.wake(5, 110 * ms, false), Found::Long); // generation 11: maybe 10 ms
        let b = w.enter(5, 111 * ms);
        assert_eq!(w.wake(5, 112 * ms, false), Found::Short); // a was woken: b only
        w.leave(5, a);
        assert_eq!(w.wake(5, 112 * ms, false), Found::Short); // only b, of this generation
        w.leave(5, b);
        assert_eq!(w.wake(5, 112 * ms, false), Found::Nobody);
        // A long waiter makes a notifyAll long, and it empties the slot.
        w.enter(5, 120 * ms);
        assert_eq!(w.wake(5, 135 * ms, true), Found::Long);
        assert_eq!(w.wake(5, 135 * ms, true), Found::Nobody);
    }

    #[test]
    fn a_notify_takes_the_old_waiter_it_wakes_out_at_once() {
        let ms = 1_000_000;
        let w = Waiters::new(10 * ms);
        let a = w.enter(6, 100 * ms); // old by the time of the calls below
        let b = w.enter(6, 101 * ms);
        assert_eq!(w.wake(6, 125 * ms, false), Found::Long); // wakes a (first in)
        assert_eq!(w.wake(6, 125 * ms, false), Found::Long); // wakes b
        assert_eq!(w.wake(6, 126 * ms, false), Found::Nobody); // neither is waiting now
        let c = w.enter(6, 127 * ms); // a new waiter before a and b return
        w.leave(6, a);
        w.leave(6, b);
        assert_eq!(w.wake(6, 128 * ms, false), Found::Short); // c only, of this period
        w.leave(6, c);
        assert!(!w.any(6));
        // A waiter that timed out (not woken) returns before the one a call woke: the count
        // stays right.
        let a = w.enter(6, 200 * ms);
        let b = w.enter(6, 200 * ms);
        assert_eq!(w.wake(6, 230 * ms, false), Found::Long); // wakes a
        w.leave(6, b); // b timed out
        assert_eq!(w.wake(6, 231 * ms, false), Found::Long); // a still counted: written
        w.leave(6, a);
        assert!(!w.any(6));
    }

    #[test]
    fn an_unpark_is_long_once_the_thread_may_have_parked_the_threshold() {
        let ms = 1_000_000;
        let w = Waiters::new(10 * ms);
        assert_eq!(w.unpark(3, 0), Found::Nobody);
        w.park(3, 100 * ms);
        assert_eq!(w.unpark(3, 102 * ms), Found::Short);
        assert_eq!(w.unpark(3, 109 * ms), Found::Long); // maybe 10 ms (ms resolution)
        assert_eq!(w.unpark(3 + PARK_SLOTS as u32, 101 * ms), Found::Long); // can't tell
        w.unparked(3);
        assert_eq!(w.unpark(3, 200 * ms), Found::Nobody);
        let w = Waiters::new(0);
        w.park(4, 0);
        assert_eq!(w.unpark(4, 0), Found::Long);
    }
}
