//! The recorder: what every event source shares, and the only way into the log.
//!
//! The engines decide *what* happened; the recorder knows *how* it is kept:
//! per-thread state ([`threads`]), stacks walked and translated into the original class
//! files' terms ([`stacks`], [`metadata`], [`sites`]), the tracker's per-thread buffers and
//! the summaries made of them ([`buffers`], [`summary`]), and the writer ([`writer`], with
//! [`clock`] for the format's timestamps). It never calls an engine or the entry
//! points, so an event source can be added or removed without touching it.

pub mod budget;
pub mod buffers;
pub mod chunks;
pub mod clock;
pub mod ids;
pub mod metadata;
pub mod names;
pub mod owners;
pub mod sites;
pub mod stacks;
pub mod summary;
pub mod threads;
pub mod waiters;
pub mod writer;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::jvmti::{jthread, FastWalker, Jvmti};
use buffers::Buffers;
use metadata::Metadata;
use orca_format::EventKind;
use orca_format::WaitCall;
use sites::Sites;
use threads::{OpenCall, OpenExtra, ThreadState};
use waiters::{Left, Waiters};
use writer::{EventRecord, Extra, Frames, LogWriter};

/// The fields of one line before its stack: a method-call line, possibly with the extra
/// field of a j.u.c. line (`owner`: `LockAcquire`'s, else 0).
pub struct JucLine {
    pub nanos: u64,
    pub kind: EventKind,
    pub thread: u32,
    pub object: u32,
    pub owner: u32,
    pub extra: OpenExtra,
}

impl JucLine {
    /// The line as the writer takes it, with its stack.
    pub(crate) fn record(&self, frames: Frames) -> EventRecord {
        EventRecord {
            nanos: self.nanos,
            kind: self.kind,
            thread: self.thread,
            object: self.object,
            owner: self.owner,
            extra: match self.extra {
                OpenExtra::None => Extra::None,
                OpenExtra::Mode(m) => Extra::Mode(m),
                OpenExtra::Lock(l) => Extra::Lock(l),
            },
            frames,
        }
    }
}

/// Whether a j.u.c. exit line keeps the thread's lines paired (every other line does): a
/// `LockAcquired` is noted, a `LockRelease` is written only for a noted hold.
fn pairs(state: &mut ThreadState, kind: EventKind, open: &OpenCall) -> bool {
    let OpenExtra::Mode(mode) = open.extra else {
        return true;
    };
    let key = (open.object, mode);
    let held = &mut state.juc_held;
    let at = held.iter().rposition(|h| h.0 == key);
    match (kind, at) {
        (EventKind::LockAcquired, Some(i)) => {
            held[i].1 += 1;
            true
        }
        (EventKind::LockAcquired, None) => {
            if held.len() >= threads::MAX_JUC_HELD {
                held.remove(0);
            }
            held.push((key, 1));
            true
        }
        (EventKind::LockRelease, Some(i)) => {
            held[i].1 -= 1;
            if held[i].1 == 0 {
                held.remove(i);
            }
            true
        }
        (EventKind::LockRelease, None) => false,
        _ => true,
    }
}

/// Everything the event sources record into, for the life of the JVM.
pub struct Recorder {
    pub jvmti: Jvmti,
    /// Frames per stack (option `stackdepth`).
    pub stack_depth: usize,
    /// Instrumentation mode: every monitor record becomes an event line (option `trace=all`).
    pub trace_all: bool,
    pub log: LogWriter,
    pub meta: Metadata,
    /// Instrumentation mode: the call sites of monitor reports (the process's one table).
    pub sites: &'static Sites,
    /// Instrumentation mode: every thread's tracker buffer, for the drain at exit and the
    /// owner of a contended monitor.
    pub buffers: Buffers,
    /// The stack walker tried before JVMTI's (option `stackwalk=fast`, when the JVM has one).
    pub walker: Option<FastWalker>,
    /// Stacks walked by the fast walker and by JVMTI: for the exit line, so that a user (and
    /// the tests) can see which walker did the work. One count per walk, on the event path.
    pub fast_walks: AtomicU64,
    pub jvmti_walks: AtomicU64,
    /// Lock-order occurrences (one per nested acquisition and monitor held) the agent
    /// counted from the tracker's records, and those the tracker counted in its slots
    /// ([`OrderSlots`](crate::recorder::summary::OrderSlots)): for the exit line. Added per
    /// thread as its summaries are written, not per occurrence.
    pub orders_recorded: AtomicU64,
    pub orders_in_tracker: AtomicU64,
    /// Instrumentation mode: the monitors threads wait on, so that a `notify` that wakes
    /// nobody is counted rather than written with its stack.
    pub waiters: Waiters,
    /// Option `notifies=counted` (not with `trace=all`): [`Recorder::notify_counted`].
    pub count_notifies: bool,
    /// Option `waitthreshold` in nanoseconds (0 with `trace=all`): shorter waits are counted
    /// ([`Recorder::defer_wait`]).
    pub wait_threshold: u64,
    /// Option `contentionthreshold` in nanoseconds (0 with `trace=all`, and in JVMTI mode):
    /// shorter contended acquisitions are counted ([`Recorder::defer_contention`]).
    pub contention_threshold: u64,
    /// Per slot of a jmethodID: the method with bit 0 set when its class is the tracker or in
    /// `java.util.concurrent.locks` ([`Recorder::juc_caller_depth`]); 0: none yet.
    pub lock_frames: Box<[std::sync::atomic::AtomicUsize]>,
    /// When the agent itself held the program up: an attach's retransformation of the loaded
    /// classes (safepoints that stop every thread, a hold's owner included), from its start
    /// to its end in nanoseconds; `(0, 0)`: none. A hold that overlaps it was stretched by
    /// Orca, not by the program, and is left out of the long holds
    /// ([`Recorder::stretched_by_agent`]).
    pub agent_pause: (AtomicU64, AtomicU64),
    /// Long holds left out for overlapping [`Recorder::agent_pause`]: for the exit line.
    pub long_holds_stretched: AtomicU64,
}

impl Recorder {
    /// The agent's own pause of the program begins (`end` false) or ends, now.
    pub fn agent_paused(&self, end: bool) {
        let now = crate::recorder::clock::now_nanos();
        if end {
            self.agent_pause.1.store(now, Ordering::Release);
        } else {
            self.agent_pause.1.store(u64::MAX, Ordering::Release);
            self.agent_pause.0.store(now, Ordering::Release);
        }
    }

    /// Whether a hold from `start` to `end` overlaps the agent's own pause (one under way
    /// too).
    pub fn stretched_by_agent(&self, start: u64, end: u64) -> bool {
        let until = self.agent_pause.1.load(Ordering::Acquire);
        let from = self.agent_pause.0.load(Ordering::Acquire);
        until != 0 && start < until && end > from
    }

    /// An empty recorder; its writer thread starts with [`LogWriter::start`].
    pub fn new(
        jvmti: Jvmti,
        stack_depth: usize,
        trace_all: bool,
        walker: Option<FastWalker>,
    ) -> Recorder {
        Recorder {
            jvmti,
            stack_depth,
            trace_all,
            walker,
            fast_walks: AtomicU64::new(0),
            jvmti_walks: AtomicU64::new(0),
            orders_recorded: AtomicU64::new(0),
            orders_in_tracker: AtomicU64::new(0),
            log: LogWriter::new(),
            meta: Default::default(),
            sites: Sites::shared(),
            buffers: Default::default(),
            waiters: Default::default(),
            count_notifies: false,
            wait_threshold: 0,
            contention_threshold: 0,
            lock_frames: metadata::zeroed_atomics::<usize, std::sync::atomic::AtomicUsize>(
                stacks::LOCK_FRAME_SLOTS,
            ),
            agent_pause: (AtomicU64::new(0), AtomicU64::new(0)),
            long_holds_stretched: AtomicU64::new(0),
        }
    }

    /// An event line without extra fields.
    pub fn push(&self, nanos: u64, kind: EventKind, thread: u32, object: u32, frames: Frames) {
        self.log.push(EventRecord {
            nanos,
            kind,
            thread,
            object,
            owner: 0,
            extra: Extra::None,
            frames,
        });
    }

    /// The current thread's state (for the tracker's natives, which have no jthread).
    pub fn current_state(&self) -> Option<&mut ThreadState> {
        threads::current(&self.jvmti, std::ptr::null_mut(), self.stack_depth)
    }

    /// The state of `thread`, the current thread of a JVMTI callback.
    pub fn state(&self, thread: jthread) -> Option<&mut ThreadState> {
        threads::current(&self.jvmti, thread, self.stack_depth)
    }

    /// An event line with the extra field of a j.u.c. line.
    pub fn push_extra(&self, line: JucLine, frames: Frames) {
        self.log.push(line.record(frames));
    }

    /// A contention inside an `unlock` (whose `LockRelease` is stamped when the call began and
    /// would be written when it returns): the release line is written now, at that stamp, so
    /// that the contention's lines come after it; the call's end then writes nothing. Why not
    /// move the stamp up to the contention: the release may be over by then (a program's own
    /// `tryRelease` that logs under a contended monitor once it has let the lock go), another
    /// thread may have taken the lock meanwhile, and a release stamped after that thread's
    /// `LockAcquired` made two owners at once (docs/FORMAT.md, "Exclusion"). An `unlock` that
    /// then throws (or a `tryUnlock*` that returns false) after such a contention keeps its
    /// line.
    pub fn release_before_contention(&self, state: &mut ThreadState) {
        let Some(open) = state.open.take_if(|o| o.stamp.is_some()) else {
            return;
        };
        if pairs(state, open.kind, &open) {
            self.flush_contention(state);
            let line = JucLine {
                nanos: open.stamp.unwrap_or_default(),
                kind: open.kind,
                thread: state.hash,
                object: open.object,
                owner: 0,
                extra: open.extra,
            };
            self.push_extra(line, open.frames);
        }
    }

    /// The end of a tracked call, in either mode: the exit event once the outermost call ends.
    pub fn end_call(&self, nanos: u64, state: &mut ThreadState) {
        self.end_call_as(nanos, state, |open| Some(open.kind));
    }

    /// [`Recorder::end_call`] whose exit event depends on how the call ended: `outcome`
    /// picks it from the open call (`None`: no line, an `unlock` that threw).
    pub fn end_call_as(
        &self,
        nanos: u64,
        state: &mut ThreadState,
        outcome: impl FnOnce(&OpenCall) -> Option<EventKind>,
    ) {
        // Depth 0: the call began before the agent could see it (a thread already waiting at
        // VMInit); there is no entry event to pair with.
        if state.depth == 0 {
            return;
        }
        state.depth -= 1;
        if state.depth == 0 {
            if let Some(open) = state.open.take() {
                let mut left = Left::Woken;
                if matches!(
                    open.kind,
                    EventKind::ObjectWaited
                        | EventKind::ConditionAwaited
                        | EventKind::SemaphoreAcquired
                ) {
                    left = self.waiters.leave(open.object, state.wait_epoch);
                }
                if open.kind == EventKind::ThreadParked {
                    self.waiters.unparked(state.hash);
                }
                if let Some(call) = WaitCall::of_exit(open.kind) {
                    if self.wait_ended(state, call, &open, (nanos, left)) {
                        return;
                    }
                }
                if let Some(kind) = outcome(&open).filter(|k| pairs(state, *k, &open)) {
                    // A contended acquisition's entry line still kept back (its call ended
                    // some other way than `lockEnd`) comes first.
                    self.flush_contention(state);
                    let line = JucLine {
                        nanos: open.stamp.unwrap_or(nanos),
                        kind,
                        thread: state.hash,
                        object: open.object,
                        owner: 0,
                        extra: open.extra,
                    };
                    self.push_extra(line, open.frames);
                }
            }
        }
    }
}
