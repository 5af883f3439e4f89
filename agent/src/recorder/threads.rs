//! Per-thread state, kept in JVMTI thread-local storage.
//!
//! JVMTI thread-local storage belongs to the `java.lang.Thread`, not to the OS thread, so the
//! state follows a Java thread wherever it runs. It holds what the hot path needs without
//! asking the JVM again: the thread's identity hash, the nesting depth of tracked calls, and
//! the open blocking call whose exit event is still to come.

use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};

use crate::jvmti::{jthread, jvmtiFrameInfo, Jvmti};
use crate::recorder::ids::{self, IdKind};
use crate::recorder::writer::Frames;
use orca_format::EventKind;

/// j.u.c. locks whose holds a thread's state counts at most (the oldest are forgotten: a
/// program that never releases what it takes).
pub const MAX_JUC_HELD: usize = 256;

/// A blocking call whose exit event is still to come.
#[derive(Debug)]
pub struct OpenCall {
    /// The exit event to write (`ObjectWaited`, ...).
    pub kind: EventKind,
    pub object: u32,
    /// The entry event's stack: the exit reports the same call site.
    pub frames: Frames,
    /// The exit line's extra field (a j.u.c. lock's mode, a condition's lock).
    pub extra: OpenExtra,
    /// The exit line's timestamp when it is not the exit's own: `LockRelease` is stamped
    /// when `unlock` was called, before the release, but written only once it returned.
    pub stamp: Option<u64>,
    /// A j.u.c. lock call's number (`engines::methods::Call`): its exit line depends on how
    /// the call ended.
    pub lock_call: Option<u8>,
}

/// The extra field an open call's exit line repeats from its entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OpenExtra {
    #[default]
    None,
    /// `<mode>` of the j.u.c. lock lines (`R`, `W`).
    Mode(u8),
    /// `<lock>` of the `Condition*` lines.
    Lock(u32),
}

/// What the agent knows about one Java thread.
pub struct ThreadState {
    /// The thread's ID (`recorder::ids`), the `<thread>` field of its events.
    pub hash: u32,
    /// How many tracked calls are on this thread's stack; events are written at depth 0 only,
    /// which suppresses nested calls (`join` calling `wait`).
    pub depth: u32,
    pub open: Option<OpenCall>,
    /// Instrumentation mode: the depth of a native tracked call reported inline at its call
    /// site (0: none) whose end report has not come. It ends with an exception (no handler
    /// is added for it), and a native runs no Java code: the thread's next report proves it
    /// is over (see `tracker::close_inline`).
    pub inline_open: u32,
    /// The waiter-table epoch of the thread's outermost `wait`/`await` under way
    /// ([`crate::recorder::waiters::Waiters`]).
    pub wait_epoch: u32,
    /// Instrumentation mode: the monitors this thread holds, innermost last, with the stacks
    /// of their `MonitorEntered`. `MonitorExit` reuses the stack of the entry it closes
    /// (found by the monitor's hash; only the top frame moved), sparing a whole stack walk.
    pub held: Vec<(u32, Frames)>,
    /// Instrumentation mode: the hash and stack taken at `MonitorEnter`, for the
    /// `MonitorEntered` that follows it at the same call site.
    pub pending_enter: Option<(u32, Frames)>,
    /// The j.u.c. holds whose `LockAcquired` this thread's lines have and whose `LockRelease`
    /// they do not yet: ((lock, mode), count), at most [`MAX_JUC_HELD`] locks. A release the
    /// lines cannot pair (its acquisition was not a tracked call: a lock built on AQS taken by
    /// `tryAcquire`, `ThreadPoolExecutor`'s worker unlocked before its first lock) is not
    /// written.
    pub juc_held: Vec<((u32, u8), u32)>,
    /// When the thread's last contention line was written: a j.u.c. lock call the tracker
    /// reports only at its end (`methods::juc_contended`) stamps its lines no earlier, so the
    /// thread's lines stay in time order (a class initialization inside `lock()` contends).
    pub last_contention: u64,
    /// The monitor of the thread's `MonitorContendedEnter` line still open (0: none). Why: a
    /// recording attached to a running JVM sees the `Entered` of a contention that began
    /// before it, whose `Enter` no line has; that `Entered` is left out (FORMAT.md pairs them).
    pub contending: u32,
    /// Reused buffer for `GetStackTrace`, `stackdepth` frames long.
    pub scratch: Vec<MaybeUninit<jvmtiFrameInfo>>,
    /// Instrumentation mode: the thread's tracker buffer and summaries, once its first
    /// monitor report registered them (shared with the exit drain, hence the lock).
    pub recording: Option<Arc<Mutex<crate::recorder::buffers::Recording>>>,
}

impl ThreadState {
    /// Removes the innermost held entry of `monitor` and returns its stack. Entries above it
    /// are exits whose report was lost (a StackOverflowError inside the tracker) and are
    /// dropped with it; `None` when the monitor is not held (its enter report was lost).
    pub fn take_held(&mut self, monitor: u32) -> Option<Frames> {
        let at = self.held.iter().rposition(|(m, _)| *m == monitor)?;
        let frames = self.held.swap_remove(at).1;
        self.held.truncate(at);
        Some(frames)
    }

    /// How many times the thread's lines hold j.u.c. lock `key` (lock, mode): the count of
    /// `juc_held`.
    pub fn juc_holds(&self, key: (u32, u8)) -> u32 {
        self.juc_held
            .iter()
            .rfind(|h| h.0 == key)
            .map_or(0, |h| h.1)
    }

    fn new(hash: u32, stack_depth: usize) -> Box<ThreadState> {
        Box::new(ThreadState {
            hash,
            depth: 0,
            open: None,
            inline_open: 0,
            wait_epoch: 0,
            held: Vec::new(),
            pending_enter: None,
            last_contention: 0,
            contending: 0,
            juc_held: Vec::new(),
            scratch: vec![MaybeUninit::uninit(); stack_depth],
            recording: None,
        })
    }
}

/// The current thread's state, created on first use. `None` only if JVMTI refuses
/// thread-local storage (a thread that is not a Java thread).
///
/// The returned reference is only used within one event callback on the thread itself; no
/// other thread touches this state except [`create_for`] before the thread is known and
/// [`remove_current`] on the same thread.
pub fn current<'a>(
    jvmti: &Jvmti,
    thread: jthread,
    stack_depth: usize,
) -> Option<&'a mut ThreadState> {
    current_or_new(jvmti, thread, stack_depth).map(|(s, _)| s)
}

/// Like [`current`], and says whether the state was created by this call.
pub fn current_or_new<'a>(
    jvmti: &Jvmti,
    thread: jthread,
    stack_depth: usize,
) -> Option<(&'a mut ThreadState, bool)> {
    let p = jvmti.thread_local() as *mut ThreadState;
    if p == ENDED {
        return None;
    }
    if !p.is_null() {
        // SAFETY: made from a leaked Box below or in `create_for`, and only freed by
        // `remove_current` on this same thread; callbacks on one thread do not overlap.
        return Some((unsafe { &mut *p }, false));
    }
    // A tracker native has no jthread at hand: ask JVMTI for the current one.
    let hash = if thread.is_null() {
        let t = jvmti.current_thread().ok()?;
        ids::id_of(jvmti, t, IdKind::Thread)?.0
    } else {
        ids::id_of(jvmti, thread, IdKind::Thread)?.0
    };
    let raw = install(jvmti, std::ptr::null_mut(), hash, stack_depth)?;
    // SAFETY: just made by `install` and now owned by the thread-local slot.
    Some((unsafe { &mut *raw }, true))
}

/// Makes a state for `thread` (null: the current thread) and stores it in its thread-local
/// slot; `None` (and nothing leaked) if JVMTI refuses.
fn install(
    jvmti: &Jvmti,
    thread: jthread,
    hash: u32,
    stack_depth: usize,
) -> Option<*mut ThreadState> {
    let raw = Box::into_raw(ThreadState::new(hash, stack_depth));
    if jvmti.set_thread_local(thread, raw as *mut _).is_err() {
        // SAFETY: `raw` came from Box::into_raw just above and was not stored anywhere.
        drop(unsafe { Box::from_raw(raw) });
        return None;
    }
    Some(raw)
}

/// Gives `thread` (another thread, at VMInit) a state if it has none; returns its hash when
/// one was created, so the caller can announce the thread.
pub fn create_for(jvmti: &Jvmti, thread: jthread, stack_depth: usize) -> Option<u32> {
    if !jvmti.thread_local_of(thread).is_null() {
        return None;
    }
    let hash = ids::id_of(jvmti, thread, IdKind::Thread)?.0;
    install(jvmti, thread, hash, stack_depth)?;
    Some(hash)
}

/// The thread-local value of a thread past its ThreadEnd. HotSpot still runs JVM code on the
/// thread afterwards (notifying its joiners can contend for the Thread object's monitor); those
/// are JVM internals, not the program's, and `ThreadEnded` stays the thread's last line.
const ENDED: *mut ThreadState = std::ptr::dangling_mut();

/// Frees the current thread's state (ThreadEnd); returns its hash if it had one.
pub fn remove_current(jvmti: &Jvmti) -> Option<u32> {
    let p = jvmti.thread_local() as *mut ThreadState;
    if p.is_null() || p == ENDED {
        return None;
    }
    let _ = jvmti.set_thread_local(std::ptr::null_mut(), ENDED as *mut _);
    // SAFETY: the pointer came from Box::into_raw and the slot no longer refers to it.
    let state = unsafe { Box::from_raw(p) };
    Some(state.hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::writer::Frame;

    fn frames(location: u32) -> Frames {
        vec![Frame {
            method: 1,
            location,
        }]
        .into()
    }

    #[test]
    fn an_exit_finds_its_entry_even_after_lost_reports() {
        let mut s = ThreadState::new(7, 4);
        s.held = vec![(1, frames(10)), (2, frames(20)), (3, frames(30))];
        // Innermost first: the normal case.
        assert_eq!(s.take_held(3).unwrap()[0].location, 30);
        // The exit of 2 was lost: the exit of 1 drops it with its own entry.
        assert_eq!(s.take_held(1).unwrap()[0].location, 10);
        assert!(s.held.is_empty());
        // An exit whose enter was lost finds nothing and leaves the stack alone.
        s.held = vec![(4, frames(40))];
        assert!(s.take_held(5).is_none());
        assert_eq!(s.held.len(), 1);
        // Reentrant: the innermost entry of the same monitor.
        s.held = vec![(4, frames(40)), (4, frames(41))];
        assert_eq!(s.take_held(4).unwrap()[0].location, 41);
        assert_eq!(s.held.len(), 1);
    }
}
