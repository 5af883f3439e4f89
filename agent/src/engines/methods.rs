//! JVMTI event mode's event source: MethodEntry/MethodExit of the tracked JDK methods
//! (`Object.wait`/`notify`/`notifyAll`, `Thread.start`/`join`/`sleep`, `Semaphore`), for
//! JVMs or programs that are not instrumented.
//!
//! MethodEntry/MethodExit fire for every method the program runs, so the filter must be a
//! pointer lookup, never a name comparison (the original Orca measured name checks at 1000x
//! slower). The table is filled when `java.lang.Object`, `java.lang.Thread` and
//! `java.util.concurrent.Semaphore` are prepared (or found already loaded at VMInit).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use jni_sys::{jclass, jmethodID};

use super::{report, LOCAL_FRAME};
use crate::events::{Kind, ReportCode};
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::threads::OpenCall;
use crate::recorder::Recorder;

/// A tracked JDK call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Call {
    Wait = 1,
    Notify,
    NotifyAll,
    Start,
    Join,
    Sleep,
    Acquire,
    Release,
}

impl Call {
    fn from_u8(v: u8) -> Option<Call> {
        Some(match v {
            1 => Call::Wait,
            2 => Call::Notify,
            3 => Call::NotifyAll,
            4 => Call::Start,
            5 => Call::Join,
            6 => Call::Sleep,
            7 => Call::Acquire,
            8 => Call::Release,
            _ => return None,
        })
    }

    /// The event written when the call starts.
    pub fn entry_kind(self) -> Kind {
        match self {
            Call::Wait => Kind::ObjectWait,
            Call::Notify => Kind::ObjectNotify,
            Call::NotifyAll => Kind::ObjectNotifyAll,
            Call::Start => Kind::ThreadStart,
            Call::Join => Kind::ThreadJoin,
            Call::Sleep => Kind::ThreadSleep,
            Call::Acquire => Kind::SemaphoreAcquire,
            Call::Release => Kind::SemaphoreRelease,
        }
    }

    /// The event written when the call ends, for blocking calls.
    pub fn exit_kind(self) -> Option<Kind> {
        match self {
            Call::Wait => Some(Kind::ObjectWaited),
            Call::Join => Some(Kind::ThreadJoined),
            Call::Sleep => Some(Kind::ThreadSlept),
            Call::Acquire => Some(Kind::SemaphoreAcquired),
            _ => None,
        }
    }

    /// Whether the event names the receiver (`Thread.sleep` is static).
    pub fn has_receiver(self) -> bool {
        self != Call::Sleep
    }

    /// Whether the receiver is a monitor the caller must own (`Object.wait`/`notify`/`notifyAll`).
    pub fn is_monitor_call(self) -> bool {
        matches!(self, Call::Wait | Call::Notify | Call::NotifyAll)
    }

    /// The tracker's report code for the start of this call (instrumentation mode's hooks).
    pub fn report_code(self) -> ReportCode {
        match self {
            Call::Wait => ReportCode::ObjectWait,
            Call::Notify => ReportCode::ObjectNotify,
            Call::NotifyAll => ReportCode::ObjectNotifyAll,
            Call::Start => ReportCode::ThreadStart,
            Call::Join => ReportCode::ThreadJoin,
            Call::Sleep => ReportCode::ThreadSleep,
            Call::Acquire => ReportCode::SemaphoreAcquire,
            Call::Release => ReportCode::SemaphoreRelease,
        }
    }

    /// Which call a method is, by class signature (`Ljava/lang/Thread;`), name and
    /// descriptor: the entry of [`TRACKED`] that matches.
    pub fn classify(class_signature: &str, method_name: &str, descriptor: &str) -> Option<Call> {
        let class = class_signature.strip_prefix('L')?.strip_suffix(';')?;
        TRACKED
            .iter()
            .find(|t| t.matches(class, method_name, descriptor))
            .map(|t| t.call)
    }

    /// Whether a class with this signature declares tracked methods.
    pub fn is_tracked_class(class_signature: &str) -> bool {
        let Some(class) = class_signature
            .strip_prefix('L')
            .and_then(|c| c.strip_suffix(';'))
        else {
            return false;
        };
        TRACKED.iter().any(|t| t.class == class)
    }
}

/// A tracked JDK method (or every method of that name, without a descriptor) and the call
/// it is.
#[derive(Clone, Copy, Debug)]
pub struct Tracked {
    /// internal name of the declaring class
    pub class: &'static str,
    pub name: &'static str,
    /// `None`: every overload, including those a later JDK adds (`join(Duration)`)
    pub descriptor: Option<&'static str>,
    pub call: Call,
}

impl Tracked {
    /// Whether this entry names the method.
    pub fn matches(&self, class: &str, name: &str, descriptor: &str) -> bool {
        self.class == class && self.name == name && self.descriptor.is_none_or(|d| d == descriptor)
    }
}

const fn t(class: &'static str, name: &'static str, call: Call) -> Tracked {
    Tracked {
        class,
        name,
        descriptor: None,
        call,
    }
}

const OBJECT: &str = "java/lang/Object";
const THREAD: &str = "java/lang/Thread";
const SEMAPHORE: &str = "java/util/concurrent/Semaphore";

/// THE table of tracked JDK methods, for both modes. JVMTI mode filters MethodEntry and
/// MethodExit with it; instrumentation mode instruments these methods themselves at entry
/// and every exit (`orca_rewriter::MethodHook`), and redirects call sites only for those that
/// are native in the running JVM (see rewriter/README.md, "Tracked JDK methods"). To track
/// another method: one line here (a new [`Call`] if it reports something new).
pub static TRACKED: &[Tracked] = &[
    t(OBJECT, "wait", Call::Wait),
    t(OBJECT, "notify", Call::Notify),
    t(OBJECT, "notifyAll", Call::NotifyAll),
    t(THREAD, "start", Call::Start),
    t(THREAD, "join", Call::Join),
    t(THREAD, "sleep", Call::Sleep),
    t(SEMAPHORE, "acquire", Call::Acquire),
    t(SEMAPHORE, "acquireUninterruptibly", Call::Acquire),
    t(SEMAPHORE, "tryAcquire", Call::Acquire),
    t(SEMAPHORE, "release", Call::Release),
];

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
                    self.calls[i].store(call as u8, Ordering::Release);
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

/// The method-event engine: the method-ID cache the hot path filters with.
#[derive(Default)]
pub struct Methods {
    tracked: TrackedMethods,
}

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
        let object = receiver(&rec.jvmti, jni, call);
        let frames = rec.stack(jni, state, 1, false);
        if let Some(kind) = call.exit_kind() {
            state.open = Some(OpenCall {
                kind,
                object,
                frames: frames.clone(),
            });
        }
        rec.push(nanos, call.entry_kind(), state.hash, object, frames);
    }

    /// MethodExit, also on exit by exception.
    pub fn exit(&self, rec: &Recorder, thread: jthread, method: jmethodID) {
        if self.tracked.lookup(method).is_none() {
            return;
        }
        let nanos = now_nanos();
        if let Some(state) = rec.state(thread) {
            rec.end_call(nanos, state);
        }
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
    }
}
