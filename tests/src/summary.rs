//! The reference aggregator of the summary lines (docs/FORMAT.md, "Summary lines
//! (instrumentation mode)"): it derives the `MonitorHolds`, `LockOrder` and `MonitorHold` lines
//! the agent writes by default from the `MonitorEnter`/`MonitorEntered`/`MonitorExit` events of a
//! complete trace. It defines what those lines mean, so it is kept small and literal:
//!
//! - a **hold** is outermost: from the `MonitorEntered` that takes the thread's count of the
//!   monitor from 0 to 1 to the `MonitorExit` that takes it back to 0; its **duration** leaves out
//!   the time inside `Object.wait` on that monitor; its **site** is the top frame of that
//!   `MonitorEntered`;
//! - a **lock-order occurrence** is an attempt to take a monitor the thread does not hold (its
//!   `MonitorEnter`, or the `MonitorEntered` of a `synchronized` method, which has no
//!   `MonitorEnter`): one per monitor held then, the other held monitors (in hold order) being
//!   its guards;
//! - a thread's summaries are flushed when `interval_ns` has passed since its previous flush (at
//!   its next line), just before its `ThreadEnded`, and at the end of the log (threads still
//!   alive, last, at the log's last timestamp);
//! - a hold longer than `threshold_ns` is also written as a `MonitorHold` at its `MonitorExit`.
//!
//! Summary lines already in the input (a `trace=all` log) are dropped and derived again.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use orca_format::hist::bucket;
use orca_format::{parse_event_line, Event, Frame, Hash, Timestamp};

/// When the reference agent flushes and which holds it writes out.
#[derive(Clone, Copy, Debug)]
pub struct Summarize {
    /// A thread's summaries are flushed once this much time has passed since the last flush.
    pub interval_ns: u64,
    /// Holds longer than this are also written as `MonitorHold`.
    pub threshold_ns: u64,
}

/// What [`Summarize::run`] derives from one `.orca` text.
pub struct Derived {
    /// The default mode's log: the summary lines instead of MonitorEnter/Entered/Exit.
    pub summary: String,
    /// The `trace=all` log: every input event and the summary lines.
    pub trace_all: String,
}

struct Held {
    monitor: Hash,
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
            let hist: Vec<String> = h.buckets.iter().map(|(b, c)| format!("{b};{c}")).collect();
            let _ = writeln!(
                out,
                "{t},MonitorHolds,{thread},{m},{},{},{},{};{},{}",
                h.count,
                h.total,
                h.max,
                h.buckets.len(),
                hist.join(";"),
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

    /// An attempt to take `monitor` at `at`: one lock-order occurrence per held monitor.
    fn acquire(&mut self, monitor: Hash, at: Frame) {
        if self.held.iter().any(|h| h.monitor == monitor) {
            return; // reentrant
        }
        for h in &self.held {
            let guards: Vec<Hash> = self
                .held
                .iter()
                .map(|g| g.monitor)
                .filter(|g| *g != h.monitor)
                .collect();
            *self
                .orders
                .entry((h.monitor, monitor, site(h.site), site(at), guards))
                .or_default() += 1;
        }
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
            if ev.kind().is_summary() || matches!(ev, Event::MonitorHold { .. }) {
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
                    t.acquire(monitor, top());
                    t.entering = Some(monitor);
                }
                Event::MonitorEntered { monitor, stack, .. } => {
                    if let Some(h) = t.held.iter_mut().find(|h| h.monitor == monitor) {
                        h.count += 1;
                    } else {
                        if entering != Some(monitor) {
                            t.acquire(monitor, top()); // a synchronized method
                        }
                        t.held.push(Held {
                            monitor,
                            count: 1,
                            since: ts,
                            paused: 0,
                            site: top(),
                            stack: stack.raw().to_string(),
                        });
                    }
                }
                Event::MonitorExit { monitor, .. } => {
                    if let Some(i) = t.held.iter().position(|h| h.monitor == monitor) {
                        t.held[i].count -= 1;
                        if t.held[i].count == 0 {
                            let h = t.held.remove(i);
                            let ns = h.paused + (ts - h.since);
                            let s = t.holds.entry((monitor, site(h.site))).or_default();
                            s.count += 1;
                            s.total += ns;
                            s.max = s.max.max(ns);
                            *s.buckets.entry(bucket(ns)).or_default() += 1;
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
                    if let Some(h) = t.held.iter_mut().find(|h| h.monitor == object) {
                        h.paused += ts - h.since;
                        h.since = ts;
                    }
                }
                Event::ObjectWaited { object, .. } => {
                    if let Some(h) = t.held.iter_mut().find(|h| h.monitor == object) {
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
            summary.push_str(&flushed);
            trace_all.push_str(&flushed);
            if !is_monitor_event {
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

/// A `MonitorHolds` key's lines summed: (count, total, max, buckets).
pub type HoldSums = (u64, u64, u64, BTreeMap<u32, u64>);

/// The summary lines of a log summed per key (FORMAT.md: a reader sums the lines of a key):
/// `MonitorHolds` by (thread, monitor, site) and `LockOrder` by (thread, held, acquired, held
/// site, acquired site, guards), sites as `(methodID, location)`. Two logs of one run agree
/// when these are equal, however their agents split them into intervals: compare the agent's
/// own lines of a `trace=all` log with [`Summarize::run`]'s from its events.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sums {
    /// Holds per (thread, monitor, site).
    pub holds: BTreeMap<(Hash, Hash, Site), HoldSums>,
    /// Occurrences per (thread, held, acquired, held site, acquired site, guards).
    pub orders: BTreeMap<OrderKey, u64>,
    /// `MonitorHold` lines: (thread, monitor, end timestamp, nanos, stack).
    pub long_holds: Vec<(Hash, Hash, u64, u64, String)>,
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
                    count,
                    total,
                    max,
                    histogram,
                    site: at,
                } => {
                    let e = s.holds.entry((thread, monitor, top(&at))).or_default();
                    e.0 += count;
                    e.1 += total;
                    e.2 = e.2.max(max);
                    for (b, c) in histogram.buckets() {
                        *e.3.entry(b).or_default() += c;
                    }
                }
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
