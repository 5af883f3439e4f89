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
//! misses a waiter that instrumented code reported. A wake-up of a monitor whose slot only
//! another monitor's threads have waited in finds nobody ([`Waiters::wake`]); once two
//! monitors' waiters have shared a slot, a call on either may be taken for a wake-up of the
//! other's waiters (written in full, not missed). Waits the tracker does not see (the
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
    /// As `Long`, but the object's budget of written wake-ups ([`WRITTEN_PER_SECOND`]) is
    /// spent: the call is counted, and so is the wait it ends ([`Left::Counted`]).
    Over,
}

/// How a wait left the table ([`Waiters::leave`]): what the agent does with it if it was long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// Woken by a call written as an event (or by a `notifyAll`/`signalAll`, which are
    /// written whenever they may end a long wait): written in full, connected with its waker.
    Woken,
    /// Woken by a call the agent counted: over its object's budget, or one that found only
    /// recent waiters (the wait may have become long since, taking its monitor back): counted
    /// too, so that no wait written in full lacks the waker that ended it.
    Counted,
    /// Not woken by a call the agent counted or wrote (a timeout, an interrupt, a spurious
    /// wake-up): written in full while its object's budget lasts ([`Waiters::take_budget`]),
    /// else counted.
    Other,
}

/// Long waits per object (slot) and second of the monotonic clock written in full with the
/// calls that woke them; further ones, and their wake-ups, are counted (`Waits`, `Notifies`).
/// Why: a server's idle pool threads wait for work on one condition and are woken by every
/// job (Jetty on JDK 17: 530 waits of 10 to 50 ms a second, each with its `ConditionSignal`,
/// 62% of the log at 416 KB/s). A long wait is a fact a user needs, but its five hundredth
/// example a second is not: each object keeps a few with their stacks and wakers, and counts
/// the rest with their lengths. Only `notify`/`signal` and the waits they end are budgeted: a
/// `notifyAll`/`signalAll` that may end a long wait and an `unpark` of a long park are always
/// written.
pub const WRITTEN_PER_SECOND: u64 = 5;

/// Per slot (one `u64`): an epoch (bits 54..64), which a `notifyAll` that found waiters
/// advances; an overflow flag (bit 53); the sub-period (bits 35..53, the time in thirds of the
/// wait threshold, wrapping: 14.5 minutes at 10 ms) of the slot's newest bucket; the **old** waiters (bits 24..35), who
/// began three or more sub-periods before it; and three buckets of **recent** waiters (bits
/// 16..24, 8..16, 0..8), who began two, one and zero sub-periods before it.
///
/// Why the epoch: after `notifyAll` every waiter is awake, but it reports `ObjectWaited` only
/// once it has the monitor back; Derby calls `notifyAll` on one object 100,000 times a second
/// while its waiters are on their way out, and each call was written as a wake-up of nobody
/// new. A waiter leaves the count only if no `notifyAll` has emptied it since it entered.
///
/// Why the sub-periods: a wake-up is written as an event only when it may end a wait of at
/// least the threshold (`waitthreshold`), which is then written as events too; shorter waits
/// and their wake-ups are counted. A waiter that began in sub-period S (of length
/// `threshold / 3`, rounded down) has waited less than the threshold while the clock is in
/// S + 2 or earlier, so a call that finds only recent waiters is counted; one that finds an old
/// waiter (it may have waited the threshold: it has waited two sub-periods at least) is written.
/// Never a long wait's wake-up missed (whoever it woke); a short wait's wake-up written only
/// when a waiter had waited two thirds of the threshold. With one period of the threshold's
/// length instead of three sub-periods, every waiter counted as old from the first period's
/// edge after it began, however recently: on Jetty (JDK 25), whose idle pool threads wait
/// 1.4 ms on average on one condition, each edge (100 a second) made every idle thread's next
/// wake-up an event, 14 `ConditionSignal` lines per wait that was long.
///
/// The waiter and the waker both hold the monitor (the lock) when they touch a slot, so the
/// monitor orders them. A count that would pass its field's maximum is not kept: the slot is
/// flagged instead, and every wake-up on it that finds the flag is written (never a long
/// wait's wake-up missed), until a `notifyAll` empties it.
pub struct Waiters {
    slots: Box<[AtomicU64]>,
    /// Per slot: old waiters that a `notify`/`signal` written as an event has woken and that
    /// have not returned yet. Why: such a call wakes the oldest waiter (HotSpot's wait sets and
    /// AQS's condition queues are first in, first out), but it stays counted until it has its
    /// monitor (lock) back, which on a loaded server takes milliseconds; every call in between
    /// found an old waiter and was written (Jetty on JDK 25: 203,000 `ConditionSignal` lines
    /// in 2 minutes for 14,600 long waits). The call takes it out of the old waiters at once,
    /// and the next old waiter to return takes it out of here instead.
    /// Three counts of [`WOKEN_BITS`] bits, by the call that took the waiter out: written
    /// ([`Left::Woken`]), counted over the budget, and counted because it found only recent
    /// waiters (both [`Left::Counted`]). Why the last: a `notify`/`signal` that finds only
    /// waits shorter than the threshold is counted, and the wait it woke can still become
    /// long while its thread takes the monitor (lock) back; written then, it had no waker in
    /// the log, and `orca report` said no notify had come (ProdCons: "a timeout ended it" of a
    /// plain `await()`). The call takes the oldest recent waiter out, so that the wait, long
    /// or not, is counted with the call that woke it.
    woken: Box<[AtomicU64]>,
    /// Per slot: bit `e % 64` set when the `notifyAll`/`signalAll` (or `release`) that moved
    /// the slot's epoch to `e` was counted (it found only recent waiters): the waits it woke
    /// are counted with it, long or not ([`Left::Counted`]), as a `notify`'s are.
    bumps: Box<[AtomicU64]>,
    /// Per slot: the second of the monotonic clock (bits 32..64) and the long waits written in
    /// it (bits 0..32), against [`WRITTEN_PER_SECOND`].
    budget: Box<[AtomicU64]>,
    /// Per slot of a thread ID: the thread parked there (bits 32..64) and when it began, in
    /// milliseconds of the monotonic clock (bits 0..32, wrapping); 0: none.
    parked: Box<[AtomicU64]>,
    /// Per slot: the identity hash of the one monitor (condition) whose threads have waited
    /// in it, [`MIXED`] once another's have too, 0 before any. Why: a program that calls
    /// `notifyAll` on many objects (Derby, at each release of a page latch) soon hits a
    /// waiter's slot with another object's call, which took the waiter's count for its own:
    /// it was written as the wake-up, and the real one, which then found the slot emptied,
    /// was counted as waking nobody. It only goes from 0 to a monitor to [`MIXED`], never
    /// back, so that it never names one monitor while another's waiter is counted (see
    /// [`Waiters::wake`]).
    owners: Box<[AtomicU64]>,
    /// `waitthreshold` in nanoseconds (0: every wake-up of a waiter is [`Found::Long`]).
    threshold: u64,
}

/// [`Waiters::owners`]: the threads of more than one monitor have waited in the slot.
const MIXED: u64 = u64::MAX;

/// Bits of each count in [`Waiters::woken`]: written, counted over the budget, counted short.
const WOKEN_BITS: u32 = 21;
const WOKEN_MASK: u64 = (1 << WOKEN_BITS) - 1;
/// The counts' units in [`Waiters::woken`].
const WOKEN_WRITTEN: u64 = 1;
const WOKEN_OVER: u64 = 1 << WOKEN_BITS;
const WOKEN_SHORT: u64 = 1 << (2 * WOKEN_BITS);

impl Default for Waiters {
    fn default() -> Self {
        Waiters::new(0)
    }
}

const EPOCH: u32 = 54;
const EPOCH_MASK: u64 = 0x3FF;
const OVER: u64 = 1 << 53;
const GEN: u32 = 35;
const GEN_MASK: u64 = 0x3FFFF;
const OLD: u32 = 24;
const OLD_MAX: u64 = 0x7FF;
/// The recent buckets: waiters that began 0, 1 and 2 sub-periods before the slot's newest.
const RECENT: u32 = 3;
const BUCKET_MAX: u64 = 0xFF;
/// Bits of the counts (old and recent).
const COUNTS: u64 = (1 << GEN) - 1;

/// A slot's fields, unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    epoch: u64,
    over: bool,
    gen: u64,
    old: u64,
    /// `recent[i]`: waiters that began `i` sub-periods before `gen`.
    recent: [u64; RECENT as usize],
}

impl Slot {
    fn of(v: u64) -> Slot {
        Slot {
            epoch: (v >> EPOCH) & EPOCH_MASK,
            over: v & OVER != 0,
            gen: (v >> GEN) & GEN_MASK,
            old: (v >> OLD) & OLD_MAX,
            recent: [
                v & BUCKET_MAX,
                (v >> 8) & BUCKET_MAX,
                (v >> 16) & BUCKET_MAX,
            ],
        }
    }

    fn pack(&self) -> u64 {
        (self.epoch << EPOCH)
            | if self.over { OVER } else { 0 }
            | (self.gen << GEN)
            | (self.old << OLD)
            | (self.recent[2] << 16)
            | (self.recent[1] << 8)
            | self.recent[0]
    }

    fn any(&self) -> bool {
        self.over || self.old > 0 || self.recent.iter().any(|&n| n > 0)
    }

    /// How many sub-periods `gen` is before the slot's newest.
    fn age(&self, gen: u64) -> u64 {
        self.gen.wrapping_sub(gen) & GEN_MASK
    }

    /// Moves the newest bucket on to `gen`: waiters of buckets that become three or more
    /// sub-periods old join the old ones. Any other sub-period than the slot's counts as
    /// later (a clock read older than the slot's, by a thread locking another object that
    /// shares the slot, makes every waiter old: more wake-ups written, none missed). The
    /// sub-period wraps, so a slot untouched for a multiple of its range, give or take two
    /// sub-periods, takes its waiters for recent ones.
    fn advance(&mut self, gen: u64) {
        let ahead = gen.wrapping_sub(self.gen) & GEN_MASK;
        if ahead == 0 {
            return;
        }
        let mut recent = [0; RECENT as usize];
        for (i, n) in self.recent.into_iter().enumerate() {
            let to = i as u64 + ahead;
            if to < RECENT as u64 {
                recent[to as usize] = n;
            } else {
                self.add_old(n);
            }
        }
        self.recent = recent;
        self.gen = gen;
    }

    fn add_old(&mut self, n: u64) {
        let sum = self.old + n;
        if sum > OLD_MAX {
            self.over = true;
        }
        self.old = sum.min(OLD_MAX);
    }

    /// A waiter that began in `gen` (already advanced to, or before it).
    fn add(&mut self, gen: u64) {
        match self.age(gen) {
            a if a < RECENT as u64 => {
                let n = &mut self.recent[a as usize];
                if *n == BUCKET_MAX {
                    self.over = true;
                } else {
                    *n += 1;
                }
            }
            _ => self.add_old(1),
        }
    }

    /// Takes out a waiter that began in `gen`: from its bucket, else from the old ones, else
    /// from any recent bucket (a bucket's count may have gone to another waiter that a
    /// `notify` took out as old). `false`: none counted.
    fn remove(&mut self, gen: u64) -> bool {
        let a = self.age(gen);
        if a < RECENT as u64 && self.recent[a as usize] > 0 {
            self.recent[a as usize] -= 1;
        } else if self.old > 0 {
            self.old -= 1;
        } else if let Some(n) = self.recent.iter_mut().rev().find(|n| **n > 0) {
            *n -= 1;
        } else {
            return false;
        }
        true
    }
}

/// [`Waiters::table`]: what the tracker needs to read the waiters' slots itself.
#[derive(Clone, Copy, Debug)]
pub struct WaiterTable {
    pub slots: u64,
    pub mask: u32,
    pub busy: u64,
}

impl Waiters {
    /// An empty table for wait threshold `threshold` (nanoseconds).
    pub fn new(threshold: u64) -> Waiters {
        Waiters {
            slots: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            woken: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            bumps: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            budget: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            parked: zeroed_atomics::<u64, AtomicU64>(PARK_SLOTS),
            owners: zeroed_atomics::<u64, AtomicU64>(SLOTS),
            threshold,
        }
    }

    fn slot(&self, monitor: u32) -> &AtomicU64 {
        &self.slots[monitor as usize & (SLOTS - 1)]
    }

    /// The sub-period of `nanos`: a third of the threshold. With no threshold always 0: every
    /// waiter stays recent, and every call that finds one is [`Found::Long`] (a waiter taken
    /// for an old one would be taken out of the count by the call that finds it, with no
    /// woken count to return to, and then its leaving would take out another waiter's).
    fn generation(&self, nanos: u64) -> u64 {
        if self.threshold == 0 {
            return 0;
        }
        (nanos / (self.threshold / 3).max(1)) & GEN_MASK
    }

    /// A thread is about to wait on `monitor` at `nanos`: the token (epoch and sub-period)
    /// it waits in, for [`Waiters::leave`].
    pub fn enter(&self, monitor: u32, nanos: u64) -> u32 {
        let me = monitor as u64;
        let _ = self.owners[monitor as usize & (SLOTS - 1)].fetch_update(
            Ordering::AcqRel,
            Ordering::Acquire,
            |o| match o {
                0 => Some(me),
                o if o == me || o == MIXED => None,
                _ => Some(MIXED),
            },
        );
        let gen = self.generation(nanos);
        let v = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let mut s = Slot::of(v);
                s.advance(gen);
                s.add(gen);
                Some(s.pack())
            })
            .unwrap_or(0);
        ((Slot::of(v).epoch << 18) | gen) as u32
    }

    /// The wait on `monitor` that began with `token` returned: how it left. Not counted any
    /// more if a `notifyAll` emptied the count since (never below zero: a wait that began
    /// before the agent counted none).
    pub fn leave(&self, monitor: u32, token: u32) -> Left {
        let (epoch, gen) = ((token >> 18) as u64, token as u64 & GEN_MASK);
        let at = monitor as usize & (SLOTS - 1);
        let slot = self.slot(monitor);
        let s = Slot::of(slot.load(Ordering::Acquire));
        if s.epoch != epoch {
            // A `notifyAll` woke it: the first after it began, whether written or counted.
            let bump = (epoch + 1) & EPOCH_MASK;
            let since = s.epoch.wrapping_sub(epoch) & EPOCH_MASK;
            let counted =
                since <= 64 && self.bumps[at].load(Ordering::Acquire) >> (bump % 64) & 1 != 0;
            return if counted { Left::Counted } else { Left::Woken };
        }
        let a = s.age(gen);
        let woken = &self.woken[at];
        // Which calls' woken waiters this one takes for itself, in order: a recent waiter is
        // one a call that found only recent waiters may have woken; an old one, a call
        // written (or counted over the budget), which took an old waiter out.
        let recent = a < RECENT as u64 && s.recent[a as usize] > 0;
        let order: &[(u64, Left)] = if recent {
            &[(WOKEN_SHORT, Left::Counted)]
        } else {
            &[
                (WOKEN_WRITTEN, Left::Woken),
                (WOKEN_OVER, Left::Counted),
                (WOKEN_SHORT, Left::Counted),
            ]
        };
        // The oldest waiter is woken first, and is the first to return, as far as the agent
        // can tell.
        let mut left = Left::Other;
        let taken = woken.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            order
                .iter()
                .find(|(unit, _)| (w / unit) & WOKEN_MASK != 0)
                .map(|&(unit, l)| {
                    left = l;
                    w - unit
                })
        });
        if taken.is_ok() {
            return left;
        }
        let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            let mut s = Slot::of(v);
            if s.epoch != epoch || !s.remove(gen) {
                return None;
            }
            Some(s.pack())
        });
        Left::Other
    }

    /// The wait on `monitor` that began with `token` has (or may have) its entry line
    /// written before it ends (its thread writes another line meanwhile, or began what may
    /// write one): it counts as an old waiter from now on, so that the call that wakes it is
    /// written and the wait, written in full, has its waker in the log (a wait written while
    /// it was short, woken by a call counted as finding only short waits, had none, and
    /// `orca report` said no notify came).
    pub fn written_early(&self, monitor: u32, token: u32) {
        let (epoch, gen) = ((token >> 18) as u64, token as u64 & GEN_MASK);
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let mut s = Slot::of(v);
                let a = s.age(gen);
                if s.epoch != epoch || a >= RECENT as u64 || s.recent[a as usize] == 0 {
                    return None; // old already, or woken already
                }
                s.recent[a as usize] -= 1;
                s.add_old(1);
                Some(s.pack())
            });
    }

    /// One more long wait on `monitor` written at `nanos`, if its object's budget for the
    /// second allows ([`WRITTEN_PER_SECOND`]; always with no threshold).
    pub fn take_budget(&self, monitor: u32, nanos: u64) -> bool {
        if self.threshold == 0 {
            return true;
        }
        let second = nanos / 1_000_000_000;
        self.budget[monitor as usize & (SLOTS - 1)]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                if b >> 32 != second & 0xFFFF_FFFF {
                    Some((second << 32) | 1)
                } else if b & 0xFFFF_FFFF < WRITTEN_PER_SECOND {
                    Some(b + 1)
                } else {
                    None
                }
            })
            .is_ok()
    }

    /// A `notify`/`signal` (`all`: `notifyAll`/`signalAll`) on `monitor` at `nanos`: what it
    /// found. A `notifyAll` that found waiters woke every one of them at once; a `notify`
    /// that found an old waiter woke the oldest, which then counts among the woken. A slot
    /// whose waiters have all been another monitor's is left alone: nobody. (Its waiters
    /// entered holding their monitor, which orders them with this call only if it is this
    /// one; but a waiter of this monitor, ordered before the call, has made the owner this
    /// monitor or [`MIXED`] already, and it never goes back.)
    pub fn wake(&self, monitor: u32, nanos: u64, all: bool) -> Found {
        let owner = self.owners[monitor as usize & (SLOTS - 1)].load(Ordering::Acquire);
        if owner != monitor as u64 && owner != MIXED {
            return Found::Nobody;
        }
        let gen = self.generation(nanos);
        let mut found = Found::Nobody;
        let (mut short_taken, mut epoch) = (false, 0);
        let _ = self
            .slot(monitor)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let mut s = Slot::of(v);
                if !s.any() {
                    found = Found::Nobody;
                    return None;
                }
                s.advance(gen);
                found = if self.threshold == 0 || s.old > 0 || s.over {
                    Found::Long
                } else {
                    Found::Short
                };
                short_taken = false;
                if all {
                    s = Slot {
                        epoch: (s.epoch + 1) & EPOCH_MASK,
                        gen: s.gen,
                        ..Slot::of(0)
                    };
                } else if found == Found::Long {
                    // It wakes the oldest waiter, an old one (if any): not one for the next call.
                    s.old = s.old.saturating_sub(1);
                } else if owner == monitor as u64 && !s.over {
                    // Only recent waiters: it wakes the oldest of them, whose wait is counted
                    // with this call even if it becomes long ([`Waiters::woken`]). Not in a
                    // slot another monitor's waiters have shared: the waiter taken out could
                    // be theirs, and a call that then found nobody would miss a long wait.
                    if let Some(n) = s.recent.iter_mut().rev().find(|n| **n > 0) {
                        *n -= 1;
                        short_taken = true;
                    }
                }
                epoch = s.epoch;
                Some(s.pack())
            });
        let at = monitor as usize & (SLOTS - 1);
        let woken = &self.woken[at];
        if all && found != Found::Nobody {
            woken.store(0, Ordering::Release);
            let bit = 1u64 << (epoch % 64);
            if found == Found::Short && self.threshold > 0 {
                self.bumps[at].fetch_or(bit, Ordering::AcqRel);
            } else {
                self.bumps[at].fetch_and(!bit, Ordering::AcqRel);
            }
        } else if !all && found == Found::Long && self.threshold > 0 {
            if self.take_budget(monitor, nanos) {
                woken.fetch_add(WOKEN_WRITTEN, Ordering::AcqRel);
            } else {
                found = Found::Over;
                woken.fetch_add(WOKEN_OVER, Ordering::AcqRel);
            }
        } else if short_taken {
            woken.fetch_add(WOKEN_SHORT, Ordering::AcqRel);
        }
        found
    }

    /// Where the tracker reads the slots without a call into the agent: the address of the
    /// first (one `u64` per slot, indexed by the monitor's hash and the mask), the mask, and
    /// the bits that are set while a thread may be waiting ([`Waiters::any`]). The table
    /// lives as long as the agent (which is never freed).
    pub fn table(&self) -> WaiterTable {
        WaiterTable {
            slots: self.slots.as_ptr() as u64,
            mask: (SLOTS - 1) as u32,
            busy: COUNTS | OVER,
        }
    }

    /// Whether a thread may be waiting on `monitor` and not woken yet (it, or an object
    /// sharing its slot).
    pub fn any(&self, monitor: u32) -> bool {
        self.slot(monitor).load(Ordering::Acquire) & (COUNTS | OVER) != 0
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

    /// A call on an object that shares a waiter's slot is no wake-up of that waiter, until
    /// two monitors' waiters have shared the slot (then any call on it may be one).
    #[test]
    fn a_call_on_another_object_in_the_slot_wakes_nobody() {
        let w = Waiters::default();
        let other = 7 + SLOTS as u32;
        assert_eq!(w.wake(7, 0, true), Found::Nobody);
        let a = w.enter(7, 0);
        assert_eq!(w.wake(other, 0, true), Found::Nobody);
        assert_eq!(w.wake(other, 0, false), Found::Nobody);
        assert!(w.any(7)); // the waiter is still there for its own call
        assert_eq!(w.wake(7, 0, true), Found::Long);
        assert_eq!(w.leave(7, a), Left::Woken);
        // Another monitor's waiter in the slot: a call on either, or on a third, may wake.
        let b = w.enter(other, 0);
        let third = 7 + 2 * SLOTS as u32;
        assert_eq!(w.wake(third, 0, false), Found::Long);
        w.leave(other, b);
        assert_eq!(w.wake(third, 0, false), Found::Nobody); // empty
        w.enter(7, 0);
        assert_eq!(w.wake(third, 0, true), Found::Long);
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
        // What a `notify` at `at` finds of one waiter that began at `began` (a fresh table:
        // a short `notify` takes the waiter it wakes out).
        let probe = |began: u64, at: u64| {
            let w = Waiters::new(10 * ms);
            w.enter(5, began);
            w.wake(5, at, false)
        };
        assert_eq!(probe(101 * ms, 105 * ms), Found::Short); // generation 30
        assert_eq!(probe(101 * ms, 110 * ms), Found::Long); // generation 33: maybe 10 ms
        let w = Waiters::new(10 * ms);
        let a = w.enter(5, 101 * ms);
        assert_eq!(w.wake(5, 110 * ms, false), Found::Long); // wakes a
        let b = w.enter(5, 111 * ms);
        assert_eq!(w.wake(5, 112 * ms, false), Found::Short); // a was woken: b only
        assert_eq!(w.wake(5, 112 * ms, false), Found::Nobody); // b was woken too
        assert_eq!(w.leave(5, a), Left::Woken);
        assert_eq!(w.leave(5, b), Left::Counted);
        assert_eq!(w.wake(5, 112 * ms, false), Found::Nobody);
        // A long waiter makes a notifyAll long, and it empties the slot.
        w.enter(5, 120 * ms);
        assert_eq!(w.wake(5, 135 * ms, true), Found::Long);
        assert_eq!(w.wake(5, 135 * ms, true), Found::Nobody);
    }

    #[test]
    fn a_waiter_is_old_only_once_it_has_waited_two_thirds_of_the_threshold() {
        let (ms, us) = (1_000_000, 1_000);
        let probe = |began: u64, at: u64| {
            let w = Waiters::new(30 * ms); // sub-periods of 10 ms
            let a = w.enter(1, began);
            let found = w.wake(1, at, false);
            w.leave(1, a);
            assert!(!w.any(1));
            found
        };
        // Began just before an edge: a wake-up just after it finds a recent waiter (with one
        // period of the threshold's length it was old from the edge on).
        assert_eq!(probe(29_900 * us, 30_100 * us), Found::Short);
        assert_eq!(probe(29_900 * us, 49_999 * us), Found::Short); // two sub-periods later
        assert_eq!(probe(29_900 * us, 50 * ms), Found::Long); // three: maybe 30 ms
        let w = Waiters::new(30 * ms);
        // Waiters in three buckets and the old ones; each leaves its own.
        let t: Vec<u32> = [0, 12, 25, 31, 44]
            .iter()
            .map(|&m| w.enter(2, m * ms))
            .collect();
        assert_eq!(w.wake(2, 44 * ms, false), Found::Long); // the first (0 ms) is old
        for &token in &t[1..] {
            assert!(w.any(2));
            w.leave(2, token);
        }
        w.leave(2, t[0]);
        assert!(!w.any(2));
        assert_eq!(w.wake(2, 45 * ms, false), Found::Nobody);
    }

    /// A `notify`/`signal` (or `notifyAll`) that finds only recent waiters is counted, and
    /// the wait it wakes is counted with it even when it becomes long taking its monitor
    /// back (ProdCons: a plain `await()` written with no signal, "a timeout ended it").
    #[test]
    fn a_wait_woken_by_a_counted_call_is_counted_with_it() {
        let ms = 1_000_000;
        let w = Waiters::new(10 * ms);
        let a = w.enter(4, 100 * ms);
        let b = w.enter(4, 100 * ms);
        // The first wakes a, counted; b is still waiting, and a call finds it (recent still).
        assert_eq!(w.wake(4, 101 * ms, false), Found::Short);
        assert_eq!(w.wake(4, 102 * ms, false), Found::Short); // wakes b
        assert_eq!(w.wake(4, 103 * ms, false), Found::Nobody);
        assert_eq!(w.leave(4, a), Left::Counted);
        assert_eq!(w.leave(4, b), Left::Counted);
        assert!(!w.any(4));
        // One that times out is not taken for a woken one while the woken one is away...
        let a = w.enter(4, 200 * ms);
        let b = w.enter(4, 200 * ms);
        assert_eq!(w.wake(4, 201 * ms, false), Found::Short); // wakes a
        assert_eq!(w.leave(4, a), Left::Counted);
        assert_eq!(w.leave(4, b), Left::Other); // timed out
        assert!(!w.any(4));
        // A notifyAll that found only recent waiters: its waits are counted with it; one that
        // found an old waiter is written, and so are the waits it woke.
        let a = w.enter(4, 300 * ms);
        assert_eq!(w.wake(4, 301 * ms, true), Found::Short);
        let b = w.enter(4, 302 * ms);
        assert_eq!(w.wake(4, 330 * ms, true), Found::Long);
        assert_eq!(w.leave(4, a), Left::Counted);
        assert_eq!(w.leave(4, b), Left::Woken);
        // Not in a slot another monitor's waiters have shared: a call that found nobody
        // afterwards could miss a long wait of this one.
        let other = 4 + SLOTS as u32;
        let c = w.enter(other, 400 * ms);
        assert_eq!(w.wake(4, 401 * ms, false), Found::Short); // c is not this monitor's
        assert_eq!(w.wake(other, 420 * ms, false), Found::Long); // still counted: written
        assert_eq!(w.leave(other, c), Left::Woken);
    }

    /// A wait whose entry line was written early (its thread wrote another line while it
    /// waited) is an old waiter from then on: the call that wakes it is written.
    #[test]
    fn a_wait_written_early_has_its_wake_up_written() {
        let ms = 1_000_000;
        let w = Waiters::new(10 * ms);
        let a = w.enter(3, 100 * ms);
        w.written_early(3, a);
        assert_eq!(w.wake(3, 101 * ms, false), Found::Long);
        assert_eq!(w.leave(3, a), Left::Woken);
        assert!(!w.any(3));
        // Written early after a counted call woke it: nothing to move.
        let a = w.enter(3, 200 * ms);
        assert_eq!(w.wake(3, 201 * ms, false), Found::Short);
        w.written_early(3, a);
        assert!(!w.any(3));
        assert_eq!(w.leave(3, a), Left::Counted);
        assert!(!w.any(3));
    }

    #[test]
    fn long_wake_ups_past_the_budget_are_counted_with_the_waits_they_end() {
        let ms = 1_000_000;
        let w = Waiters::new(30 * ms);
        let t0 = 7_000 * ms; // the start of a second
        let tokens: Vec<u32> = (0..7).map(|_| w.enter(8, t0)).collect();
        let at = t0 + 100 * ms; // every waiter is old
        let found: Vec<Found> = (0..7).map(|_| w.wake(8, at, false)).collect();
        let written = WRITTEN_PER_SECOND as usize;
        assert!(
            found[..written].iter().all(|&f| f == Found::Long),
            "{found:?}"
        );
        assert!(
            found[written..].iter().all(|&f| f == Found::Over),
            "{found:?}"
        );
        // The waiters return in order: the first ones were woken by written calls.
        let left: Vec<Left> = tokens.iter().map(|&t| w.leave(8, t)).collect();
        assert!(
            left[..written].iter().all(|&l| l == Left::Woken),
            "{left:?}"
        );
        assert!(
            left[written..].iter().all(|&l| l == Left::Counted),
            "{left:?}"
        );
        assert!(!w.any(8));
        // The budget is spent for this second (a long wait no call woke is counted), not for
        // the next one.
        assert!(!w.take_budget(8, at));
        assert!(w.take_budget(8, t0 + 1_000 * ms));
        // A waiter that timed out leaves as not woken; a notifyAll's waiters as woken.
        let a = w.enter(9, t0);
        assert_eq!(w.leave(9, a), Left::Other);
        let a = w.enter(9, t0);
        assert_eq!(w.wake(9, at, true), Found::Long);
        assert_eq!(w.leave(9, a), Left::Woken);
        // No threshold: no budget.
        let w = Waiters::new(0);
        assert!((0..100).all(|_| w.take_budget(1, t0)));
    }

    #[test]
    fn a_full_bucket_makes_every_wake_up_long_until_a_notify_all() {
        let ms = 1_000_000;
        let w = Waiters::new(30 * ms);
        let tokens: Vec<u32> = (0..BUCKET_MAX + 1).map(|_| w.enter(3, 0)).collect();
        assert_eq!(w.wake(3, ms, false), Found::Long); // one more than its bucket holds
        for t in tokens {
            w.leave(3, t);
        }
        assert!(w.any(3)); // the flag stays: a waiter may not be counted
        assert_eq!(w.wake(3, ms, true), Found::Long);
        assert!(!w.any(3));
        assert_eq!(w.wake(3, ms, false), Found::Nobody);
    }

    #[test]
    fn a_slot_survives_a_clock_read_older_than_its_own() {
        let ms = 1_000_000;
        let w = Waiters::new(30 * ms);
        let a = w.enter(4, 100 * ms);
        // Another object in the slot, with an older clock read: every waiter is old now.
        let b = w.enter(4 + SLOTS as u32, 95 * ms);
        assert_eq!(w.wake(4, 101 * ms, false), Found::Long);
        w.leave(4, a);
        w.leave(4 + SLOTS as u32, b);
        assert!(!w.any(4));
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

    #[test]
    fn with_no_threshold_every_wake_up_of_a_waiter_is_long() {
        // A strict hand-off (PingPong): each call finds the other thread waiting, whatever
        // the time between (the stackdepth test found its notifies counted).
        let w = Waiters::new(0);
        let mut t = 5_000_000_000u64;
        let mut x = 12345u64;
        let mut a = w.enter(9, t);
        for i in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += 1000 + (x >> 40) % 300_000;
            assert_eq!(w.wake(9, t, false), Found::Long, "call {i}");
            let b = w.enter(9, t + 10);
            t += 1000 + (x >> 20) % 300_000;
            assert_eq!(w.leave(9, a), Left::Other);
            a = b;
        }
        w.leave(9, a);
        assert!(!w.any(9));
    }
}
