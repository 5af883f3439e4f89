//! Metadata caches: the agent's 32-bit method IDs and the set of classes already described.
//!
//! Every stack frame goes through [`IdTable::get_or_insert`], so it is a lock-free,
//! insert-only open-addressing table: one multiply and usually one load per lookup. The first
//! thread to see a method wins the slot, numbers it, and describes it (name, descriptor,
//! class, line table) right away on its own thread, while the jmethodID is surely valid;
//! the description then goes to the writer. Metadata is thus written lazily: only methods that
//! some event refers to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use jni_sys::{jclass, jmethodID, jobject};

use crate::jvmti::{Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::ids::{self, IdKind};
use crate::recorder::writer::{LogWriter, MetaRecord};
use orca_rewriter::MethodMap;

/// Slots per table: 2^20 (12 MB of address space, committed only as pages are touched).
/// Past 3/4 of it the overflow map takes over, so no ID is ever lost.
const TABLE_BITS: u32 = 20;
const MAX_PROBES: usize = 64;

/// A concurrent map from a non-zero word to a sequential non-zero `u32`.
pub struct IdTable {
    keys: Box<[AtomicUsize]>,
    values: Box<[AtomicU32]>,
    next: AtomicU32,
    overflow: Mutex<HashMap<usize, u32>>,
}

pub(crate) fn zeroed_atomics<T, A>(n: usize) -> Box<[A]>
where
    T: Copy + Default,
{
    // `vec![0; n]` uses calloc: untouched pages cost no memory.
    let v: Vec<T> = vec![T::default(); n];
    let mut v = std::mem::ManuallyDrop::new(v.into_boxed_slice());
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<A>());
    // SAFETY: AtomicUsize/AtomicU32 have the same size, alignment and bit validity as
    // usize/u32 (std documents this), and all-zero is a valid value of both.
    unsafe {
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            v.as_mut_ptr() as *mut A,
            n,
        ))
    }
}

impl IdTable {
    /// An empty table; IDs start at 1.
    pub fn new() -> IdTable {
        let n = 1usize << TABLE_BITS;
        IdTable {
            keys: zeroed_atomics::<usize, AtomicUsize>(n),
            values: zeroed_atomics::<u32, AtomicU32>(n),
            next: AtomicU32::new(1),
            overflow: Mutex::new(HashMap::new()),
        }
    }

    /// The ID of `key` (non-zero) and whether this call created it (claimed its slot: that
    /// thread describes the method).
    pub fn get_or_insert(&self, key: usize) -> (u32, bool) {
        self.get_or_insert_with(key, || None)
    }

    /// [`IdTable::get_or_insert`], where a new key may take the ID `alias` gives (then
    /// "created" is false: the ID was someone else's, already described). `alias` runs in
    /// the thread that claims the key's slot, and in any thread that asks for the key before
    /// the slot has its number: nobody waits for another's answer (see [`IdTable::value`]),
    /// and each finds the same alias (the ID of the method's current version), so that a key
    /// with an alias never gets a number of its own. (Before, a thread that came second
    /// numbered the slot, and the claimant described that number: an attached Tomcat's
    /// workers, all in an old version of `runWorker`, named it twice and `orca check`
    /// rejected the log.)
    pub fn get_or_insert_with(
        &self,
        key: usize,
        alias: impl FnOnce() -> Option<u32>,
    ) -> (u32, bool) {
        match self.claim(key) {
            Claim::Slot(i, true) => match alias().filter(|&id| id != 0) {
                Some(id) => {
                    let set =
                        self.values[i].compare_exchange(0, id, Ordering::AcqRel, Ordering::Acquire);
                    match set {
                        Ok(_) => (id, false),
                        // another thread found the same alias first
                        Err(first) if first == id => (id, false),
                        // or numbered it (its look-up found no current version): described
                        // by this thread, the claimant
                        Err(first) => (first, true),
                    }
                }
                None => (self.value(i), true),
            },
            Claim::Slot(i, false) => {
                if self.values[i].load(Ordering::Acquire) == 0 {
                    if let Some(id) = alias().filter(|&id| id != 0) {
                        return match self.values[i].compare_exchange(
                            0,
                            id,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => (id, false),
                            Err(first) => (first, false),
                        };
                    }
                }
                (self.value(i), false)
            }
            Claim::Overflow(id, created) => (id, created),
        }
    }

    /// Finds or takes `key`'s slot; the overflow map's ID when the probes are all taken.
    fn claim(&self, key: usize) -> Claim {
        debug_assert_ne!(key, 0);
        let mask = (1usize << TABLE_BITS) - 1;
        let mut i =
            ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TABLE_BITS)) as usize;
        for _ in 0..MAX_PROBES {
            let k = self.keys[i].load(Ordering::Acquire);
            if k == 0 {
                match self.keys[i].compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Claim::Slot(i, true),
                    Err(other) if other == key => return Claim::Slot(i, false),
                    Err(_) => {}
                }
            } else if k == key {
                return Claim::Slot(i, false);
            }
            i = (i + 1) & mask;
        }
        let mut map = self.overflow.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = map.get(&key) {
            return Claim::Overflow(id, false);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        map.insert(key, id);
        Claim::Overflow(id, true)
    }

    /// The ID of `key` if it has one (never creates it).
    pub fn get(&self, key: usize) -> Option<u32> {
        let mask = (1usize << TABLE_BITS) - 1;
        let mut i =
            ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TABLE_BITS)) as usize;
        for _ in 0..MAX_PROBES {
            let k = self.keys[i].load(Ordering::Acquire);
            if k == 0 {
                return None;
            } else if k == key {
                return Some(self.value(i));
            }
            i = (i + 1) & mask;
        }
        let map = self.overflow.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&key).copied()
    }

    /// The ID of the taken slot `i`, numbering it if nobody has yet. Why not wait for the
    /// thread that took the slot to number it: that thread may be descheduled, or suspended
    /// by a debugger, between the two stores for any time, and this one may be a program
    /// thread. Whoever comes first numbers the slot (one compare-and-swap each, never a
    /// loop); a number drawn by a thread that came second is left unused, a gap in the count.
    fn value(&self, i: usize) -> u32 {
        let v = self.values[i].load(Ordering::Acquire);
        if v != 0 {
            return v;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        match self.values[i].compare_exchange(0, id, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => id,
            Err(first) => first,
        }
    }
}

/// Where [`IdTable::claim`] found a key.
enum Claim {
    /// (slot, whether this call took it)
    Slot(usize, bool),
    /// (ID, whether this call created it)
    Overflow(u32, bool),
}

/// A test hook: `ORCA_TEST_DESCRIBE_DELAY_MS` makes the first thread to see a method pause
/// that long before it publishes the method's offset map, so that the end-to-end tests can
/// make other threads reach the same method in that window every time (tests/e2e/deploy.rs).
fn test_describe_delay() -> Option<std::time::Duration> {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("ORCA_TEST_DESCRIBE_DELAY_MS")
            .ok()?
            .parse()
            .ok()
            .map(std::time::Duration::from_millis)
    })
}

impl Default for IdTable {
    fn default() -> Self {
        Self::new()
    }
}

/// The key of the boot loader (which has no object to tag) in [`Rewritten`].
pub const BOOT_LOADER: i64 = 0;

/// The offset maps of rewritten classes, by defining loader: the loader's JVMTI tag, given
/// by the class-load hook the first time the loader defines a rewritten class. Not its
/// identity hash, which two loaders may share (then one class's map was found for
/// another's methods); and a loader's maps go when the loader is collected (ObjectFree on
/// its tag), since its classes are unloaded with it: a server that redeploys an application
/// a thousand times keeps no maps of the 999 gone.
#[derive(Default)]
struct Rewritten {
    loaders: HashMap<i64, LoaderMaps>,
}

#[derive(Default)]
struct LoaderMaps {
    /// Internal class name -> its rewritten methods.
    classes: HashMap<String, Vec<MethodMap>>,
    /// Method IDs whose map slot holds a map of this loader's classes, freed with it.
    methods: Vec<u32>,
}

/// Sentinel in [`Metadata`]'s per-method map slots: described, and not rewritten.
const NO_MAP: *mut MethodMap = std::ptr::dangling_mut();

/// Method IDs and described classes, resolved on first sight; in instrumentation mode also
/// the rewriter's offset maps, so that every location reported is the original class file's.
pub struct Metadata {
    methods: IdTable,
    /// Whether class `00000000` ("unknown") is listed.
    unknown_listed: AtomicBool,
    /// Whether classes are being rewritten (instrumentation mode).
    instrumenting: AtomicBool,
    /// Offset maps of rewritten classes, by defining loader, as the class-load hook
    /// registers them; looked up once per method, when it is described.
    rewritten: Mutex<Rewritten>,
    /// The last loader tag given. Its lock is held while a loader is tagged, and never taken
    /// by ObjectFree: a JVM that posted ObjectFree from inside GetTag or SetTag would still
    /// not deadlock.
    tagging: Mutex<i64>,
    /// Per method ID: null until described, then [`NO_MAP`] or the method's map (leaked: it
    /// lives as long as the method can appear in a stack).
    maps: Box<[AtomicPtr<MethodMap>]>,
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata {
            methods: IdTable::new(),
            unknown_listed: AtomicBool::new(false),
            instrumenting: AtomicBool::new(false),
            rewritten: Mutex::new(Rewritten::default()),
            tagging: Mutex::new(0),
            maps: zeroed_atomics::<usize, AtomicPtr<MethodMap>>(1 << TABLE_BITS),
        }
    }
}

impl Metadata {
    /// Switches on location translation (instrumentation mode).
    pub fn set_instrumenting(&self) {
        self.instrumenting.store(true, Ordering::SeqCst);
    }

    /// The key of `loader` (null: the boot loader) for [`Metadata::register_rewritten`]:
    /// its tag, given now if it has none. `None` if JVMTI cannot tag it.
    pub fn loader_key(&self, jvmti: &Jvmti, loader: jobject) -> Option<i64> {
        if loader.is_null() {
            return Some(BOOT_LOADER);
        }
        // Under the lock: two threads defining classes in a new loader give it one tag.
        let mut last = self.tagging.lock().unwrap_or_else(|e| e.into_inner());
        match jvmti.tag(loader).ok()? {
            0 => {
                *last += 1;
                jvmti.set_tag(loader, *last).ok()?;
                Some(*last)
            }
            tag => Some(tag),
        }
    }

    /// The key of the loader that defined `class`, if it ever defined a rewritten class.
    pub fn class_loader_key(&self, jvmti: &Jvmti, jni: Jni, class: jclass) -> Option<i64> {
        let loader = jvmti.class_loader(class).ok()?;
        if loader.is_null() {
            return Some(BOOT_LOADER);
        }
        let tag = jvmti.tag(loader).ok();
        jni.delete_local_ref(loader);
        tag.filter(|&t| t != 0)
    }

    /// Called by the class-load hook for each rewritten class.
    pub fn register_rewritten(&self, loader: i64, class_name: &str, methods: Vec<MethodMap>) {
        let mut r = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
        let maps = r.loaders.entry(loader).or_default();
        maps.classes.insert(class_name.to_string(), methods);
    }

    /// ObjectFree of a loader's tag: its classes are gone, and so are their maps.
    pub fn loader_freed(&self, loader: i64) {
        let gone = {
            let mut r = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
            r.loaders.remove(&loader)
        };
        for id in gone.map(|g| g.methods).unwrap_or_default() {
            if let Some(slot) = self.maps.get(id as usize) {
                let p = slot.swap(NO_MAP, Ordering::AcqRel);
                if !p.is_null() && p != NO_MAP {
                    // SAFETY: leaked by `map_of`/`describe_method`; no frame of an unloaded
                    // class's method is on any stack, so no thread reads it any more.
                    drop(unsafe { Box::from_raw(p) });
                }
            }
        }
    }

    /// (loaders, classes, method maps) held: the test hook `ORCA_TEST_TABLES` prints them at
    /// exit, for the redeployment test.
    pub fn table_sizes(&self) -> (usize, usize, usize) {
        let r = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
        let classes = r.loaders.values().map(|l| l.classes.len()).sum();
        let methods = r.loaders.values().map(|l| l.methods.len()).sum();
        (r.loaders.len(), classes, methods)
    }

    /// The format's method ID of `method`, describing it to the writer the first time.
    pub fn method_id(&self, jvmti: &Jvmti, jni: Jni, log: &LogWriter, method: jmethodID) -> u32 {
        if method.is_null() {
            return 0;
        }
        // An obsolete method (the version a frame still runs after its class was
        // retransformed: an attach's, a detach's, another agent's) has a jmethodID of its own;
        // it is the same method, with the ID of its current version.
        let (id, new) = self.methods.get_or_insert_with(method as usize, || {
            self.current_version_id(jvmti, jni, log, method)
        });
        if new {
            self.describe_method(jvmti, jni, log, method, id);
        }
        id
    }

    /// The original bytecode index of `bci` in `method` (numbered `id`): the same index
    /// unless the method was rewritten.
    ///
    /// Another thread may have numbered the method a moment ago and not yet published its
    /// map: rather than wait for it (it may be descheduled, or suspended by a debugger, for
    /// any time), this thread looks the map up itself; both find the same one.
    pub fn original_location(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        id: u32,
        method: jmethodID,
        bci: u32,
    ) -> u32 {
        if !self.instrumenting.load(Ordering::Relaxed) {
            return bci;
        }
        let Some(slot) = self.maps.get(id as usize) else {
            return bci;
        };
        let mut p = slot.load(Ordering::Acquire);
        if p.is_null() && !method.is_null() {
            p = self.install_map(id, self.map_of(jvmti, jni, method));
        }
        if p.is_null() || p == NO_MAP {
            return bci;
        }
        // SAFETY: a leaked Box<MethodMap>, never freed.
        unsafe { &*p }.original(bci).unwrap_or(bci)
    }

    /// A class retransformed or redefined: the methods already numbered get the maps just
    /// registered for its new version (their line tables, written in the original class
    /// file's indexes, still fit). The maps they had are left allocated: a thread may be
    /// reading one this moment (a few hundred bytes per method and retransformation).
    pub fn class_redefined(&self, jvmti: &Jvmti, jni: Jni, class: jclass) {
        if !self.instrumenting.load(Ordering::Relaxed) {
            return;
        }
        for m in jvmti.class_methods(class).unwrap_or_default() {
            let Some(id) = self.methods.get(m as usize) else {
                continue;
            };
            let Some(slot) = self.maps.get(id as usize) else {
                continue;
            };
            let (loader, new) = match self.map_of(jvmti, jni, m) {
                Some((loader, map)) => (loader, Box::into_raw(Box::new(map))),
                None => (BOOT_LOADER, NO_MAP),
            };
            let old = slot.swap(new, Ordering::AcqRel);
            if new != NO_MAP && loader != BOOT_LOADER && (old.is_null() || old == NO_MAP) {
                self.owned_by(loader, id);
            }
        }
    }

    /// The maps registered for `class` (those of the version that runs, until a class-load
    /// hook registers its next version's).
    pub fn class_maps(&self, jvmti: &Jvmti, jni: Jni, class: jclass) -> Vec<MethodMap> {
        let Some(sig) = jvmti.class_signature(class).ok() else {
            return Vec::new();
        };
        let Some(internal) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
            return Vec::new();
        };
        let Some(loader) = self.class_loader_key(jvmti, jni, class) else {
            return Vec::new();
        };
        let rewritten = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
        rewritten
            .loaders
            .get(&loader)
            .and_then(|l| l.classes.get(internal))
            .cloned()
            .unwrap_or_default()
    }

    /// The offset map of `method` and the key of its loader.
    fn map_of(&self, jvmti: &Jvmti, jni: Jni, method: jmethodID) -> Option<(i64, MethodMap)> {
        let (name, signature) = jvmti.method_name(method).ok()?;
        let class = jvmti.method_declaring_class(method).ok()?;
        let map = self.find_map(jvmti, jni, class, &name, &signature);
        jni.delete_local_ref(class);
        map
    }

    /// Publishes method `id`'s map (unless another thread did first) and returns the one
    /// published. A method whose ID is past the slots gets none: then neither its locations
    /// nor its line table are translated, which keeps them consistent with each other.
    fn install_map(&self, id: u32, map: Option<(i64, MethodMap)>) -> *mut MethodMap {
        let Some(slot) = self.maps.get(id as usize) else {
            return NO_MAP;
        };
        let (loader, ours) = match map {
            Some((loader, m)) => (loader, Box::into_raw(Box::new(m))),
            None => (BOOT_LOADER, NO_MAP),
        };
        let published = self.publish_map(slot, ours);
        if published == ours && ours != NO_MAP && loader != BOOT_LOADER {
            self.owned_by(loader, id);
        }
        published
    }

    /// Notes that method `id`'s slot holds a map of `loader`'s, to free with it.
    fn owned_by(&self, loader: i64, id: u32) {
        let mut r = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = r.loaders.get_mut(&loader) {
            l.methods.push(id);
        }
    }

    /// Stores `map` in `slot` unless another thread stored one first; the one stored.
    fn publish_map(&self, slot: &AtomicPtr<MethodMap>, map: *mut MethodMap) -> *mut MethodMap {
        match slot.compare_exchange(
            std::ptr::null_mut(),
            map,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => map,
            Err(first) => {
                if map != NO_MAP {
                    // SAFETY: leaked just now by `map_of` and never shared.
                    drop(unsafe { Box::from_raw(map) });
                }
                first
            }
        }
    }

    /// The ID of the current version of `method` when it is obsolete, else `None`.
    fn current_version_id(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        log: &LogWriter,
        method: jmethodID,
    ) -> Option<u32> {
        let obsolete = jvmti.is_method_obsolete(method);
        if !obsolete && !self.instrumenting.load(Ordering::Relaxed) {
            return None;
        }
        let class = jvmti.method_declaring_class(method).ok()?;
        let methods = jvmti.class_methods(class).unwrap_or_default();
        jni.delete_local_ref(class);
        // An old version that HotSpot does not call obsolete (the code of a frame that ran
        // across a retransformation that left the method's bytecode equivalent: JDK 25 gives
        // it a jmethodID of its own, which IsMethodObsolete denies) is not among its class's
        // methods either: it too is its current version (an attached server's second
        // recording named one method twice, and `orca check` rejected the log).
        if !obsolete && methods.contains(&method) {
            return None;
        }
        let (name, signature) = jvmti.method_name(method).ok()?;
        let current = methods.into_iter().find(|&m| {
            m != method
                && !jvmti.is_method_obsolete(m)
                && jvmti
                    .method_name(m)
                    .is_ok_and(|(n, s)| n == name && s == signature)
        });
        Some(self.method_id(jvmti, jni, log, current?))
    }

    fn describe_method(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        log: &LogWriter,
        method: jmethodID,
        id: u32,
    ) {
        let nanos = now_nanos();
        if let Some(delay) = test_describe_delay() {
            std::thread::sleep(delay);
        }
        let (name, signature) = jvmti
            .method_name(method)
            .unwrap_or_else(|_| ("?".into(), "?".into()));
        let declaring = jvmti.method_declaring_class(method).ok();
        let map = match declaring {
            Some(c) if self.instrumenting.load(Ordering::Relaxed) => {
                self.find_map(jvmti, jni, c, &name, &signature)
            }
            _ => None,
        };
        let map_ptr = self.install_map(id, map);
        let class = match declaring {
            Some(c) => {
                let id = self.class_id(jvmti, log, c);
                jni.delete_local_ref(c);
                id
            }
            None => self.unknown_class(log),
        };
        let mut lines = jvmti.line_number_table(method).unwrap_or(None);
        if map_ptr != NO_MAP && !map_ptr.is_null() {
            // SAFETY: leaked by `map_of` or above, never freed.
            let map = unsafe { &*map_ptr };
            if let Some(entries) = lines.as_mut() {
                for e in entries.iter_mut() {
                    e.start_location = map
                        .original(e.start_location as u32)
                        .map(i64::from)
                        .unwrap_or(e.start_location);
                }
                entries.dedup();
            }
        }
        log.push_meta(MetaRecord::Method {
            nanos,
            id,
            name,
            signature,
            class,
            lines,
        });
    }

    fn find_map(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        class: jclass,
        name: &str,
        descriptor: &str,
    ) -> Option<(i64, MethodMap)> {
        let sig = jvmti.class_signature(class).ok()?;
        let internal = sig.strip_prefix('L')?.strip_suffix(';')?;
        let loader = self.class_loader_key(jvmti, jni, class)?;
        let rewritten = self.rewritten.lock().unwrap_or_else(|e| e.into_inner());
        let methods = rewritten.loaders.get(&loader)?.classes.get(internal)?;
        methods
            .iter()
            .find(|m| m.name == name && m.descriptor == descriptor)
            .map(|m| (loader, m.clone()))
    }

    /// The class ID of `class` (its identity hash while unique, `recorder::ids`),
    /// describing it the first time.
    pub fn class_id(&self, jvmti: &Jvmti, log: &LogWriter, class: jclass) -> u32 {
        let Some((hash, new)) = ids::id_of(jvmti, class, IdKind::Class) else {
            return self.unknown_class(log);
        };
        if new {
            let signature = jvmti.class_signature(class).unwrap_or_else(|_| "?".into());
            let source = jvmti.source_file_name(class).unwrap_or(None);
            log.push_meta(MetaRecord::Class {
                nanos: now_nanos(),
                id: hash,
                signature,
                source,
            });
        }
        hash
    }

    /// Class `00000000`, listed once, for a method whose class JVMTI could not tell.
    fn unknown_class(&self, log: &LogWriter) -> u32 {
        if !self.unknown_listed.swap(true, Ordering::Relaxed) {
            log.push_meta(MetaRecord::Class {
                nanos: now_nanos(),
                id: 0,
                signature: "?".into(),
                source: None,
            });
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_stable_under_contention() {
        let t = std::sync::Arc::new(IdTable::new());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let t = t.clone();
                std::thread::spawn(move || {
                    (1..20_000usize)
                        .map(|k| t.get_or_insert(k * 8))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<Vec<(u32, bool)>> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        for k in 0..results[0].len() {
            let ids: Vec<u32> = results.iter().map(|r| r[k].0).collect();
            assert!(ids.windows(2).all(|w| w[0] == w[1]), "key {k} got {ids:?}");
            assert_eq!(
                results.iter().filter(|r| r[k].1).count(),
                1,
                "key {k} created twice"
            );
        }
        let mut all: Vec<u32> = results[0].iter().map(|r| r.0).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 19_999);
    }

    /// A thread that took a key's slot and stopped before numbering it (descheduled,
    /// suspended) makes nobody wait: another thread numbers the slot, and the first, when it
    /// goes on, gets the same ID. (Before, the second thread spun until the first went on.)
    #[test]
    fn a_slot_taken_and_not_yet_numbered_makes_nobody_wait() {
        let t = std::sync::Arc::new(IdTable::new());
        let Claim::Slot(i, true) = t.claim(4096) else {
            panic!("the first claim takes a slot");
        };
        let other = {
            let t = t.clone();
            std::thread::spawn(move || (t.get_or_insert(4096), t.get(4096)))
        };
        let start = std::time::Instant::now();
        loop {
            if other.is_finished() {
                break;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "the other thread waits for the slot's taker"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let ((id, created), got) = other.join().unwrap();
        assert!(
            !created,
            "the slot was taken: the other thread did not create the ID"
        );
        assert_eq!(got, Some(id));
        assert_eq!(t.value(i), id, "the taker goes on with the same ID");
        assert_eq!(t.get_or_insert(4096), (id, false));
        // The next key's ID counts on.
        assert_eq!(t.get_or_insert(8192), (id + 1, true));
    }
}
