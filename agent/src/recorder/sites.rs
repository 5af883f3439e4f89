//! Call sites of monitor reports: the static IDs the rewriter puts into rewritten bytecode,
//! and the method and original bytecode index each stands for.
//!
//! Why: with the site passed in, a monitor report knows its own frame without a stack walk
//! (the walk was half of all the agent's time). The instrumentation engine binds the sites of
//! a rewritten class to their methods when the class is prepared (before any of its code can
//! run); the recorder only looks them up.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jni_sys::jmethodID;

use crate::recorder::metadata::zeroed_atomics;
use crate::recorder::summary::FastMap;

/// Site IDs the table holds: 2^22 (48 MB of address space, committed only as pages are
/// touched). Sites past it are reported without a location (`0` frames).
const CAPACITY: usize = 1 << 22;

/// Site ID -> (jmethodID, original bytecode index).
pub struct Sites {
    /// The rewriter draws IDs from this counter (starting at 1: 0 means "no site").
    pub counter: Arc<AtomicU32>,
    methods: Box<[AtomicUsize]>,
    bcis: Box<[AtomicU32]>,
    /// Sites found by a stack walk (a lock call whose call site was not rewritten), by
    /// (method, original bytecode index).
    walked: Mutex<FastMap<(usize, u32), u32>>,
}

impl Default for Sites {
    fn default() -> Self {
        Sites {
            counter: Arc::new(AtomicU32::new(1)),
            methods: zeroed_atomics::<usize, AtomicUsize>(CAPACITY),
            bcis: zeroed_atomics::<u32, AtomicU32>(CAPACITY),
            walked: Mutex::default(),
        }
    }
}

impl Sites {
    /// Binds site `id` to `method` at bytecode index `bci`; IDs past the table stay unknown.
    pub fn bind(&self, id: u32, method: jmethodID, bci: u32) {
        if let Some(slot) = self.methods.get(id as usize) {
            self.bcis[id as usize].store(bci, Ordering::Relaxed);
            slot.store(method as usize, Ordering::Release);
        }
    }

    /// The site of `method` at `bci`, for a call found by a stack walk: one ID per place, drawn
    /// from the rewriter's counter (0: the table is full).
    pub fn intern(&self, method: jmethodID, bci: u32) -> u32 {
        let mut walked = self.walked.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = walked.get(&(method as usize, bci)) {
            return id;
        }
        let id = self.counter.fetch_add(1, Ordering::Relaxed);
        if (id as usize) >= CAPACITY {
            return 0;
        }
        self.bind(id, method, bci);
        walked.insert((method as usize, bci), id);
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
