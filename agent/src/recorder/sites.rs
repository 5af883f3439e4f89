//! Call sites of monitor reports: the static IDs the rewriter puts into rewritten bytecode,
//! and the method and original bytecode index each stands for.
//!
//! Why: with the site passed in, a monitor report knows its own frame without a stack walk
//! (the walk was half of all the agent's time). The class-load hook registers the sites of a
//! class; they are bound to the method's `jmethodID` when the class is prepared (JVMTI
//! ClassPrepare, before any of its code can run), and the pending entry is dropped then.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jni_sys::{jclass, jmethodID};
use orca_rewriter::MethodMap;

use crate::jvmti::{Jni, Jvmti};
use crate::recorder::metadata::zeroed_atomics;

/// Site IDs the table holds: 2^22 (48 MB of address space, committed only as pages are
/// touched). Sites past it are reported without a location (`0` frames).
const CAPACITY: usize = 1 << 22;

/// The sites of one method, waiting for its class to be prepared.
struct PendingMethod {
    name: String,
    descriptor: String,
    sites: Vec<(u32, u32)>,
}

/// Site ID -> (jmethodID, original bytecode index).
pub struct Sites {
    /// The rewriter draws IDs from this counter (starting at 1: 0 means "no site").
    pub counter: Arc<AtomicU32>,
    methods: Box<[AtomicUsize]>,
    bcis: Box<[AtomicU32]>,
    pending: Mutex<HashMap<(u32, String), Vec<PendingMethod>>>,
}

impl Default for Sites {
    fn default() -> Self {
        Sites {
            counter: Arc::new(AtomicU32::new(1)),
            methods: zeroed_atomics::<usize, AtomicUsize>(CAPACITY),
            bcis: zeroed_atomics::<u32, AtomicU32>(CAPACITY),
            pending: Mutex::new(HashMap::new()),
        }
    }
}

impl Sites {
    /// The class-load hook: the sites of a rewritten class, bound when it is prepared.
    pub fn register(&self, loader_hash: u32, class_name: &str, methods: &[MethodMap]) {
        let list: Vec<PendingMethod> = methods
            .iter()
            .filter(|m| !m.sites.is_empty())
            .map(|m| PendingMethod {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                sites: m.sites.clone(),
            })
            .collect();
        if list.is_empty() {
            return;
        }
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.insert((loader_hash, class_name.to_string()), list);
    }

    /// ClassPrepare: binds the sites of `class`, if it was rewritten.
    pub fn prepared(&self, jvmti: &Jvmti, jni: Jni, class: jclass) {
        if self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            return;
        }
        let Ok(sig) = jvmti.class_signature(class) else {
            return;
        };
        let Some(internal) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
            return;
        };
        let loader_hash = match jvmti.class_loader(class) {
            Ok(l) if !l.is_null() => {
                let h = jvmti.object_hash(l).unwrap_or(0);
                jni.delete_local_ref(l);
                h
            }
            _ => 0,
        };
        let Some(list) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(loader_hash, internal.to_string()))
        else {
            return;
        };
        for m in jvmti.class_methods(class).unwrap_or_default() {
            let Ok((name, descriptor)) = jvmti.method_name(m) else {
                continue;
            };
            if let Some(p) = list
                .iter()
                .find(|p| p.name == name && p.descriptor == descriptor)
            {
                for &(id, bci) in &p.sites {
                    if let Some(slot) = self.methods.get(id as usize) {
                        self.bcis[id as usize].store(bci, Ordering::Relaxed);
                        slot.store(m as usize, Ordering::Release);
                    }
                }
            }
        }
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
