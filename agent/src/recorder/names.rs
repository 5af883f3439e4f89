//! The class of each object a contention, wait, notify, park, condition or j.u.c. lock line
//! names, and (in instrumentation mode) of each monitor and lock the tracker sees locked, which
//! summary lines name, queued once per object as an `ObjectClass` line (docs/FORMAT.md), so that the tools
//! can say `HashMap@6404CC3C` where the log says `6404CC3C`. The writer keeps each one back
//! until a line it writes names the object (`writer.rs`, `Classes`): most objects named here
//! end up in no line.
//!
//! Which objects were named is kept in a fixed table of identity hashes, probed without a
//! lock: the common case (an object named already) costs a few atomic loads and one JNI
//! `IsSameObject` (against a weak reference to the first object named with that hash, to tell
//! two objects that share one hash apart) on the event path, never a lock that two threads
//! of the program could contend for. When the table is
//! full, later objects stay unnamed (the tools then print the bare hash) and the agent says so
//! once.
//!
//! The monitors and locks the tracker sees taken may fill at most half of the table: a program
//! that locks a fresh object per row (Derby) names that many within seconds, and the objects
//! of its contentions, waits and notifies, which the report names line by line, would then go
//! unnamed for the rest of the run, however long.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use jni_sys::jobject;

use super::clock::now_nanos;
use super::writer::{EventRecord, Extra, Frames};
use super::Recorder;
use crate::jvmti::Jni;
use orca_format::EventKind;

/// Objects named at most (a power of two): a program that contends on more distinct objects
/// than this gets the first ones named.
const SLOTS: usize = 1 << 16;
/// Slots tried per monitor the tracker sees taken before it is left unnamed: cheap on the
/// path of every fresh monitor.
const PROBES: usize = 32;
/// Slots tried per object of an event (contention, wait, notify, park, j.u.c. lock), which
/// costs a stack walk anyway: with the tracker's monitors in half of the table, linear
/// probing's runs make 32 too few once events have filled part of the rest (388 of 20,000
/// objects were left unnamed at 80%).
const EVENT_PROBES: usize = 1024;

static NAMED: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];
/// Per slot of [`NAMED`]: a weak global reference to the object first named with the slot's
/// hash (0 until its thread made it), to tell another object with the same hash from it.
static FIRST: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Per slot of [`NAMED`]: whether a second object with the slot's hash was named.
static SHARED: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static FULL: AtomicBool = AtomicBool::new(false);
/// Slots taken by [`name_tracked`], at most [`TRACKED_SLOTS`].
static TRACKED: AtomicUsize = AtomicUsize::new(0);
const TRACKED_SLOTS: usize = SLOTS / 2;
static TRACKED_FULL: AtomicBool = AtomicBool::new(false);

/// What [`claim`] found for a hash.
enum Claim {
    /// The hash is new: this call took slot `.0`.
    New(usize),
    /// The hash was named already, in slot `.0`.
    Named(usize),
    /// No room left.
    Full,
}

/// Finds `hash`'s slot, or takes one for it.
fn claim(hash: u32, probes: usize) -> Claim {
    claim_in(&NAMED, &FULL, hash, probes)
}

/// [`claim`] in `table`, whose [`FULL`] is `full`. Once the table is full, a hash probes at
/// most [`PROBES`] slots, however many it was given: with every slot taken, each new object of
/// an event would otherwise scan [`EVENT_PROBES`] slots (4 KB) before it is left unnamed. A
/// program that parks on a fresh object per task (an executor's `FutureTask`) fills the table
/// within seconds and then has millions of such objects (2.5% of `ExecutorWork`'s samples on
/// JDK 25). An object named already but further than that from its hash's first slot is then
/// taken for a new one: its class line was written when it was named.
fn claim_in(table: &[AtomicU32], full: &AtomicBool, hash: u32, probes: usize) -> Claim {
    let probes = if full.load(Ordering::Relaxed) {
        probes.min(PROBES)
    } else {
        probes
    };
    // Identity hashes are spread already; the multiplication spreads sequential ones.
    let start = (hash.wrapping_mul(0x9E37_79B9) >> 16) as usize;
    for i in 0..probes {
        let s = (start + i) & (table.len() - 1);
        let slot = &table[s];
        match slot.load(Ordering::Relaxed) {
            h if h == hash => return Claim::Named(s),
            0 => match slot.compare_exchange(0, hash, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Claim::New(s),
                Err(h) if h == hash => return Claim::Named(s),
                Err(_) => continue,
            },
            _ => continue,
        }
    }
    if !full.swap(true, Ordering::Relaxed) {
        crate::say!(
            "orca: more objects than the agent names ({}); the classes of later ones are not written (their IDs still are)",
            table.len()
        );
    }
    Claim::Full
}

/// A monitor or lock the tracker saw taken (the tracker's `name`): named as
/// [`name_object`] names, while such objects hold fewer than [`TRACKED_SLOTS`] of the table.
/// False once they fill their share (or the table is full): the tracker stops asking.
pub fn name_tracked(rec: &Recorder, jni: Jni, obj: jobject, hash: u32) -> bool {
    if TRACKED.load(Ordering::Relaxed) >= TRACKED_SLOTS {
        if !TRACKED_FULL.swap(true, Ordering::Relaxed) {
            crate::say!(
                "orca: more monitors and locks taken than the agent names ({TRACKED_SLOTS}); the classes of later ones are not written (their IDs still are; objects of contentions, waits and notifies are still named)"
            );
        }
        return false;
    }
    if name(rec, jni, obj, hash, PROBES) {
        TRACKED.fetch_add(1, Ordering::Relaxed);
    }
    !FULL.load(Ordering::Relaxed)
}

/// Writes `obj`'s class as an `ObjectClass` line the first time `hash` (its ID in the log:
/// its identity hash) is seen, and once more when another object is seen with the same
/// `hash`: two objects then share one ID in the log, and the second line says so (both
/// classes; docs/FORMAT.md, "Object classes"). Only the objects named here are compared:
/// those of contentions, waits, notifies, parks, j.u.c. locks and threads, and the monitors
/// and locks the tracker names when a thread takes one it has not named lately (its own
/// small cache of hashes decides, so an object whose hash is in that cache is not compared
/// again). `obj` must be a valid reference of the current thread; 0 (unknown) is skipped.
pub fn name_object(rec: &Recorder, jni: Jni, obj: jobject, hash: u32) {
    name(rec, jni, obj, hash, EVENT_PROBES);
}

/// [`name_object`]; whether `hash` took a slot of its own.
fn name(rec: &Recorder, jni: Jni, obj: jobject, hash: u32, probes: usize) -> bool {
    if hash == 0 || obj.is_null() {
        return false;
    }
    let new = match claim(hash, probes) {
        Claim::New(s) => {
            let weak = jni.new_weak_global_ref(obj);
            FIRST[s].store(weak as usize, Ordering::Release);
            true
        }
        Claim::Named(s) => {
            // One IsSameObject per naming of an object named already (no safepoint, no lock).
            let first = FIRST[s].load(Ordering::Acquire);
            if first == 0
                || SHARED[s].load(Ordering::Relaxed)
                || jni.is_same_object(obj, first as jobject)
                || SHARED[s].swap(true, Ordering::Relaxed)
            {
                return false;
            }
            false
        }
        Claim::Full => return false,
    };
    write_class(rec, jni, obj, hash);
    new
}

/// The `ObjectClass` line of `obj`, named `hash`.
fn write_class(rec: &Recorder, jni: Jni, obj: jobject, hash: u32) {
    let class = jni.object_class(obj);
    if class.is_null() {
        return;
    }
    let sig = rec.jvmti.class_signature(class);
    jni.delete_local_ref(class);
    let Ok(sig) = sig else { return };
    rec.log.push(EventRecord {
        nanos: now_nanos(),
        kind: EventKind::ObjectClass,
        thread: 0,
        object: hash,
        owner: 0,
        extra: Extra::Class(sig.into()),
        frames: Frames::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash whose first slot in a table of `len` slots is `slot` (claim's spreading).
    fn hash_at(slot: usize, len: usize) -> u32 {
        (1..u32::MAX)
            .find(|h| (h.wrapping_mul(0x9E37_79B9) >> 16) as usize & (len - 1) == slot)
            .unwrap()
    }

    #[test]
    fn a_full_table_probes_no_further_than_the_trackers_share() {
        const LEN: usize = 4096;
        let table: Vec<AtomicU32> = (0..LEN).map(|_| AtomicU32::new(0)).collect();
        let full = AtomicBool::new(false);
        // Every slot but the last taken: an event's object still finds the free one 4,000
        // slots on while the table is not full.
        for (s, slot) in table.iter().enumerate().take(LEN - 1) {
            slot.store(u32::MAX - s as u32, Ordering::Relaxed);
        }
        let far = hash_at(0, LEN);
        assert!(matches!(claim_in(&table, &full, far, LEN), Claim::New(s) if s == LEN - 1));
        assert!(!full.load(Ordering::Relaxed));
        // Now full: a new hash is refused, and says so.
        let new = hash_at(7, LEN);
        assert!(matches!(claim_in(&table, &full, new, LEN), Claim::Full));
        assert!(full.load(Ordering::Relaxed));
        // Full: a hash named near its first slot is still found; one named further away than
        // PROBES (`far`, 4,095 slots on) is not looked for, however many probes were asked.
        let near_start = hash_at(5, LEN);
        table[6].store(near_start, Ordering::Relaxed);
        assert!(matches!(
            claim_in(&table, &full, near_start, LEN),
            Claim::Named(6)
        ));
        assert!(matches!(claim_in(&table, &full, far, LEN), Claim::Full));
    }
}
