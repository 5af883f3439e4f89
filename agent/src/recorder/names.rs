//! The class of each object a contention, wait, notify, park, condition or j.u.c. lock line
//! names, and (in instrumentation mode) of each monitor and lock the tracker sees locked, which
//! summary lines name, written once per object as an `ObjectClass` line (docs/FORMAT.md), so that the tools
//! can say `HashMap@6404CC3C` where the log says `6404CC3C`.
//!
//! Which objects were named is kept in a fixed table of identity hashes, probed without a
//! lock: the common case (an object named already) costs a few atomic loads on the event
//! path, never a lock that two threads of the program could contend for. When the table is
//! full, later objects stay unnamed (the tools then print the bare hash) and the agent says so
//! once.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use jni_sys::jobject;

use super::clock::now_nanos;
use super::writer::{EventRecord, Extra, Frames};
use super::Recorder;
use crate::events::Kind;
use crate::jvmti::Jni;

/// Objects named at most (a power of two): a program that contends on more distinct objects
/// than this gets the first ones named.
const SLOTS: usize = 1 << 16;
/// Slots tried per object before it is left unnamed.
const PROBES: usize = 32;

static NAMED: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];
static FULL: AtomicBool = AtomicBool::new(false);

/// Whether `hash` is new (and now marked as named); false when it was named already, or the
/// table has no room for it.
fn claim(hash: u32) -> bool {
    // Identity hashes are spread already; the multiplication spreads sequential ones.
    let start = (hash.wrapping_mul(0x9E37_79B9) >> 16) as usize;
    for i in 0..PROBES {
        let slot = &NAMED[(start + i) & (SLOTS - 1)];
        match slot.load(Ordering::Relaxed) {
            h if h == hash => return false,
            0 => match slot.compare_exchange(0, hash, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(h) if h == hash => return false,
                Err(_) => continue,
            },
            _ => continue,
        }
    }
    if !FULL.swap(true, Ordering::Relaxed) {
        eprintln!(
            "orca: more objects than the agent names ({SLOTS}); the classes of later ones are not written (their IDs still are)"
        );
    }
    false
}

/// Whether the agent still names new objects (its table is not full).
pub fn naming() -> bool {
    !FULL.load(Ordering::Relaxed)
}

/// Writes `obj`'s class as an `ObjectClass` line the first time `hash` (its identity hash)
/// is seen. `obj` must be a valid reference of the current thread; 0 (unknown) is skipped.
pub fn name_object(rec: &Recorder, jni: Jni, obj: jobject, hash: u32) {
    if hash == 0 || obj.is_null() || !claim(hash) {
        return;
    }
    let class = jni.object_class(obj);
    if class.is_null() {
        return;
    }
    let sig = rec.jvmti.class_signature(class);
    jni.delete_local_ref(class);
    let Ok(sig) = sig else { return };
    rec.log.push(EventRecord {
        nanos: now_nanos(),
        kind: Kind::ObjectClass,
        thread: 0,
        object: hash,
        owner: 0,
        extra: Extra::Class(sig.into()),
        frames: Frames::new(),
    });
}
