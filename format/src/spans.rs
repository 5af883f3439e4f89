//! Pairing: the log's begin and end lines made into spans, in one streaming pass, for every
//! reader that adds up time (`orca report` and its JSON, `orca pprof`).
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
//! the monitor (a `Condition.await` of the lock, in every mode) pauses it. Lines that pair
//! with nothing (an exit with no open entry, the `MonitorContendedEntered` of another monitor)
//! make no span: `orca check` reports them (validate.rs). A span still open at the end of the
//! log ends at the log's last event ([`Pairer::end`]), with no end line.
//!
//! Memory is per thread and per held lock, never per event.

use crate::{ConditionOp, Event, FastMap, Frame, Hash, LockMode, LockOp};

/// One end of a span: when, where (the line's top frame) and, for a [`Pairer::with_stacks`],
/// the line's whole stack (`StackTrace::raw`; empty otherwise, and for a line without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mark {
    /// The line's timestamp, in nanoseconds.
    pub ts: u64,
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
        /// The hold's time less the time an `Object.wait` (a `Condition.await`) released it;
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

/// The open `Condition.await` or park of a thread (they share one slot, as one thread is in
/// at most one).
#[derive(Debug)]
enum JucCall {
    Await { lock: Hash, condition: Hash },
    Park { blocker: Hash },
}

/// A hold being followed: what, the thread's count of it, since when it runs (its begin, or
/// its last resumption), its begin, and its time before its last pause.
#[derive(Debug)]
struct Open {
    held: Held,
    count: u32,
    since: u64,
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

    /// The stretch that ends at `ts` (a pause or the release), if it is running.
    fn stretch(&self, thread: Hash, depth: usize, ts: u64) -> Option<Span> {
        (!self.paused).then(|| Span {
            thread,
            kind: SpanKind::Stretch {
                held: self.held,
                depth: depth as u32,
                resumed: self.resumed,
            },
            begin: Mark {
                ts: self.since,
                top: self.begin.top,
                stack: String::new(),
            },
            end: Some(Mark {
                ts,
                top: None,
                stack: String::new(),
            }),
            end_ts: ts,
        })
    }
}

/// What one thread has open.
#[derive(Debug, Default)]
struct Thread {
    contended: Option<(Hash, Hash, Mark)>,
    call: Option<(Call, Hash, Mark)>,
    acquire: Option<(Hash, LockMode, Hash, Mark)>,
    juc_call: Option<(JucCall, Mark)>,
    /// Monitors and j.u.c. locks held, in the order taken (`orca deadlocks` reads the order).
    holds: Vec<Open>,
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

    fn mark(stacks: bool, ts: u64, ev: &Event<'_>) -> Mark {
        let stack = ev.stack();
        Mark {
            ts,
            top: stack.and_then(|s| s.top()),
            stack: match stack {
                Some(s) if stacks => s.raw().to_string(),
                _ => String::new(),
            },
        }
    }

    /// What `thread` holds now, in the order it took them (each monitor, and each j.u.c. lock
    /// in a mode, once however often it holds it), with the begin of its outermost hold.
    pub fn holds(&self, thread: Hash) -> impl Iterator<Item = (Held, &Mark)> + '_ {
        let t = self.threads.get(&thread);
        t.into_iter()
            .flat_map(|t| t.holds.iter().map(|h| (h.held, &h.begin)))
    }

    /// Takes one event (in file order), and hands `out` the spans it ends.
    pub fn feed(&mut self, ts: u64, ev: &Event<'_>, out: &mut impl FnMut(Span)) {
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
        let mark = |stack: bool| Self::mark(stack, ts, ev);
        let t = self.threads.entry(thread).or_default();
        let span = |kind, begin, end: Mark| Span {
            thread,
            kind,
            begin,
            end_ts: end.ts,
            end: Some(end),
        };
        // Which thread's stretches a pause or a release hands out, if any are asked for.
        let stretch = self.stretches.then_some(thread);
        match *ev {
            Event::MonitorContendedEnter { monitor, owner, .. } => {
                t.contended = Some((monitor, owner, mark(keep.blocked)));
            }
            Event::MonitorContendedEntered { monitor, .. } => {
                if let Some((m, owner, begin)) = t.contended.take() {
                    if m == monitor {
                        out(span(
                            SpanKind::Blocked { monitor, owner },
                            begin,
                            mark(keep.blocked),
                        ));
                    }
                }
            }
            Event::MonitorEntered { monitor, .. } => {
                take(&mut t.holds, Held::Monitor(monitor), || mark(keep.holds));
            }
            Event::MonitorExit { monitor, .. } => {
                if let Some((held, nanos, begin)) =
                    release(&mut t.holds, Held::Monitor(monitor), ts, stretch, out)
                {
                    out(span(
                        SpanKind::Hold { held, nanos },
                        begin,
                        mark(keep.holds),
                    ));
                }
            }
            Event::ObjectWait { object, .. } => {
                // Object.wait releases the monitor until it returns: its hold pauses.
                pause(
                    &mut t.holds,
                    |h| h == Held::Monitor(object),
                    ts,
                    stretch,
                    out,
                );
                t.call = Some((Call::Wait, object, mark(keep.waits)));
            }
            Event::ObjectWaited { object, .. } => {
                resume(&mut t.holds, |h| h == Held::Monitor(object), ts);
                if let Some((call, object, begin)) = t.call.take() {
                    out(span(
                        SpanKind::Call { call, object },
                        begin,
                        mark(keep.waits),
                    ));
                }
            }
            Event::ThreadJoin { joined, .. } => {
                t.call = Some((Call::Join, joined, mark(keep.waits)))
            }
            Event::ThreadSleep { .. } => t.call = Some((Call::Sleep, Hash(0), mark(keep.waits))),
            Event::SemaphoreAcquire { semaphore, .. } => {
                t.call = Some((Call::Semaphore, semaphore, mark(keep.waits)))
            }
            Event::ThreadJoined { .. }
            | Event::ThreadSlept { .. }
            | Event::SemaphoreAcquired { .. } => {
                if let Some((call, object, begin)) = t.call.take() {
                    out(span(
                        SpanKind::Call { call, object },
                        begin,
                        mark(keep.waits),
                    ));
                }
            }
            Event::LockAcquire {
                lock, mode, owner, ..
            } => t.acquire = Some((lock, mode, owner, mark(keep.blocked))),
            Event::Lock { op, lock, mode, .. } => {
                if op != LockOp::Release {
                    if let Some((_, _, owner, begin)) = t.acquire.take() {
                        let kind = SpanKind::Acquire {
                            lock,
                            mode,
                            owner,
                            outcome: Some(op),
                        };
                        out(span(kind, begin, mark(keep.blocked)));
                    }
                }
                match op {
                    LockOp::Acquired => {
                        take(&mut t.holds, Held::Lock(lock, mode), || mark(keep.holds))
                    }
                    LockOp::Release => {
                        if let Some((held, nanos, begin)) =
                            release(&mut t.holds, Held::Lock(lock, mode), ts, stretch, out)
                        {
                            out(span(
                                SpanKind::Hold { held, nanos },
                                begin,
                                mark(keep.holds),
                            ));
                        }
                    }
                    LockOp::Failed | LockOp::TimedOut | LockOp::Interrupted => {}
                }
            }
            Event::Condition {
                op,
                lock,
                condition,
                ..
            } => match op {
                ConditionOp::Await => {
                    // await releases the lock, in every mode, until it returns.
                    let of_lock = |h| matches!(h, Held::Lock(l, _) if l == lock);
                    pause(&mut t.holds, of_lock, ts, stretch, out);
                    t.juc_call = Some((JucCall::Await { lock, condition }, mark(keep.waits)));
                }
                ConditionOp::Awaited => {
                    resume(
                        &mut t.holds,
                        |h| matches!(h, Held::Lock(l, _) if l == lock),
                        ts,
                    );
                    if let Some((_, begin)) = t.juc_call.take() {
                        out(span(
                            SpanKind::Await { lock, condition },
                            begin,
                            mark(keep.waits),
                        ));
                    }
                }
                ConditionOp::Signal | ConditionOp::SignalAll => {}
            },
            Event::ThreadPark { blocker, .. } => {
                t.juc_call = Some((JucCall::Park { blocker }, mark(keep.waits)));
            }
            Event::ThreadParked { .. } => {
                if let Some((call, begin)) = t.juc_call.take() {
                    let blocker = match call {
                        JucCall::Park { blocker } => blocker,
                        JucCall::Await { lock, .. } => lock,
                    };
                    out(span(SpanKind::Park { blocker }, begin, mark(keep.waits)));
                }
            }
            _ => {}
        }
    }

    /// Hands `out` every span still open at the end of the log, ending at [`Pairer::end`]: per
    /// thread, its contention, its call, its acquisition, its await or park, its holds (in
    /// the order taken).
    pub fn finish(self, out: &mut impl FnMut(Span)) {
        let end = self.last;
        for (thread, t) in self.threads {
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
            if let Some((call, object, begin)) = t.call {
                out(open(SpanKind::Call { call, object }, begin));
            }
            if let Some((lock, mode, owner, begin)) = t.acquire {
                let kind = SpanKind::Acquire {
                    lock,
                    mode,
                    owner,
                    outcome: None,
                };
                out(open(kind, begin));
            }
            if let Some((call, begin)) = t.juc_call {
                let kind = match call {
                    JucCall::Await { lock, condition } => SpanKind::Await { lock, condition },
                    JucCall::Park { blocker } => SpanKind::Park { blocker },
                };
                out(open(kind, begin));
            }
            for (depth, h) in t.holds.into_iter().enumerate() {
                if self.stretches {
                    if let Some(mut s) = h.stretch(thread, depth, end) {
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
    }
}

/// One more of `held` on the thread: a hold begins at its first.
fn take(holds: &mut Vec<Open>, held: Held, begin: impl FnOnce() -> Mark) {
    match holds.iter_mut().find(|h| h.held == held) {
        Some(h) => h.count += 1,
        None => {
            let begin = begin();
            holds.push(Open {
                held,
                count: 1,
                since: begin.ts,
                begin,
                before: 0,
                paused: false,
                resumed: false,
            })
        }
    }
}

/// One less of `held` at `ts`: the hold, its time net of its pauses and its begin, when this
/// balanced the count; `None` while it is still held, or when it was not held at all. Its last
/// stretch goes to `out` first when `stretch` names the thread.
fn release(
    holds: &mut Vec<Open>,
    held: Held,
    ts: u64,
    stretch: Option<Hash>,
    out: &mut impl FnMut(Span),
) -> Option<(Held, u64, Mark)> {
    let i = holds.iter().position(|h| h.held == held)?;
    holds[i].count -= 1;
    if holds[i].count > 0 {
        return None;
    }
    let h = holds.remove(i);
    if let Some(s) = stretch.and_then(|thread| h.stretch(thread, i, ts)) {
        out(s);
    }
    Some((h.held, h.nanos(ts), h.begin))
}

/// A wait released the holds `which` picks at `ts`: each pauses, and its stretch so far goes to
/// `out` when `stretch` names the thread.
fn pause(
    holds: &mut [Open],
    which: impl Fn(Held) -> bool,
    ts: u64,
    stretch: Option<Hash>,
    out: &mut impl FnMut(Span),
) {
    for (i, h) in holds.iter_mut().enumerate().filter(|(_, h)| which(h.held)) {
        if let Some(s) = stretch.and_then(|thread| h.stretch(thread, i, ts)) {
            out(s);
        }
        h.before = h.nanos(ts);
        h.since = ts;
        h.paused = true;
    }
}

/// The wait returned at `ts`: the holds `which` picks run again (each one, paused or not, from
/// `ts`, as a wait's return takes the monitor back).
fn resume(holds: &mut [Open], which: impl Fn(Held) -> bool, ts: u64) {
    for h in holds.iter_mut().filter(|h| which(h.held)) {
        h.before = h.nanos(ts);
        h.since = ts;
        h.resumed |= h.paused;
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
}
