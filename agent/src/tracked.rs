//! The method-ID cache of JVMTI event mode: which jmethodIDs are the tracked JDK methods.
//!
//! MethodEntry/MethodExit fire for every method the program runs, so the filter must be a
//! pointer lookup, never a name comparison (the original Orca measured name checks at 1000x
//! slower). The table is filled when `java.lang.Object`, `java.lang.Thread` and
//! `java.util.concurrent.Semaphore` are prepared (or found already loaded at VMInit).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use jni_sys::jmethodID;

use crate::writer::Kind;

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

    /// Which call a method of a tracked class is, by class signature and method name.
    pub fn classify(class_signature: &str, method_name: &str) -> Option<Call> {
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
            _ => None,
        }
    }

    /// Whether a class with this signature declares tracked methods.
    pub fn is_tracked_class(class_signature: &str) -> bool {
        matches!(
            class_signature,
            "Ljava/lang/Object;" | "Ljava/lang/Thread;" | "Ljava/util/concurrent/Semaphore;"
        )
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
            Call::classify("Ljava/util/concurrent/Semaphore;", "tryAcquire"),
            Some(Call::Acquire)
        );
        assert_eq!(Call::classify("Ljava/lang/Object;", "hashCode"), None);
        assert_eq!(
            Call::classify("Ljava/lang/Thread;", "sleep"),
            Some(Call::Sleep)
        );
    }
}
