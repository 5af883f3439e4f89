//! JVMTI event mode's event source: MethodEntry/MethodExit of the tracked JDK methods
//! (`Object.wait`/`notify`/`notifyAll`, `Thread.start`/`join`/`sleep`, `Semaphore`), for
//! JVMs or programs that are not instrumented.
//!
//! MethodEntry/MethodExit fire for every method the program runs, so the filter must be a
//! pointer lookup, never a name comparison (the original Orca measured name checks at 1000x
//! slower). The table is filled when `java.lang.Object`, `java.lang.Thread` and
//! `java.util.concurrent.Semaphore` are prepared (or found already loaded at VMInit).

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use std::ffi::CStr;

use jni_sys::{jclass, jfieldID, jmethodID, jobject};

use super::{report, LOCAL_FRAME};
use crate::events::{LockOutcome, ReportCode};
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::ids;
use crate::recorder::names;
use crate::recorder::threads::{OpenCall, OpenExtra, ThreadState};
use crate::recorder::{JucLine, Recorder};
use orca_format::EventKind;

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
    /// `StampedLock`'s write methods: exclusive, the lock its own synchronizer.
    StampedWrite,
    /// `StampedLock`'s read methods: shared.
    StampedRead,
    /// `StampedLock$WriteLockView` (`asWriteLock()`): its `this$0` the `StampedLock`.
    StampedWriteView,
    /// `StampedLock$ReadLockView` (`asReadLock()`).
    StampedReadView,
    /// `AbstractQueuedSynchronizer`'s exclusive acquire and release, which every lock built on
    /// it calls (a program's own `Lock` too; those above call them inside their own calls, not
    /// reported twice): exclusive, its own synchronizer.
    AqsExclusive,
}

impl LockClass {
    const ALL: [LockClass; 8] = [
        LockClass::Reentrant,
        LockClass::ReadView,
        LockClass::WriteView,
        LockClass::StampedWrite,
        LockClass::StampedRead,
        LockClass::StampedWriteView,
        LockClass::StampedReadView,
        LockClass::AqsExclusive,
    ];

    /// The `<mode>` letter.
    pub fn mode(self) -> u8 {
        match self {
            LockClass::ReadView | LockClass::StampedRead | LockClass::StampedReadView => b'R',
            _ => b'W',
        }
    }

    /// Whether the synchronizer is an `AbstractQueuedSynchronizer`, with an exclusive owner
    /// (a `StampedLock` names none).
    fn has_owner(self) -> bool {
        matches!(
            self,
            LockClass::Reentrant
                | LockClass::ReadView
                | LockClass::WriteView
                | LockClass::AqsExclusive
        )
    }

    /// How the thread's exclusive hold count of a synchronizer of this class is read, for a
    /// lock call that ended by an exception ([`done_anyway`]); `None`: not at all (a read
    /// view's shared holds are counted per thread in a `ThreadLocal` of the lock's, a
    /// `StampedLock` names no owner).
    fn holds(self) -> Option<Holds> {
        match self {
            LockClass::Reentrant => Some(Holds::State),
            LockClass::WriteView => Some(Holds::ExclusiveCount),
            LockClass::AqsExclusive => Some(Holds::OwnerOnly),
            _ => None,
        }
    }

    /// The field of the hooked class that holds the synchronizer (`this`: the object itself)
    /// and its type.
    fn sync_field_name(self) -> (&'static CStr, &'static CStr) {
        match self {
            LockClass::Reentrant => (c"sync", c"Ljava/util/concurrent/locks/ReentrantLock$Sync;"),
            LockClass::ReadView | LockClass::WriteView => (
                c"sync",
                c"Ljava/util/concurrent/locks/ReentrantReadWriteLock$Sync;",
            ),
            LockClass::StampedWrite | LockClass::StampedRead | LockClass::AqsExclusive => {
                (c"this", c"")
            }
            LockClass::StampedWriteView | LockClass::StampedReadView => {
                (c"this$0", c"Ljava/util/concurrent/locks/StampedLock;")
            }
        }
    }

    fn sync_descriptor(self) -> (&'static str, &'static str) {
        let (n, d) = self.sync_field_name();
        (n.to_str().unwrap_or(""), d.to_str().unwrap_or(""))
    }

    /// The synchronizer itself is the receiver (no field to read).
    fn is_own_sync(self) -> bool {
        self.sync_field_name().0 == c"this"
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
    /// `StampedLock.tryUnlockWrite()`/`tryUnlockRead()`: a release when it returns true.
    TryUnlock,
}

impl LockCall {
    const ALL: [LockCall; 5] = [
        LockCall::Lock,
        LockCall::TryLock,
        LockCall::TryLockTimed,
        LockCall::Unlock,
        LockCall::TryUnlock,
    ];

    /// A release (`unlock`, `tryUnlock*`), not an acquisition.
    pub fn is_release(self) -> bool {
        matches!(self, LockCall::Unlock | LockCall::TryUnlock)
    }
}

/// Numbers per lock class in a lock call's number (`Call::to_u8`): room for [`LockCall::ALL`]
/// (the tracker's `L_CALL_BITS`, as it decodes a lock report).
const CALLS_PER_CLASS: usize = 1 << crate::events::LOCK_CALL_BITS;

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
    /// `AbstractQueuedSynchronizer`'s acquisition slow path (instrumentation mode only): entered
    /// inside a lock call, it says the lock was contended. Written as nothing.
    LockSlow,
}

const SIMPLE: [Call; 15] = [
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
    Call::LockSlow,
];

impl Call {
    /// The number stored in the method table (never 0, which marks an empty slot).
    fn to_u8(self) -> u8 {
        match self {
            Call::Lock(c, k) => {
                let ci = LockClass::ALL.iter().position(|x| *x == c).unwrap_or(0);
                let ki = LockCall::ALL.iter().position(|x| *x == k).unwrap_or(0);
                64 + (ci * CALLS_PER_CLASS + ki) as u8
            }
            other => SIMPLE.iter().position(|x| *x == other).unwrap_or(0) as u8 + 1,
        }
    }

    pub(crate) fn from_u8(v: u8) -> Option<Call> {
        if v >= 64 {
            let i = (v - 64) as usize;
            return Some(Call::Lock(
                *LockClass::ALL.get(i / CALLS_PER_CLASS)?,
                *LockCall::ALL.get(i % CALLS_PER_CLASS)?,
            ));
        }
        SIMPLE.get((v as usize).checked_sub(1)?).copied()
    }

    /// The event written when the call starts (`None`: written at its end only).
    pub fn entry_kind(self) -> Option<EventKind> {
        Some(match self {
            Call::Wait => EventKind::ObjectWait,
            Call::Notify => EventKind::ObjectNotify,
            Call::NotifyAll => EventKind::ObjectNotifyAll,
            Call::Start => EventKind::ThreadStart,
            Call::Join => EventKind::ThreadJoin,
            Call::Sleep => EventKind::ThreadSleep,
            Call::Acquire => EventKind::SemaphoreAcquire,
            Call::Release => EventKind::SemaphoreRelease,
            Call::Lock(_, k) if k.is_release() => return None,
            Call::Lock(..) => EventKind::LockAcquire,
            Call::Await => EventKind::ConditionAwait,
            Call::Signal => EventKind::ConditionSignal,
            Call::SignalAll => EventKind::ConditionSignalAll,
            Call::Park { .. } => EventKind::ThreadPark,
            Call::Unpark => EventKind::ThreadUnpark,
            Call::LockSlow => return None,
        })
    }

    /// The event written when the call ends, for blocking calls (for a lock acquisition, the
    /// successful one; [`Call::outcome`] picks the others).
    pub fn exit_kind(self) -> Option<EventKind> {
        match self {
            Call::Wait => Some(EventKind::ObjectWaited),
            Call::Join => Some(EventKind::ThreadJoined),
            Call::Sleep => Some(EventKind::ThreadSlept),
            Call::Acquire => Some(EventKind::SemaphoreAcquired),
            Call::Lock(_, k) if k.is_release() => Some(EventKind::LockRelease),
            Call::Lock(..) => Some(EventKind::LockAcquired),
            Call::Await => Some(EventKind::ConditionAwaited),
            Call::Park { .. } => Some(EventKind::ThreadParked),
            _ => None,
        }
    }

    /// The exit event of a call that ended by an exception (`thrown`) or returned the
    /// boolean `returned`: a lock acquisition's outcome, an `unlock` that threw writes
    /// nothing; every other call writes its [`Call::exit_kind`].
    pub fn outcome(self, thrown: bool, returned: bool) -> Option<EventKind> {
        match self {
            Call::Lock(_, LockCall::Unlock) if thrown => None,
            Call::Lock(_, LockCall::TryUnlock) if thrown || !returned => None,
            Call::Lock(_, k) if !k.is_release() => Some(if thrown {
                EventKind::LockInterrupted
            } else if returned || k == LockCall::Lock {
                EventKind::LockAcquired
            } else if k == LockCall::TryLock {
                EventKind::LockFailed
            } else {
                EventKind::LockTimedOut
            }),
            other => other.exit_kind(),
        }
    }

    /// Whether a call that returned `value` (its bits) succeeded: a `StampedLock` method
    /// returns a stamp, 0 for failure; the others a boolean (its low byte; the rest of the
    /// bits are undefined).
    fn returned_true(self, value: u64) -> bool {
        match self {
            Call::Lock(StampedWrite | StampedRead, k) if !k.is_release() => value != 0,
            _ => value & 0xFF != 0,
        }
    }

    /// Whether the event names the receiver (`Thread.sleep` is static, so are `LockSupport`'s
    /// methods, whose object is an argument).
    pub fn has_receiver(self) -> bool {
        !matches!(self, Call::Sleep | Call::Park { .. } | Call::Unpark)
    }

    /// Whether the receiver is a thread (`Thread.start`, `join`): named by its thread ID.
    pub fn is_thread_call(self) -> bool {
        matches!(self, Call::Start | Call::Join)
    }

    /// Whether the receiver is a monitor the caller must own (`Object.wait`/`notify`/`notifyAll`).
    pub fn is_monitor_call(self) -> bool {
        matches!(self, Call::Wait | Call::Notify | Call::NotifyAll)
    }

    /// The number a hooked method passes to the tracker (instrumentation mode): the
    /// tracker's report code, or for a j.u.c. call [`JUC_HOOK_BASE`] plus its number here
    /// (the tracker passes it through untouched; only the agent reads it).
    pub fn hook_report(self) -> i32 {
        let code = match self {
            Call::Wait => ReportCode::ObjectWait,
            Call::Notify => ReportCode::ObjectNotify,
            Call::NotifyAll => ReportCode::ObjectNotifyAll,
            Call::Start => ReportCode::ThreadStart,
            Call::Join => ReportCode::ThreadJoin,
            Call::Sleep => ReportCode::ThreadSleep,
            Call::Acquire => ReportCode::SemaphoreAcquire,
            Call::Release => ReportCode::SemaphoreRelease,
            juc => return JUC_HOOK_BASE + juc.to_u8() as i32,
        };
        code as i32
    }

    /// The j.u.c. call a hook report stands for (see [`Call::hook_report`]).
    pub fn from_hook_report(report: i32) -> Option<Call> {
        let n = u8::try_from(report.checked_sub(JUC_HOOK_BASE)?).ok()?;
        Call::from_u8(n).filter(|c| c.is_juc())
    }

    /// Whether this is a `java.util.concurrent.locks` call (its lines carry extra fields).
    pub fn is_juc(self) -> bool {
        matches!(
            self,
            Call::Lock(..)
                | Call::Await
                | Call::Signal
                | Call::SignalAll
                | Call::Park { .. }
                | Call::Unpark
                | Call::LockSlow
        )
    }

    /// The field of a hooked lock class holding its synchronizer (`MethodHook::sync_field`):
    /// `(name, descriptor)`.
    pub fn sync_field(self) -> Option<(&'static str, &'static str)> {
        match self {
            Call::Lock(class, _) => Some(class.sync_descriptor()),
            _ => None,
        }
    }

    /// Which call a method is, by class signature (`Ljava/lang/Thread;`), name and
    /// descriptor: the entry of [`TRACKED`] that matches.
    pub fn classify(class_signature: &str, method_name: &str, descriptor: &str) -> Option<Call> {
        let class = class_signature.strip_prefix('L')?.strip_suffix(';')?;
        tracked()
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
        tracked().any(|t| t.class == class)
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

/// An entry for one overload.
const fn d(
    class: &'static str,
    name: &'static str,
    descriptor: &'static str,
    call: Call,
) -> Tracked {
    Tracked {
        class,
        name,
        descriptor: Some(descriptor),
        call,
    }
}

const OBJECT: &str = "java/lang/Object";
const THREAD: &str = "java/lang/Thread";
const SEMAPHORE: &str = "java/util/concurrent/Semaphore";
const RL: &str = "java/util/concurrent/locks/ReentrantLock";
const READ: &str = "java/util/concurrent/locks/ReentrantReadWriteLock$ReadLock";
const WRITE: &str = "java/util/concurrent/locks/ReentrantReadWriteLock$WriteLock";
const CONDITION: &str = "java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject";
const SUPPORT: &str = "java/util/concurrent/locks/LockSupport";
const AQS: &str = "java/util/concurrent/locks/AbstractQueuedSynchronizer";
const STAMPED: &str = "java/util/concurrent/locks/StampedLock";
const S_READ: &str = "java/util/concurrent/locks/StampedLock$ReadLockView";
const S_WRITE: &str = "java/util/concurrent/locks/StampedLock$WriteLockView";
const TIMED_J: &str = "(JLjava/util/concurrent/TimeUnit;)J";
const TIMED: &str = "(JLjava/util/concurrent/TimeUnit;)Z";

/// Hook reports at and above this number are j.u.c. calls ([`Call::hook_report`]), far above
/// the tracker's report codes.
pub const JUC_HOOK_BASE: i32 = 1024;

use LockCall::TryUnlock;
use LockCall::{Lock as Acquire, TryLock, TryLockTimed, Unlock};
use LockClass::{
    AqsExclusive, ReadView, Reentrant, StampedRead, StampedReadView, StampedWrite,
    StampedWriteView, WriteView,
};

/// THE table of tracked JDK methods, for both modes. JVMTI mode filters MethodEntry and
/// MethodExit with it; instrumentation mode instruments these methods themselves at entry
/// and every exit (`orca_rewriter::MethodHook`), and redirects call sites only for those that
/// are native in the running JVM (see rewriter/README.md, "Tracked JDK methods"). To track
/// another method: one line here (a new [`Call`] if it reports something new).
/// Whether the `java.util.concurrent` entries of [`TRACKED`] are in use (option `juc=yes`):
/// set once at start-up, before any class is hooked or any method event filtered.
static JUC: AtomicBool = AtomicBool::new(false);

/// Takes the `juc` option (at start-up).
pub fn set_juc(on: bool) {
    JUC.store(on, Ordering::Relaxed);
}

/// The tracked methods in use: [`TRACKED`], less its j.u.c. entries without `juc=yes`.
pub fn tracked() -> impl Iterator<Item = &'static Tracked> {
    tracked_with(JUC.load(Ordering::Relaxed))
}

fn tracked_with(juc: bool) -> impl Iterator<Item = &'static Tracked> {
    TRACKED.iter().filter(move |t| juc || !t.call.is_juc())
}

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
    // java.util.concurrent.locks: the Lock methods of ReentrantLock and both views of
    // ReentrantReadWriteLock (tryLock's overloads end differently), AQS conditions, parks.
    d(RL, "lock", "()V", Call::Lock(Reentrant, Acquire)),
    d(
        RL,
        "lockInterruptibly",
        "()V",
        Call::Lock(Reentrant, Acquire),
    ),
    d(RL, "tryLock", "()Z", Call::Lock(Reentrant, TryLock)),
    d(RL, "tryLock", TIMED, Call::Lock(Reentrant, TryLockTimed)),
    d(RL, "unlock", "()V", Call::Lock(Reentrant, Unlock)),
    d(READ, "lock", "()V", Call::Lock(ReadView, Acquire)),
    d(
        READ,
        "lockInterruptibly",
        "()V",
        Call::Lock(ReadView, Acquire),
    ),
    d(READ, "tryLock", "()Z", Call::Lock(ReadView, TryLock)),
    d(READ, "tryLock", TIMED, Call::Lock(ReadView, TryLockTimed)),
    d(READ, "unlock", "()V", Call::Lock(ReadView, Unlock)),
    d(WRITE, "lock", "()V", Call::Lock(WriteView, Acquire)),
    d(
        WRITE,
        "lockInterruptibly",
        "()V",
        Call::Lock(WriteView, Acquire),
    ),
    d(WRITE, "tryLock", "()Z", Call::Lock(WriteView, TryLock)),
    d(WRITE, "tryLock", TIMED, Call::Lock(WriteView, TryLockTimed)),
    d(WRITE, "unlock", "()V", Call::Lock(WriteView, Unlock)),
    t(CONDITION, "await", Call::Await),
    t(CONDITION, "awaitNanos", Call::Await),
    t(CONDITION, "awaitUninterruptibly", Call::Await),
    t(CONDITION, "awaitUntil", Call::Await),
    t(CONDITION, "signal", Call::Signal),
    t(CONDITION, "signalAll", Call::SignalAll),
    d(SUPPORT, "park", "()V", Call::Park { blocker: false }),
    d(SUPPORT, "parkNanos", "(J)V", Call::Park { blocker: false }),
    d(SUPPORT, "parkUntil", "(J)V", Call::Park { blocker: false }),
    d(
        SUPPORT,
        "park",
        "(Ljava/lang/Object;)V",
        Call::Park { blocker: true },
    ),
    d(
        SUPPORT,
        "parkNanos",
        "(Ljava/lang/Object;J)V",
        Call::Park { blocker: true },
    ),
    d(
        SUPPORT,
        "parkUntil",
        "(Ljava/lang/Object;J)V",
        Call::Park { blocker: true },
    ),
    d(SUPPORT, "unpark", "(Ljava/lang/Thread;)V", Call::Unpark),
    d(
        AQS,
        "acquire",
        "(Ljava/util/concurrent/locks/AbstractQueuedSynchronizer$Node;IZZZJ)I",
        Call::LockSlow,
    ),
    // Any lock built on AQS: its exclusive acquisitions and releases (shared ones are
    // latches and semaphores as often as read locks: not locks by themselves).
    d(AQS, "acquire", "(I)V", Call::Lock(AqsExclusive, Acquire)),
    d(
        AQS,
        "acquireInterruptibly",
        "(I)V",
        Call::Lock(AqsExclusive, Acquire),
    ),
    d(
        AQS,
        "tryAcquireNanos",
        "(IJ)Z",
        Call::Lock(AqsExclusive, TryLockTimed),
    ),
    d(AQS, "release", "(I)Z", Call::Lock(AqsExclusive, Unlock)),
    // StampedLock: its read and write locks (stamps; optimistic reads and conversions are
    // not locks of their own, docs/MODES.md), their slow paths, and the Lock views.
    d(
        STAMPED,
        "writeLock",
        "()J",
        Call::Lock(StampedWrite, Acquire),
    ),
    d(
        STAMPED,
        "writeLockInterruptibly",
        "()J",
        Call::Lock(StampedWrite, Acquire),
    ),
    d(
        STAMPED,
        "tryWriteLock",
        "()J",
        Call::Lock(StampedWrite, TryLock),
    ),
    d(
        STAMPED,
        "tryWriteLock",
        TIMED_J,
        Call::Lock(StampedWrite, TryLockTimed),
    ),
    d(
        STAMPED,
        "unlockWrite",
        "(J)V",
        Call::Lock(StampedWrite, Unlock),
    ),
    d(
        STAMPED,
        "tryUnlockWrite",
        "()Z",
        Call::Lock(StampedWrite, TryUnlock),
    ),
    d(STAMPED, "readLock", "()J", Call::Lock(StampedRead, Acquire)),
    d(
        STAMPED,
        "readLockInterruptibly",
        "()J",
        Call::Lock(StampedRead, Acquire),
    ),
    d(
        STAMPED,
        "tryReadLock",
        "()J",
        Call::Lock(StampedRead, TryLock),
    ),
    d(
        STAMPED,
        "tryReadLock",
        TIMED_J,
        Call::Lock(StampedRead, TryLockTimed),
    ),
    d(
        STAMPED,
        "unlockRead",
        "(J)V",
        Call::Lock(StampedRead, Unlock),
    ),
    d(
        STAMPED,
        "tryUnlockRead",
        "()Z",
        Call::Lock(StampedRead, TryUnlock),
    ),
    d(STAMPED, "acquireWrite", "(ZZJ)J", Call::LockSlow),
    d(STAMPED, "acquireRead", "(ZZJ)J", Call::LockSlow),
    d(
        S_WRITE,
        "lock",
        "()V",
        Call::Lock(StampedWriteView, Acquire),
    ),
    d(
        S_WRITE,
        "lockInterruptibly",
        "()V",
        Call::Lock(StampedWriteView, Acquire),
    ),
    d(
        S_WRITE,
        "tryLock",
        "()Z",
        Call::Lock(StampedWriteView, TryLock),
    ),
    d(
        S_WRITE,
        "tryLock",
        TIMED,
        Call::Lock(StampedWriteView, TryLockTimed),
    ),
    d(
        S_WRITE,
        "unlock",
        "()V",
        Call::Lock(StampedWriteView, Unlock),
    ),
    d(S_READ, "lock", "()V", Call::Lock(StampedReadView, Acquire)),
    d(
        S_READ,
        "lockInterruptibly",
        "()V",
        Call::Lock(StampedReadView, Acquire),
    ),
    d(
        S_READ,
        "tryLock",
        "()Z",
        Call::Lock(StampedReadView, TryLock),
    ),
    d(
        S_READ,
        "tryLock",
        TIMED,
        Call::Lock(StampedReadView, TryLockTimed),
    ),
    d(S_READ, "unlock", "()V", Call::Lock(StampedReadView, Unlock)),
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
                match Call::classify(&sig, &name, &descriptor) {
                    // the slow path means something only to the tracker's own lock records
                    Some(Call::LockSlow) | None => {}
                    Some(call) => self.tracked.insert(m, call),
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
        if call.is_juc() {
            // The receiver, or a static method's first argument (park's blocker, unpark's
            // thread); park() without one has none.
            let subject = match call {
                Call::Park { blocker: false } => Ok(std::ptr::null_mut()),
                Call::Park { blocker: true } | Call::Unpark => rec.jvmti.local_object(0, 0),
                _ => rec.jvmti.local_instance(0),
            };
            let subject = subject.unwrap_or(std::ptr::null_mut());
            juc_entry(rec, jni, state, (call, nanos), subject, None);
            if !subject.is_null() {
                jni.delete_local_ref(subject);
            }
            return;
        }
        let object = receiver(rec, jni, call);
        let frames = rec.stack(jni, state, 1, false);
        if let Some(kind) = call.exit_kind() {
            state.open = Some(OpenCall {
                kind,
                object,
                frames: frames.clone(),
                extra: OpenExtra::None,
                stamp: None,
                lock_call: None,
            });
        }
        if let Some(kind) = call.entry_kind() {
            rec.push(nanos, kind, state.hash, object, frames);
        }
    }

    /// MethodExit, also on exit by exception (`thrown`); `value`: the bits of the value
    /// returned (meaningful for the j.u.c. calls that return a boolean or a stamp only).
    pub fn exit(
        &self,
        rec: &Recorder,
        jni: Jni,
        thread: jthread,
        method: jmethodID,
        thrown: bool,
        value: u64,
    ) {
        let Some(call) = self.tracked.lookup(method) else {
            return;
        };
        let returned_true = !thrown && call.returned_true(value);
        let nanos = now_nanos();
        if let Some(state) = rec.state(thread) {
            // At depth 1 this exit is the outermost call's, whose entry opened the pair.
            let done = thrown && state.depth == 1 && thrown_but_done(rec, jni, state, call);
            rec.end_call_as(nanos, state, |_| {
                call.outcome(thrown && !done, returned_true || done)
            });
        }
    }
}

/// JVMTI mode: whether the outermost call ending now by an exception is a lock call that did
/// what it was for all the same ([`done_anyway`]), counted from the thread's lines. Its
/// receiver is read from the exiting frame with `GetLocalInstance`, a VM operation, paid on
/// this rare path only.
fn thrown_but_done(rec: &Recorder, jni: Jni, state: &ThreadState, call: Call) -> bool {
    let Call::Lock(class, k) = call else {
        return false;
    };
    if class.holds().is_none() {
        return false;
    }
    let Some(open) = state
        .open
        .as_ref()
        .filter(|o| o.lock_call == Some(call.to_u8()))
    else {
        return false;
    };
    let before = state.juc_holds((open.object, class.mode()));
    let this = match rec.jvmti.local_instance(0) {
        Ok(o) if !o.is_null() => o,
        _ => return false,
    };
    let sync = if class.is_own_sync() {
        this
    } else {
        field_of(jni, this, &class.sync_field())
    };
    let done = done_anyway(rec, jni, (class, k), sync, state.hash, before);
    if sync != this && !sync.is_null() {
        jni.delete_local_ref(sync);
    }
    jni.delete_local_ref(this);
    done
}

/// How a synchronizer says how many times its exclusive owner holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holds {
    /// `ReentrantLock`: AQS's `state` is the count.
    State,
    /// `ReentrantReadWriteLock`: the low bits of `state` (`exclusiveCount`): 16 of an `int`
    /// (an AQS, JDK 17), or 32 of a `long` (an `AbstractQueuedLongSynchronizer`, JDK 25).
    ExclusiveCount,
    /// A program's own lock built on AQS: `state` means what the program says; only the
    /// owner is known.
    OwnerOnly,
}

/// Whether lock call `call` of a lock of `class` (synchronizer `sync`) by thread `me`, which
/// ended by an exception, did what it was for all the same: an acquisition took the lock, an
/// `unlock` released it (one level); `before`: how many times the thread held the lock before
/// the call (in the call's mode), by the agent's own count.
///
/// Why: the exception does not say the call did nothing. The critical sections of j.u.c.
/// locks are `@ReservedStackAccess` (`ReentrantLock$Sync.lock()`, `tryRelease`,
/// `ReentrantReadWriteLock$Sync.tryAcquire`, ...): a StackOverflowError inside one is thrown
/// only when it returns, so `lock()` throws it with the lock taken and `unlock()` with it
/// released (the JVM warns "Potentially dangerous stack overflow in ReservedStackAccess
/// annotated method"). So the lock is read: taken means the thread owns it now and holds it
/// once more than before (a reentrant acquisition that threw before it counted owns it as
/// before); released, once less (none: it does not own it). For a program's own AQS the
/// count cannot be read: taken when the thread owns it now and held it not at all before,
/// released when it held it once and owns it no more. Anything else, and what cannot be read
/// (a read view, a `StampedLock`), did nothing, as the exception says. Only fields are read,
/// never Java code run; with an exception pending (JNI allows no reads then) nothing is.
pub fn done_anyway(
    rec: &Recorder,
    jni: Jni,
    (class, call): (LockClass, LockCall),
    sync: jobject,
    me: u32,
    before: u32,
) -> bool {
    let Some(holds) = class.holds() else {
        return false;
    };
    if sync.is_null() || me == 0 || jni.exception_pending() {
        return false;
    }
    let owned = owner_hash(&rec.jvmti, jni, sync) == me;
    let now = match holds {
        _ if !owned => Some(0),
        Holds::OwnerOnly => None,
        Holds::State => int_field_of(jni, sync, &STATE).map(|s| s as u32),
        Holds::ExclusiveCount => match field_id_of(jni, sync, &RW_STATE_INT) {
            Some(id) => Some(jni.int_field(sync, id) as u32 & 0xFFFF),
            None => {
                field_id_of(jni, sync, &RW_STATE_LONG).map(|id| jni.long_field(sync, id) as u32)
            }
        },
    };
    match (call, now) {
        (LockCall::Unlock, Some(now)) => before > 0 && now == before - 1,
        (LockCall::TryUnlock, _) => false,
        (_, Some(now)) => now == before.saturating_add(1),
        // owned, by an unknown count
        (LockCall::Unlock, None) => false,
        (_, None) => before == 0,
    }
}

/// The start of an outermost j.u.c. call, in either mode: its entry line and its open pair.
/// `subject` is the receiver or the static method's first argument (null: none); `hook`:
/// instrumentation mode, with the frames above the caller to skip, where the tracker says
/// how a lock call ended ([`juc_lock_end`]).
pub fn juc_entry(
    rec: &Recorder,
    jni: Jni,
    state: &mut ThreadState,
    (call, nanos): (Call, u64),
    subject: jobject,
    hook: Option<(i32, u32)>,
) {
    let jvmti = &rec.jvmti;
    let (object, owner, extra) = match call {
        Call::Lock(class, k) => {
            // The synchronizer: a field of the receiver, or the receiver (a StampedLock's own
            // methods), or, in instrumentation mode, what the hook passed.
            let sync = if subject.is_null() || class.is_own_sync() || hook.is_some() {
                std::ptr::null_mut()
            } else {
                field_of(jni, subject, &class.sync_field())
            };
            let lock = if sync.is_null() { subject } else { sync };
            let hash = if lock.is_null() {
                0
            } else {
                jvmti.object_hash(lock).unwrap_or(0)
            };
            names::name_object(rec, jni, lock, hash);
            let owner = if !k.is_release() && class.has_owner() && !lock.is_null() {
                owner_hash(jvmti, jni, lock)
            } else {
                0
            };
            if !sync.is_null() {
                jni.delete_local_ref(sync);
            }
            (hash, owner, OpenExtra::Mode(class.mode()))
        }
        Call::Await | Call::Signal | Call::SignalAll if !subject.is_null() => {
            let condition = jvmti.object_hash(subject).unwrap_or(0);
            names::name_object(rec, jni, subject, condition);
            let outer = field_of(jni, subject, &CONDITION_LOCK);
            let lock = if outer.is_null() {
                condition
            } else {
                let h = jvmti.object_hash(outer).unwrap_or(condition);
                jni.delete_local_ref(outer);
                h
            };
            (condition, 0, OpenExtra::Lock(lock))
        }
        Call::Unpark => (ids::thread_id(jvmti, subject), 0, OpenExtra::None),
        _ if !subject.is_null() => {
            let hash = jvmti.object_hash(subject).unwrap_or(0);
            names::name_object(rec, jni, subject, hash);
            (hash, 0, OpenExtra::None)
        }
        _ => (0, 0, OpenExtra::None),
    };
    if let Some((skip, site)) = hook {
        // Instrumentation mode: the tracker's waits and wake-ups, as for Object's (a
        // `signal` from a rewritten call site names its site: no walk to count it).
        match call {
            Call::Await | Call::Acquire => state.wait_epoch = rec.waiters.enter(object, nanos),
            Call::Park { .. } => rec.waiters.park(state.hash, nanos),
            Call::Signal | Call::SignalAll | Call::Unpark | Call::Release => {
                if let Some(kind) = call.entry_kind() {
                    if rec.notify_counted(jni, state, (kind, object), skip, site) {
                        return;
                    }
                }
            }
            _ => {}
        }
    }
    let frames = rec.stack(jni, state, hook.map_or(1, |(skip, _)| skip), false);
    if let Some(kind) = call.exit_kind() {
        let unlock = matches!(call, Call::Lock(_, k) if k.is_release());
        state.open = Some(OpenCall {
            kind,
            object,
            frames: frames.clone(),
            extra,
            stamp: unlock.then_some(nanos),
            lock_call: matches!(call, Call::Lock(..)).then(|| call.to_u8()),
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
        // Instrumentation mode: a wait may turn out short and be counted.
        if hook.is_some()
            && matches!(call, Call::Await | Call::Park { .. } | Call::Acquire)
            && rec.defer_wait(state, &line, &frames)
        {
            return;
        }
        // And so may a contended acquisition (by default the agent hears of a lock call only
        // when it is contended): its line waits for the call's end ([`juc_lock_end`]).
        if hook.is_some() && matches!(call, Call::Lock(_, k) if !k.is_release()) {
            if let Some(line) = rec.defer_contention(state, line.record(frames), |_| None) {
                rec.log.push(line);
            }
            return;
        }
        rec.push_extra(line, frames);
    }
}

/// How a hooked lock method ended, as the tracker saw it (`OrcaLockCalls.lockDone`):
/// returned normally (void), returned true, returned false, threw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Returned,
    True,
    False,
    Threw,
}

impl Outcome {
    /// The tracker's number for it (`OrcaEvents.O_*`, [`LockOutcome`]); any other is a throw.
    pub fn from_i32(n: i32) -> Outcome {
        match LockOutcome::from_i32(n) {
            Some(LockOutcome::Returned) => Outcome::Returned,
            Some(LockOutcome::True) => Outcome::True,
            Some(LockOutcome::False) => Outcome::False,
            Some(LockOutcome::Threw) | None => Outcome::Threw,
        }
    }

    /// The exit line of lock call `call` that ended so (`None`: an `unlock` that threw).
    pub fn kind(self, call: LockCall) -> Option<EventKind> {
        Some(match (call, self) {
            (LockCall::Unlock, Outcome::Threw) => return None,
            (LockCall::Unlock, _) => EventKind::LockRelease,
            (LockCall::TryUnlock, Outcome::True) => EventKind::LockRelease,
            (LockCall::TryUnlock, _) => return None,
            (_, Outcome::Returned | Outcome::True) => EventKind::LockAcquired,
            (_, Outcome::Threw) => EventKind::LockInterrupted,
            (LockCall::TryLock, Outcome::False) => EventKind::LockFailed,
            (_, Outcome::False) => EventKind::LockTimedOut,
        })
    }
}

/// `trace=all`: the hooked lock call the agent was told of ended (`lockEnd`); its exit line,
/// from the exact outcome.
pub fn juc_lock_end(rec: &Recorder, state: &mut ThreadState, nanos: u64, outcome: Outcome) {
    let call = state
        .open
        .as_ref()
        .filter(|_| state.depth == 1)
        .and_then(|o| o.lock_call)
        .and_then(Call::from_u8);
    let kind = match call {
        Some(Call::Lock(_, k)) => outcome.kind(k),
        _ => None,
    };
    // A contended acquisition whose `LockAcquire` was kept back: counted when it was short
    // (or beyond its site's budget), with no line; else its `LockAcquire` is written now.
    if let Some(open) = state.open.as_ref() {
        let mode = match open.extra {
            OpenExtra::Mode(m) => m,
            _ => b'W',
        };
        let acquired = call.is_some() && kind == Some(EventKind::LockAcquired);
        if rec.lock_contention_ended(state, (open.object, mode), nanos, acquired) {
            rec.end_call_as(nanos, state, |_| None);
            return;
        }
    }
    rec.end_call_as(nanos, state, |_| kind);
}

/// Instrumentation mode, by default: a lock call the tracker kept to itself until it ended
/// contended, failed, interrupted or timed out (`lockContended`): its `LockAcquire` at `t0`
/// with the owner read when it was contended, and its exit line at `nanos` (the tracker's
/// times), both with the stack of the call (`skip` frames of the tracker above the caller).
pub fn juc_contended(
    rec: &Recorder,
    jni: Jni,
    (report, sync): (i32, jobject),
    (t0, nanos): (u64, u64),
    owner: u32,
    outcome: Outcome,
    skip: i32,
) {
    let Some(Call::Lock(class, k)) = Call::from_hook_report(report) else {
        return;
    };
    let Some(state) = rec.current_state() else {
        return;
    };
    if sync.is_null() {
        return;
    }
    let lock = rec.jvmti.object_hash(sync).unwrap_or(0);
    names::name_object(rec, jni, sync, lock);
    let (t0, nanos) = (
        t0.max(state.last_contention),
        nanos.max(state.last_contention),
    );
    // A contention that ended holding the lock is counted per site when it was short (or
    // beyond its site's budget of long ones written): a short one needs its site only.
    let waited = nanos.saturating_sub(t0);
    let acquired = outcome.kind(k) == Some(EventKind::LockAcquired) && rec.contention_threshold > 0;
    if acquired && waited < rec.contention_threshold && !state.scratch.is_empty() {
        let n = rec.walk(jni, skip, &mut state.scratch[..1]);
        let site = rec
            .frames_from_scratch(jni, state, n, false)
            .first()
            .copied();
        if let Some(site) = site {
            // (one frame: the short path walks no further)
            if rec.juc_contention_counted(state, (lock, class.mode()), &[site], (waited, nanos)) {
                return;
            }
        }
    }
    let frames = rec.stack(jni, state, skip, false);
    if acquired
        && waited >= rec.contention_threshold
        && rec.juc_contention_counted(state, (lock, class.mode()), &frames, (waited, nanos))
    {
        return;
    }
    let mode = OpenExtra::Mode(class.mode());
    let line = |nanos, kind, owner| JucLine {
        nanos,
        kind,
        thread: state.hash,
        object: lock,
        owner,
        extra: mode,
    };
    rec.push_extra(
        line(t0.min(nanos), EventKind::LockAcquire, owner),
        frames.clone(),
    );
    if let Some(kind) = outcome.kind(k) {
        rec.push_extra(line(nanos, kind, 0), frames);
    }
}

/// The thread holding synchronizer `sync` of a lock of `class` exclusively (its hash; 0: none,
/// or a lock that names no owner).
pub fn lock_owner(rec: &Recorder, jni: Jni, class: LockClass, sync: jobject) -> u32 {
    if sync.is_null() || !class.has_owner() {
        return 0;
    }
    owner_hash(&rec.jvmti, jni, sync)
}

/// A field the agent looked for and did not find.
const NO_FIELD: usize = usize::MAX;

/// The JNI field IDs j.u.c. calls are read through, by [`FieldRef::slot`], shared by both
/// modes: 0 not looked up yet, [`NO_FIELD`] absent (this JDK's classes differ; the agent
/// said so once).
static FIELDS: [AtomicUsize; 12] = [const { AtomicUsize::new(0) }; 12];

/// A field a j.u.c. call is read through: its slot in [`FIELDS`], name and type, and what
/// the agent does without it (said once; nothing is said when it is empty).
pub struct FieldRef {
    slot: usize,
    name: &'static CStr,
    signature: &'static CStr,
    without: &'static str,
}

/// [`FieldRef::without`] of the fields that name locks and owners.
const IDS_FALL_BACK: &str = "j.u.c. lock IDs fall back to the Lock object and owners to 00000000";

impl LockClass {
    /// Its synchronizer field (slots 0 to 6; a `StampedLock`'s own methods have none).
    fn sync_field(self) -> FieldRef {
        let (name, signature) = self.sync_field_name();
        FieldRef {
            slot: LockClass::ALL.iter().position(|c| *c == self).unwrap_or(0),
            name,
            signature,
            without: IDS_FALL_BACK,
        }
    }
}

const CONDITION_LOCK: FieldRef = FieldRef {
    slot: 7,
    name: c"this$0",
    signature: c"Ljava/util/concurrent/locks/AbstractQueuedSynchronizer;",
    without: IDS_FALL_BACK,
};
const OWNER: FieldRef = FieldRef {
    slot: 8,
    name: c"exclusiveOwnerThread",
    signature: c"Ljava/lang/Thread;",
    without: IDS_FALL_BACK,
};
/// What the agent does without the synchronizers' `state`.
const NO_STATE: &str = "lock and unlock calls of ReentrantLock and ReentrantReadWriteLock's write \
                        lock that end by an exception are taken to have done nothing, even when \
                        they took or released the lock";
/// AQS's `state` in `ReentrantLock$Sync`, read only from the JDK's own synchronizers
/// ([`Holds`]): a program's subclass may declare a `state` of its own, whose ID would then
/// be cached for all.
const STATE: FieldRef = FieldRef {
    slot: 9,
    name: c"state",
    signature: c"I",
    without: NO_STATE,
};
/// `ReentrantReadWriteLock$Sync`'s `state`: an AQS's `int` in JDK 17 (its absence is not
/// said: the `long` is looked for next), an `AbstractQueuedLongSynchronizer`'s `long` in
/// JDK 25. Slots of their own: the `ReentrantLock`'s may be an `int` in the same JVM.
const RW_STATE_INT: FieldRef = FieldRef {
    slot: 10,
    name: c"state",
    signature: c"I",
    without: "",
};
const RW_STATE_LONG: FieldRef = FieldRef {
    slot: 11,
    name: c"state",
    signature: c"J",
    without: NO_STATE,
};

/// The ID of field `f` as seen from the class of `obj` (inherited fields too), looked up
/// the first time.
fn field_id_of(jni: Jni, obj: jobject, f: &FieldRef) -> Option<jfieldID> {
    let cached = FIELDS[f.slot].load(Ordering::Acquire);
    if cached == NO_FIELD {
        return None;
    }
    if cached != 0 {
        return Some(cached as jfieldID);
    }
    let class = jni.object_class(obj);
    if class.is_null() {
        return None;
    }
    let id = jni.field_id(class, f.name, f.signature, false);
    jni.delete_local_ref(class);
    match id {
        Some(id) => {
            FIELDS[f.slot].store(id as usize, Ordering::Release);
            Some(id)
        }
        None => {
            if FIELDS[f.slot].swap(NO_FIELD, Ordering::AcqRel) != NO_FIELD && !f.without.is_empty()
            {
                crate::say!(
                    "orca: field {} {} not found in this JDK's java.util.concurrent.locks; {}",
                    f.name.to_string_lossy(),
                    f.signature.to_string_lossy(),
                    f.without
                );
            }
            None
        }
    }
}

/// The reference field `f` of `obj` (a local reference, or null).
fn field_of(jni: Jni, obj: jobject, f: &FieldRef) -> jobject {
    match field_id_of(jni, obj, f) {
        Some(id) => jni.object_field(obj, id),
        None => std::ptr::null_mut(),
    }
}

/// The `int` field `f` of `obj`, `None` when this JDK has no such field.
fn int_field_of(jni: Jni, obj: jobject, f: &FieldRef) -> Option<i32> {
    field_id_of(jni, obj, f).map(|id| jni.int_field(obj, id))
}

/// The thread ID of the synchronizer's exclusive owner thread, 0 for none.
fn owner_hash(jvmti: &Jvmti, jni: Jni, sync: jobject) -> u32 {
    let t = field_of(jni, sync, &OWNER);
    if t.is_null() {
        return 0;
    }
    let h = ids::thread_id(jvmti, t);
    jni.delete_local_ref(t);
    h
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
fn receiver(rec: &Recorder, jni: Jni, call: Call) -> u32 {
    let jvmti = &rec.jvmti;
    if !call.has_receiver() {
        return 0;
    }
    if call.is_monitor_call() {
        if let Ok(owned) = jvmti.owned_monitors() {
            let only = if owned.len() == 1 {
                let hash = jvmti.object_hash(owned[0].0).ok();
                names::name_object(rec, jni, owned[0].0, hash.unwrap_or(0));
                hash
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
            let hash = if call.is_thread_call() {
                ids::thread_id(jvmti, o)
            } else {
                let hash = jvmti.object_hash(o).unwrap_or(0);
                names::name_object(rec, jni, o, hash);
                hash
            };
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
        set_juc(true); // no test needs it off: that is tracked_with(false), below
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
            Call::classify(
                "Ljava/util/concurrent/locks/LockSupport;",
                "parkNanos",
                "(Ljava/lang/Object;J)V"
            ),
            Some(Call::Park { blocker: true })
        );
        assert_eq!(
            Call::classify(
                "Ljava/util/concurrent/locks/LockSupport;",
                "parkNanos",
                "(J)V"
            ),
            Some(Call::Park { blocker: false })
        );
        assert_eq!(
            Call::classify(
                "Ljava/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject;",
                "awaitNanos",
                "(J)J"
            ),
            Some(Call::Await)
        );
    }

    #[test]
    fn juc_entries_are_left_out_without_the_option() {
        assert!(tracked_with(false).all(|t| !t.call.is_juc()));
        assert!(tracked_with(false).any(|t| t.name == "wait"));
        let all = tracked_with(true).count();
        assert_eq!(all, TRACKED.len());
        assert!(tracked_with(false).count() < all);
    }

    #[test]
    fn juc_hook_reports_name_their_call_and_nothing_else_does() {
        for t in TRACKED {
            let r = t.call.hook_report();
            if t.call.is_juc() {
                assert!(r >= JUC_HOOK_BASE, "{t:?}");
                assert_eq!(Call::from_hook_report(r), Some(t.call));
            } else {
                assert!(ReportCode::from_i32(r).is_some(), "{t:?}");
                assert_eq!(Call::from_hook_report(r), None);
            }
        }
    }

    #[test]
    fn the_trackers_lock_constants_are_the_hook_reports() {
        use crate::events::JucReport;
        assert_eq!(Call::Await.hook_report(), JucReport::Await as i32);
        assert_eq!(Call::Signal.hook_report(), JucReport::Signal as i32);
        assert_eq!(Call::SignalAll.hook_report(), JucReport::SignalAll as i32);
        assert_eq!(Call::Unpark.hook_report(), JucReport::Unpark as i32);
        assert_eq!(Call::LockSlow.hook_report(), JucReport::Slow as i32);
        // H_LOCK + class * 8 + call, as the tracker decodes it: class = v >> 3, a release
        // from call 3 up, the read classes in a mask
        for (ci, c) in LockClass::ALL.iter().enumerate() {
            let read = (JucReport::ReadClasses as i32 >> ci) & 1 == 1;
            assert_eq!(read, c.mode() == b'R', "{c:?}");
            // ReentrantLock and the read-write views run AQS's acquire/release of their own
            // synchronizer, StampedLock's views its own methods
            let nesting = (JucReport::NestingClasses as i32 >> ci) & 1 == 1;
            let runs_own = !matches!(c, StampedWrite | StampedRead | AqsExclusive);
            assert_eq!(nesting, runs_own, "{c:?}");
            for (ki, k) in LockCall::ALL.iter().enumerate() {
                let r = Call::Lock(*c, *k).hook_report();
                let bits = crate::events::LOCK_CALL_BITS;
                assert_eq!(r, JucReport::Lock as i32 + ((ci << bits) + ki) as i32);
                // the tracker's L_UNLOCK and L_TRY_UNLOCK
                let unlock = crate::events::LOCK_CALL_UNLOCK as usize;
                assert_eq!(ki >= unlock, k.is_release(), "{k:?}");
                let try_unlock = crate::events::LOCK_CALL_TRY_UNLOCK as usize;
                assert_eq!(ki == try_unlock, *k == LockCall::TryUnlock, "{k:?}");
            }
        }
        assert!(LockCall::ALL.len() <= CALLS_PER_CLASS);
        // the tracker's outcome numbers
        use crate::events::LockOutcome as O;
        assert_eq!(Outcome::from_i32(O::Returned as i32), Outcome::Returned);
        assert_eq!(Outcome::from_i32(O::True as i32), Outcome::True);
        assert_eq!(Outcome::from_i32(O::False as i32), Outcome::False);
        assert_eq!(Outcome::from_i32(O::Threw as i32), Outcome::Threw);
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
        assert_eq!(lock.outcome(false, false), Some(EventKind::LockAcquired));
        assert_eq!(lock.outcome(true, false), Some(EventKind::LockInterrupted));
        assert_eq!(try_lock.outcome(false, true), Some(EventKind::LockAcquired));
        assert_eq!(try_lock.outcome(false, false), Some(EventKind::LockFailed));
        assert_eq!(timed.outcome(false, false), Some(EventKind::LockTimedOut));
        assert_eq!(timed.outcome(true, false), Some(EventKind::LockInterrupted));
        assert_eq!(unlock.outcome(false, false), Some(EventKind::LockRelease));
        assert_eq!(unlock.outcome(true, false), None);
        assert_eq!(unlock.entry_kind(), None);
        assert_eq!(
            Call::Await.outcome(true, false),
            Some(EventKind::ConditionAwaited)
        );
    }
}
