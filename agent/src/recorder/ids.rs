//! The format's class and thread IDs: one 32-bit ID per class and per thread for the whole
//! run, never shared (docs/FORMAT.md, "Hash").
//!
//! An ID is the object's identity hash while no other class (thread) of the run has that ID
//! already; otherwise it is the next free number from [`FIRST_FALLBACK`] up, which no HotSpot
//! identity hash reaches (they have 31 bits). Identity hashes collide by chance (a
//! 50,000-class server: one chance in two), and HotSpot's hash sequence is the same from run
//! to run, so a program that meets a collision meets it every time.
//!
//! The ID is kept in the object's JVMTI tag, with a kind bit so that ObjectFree can tell it
//! from a class loader's tag: it follows the object for as long as it lives, and every place
//! that names the object (a thread as the owner of a lock, the thread a `Thread.start`
//! starts, the thread itself) gets the same ID. IDs given are remembered for the run (4 bytes
//! each, at most one per class and thread the log names), so a collected thread's ID is
//! never given again.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use jni_sys::jobject;

use crate::jvmti::Jvmti;

/// The first ID given when the identity hash is taken: above every HotSpot identity hash.
pub const FIRST_FALLBACK: u32 = 0x8000_0000;

/// Tag bits of an object that has a class ID (in the low 32 bits).
const CLASS_TAG: i64 = 1 << 62;
/// Tag bits of an object that has a thread ID (in the low 32 bits).
const THREAD_TAG: i64 = 1 << 61;

/// Which kind of ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    Class,
    Thread,
}

impl IdKind {
    fn tag_bit(self) -> i64 {
        match self {
            IdKind::Class => CLASS_TAG,
            IdKind::Thread => THREAD_TAG,
        }
    }
}

/// Whether a tag ObjectFree reports is one of these IDs (not a class loader's tag).
pub fn is_id_tag(tag: i64) -> bool {
    tag & (CLASS_TAG | THREAD_TAG) != 0
}

/// The IDs given so far, per kind.
struct Given {
    ids: Mutex<BTreeSet<u32>>,
    next: AtomicU32,
}

impl Given {
    const fn new() -> Given {
        Given {
            ids: Mutex::new(BTreeSet::new()),
            next: AtomicU32::new(FIRST_FALLBACK),
        }
    }
}

static CLASSES: Given = Given::new();
static THREADS: Given = Given::new();

/// A test hook: `ORCA_TEST_SAME_HASH=HEX` makes every class and thread look as if its
/// identity hash were HEX, so that a test forces the collisions chance gives rarely
/// (tests/e2e/invariants.rs).
fn forced_hash() -> Option<u32> {
    static HASH: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *HASH.get_or_init(|| {
        let v = std::env::var("ORCA_TEST_SAME_HASH").ok()?;
        u32::from_str_radix(&v, 16).ok().filter(|&h| h != 0)
    })
}

/// The ID of `obj` (a `java.lang.Class` or a `java.lang.Thread`), and whether this call gave
/// it. `None` when JVMTI cannot hash the object. When JVMTI cannot tag it, its identity hash
/// (unique or not: the best left), given once.
pub fn id_of(jvmti: &Jvmti, obj: jobject, kind: IdKind) -> Option<(u32, bool)> {
    let bit = kind.tag_bit();
    let tagged = |t: i64| (t & bit != 0).then_some(t as u32);
    if let Some(id) = jvmti.tag(obj).ok().and_then(tagged) {
        return Some((id, false));
    }
    let hash = jvmti.object_hash(obj).ok()?;
    let hash = forced_hash().unwrap_or(hash);
    let given = match kind {
        IdKind::Class => &CLASSES,
        IdKind::Thread => &THREADS,
    };
    // Once per class or thread: the lock makes two threads naming a new one at once agree.
    let mut ids = given.ids.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(id) = jvmti.tag(obj).ok().and_then(tagged) {
        return Some((id, false));
    }
    let id = if hash != 0 && ids.insert(hash) {
        hash
    } else {
        loop {
            let id = given.next.fetch_add(1, Ordering::Relaxed);
            if id != 0 && ids.insert(id) {
                break id;
            }
        }
    };
    if jvmti.set_tag(obj, bit | i64::from(id)).is_err() {
        // Untaggable: the identity hash, as before unique IDs, described once.
        if id == hash {
            return Some((hash, true));
        }
        ids.remove(&id);
        return Some((hash, false));
    }
    Some((id, true))
}

/// The thread ID of `thread`, 0 when unknown (a null or unhashable object).
pub fn thread_id(jvmti: &Jvmti, thread: jobject) -> u32 {
    if thread.is_null() {
        return 0;
    }
    id_of(jvmti, thread, IdKind::Thread).map_or(0, |(id, _)| id)
}
