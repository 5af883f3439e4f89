//! Call sites of monitor reports: the static IDs the rewriter puts into rewritten bytecode,
//! and the method and original bytecode index each stands for.
//!
//! Why: with the site passed in, a monitor report knows its own frame without a stack walk
//! (the walk was half of all the agent's time). The instrumentation engine binds the sites of
//! a rewritten class to their methods when the class is prepared (before any of its code can
//! run); the recorder only looks them up.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use jni_sys::jmethodID;

use crate::recorder::metadata::zeroed_atomics;

/// Site IDs the table holds: 2^22 (48 MB of address space, committed only as pages are
/// touched). Sites past it are reported without a location (`0` frames).
const CAPACITY: usize = 1 << 22;

/// Site ID -> (jmethodID, original bytecode index).
pub struct Sites {
    /// The rewriter draws IDs from this counter (starting at 1: 0 means "no site").
    pub counter: Arc<AtomicU32>,
    methods: Box<[AtomicUsize]>,
    bcis: Box<[AtomicU32]>,
    /// Sites found by a stack walk (a lock call whose call site was not rewritten): an
    /// insert-only open-addressing table from [`walked_key`] to the site ID, lock-free
    /// because it is looked up on every such call.
    walked_keys: Box<[AtomicUsize]>,
    walked_ids: Box<[AtomicU32]>,
    /// Site ID -> the first site ID seen for its place (0: not looked up yet), and that
    /// first ID per place: what the summaries key on ([`Sites::canonical`]).
    canon: Box<[AtomicU32]>,
    places: std::sync::Mutex<std::collections::HashMap<(u32, u32), u32>>,
    /// A guarded exit's site ID -> its enter's (the rewriter's `MethodMap::exit_enters`):
    /// a hold outside the tracker's sample found long at its exit is written at its enter.
    /// Grows with the code, read only for such long holds.
    enters: std::sync::Mutex<std::collections::HashMap<u32, u32>>,
}

/// Slots of the walked-sites table: 2^16 (1 MB of address space, committed as touched).
/// Past it (or past [`WALKED_PROBES`] probes) a call is reported without a site.
const WALKED_BITS: u32 = 16;
const WALKED_PROBES: usize = 64;

/// The table's value of a slot whose site could not be given (the site table was full).
const NO_SITE: u32 = u32::MAX;

/// One word for (method, bytecode index): a jmethodID is a user-space pointer (below 2^48 on
/// every 64-bit Linux), and a bytecode index is below 2^16. `None` for anything else.
fn walked_key(method: jmethodID, bci: u32) -> Option<usize> {
    let m = method as usize;
    (m != 0 && m >> 48 == 0 && bci < 1 << 16).then_some(m | (bci as usize) << 48)
}

impl Default for Sites {
    fn default() -> Self {
        Sites {
            counter: Arc::new(AtomicU32::new(1)),
            methods: zeroed_atomics::<usize, AtomicUsize>(CAPACITY),
            bcis: zeroed_atomics::<u32, AtomicU32>(CAPACITY),
            walked_keys: zeroed_atomics::<usize, AtomicUsize>(1 << WALKED_BITS),
            walked_ids: zeroed_atomics::<u32, AtomicU32>(1 << WALKED_BITS),
            canon: zeroed_atomics::<u32, AtomicU32>(CAPACITY),
            places: Default::default(),
            enters: Default::default(),
        }
    }
}

impl Sites {
    /// The process's one table, shared by every recording: each attach made its own, 48 MB
    /// of address space (and the pages its recording touched) kept for good, since a detached
    /// recording's context is never freed. One table also keeps the IDs of an earlier
    /// recording's rewritten code (a method entered then may still run) naming their places.
    pub fn shared() -> &'static Sites {
        static SHARED: std::sync::OnceLock<Sites> = std::sync::OnceLock::new();
        SHARED.get_or_init(Sites::default)
    }

    /// Binds site `id` to `method` at bytecode index `bci`; IDs past the table stay unknown.
    pub fn bind(&self, id: u32, method: jmethodID, bci: u32) {
        if let Some(slot) = self.methods.get(id as usize) {
            self.bcis[id as usize].store(bci, Ordering::Relaxed);
            slot.store(method as usize, Ordering::Release);
        }
    }

    /// Guarded exit site `exit` releases what its enter site `enter` took.
    pub fn bind_enter(&self, exit: u32, enter: u32) {
        self.enters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(exit, enter);
    }

    /// The enter site of guarded exit site `exit`, when known.
    pub fn enter_of(&self, exit: u32) -> Option<u32> {
        let enters = self.enters.lock().unwrap_or_else(|e| e.into_inner());
        enters.get(&exit).copied()
    }

    /// The site of `method` at `bci`, for a call found by a stack walk: one ID per place, drawn
    /// from the rewriter's counter (0: none, the tables are full). Lock-free: the first
    /// thread to see a place draws its ID; a thread that finds the place being numbered that
    /// very moment waits a few hundred spins at most (the winner's window is one atomic add
    /// and three stores), then draws an ID of its own for the place rather than wait for a
    /// thread that may have been descheduled: a second ID of one place, which the summaries
    /// count as the first ([`Sites::canonical`]). It once went on without a site, and the
    /// summaries dropped the call: a program's own AQS lock taken by six threads at once lost
    /// one hold of 33 in a run in three (a winner preempted on a 2-core machine).
    pub fn intern(&self, method: jmethodID, bci: u32) -> u32 {
        let Some(key) = walked_key(method, bci) else {
            return 0;
        };
        let mask = (1usize << WALKED_BITS) - 1;
        let mut i =
            ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - WALKED_BITS)) as usize;
        for _ in 0..WALKED_PROBES {
            let k = self.walked_keys[i].load(Ordering::Acquire);
            let k = if k == 0 {
                match self.walked_keys[i].compare_exchange(
                    0,
                    key,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        let id = self.counter.fetch_add(1, Ordering::Relaxed);
                        if (id as usize) >= CAPACITY {
                            self.walked_ids[i].store(NO_SITE, Ordering::Release);
                            return 0;
                        }
                        self.bind(id, method, bci);
                        self.walked_ids[i].store(id, Ordering::Release);
                        return id;
                    }
                    Err(other) => other,
                }
            } else {
                k
            };
            if k == key {
                for _ in 0..512 {
                    match self.walked_ids[i].load(Ordering::Acquire) {
                        0 => std::hint::spin_loop(),
                        NO_SITE => return 0,
                        id => return id,
                    }
                }
                return self.alias(method, bci);
            }
            i = (i + 1) & mask;
        }
        0
    }

    /// The site ID the summaries count site `id` under: the first one seen for its place
    /// (`place`: the format's method ID and bytecode index of a site, `None` while it is not
    /// bound). One place can have several IDs: an attach hooks the JDK's lock methods before
    /// it rewrites the application's classes, so a lock call run meanwhile names its site by a
    /// stack walk, and the rewritten call site then passes the rewriter's ID for the same
    /// place; a frame still running a method's version from before a retransformation (an
    /// obsolete method, another jmethodID) walks to yet another. Keyed by ID, a thread's
    /// interval had two lines of one key, and a hold of a lock with a row of its own under
    /// one ID could be in the row of other locks under the other (orca check: a `LockHolds`
    /// line that does not count its `LockHold`). One atomic load once the ID was looked up.
    pub fn canonical(&self, id: u32, place: impl FnOnce(u32) -> Option<(u32, u32)>) -> u32 {
        let Some(slot) = self.canon.get(id as usize) else {
            return id;
        };
        let c = slot.load(Ordering::Relaxed);
        if c != 0 {
            return c;
        }
        let Some(p) = place(id) else {
            return id;
        };
        let c = *self
            .places
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(p)
            .or_insert(id);
        slot.store(c, Ordering::Relaxed);
        c
    }

    /// A further ID for a place whose first is being drawn by another thread (see
    /// [`Sites::intern`]); 0 when the table is full.
    fn alias(&self, method: jmethodID, bci: u32) -> u32 {
        let id = self.counter.fetch_add(1, Ordering::Relaxed);
        if (id as usize) >= CAPACITY {
            return 0;
        }
        self.bind(id, method, bci);
        id
    }

    /// The method and original bytecode index of a site; `None` when unknown.
    pub fn get(&self, site: u32) -> Option<(jmethodID, u32)> {
        let m = self.methods.get(site as usize)?.load(Ordering::Acquire);
        (m != 0).then(|| {
            (
                m as jmethodID,
                self.bcis[site as usize].load(Ordering::Relaxed),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recording_has_the_one_table() {
        // An attach after a detach finds the places the earlier recording numbered (and
        // makes no second table of 48 MB).
        let a = Sites::shared();
        let id = a.intern(0x5000 as jmethodID, 7);
        assert!(std::ptr::eq(a, Sites::shared()));
        assert_eq!(Sites::shared().intern(0x5000 as jmethodID, 7), id);
    }

    #[test]
    fn the_ids_of_one_place_count_as_the_first() {
        // A walked ID (3) and the rewriter's (9) for one place, and another place (4); an ID
        // not bound yet is itself, and looked up again later.
        let sites = Sites::default();
        let place = |id: u32| match id {
            3 | 9 => Some((0x11, 14)),
            4 => Some((0x11, 20)),
            _ => None,
        };
        assert_eq!(sites.canonical(3, place), 3);
        assert_eq!(sites.canonical(9, place), 3);
        assert_eq!(sites.canonical(4, place), 4);
        assert_eq!(sites.canonical(12, place), 12);
        assert_eq!(sites.canonical(12, |_| Some((0x11, 20))), 4);
        // Looked up once: the answer is kept.
        assert_eq!(sites.canonical(9, |_| None), 3);
        assert_eq!(sites.canonical(u32::MAX, place), u32::MAX);
    }

    #[test]
    fn one_site_per_place_under_contention() {
        let sites = Arc::new(Sites::default());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let s = sites.clone();
                std::thread::spawn(move || {
                    (1..5000usize)
                        .map(|k| s.intern((k * 8) as jmethodID, (k % 7) as u32))
                        .collect::<Vec<u32>>()
                })
            })
            .collect();
        let results: Vec<Vec<u32>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for k in 0..results[0].len() {
            let ids: Vec<u32> = results.iter().map(|r| r[k]).collect();
            // Every thread gets a site; one that met the place being numbered may have drawn
            // another ID for it, bound to the same place.
            for &id in &ids {
                assert_ne!(id, 0, "place {k}: no site in {ids:?}");
                let (m, bci) = sites.get(id).unwrap();
                assert_eq!((m as usize, bci), ((k + 1) * 8, ((k + 1) % 7) as u32));
            }
        }
        // Same method, another index: another site; a bci past 16 bits: none.
        let a = sites.intern(8 as jmethodID, 100);
        assert!(a != 0 && a != sites.intern(8 as jmethodID, 101));
        assert_eq!(sites.intern(8 as jmethodID, 100), a);
        assert_eq!(sites.intern(8 as jmethodID, 1 << 16), 0);
    }

    #[test]
    fn a_place_whose_first_id_is_never_published_still_gets_a_site() {
        // The winner took the slot and was descheduled before it stored its ID: the next
        // thread gets an ID of its own for the place, which the summaries count as one.
        let sites = Sites::default();
        let (m, bci) = (0x7000 as jmethodID, 12);
        let key = walked_key(m, bci).unwrap();
        let i = ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - WALKED_BITS)) as usize;
        sites.walked_keys[i].store(key, Ordering::Release);
        let id = sites.intern(m, bci);
        assert_ne!(id, 0);
        assert_eq!(sites.get(id), Some((m, bci)));
        let place = |id: u32| sites.get(id).map(|(m, b)| (m as u32, b));
        let first = sites.canonical(id, place);
        let again = sites.intern(m, bci);
        assert_eq!(sites.canonical(again, place), first);
    }
}
