//! Pairing: the log's begin and end lines made into spans, in one streaming pass, for every
//! reader: `orca check`'s consistency rules, `report` and its JSON, `html`, `pprof`, `flame`,
//! `timeline` and `deadlocks`.
//!
//! Why one place: each reader used to pair the lines itself (a hold from its enter to the
//! exit that balances it, paused by a wait; a contention; a call; a j.u.c. acquisition, hold,
//! await or park), and the copies drifted apart, so that two outputs of one log disagreed
//! (issue 46). A reader now feeds every event to one [`Pairer`] and folds the [`Span`]s it
//! hands back; the events themselves still reach the reader, which keeps what is not paired
//! (summary rows, notifies, thread names) to itself.
//!
//! What a span is follows docs/FORMAT.md: monitor holds count per (thread, monitor) and j.u.c.
//! holds per (thread, lock, mode), so only the outermost hold is a span; an `Object.wait` on
//! the monitor (a `Condition.await` of the lock, in every mode; a `Thread.join` of the thread
//! whose monitor it is) pauses it. A thread is in one tracked call at a time. Lines that pair
//! with nothing (an exit with no open entry, the `MonitorContendedEntered` of another monitor,
//! a call inside a call) make no span, and [`Pairer::feed_checked`] says what each missed:
//! `orca check` reports them (validate.rs), and the state it reads at the end (what a thread
//! holds, is blocked on or is in) is the pairer's too ([`Pairer::holds`],
//! [`Pairer::open_call`]), as is `orca deadlocks`' view of what each thread holds when it takes
//! another lock. A span still open at the end of the log ends at the log's last event
//! ([`Pairer::end`]), with no end line; a thread's call and contention end at its
//! `ThreadEnded`, and what a thread ID had open ends when a `ThreadStarted` uses it again.
//!
//! Memory is per thread and per held lock, never per event.

use crate::{ConditionOp, Event, EventKind, FastMap, Frame, Hash, LockMode, LockOp};

/// One end of a span: when, where (the line's top frame) and, for a [`Pairer::with_stacks`],
/// the line's whole stack (`StackTrace::raw`; empty otherwise, and for a line without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mark {
    /// The line's timestamp, in nanoseconds.
    pub ts: u64,
    /// The line's number in its file, for a [`Pairer::feed_checked`] (0 otherwise).
    pub line: u64,
    /// The line's top frame.
    pub top: Option<Frame>,
    /// The line's stack as written, when the pairer keeps stacks.
    pub stack: String,
}

/// Which spans' marks carry whole stacks ([`Pairer::with_stacks_for`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stacks {
    /// [`SpanKind::Blocked`] and [`SpanKind::Acquire`].
    pub blocked: bool,
    /// [`SpanKind::Hold`].
    pub holds: bool,
    /// [`SpanKind::Call`], [`SpanKind::Await`] and [`SpanKind::Park`].
    pub waits: bool,
}

/// What a hold holds: a monitor, or a j.u.c. lock in one mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    /// A monitor, by its ID.
    Monitor(Hash),
    /// A j.u.c. lock (its synchronizer's ID) in a mode.
    Lock(Hash, LockMode),
}

/// The blocking calls of `Object`, `Thread` and `Semaphore`, which a thread is in one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    /// `Object.wait`: `ObjectWait` to the thread's next `ObjectWaited`.
    Wait,
    /// `Thread.join`: `ThreadJoin` to `ThreadJoined`.
    Join,
    /// `Thread.sleep`: `ThreadSleep` to `ThreadSlept`.
    Sleep,
    /// `Semaphore.acquire`: `SemaphoreAcquire` to `SemaphoreAcquired`.
    Semaphore,
}

/// What happened over a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// A contended `synchronized` entry: `MonitorContendedEnter` to the thread's next
    /// `MonitorContendedEntered` of the same monitor, with the owner at contention.
    Blocked {
        /// The monitor.
        monitor: Hash,
        /// Its owner when the thread began to wait (00000000: not known).
        owner: Hash,
    },
    /// A j.u.c. acquisition: `LockAcquire` to the thread's next `LockAcquired`, `LockFailed`,
    /// `LockTimedOut` or `LockInterrupted`, with the owner as it began (a contention when that
    /// is another thread).
    Acquire {
        /// The lock the end line names (the begin's, when open at the end).
        lock: Hash,
        /// The mode the end line names (the begin's, when open at the end).
        mode: LockMode,
        /// The owner when the acquisition began (00000000: none, or not known).
        owner: Hash,
        /// How it ended; `None` when it was still open at the end.
        outcome: Option<LockOp>,
    },
    /// An outermost hold, from the line that took it (`MonitorEntered`, `LockAcquired`) to the
    /// one that balanced the thread's count of it (`MonitorExit`, `LockRelease`).
    Hold {
        /// The monitor, or the lock and mode.
        held: Held,
        /// The hold's time less the time an `Object.wait` (a `Condition.await`, a `Thread.join`
        /// of the thread whose monitor it is) released it;
        /// up to its last resumption when open at the end.
        nanos: u64,
    },
    /// A blocking call, and its object: the object waited on, the thread joined, the
    /// semaphore, 00000000 for a sleep.
    Call {
        /// Which call.
        call: Call,
        /// Its object.
        object: Hash,
    },
    /// `Condition.await`: `ConditionAwait` to the thread's next `ConditionAwaited`, which
    /// names the condition and its lock (the begin's, when open at the end).
    Await {
        /// The condition's lock.
        lock: Hash,
        /// The condition.
        condition: Hash,
    },
    /// `LockSupport.park`: `ThreadPark` to the thread's next `ThreadParked`.
    Park {
        /// The park's blocker, as its begin names it (00000000: none).
        blocker: Hash,
    },
    /// A stretch of an outermost hold while the thread held it: from the hold's begin (or the
    /// `ObjectWaited`/`ConditionAwaited` that gave it back) to the wait that released it (or
    /// the release). Only a [`Pairer::with_stretches`] makes them, for the readers that draw
    /// holds (`orca timeline`, the page), each just before the pause or the [`SpanKind::Hold`]
    /// that ends it; its begin mark is the hold's (a resumption has its time, the hold's site).
    Stretch {
        /// The monitor, or the lock and mode.
        held: Held,
        /// How many holds the thread had taken before this one and still held (0: its first).
        depth: u32,
        /// Whether it began at a resumption, after a wait, rather than at the hold's begin.
        resumed: bool,
    },
}

/// One paired span of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The thread.
    pub thread: Hash,
    /// What happened.
    pub kind: SpanKind,
    /// Its begin line.
    pub begin: Mark,
    /// Its end line; `None` when it was still open at the end of the log.
    pub end: Option<Mark>,
    /// When it ended: its end line's time, else the log's end ([`Pairer::end`]).
    pub end_ts: u64,
}

impl Span {
    /// Its length, from its begin to its end (for a hold, [`SpanKind::Hold`]'s `nanos` leaves
    /// out its pauses).
    pub fn nanos(&self) -> u64 {
        self.end_ts.saturating_sub(self.begin.ts)
    }

    /// Whether it was still open at the end of the log.
    pub fn is_open(&self) -> bool {
        self.end.is_none()
    }
}

/// What kinds of line a log has, which decide how its holds are read (docs/FORMAT.md,
/// "Summary lines"). Each reader used to work these out itself, and not alike: the page and
/// `orca timeline` took a log with `LockHoldsUntimed` lines only for one with every hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Some `MonitorEntered` line: monitor holds can be followed from the events.
    pub monitor_entered: bool,
    /// Some `LockHolds`, `LockHoldsUntimed` or `LockHold` line.
    pub lock_summaries: bool,
    /// Some `LockRelease` line.
    pub lock_releases: bool,
}

impl Shape {
    /// Notes one line.
    pub fn observe(&mut self, ev: &Event<'_>) {
        match ev {
            Event::MonitorEntered { .. } => self.monitor_entered = true,
            Event::LockHolds { .. } | Event::LockHoldsUntimed { .. } | Event::LockHold { .. } => {
                self.lock_summaries = true
            }
            Event::Lock {
                op: LockOp::Release,
                ..
            } => self.lock_releases = true,
            _ => {}
        }
    }

    /// Whether the log is summarised for j.u.c. locks: summary lines of them and no
    /// `LockRelease`, so its `LockAcquired` lines are the contended acquisitions only, their
    /// releases are not written, and a j.u.c. hold the pairer has open is not one.
    pub fn juc_summarised(&self) -> bool {
        self.lock_summaries && !self.lock_releases
    }
}

/// A line that pairs with nothing, as [`Pairer::feed_checked`] reports it (`orca check` says
/// so: validate.rs). Lines are the ones given to [`Pairer::feed_checked`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unpaired {
    /// A monitor event while the thread's `MonitorContendedEnter` of `monitor` (at `line`) has
    /// no `MonitorContendedEntered`; the contention is dropped.
    Contention {
        /// Its monitor.
        monitor: Hash,
        /// Its `MonitorContendedEnter`'s line.
        line: u64,
    },
    /// A `MonitorContendedEntered` of `monitor` without a `MonitorContendedEnter`.
    Uncontended {
        /// Its monitor.
        monitor: Hash,
    },
    /// A monitor event while the thread's `MonitorEnter` of `monitor` (at `line`) has no
    /// `MonitorEntered`.
    Entering {
        /// Its monitor.
        monitor: Hash,
        /// Its `MonitorEnter`'s line.
        line: u64,
    },
    /// A `MonitorExit` or `LockRelease` of what the thread does not hold.
    Unbalanced(Held),
    /// A call's begin, or a line that comes outside calls only, inside the thread's open call
    /// (tracked calls never nest): `open` is that call's begin, at `line`.
    Nested {
        /// The open call's begin kind.
        open: EventKind,
        /// Its line.
        line: u64,
    },
    /// A call's end without its begin (`expected`).
    Unbegun {
        /// The begin it needs.
        expected: EventKind,
    },
    /// A call's end that closes another call (`open`, at `line`; `expected` was its begin).
    OtherCall {
        /// The open call's begin kind.
        open: EventKind,
        /// Its line.
        line: u64,
        /// The begin the end needs.
        expected: EventKind,
    },
    /// A call's end whose object is not its begin's (`was`).
    OtherObject {
        /// The begin's kind.
        open: EventKind,
        /// Its line.
        line: u64,
        /// Its object.
        was: Option<Hash>,
    },
    /// A call's end whose mode is not its begin's.
    OtherMode {
        /// The begin's kind.
        open: EventKind,
        /// Its line.
        line: u64,
    },
    /// A call's end whose call site (top frame) is not its begin's.
    OtherSite {
        /// The begin's kind.
        open: EventKind,
        /// Its line.
        line: u64,
    },
    /// A `ThreadEnded` inside the thread's open call; the call ends there.
    EndedInCall {
        /// The call's begin kind.
        open: EventKind,
        /// Its line.
        line: u64,
    },
    /// A `ThreadEnded` while the thread was blocked on `monitor` (since `line`).
    EndedBlocked {
        /// The monitor.
        monitor: Hash,
        /// Its `MonitorContendedEnter`'s line.
        line: u64,
    },
}

/// The tracked call a thread is in: one at a time (docs/FORMAT.md: tracked calls never nest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCall {
    /// Its begin line's kind (`ObjectWait`, `LockAcquire`, ...).
    pub begin_kind: EventKind,
    /// Its begin line's object, which its end must repeat.
    pub object: Option<Hash>,
    /// Its begin line's mode, which its end must repeat.
    pub mode: Option<LockMode>,
    /// The span it makes if it is still open at the end (an [`SpanKind::Acquire`] with no
    /// outcome).
    pub kind: SpanKind,
    /// Its begin.
    pub begin: Mark,
}

/// A hold the thread has open, as [`Pairer::holds`] shows it.
#[derive(Debug, Clone, Copy)]
pub struct OpenHold<'a> {
    /// The monitor, or the lock and mode.
    pub held: Held,
    /// How many times the thread holds it.
    pub count: u32,
    /// The outermost hold's begin.
    pub begin: &'a Mark,
    /// Since when (timestamp, line) it runs, unless a wait (a join of the thread whose
    /// monitor it is) has released it.
    pub running: Option<(u64, u64)>,
}

/// A hold being followed: what, the thread's count of it, since when it runs (its begin, or
/// its last resumption, and that line), its begin, and its time before its last pause.
#[derive(Debug)]
struct Open {
    held: Held,
    count: u32,
    since: u64,
    since_line: u64,
    begin: Mark,
    before: u64,
    /// Released by a wait that has not returned.
    paused: bool,
    /// Given back by a wait since its begin.
    resumed: bool,
}

impl Open {
    /// Its time held up to `ts`, less its pauses.
    fn nanos(&self, ts: u64) -> u64 {
        if self.paused {
            self.before
        } else {
            self.before + ts.saturating_sub(self.since)
        }
    }

    /// The stretch that ends at `end` (a pause or the release), if it is running.
    fn stretch(&self, thread: Hash, depth: usize, end: Mark) -> Option<Span> {
        (!self.paused).then(|| Span {
            thread,
            kind: SpanKind::Stretch {
                held: self.held,
                depth: depth as u32,
                resumed: self.resumed,
            },
            begin: Mark {
                ts: self.since,
                line: self.since_line,
                top: self.begin.top,
                stack: String::new(),
            },
            end_ts: end.ts,
            end: Some(end),
        })
    }
}

/// What one thread has open.
#[derive(Debug, Default)]
struct Thread {
    /// Its `MonitorContendedEnter`: the monitor, its owner, the line.
    contended: Option<(Hash, Hash, Mark)>,
    /// Its `MonitorEnter` without its `MonitorEntered` yet.
    entering: Option<(Hash, Mark)>,
    call: Option<OpenCall>,
    /// Monitors and j.u.c. locks held, in the order taken (`orca deadlocks` reads the order).
    holds: Vec<Open>,
    /// It has had its `ThreadEnded`: a `ThreadStarted` after it is another thread's.
    ended: bool,
}

/// Pairs a log's events into [`Span`]s, one event at a time ([`Pairer::feed`]), and closes what
/// is open at the end ([`Pairer::finish`]).
#[derive(Debug, Default)]
pub struct Pairer {
    threads: FastMap<Hash, Thread>,
    shape: Shape,
    stacks: Stacks,
    stretches: bool,
    first: Option<u64>,
    last: u64,
}

impl Pairer {
    /// A pairer whose marks carry top frames only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pairer whose marks carry whole stacks too (`orca pprof`).
    pub fn with_stacks() -> Self {
        Self::with_stacks_for(Stacks {
            blocked: true,
            holds: true,
            waits: true,
        })
    }

    /// A pairer whose marks carry whole stacks for the spans `which` names only: a whole
    /// stack is an allocation per span, and `orca flame --weight held` needs the holds' only
    /// (with every kind's, it read a 240 MB log in 0.55 s of CPU instead of 0.37).
    pub fn with_stacks_for(which: Stacks) -> Self {
        Pairer {
            stacks: which,
            ..Self::default()
        }
    }

    /// The same pairer, also handing out the [`SpanKind::Stretch`]es of every hold.
    pub fn with_stretches(mut self) -> Self {
        self.stretches = true;
        self
    }

    /// What kinds of line the log has had so far.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The log's first event's time, if it has one (`RecordingStarted` and `RecordingEnded`
    /// are not events: docs/FORMAT.md).
    pub fn start(&self) -> Option<u64> {
        self.first
    }

    /// The log's end: its last event's time (0 for a log without events). Spans still open
    /// at the end end here.
    pub fn end(&self) -> u64 {
        self.last
    }

    fn mark(stacks: bool, line: u64, ts: u64, ev: &Event<'_>) -> Mark {
        let stack = ev.stack();
        Mark {
            ts,
            line,
            top: stack.and_then(|s| s.top()),
            stack: match stack {
                Some(s) if stacks => s.raw().to_string(),
                _ => String::new(),
            },
        }
    }

    /// What `thread` holds now, in the order it took them (each monitor, and each j.u.c. lock
    /// in a mode, once however often it holds it).
    pub fn holds(&self, thread: Hash) -> impl Iterator<Item = OpenHold<'_>> + '_ {
        let t = self.threads.get(&thread);
        t.into_iter().flat_map(|t| {
            t.holds.iter().map(|h| OpenHold {
                held: h.held,
                count: h.count,
                begin: &h.begin,
                running: (!h.paused).then_some((h.since, h.since_line)),
            })
        })
    }

    /// The monitor `thread` is blocked on (its `MonitorContendedEnter` without its
    /// `MonitorContendedEntered` yet), with the owner it named and that line.
    pub fn contended(&self, thread: Hash) -> Option<(Hash, Hash, &Mark)> {
        let (m, o, mark) = self.threads.get(&thread)?.contended.as_ref()?;
        Some((*m, *o, mark))
    }

    /// The monitor of `thread`'s `MonitorEnter` without its `MonitorEntered` yet, and that line.
    pub fn entering(&self, thread: Hash) -> Option<(Hash, &Mark)> {
        let (m, mark) = self.threads.get(&thread)?.entering.as_ref()?;
        Some((*m, mark))
    }

    /// The tracked call `thread` is in.
    pub fn open_call(&self, thread: Hash) -> Option<&OpenCall> {
        self.threads.get(&thread)?.call.as_ref()
    }

    /// Takes one event (in file order), and hands `out` the spans it ends.
    pub fn feed(&mut self, ts: u64, ev: &Event<'_>, out: &mut impl FnMut(Span)) {
        self.feed_checked(0, ts, ev, out, &mut |_| {})
    }

    /// [`Pairer::feed`] for the event of `line` (the marks carry it), telling `unpaired`
    /// where it pairs with nothing (`orca check`).
    pub fn feed_checked(
        &mut self,
        line: u64,
        ts: u64,
        ev: &Event<'_>,
        out: &mut impl FnMut(Span),
        unpaired: &mut impl FnMut(Unpaired),
    ) {
        use EventKind as K;
        if matches!(
            ev,
            Event::RecordingStarted { .. } | Event::RecordingEnded { .. }
        ) {
            return;
        }
        self.shape.observe(ev);
        self.first = Some(self.first.map_or(ts, |f| f.min(ts)));
        self.last = self.last.max(ts);
        let Some(thread) = ev.thread() else { return };
        if ev.kind().is_summary() {
            // Summary rows pair with nothing (a thread that writes only them has no state).
            return;
        }
        // Made only for a line that begins or ends a span (a whole stack is an allocation).
        let keep = self.stacks;
        let mark = |stack: bool| Self::mark(stack, line, ts, ev);
        let stretches = self.stretches;
        if let Event::ThreadStarted { .. } = ev {
            // A thread ID used again: what the ended thread left open is its own.
            if self.threads.get(&thread).is_some_and(|t| t.ended) {
                let t = self.threads.remove(&thread).expect("there");
                close(thread, t, ts, stretches, out);
            }
        }
        let t = self.threads.entry(thread).or_default();
        let span = |kind, begin, end: Mark| Span {
            thread,
            kind,
            begin,
            end_ts: end.ts,
            end: Some(end),
        };
        // Which thread's stretches a pause or a release hands out, if any are asked for.
        let stretch = stretches.then_some(thread);
        let kind = ev.kind();
        let obj = ev.object();
        // A contention pair and a MonitorEnter pair are closed before any other monitor event
        // of the thread (docs/FORMAT.md); other events may come between.
        let is_monitor = matches!(
            kind,
            K::MonitorContendedEnter
                | K::MonitorContendedEntered
                | K::MonitorEnter
                | K::MonitorEntered
                | K::MonitorExit
        );
        match t.contended.take() {
            Some((m, owner, begin)) if kind == K::MonitorContendedEntered && obj == Some(m) => {
                let end = mark(keep.blocked);
                out(span(SpanKind::Blocked { monitor: m, owner }, begin, end));
            }
            Some((m, _, begin)) if is_monitor => {
                unpaired(Unpaired::Contention {
                    monitor: m,
                    line: begin.line,
                });
                if kind == K::MonitorContendedEntered {
                    return; // the other monitor's: nothing more to pair
                }
            }
            Some(c) => t.contended = Some(c),
            None if kind == K::MonitorContendedEntered => unpaired(Unpaired::Uncontended {
                monitor: obj.unwrap_or(Hash(0)),
            }),
            None => {}
        }
        if let Some((m, begin)) = &t.entering {
            let m = *m;
            let contention = matches!(kind, K::MonitorContendedEnter | K::MonitorContendedEntered)
                && obj == Some(m);
            if kind == K::MonitorEntered && obj == Some(m) {
                t.entering = None;
            } else if is_monitor && !contention {
                unpaired(Unpaired::Entering {
                    monitor: m,
                    line: begin.line,
                });
                t.entering = None;
            }
        }
        // Holds first, then the tracked call (a `LockAcquired` takes the lock and ends its
        // acquisition).
        match *ev {
            Event::MonitorContendedEnter { monitor, owner, .. } => {
                t.contended = Some((monitor, owner, mark(keep.blocked)));
            }
            Event::MonitorEnter { monitor, .. } => {
                t.entering = Some((monitor, mark(false)));
            }
            Event::MonitorEntered { monitor, .. } => {
                // `Thread.join` is `synchronized` on the thread it joins and waits on it (no
                // event of its own: a call inside a tracked call): the hold it takes there is
                // released from the start.
                let joining = matches!(
                    t.call,
                    Some(OpenCall { kind: SpanKind::Call { call: Call::Join, object }, .. })
                        if object == monitor
                );
                take(&mut t.holds, Held::Monitor(monitor), joining, || {
                    mark(keep.holds)
                });
            }
            Event::MonitorExit { monitor, .. } => {
                let end = || mark(keep.holds);
                match release(&mut t.holds, Held::Monitor(monitor), stretch, end, out) {
                    Released::Whole(held, nanos, begin, end) => {
                        out(span(SpanKind::Hold { held, nanos }, begin, end))
                    }
                    Released::Inner => {}
                    Released::NotHeld => unpaired(Unpaired::Unbalanced(Held::Monitor(monitor))),
                }
            }
            Event::ObjectWait { object, .. } => {
                // Object.wait releases the monitor until it returns: its hold pauses.
                let of = |h| h == Held::Monitor(object);
                pause(&mut t.holds, of, ts, line, stretch, out);
            }
            Event::ObjectWaited { object, .. } => {
                resume(&mut t.holds, |h| h == Held::Monitor(object), ts, line);
            }
            Event::ThreadJoin { joined, .. } => {
                // join waits on the joined thread's object: a hold of its monitor pauses.
                let of = |h| h == Held::Monitor(joined);
                pause(&mut t.holds, of, ts, line, stretch, out);
            }
            Event::ThreadJoined { joined, .. } => {
                resume(&mut t.holds, |h| h == Held::Monitor(joined), ts, line);
            }
            Event::Lock { op, lock, mode, .. } => match op {
                LockOp::Acquired => take(&mut t.holds, Held::Lock(lock, mode), false, || {
                    mark(keep.holds)
                }),
                LockOp::Release => {
                    let end = || mark(keep.holds);
                    let held = Held::Lock(lock, mode);
                    match release(&mut t.holds, held, stretch, end, out) {
                        Released::Whole(held, nanos, begin, end) => {
                            out(span(SpanKind::Hold { held, nanos }, begin, end))
                        }
                        Released::Inner => {}
                        Released::NotHeld => unpaired(Unpaired::Unbalanced(held)),
                    }
                }
                LockOp::Failed | LockOp::TimedOut | LockOp::Interrupted => {}
            },
            Event::Condition { op, lock, .. } => {
                // await releases the lock, in every mode, until it returns.
                let of_lock = |h| matches!(h, Held::Lock(l, _) if l == lock);
                match op {
                    ConditionOp::Await => pause(&mut t.holds, of_lock, ts, line, stretch, out),
                    ConditionOp::Awaited => resume(&mut t.holds, of_lock, ts, line),
                    ConditionOp::Signal | ConditionOp::SignalAll => {}
                }
            }
            _ => {}
        }
        // The tracked call: a begin opens it, its end closes it (and makes its span), and the
        // calls that are never tracked inside another are checked.
        match kind {
            K::ObjectWait
            | K::ThreadJoin
            | K::ThreadSleep
            | K::SemaphoreAcquire
            | K::LockAcquire
            | K::ConditionAwait
            | K::ThreadPark => {
                if let Some(c) = &t.call {
                    unpaired(Unpaired::Nested {
                        open: c.begin_kind,
                        line: c.begin.line,
                    });
                }
                let kind_of = match *ev {
                    Event::ObjectWait { object, .. } => SpanKind::Call {
                        call: Call::Wait,
                        object,
                    },
                    Event::ThreadJoin { joined, .. } => SpanKind::Call {
                        call: Call::Join,
                        object: joined,
                    },
                    Event::ThreadSleep { .. } => SpanKind::Call {
                        call: Call::Sleep,
                        object: Hash(0),
                    },
                    Event::SemaphoreAcquire { semaphore, .. } => SpanKind::Call {
                        call: Call::Semaphore,
                        object: semaphore,
                    },
                    Event::LockAcquire {
                        lock, mode, owner, ..
                    } => SpanKind::Acquire {
                        lock,
                        mode,
                        owner,
                        outcome: None,
                    },
                    Event::Condition {
                        lock, condition, ..
                    } => SpanKind::Await { lock, condition },
                    Event::ThreadPark { blocker, .. } => SpanKind::Park { blocker },
                    _ => unreachable!("a call's begin"),
                };
                let stacks = match kind {
                    K::LockAcquire => keep.blocked,
                    _ => keep.waits,
                };
                t.call = Some(OpenCall {
                    begin_kind: kind,
                    object: obj,
                    mode: ev.mode(),
                    kind: kind_of,
                    begin: mark(stacks),
                });
            }
            K::ObjectWaited
            | K::ThreadJoined
            | K::ThreadSlept
            | K::SemaphoreAcquired
            | K::LockAcquired
            | K::LockFailed
            | K::LockTimedOut
            | K::LockInterrupted
            | K::ConditionAwaited
            | K::ThreadParked => {
                let expected = match kind {
                    K::ObjectWaited => K::ObjectWait,
                    K::ThreadJoined => K::ThreadJoin,
                    K::ThreadSlept => K::ThreadSleep,
                    K::SemaphoreAcquired => K::SemaphoreAcquire,
                    K::ConditionAwaited => K::ConditionAwait,
                    K::ThreadParked => K::ThreadPark,
                    _ => K::LockAcquire,
                };
                match t.call.take() {
                    None => unpaired(Unpaired::Unbegun { expected }),
                    Some(c) if c.begin_kind != expected => unpaired(Unpaired::OtherCall {
                        open: c.begin_kind,
                        line: c.begin.line,
                        expected,
                    }),
                    Some(c) => {
                        let (open, line) = (c.begin_kind, c.begin.line);
                        let top = ev.stack().and_then(|s| s.top());
                        if c.object != obj {
                            unpaired(Unpaired::OtherObject {
                                open,
                                line,
                                was: c.object,
                            });
                        } else if c.mode != ev.mode() {
                            unpaired(Unpaired::OtherMode { open, line });
                        } else if c.begin.top.is_some() && top.is_some() && c.begin.top != top {
                            unpaired(Unpaired::OtherSite { open, line });
                        }
                        // The end line names the lock, its mode and the condition.
                        let (kind_of, stacks) = match (c.kind, *ev) {
                            (
                                SpanKind::Acquire { owner, .. },
                                Event::Lock { op, lock, mode, .. },
                            ) => (
                                SpanKind::Acquire {
                                    lock,
                                    mode,
                                    owner,
                                    outcome: Some(op),
                                },
                                keep.blocked,
                            ),
                            (
                                SpanKind::Await { .. },
                                Event::Condition {
                                    lock, condition, ..
                                },
                            ) => (SpanKind::Await { lock, condition }, keep.waits),
                            (k, _) => (k, keep.waits),
                        };
                        out(span(kind_of, c.begin, mark(stacks)));
                    }
                }
            }
            K::ObjectNotify
            | K::ObjectNotifyAll
            | K::ThreadStart
            | K::SemaphoreRelease
            | K::LockRelease
            | K::LockHeldAtStart
            | K::ConditionSignal
            | K::ConditionSignalAll
            | K::ThreadUnpark => {
                if let Some(c) = &t.call {
                    unpaired(Unpaired::Nested {
                        open: c.begin_kind,
                        line: c.begin.line,
                    });
                }
            }
            K::ThreadEnded => {
                // A thread that ended is in no call and blocked on nothing: those end here.
                // Its holds stay open (a j.u.c. lock stays locked; System.exit ends a thread
                // inside the JDK's `synchronized` shutdown code).
                if let Some(c) = t.call.take() {
                    unpaired(Unpaired::EndedInCall {
                        open: c.begin_kind,
                        line: c.begin.line,
                    });
                    out(Span {
                        thread,
                        kind: c.kind,
                        begin: c.begin,
                        end: None,
                        end_ts: ts,
                    });
                }
                if let Some((monitor, owner, begin)) = t.contended.take() {
                    unpaired(Unpaired::EndedBlocked {
                        monitor,
                        line: begin.line,
                    });
                    out(Span {
                        thread,
                        kind: SpanKind::Blocked { monitor, owner },
                        begin,
                        end: None,
                        end_ts: ts,
                    });
                }
                t.ended = true;
            }
            _ => {}
        }
    }

    /// Hands `out` every span still open at the end of the log, ending at [`Pairer::end`]: per
    /// thread, its contention, its call, its holds (in the order taken).
    pub fn finish(self, out: &mut impl FnMut(Span)) {
        let end = self.last;
        for (thread, t) in self.threads {
            close(thread, t, end, self.stretches, out);
        }
    }
}

/// Hands `out` what `t` has open, as spans open at `end`.
fn close(thread: Hash, t: Thread, end: u64, stretches: bool, out: &mut impl FnMut(Span)) {
    let open = |kind, begin| Span {
        thread,
        kind,
        begin,
        end: None,
        end_ts: end,
    };
    if let Some((monitor, owner, begin)) = t.contended {
        out(open(SpanKind::Blocked { monitor, owner }, begin));
    }
    if let Some(c) = t.call {
        out(open(c.kind, c.begin));
    }
    for (depth, h) in t.holds.into_iter().enumerate() {
        if stretches {
            let at = Mark {
                ts: end,
                ..Mark::default()
            };
            if let Some(mut s) = h.stretch(thread, depth, at) {
                s.end = None;
                out(s);
            }
        }
        let nanos = h.nanos(end);
        out(open(
            SpanKind::Hold {
                held: h.held,
                nanos,
            },
            h.begin,
        ));
    }
}

/// One more of `held` on the thread: a hold begins at its first (`released`: with its
/// monitor given up at once, inside a `Thread.join`).
fn take(holds: &mut Vec<Open>, held: Held, released: bool, begin: impl FnOnce() -> Mark) {
    match holds.iter_mut().find(|h| h.held == held) {
        Some(h) => h.count += 1,
        None => {
            let begin = begin();
            holds.push(Open {
                held,
                count: 1,
                since: begin.ts,
                since_line: begin.line,
                begin,
                before: 0,
                paused: released,
                resumed: false,
            })
        }
    }
}

/// What one release did.
enum Released {
    /// It balanced the count: the hold, its time net of its pauses, its begin and its end.
    Whole(Held, u64, Mark, Mark),
    /// The thread still holds it.
    Inner,
    /// The thread did not hold it.
    NotHeld,
}

/// One less of `held`. The hold's last stretch goes to `out` first when `stretch` names the
/// thread.
fn release(
    holds: &mut Vec<Open>,
    held: Held,
    stretch: Option<Hash>,
    end: impl FnOnce() -> Mark,
    out: &mut impl FnMut(Span),
) -> Released {
    let Some(i) = holds.iter().position(|h| h.held == held) else {
        return Released::NotHeld;
    };
    holds[i].count -= 1;
    if holds[i].count > 0 {
        return Released::Inner;
    }
    let h = holds.remove(i);
    let end = end();
    if let Some(s) = stretch.and_then(|thread| h.stretch(thread, i, end.clone())) {
        out(s);
    }
    Released::Whole(h.held, h.nanos(end.ts), h.begin, end)
}

/// A wait released the holds `which` picks at `ts` (line `line`): each pauses, and its stretch
/// so far goes to `out` when `stretch` names the thread.
fn pause(
    holds: &mut [Open],
    which: impl Fn(Held) -> bool,
    ts: u64,
    line: u64,
    stretch: Option<Hash>,
    out: &mut impl FnMut(Span),
) {
    for (i, h) in holds.iter_mut().enumerate().filter(|(_, h)| which(h.held)) {
        let at = || Mark {
            ts,
            line,
            ..Mark::default()
        };
        if let Some(s) = stretch.and_then(|thread| h.stretch(thread, i, at())) {
            out(s);
        }
        h.before = h.nanos(ts);
        h.since = ts;
        h.since_line = line;
        h.paused = true;
    }
}

/// The wait returned at `ts` (line `line`): the paused holds `which` picks run again from
/// there. One that runs already (its wait's begin is not in the log) runs on as it was.
fn resume(holds: &mut [Open], which: impl Fn(Held) -> bool, ts: u64, line: u64) {
    for h in holds.iter_mut().filter(|h| h.paused && which(h.held)) {
        h.since = ts;
        h.since_line = line;
        h.resumed = true;
        h.paused = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_event_line;

    fn spans(log: &str) -> Vec<Span> {
        let mut p = Pairer::new();
        let mut v = Vec::new();
        for line in log.lines() {
            let rec = parse_event_line(line.as_bytes()).unwrap();
            p.feed(rec.timestamp.nanos(), &rec.event, &mut |s| v.push(s));
        }
        p.finish(&mut |s| v.push(s));
        v
    }

    #[test]
    fn a_hold_is_its_outermost_enter_to_its_balancing_exit_less_its_wait() {
        let v = spans(
            "1.000000000,MonitorEntered,00000001,0000000A,0\n\
             2.000000000,MonitorEntered,00000001,0000000A,0\n\
             3.000000000,ObjectWait,00000001,0000000A,0\n\
             7.000000000,ObjectWaited,00000001,0000000A,0\n\
             8.000000000,MonitorExit,00000001,0000000A,0\n\
             9.000000000,MonitorExit,00000001,0000000A,0\n",
        );
        let kinds: Vec<_> = v.iter().map(|s| (s.kind, s.begin.ts, s.end_ts)).collect();
        assert_eq!(
            kinds,
            [
                (
                    SpanKind::Call {
                        call: Call::Wait,
                        object: Hash(10)
                    },
                    3_000_000_000,
                    7_000_000_000
                ),
                (
                    SpanKind::Hold {
                        held: Held::Monitor(Hash(10)),
                        nanos: 4_000_000_000
                    },
                    1_000_000_000,
                    9_000_000_000
                ),
            ]
        );
    }

    #[test]
    fn a_hold_paused_by_a_wait_has_two_stretches_and_its_open_wait_is_not_held() {
        let log = "1.000000000,MonitorEntered,00000001,0000000A,0\n\
             2.000000000,LockAcquired,00000001,0000000B,W,0\n\
             3.000000000,ObjectWait,00000001,0000000A,0\n\
             5.000000000,ObjectWaited,00000001,0000000A,0\n\
             6.000000000,ConditionAwait,00000001,0000000C,0000000B,0\n\
             8.000000000,ThreadSleep,00000002,0\n";
        let mut p = Pairer::new().with_stretches();
        let mut v = Vec::new();
        for line in log.lines() {
            let rec = parse_event_line(line.as_bytes()).unwrap();
            p.feed(rec.timestamp.nanos(), &rec.event, &mut |s| v.push(s));
        }
        p.finish(&mut |s| v.push(s));
        let got: Vec<_> = v
            .iter()
            .filter_map(|s| match s.kind {
                SpanKind::Stretch {
                    held,
                    depth,
                    resumed,
                } => Some((
                    held,
                    depth,
                    resumed,
                    s.begin.ts / 1_000_000_000,
                    s.end_ts / 1_000_000_000,
                    s.is_open(),
                )),
                SpanKind::Hold { held, nanos } => {
                    Some((held, 9, false, nanos / 1_000_000_000, 0, s.is_open()))
                }
                _ => None,
            })
            .collect();
        let (m, l) = (
            Held::Monitor(Hash(10)),
            Held::Lock(Hash(11), LockMode::Write),
        );
        assert_eq!(
            got,
            [
                (m, 0, false, 1, 3, false),
                (l, 1, false, 2, 6, false),
                // open at the end (8 s): the monitor's last stretch runs to it, the lock's
                // await has not returned, so the lock's hold is its 4 s before the await
                (m, 0, true, 5, 8, true),
                (m, 9, false, 5, 0, true),
                (l, 9, false, 4, 0, true),
            ]
        );
    }

    #[test]
    fn what_is_open_at_the_end_ends_at_the_last_event() {
        let v = spans(
            "1.000000000,MonitorContendedEnter,00000002,0000000A,00000001,0\n\
             2.000000000,LockAcquired,00000001,0000000B,W,0\n\
             5.000000000,ThreadSleep,00000003,0\n\
             6.000000000,RecordingEnded,vmdeath\n",
        );
        assert!(v.iter().all(|s| s.is_open() && s.end_ts == 5_000_000_000));
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn a_contention_ended_by_another_monitor_is_no_span() {
        let v = spans(
            "1.000000000,MonitorContendedEnter,00000002,0000000A,00000001,0\n\
             2.000000000,MonitorContendedEntered,00000002,0000000B,0\n",
        );
        assert!(v.is_empty(), "{v:?}");
    }

    /// `Thread.join` waits on the joined thread's object: a hold of its monitor around the
    /// join is released for the join's time, and the join's own `synchronized` hold of it
    /// (JDK 17's `join` is a `synchronized` method) holds it for none of that time.
    #[test]
    fn a_join_releases_the_joined_threads_monitor() {
        let log = "1.000000000,MonitorEntered,00000001,0000000A,0\n\
             2.000000000,ThreadJoin,00000001,0000000A,0\n\
             2.000000000,MonitorEntered,00000001,0000000A,0\n\
             6.000000000,MonitorExit,00000001,0000000A,0\n\
             6.000000000,ThreadJoined,00000001,0000000A,0\n\
             7.000000000,MonitorExit,00000001,0000000A,0\n";
        let mut p = Pairer::new().with_stretches();
        let mut v = Vec::new();
        for line in log.lines() {
            let rec = parse_event_line(line.as_bytes()).unwrap();
            p.feed(rec.timestamp.nanos(), &rec.event, &mut |s| v.push(s));
        }
        let got: Vec<_> = v
            .iter()
            .filter_map(|s| match s.kind {
                SpanKind::Stretch { .. } => Some(("stretch", s.begin.ts, s.end_ts)),
                SpanKind::Hold { nanos, .. } => Some(("hold", nanos, 0)),
                _ => None,
            })
            .collect();
        let g = 1_000_000_000;
        assert_eq!(
            got,
            [
                ("stretch", g, 2 * g),
                ("stretch", 6 * g, 7 * g),
                ("hold", 2 * g, 0)
            ]
        );
    }

    /// What pairs with nothing is said once, at its line, and makes no span.
    #[test]
    fn lines_that_pair_with_nothing_are_reported_with_the_line_they_miss() {
        let log = "1.000000000,MonitorExit,00000001,0000000A,0\n\
             2.000000000,ObjectWait,00000001,0000000A,0\n\
             3.000000000,ThreadSleep,00000001,0\n\
             4.000000000,ObjectWaited,00000001,0000000A,0\n\
             5.000000000,MonitorContendedEnter,00000002,0000000B,00000001,0\n\
             6.000000000,MonitorContendedEntered,00000002,0000000C,0\n\
             7.000000000,LockAcquire,00000003,0000000D,W,00000000,0\n\
             8.000000000,ThreadEnded,00000003\n";
        let mut p = Pairer::new();
        let (mut spans, mut bad) = (Vec::new(), Vec::new());
        for (n, line) in log.lines().enumerate() {
            let rec = parse_event_line(line.as_bytes()).unwrap();
            let ts = rec.timestamp.nanos();
            let n = n as u64 + 1;
            p.feed_checked(n, ts, &rec.event, &mut |s| spans.push(s), &mut |u| {
                bad.push((n, u))
            });
        }
        use EventKind as K;
        assert_eq!(
            bad,
            [
                (1, Unpaired::Unbalanced(Held::Monitor(Hash(10)))),
                (
                    3,
                    Unpaired::Nested {
                        open: K::ObjectWait,
                        line: 2
                    }
                ),
                (
                    4,
                    Unpaired::OtherCall {
                        open: K::ThreadSleep,
                        line: 3,
                        expected: K::ObjectWait
                    }
                ),
                (
                    6,
                    Unpaired::Contention {
                        monitor: Hash(11),
                        line: 5
                    }
                ),
                (
                    8,
                    Unpaired::EndedInCall {
                        open: K::LockAcquire,
                        line: 7
                    }
                ),
            ]
        );
        // Only the acquisition its thread's end ended is a span, open, ending there.
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert!(spans[0].is_open() && spans[0].end_ts == 8_000_000_000);
    }
}
