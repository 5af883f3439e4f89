//! The reference aggregator of the summary lines (docs/FORMAT.md, "Summary lines
//! (instrumentation mode)"): it derives the `MonitorHolds`, `LockHolds`, `LockOrder`,
//! `MonitorHold` and `LockHold` lines the agent writes by default from the
//! `MonitorEnter`/`MonitorEntered`/`MonitorExit` and `LockAcquire`/`LockAcquired`/`LockRelease`
//! events of a complete trace. It defines what those lines mean, so it is kept small and
//! literal:
//!
//! - a **monitor hold** is outermost: from the `MonitorEntered` that takes the thread's count of
//!   the monitor from 0 to 1 to the `MonitorExit` that takes it back to 0; its **duration** leaves
//!   out the time inside `Object.wait` on that monitor; its **site** is the top frame of that
//!   `MonitorEntered`;
//! - a **j.u.c. hold** is the same for a (lock, mode): from the `LockAcquired` that takes the
//!   thread's count of (lock, mode) from 0 to 1 to the `LockRelease` that takes it back to 0,
//!   leaving out the time from each `ConditionAwait` to its `ConditionAwaited` on a condition of
//!   that lock; its site is the top frame of that `LockAcquired`;
//! - a **lock-order occurrence** is an attempt to take a monitor the thread does not hold (its
//!   `MonitorEnter`, or the `MonitorEntered` of a `synchronized` method, which has no
//!   `MonitorEnter`), or a (lock, mode) it does not hold (its `LockAcquire`): one per distinct
//!   ID (monitor or lock) held then other than the acquired ID, the other held IDs but the
//!   acquired one being its guards; held IDs are in the order of their earliest still-open
//!   hold, whose site is the held site;
//! - a thread's summaries are flushed when `interval_ns` has passed since its previous flush (at
//!   its next line), just before its `ThreadEnded`, and at the end of the log (threads still
//!   alive, last, at the log's last timestamp);
//! - a monitor hold longer than `threshold_ns` is also written as a `MonitorHold` at its
//!   `MonitorExit`; a j.u.c. hold of at least `threshold_ns` as a `LockHold` at its
//!   `LockRelease`, with the release's stack.
//!
//! The default mode's log ([`Derived::summary`]) keeps, of the j.u.c. lock events, the
//! `LockAcquire` and exit event of an acquisition that is contended (its owner is another
//! thread) or that does not end in `LockAcquired`, and drops every other `LockAcquire`,
//! `LockAcquired` and every `LockRelease`.
//!
//! Summary lines already in the input (a `trace=all` log) are dropped and derived again.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use orca_format::hist::bucket;
use orca_format::{
    parse_event_line, ConditionOp, Durations, Event, Frame, Hash, LockMode, LockOp, Timestamp,
};

/// When the reference agent flushes and which holds it writes out.
#[derive(Clone, Copy, Debug)]
pub struct Summarize {
    /// A thread's summaries are flushed once this much time has passed since the last flush.
    pub interval_ns: u64,
    /// Monitor holds longer than this are also written as `MonitorHold`, j.u.c. holds at
    /// least this long as `LockHold`.
    pub threshold_ns: u64,
}

/// What [`Summarize::run`] derives from one `.orca` text.
pub struct Derived {
    /// The default mode's log: the summary lines instead of MonitorEnter/Entered/Exit and of
    /// the uncontended j.u.c. acquisitions and every release.
    pub summary: String,
    /// The `trace=all` log: every input event and the summary lines.
    pub trace_all: String,
}

struct Held {
    /// The monitor's or the j.u.c. lock's ID.
    monitor: Hash,
    /// `None` for a monitor, the mode of a j.u.c. lock.
    mode: Option<LockMode>,
    count: u32,
    since: u64,
    paused: u64,
    site: Frame,
    stack: String,
}

#[derive(Default)]
struct Holds {
    count: u64,
    total: u64,
    max: u64,
    buckets: BTreeMap<u32, u64>,
}

impl Holds {
    /// The `<histogram>` field, in the steps form the agent writes.
    fn histogram(&self) -> String {
        let mut h = self.buckets.len().to_string();
        let mut prev = 0;
        for (&b, &c) in &self.buckets {
            let _ = write!(h, ";{}", b - prev);
            if c > 1 {
                let _ = write!(h, ":{c}");
            }
            prev = b;
        }
        h
    }
}

/// A one-frame site as (methodID, location).
pub type Site = (u32, u32);

#[derive(Default)]
struct ThreadState {
    interval_start: u64,
    held: Vec<Held>,
    entering: Option<Hash>,
    ended: bool,
    /// (monitor, site) -> holds in this interval.
    holds: BTreeMap<(Hash, Site), Holds>,
    /// (lock, mode, site) -> j.u.c. holds in this interval.
    lock_holds: BTreeMap<(Hash, LockMode, Site), Holds>,
    /// The offset in the default mode's log where the open `LockAcquire` would be, and its
    /// line, when it was not written there (not contended): written at its exit event unless
    /// that is `LockAcquired`.
    acquire: Option<(usize, String)>,
    /// (held, acquired, held site, acquired site, guards) -> occurrences in this interval.
    orders: BTreeMap<(Hash, Hash, Site, Site, Vec<Hash>), u64>,
}

fn site(f: Frame) -> Site {
    (f.method.0, f.location)
}

fn site_field((m, l): Site) -> String {
    format!("1;{m:08X};{l:08X}")
}

impl ThreadState {
    /// The summary lines of the interval ending at `ts`, and a new interval.
    fn flush(&mut self, thread: Hash, ts: u64, out: &mut String) {
        let t = Timestamp(ts);
        for ((m, s), h) in std::mem::take(&mut self.holds) {
            let _ = writeln!(
                out,
                "{t},MonitorHolds,{thread},{m},{},{},{},{},{}",
                h.count,
                h.total,
                h.max,
                h.histogram(),
                site_field(s)
            );
        }
        for ((l, mode, s), h) in std::mem::take(&mut self.lock_holds) {
            let _ = writeln!(
                out,
                "{t},LockHolds,{thread},{l},{mode},{},{},{},{},{}",
                h.count,
                h.total,
                h.max,
                h.histogram(),
                site_field(s)
            );
        }
        for ((held, acq, hs, asite, guards), n) in std::mem::take(&mut self.orders) {
            let mut g = guards.len().to_string();
            for h in &guards {
                let _ = write!(g, ";{h}");
            }
            let _ = writeln!(
                out,
                "{t},LockOrder,{thread},{held},{acq},{n},{g},{},{}",
                site_field(hs),
                site_field(asite)
            );
        }
        self.interval_start = ts;
    }

    /// An attempt to take `monitor` (`mode` `None`) or the j.u.c. lock `monitor` in `mode` at
    /// `at`: one lock-order occurrence per distinct ID held other than `monitor`, unless the
    /// thread already holds it (the monitor, or the lock in that mode).
    fn acquire(&mut self, monitor: Hash, mode: Option<LockMode>, at: Frame) {
        if self
            .held
            .iter()
            .any(|h| h.monitor == monitor && h.mode == mode)
        {
            return; // reentrant
        }
        // Distinct held IDs, in the order of their earliest still-open hold (`held` is in the
        // order the holds began), each with that hold's site.
        let mut ids: Vec<(Hash, Frame)> = Vec::new();
        for h in &self.held {
            if h.monitor != monitor && !ids.iter().any(|(id, _)| *id == h.monitor) {
                ids.push((h.monitor, h.site));
            }
        }
        for &(id, held_site) in &ids {
            let guards: Vec<Hash> = ids.iter().map(|g| g.0).filter(|g| *g != id).collect();
            *self
                .orders
                .entry((id, monitor, site(held_site), site(at), guards))
                .or_default() += 1;
        }
    }

    /// A hold of `ns` ended: counted under `key`.
    fn count<K: Ord>(map: &mut BTreeMap<K, Holds>, key: K, ns: u64) {
        let s = map.entry(key).or_default();
        s.count += 1;
        s.total += ns;
        s.max = s.max.max(ns);
        *s.buckets.entry(bucket(ns)).or_default() += 1;
    }
}

impl Summarize {
    /// Derives the summary lines from `orca`, the text of a complete trace's `.orca` file.
    pub fn run(&self, orca: &str) -> Derived {
        let mut threads: HashMap<Hash, ThreadState> = HashMap::new();
        let mut order: Vec<Hash> = Vec::new();
        let (mut summary, mut trace_all) = (String::new(), String::new());
        let mut last_ts = 0;
        for line in orca.lines() {
            let rec = parse_event_line(line.as_bytes())
                .unwrap_or_else(|e| panic!("not a valid line: {line}: {e}"));
            let ts = rec.timestamp.nanos();
            last_ts = last_ts.max(ts);
            let ev = rec.event;
            if ev.kind().is_summary() || ev.kind().is_long_hold() {
                continue;
            }
            let Some(thread) = ev.thread() else {
                summary.push_str(line);
                summary.push('\n');
                trace_all.push_str(line);
                trace_all.push('\n');
                continue;
            };
            if matches!(ev, Event::ThreadStarted { .. }) {
                threads.remove(&thread); // a new thread, maybe with an ended one's hash
            }
            let t = threads.entry(thread).or_insert_with(|| {
                order.push(thread);
                ThreadState {
                    interval_start: ts,
                    ..Default::default()
                }
            });
            let mut flushed = String::new();
            if matches!(ev, Event::ThreadEnded { .. })
                || ts.saturating_sub(t.interval_start) >= self.interval_ns
            {
                t.flush(thread, ts, &mut flushed);
            }
            // Whether the thread's previous monitor event was the MonitorEnter of this monitor.
            let entering = t.entering.take();
            let mut long_hold = None;
            // A j.u.c. line the default mode does not write.
            let mut skip_line = false;
            // A LockAcquire not written where it was, to write there now.
            let mut insert: Option<(usize, String)> = None;
            let top = || {
                ev.stack()
                    .and_then(|s| s.top())
                    .expect("a monitor event has a stack")
            };
            match ev {
                Event::ThreadEnded { .. } => t.ended = true,
                Event::MonitorContendedEnter { .. } | Event::MonitorContendedEntered { .. } => {
                    t.entering = entering
                }
                Event::MonitorEnter { monitor, .. } => {
                    t.acquire(monitor, None, top());
                    t.entering = Some(monitor);
                }
                Event::MonitorEntered { monitor, stack, .. } => {
                    if let Some(h) = t
                        .held
                        .iter_mut()
                        .find(|h| h.monitor == monitor && h.mode.is_none())
                    {
                        h.count += 1;
                    } else {
                        if entering != Some(monitor) {
                            t.acquire(monitor, None, top()); // a synchronized method
                        }
                        t.held.push(Held {
                            monitor,
                            mode: None,
                            count: 1,
                            since: ts,
                            paused: 0,
                            site: top(),
                            stack: stack.raw().to_string(),
                        });
                    }
                }
                Event::MonitorExit { monitor, .. } => {
                    if let Some(i) = t
                        .held
                        .iter()
                        .position(|h| h.monitor == monitor && h.mode.is_none())
                    {
                        t.held[i].count -= 1;
                        if t.held[i].count == 0 {
                            let h = t.held.remove(i);
                            let ns = h.paused + (ts - h.since);
                            ThreadState::count(&mut t.holds, (monitor, site(h.site)), ns);
                            if ns > self.threshold_ns {
                                long_hold = Some(format!(
                                    "{},MonitorHold,{thread},{monitor},{ns},{}\n",
                                    rec.timestamp, h.stack
                                ));
                            }
                        }
                    }
                }
                Event::ObjectWait { object, .. } => {
                    // wait releases the monitor: the hold pauses.
                    if let Some(h) = t
                        .held
                        .iter_mut()
                        .find(|h| h.monitor == object && h.mode.is_none())
                    {
                        h.paused += ts - h.since;
                        h.since = ts;
                    }
                }
                Event::ObjectWaited { object, .. } => {
                    if let Some(h) = t
                        .held
                        .iter_mut()
                        .find(|h| h.monitor == object && h.mode.is_none())
                    {
                        h.since = ts;
                    }
                }
                Event::LockAcquire {
                    thread,
                    lock,
                    mode,
                    owner,
                    ..
                } => {
                    t.acquire(lock, Some(mode), top());
                    let contended = owner != Hash(0) && owner != thread;
                    if !contended {
                        skip_line = true;
                        t.acquire = Some((summary.len() + flushed.len(), format!("{line}\n")));
                    }
                }
                Event::Lock {
                    op: LockOp::Acquired,
                    lock,
                    mode,
                    ..
                } => {
                    if t.acquire.take().is_some() {
                        skip_line = true; // an uncontended acquisition: not written
                    }
                    match t
                        .held
                        .iter_mut()
                        .find(|h| h.monitor == lock && h.mode == Some(mode))
                    {
                        Some(h) => h.count += 1,
                        None => t.held.push(Held {
                            monitor: lock,
                            mode: Some(mode),
                            count: 1,
                            since: ts,
                            paused: 0,
                            site: top(),
                            stack: String::new(),
                        }),
                    }
                }
                Event::Lock {
                    op: LockOp::Release,
                    lock,
                    mode,
                    stack,
                    ..
                } => {
                    skip_line = true;
                    if let Some(i) = t
                        .held
                        .iter()
                        .position(|h| h.monitor == lock && h.mode == Some(mode))
                    {
                        t.held[i].count -= 1;
                        if t.held[i].count == 0 {
                            let h = t.held.remove(i);
                            let ns = h.paused + (ts - h.since);
                            let at = site(h.site);
                            ThreadState::count(&mut t.lock_holds, (lock, mode, at), ns);
                            if ns >= self.threshold_ns {
                                long_hold = Some(format!(
                                    "{},LockHold,{thread},{lock},{mode},{ns},{},{}\n",
                                    rec.timestamp,
                                    site_field(at),
                                    stack.raw()
                                ));
                            }
                        }
                    }
                }
                Event::Lock { .. } => {
                    // Failed, timed out, interrupted: written, with its LockAcquire.
                    insert = t.acquire.take();
                }
                Event::Condition {
                    op: op @ (ConditionOp::Await | ConditionOp::Awaited),
                    lock,
                    ..
                } => {
                    // await releases the lock and takes it back: its holds pause.
                    for h in t
                        .held
                        .iter_mut()
                        .filter(|h| h.monitor == lock && h.mode.is_some())
                    {
                        if op == ConditionOp::Await {
                            h.paused += ts - h.since;
                        }
                        h.since = ts;
                    }
                }
                _ => {}
            }
            let is_monitor_event = matches!(
                ev,
                Event::MonitorEnter { .. }
                    | Event::MonitorEntered { .. }
                    | Event::MonitorExit { .. }
            );
            if let Some((at, l)) = insert {
                summary.insert_str(at, &l);
                for (o, _) in threads.values_mut().filter_map(|t| t.acquire.as_mut()) {
                    if *o >= at {
                        *o += l.len();
                    }
                }
            }
            summary.push_str(&flushed);
            trace_all.push_str(&flushed);
            if !is_monitor_event && !skip_line {
                summary.push_str(line);
                summary.push('\n');
            }
            trace_all.push_str(line);
            trace_all.push('\n');
            if let Some(l) = long_hold {
                summary.push_str(&l);
                trace_all.push_str(&l);
            }
        }
        // JVM exit: the threads still alive, last.
        for thread in order {
            if let Some(t) = threads.get_mut(&thread).filter(|t| !t.ended) {
                let mut flushed = String::new();
                t.flush(thread, last_ts, &mut flushed);
                summary.push_str(&flushed);
                trace_all.push_str(&flushed);
            }
        }
        Derived { summary, trace_all }
    }
}

/// A `LockOrder` key: (thread, held, acquired, held site, acquired site, guards).
pub type OrderKey = (Hash, Hash, Hash, Site, Site, Vec<Hash>);

/// A `MonitorHolds` or `LockHolds` key's lines summed: (count, total, max, buckets).
pub type HoldSums = (u64, u64, u64, BTreeMap<u32, u64>);

/// A `LockHolds` key: (thread, lock, mode, site).
pub type LockHoldKey = (Hash, Hash, LockMode, Site);

/// A `LockHold` line: (thread, lock, mode, end timestamp, nanos, site, stack).
pub type LongLockHold = (Hash, Hash, LockMode, u64, u64, Site, String);

/// The summary lines of a log summed per key (FORMAT.md: a reader sums the lines of a key):
/// `MonitorHolds` by (thread, monitor, site), `LockHolds` by (thread, lock, mode, site) and
/// `LockOrder` by (thread, held, acquired, held site, acquired site, guards), sites as
/// `(methodID, location)`; and the long holds as written. Two logs of one run agree
/// when these are equal, however their agents split them into intervals: compare the agent's
/// own lines of a `trace=all` log with [`Summarize::run`]'s from its events.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sums {
    /// Holds per (thread, monitor, site); with `holdtiming=sampled` the timed ones only.
    pub holds: BTreeMap<(Hash, Hash, Site), HoldSums>,
    /// Holds counted but not timed per (thread, monitor, site), from `MonitorHoldsUntimed`.
    pub untimed: BTreeMap<(Hash, Hash, Site), u64>,
    /// Occurrences per (thread, held, acquired, held site, acquired site, guards).
    pub orders: BTreeMap<OrderKey, u64>,
    /// `MonitorHold` lines: (thread, monitor, end timestamp, nanos, stack).
    pub long_holds: Vec<(Hash, Hash, u64, u64, String)>,
    /// j.u.c. holds per (thread, lock, mode, site), from `LockHolds`; with
    /// `holdtiming=sampled` the timed ones only.
    pub lock_holds: BTreeMap<LockHoldKey, HoldSums>,
    /// j.u.c. holds counted but not timed per (thread, lock, mode, site), from
    /// `LockHoldsUntimed`.
    pub lock_untimed: BTreeMap<LockHoldKey, u64>,
    /// `LockHold` lines, in the order of the log.
    pub long_lock_holds: Vec<LongLockHold>,
}

fn add(e: &mut HoldSums, d: &Durations) {
    e.0 += d.count;
    e.1 += d.total;
    e.2 = e.2.max(d.max);
    for (b, c) in d.histogram.buckets() {
        *e.3.entry(b).or_default() += c;
    }
}

impl Sums {
    /// Sums the summary lines of `orca` (the text of a `.orca` file); other lines are ignored.
    pub fn of(orca: &str) -> Sums {
        let mut s = Sums::default();
        for line in orca.lines() {
            let rec = parse_event_line(line.as_bytes())
                .unwrap_or_else(|e| panic!("not a valid line: {line}: {e}"));
            let top = |st: &orca_format::StackTrace<'_>| site(st.top().expect("one frame"));
            match rec.event {
                Event::MonitorHolds {
                    thread,
                    monitor,
                    durations: d,
                    site: at,
                    sample,
                } => {
                    // sums compared with exact figures: no row may be of a sample
                    assert_eq!(sample, 1, "a row of a sample: {line}");
                    let e = s.holds.entry((thread, monitor, top(&at))).or_default();
                    add(e, &d);
                }
                Event::MonitorHoldsUntimed {
                    thread,
                    monitor,
                    count,
                    site: at,
                    sample,
                } => {
                    assert_eq!(sample, 1, "a row of a sample: {line}");
                    *s.untimed.entry((thread, monitor, top(&at))).or_default() += count;
                }
                Event::LockHolds {
                    thread,
                    lock,
                    mode,
                    durations: d,
                    site: at,
                } => {
                    let e = s
                        .lock_holds
                        .entry((thread, lock, mode, top(&at)))
                        .or_default();
                    add(e, &d);
                }
                Event::LockHoldsUntimed {
                    thread,
                    lock,
                    mode,
                    count,
                    site: at,
                } => {
                    let k = (thread, lock, mode, top(&at));
                    *s.lock_untimed.entry(k).or_default() += count;
                }
                Event::LockHold {
                    thread,
                    lock,
                    mode,
                    nanos,
                    site: at,
                    stack,
                } => s.long_lock_holds.push((
                    thread,
                    lock,
                    mode,
                    rec.timestamp.nanos(),
                    nanos,
                    top(&at),
                    stack.raw().to_string(),
                )),
                Event::LockOrder {
                    thread,
                    held,
                    acquired,
                    count,
                    guards,
                    held_site,
                    acquired_site,
                } => {
                    let key = (
                        thread,
                        held,
                        acquired,
                        top(&held_site),
                        top(&acquired_site),
                        guards.iter().collect(),
                    );
                    *s.orders.entry(key).or_default() += count;
                }
                Event::MonitorHold {
                    thread,
                    monitor,
                    nanos,
                    stack,
                } => s.long_holds.push((
                    thread,
                    monitor,
                    rec.timestamp.nanos(),
                    nanos,
                    stack.raw().to_string(),
                )),
                _ => {}
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orca_format::{validate_readers, Options, Severity};

    const CLASSES: &str = "1.000000000,15DB9742,LT;,T.java\n";
    const METHODS: &str = "\
1.000000000,00000001,a,()V,15DB9742,-1
1.000000000,00000002,b,()V,15DB9742,-1
";

    /// Thread A: `lock()` of L (2222, W) at 0x10, `synchronized (M)` (1111) at 0x30 inside it,
    /// `synchronized (N)` (4444) at 0x60 inside both, a reentrant `lock()` of L at 0x70, the
    /// read view of L at 0x40 (it holds the write view: L is not an edge of its own), an
    /// `await` on a condition of L (4 µs, left out of both holds of L). Thread B: inside
    /// `synchronized (M)`, a contended `tryLock()` of L that fails, a `tryLock(timeout)` that
    /// times out without an owner, a `lock()` held 20 µs (a LockHold at a 20 µs threshold),
    /// and M held 20.7 µs (a MonitorHold).
    const TRACE: &str = "\
1.000000000,ThreadStarted,0000000A,a
1.000000100,LockAcquire,0000000A,00002222,W,00000000,1;00000001;00000010
1.000000200,LockAcquired,0000000A,00002222,W,1;00000001;00000010
1.000000500,MonitorEnter,0000000A,00001111,1;00000001;00000030
1.000000600,MonitorEntered,0000000A,00001111,1;00000001;00000030
1.000000650,MonitorEnter,0000000A,00004444,1;00000001;00000060
1.000000660,MonitorEntered,0000000A,00004444,1;00000001;00000060
1.000000670,MonitorExit,0000000A,00004444,1;00000001;00000060
1.000000680,LockAcquire,0000000A,00002222,W,0000000A,1;00000001;00000070
1.000000690,LockAcquired,0000000A,00002222,W,1;00000001;00000070
1.000000700,LockAcquire,0000000A,00002222,R,0000000A,1;00000001;00000040
1.000000800,LockAcquired,0000000A,00002222,R,1;00000001;00000040
1.000000900,MonitorExit,0000000A,00001111,1;00000001;00000030
1.000001000,ConditionAwait,0000000A,00003333,00002222,1;00000001;00000050
1.000005000,ConditionAwaited,0000000A,00003333,00002222,1;00000001;00000050
1.000005100,LockRelease,0000000A,00002222,W,1;00000001;00000070
1.000005200,LockRelease,0000000A,00002222,W,1;00000001;00000010
1.000005300,LockRelease,0000000A,00002222,R,1;00000001;00000040
1.000010000,ThreadStarted,0000000B,b
1.000010100,MonitorEnter,0000000B,00001111,1;00000002;00000010
1.000010200,MonitorEntered,0000000B,00001111,1;00000002;00000010
1.000010300,LockAcquire,0000000B,00002222,W,0000000A,1;00000002;00000020
1.000010400,LockFailed,0000000B,00002222,W,1;00000002;00000020
1.000010500,LockAcquire,0000000B,00002222,W,00000000,1;00000002;00000030
1.000010600,LockTimedOut,0000000B,00002222,W,1;00000002;00000030
1.000010700,LockAcquire,0000000B,00002222,W,00000000,1;00000002;00000040
1.000010800,LockAcquired,0000000B,00002222,W,1;00000002;00000040
1.000030800,LockRelease,0000000B,00002222,W,2;00000002;00000044;00000002;00000001
1.000030900,MonitorExit,0000000B,00001111,1;00000002;00000010
1.000031000,ThreadEnded,0000000B
";

    const A: Hash = Hash(0xA);
    const B: Hash = Hash(0xB);
    const L: Hash = Hash(0x2222);
    const M: Hash = Hash(0x1111);
    const N: Hash = Hash(0x4444);

    fn derive(interval_ns: u64) -> Derived {
        Summarize {
            interval_ns,
            threshold_ns: 20_000,
        }
        .run(TRACE)
    }

    fn one(ns: u64) -> HoldSums {
        (1, ns, ns, [(bucket(ns), 1)].into_iter().collect())
    }

    fn validate(orca: &str) -> orca_format::ValidationReport {
        validate_readers(
            ("t.classtable", CLASSES.as_bytes()),
            ("t.methods", METHODS.as_bytes()),
            ("t.orca", orca.as_bytes()),
            &Options::default(),
        )
        .unwrap()
    }

    #[test]
    fn juc_holds_and_cross_kind_lock_orders() {
        let d = derive(u64::MAX);
        let s = Sums::of(&d.summary);
        let holds: BTreeMap<LockHoldKey, HoldSums> = [
            // 0.2 µs to the await, 0.2 µs after it.
            ((A, L, LockMode::Write, (1, 0x10)), one(1000)),
            ((A, L, LockMode::Read, (1, 0x40)), one(500)),
            ((B, L, LockMode::Write, (2, 0x40)), one(20_000)),
        ]
        .into_iter()
        .collect();
        assert_eq!(s.lock_holds, holds);
        let monitors: BTreeMap<(Hash, Hash, Site), HoldSums> = [
            ((A, M, (1, 0x30)), one(300)),
            ((A, N, (1, 0x60)), one(10)),
            ((B, M, (2, 0x10)), one(20_700)),
        ]
        .into_iter()
        .collect();
        assert_eq!(s.holds, monitors);
        let orders: BTreeMap<OrderKey, u64> = [
            // j.u.c. lock held, monitor acquired.
            ((A, L, M, (1, 0x10), (1, 0x30), vec![]), 1),
            ((A, L, N, (1, 0x10), (1, 0x60), vec![M]), 1),
            ((A, M, N, (1, 0x30), (1, 0x60), vec![L]), 1),
            // The read view while holding the write view: L is the acquired ID, not an edge.
            ((A, M, L, (1, 0x30), (1, 0x40), vec![]), 1),
            // Monitor held, j.u.c. lock acquired: every attempt counts, failed or not.
            ((B, M, L, (2, 0x10), (2, 0x20), vec![]), 1),
            ((B, M, L, (2, 0x10), (2, 0x30), vec![]), 1),
            ((B, M, L, (2, 0x10), (2, 0x40), vec![]), 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(s.orders, orders);
        assert_eq!(
            s.long_lock_holds,
            [(
                B,
                L,
                LockMode::Write,
                1_000_030_800,
                20_000,
                (2, 0x40),
                "2;00000002;00000044;00000002;00000001".to_string()
            )]
        );
        assert_eq!(s.long_holds.len(), 1);
        assert_eq!(s.long_holds[0].3, 20_700);
        // At any interval, and in the trace=all log, the same sums.
        for interval in [0, 1_000, 5_000, u64::MAX] {
            let d = derive(interval);
            assert_eq!(Sums::of(&d.summary), s, "interval {interval}");
            assert_eq!(Sums::of(&d.trace_all), s, "interval {interval}");
        }
    }

    /// The default mode's log keeps only the j.u.c. acquisitions that are contended or do not
    /// end holding the lock, and no release; both logs are valid.
    #[test]
    fn default_mode_keeps_contended_and_failed_acquisitions() {
        for interval in [0, 1_000, u64::MAX] {
            let d = derive(interval);
            let juc: Vec<&str> = d
                .summary
                .lines()
                .filter(|l| {
                    [
                        ",LockAcquire",
                        ",LockFailed",
                        ",LockTimedOut",
                        ",LockRelease",
                    ]
                    .iter()
                    .any(|k| l.contains(k))
                })
                .collect();
            assert_eq!(
                juc,
                [
                    "1.000010300,LockAcquire,0000000B,00002222,W,0000000A,1;00000002;00000020",
                    "1.000010400,LockFailed,0000000B,00002222,W,1;00000002;00000020",
                    "1.000010500,LockAcquire,0000000B,00002222,W,00000000,1;00000002;00000030",
                    "1.000010600,LockTimedOut,0000000B,00002222,W,1;00000002;00000030",
                ],
                "interval {interval}"
            );
            for (what, log) in [("summary", &d.summary), ("trace=all", &d.trace_all)] {
                let r = validate(log);
                assert!(r.is_valid(), "{what}, {interval}: {:#?}", r.error_lines());
                let notes: Vec<_> = r
                    .violations
                    .iter()
                    .filter(|v| v.severity == Severity::Note)
                    .collect();
                assert!(notes.is_empty(), "{what}, {interval}: {notes:#?}");
            }
            assert_eq!(d.summary.matches(",LockHold,").count(), 1);
            assert_eq!(d.trace_all.matches(",LockHold,").count(), 1);
            assert_eq!(d.trace_all.matches(",LockRelease,").count(), 4);
        }
    }
}
