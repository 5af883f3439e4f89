//! JVMTI event mode's event source: MethodEntry/MethodExit of the tracked JDK methods
//! (`Object.wait`/`notify`/`notifyAll`, `Thread.start`/`join`/`sleep`, `Semaphore`), for
//! JVMs or programs that are not instrumented.
//!
//! MethodEntry/MethodExit fire for every method the program runs, so the filter must be a
//! pointer lookup, never a name comparison (the original Orca measured name checks at 1000x
//! slower). The table is filled when `java.lang.Object`, `java.lang.Thread` and
//! `java.util.concurrent.Semaphore` are prepared (or found already loaded at VMInit).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use std::ffi::CStr;

use jni_sys::{jclass, jfieldID, jmethodID, jobject};

use super::{report, LOCAL_FRAME};
use crate::events::Kind;
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::threads::{OpenCall, OpenExtra};
use crate::recorder::{JucLine, Recorder};

/// Which `java.util.concurrent.locks` class a lock call is on: it says the mode and where
/// the synchronizer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockClass {
    /// `ReentrantLock`: exclusive, `sync` a `ReentrantLock$Sync`.
    Reentrant,
    /// `ReentrantReadWriteLock$ReadLock`: shared.
    ReadView,
    /// `ReentrantReadWriteLock$WriteLock`: exclusive.
    WriteView,
}

impl LockClass {
    const ALL: [LockClass; 3] = [
        LockClass::Reentrant,
        LockClass::ReadView,
        LockClass::WriteView,
    ];

    /// The `<mode>` letter.
    pub fn mode(self) -> u8 {
        match self {
            LockClass::ReadView => b'R',
            _ => b'W',
        }
    }

    fn signature(self) -> &'static str {
        match self {
            LockClass::Reentrant => "Ljava/util/concurrent/locks/ReentrantLock;",
            LockClass::ReadView => "Ljava/util/concurrent/locks/ReentrantReadWriteLock$ReadLock;",
            LockClass::WriteView => "Ljava/util/concurrent/locks/ReentrantReadWriteLock$WriteLock;",
        }
    }

    /// The type of its `sync` field.
    fn sync_signature(self) -> &'static CStr {
        match self {
            LockClass::Reentrant => c"Ljava/util/concurrent/locks/ReentrantLock$Sync;",
            _ => c"Ljava/util/concurrent/locks/ReentrantReadWriteLock$Sync;",
        }
    }
}

/// Which `Lock` method a lock call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockCall {
    /// `lock`, `lockInterruptibly`.
    Lock,
    /// `tryLock()`.
    TryLock,
    /// `tryLock(long, TimeUnit)`.
    TryLockTimed,
    Unlock,
}

impl LockCall {
    const ALL: [LockCall; 4] = [
        LockCall::Lock,
        LockCall::TryLock,
        LockCall::TryLockTimed,
        LockCall::Unlock,
    ];
}

/// A tracked JDK call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Wait,
    Notify,
    NotifyAll,
    Start,
    Join,
    Sleep,
    Acquire,
    Release,
    /// A `Lock` method of a j.u.c. lock.
    Lock(LockClass, LockCall),
    /// `Condition.await*` of `AbstractQueuedSynchronizer$ConditionObject`.
    Await,
    Signal,
    SignalAll,
    /// `LockSupport.park*`; `blocker`: the overload whose first argument is the blocker.
    Park {
        blocker: bool,
    },
    Unpark,
}

const SIMPLE: [Call; 14] = [
    Call::Wait,
    Call::Notify,
    Call::NotifyAll,
    Call::Start,
    Call::Join,
    Call::Sleep,
    Call::Acquire,
    Call::Release,
    Call::Await,
    Call::Signal,
    Call::SignalAll,
    Call::Park { blocker: false },
    Call::Park { blocker: true },
    Call::Unpark,
];

const CONDITION_OBJECT: &str =
    "Ljava/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject;";
const LOCK_SUPPORT: &str = "Ljava/util/concurrent/locks/LockSupport;";

impl Call {
    /// The number stored in the method table (never 0, which marks an empty slot).
    fn to_u8(self) -> u8 {
        match self {
            Call::Lock(c, k) => {
                let ci = LockClass::ALL.iter().position(|x| *x == c).unwrap_or(0);
                let ki = LockCall::ALL.iter().position(|x| *x == k).unwrap_or(0);
                64 + (ci * 4 + ki) as u8
            }
            other => SIMPLE.iter().position(|x| *x == other).unwrap_or(0) as u8 + 1,
        }
    }

    fn from_u8(v: u8) -> Option<Call> {
        if v >= 64 {
            let i = (v - 64) as usize;
            return Some(Call::Lock(
                *LockClass::ALL.get(i / 4)?,
                *LockCall::ALL.get(i % 4)?,
            ));
        }
        SIMPLE.get((v as usize).checked_sub(1)?).copied()
    }

    /// The event written when the call starts (`None`: written at its end only).
    pub fn entry_kind(self) -> Option<Kind> {
        Some(match self {
            Call::Wait => Kind::ObjectWait,
            Call::Notify => Kind::ObjectNotify,
            Call::NotifyAll => Kind::ObjectNotifyAll,
            Call::Start => Kind::ThreadStart,
            Call::Join => Kind::ThreadJoin,
            Call::Sleep => Kind::ThreadSleep,
            Call::Acquire => Kind::SemaphoreAcquire,
            Call::Release => Kind::SemaphoreRelease,
            Call::Lock(_, LockCall::Unlock) => return None,
            Call::Lock(..) => Kind::LockAcquire,
            Call::Await => Kind::ConditionAwait,
            Call::Signal => Kind::ConditionSignal,
            Call::SignalAll => Kind::ConditionSignalAll,
            Call::Park { .. } => Kind::ThreadPark,
            Call::Unpark => Kind::ThreadUnpark,
        })
    }

    /// The event written when the call ends, for blocking calls (for a lock acquisition, the
    /// successful one; [`Call::outcome`] picks the others).
    pub fn exit_kind(self) -> Option<Kind> {
        match self {
            Call::Wait => Some(Kind::ObjectWaited),
            Call::Join => Some(Kind::ThreadJoined),
            Call::Sleep => Some(Kind::ThreadSlept),
            Call::Acquire => Some(Kind::SemaphoreAcquired),
            Call::Lock(_, LockCall::Unlock) => Some(Kind::LockRelease),
            Call::Lock(..) => Some(Kind::LockAcquired),
            Call::Await => Some(Kind::ConditionAwaited),
            Call::Park { .. } => Some(Kind::ThreadParked),
            _ => None,
        }
    }

    /// The exit event of a call that ended by an exception (`thrown`) or returned the
    /// boolean `returned`: a lock acquisition's outcome, an `unlock` that threw writes
    /// nothing; every other call writes its [`Call::exit_kind`].
    pub fn outcome(self, thrown: bool, returned: bool) -> Option<Kind> {
        match self {
            Call::Lock(_, LockCall::Unlock) if thrown => None,
            Call::Lock(_, k) if k != LockCall::Unlock => Some(if thrown {
                Kind::LockInterrupted
            } else if returned || k == LockCall::Lock {
                Kind::LockAcquired
            } else if k == LockCall::TryLock {
                Kind::LockFailed
            } else {
                Kind::LockTimedOut
            }),
            other => other.exit_kind(),
        }
    }

    /// Whether the event names the receiver (`Thread.sleep` is static, so are `LockSupport`'s
    /// methods, whose object is an argument).
    pub fn has_receiver(self) -> bool {
        !matches!(self, Call::Sleep | Call::Park { .. } | Call::Unpark)
    }

    /// Whether the receiver is a monitor the caller must own (`Object.wait`/`notify`/`notifyAll`).
    pub fn is_monitor_call(self) -> bool {
        matches!(self, Call::Wait | Call::Notify | Call::NotifyAll)
    }

    /// Which call a method of a tracked class is, by class signature, method name and
    /// descriptor (`tryLock`'s two overloads end differently, `park`'s take a blocker or not).
    pub fn classify(class_signature: &str, method_name: &str, descriptor: &str) -> Option<Call> {
        if let Some(&class) = LockClass::ALL
            .iter()
            .find(|c| c.signature() == class_signature)
        {
            let call = match (method_name, descriptor) {
                ("lock" | "lockInterruptibly", "()V") => LockCall::Lock,
                ("tryLock", "()Z") => LockCall::TryLock,
                ("tryLock", "(JLjava/util/concurrent/TimeUnit;)Z") => LockCall::TryLockTimed,
                ("unlock", "()V") => LockCall::Unlock,
                _ => return None,
            };
            return Some(Call::Lock(class, call));
        }
        match (class_signature, method_name) {
            ("Ljava/lang/Object;", "wait") => Some(Call::Wait),
            ("Ljava/lang/Object;", "notify") => Some(Call::Notify),
            ("Ljava/lang/Object;", "notifyAll") => Some(Call::NotifyAll),
            ("Ljava/lang/Thread;", "start") => Some(Call::Start),
            ("Ljava/lang/Thread;", "join") => Some(Call::Join),
            ("Ljava/lang/Thread;", "sleep") => Some(Call::Sleep),
            (
                "Ljava/util/concurrent/Semaphore;",
                "acquire" | "acquireUninterruptibly" | "tryAcquire",
            ) => Some(Call::Acquire),
            ("Ljava/util/concurrent/Semaphore;", "release") => Some(Call::Release),
            (CONDITION_OBJECT, n) if n.starts_with("await") => Some(Call::Await),
            (CONDITION_OBJECT, "signal") => Some(Call::Signal),
            (CONDITION_OBJECT, "signalAll") => Some(Call::SignalAll),
            (LOCK_SUPPORT, "park" | "parkNanos" | "parkUntil") => Some(Call::Park {
                blocker: descriptor.starts_with("(Ljava/lang/Object;"),
            }),
            (LOCK_SUPPORT, "unpark") => Some(Call::Unpark),
            _ => None,
        }
    }

    /// Whether a class with this signature declares tracked methods.
    pub fn is_tracked_class(class_signature: &str) -> bool {
        matches!(
            class_signature,
            "Ljava/lang/Object;"
                | "Ljava/lang/Thread;"
                | "Ljava/util/concurrent/Semaphore;"
                | CONDITION_OBJECT
                | LOCK_SUPPORT
        ) || LockClass::ALL
            .iter()
            .any(|c| c.signature() == class_signature)
    }
}

const SLOTS: usize = 256;

/// A fixed, lock-free set of at most a few dozen jmethodIDs.
pub struct TrackedMethods {
    keys: [AtomicUsize; SLOTS],
    calls: [AtomicU8; SLOTS],
}

impl TrackedMethods {
    /// An empty cache.
    pub fn new() -> TrackedMethods {
        TrackedMethods {
            keys: std::array::from_fn(|_| AtomicUsize::new(0)),
            calls: std::array::from_fn(|_| AtomicU8::new(0)),
        }
    }

    fn slot(method: usize) -> usize {
        ((method as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
    }

    /// Records `method` as `call`. Idempotent; ignores a full table (it holds 8x what the
    /// JDK needs).
    pub fn insert(&self, method: jmethodID, call: Call) {
        let key = method as usize;
        let mut i = Self::slot(key);
        for _ in 0..SLOTS {
            match self.keys[i].compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    self.calls[i].store(call.to_u8(), Ordering::Release);
                    return;
                }
                Err(k) if k == key => return,
                Err(_) => i = (i + 1) % SLOTS,
            }
        }
    }

    /// The hot-path filter: which call `method` is, if any.
    #[inline]
    pub fn lookup(&self, method: jmethodID) -> Option<Call> {
        let key = method as usize;
        let mut i = Self::slot(key);
        for _ in 0..SLOTS {
            let k = self.keys[i].load(Ordering::Acquire);
            if k == 0 {
                return None;
            }
            if k == key {
                return Call::from_u8(self.calls[i].load(Ordering::Acquire));
            }
            i = (i + 1) % SLOTS;
        }
        None
    }
}

impl Default for TrackedMethods {
    fn default() -> Self {
        Self::new()
    }
}

/// The method-event engine: the method-ID cache the hot path filters with, and the JNI field
/// IDs through which a j.u.c. call finds its synchronizer and owner.
#[derive(Default)]
pub struct Methods {
    tracked: TrackedMethods,
    /// `sync` of each [`LockClass`], then `ConditionObject.this$0`, then
    /// `AbstractOwnableSynchronizer.exclusiveOwnerThread`: 0 not looked up yet, [`NO_FIELD`]
    /// absent (this JDK's classes differ; the agent said so once).
    fields: [AtomicUsize; 5],
}

/// A field the agent looked for and did not find.
const NO_FIELD: usize = usize::MAX;

/// A field a j.u.c. call is read through: its slot in [`Methods::fields`], name and type.
struct FieldRef {
    slot: usize,
    name: &'static CStr,
    signature: &'static CStr,
}

const CONDITION_LOCK: FieldRef = FieldRef {
    slot: 3,
    name: c"this$0",
    signature: c"Ljava/util/concurrent/locks/AbstractQueuedSynchronizer;",
};
const OWNER: FieldRef = FieldRef {
    slot: 4,
    name: c"exclusiveOwnerThread",
    signature: c"Ljava/lang/Thread;",
};

impl Methods {
    /// VMInit: find the tracked methods of classes loaded before events could tell us, then
    /// switch on the method events.
    pub fn start(&self, rec: &Recorder, jni: Jni) {
        // Enable ClassPrepare first, so no class falls between the scan and the event.
        report(rec.jvmti.set_event(true, Event::ClassPrepare));
        jni.with_local_frame(LOCAL_FRAME, || {
            if let Ok(classes) = rec.jvmti.loaded_classes() {
                for c in classes {
                    self.register_if_tracked(&rec.jvmti, c);
                    jni.delete_local_ref(c);
                }
            }
        });
        report(rec.jvmti.set_event(true, Event::MethodEntry));
        report(rec.jvmti.set_event(true, Event::MethodExit));
    }

    /// VMDeath.
    pub fn stop(&self, jvmti: &Jvmti) {
        for e in [Event::MethodEntry, Event::MethodExit, Event::ClassPrepare] {
            let _ = jvmti.set_event(false, e);
        }
    }

    /// ClassPrepare (and the VMInit scan): fill the method-ID cache from the tracked classes.
    pub fn register_if_tracked(&self, jvmti: &Jvmti, class: jclass) {
        let Ok(sig) = jvmti.class_signature(class) else {
            return;
        };
        if !Call::is_tracked_class(&sig) {
            return;
        }
        for m in jvmti.class_methods(class).unwrap_or_default() {
            if let Ok((name, descriptor)) = jvmti.method_name(m) {
                if let Some(call) = Call::classify(&sig, &name, &descriptor) {
                    self.tracked.insert(m, call);
                }
            }
        }
    }

    /// MethodEntry: the hot path. Untracked methods cost one table lookup.
    pub fn entry(&self, rec: &Recorder, jni: Jni, thread: jthread, method: jmethodID) {
        let Some(call) = self.tracked.lookup(method) else {
            return;
        };
        let nanos = now_nanos();
        let Some(state) = rec.state(thread) else {
            return;
        };
        state.depth += 1;
        if state.depth > 1 {
            return;
        }
        let (object, owner, extra) = match call {
            Call::Lock(class, k) => {
                let (lock, owner) = self.lock_and_owner(rec, jni, method, class, k);
                (lock, owner, OpenExtra::Mode(class.mode()))
            }
            Call::Await | Call::Signal | Call::SignalAll => {
                let (condition, lock) = self.condition_and_lock(rec, jni, method);
                (condition, 0, OpenExtra::Lock(lock))
            }
            Call::Park { blocker: false } => (0, 0, OpenExtra::None),
            Call::Park { blocker: true } | Call::Unpark => {
                (argument_hash(&rec.jvmti, jni), 0, OpenExtra::None)
            }
            _ => (receiver(&rec.jvmti, jni, call), 0, OpenExtra::None),
        };
        let frames = rec.stack(jni, state, 1, false);
        if let Some(kind) = call.exit_kind() {
            let unlock = matches!(call, Call::Lock(_, LockCall::Unlock));
            state.open = Some(OpenCall {
                kind,
                object,
                frames: frames.clone(),
                extra,
                stamp: unlock.then_some(nanos),
            });
        }
        if let Some(kind) = call.entry_kind() {
            let line = JucLine {
                nanos,
                kind,
                thread: state.hash,
                object,
                owner,
                extra,
            };
            rec.push_extra(line, frames);
        }
    }

    /// MethodExit, also on exit by exception (`thrown`); `returned_true`: the method returned
    /// the boolean `true` (meaningful for `tryLock` only).
    pub fn exit(
        &self,
        rec: &Recorder,
        thread: jthread,
        method: jmethodID,
        thrown: bool,
        returned_true: bool,
    ) {
        let Some(call) = self.tracked.lookup(method) else {
            return;
        };
        let nanos = now_nanos();
        if let Some(state) = rec.state(thread) {
            // At depth 1 this exit is the outermost call's, whose entry opened the pair.
            rec.end_call_as(nanos, state, |_| call.outcome(thrown, returned_true));
        }
    }

    /// The field ID in slot `slot`, looked up in `class` the first time (`None`: absent).
    fn field(&self, jni: Jni, f: &FieldRef, class: jclass) -> Option<jfieldID> {
        let (slot, name, signature) = (f.slot, f.name, f.signature);
        let cached = self.fields[slot].load(Ordering::Acquire);
        if cached == NO_FIELD {
            return None;
        }
        if cached != 0 {
            return Some(cached as jfieldID);
        }
        if class.is_null() {
            return None;
        }
        match jni.field_id(class, name, signature, false) {
            Some(id) => {
                self.fields[slot].store(id as usize, Ordering::Release);
                Some(id)
            }
            None => {
                if self.fields[slot].swap(NO_FIELD, Ordering::AcqRel) != NO_FIELD {
                    eprintln!(
                        "orca: field {} {} not found in this JDK's java.util.concurrent.locks; \
                         j.u.c. lock IDs fall back to the Lock object and owners to 00000000",
                        name.to_string_lossy(),
                        signature.to_string_lossy()
                    );
                }
                None
            }
        }
    }

    /// The object field `slot` of `obj`, declared by the class of `method` (a local
    /// reference, or null).
    fn field_of_receiver(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        method: jmethodID,
        obj: jobject,
        f: &FieldRef,
    ) -> jobject {
        let mut class: jclass = std::ptr::null_mut();
        if self.fields[f.slot].load(Ordering::Acquire) == 0 {
            class = jvmti.method_declaring_class(method).unwrap_or(class);
        }
        let field = self.field(jni, f, class);
        if !class.is_null() {
            jni.delete_local_ref(class);
        }
        match field {
            Some(f) => jni.object_field(obj, f),
            None => std::ptr::null_mut(),
        }
    }

    /// A lock call's `<lock>` (its synchronizer's hash) and, for an acquisition, the
    /// synchronizer's exclusive owner thread's hash (0: none).
    fn lock_and_owner(
        &self,
        rec: &Recorder,
        jni: Jni,
        method: jmethodID,
        class: LockClass,
        call: LockCall,
    ) -> (u32, u32) {
        let jvmti = &rec.jvmti;
        let recv = match jvmti.local_instance(0) {
            Ok(o) if !o.is_null() => o,
            _ => return (0, 0),
        };
        let sync_field = FieldRef {
            slot: LockClass::ALL.iter().position(|c| *c == class).unwrap_or(0),
            name: c"sync",
            signature: class.sync_signature(),
        };
        let sync = self.field_of_receiver(jvmti, jni, method, recv, &sync_field);
        let lock = if sync.is_null() { recv } else { sync };
        let hash = jvmti.object_hash(lock).unwrap_or(0);
        let mut owner = 0;
        if call != LockCall::Unlock && !sync.is_null() {
            let mut sync_class: jclass = std::ptr::null_mut();
            if self.fields[OWNER.slot].load(Ordering::Acquire) == 0 {
                sync_class = jni.object_class(sync);
            }
            let field = self.field(jni, &OWNER, sync_class);
            if !sync_class.is_null() {
                jni.delete_local_ref(sync_class);
            }
            if let Some(f) = field {
                let t = jni.object_field(sync, f);
                if !t.is_null() {
                    owner = jvmti.object_hash(t).unwrap_or(0);
                    jni.delete_local_ref(t);
                }
            }
        }
        if !sync.is_null() {
            jni.delete_local_ref(sync);
        }
        jni.delete_local_ref(recv);
        (hash, owner)
    }

    /// A condition call's `<condition>` and `<lock>` (the synchronizer that made it).
    fn condition_and_lock(&self, rec: &Recorder, jni: Jni, method: jmethodID) -> (u32, u32) {
        let jvmti = &rec.jvmti;
        let recv = match jvmti.local_instance(0) {
            Ok(o) if !o.is_null() => o,
            _ => return (0, 0),
        };
        let condition = jvmti.object_hash(recv).unwrap_or(0);
        let outer = self.field_of_receiver(jvmti, jni, method, recv, &CONDITION_LOCK);
        let lock = if outer.is_null() {
            condition
        } else {
            let h = jvmti.object_hash(outer).unwrap_or(condition);
            jni.delete_local_ref(outer);
            h
        };
        jni.delete_local_ref(recv);
        (condition, lock)
    }
}

/// The hash of the first argument of a static tracked method (`park`'s blocker, `unpark`'s
/// thread); 0 for `null`.
fn argument_hash(jvmti: &Jvmti, jni: Jni) -> u32 {
    match jvmti.local_object(0, 0) {
        Ok(o) if !o.is_null() => {
            let hash = jvmti.object_hash(o).unwrap_or(0);
            jni.delete_local_ref(o);
            hash
        }
        _ => 0,
    }
}

/// The identity hash of the tracked call's receiver (0 for `Thread.sleep`).
///
/// `GetLocalInstance` is exact but HotSpot runs it as a VM operation: a safepoint per call,
/// measured at about 40 µs, which would stop every thread at every `notify`. The receiver
/// of `wait`/`notify`/`notifyAll` is a monitor the thread owns, and the list of owned
/// monitors is cheap to read for the current thread (no safepoint), so when the thread
/// owns exactly one monitor that is the receiver. Otherwise (nested `synchronized`, or no
/// monitor: the call is about to throw IllegalMonitorStateException) and for `Thread` and
/// `Semaphore` calls, the agent pays for `GetLocalInstance`.
fn receiver(jvmti: &Jvmti, jni: Jni, call: Call) -> u32 {
    if !call.has_receiver() {
        return 0;
    }
    if call.is_monitor_call() {
        if let Ok(owned) = jvmti.owned_monitors() {
            let only = if owned.len() == 1 {
                jvmti.object_hash(owned[0].0).ok()
            } else {
                None
            };
            for (m, _) in owned {
                jni.delete_local_ref(m);
            }
            if let Some(hash) = only {
                return hash;
            }
        }
    }
    match jvmti.local_instance(0) {
        Ok(o) if !o.is_null() => {
            let hash = jvmti.object_hash(o).unwrap_or(0);
            jni.delete_local_ref(o);
            hash
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_only_inserted_methods() {
        let t = TrackedMethods::new();
        for i in 1..40usize {
            t.insert((i * 0x1008) as jmethodID, Call::Join);
        }
        t.insert(0x77 as jmethodID, Call::Sleep);
        assert_eq!(t.lookup(0x77 as jmethodID), Some(Call::Sleep));
        assert_eq!(t.lookup((5 * 0x1008) as jmethodID), Some(Call::Join));
        assert_eq!(t.lookup(0x78 as jmethodID), None);
    }

    #[test]
    fn classifies_every_overload_by_name() {
        assert_eq!(
            Call::classify("Ljava/util/concurrent/Semaphore;", "tryAcquire", "()Z"),
            Some(Call::Acquire)
        );
        assert_eq!(
            Call::classify("Ljava/lang/Object;", "hashCode", "()I"),
            None
        );
        assert_eq!(
            Call::classify("Ljava/lang/Thread;", "sleep", "(J)V"),
            Some(Call::Sleep)
        );
        let rl = "Ljava/util/concurrent/locks/ReentrantLock;";
        assert_eq!(
            Call::classify(rl, "tryLock", "()Z"),
            Some(Call::Lock(LockClass::Reentrant, LockCall::TryLock))
        );
        assert_eq!(
            Call::classify(rl, "tryLock", "(JLjava/util/concurrent/TimeUnit;)Z"),
            Some(Call::Lock(LockClass::Reentrant, LockCall::TryLockTimed))
        );
        assert_eq!(
            Call::classify(
                rl,
                "newCondition",
                "()Ljava/util/concurrent/locks/Condition;"
            ),
            None
        );
        assert_eq!(
            Call::classify(LOCK_SUPPORT, "parkNanos", "(Ljava/lang/Object;J)V"),
            Some(Call::Park { blocker: true })
        );
        assert_eq!(
            Call::classify(LOCK_SUPPORT, "parkNanos", "(J)V"),
            Some(Call::Park { blocker: false })
        );
        assert_eq!(
            Call::classify(CONDITION_OBJECT, "awaitNanos", "(J)J"),
            Some(Call::Await)
        );
    }

    #[test]
    fn every_call_survives_the_method_table() {
        let mut all: Vec<Call> = SIMPLE.to_vec();
        for c in LockClass::ALL {
            for k in LockCall::ALL {
                all.push(Call::Lock(c, k));
            }
        }
        for call in all {
            assert_ne!(call.to_u8(), 0, "{call:?}");
            assert_eq!(Call::from_u8(call.to_u8()), Some(call));
        }
        assert_eq!(Call::from_u8(0), None);
    }

    #[test]
    fn a_lock_acquisition_ends_as_it_returned() {
        let lock = Call::Lock(LockClass::ReadView, LockCall::Lock);
        let try_lock = Call::Lock(LockClass::Reentrant, LockCall::TryLock);
        let timed = Call::Lock(LockClass::WriteView, LockCall::TryLockTimed);
        let unlock = Call::Lock(LockClass::Reentrant, LockCall::Unlock);
        assert_eq!(lock.outcome(false, false), Some(Kind::LockAcquired));
        assert_eq!(lock.outcome(true, false), Some(Kind::LockInterrupted));
        assert_eq!(try_lock.outcome(false, true), Some(Kind::LockAcquired));
        assert_eq!(try_lock.outcome(false, false), Some(Kind::LockFailed));
        assert_eq!(timed.outcome(false, false), Some(Kind::LockTimedOut));
        assert_eq!(timed.outcome(true, false), Some(Kind::LockInterrupted));
        assert_eq!(unlock.outcome(false, false), Some(Kind::LockRelease));
        assert_eq!(unlock.outcome(true, false), None);
        assert_eq!(unlock.entry_kind(), None);
        assert_eq!(
            Call::Await.outcome(true, false),
            Some(Kind::ConditionAwaited)
        );
    }
}
