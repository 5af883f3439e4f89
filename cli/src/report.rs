//! `orca report`: one streaming pass over `.orca` that adds up, per thread and
//! per object, the time spent blocked, waiting, sleeping, joining, acquiring
//! and holding. State is per thread and per object, never per event, so
//! memory does not grow with the log's length.
//!
//! j.u.c. locks (`LockAcquire` ... `LockRelease`, `Condition*`, `ThreadPark`, docs/FORMAT.md)
//! get sections of their own: contention with owners and sites, outermost hold times per
//! lock and mode (minus the time in `await` on its conditions, as `wait` for monitors), and
//! per thread the time blocked on them, awaiting conditions and parked. A log without them
//! prints exactly what it printed before.
//!
//! Hold times come from the `MonitorHolds` summary lines when the log has any
//! (summed over intervals), else from `MonitorEntered`/`MonitorExit` events;
//! never from both (a `trace=all` log has both: `--from-events` picks the
//! events). Both sources are bucketed alike, so they give the same figures.
//! j.u.c. hold times likewise come from `LockHolds` lines when the log has any,
//! else from `LockAcquired`/`LockRelease`. `MonitorHold`/`LockHold` events are
//! listed as the longest holds, never added to the hold figures (a summary line
//! counts them already).

use std::collections::HashMap;
use std::fmt::Write as _;

use orca_format::spans::{Call, Held, Pairer, Span, SpanKind, Stacks};
use orca_format::{
    parse_stack, ConditionOp, Event, EventReader, FastMap, Frame, Hash, LineError, LockMode,
    LockOp, Metadata, WaitCall, WakeCall,
};

use crate::util::{dur, is_jdk_frame, json_str, Hist};

/// Per-thread totals.
#[derive(Debug, Default)]
pub struct ThreadStats {
    pub name: Option<String>,
    pub order: usize,
    pub started: Option<u64>,
    pub ended: Option<u64>,
    pub first: u64,
    pub last: u64,
    pub blocked: (u64, u64),
    pub waiting: (u64, u64),
    pub sleeping: (u64, u64),
    pub joining: (u64, u64),
    pub acquiring: (u64, u64),
    /// j.u.c.: (count, ns) blocked in contended acquisitions, awaiting conditions, parked.
    pub juc_blocked: (u64, u64),
    pub awaiting: (u64, u64),
    pub parked: (u64, u64),
}

impl ThreadStats {
    /// The one vocabulary of thread states every output uses (report, JSON, flame graphs,
    /// timeline, page), in ns: blocked (on a monitor or a j.u.c. lock), waiting
    /// (`Object.wait`, `Condition.await`, park), sleeping, joining, acquiring a semaphore.
    pub fn states(&self) -> [u64; 5] {
        [
            self.blocked.1 + self.juc_blocked.1,
            self.waiting.1 + self.awaiting.1 + self.parked.1,
            self.sleeping.1,
            self.joining.1,
            self.acquiring.1,
        ]
    }
}

/// The names of [`ThreadStats::states`], as JSON keys and the page's legend use them.
pub const STATES: [&str; 5] = ["blocked", "waiting", "sleeping", "joining", "semaphore"];

/// Per-lock totals of a j.u.c. lock (its synchronizer).
#[derive(Debug, Default)]
pub struct LockStats {
    pub acquisitions: u64,
    pub failed: u64,
    pub timed_out: u64,
    pub interrupted: u64,
    /// Acquisitions that began while another thread owned the lock.
    pub contentions: u64,
    pub blocked: u64,
    pub blocked_max: u64,
    pub still_blocked: u64,
    pub owners: HashMap<Hash, u64>,
    pub sites: HashMap<Option<Frame>, (u64, u64)>,
    /// Blocked (count, ns) per whole stack, bounded ([`BLOCKED_STACKS`]).
    pub blocked_stacks: HashMap<String, (u64, u64)>,
    pub write_holds: Hist,
    pub read_holds: Hist,
    pub open_holds: u64,
    pub hold_sites: HashMap<Option<Frame>, (u64, u64)>,
    /// How many of each hold site's holds were timed (`hold_sites`' times are scaled from
    /// them when fewer than all).
    pub hold_sites_timed: HashMap<Option<Frame>, u64>,
    /// Holds from `LockHolds` lines (write, read, sites), moved into the fields above at the
    /// end when they are the source.
    sum_write_holds: Hist,
    sum_read_holds: Hist,
    sum_hold_sites: HashMap<Option<Frame>, (u64, u64)>,
    /// Holds counted but not timed per site (`LockHoldsUntimed`), as `ObjectStats`'.
    sum_untimed_sites: HashMap<Option<Frame>, u64>,
    pub awaits: u64,
    pub awaited: u64,
    pub signals: u64,
    pub signal_alls: u64,
}

/// Per-object (monitor, wait object, semaphore) totals.
#[derive(Debug, Default)]
pub struct ObjectStats {
    pub contentions: u64,
    pub blocked: u64,
    pub blocked_max: u64,
    pub still_blocked: u64,
    pub owners: HashMap<Hash, u64>,
    pub sites: HashMap<Option<Frame>, (u64, u64)>,
    /// Blocked (count, ns) per whole stack, bounded ([`BLOCKED_STACKS`]).
    pub blocked_stacks: HashMap<String, (u64, u64)>,
    pub holds: Hist,
    pub open_holds: u64,
    pub hold_sites: HashMap<Option<Frame>, (u64, u64)>,
    /// How many of each hold site's holds were timed, as `LockStats`'.
    pub hold_sites_timed: HashMap<Option<Frame>, u64>,
    /// Holds from `MonitorHolds` lines, moved into `holds`/`hold_sites` at the
    /// end when they are the source.
    sum_holds: Hist,
    sum_hold_sites: HashMap<Option<Frame>, (u64, u64)>,
    /// Holds counted but not timed per site (`MonitorHoldsUntimed`): `hold_sites`' counts
    /// include them and their times are scaled from the timed ones at the end.
    sum_untimed_sites: HashMap<Option<Frame>, u64>,
    pub waits: u64,
    pub waited: u64,
    pub notifies: u64,
    pub notify_alls: u64,
    pub sem_acquires: u64,
    pub sem_time: u64,
    pub sem_max: u64,
    pub sem_releases: u64,
    pub sem_sites: HashMap<Option<Frame>, (u64, u64)>,
}

/// Everything `orca report` prints.
#[derive(Debug, Default)]
pub struct Analysis {
    /// `notify`/`notifyAll`/`signal`/`signalAll` calls that found nobody waiting (`Notifies`
    /// lines), per (call, site).
    pub unwaited_notifies: HashMap<(WakeCall, Frame), u64>,
    /// Waits the agent counted per (call, site) (`Waits` lines: shorter than its wait
    /// threshold, or long ones beyond the examples it wrote): (count, total ns, max ns). They are also in the per-thread, per-object and
    /// per-blocker totals.
    pub short_waits: HashMap<(WaitCall, Frame), (u64, u64, u64)>,
    pub events: u64,
    pub malformed: u64,
    pub torn: bool,
    /// The log's `RecordingEnded` line, if it has one (none: killed or crashed).
    pub ended: Option<orca_format::RecordingEnd>,
    /// The settings of the log's `RecordingStarted` line (`key=value;...`), if it has one
    /// (the logs of agents older than commit d251e2d have none).
    pub settings: Option<String>,
    /// The settings say `tracking=sampled`: a monitor's own row counts only the holds the
    /// tracker identified, the others are in its sites' row of other monitors.
    pub sampled_tracking: bool,
    pub dropped: u64,
    /// j.u.c. holds that began before a recording attached to a running JVM, seen at their
    /// `unlock` (`LockHeldAtStart` lines).
    pub held_at_start: u64,
    pub bytes: u64,
    pub first_ts: Option<u64>,
    pub last_ts: u64,
    pub threads: FastMap<Hash, ThreadStats>,
    pub objects: FastMap<Hash, ObjectStats>,
    /// j.u.c. locks by synchronizer.
    pub locks: FastMap<Hash, LockStats>,
    /// Parks per blocker (00000000: none): (count, ns).
    pub parks: FastMap<Hash, (u64, u64)>,
    pub unparks: u64,
    pub has_holds: bool,
    /// Whether some monitor hold rows were of a sample (`<sample>` above 1): hold counts
    /// per site are then estimates too, marked `~`.
    pub sampled_holds: bool,
    /// Whether the log has summary lines (`MonitorHolds`, `LockHolds`, `LockOrder`).
    pub has_summaries: bool,
    /// Whether the log has j.u.c. hold summaries (`LockHolds` or `LockHold` lines).
    pub has_lock_summaries: bool,
    /// Whether the log has a `LockRelease` (a complete trace of j.u.c. locks when it has
    /// `LockHolds` too; without, the default mode: only contended or unsuccessful
    /// acquisitions are events, and acquisition counts are not known).
    pub has_lock_releases: bool,
    /// Whether j.u.c. hold times come from `LockHolds` lines (else from events).
    pub lock_holds_from_summaries: bool,
    /// Whether hold times come from the summary lines (else from events).
    pub holds_from_summaries: bool,
    /// Recompute hold times from events even when summary lines exist.
    pub from_events: bool,
    /// The longest `MonitorHold` events: (nanos, thread, monitor, end, stack).
    pub long_holds: Vec<LongHold>,
    /// The longest `LockHold` events.
    pub long_lock_holds: Vec<LongLockHold>,
    /// Holds still open at the end of the log, when the log has their acquisitions (a
    /// complete trace): (thread, monitor or lock, acquisition site, since).
    pub open_holds_at_end: Vec<(Hash, Hash, Option<Frame>, u64)>,
    /// Waits, notifies, condition awaits and signals in file order, for the missed-wakeup
    /// suspects (sorted by time in [`crate::verdict`]: the file is not sorted across threads).
    pub wakes: Vec<Wake>,
    /// Whether there were more than [`WAKES_KEPT`] of them (the suspects are then not sought).
    pub wakes_overflow: bool,
    /// Class of each object the log names (`ObjectClass` lines), Java spelling.
    pub classes: FastMap<Hash, String>,
    /// IDs that name two objects (a second `ObjectClass` line): the second one's class.
    pub shared: FastMap<Hash, String>,
    /// Hold sites per (lock or monitor, thread): where each thread took each lock, for the
    /// verdict's "the owner took it at". From summary lines or events, as the hold times.
    pub thread_hold_sites: FastMap<(Hash, Hash), Sites>,
    sum_thread_hold_sites: FastMap<(Hash, Hash), Sites>,
    sum_thread_untimed_sites: FastMap<(Hash, Hash), HashMap<Option<Frame>, u64>>,
    /// The one pairing of the log's lines into spans (orca_format::spans), and the spans the
    /// last event ended (kept for its allocation).
    pairer: Pairer,
    ended_spans: Vec<Span>,
}

/// (count, ns) per site.
pub type Sites = HashMap<Option<Frame>, (u64, u64)>;

/// One wait/notify (or condition await/signal) event, for [`crate::verdict`].
#[derive(Debug, Clone, Copy)]
pub struct Wake {
    pub ts: u64,
    pub thread: Hash,
    /// The object waited on, or the condition awaited.
    pub object: Hash,
    pub what: WakeKind,
    pub site: Option<Frame>,
    /// A j.u.c. condition's (`await`/`signal`), not a monitor's (`wait`/`notify`).
    pub condition: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    Wait,
    Waited,
    Notify,
}

/// Most wait/notify events kept for the missed-wakeup suspects (about 40 bytes each).
pub const WAKES_KEPT: usize = 4_000_000;

/// One `LockHold` event: (nanos, thread, lock, mode, end timestamp, acquisition site, raw
/// stack of the `unlock`).
pub type LongLockHold = (u64, Hash, Hash, LockMode, u64, Option<Frame>, String);

impl Analysis {
    /// Whether the log is summarised for j.u.c. locks (FORMAT.md): `LockHolds` lines and no
    /// `LockRelease`, so its `LockAcquired` lines are the contended acquisitions only and
    /// their releases are not written.
    pub fn juc_summarised(&self) -> bool {
        self.has_lock_summaries && !self.has_lock_releases
    }
}

/// One `MonitorHold` event: (nanos, thread, monitor, end timestamp, raw stack).
pub type LongHold = (u64, Hash, Hash, u64, String);

/// `MonitorHold` events kept for the report (the longest).
pub const LONG_HOLDS_KEPT: usize = 10;

fn add_site(m: &mut HashMap<Option<Frame>, (u64, u64)>, f: Option<Frame>, ns: u64) {
    add_sites(m, f, 1, ns);
}

/// Blocked stacks a lock keeps (for the verdict's caller of its site): the figures are its
/// sites', these only name where the program called from.
const BLOCKED_STACKS: usize = 256;

/// Adds `count` contentions blocked `ns` in all at `stack` to a lock's stacks.
fn add_stack(m: &mut HashMap<String, (u64, u64)>, stack: &str, count: u64, ns: u64) {
    if stack.is_empty() {
        return;
    }
    if let Some(e) = m.get_mut(stack) {
        e.0 += count;
        e.1 += ns;
    } else if m.len() < BLOCKED_STACKS {
        m.insert(stack.to_string(), (count, ns));
    }
}

fn add_sites(m: &mut HashMap<Option<Frame>, (u64, u64)>, f: Option<Frame>, count: u64, ns: u64) {
    let e = m.entry(f).or_default();
    e.0 += count;
    e.1 += ns;
}

/// The counts of `m`'s sites.
fn timed_counts(m: &Sites) -> HashMap<Option<Frame>, u64> {
    m.iter().map(|(f, (c, _))| (*f, *c)).collect()
}

/// Adds the holds counted but not timed at each site to its (count, ns), its time scaled
/// from the site's timed holds (an estimate, as [`Hist::total`]).
fn add_untimed_sites(m: &mut Sites, untimed: HashMap<Option<Frame>, u64>) {
    for (f, u) in untimed {
        let e = m.entry(f).or_default();
        e.1 = crate::util::estimate(e.1, e.0, u);
        e.0 += u;
    }
}

impl Analysis {
    /// Reads every event of `r` and closes what is still open at the end.
    #[allow(dead_code)] // the entry point without options
    pub fn run<R: std::io::Read>(r: EventReader<R>) -> std::io::Result<Analysis> {
        Self::run_with(r, false)
    }

    /// [`Analysis::run`]; with `from_events`, hold times come from
    /// `MonitorEntered`/`MonitorExit` even when the log has summary lines.
    pub fn run_with<R: std::io::Read>(
        mut r: EventReader<R>,
        from_events: bool,
    ) -> std::io::Result<Analysis> {
        let mut a = Analysis {
            from_events,
            // The contentions' stacks name the program's line that called a library's lock.
            pairer: Pairer::with_stacks_for(Stacks {
                blocked: true,
                ..Stacks::default()
            }),
            ..Default::default()
        };
        while let Some((_, rec)) = r.next_event()? {
            match rec {
                Ok(rec) => a.event(rec.timestamp.nanos(), &rec.event),
                Err(LineError::Torn) => a.torn = true,
                Err(_) => a.malformed += 1,
            }
        }
        a.bytes = r.bytes_read();
        a.finish();
        Ok(a)
    }

    fn event(&mut self, ts: u64, ev: &Event<'_>) {
        let mut ended = std::mem::take(&mut self.ended_spans);
        self.pairer.feed(ts, ev, &mut |s| ended.push(s));
        self.tally(ts, ev);
        for s in ended.drain(..) {
            self.span(s);
        }
        self.ended_spans = ended;
    }

    /// What `ev` adds by itself, beside the spans it ends.
    fn tally(&mut self, ts: u64, ev: &Event<'_>) {
        if let Event::RecordingEnded { how } = *ev {
            self.ended = Some(how);
            return;
        }
        if let Event::RecordingStarted { settings } = ev {
            self.settings = Some(settings.raw().to_string());
            self.sampled_tracking = settings.sampled_tracking();
            return;
        }
        self.events += 1;
        let Some(thread) = ev.thread() else {
            match ev {
                Event::EventsDropped { count } => self.dropped += *count,
                Event::ObjectClass { object, class } => {
                    let name = orca_format::java_class_name(&class.decode());
                    if self.classes.contains_key(object) {
                        self.shared.insert(*object, name);
                    } else {
                        self.classes.insert(*object, name);
                    }
                }
                _ => {}
            }
            return;
        };
        let n = self.threads.len();
        let t = self.threads.entry(thread).or_insert_with(|| ThreadStats {
            order: n,
            first: ts,
            ..Default::default()
        });
        t.last = t.last.max(ts);
        if let Event::LockHeldAtStart { .. } = ev {
            self.held_at_start += 1;
        }
        let top = ev.stack().and_then(|s| s.top());
        let wake = match *ev {
            Event::ObjectWait { object, .. } => Some((object, WakeKind::Wait)),
            Event::ObjectWaited { object, .. } => Some((object, WakeKind::Waited)),
            Event::ObjectNotify { object, .. } | Event::ObjectNotifyAll { object, .. } => {
                Some((object, WakeKind::Notify))
            }
            Event::Condition { op, condition, .. } => Some((
                condition,
                match op {
                    ConditionOp::Await => WakeKind::Wait,
                    ConditionOp::Awaited => WakeKind::Waited,
                    ConditionOp::Signal | ConditionOp::SignalAll => WakeKind::Notify,
                },
            )),
            _ => None,
        };
        if let Some((object, what)) = wake {
            if self.wakes.len() < WAKES_KEPT {
                self.wakes.push(Wake {
                    ts,
                    thread,
                    object,
                    what,
                    site: top,
                    condition: matches!(ev, Event::Condition { .. }),
                });
            } else {
                self.wakes_overflow = true;
            }
        }
        match *ev {
            Event::ThreadStarted { name, .. } => {
                t.name = Some(name.decode().into_owned());
                t.started = Some(ts);
            }
            Event::ThreadEnded { .. } => t.ended = Some(ts),
            // Contentions the agent counted per stack instead of writing them (shorter than
            // its contention threshold, or beyond its site's budget): no owner.
            Event::MonitorContentions {
                monitor,
                durations: d,
                ref site,
                stack,
                ..
            } => {
                self.has_summaries = true;
                t.blocked.0 += d.count;
                t.blocked.1 += d.total;
                let o = self.objects.entry(monitor).or_default();
                o.contentions += d.count;
                o.blocked += d.total;
                o.blocked_max = o.blocked_max.max(d.max);
                add_sites(&mut o.sites, site.top(), d.count, d.total);
                let stack = stack.or_site(*site).raw();
                add_stack(&mut o.blocked_stacks, stack, d.count, d.total);
            }
            Event::LockContentions {
                lock,
                durations: d,
                ref site,
                stack,
                ..
            } => {
                self.has_summaries = true;
                t.juc_blocked.0 += d.count;
                t.juc_blocked.1 += d.total;
                let l = self.locks.entry(lock).or_default();
                l.acquisitions += d.count;
                l.contentions += d.count;
                l.blocked += d.total;
                l.blocked_max = l.blocked_max.max(d.max);
                add_sites(&mut l.sites, site.top(), d.count, d.total);
                let stack = stack.or_site(*site).raw();
                add_stack(&mut l.blocked_stacks, stack, d.count, d.total);
            }
            Event::MonitorHolds {
                monitor,
                durations: d,
                site,
                sample,
                ..
            } => {
                self.has_holds = true;
                self.has_summaries = true;
                let o = self.objects.entry(monitor).or_default();
                o.sum_holds.add_durations_of(&d, sample);
                self.sampled_holds |= sample > 1;
                // a row of a sample stands for `sample` times its holds
                let (count, total) = (d.count * sample, d.total * sample);
                add_sites(&mut o.sum_hold_sites, site.top(), count, total);
                let ts = self.sum_thread_hold_sites.entry((monitor, thread));
                add_sites(ts.or_default(), site.top(), count, total);
            }
            Event::MonitorHoldsUntimed {
                monitor,
                count,
                site,
                sample,
                ..
            } => {
                self.has_holds = true;
                self.has_summaries = true;
                let o = self.objects.entry(monitor).or_default();
                o.sum_holds.add_untimed_of(count, sample);
                self.sampled_holds |= sample > 1;
                let count = count * sample;
                *o.sum_untimed_sites.entry(site.top()).or_default() += count;
                let ts = self.sum_thread_untimed_sites.entry((monitor, thread));
                *ts.or_default().entry(site.top()).or_default() += count;
            }
            Event::LockOrder { .. } => self.has_summaries = true,
            Event::LockHolds {
                lock,
                mode,
                durations: d,
                site,
                ..
            } => {
                self.has_summaries = true;
                self.has_lock_summaries = true;
                let l = self.locks.entry(lock).or_default();
                let h = match mode {
                    LockMode::Write => &mut l.sum_write_holds,
                    LockMode::Read => &mut l.sum_read_holds,
                };
                h.add_durations(&d);
                add_sites(&mut l.sum_hold_sites, site.top(), d.count, d.total);
                let ts = self.sum_thread_hold_sites.entry((lock, thread));
                add_sites(ts.or_default(), site.top(), d.count, d.total);
            }
            Event::LockHoldsUntimed {
                lock,
                mode,
                count,
                site,
                ..
            } => {
                self.has_summaries = true;
                self.has_lock_summaries = true;
                let l = self.locks.entry(lock).or_default();
                match mode {
                    LockMode::Write => l.sum_write_holds.add_untimed(count),
                    LockMode::Read => l.sum_read_holds.add_untimed(count),
                }
                *l.sum_untimed_sites.entry(site.top()).or_default() += count;
                let ts = self.sum_thread_untimed_sites.entry((lock, thread));
                *ts.or_default().entry(site.top()).or_default() += count;
            }
            Event::LockHold {
                lock,
                mode,
                nanos,
                site,
                stack,
                ..
            } => {
                // Extra detail only: the hold is counted in a LockHolds line.
                self.has_lock_summaries = true;
                self.locks.entry(lock).or_default();
                let l = &mut self.long_lock_holds;
                if l.len() < LONG_HOLDS_KEPT || l.last().is_some_and(|x| x.0 < nanos) {
                    let raw = stack.raw().to_string();
                    l.push((nanos, thread, lock, mode, ts, site.top(), raw));
                    l.sort_by(|a, b| b.0.cmp(&a.0).then(a.4.cmp(&b.4)));
                    l.truncate(LONG_HOLDS_KEPT);
                }
            }
            Event::MonitorHold {
                monitor,
                nanos,
                stack,
                ..
            } => {
                // Extra detail only: the hold is counted in a MonitorHolds line.
                let l = &mut self.long_holds;
                if l.len() < LONG_HOLDS_KEPT || l.last().is_some_and(|x| x.0 < nanos) {
                    l.push((nanos, thread, monitor, ts, stack.raw().to_string()));
                    l.sort_by(|a, b| b.0.cmp(&a.0).then(a.3.cmp(&b.3)));
                    l.truncate(LONG_HOLDS_KEPT);
                }
            }
            Event::MonitorEntered { .. } => self.has_holds = true,
            Event::ObjectNotify { object, .. } => {
                self.objects.entry(object).or_default().notifies += 1
            }
            Event::Notifies {
                call,
                count,
                ref site,
                ..
            } => {
                // Thread starts wake nobody; the report lists none, as it lists no
                // `ThreadStart` event.
                if let Some(f) = site.top().filter(|_| call != WakeCall::Start) {
                    *self.unwaited_notifies.entry((call, f)).or_default() += count;
                }
            }
            Event::Waits {
                call,
                object,
                count,
                total,
                max,
                ref site,
                ..
            } => {
                match call {
                    WaitCall::Wait => {
                        t.waiting.0 += count;
                        t.waiting.1 += total;
                        let o = self.objects.entry(object).or_default();
                        o.waits += count;
                        o.waited += total;
                    }
                    WaitCall::Await => {
                        t.awaiting.0 += count;
                        t.awaiting.1 += total;
                        // `<object>` is the condition's lock.
                        let l = self.locks.entry(object).or_default();
                        l.awaits += count;
                        l.awaited += total;
                    }
                    WaitCall::Park => {
                        t.parked.0 += count;
                        t.parked.1 += total;
                        let p = self.parks.entry(object).or_default();
                        p.0 += count;
                        p.1 += total;
                    } // Semaphore acquisitions shorter than the agent's `waitthreshold`.
                    WaitCall::Acquire => {
                        t.acquiring.0 += count;
                        t.acquiring.1 += total;
                        let o = self.objects.entry(object).or_default();
                        o.sem_acquires += count;
                        o.sem_time += total;
                        o.sem_max = o.sem_max.max(max);
                        add_sites(&mut o.sem_sites, site.top(), count, total);
                    }
                    WaitCall::Join => {
                        t.joining.0 += count;
                        t.joining.1 += total;
                    }
                    WaitCall::Sleep => {
                        t.sleeping.0 += count;
                        t.sleeping.1 += total;
                    }
                }
                // Joins and sleeps wait for no object's wake-up: in the threads' figures only,
                // as their events.
                let wakeable = !matches!(call, WaitCall::Join | WaitCall::Sleep);
                if let Some(f) = site.top().filter(|_| wakeable) {
                    let w = self.short_waits.entry((call, f)).or_default();
                    w.0 += count;
                    w.1 += total;
                    w.2 = w.2.max(max);
                }
            }
            Event::ObjectNotifyAll { object, .. } => {
                self.objects.entry(object).or_default().notify_alls += 1
            }
            Event::SemaphoreRelease { semaphore, .. } => {
                self.objects.entry(semaphore).or_default().sem_releases += 1
            }
            Event::Lock { op, lock, .. } => {
                let l = self.locks.entry(lock).or_default();
                match op {
                    LockOp::Failed => l.failed += 1,
                    LockOp::TimedOut => l.timed_out += 1,
                    LockOp::Interrupted => l.interrupted += 1,
                    LockOp::Release => self.has_lock_releases = true,
                    LockOp::Acquired => {}
                }
            }
            Event::Condition { op, lock, .. } => {
                let l = self.locks.entry(lock).or_default();
                match op {
                    ConditionOp::Signal => l.signals += 1,
                    ConditionOp::SignalAll => l.signal_alls += 1,
                    ConditionOp::Await | ConditionOp::Awaited => {}
                }
            }
            Event::ThreadUnpark { .. } => self.unparks += 1,
            _ => {}
        }
    }

    /// The end of a j.u.c. acquisition that took `ns`: a contention when another thread
    /// owned the lock when it began.
    fn acquired(
        t: &mut ThreadStats,
        l: &mut LockStats,
        thread: Hash,
        owner: Hash,
        ns: u64,
        (site, stack): (Option<Frame>, &str),
    ) {
        l.acquisitions += 1;
        if owner != Hash::UNKNOWN && owner != thread {
            t.juc_blocked.0 += 1;
            t.juc_blocked.1 += ns;
            l.contentions += 1;
            l.blocked += ns;
            l.blocked_max = l.blocked_max.max(ns);
            *l.owners.entry(owner).or_default() += 1;
            add_site(&mut l.sites, site, ns);
            add_stack(&mut l.blocked_stacks, stack, 1, ns);
        }
    }

    fn parked(t: &mut ThreadStats, parks: &mut FastMap<Hash, (u64, u64)>, blocker: Hash, ns: u64) {
        t.parked.0 += 1;
        t.parked.1 += ns;
        let p = parks.entry(blocker).or_default();
        p.0 += 1;
        p.1 += ns;
    }

    /// What one span adds up: its thread's state, and its object's.
    fn span(&mut self, s: Span) {
        let ns = s.nanos();
        let (thread, open, site) = (s.thread, s.is_open(), s.begin.top);
        let Some(t) = self.threads.get_mut(&thread) else {
            return;
        };
        match s.kind {
            SpanKind::Blocked { monitor, owner } => {
                t.blocked.0 += 1;
                t.blocked.1 += ns;
                let o = self.objects.entry(monitor).or_default();
                o.contentions += 1;
                if open {
                    o.still_blocked += 1;
                }
                o.blocked += ns;
                o.blocked_max = o.blocked_max.max(ns);
                *o.owners.entry(owner).or_default() += 1;
                add_site(&mut o.sites, site, ns);
                add_stack(&mut o.blocked_stacks, &s.begin.stack, 1, ns);
            }
            SpanKind::Call { call, object } => {
                // A semaphore's site is where it was acquired: its end's (none when open).
                let end_top = s.end.and_then(|e| e.top);
                Self::close_call(t, &mut self.objects, call, object, ns, end_top);
            }
            SpanKind::Hold {
                held: Held::Monitor(m),
                nanos,
            } => {
                let o = self.objects.entry(m).or_default();
                if open {
                    o.open_holds += 1;
                    self.open_holds_at_end.push((thread, m, site, s.begin.ts));
                } else {
                    o.holds.add(nanos);
                    add_site(&mut o.hold_sites, site, nanos);
                    let th = self.thread_hold_sites.entry((m, thread));
                    add_site(th.or_default(), site, nanos);
                }
            }
            SpanKind::Hold {
                held: Held::Lock(lock, mode),
                nanos,
            } => {
                if open {
                    // In a log summarised for j.u.c. locks the releases are not written:
                    // the holds of its LockAcquired lines are not known to be open.
                    if !self.juc_summarised() {
                        self.locks.entry(lock).or_default().open_holds += 1;
                        self.open_holds_at_end
                            .push((thread, lock, site, s.begin.ts));
                    }
                } else {
                    let l = self.locks.entry(lock).or_default();
                    match mode {
                        LockMode::Write => l.write_holds.add(nanos),
                        LockMode::Read => l.read_holds.add(nanos),
                    }
                    add_site(&mut l.hold_sites, site, nanos);
                    let th = self.thread_hold_sites.entry((lock, thread));
                    add_site(th.or_default(), site, nanos);
                }
            }
            SpanKind::Acquire { lock, owner, .. } => {
                let l = self.locks.entry(lock).or_default();
                if open && owner != Hash::UNKNOWN && owner != thread {
                    l.still_blocked += 1;
                }
                Self::acquired(t, l, thread, owner, ns, (site, &s.begin.stack));
            }
            SpanKind::Await { lock, .. } => {
                t.awaiting.0 += 1;
                t.awaiting.1 += ns;
                let l = self.locks.entry(lock).or_default();
                l.awaits += 1;
                l.awaited += ns;
            }
            SpanKind::Park { blocker } => Self::parked(t, &mut self.parks, blocker, ns),
            // Its Hold has its time (this pairer hands out no stretches).
            SpanKind::Stretch { .. } => {}
        }
    }

    fn close_call(
        t: &mut ThreadStats,
        objects: &mut FastMap<Hash, ObjectStats>,
        call: Call,
        obj: Hash,
        ns: u64,
        top: Option<Frame>,
    ) {
        match call {
            Call::Wait => {
                t.waiting.0 += 1;
                t.waiting.1 += ns;
                let o = objects.entry(obj).or_default();
                o.waits += 1;
                o.waited += ns;
            }
            Call::Join => {
                t.joining.0 += 1;
                t.joining.1 += ns;
            }
            Call::Sleep => {
                t.sleeping.0 += 1;
                t.sleeping.1 += ns;
            }
            Call::Semaphore => {
                t.acquiring.0 += 1;
                t.acquiring.1 += ns;
                let o = objects.entry(obj).or_default();
                o.sem_acquires += 1;
                o.sem_time += ns;
                o.sem_max = o.sem_max.max(ns);
                add_site(&mut o.sem_sites, top, ns);
            }
        }
    }

    /// Counts what is still open at the end of the log up to its last timestamp,
    /// and picks the source of hold times.
    fn finish(&mut self) {
        self.holds_from_summaries = self.has_summaries && !self.from_events;
        let mut sum = std::mem::take(&mut self.sum_thread_hold_sites);
        for (k, u) in std::mem::take(&mut self.sum_thread_untimed_sites) {
            add_untimed_sites(sum.entry(k).or_default(), u);
        }
        if self.holds_from_summaries {
            self.thread_hold_sites = sum;
        }
        self.lock_holds_from_summaries = self.has_lock_summaries && !self.from_events;
        for l in self.locks.values_mut() {
            let w = std::mem::take(&mut l.sum_write_holds);
            let r = std::mem::take(&mut l.sum_read_holds);
            let mut sites = std::mem::take(&mut l.sum_hold_sites);
            let timed = timed_counts(&sites);
            add_untimed_sites(&mut sites, std::mem::take(&mut l.sum_untimed_sites));
            if self.lock_holds_from_summaries {
                l.write_holds = w;
                l.read_holds = r;
                l.hold_sites = sites;
                l.hold_sites_timed = timed;
            } else {
                // Events time every hold.
                l.hold_sites_timed = timed_counts(&l.hold_sites);
            }
        }
        for o in self.objects.values_mut() {
            let sum_holds = std::mem::take(&mut o.sum_holds);
            let mut sum_sites = std::mem::take(&mut o.sum_hold_sites);
            let timed = timed_counts(&sum_sites);
            add_untimed_sites(&mut sum_sites, std::mem::take(&mut o.sum_untimed_sites));
            if self.holds_from_summaries {
                o.holds = sum_holds;
                o.hold_sites = sum_sites;
                o.hold_sites_timed = timed;
            } else {
                o.hold_sites_timed = timed_counts(&o.hold_sites);
            }
        }
        // What is still open ends at the log's last event.
        let mut open = Vec::new();
        let pairer = std::mem::take(&mut self.pairer);
        // The log's span: its first and last events, as the pairer ends what is open.
        (self.first_ts, self.last_ts) = (pairer.start(), pairer.end());
        pairer.finish(&mut |s| open.push(s));
        for s in open {
            self.span(s);
        }
        // An exclusive hold's estimated total is at most the recording's span: one thread at
        // a time holds the lock. A sample's estimate of a lock held nearly all the time (a
        // busy queue's) read more than the run lasted (issue 46: "a total never exceeds what
        // the threads' lives allow").
        if let Some(first) = self.first_ts.filter(|&f| f < self.last_ts) {
            let span = self.last_ts - first;
            for l in self.locks.values_mut() {
                l.write_holds.cap_total(span);
            }
            for o in self.objects.values_mut() {
                o.holds.cap_total(span);
            }
        }
    }

    /// `name [HASH]`, or `[HASH]` for unnamed and `unknown` for 00000000.
    pub fn thread_label(&self, h: Hash) -> String {
        if h == Hash::UNKNOWN {
            return "unknown (already released)".into();
        }
        match self.threads.get(&h).and_then(|t| t.name.as_deref()) {
            Some(n) => format!("{n} [{h}]"),
            None => format!("[{h}]"),
        }
    }

    /// How contentions still open at the log's end are said: at the end of the program, or,
    /// for a recording stopped by a detach while the JVM ran on, at the end of the recording
    /// (they may have been granted a moment later).
    pub fn still_blocked_text(&self, n: u64) -> String {
        if self.ended == Some(orca_format::RecordingEnd::Detach) {
            format!("{n} open when the recording stopped")
        } else {
            format!("{n} still blocked at the end")
        }
    }

    /// Whether monitor (lock) `h`'s hold count may be only of the holds a sampled tracking
    /// identified, a lower bound: in a `tracking=sampled` log, a monitor with a row of its own
    /// held at a site whose row of other monitors counts holds too, which may be holds of
    /// this monitor left unidentified (docs/FORMAT.md, "Rows of a site"). Where no site of
    /// the monitor has such a row (a program that locks slowly, every hold identified), its
    /// count is exact; the row of other monitors' own count is always exact.
    pub fn identified_only(&self, h: Hash) -> bool {
        if !self.sampled_tracking || h == Hash(0) {
            return false;
        }
        let shares = |mine: &HashMap<Option<Frame>, (u64, u64)>,
                      other: Option<&HashMap<Option<Frame>, (u64, u64)>>| {
            other.is_some_and(|o| mine.keys().any(|f| o.contains_key(f)))
        };
        let monitor = self.objects.get(&h).is_some_and(|o| {
            shares(
                &o.hold_sites,
                self.objects.get(&Hash(0)).map(|z| &z.hold_sites),
            )
        });
        let lock = self.locks.get(&h).is_some_and(|l| {
            shares(
                &l.hold_sites,
                self.locks.get(&Hash(0)).map(|z| &z.hold_sites),
            )
        });
        monitor || lock
    }

    /// A lock as the tools name it: `HashMap@6404CC3C` when the log names its class, else
    /// `monitor 6404CC3C` (`lock 6404CC3C` for a j.u.c. lock's synchronizer).
    pub fn lock_name(&self, h: Hash, juc: bool) -> String {
        if h == Hash(0) {
            // A summary row of the monitors (locks) that had no row of their own at a site
            // (docs/FORMAT.md, "other monitors"): the name of its monitor contentions, one
            // row of the monitors' table; its holds (and j.u.c. contentions) are named at
            // their sites ([`Analysis::unidentified_sites`]).
            return if juc { "other locks" } else { "other monitors" }.to_string();
        }
        match self.classes.get(&h) {
            Some(c) => format!("{}@{h}", simple_name(c)),
            None if juc => format!("lock {h}"),
            None => format!("monitor {h}"),
        }
    }

    /// Any other object (a wait object, a condition, a park blocker): `FutureTask@7440E464`,
    /// else `object 7440E464`.
    pub fn object_name(&self, h: Hash) -> String {
        self.named(h, "object")
    }

    /// `Class@HASH` when the log names the object's class, else `{what} HASH`.
    pub fn named(&self, h: Hash, what: &str) -> String {
        match self.classes.get(&h) {
            Some(c) => format!("{}@{h}", simple_name(c)),
            None => format!("{what} {h}"),
        }
    }

    /// Threads in the order the log first mentions them.
    pub fn sorted_threads(&self) -> Vec<(Hash, &ThreadStats)> {
        let mut v: Vec<_> = self.threads.iter().map(|(h, t)| (*h, t)).collect();
        v.sort_by_key(|(_, t)| t.order);
        v
    }

    /// Objects passing `filter`, largest `key` first (ties by ID, so output is stable).
    pub fn ranked<F: Fn(&ObjectStats) -> u64>(
        &self,
        key: F,
        filter: impl Fn(&ObjectStats) -> bool,
    ) -> Vec<(Hash, &ObjectStats)> {
        let mut v: Vec<_> = self
            .objects
            .iter()
            .filter(|(_, o)| filter(o))
            .map(|(h, o)| (*h, o))
            .collect();
        v.sort_by(|a, b| key(b.1).cmp(&key(a.1)).then(a.0.cmp(&b.0)));
        v
    }
}

/// `java.util.HashMap` -> `HashMap`, `java.util.concurrent.locks.ReentrantLock$NonfairSync`
/// -> `ReentrantLock$NonfairSync`: short enough for a table, still unambiguous in practice.
pub fn simple_name(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// `Class.method(File.java:line)`, or `(no stack)`.
pub fn site(md: &Metadata, f: Option<Frame>) -> String {
    match f {
        Some(f) => md.frame_to_string(f),
        None => "(no stack)".into(),
    }
}

/// The `n` sites with the most time: (site, count, ns).
pub fn top_sites(
    m: &HashMap<Option<Frame>, (u64, u64)>,
    n: usize,
) -> Vec<(Option<Frame>, u64, u64)> {
    let mut v: Vec<_> = m.iter().map(|(f, (c, ns))| (*f, *c, *ns)).collect();
    let key = |f: &Option<Frame>| f.map(|f| (f.method, f.location));
    v.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then(b.1.cmp(&a.1))
            .then(key(&a.0).cmp(&key(&b.0)))
    });
    v.truncate(n);
    v
}

/// What a recording started in a running JVM says of the holds that began before it.
pub fn held_at_start_text(n: u64) -> String {
    format!(
        "holds begun before the recording: {n} j.u.c. lock hold{} ended in it (seen at the unlock: LockHeldAtStart); monitors held at the attach are not seen",
        if n == 1 { "" } else { "s" }
    )
}

/// A `RecordingStarted` line's settings in words: what was recorded how, and what a reader
/// of the figures must know (a sampled tracking's lock orders are a sample).
pub fn settings_text(raw: &str) -> String {
    let mut s = format!("recorded with: {}", raw.replace(';', ", "));
    if orca_format::Settings::parse_str(raw).is_ok_and(|t| t.sampled_tracking()) {
        s.push_str(
            " (lock orders, and so potential deadlocks, from a sample of each busy thread's \
             holds; a hold count marked \"at least\" is of a monitor's identified holds; \
             tracking=full records every one)",
        );
    }
    s
}

/// The report as text.
pub fn text(a: &Analysis, md: &Metadata, prefix: &str, top: usize, all: bool) -> String {
    let mut s = String::new();
    // `--all` shows every thread, monitor and lock, not only the first `top` (issue 46: a
    // bundle's own monitor, 100 holds, was in neither `--all` nor the JSON, past the tenth).
    let rows = if all { usize::MAX } else { top };
    let span = a.last_ts.saturating_sub(a.first_ts.unwrap_or(a.last_ts));
    let _ = writeln!(
        s,
        "Orca report for {prefix}: {} events, {} threads, {} monitors/objects, span {}",
        a.events,
        a.threads.len(),
        a.objects.len(),
        dur(span)
    );
    let _ = writeln!(
        s,
        "  how it ended: {}",
        orca_format::RecordingEnd::describe(a.ended)
    );
    if let Some(settings) = &a.settings {
        let _ = writeln!(s, "  {}", settings_text(settings));
    }
    if a.held_at_start > 0 || a.ended == Some(orca_format::RecordingEnd::Detach) {
        let _ = writeln!(s, "  {}", held_at_start_text(a.held_at_start));
    }
    if a.malformed > 0 || a.torn || a.dropped > 0 {
        let _ = writeln!(
            s,
            "  ({} malformed lines skipped{}, {} events dropped by the agent; run `orca check`)",
            a.malformed,
            if a.torn { ", torn last line" } else { "" },
            a.dropped
        );
    }
    let mut shared: Vec<_> = a.shared.iter().collect();
    shared.sort();
    for (h, second) in shared {
        let _ = writeln!(
            s,
            "  ID {h} names two objects ({}, {second}: one identity hash); its lines may be of either",
            a.classes.get(h).map_or("?", |c| simple_name(c)),
            second = simple_name(second)
        );
    }
    let _ = writeln!(s, "\nThreads");
    let _ = writeln!(
        s,
        "  {:<32} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "thread", "lifetime", "blocked", "waiting", "sleeping", "joining", "semaphores"
    );
    let mut threads = a.sorted_threads();
    let busy = |t: &ThreadStats| {
        let st = t.states();
        st[0] + st[1] + st[4]
    };
    threads.sort_by_key(|(_, t)| std::cmp::Reverse(busy(t)));
    if threads.iter().all(|(_, t)| busy(t) == 0) {
        threads.sort_by_key(|(_, t)| t.order);
    }
    for (h, t) in threads.iter().take(rows) {
        let life = t
            .ended
            .unwrap_or(a.last_ts)
            .saturating_sub(t.started.unwrap_or(t.first));
        let st = t.states();
        let _ = writeln!(
            s,
            "  {:<32} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}{}",
            a.thread_label(*h),
            dur(life),
            dur(st[0]),
            dur(st[1]),
            dur(st[2]),
            dur(st[3]),
            dur(st[4]),
            if t.ended.is_none() {
                "  (alive at end)"
            } else {
                ""
            }
        );
    }
    more(&mut s, threads.len(), rows, "threads");
    let _ = writeln!(
        s,
        "  (blocked: on a monitor or a j.u.c. lock; waiting: Object.wait, Condition.await, park; a state not over when the log ends counts up to its end)"
    );

    let contended = a.ranked(|o| o.blocked, |o| o.contentions > 0);
    let _ = writeln!(s, "\nMonitors by time threads spent blocked on them");
    if contended.is_empty() {
        let _ = writeln!(s, "  (no contention)");
    }
    for (i, (h, o)) in contended.iter().take(rows).enumerate() {
        let _ = writeln!(
            s,
            "  #{} {}: {} blocked in {} contentions (max {}){}",
            i + 1,
            a.lock_name(*h, false),
            dur(o.blocked),
            o.contentions,
            dur(o.blocked_max),
            if o.still_blocked > 0 {
                format!(", {}", a.still_blocked_text(o.still_blocked))
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            s,
            "      owners at contention: {}",
            owners_text(a, &o.owners, o.contentions, top)
        );
        if a.has_holds {
            // Instrumentation mode names the owner of a monitor instrumented code takes from
            // its own record of holds; it asks the JVM only about the others (FORMAT.md,
            // "Monitor events").
            let _ = writeln!(
                s,
                "      owners from: {}",
                if o.holds.count() > 0 || o.open_holds > 0 {
                    "the tracker (instrumented code takes this monitor)"
                } else {
                    "the JVM (no instrumented code took this monitor)"
                }
            );
        }
        for (f, c, ns) in top_sites(&o.sites, top) {
            let _ = writeln!(s, "      blocked at {} x{c} {}", site(md, f), dur(ns));
        }
        // Row 0's holds are shown at their sites (`unidentified_text`), never as one figure.
        if o.holds.count() > 0 && *h != Hash(0) {
            let _ = writeln!(s, "      {}", holds_line(o, a.identified_only(*h)));
        }
    }
    more(&mut s, contended.len(), rows, "monitors");

    if a.has_holds {
        let mut held = a.ranked(
            |o| o.holds.total(),
            |o| o.holds.count() > 0 || o.open_holds > 0,
        );
        held.retain(|(h, _)| *h != Hash(0));
        let _ = writeln!(
            s,
            "\nMonitor hold times (MonitorEntered to MonitorExit, outermost holds; from {})",
            if a.holds_from_summaries {
                "MonitorHolds summary lines"
            } else {
                "events"
            }
        );
        for (h, o) in held.iter().take(rows) {
            let _ = writeln!(
                s,
                "  {}: {}",
                a.lock_name(*h, false),
                holds_line(o, a.identified_only(*h))
            );
            let est = if o.holds.is_estimate() { "~" } else { "" };
            let about = if a.sampled_holds { "~" } else { "" };
            for (f, c, ns) in top_sites(&o.hold_sites, 3) {
                let _ = writeln!(
                    s,
                    "      held from {} x{about}{c} {}",
                    site(md, f),
                    site_time(est, ns)
                );
            }
        }
        more(&mut s, held.len(), rows, "monitors");
        unidentified_text(&mut s, a, md, false, rows);
    }

    if !a.long_holds.is_empty() {
        let _ = writeln!(s, "\nLongest holds (MonitorHold events)");
        for (ns, t, m, _, raw) in a.long_holds.iter().take(top) {
            let at = parse_stack(raw.as_bytes(), 0)
                .ok()
                .and_then(|st| st.top())
                .map(|f| md.frame_to_string(f))
                .unwrap_or_else(|| "(no stack)".into());
            let _ = writeln!(
                s,
                "  {} held {} by {} at {at}",
                a.lock_name(*m, false),
                dur(*ns),
                a.thread_label(*t)
            );
        }
    }

    let sems = a.ranked(|o| o.sem_time, |o| o.sem_acquires > 0 || o.sem_releases > 0);
    if !sems.is_empty() {
        let _ = writeln!(s, "\nSemaphores by time threads spent acquiring them");
        // Releases that could end no long wait are counted per site, not per semaphore
        // (`Notifies`): here only the written ones, which Wait/notify's counts complete.
        let counted = a
            .unwaited_notifies
            .keys()
            .any(|(call, _)| *call == WakeCall::Release);
        let releases = if counted {
            "releases written (counted ones: Wait/notify)"
        } else {
            "releases"
        };
        for (h, o) in sems.iter().take(rows) {
            let _ = writeln!(
                s,
                "  {}: {} acquiring in {} acquires (max {}), {} {releases}",
                a.named(*h, "semaphore"),
                dur(o.sem_time),
                o.sem_acquires,
                dur(o.sem_max),
                o.sem_releases
            );
            for (f, c, ns) in top_sites(&o.sem_sites, 3) {
                let _ = writeln!(s, "      acquired at {} x{c} {}", site(md, f), dur(ns));
            }
        }
        more(&mut s, sems.len(), rows, "semaphores");
    }

    juc_text(&mut s, a, md, top, all);

    let waits = a.ranked(|o| o.waited, |o| o.waits + o.notifies + o.notify_alls > 0);
    let _ = writeln!(s, "\nWait/notify");
    if waits.is_empty() && a.unwaited_notifies.is_empty() && a.short_waits.is_empty() {
        let _ = writeln!(s, "  (none)");
    }
    // Waits counted per site (no events, no stacks): shorter than the agent's threshold, or
    // long ones beyond the examples it wrote.
    let mut short: Vec<_> = a.short_waits.iter().collect();
    short.sort_by(|x, y| {
        (y.1 .1, x.0 .0, x.0 .1.method.0, x.0 .1.location).cmp(&(
            x.1 .1,
            y.0 .0,
            y.0 .1.method.0,
            y.0 .1.location,
        ))
    });
    for ((call, f), (n, ns, max)) in short.iter().take(top) {
        let _ = writeln!(
            s,
            "  {} at {} x{n} {} (max {}), counted (short, woken by a counted call, or past the examples written)",
            call.name(),
            site(md, Some(*f)),
            dur(*ns),
            dur(*max)
        );
    }
    // Calls that woke nobody, counted per site by the agent (a notify with nobody waiting
    // before a wait began is how a wake-up is missed).
    let mut unwaited: Vec<_> = a.unwaited_notifies.iter().collect();
    unwaited.sort_by(|x, y| {
        (y.1, x.0 .0, x.0 .1.method.0, x.0 .1.location).cmp(&(
            x.1,
            y.0 .0,
            y.0 .1.method.0,
            y.0 .1.location,
        ))
    });
    for ((call, f), n) in unwaited.iter().take(top) {
        let _ = writeln!(
            s,
            "  {} at {} x{n} counted (found no long wait, or past the examples written)",
            call.name(),
            site(md, Some(*f))
        );
    }
    // A notify counted at its site names no object: the per-object figures are the written
    // ones, and say so when counted ones exist (the demo read "0 notify, 0 notifyAll" under
    // "notifyAll at PingPong.play(PingPong.java:24) x200 counted").
    let written = written_only(
        a,
        &[WakeCall::Notify, WakeCall::NotifyAll],
        "above name no object",
    );
    for (h, o) in waits.iter().take(rows) {
        let _ = writeln!(
            s,
            "  {}: {} waits ({}), {} notify, {} notifyAll{written}",
            a.object_name(*h),
            o.waits,
            dur(o.waited),
            o.notifies,
            o.notify_alls
        );
    }
    more(&mut s, waits.len(), rows, "objects");
    s
}

/// The row of other monitors (locks), `00000000`, at one of its sites: what every output
/// shows of it there (the report's text and JSON, the page's locks table, `pprof` and `flame`),
/// from [`Analysis::unidentified_sites`].
#[derive(Debug, Clone)]
pub struct UnidentifiedSite {
    pub site: Option<Frame>,
    /// The class of the monitors (locks) identified at the site when they share one
    /// (`Object`), else `monitors` (`locks`): [`Analysis::unidentified_name`].
    pub name: String,
    /// Contentions there, (count, ns): j.u.c. locks only (a monitor's stay in the monitors'
    /// table, as the row `other monitors`).
    pub blocked: Option<(u64, u64)>,
    /// Holds there, (count, ns), and how many of them were timed.
    pub held: Option<(u64, u64)>,
    pub timed: u64,
    /// The monitors (locks) with a row of their own at the site, in ID order.
    pub there: Vec<Hash>,
}

impl UnidentifiedSite {
    /// How every output names the row at this site: `Object at T.a(T.java:12)`.
    pub fn label(&self, md: &Metadata) -> String {
        unidentified_label(md, &self.name, self.site)
    }
}

/// `{name} at {site}`: the row of other monitors (locks) at `f`, named `name`
/// ([`Analysis::unidentified_name`]); `pprof` and `flame` put it after `monitor ` (`lock `).
pub fn unidentified_label(md: &Metadata, name: &str, f: Option<Frame>) -> String {
    format!("{name} at {}", site(md, f))
}

impl Analysis {
    /// The monitors (`juc`: locks) other than the row of other monitors with a row of their
    /// own at site `f` (holds or contentions there), in ID order.
    pub fn identified_at(&self, f: Option<Frame>, juc: bool) -> Vec<Hash> {
        let mut there: Vec<Hash> = if juc {
            self.locks
                .iter()
                .filter(|(h, l)| {
                    **h != Hash(0) && (l.hold_sites.contains_key(&f) || l.sites.contains_key(&f))
                })
                .map(|(h, _)| *h)
                .collect()
        } else {
            self.objects
                .iter()
                .filter(|(h, o)| {
                    **h != Hash(0) && (o.hold_sites.contains_key(&f) || o.sites.contains_key(&f))
                })
                .map(|(h, _)| *h)
                .collect()
        };
        there.sort();
        there
    }

    /// The name of the row of other monitors (`juc`: locks) at site `f`: the class of the
    /// monitors identified there when they share one (`Object`), else `monitors` (`locks`).
    pub fn unidentified_name(&self, f: Option<Frame>, juc: bool) -> String {
        self.unidentified_name_of(&self.identified_at(f, juc), juc)
    }

    fn unidentified_name_of(&self, there: &[Hash], juc: bool) -> String {
        let classes: std::collections::BTreeSet<&str> = there
            .iter()
            .map(|h| self.classes.get(h).map(|c| simple_name(c)))
            .collect::<Option<_>>()
            .unwrap_or_default();
        match (classes.len(), classes.iter().next()) {
            (1, Some(c)) => c.to_string(),
            _ if juc => "locks".into(),
            _ => "monitors".into(),
        }
    }

    /// The row of other monitors (`juc`: locks), `00000000`, at its sites, most blocked then
    /// most held first: the holds (and, for j.u.c. locks, contentions) of the monitors that
    /// had no row of their own at a site, which under `tracking=sampled` are mostly holds the
    /// tracker left unidentified, of whatever monitor (docs/FORMAT.md, "Rows of a site").
    /// Every output shows it so, never as one lock (issue 46).
    pub fn unidentified_sites(&self, juc: bool) -> Vec<UnidentifiedSite> {
        let (contended, held, timed) = if juc {
            match self.locks.get(&Hash(0)) {
                Some(l) => (Some(&l.sites), &l.hold_sites, &l.hold_sites_timed),
                None => return Vec::new(),
            }
        } else {
            match self.objects.get(&Hash(0)) {
                Some(o) => (None, &o.hold_sites, &o.hold_sites_timed),
                None => return Vec::new(),
            }
        };
        let mut sites: Vec<Option<Frame>> = held.keys().copied().collect();
        for f in contended.into_iter().flat_map(|c| c.keys()) {
            if !held.contains_key(f) {
                sites.push(*f);
            }
        }
        let mut v: Vec<UnidentifiedSite> = sites
            .into_iter()
            .map(|f| {
                let there = self.identified_at(f, juc);
                UnidentifiedSite {
                    site: f,
                    name: self.unidentified_name_of(&there, juc),
                    blocked: contended.and_then(|c| c.get(&f)).copied(),
                    held: held.get(&f).copied(),
                    timed: timed.get(&f).copied().unwrap_or(0),
                    there,
                }
            })
            .collect();
        let key = |u: &UnidentifiedSite| {
            (
                u.blocked.map_or(0, |b| b.1),
                u.held.map_or(0, |h| h.0),
                u.site.map(|f| (f.method, f.location)),
            )
        };
        v.sort_by(|x, y| {
            let (kx, ky) = (key(x), key(y));
            (ky.0, ky.1).cmp(&(kx.0, kx.1)).then(kx.2.cmp(&ky.2))
        });
        v
    }
}

/// The row of other monitors (`juc`: locks) at its sites ([`Analysis::unidentified_sites`]).
/// Each site is named with the class of the monitors identified there when they share one,
/// and names them: a program with one `ReentrantLock` read "other locks (summarised
/// together): held 13,206,743 times" as if it had others (issue 46). Its j.u.c. contentions
/// are here too (the row is no lock of the table); its monitor contentions stay in the
/// monitors' table, as counted there.
fn unidentified_text(s: &mut String, a: &Analysis, md: &Metadata, juc: bool, rows: usize) {
    let estimate = if juc {
        a.locks
            .get(&Hash(0))
            .is_some_and(|l| l.write_holds.is_estimate() || l.read_holds.is_estimate())
    } else {
        a.objects
            .get(&Hash(0))
            .is_some_and(|o| o.holds.is_estimate())
    };
    let sites = a.unidentified_sites(juc);
    if sites.is_empty() {
        return;
    }
    let what = if juc { "lock" } else { "monitor" };
    let _ = writeln!(
        s,
        "  holds of {what}s without a row of their own, at their sites (tracking=sampled leaves most of a busy thread's holds unidentified, of whatever {what}; a site's {what}s past its first 4 share the row too):"
    );
    let est = if estimate { "~" } else { "" };
    for u in sites.iter().take(rows) {
        let mut figures = Vec::new();
        if let Some((c, ns)) = u.blocked {
            figures.push(format!("blocked {} {}", crate::util::times(c), dur(ns)));
        }
        if let Some((c, ns)) = u.held {
            let about = if a.sampled_holds && what == "monitor" {
                "~"
            } else {
                ""
            };
            figures.push(format!(
                "held {about}{}, {}",
                crate::util::times(c),
                if est.is_empty() || ns > 0 {
                    format!("total {}", site_time(est, ns))
                } else {
                    site_time(est, ns)
                }
            ));
        }
        let identified = match u.there.len() {
            0 => format!("no {what} identified there"),
            n => {
                let names: Vec<String> = u
                    .there
                    .iter()
                    .take(3)
                    .map(|h| a.lock_name(*h, juc))
                    .collect();
                format!(
                    "identified there: {}{}",
                    names.join(", "),
                    if n > 3 {
                        format!(" and {} more", n - 3)
                    } else {
                        String::new()
                    }
                )
            }
        };
        let _ = writeln!(
            s,
            "      {}: {} ({identified})",
            u.label(md),
            figures.join(", ")
        );
    }
    more(s, sites.len(), rows, "sites");
}

/// `  ... 3 more monitors (--all shows them)` when a table of `len` rows shows `rows`.
fn more(s: &mut String, len: usize, rows: usize, what: &str) {
    if len > rows {
        let _ = writeln!(s, "  ... {} more {what} (--all shows them)", len - rows);
    }
}

/// The calls among `calls` counted at their sites (`Notifies` lines, which name no object):
/// none of them is in an object's (a lock's) notify or signal figures.
pub fn counted_calls(a: &Analysis, calls: &[WakeCall]) -> u64 {
    a.unwaited_notifies
        .iter()
        .filter(|((call, _), _)| calls.contains(call))
        .map(|(_, n)| *n)
        .sum()
}

/// What an object's (a condition's) wake-up figures add when some of `calls` were counted at
/// their sites instead (`Notifies` lines name no object): that the figures are the written
/// ones, and how many were counted; nothing when none was.
fn written_only(a: &Analysis, calls: &[WakeCall], why: &str) -> String {
    let counted = counted_calls(a, calls);
    if counted > 0 {
        format!(" written one by one (the {counted} counted at their sites {why})")
    } else {
        String::new()
    }
}

/// The j.u.c. sections, when the log has j.u.c. lock, condition or park events.
fn juc_text(s: &mut String, a: &Analysis, md: &Metadata, top: usize, all: bool) {
    if a.locks.is_empty() && a.parks.is_empty() && a.unparks == 0 {
        return;
    }
    let (mut locks, folded) = shown_locks(a, md, all);
    // Signals counted at their sites name no condition (as notifies: the Wait/notify section).
    let signals_written = written_only(
        a,
        &[WakeCall::Signal, WakeCall::SignalAll],
        "name no condition",
    );
    let held = |l: &LockStats| l.write_holds.total() + l.read_holds.total();
    locks.sort_by(|x, y| {
        (y.1.blocked, held(y.1))
            .cmp(&(x.1.blocked, held(x.1)))
            .then(x.0.cmp(&y.0))
    });
    let _ = writeln!(
        s,
        "\nj.u.c. locks by time threads spent blocked on them (an acquisition is contended when another thread owned the lock as it began)"
    );
    if a.lock_holds_from_summaries {
        let _ = writeln!(
            s,
            "  (hold times from LockHolds summary lines{})",
            if a.juc_summarised() {
                "; only contended or unsuccessful acquisitions are events, so their number is not known"
            } else {
                ""
            }
        );
    }
    if locks.is_empty() {
        let _ = writeln!(s, "  (no contention)");
    }
    let rows = if all { usize::MAX } else { top };
    for (i, (h, l)) in locks.iter().take(rows).enumerate() {
        let _ = writeln!(
            s,
            "  #{} {}: {} blocked in {} contentions (max {}){}{}{}",
            i + 1,
            a.lock_name(*h, true),
            dur(l.blocked),
            l.contentions,
            dur(l.blocked_max),
            if a.juc_summarised() {
                String::new()
            } else {
                format!(" of {} acquisitions", l.acquisitions)
            },
            if l.failed + l.timed_out + l.interrupted > 0 {
                format!(
                    ", {} failed, {} timed out, {} interrupted",
                    l.failed, l.timed_out, l.interrupted
                )
            } else {
                String::new()
            },
            if l.still_blocked > 0 {
                format!(", {}", a.still_blocked_text(l.still_blocked))
            } else {
                String::new()
            }
        );
        if l.contentions > 0 {
            let _ = writeln!(
                s,
                "      owners at contention: {}",
                owners_text(a, &l.owners, l.contentions, top)
            );
        }
        for (f, c, ns) in top_sites(&l.sites, top) {
            let _ = writeln!(s, "      blocked at {} x{c} {}", site(md, f), dur(ns));
        }
        for (what, hist) in [("write/exclusive", &l.write_holds), ("read", &l.read_holds)] {
            if hist.count() > 0 {
                let _ = writeln!(
                    s,
                    "      {what} {}",
                    hold_figures(hist, a.identified_only(*h))
                );
            }
        }
        if l.open_holds > 0 {
            let _ = writeln!(s, "      {} holds still open at end", l.open_holds);
        }
        let est = l.write_holds.is_estimate() || l.read_holds.is_estimate();
        let est = if est { "~" } else { "" };
        for (f, c, ns) in top_sites(&l.hold_sites, 3) {
            let _ = writeln!(
                s,
                "      held from {} x{c} {}",
                site(md, f),
                site_time(est, ns)
            );
        }
        if l.awaits + l.signals + l.signal_alls > 0 {
            let _ = writeln!(
                s,
                "      conditions: {} awaits ({}), {} signal, {} signalAll{signals_written}",
                l.awaits,
                dur(l.awaited),
                l.signals,
                l.signal_alls
            );
        }
    }
    more(s, locks.len(), rows, "locks");
    unidentified_text(s, a, md, true, rows);
    if let Some(note) = folded.note() {
        let _ = writeln!(s, "  {note}");
    }
    let long_lock_holds: Vec<_> = a
        .long_lock_holds
        .iter()
        .filter(|h| all || !h.5.is_some_and(|f| is_jdk_frame(md, f)))
        .collect();
    if !long_lock_holds.is_empty() {
        let _ = writeln!(s, "\nLongest j.u.c. lock holds (LockHold events)");
        for (ns, t, l, mode, _, at, raw) in long_lock_holds.into_iter().take(top) {
            let released = parse_stack(raw.as_bytes(), 0)
                .ok()
                .and_then(|st| st.top())
                .map(|f| md.frame_to_string(f))
                .unwrap_or_else(|| "(no stack)".into());
            let _ = writeln!(
                s,
                "  {} ({}) held {} by {}, acquired at {}, released at {released}",
                a.lock_name(*l, true),
                mode_name(*mode),
                dur(*ns),
                a.thread_label(*t),
                site(md, *at)
            );
        }
    }
    if !a.parks.is_empty() {
        let mut parks: Vec<(Hash, (u64, u64))> = a.parks.iter().map(|(h, p)| (*h, *p)).collect();
        parks.sort_by(|x, y| y.1 .1.cmp(&x.1 .1).then(x.0.cmp(&y.0)));
        let _ = writeln!(
            s,
            "\nParks by blocker (LockSupport.park outside a lock call)"
        );
        for (h, (c, ns)) in parks.iter().take(top) {
            let name = if *h == Hash::UNKNOWN {
                "no blocker".to_string()
            } else {
                format!("blocker {}", a.named(*h, "").trim_start())
            };
            let _ = writeln!(s, "  {name}: {c} parks, {}", dur(*ns));
        }
        let _ = writeln!(s, "  {} unparks", a.unparks);
    }
    let mut threads: Vec<(Hash, &ThreadStats)> = a
        .sorted_threads()
        .into_iter()
        .filter(|(_, t)| t.juc_blocked.0 + t.awaiting.0 + t.parked.0 > 0)
        .collect();
    threads.sort_by_key(|(_, t)| std::cmp::Reverse(t.juc_blocked.1 + t.awaiting.1 + t.parked.1));
    if !threads.is_empty() {
        let _ = writeln!(s, "\nThreads on j.u.c. locks");
        let _ = writeln!(
            s,
            "  {:<32} {:>12} {:>12} {:>12}",
            "thread", "lock-blocked", "awaiting", "parked"
        );
        for (h, t) in threads.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<32} {:>12} {:>12} {:>12}",
                a.thread_label(*h),
                dur(t.juc_blocked.1),
                dur(t.awaiting.1),
                dur(t.parked.1)
            );
        }
    }
}

/// What the text and the page leave out by default (`--all` shows it; the JSON has it all).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Folded {
    /// Locks left out.
    pub locks: usize,
    /// The time threads were blocked on them.
    pub blocked: u64,
}

impl Folded {
    /// `(3 uncontended or JDK-internal locks folded, 1.2 ms blocked on them; --all shows
    /// them)`, or nothing when nothing was.
    pub fn note(&self) -> Option<String> {
        (self.locks > 0).then(|| {
            let blocked = if self.blocked > 0 {
                format!(", {} blocked on them", dur(self.blocked))
            } else {
                String::new()
            };
            format!(
                "({} uncontended or JDK-internal locks folded{blocked}; --all shows them)",
                self.locks
            )
        })
    }
}

impl Analysis {
    /// Time blocked on every monitor and j.u.c. lock, by the contentions the log has.
    pub fn blocked_total(&self) -> u64 {
        let m: u64 = self.objects.values().map(|o| o.blocked).sum();
        m + self.locks.values().map(|l| l.blocked).sum::<u64>()
    }
}

/// Whether a lock is folded away by default: nobody contended it (nor failed to get it), or
/// every site known of it is in the JDK's own code, unless it has more than 5% of the time
/// threads were blocked on any lock (issue 46: a JDK pool's queue lock with 18% of it was
/// folded, and the fold gave no time). The one rule of the report's tables and its verdict.
pub fn folds<'a>(
    md: &Metadata,
    contentions: u64,
    blocked: u64,
    blocked_total: u64,
    sites: impl IntoIterator<Item = &'a Option<Frame>>,
) -> bool {
    let mut sites = sites.into_iter().peekable();
    let internal = sites.peek().is_some() && sites.all(|f| f.is_some_and(|f| is_jdk_frame(md, f)));
    contentions == 0 || internal && blocked.saturating_mul(20) <= blocked_total
}

/// The j.u.c. locks the tables show, and what they fold ([`folds`]; nothing with `all`).
fn shown_locks<'a>(
    a: &'a Analysis,
    md: &Metadata,
    all: bool,
) -> (Vec<(Hash, &'a LockStats)>, Folded) {
    let mut folded = Folded::default();
    let mut v = Vec::new();
    let total = a.blocked_total();
    for (h, l) in &a.locks {
        if *h == Hash(0) {
            // Not a lock: the holds of locks without a row of their own, shown at their sites
            // (`unidentified_text`), never as a lock of its own nor counted as a folded one.
            continue;
        }
        let failed = l.failed + l.timed_out + l.interrupted;
        let sites = l.sites.keys().chain(l.hold_sites.keys());
        if all || !folds(md, l.contentions + failed, l.blocked, total, sites) {
            v.push((*h, l));
        } else {
            folded.locks += 1;
            folded.blocked += l.blocked;
        }
    }
    (v, folded)
}

fn mode_name(m: LockMode) -> &'static str {
    match m {
        LockMode::Write => "write/exclusive",
        LockMode::Read => "read",
    }
}

/// Owners at contention, most frequent first (ties by hash: a stable order).
fn by_count(owners: &HashMap<Hash, u64>) -> Vec<(&Hash, &u64)> {
    let mut v: Vec<_> = owners.iter().collect();
    v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
    v
}

/// The `top` most frequent owners at contention, as the text report names them.
fn owners_text(a: &Analysis, owners: &HashMap<Hash, u64>, contentions: u64, top: usize) -> String {
    if owners.is_empty() {
        // Every contention was counted (issue 46: the line was empty).
        return "not recorded (each contention was counted, not written with its owner: \
                shorter than contentionthreshold, or past its site's budget)"
            .to_string();
    }
    let named = by_count(owners)
        .iter()
        .take(top)
        .map(|(h, c)| format!("{} x{c}", a.thread_label(**h)))
        .collect::<Vec<_>>()
        .join(", ");
    // The owners add up to the written contentions only: say so when some were counted.
    let written: u64 = owners.values().sum();
    if written < contentions {
        format!(
            "{named} (of the {written} written; the {} counted name no owner)",
            contentions - written
        )
    } else {
        named
    }
}

/// A hold site's total time: `~` when it is an estimate, and "not timed" for a site of which
/// no hold was timed (its estimate is 0 for want of a timed hold there, and "~0 ns" would read
/// as a measurement: issue 46). A timed hold lasts a few nanoseconds at least, so a site whose
/// estimated total is 0 had none timed.
pub(crate) fn site_time(est: &str, ns: u64) -> String {
    if !est.is_empty() && ns == 0 {
        "not timed".to_string()
    } else {
        format!("{est}{}", dur(ns))
    }
}

/// "held N times, total T, p50 .., p99 .., max M" of a lock's (or a mode's) holds. Figures
/// from a sample (holdtiming=sampled) are marked `~`, with the sample's size; holds of which
/// none was timed are "not timed", never a measured-looking "~0 ns".
fn hold_figures(h: &Hist, identified_only: bool) -> String {
    let least = if identified_only { "at least " } else { "" };
    let mut times = crate::util::times(h.count());
    if let (Some(seen), Some((lo, hi))) = (h.sampled(), h.count_interval()) {
        // rows of a sample (guards=on past the exact budget): the count is an estimate
        times = format!("~{times} (95% interval {lo}–{hi}, from a sample of {seen} holds)");
    }
    if h.is_estimate() && h.timed() == 0 {
        return format!("held {least}{times}, not timed (holdtiming=sampled timed none of them)");
    }
    let est = if h.is_estimate() { "~" } else { "" };
    format!(
        "held {least}{times}, total {est}{}, p50 {est}{}, p99 {est}{}, max {}{}",
        dur(h.total()),
        dur(h.percentile(50.0)),
        dur(h.percentile(99.0)),
        dur(h.max()),
        if h.is_estimate() {
            format!(" (estimated from {} timed)", h.timed())
        } else {
            String::new()
        }
    )
}

/// `identified_only`: the monitor's rows count the holds a sampled tracking identified
/// ([`Analysis::identified_only`]), a lower bound of its holds, said so.
fn holds_line(o: &ObjectStats, identified_only: bool) -> String {
    format!(
        "{}{}",
        hold_figures(&o.holds, identified_only),
        if o.open_holds > 0 {
            format!(", {} still held at end", o.open_holds)
        } else {
            String::new()
        }
    )
}

fn sites_json(md: &Metadata, m: &HashMap<Option<Frame>, (u64, u64)>) -> String {
    named_sites_json(md, m, None)
}

/// The row of other monitors (locks) at a site as every output names it
/// ([`unidentified_label`]), for `named_sites_json`: `Some` for that row only.
type RowNames<'a> = Option<(&'a Analysis, bool)>;

/// `,"name":"Object at T.a(T.java)"` in a site of the row of other monitors (locks),
/// `,"name":null` in any other's.
fn row_name(md: &Metadata, names: RowNames<'_>, f: Option<Frame>) -> String {
    match names {
        Some((a, juc)) => format!(
            ",\"name\":{}",
            json_str(&unidentified_label(md, &a.unidentified_name(f, juc), f))
        ),
        None => ",\"name\":null".into(),
    }
}

/// [`sites_json`], each site with the name of the row of other monitors there when `names`.
fn named_sites_json(
    md: &Metadata,
    m: &HashMap<Option<Frame>, (u64, u64)>,
    names: RowNames<'_>,
) -> String {
    let v: Vec<String> = top_sites(m, usize::MAX)
        .into_iter()
        .map(|(f, c, ns)| {
            format!(
                "{{\"site\":{}{},\"count\":{c},\"ns\":{ns}}}",
                json_str(&site(md, f)),
                row_name(md, names, f)
            )
        })
        .collect();
    format!("[{}]", v.join(","))
}

/// A lock's blocked time per whole stack as JSON, most time first, each with the program's
/// line that called the site when the site is a library's or the JDK's (the verdict's
/// "called from"; null otherwise).
fn blocked_stacks_json(md: &Metadata, m: &HashMap<String, (u64, u64)>) -> String {
    let mut v: Vec<(&String, &(u64, u64))> = m.iter().collect();
    v.sort_by(|x, y| y.1 .1.cmp(&x.1 .1).then(x.0.cmp(y.0)));
    let v: Vec<String> = v
        .into_iter()
        .map(|(raw, (c, ns))| {
            let st = orca_format::parse_stack(raw.as_bytes(), 0).ok();
            let frames: Vec<String> = st
                .iter()
                .flat_map(|s| s.frames())
                .map(|f| json_str(&site(md, Some(f))))
                .collect();
            let top = st.and_then(|s| s.top());
            let from = crate::verdict::caller(md, [(raw.as_str(), (*c, *ns))], top)
                .map(|(f, _, _)| json_str(&site(md, Some(f))))
                .unwrap_or_else(|| "null".into());
            format!(
                "{{\"frames\":[{}],\"called_from\":{from},\"count\":{c},\"ns\":{ns}}}",
                frames.join(",")
            )
        })
        .collect();
    format!("[{}]", v.join(","))
}

/// Hold sites as JSON, with how many of each site's holds were timed: its `ns` is scaled from
/// those when fewer than all (an estimate), and is 0 when none was ("not timed").
fn hold_sites_json(
    md: &Metadata,
    m: &Sites,
    timed: &HashMap<Option<Frame>, u64>,
    names: RowNames<'_>,
) -> String {
    let v: Vec<String> = top_sites(m, usize::MAX)
        .into_iter()
        .map(|(f, c, ns)| {
            format!(
                "{{\"site\":{}{},\"count\":{c},\"timed\":{},\"ns\":{ns}}}",
                json_str(&site(md, f)),
                row_name(md, names, f),
                timed.get(&f).copied().unwrap_or(0)
            )
        })
        .collect();
    format!("[{}]", v.join(","))
}

/// The version of the JSON's schema (docs/JSON.md): it changes when a field is removed or
/// renamed or changes its meaning or unit; fields may be added within a version.
pub const SCHEMA_VERSION: u32 = 1;

/// The report as one JSON object (times in nanoseconds), described field by field in
/// docs/JSON.md.
pub fn json(a: &Analysis, md: &Metadata, prefix: &str, all: bool) -> String {
    let mut s = String::new();
    let span = a.last_ts.saturating_sub(a.first_ts.unwrap_or(a.last_ts));
    let _ = write!(
        s,
        "{{\"schema_version\":{SCHEMA_VERSION},\"prefix\":{},\"settings\":{},\"events\":{},\"malformed\":{},\"torn\":{},\"dropped\":{},\"held_at_start\":{},\"span_ns\":{span},\"shared_ids\":[{}],\"threads\":[",
        json_str(prefix),
        a.settings
            .as_deref()
            .and_then(|raw| orca_format::Settings::parse_str(raw).ok())
            .map_or("null".to_string(), |t| {
                let items: Vec<String> = t
                    .iter()
                    .map(|(k, v)| format!("{}:{}", json_str(k), json_str(v)))
                    .collect();
                format!("{{{}}}", items.join(","))
            }),
        a.events,
        a.malformed,
        a.torn,
        a.dropped,
        a.held_at_start,
        {
            let mut v: Vec<_> = a.shared.iter().collect();
            v.sort();
            v.iter()
                .map(|(h, second)| {
                    format!(
                        "{{\"id\":\"{h}\",\"classes\":[{},{}]}}",
                        json_str(a.classes.get(h).map_or("?", |c| c.as_str())),
                        json_str(second)
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        }
    );
    let threads: Vec<String> = a
        .sorted_threads()
        .iter()
        .map(|(h, t)| {
            format!(
                "{{\"id\":\"{h}\",\"name\":{},\"states_ns\":{{{}}},\"start_ns\":{},\"end_ns\":{},\"ended\":{},\"blocked_ns\":{},\"blocked\":{},\"waiting_ns\":{},\"waits\":{},\"sleeping_ns\":{},\"sleeps\":{},\"joining_ns\":{},\"joins\":{},\"acquiring_ns\":{},\"acquires\":{}}}",
                t.name.as_deref().map(json_str).unwrap_or_else(|| "null".into()),
                STATES
                    .iter()
                    .zip(t.states())
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect::<Vec<_>>()
                    .join(","),
                t.started.unwrap_or(t.first),
                t.ended.unwrap_or(a.last_ts),
                t.ended.is_some(),
                t.blocked.1,
                t.blocked.0,
                t.waiting.1,
                t.waiting.0,
                t.sleeping.1,
                t.sleeping.0,
                t.joining.1,
                t.joining.0,
                t.acquiring.1,
                t.acquiring.0
            )
        })
        .collect();
    s.push_str(&threads.join(","));
    s.push_str("],\"monitors\":[");
    let blocked_total = a.blocked_total();
    let mons: Vec<String> = a
        .ranked(|o| o.blocked, |o| o.contentions > 0 || o.holds.count() > 0 || o.open_holds > 0)
        .iter()
        .map(|(h, o)| {
            // Most frequent owner first, as in the text (a stable order).
            let owners: Vec<String> = by_count(&o.owners)
                .into_iter()
                .map(|(t, c)| {
                    let name = a.threads.get(t).and_then(|t| t.name.as_deref()).map(json_str).unwrap_or_else(|| "null".into());
                    format!("{{\"thread\":\"{t}\",\"name\":{name},\"count\":{c}}}")
                })
                .collect();
            let hh = &o.holds;
            let sites = o.sites.keys().chain(o.hold_sites.keys());
            format!(
                "{{\"id\":\"{h}\",\"name\":{},\"summary_row\":{},\"folded\":{},\"blocked_ns\":{},\"contentions\":{},\"blocked_max_ns\":{},\"still_blocked\":{},\"owners\":[{}],\"sites\":{},\"blocked_stacks\":{},\"holds\":{{\"count\":{},\"timed\":{},\"estimated\":{},\"total_ns\":{},\"p50_ns\":{},\"p99_ns\":{},\"max_ns\":{},\"open\":{},\"lower_bound\":{},\"sampled\":{},\"count_interval\":{}}},\"hold_sites\":{}}}",
                json_str(&a.lock_name(*h, false)),
                *h == Hash(0),
                // The row of other monitors is shown at its sites, never folded.
                *h != Hash(0) && folds(md, o.contentions, o.blocked, blocked_total, sites),
                o.blocked,
                o.contentions,
                o.blocked_max,
                o.still_blocked,
                owners.join(","),
                named_sites_json(md, &o.sites, (*h == Hash(0)).then_some((a, false))),
                blocked_stacks_json(md, &o.blocked_stacks),
                hh.count(),
                hh.timed(),
                hh.is_estimate(),
                hh.total(),
                hh.percentile(50.0),
                hh.percentile(99.0),
                hh.max(),
                o.open_holds,
                a.identified_only(*h),
                hh.sampled().map_or("null".into(), |n| n.to_string()),
                hh.count_interval().map_or("null".into(), |(lo, hi)| format!("[{lo},{hi}]")),
                hold_sites_json(
                    md,
                    &o.hold_sites,
                    &o.hold_sites_timed,
                    (*h == Hash(0)).then_some((a, false))
                )
            )
        })
        .collect();
    s.push_str(&mons.join(","));
    s.push_str("],\"semaphores\":[");
    let sems: Vec<String> = a
        .ranked(|o| o.sem_time, |o| o.sem_acquires > 0 || o.sem_releases > 0)
        .iter()
        .map(|(h, o)| {
            format!(
                "{{\"id\":\"{h}\",\"acquiring_ns\":{},\"acquires\":{},\"max_ns\":{},\"releases\":{},\"sites\":{}}}",
                o.sem_time,
                o.sem_acquires,
                o.sem_max,
                o.sem_releases,
                sites_json(md, &o.sem_sites)
            )
        })
        .collect();
    s.push_str(&sems.join(","));
    s.push_str("],\"wait_notify\":[");
    // `notify` and `notify_all` are the calls written one by one: those counted at their
    // sites name no object (`counted_wakeups`), and `counted_at_sites` says how many there are.
    let counted = counted_calls(a, &[WakeCall::Notify, WakeCall::NotifyAll]);
    let waits: Vec<String> = a
        .ranked(|o| o.waited, |o| o.waits + o.notifies + o.notify_alls > 0)
        .iter()
        .map(|(h, o)| {
            format!(
                "{{\"id\":\"{h}\",\"waits\":{},\"waited_ns\":{},\"notify\":{},\"notify_all\":{},\"written_only\":{},\"counted_at_sites\":{counted}}}",
                o.waits, o.waited, o.notifies, o.notify_alls, counted > 0
            )
        })
        .collect();
    s.push_str(&waits.join(","));
    s.push_str("],\"short_waits\":[");
    let mut short: Vec<_> = a.short_waits.iter().collect();
    short.sort_by_key(|((call, f), w)| (std::cmp::Reverse(w.1), *call, f.method.0, f.location));
    let short: Vec<String> = short
        .iter()
        .map(|((call, f), (n, ns, max))| {
            format!(
                "{{\"call\":\"{}\",\"site\":{},\"count\":{n},\"waited_ns\":{ns},\"max_ns\":{max}}}",
                call.name(),
                json_str(&md.frame_to_string(*f))
            )
        })
        .collect();
    s.push_str(&short.join(","));
    s.push_str("],\"counted_wakeups\":[");
    let mut wakes: Vec<_> = a.unwaited_notifies.iter().collect();
    wakes.sort_by_key(|((call, f), n)| (std::cmp::Reverse(**n), *call, f.method.0, f.location));
    let wakes: Vec<String> = wakes
        .iter()
        .map(|((call, f), n)| {
            format!(
                "{{\"call\":\"{}\",\"site\":{},\"count\":{n}}}",
                call.name(),
                json_str(&md.frame_to_string(*f))
            )
        })
        .collect();
    s.push_str(&wakes.join(","));
    s.push_str("],\"juc_locks\":[");
    let (juc, juc_folded) = juc_json(a, md, all);
    s.push_str(&juc);
    let _ = write!(
        s,
        "],\"juc_locks_folded\":{},\"juc_locks_folded_blocked_ns\":{}",
        juc_folded.locks, juc_folded.blocked
    );
    s.push_str(",\"parks\":[");
    let mut parks: Vec<(Hash, (u64, u64))> = a.parks.iter().map(|(h, p)| (*h, *p)).collect();
    parks.sort_by(|x, y| y.1 .1.cmp(&x.1 .1).then(x.0.cmp(&y.0)));
    let parks: Vec<String> = parks
        .iter()
        .map(|(h, (c, ns))| format!("{{\"blocker\":\"{h}\",\"parks\":{c},\"parked_ns\":{ns}}}"))
        .collect();
    s.push_str(&parks.join(","));
    let long_locks: Vec<String> = a
        .long_lock_holds
        .iter()
        .map(|(ns, t, l, mode, end, at, raw)| {
            let frames: Vec<String> = parse_stack(raw.as_bytes(), 0)
                .map(|st| st.frames().map(|f| json_str(&md.frame_to_string(f))).collect())
                .unwrap_or_default();
            format!(
                "{{\"lock\":\"{l}\",\"mode\":\"{mode}\",\"thread\":\"{t}\",\"ns\":{ns},\"end_ns\":{end},\"site\":{},\"stack\":[{}]}}",
                json_str(&site(md, *at)),
                frames.join(",")
            )
        })
        .collect();
    let long: Vec<String> = a
        .long_holds
        .iter()
        .map(|(ns, t, m, end, raw)| {
            let frames: Vec<String> = parse_stack(raw.as_bytes(), 0)
                .map(|st| st.frames().map(|f| json_str(&md.frame_to_string(f))).collect())
                .unwrap_or_default();
            format!(
                "{{\"monitor\":\"{m}\",\"thread\":\"{t}\",\"ns\":{ns},\"end_ns\":{end},\"stack\":[{}]}}",
                frames.join(",")
            )
        })
        .collect();
    let source = |summaries: bool| if summaries { "summaries" } else { "events" };
    let _ = writeln!(
        s,
        "],\"holds_source\":\"{}\",\"long_holds\":[{}],\"lock_holds_source\":\"{}\",\"long_lock_holds\":[{}]}}",
        source(a.holds_from_summaries),
        long.join(","),
        source(a.lock_holds_from_summaries),
        long_locks.join(",")
    );
    s
}

/// The j.u.c. locks as JSON objects (without the brackets), ranked as in the text.
/// `acquisitions` is `null` in a log summarised for j.u.c. locks (not known).
fn juc_json(a: &Analysis, md: &Metadata, all: bool) -> (String, Folded) {
    // Every lock: folding belongs to the text and the page (issue 46: the JSON left out every
    // folded lock); each says whether the text folds it by default.
    let mut locks: Vec<(Hash, &LockStats)> = a.locks.iter().map(|(h, l)| (*h, l)).collect();
    let folded = shown_locks(a, md, all).1;
    let by_default: std::collections::HashSet<Hash> = shown_locks(a, md, false)
        .0
        .iter()
        .map(|(h, _)| *h)
        .collect();
    let held = |l: &LockStats| l.write_holds.total() + l.read_holds.total();
    locks.sort_by(|x, y| {
        (y.1.blocked, held(y.1))
            .cmp(&(x.1.blocked, held(x.1)))
            .then(x.0.cmp(&y.0))
    });
    // `signals` and `signal_alls` are the calls written one by one: those counted at their
    // sites name no condition (`counted_wakeups`).
    let signals_counted = counted_calls(a, &[WakeCall::Signal, WakeCall::SignalAll]);
    let hist = |h: &Hist| {
        format!(
            "{{\"count\":{},\"timed\":{},\"estimated\":{},\"total_ns\":{},\"p50_ns\":{},\"p99_ns\":{},\"max_ns\":{}}}",
            h.count(),
            h.timed(),
            h.is_estimate(),
            h.total(),
            h.percentile(50.0),
            h.percentile(99.0),
            h.max()
        )
    };
    let v: Vec<String> = locks
        .iter()
        .map(|(h, l)| {
            let owners: Vec<String> = by_count(&l.owners)
                .into_iter()
                .map(|(t, c)| {
                    let name = a.threads.get(t).and_then(|t| t.name.as_deref()).map(json_str).unwrap_or_else(|| "null".into());
                    format!("{{\"thread\":\"{t}\",\"name\":{name},\"count\":{c}}}")
                })
                .collect();
            format!(
                "{{\"id\":\"{h}\",\"name\":{},\"summary_row\":{},\"folded\":{},\"blocked_ns\":{},\"contentions\":{},\"blocked_max_ns\":{},\"still_blocked\":{},\"acquisitions\":{},\"failed\":{},\"timed_out\":{},\"interrupted\":{},\"owners\":[{}],\"sites\":{},\"blocked_stacks\":{},\"write_holds\":{},\"read_holds\":{},\"open_holds\":{},\"holds_lower_bound\":{},\"hold_sites\":{},\"awaits\":{},\"awaited_ns\":{},\"signals\":{},\"signal_alls\":{},\"signals_written_only\":{},\"signals_counted_at_sites\":{signals_counted}}}",
                json_str(&a.lock_name(*h, true)),
                *h == Hash(0),
                *h != Hash(0) && !by_default.contains(h),
                l.blocked,
                l.contentions,
                l.blocked_max,
                l.still_blocked,
                if a.juc_summarised() {
                    "null".to_string()
                } else {
                    l.acquisitions.to_string()
                },
                l.failed,
                l.timed_out,
                l.interrupted,
                owners.join(","),
                named_sites_json(md, &l.sites, (*h == Hash(0)).then_some((a, true))),
                blocked_stacks_json(md, &l.blocked_stacks),
                hist(&l.write_holds),
                hist(&l.read_holds),
                l.open_holds,
                a.identified_only(*h),
                hold_sites_json(
                    md,
                    &l.hold_sites,
                    &l.hold_sites_timed,
                    (*h == Hash(0)).then_some((a, true))
                ),
                l.awaits,
                l.awaited,
                l.signals,
                l.signal_alls,
                signals_counted > 0
            )
        })
        .collect();
    (v.join(","), folded)
}

#[cfg(test)]
mod tests {
    /// Holds counted but none timed read "not timed", never "~0 ns" (issue 46); a sample
    /// reads "~" with its size; exact holds read as measured.
    #[test]
    fn holds_without_a_timed_one_are_not_timed() {
        let mut h = super::Hist::default();
        h.add_untimed(13_206_743);
        let t = super::hold_figures(&h, false);
        assert_eq!(
            t,
            "held 13206743 times, not timed (holdtiming=sampled timed none of them)"
        );
        h.add(2_000);
        let t = super::hold_figures(&h, false);
        assert!(
            t.contains("total ~") && t.ends_with("(estimated from 1 timed)"),
            "{t}"
        );
        let mut exact = super::Hist::default();
        exact.add(2_000);
        assert!(!super::hold_figures(&exact, true).contains('~'));
        assert!(super::hold_figures(&exact, true).starts_with("held at least "));
    }

    use super::*;

    fn analyse(orca: &str, from_events: bool) -> Analysis {
        Analysis::run_with(EventReader::new(orca.as_bytes()), from_events).unwrap()
    }

    /// Class `T` (T.java) with methods 1 (`a`) and 2 (`b`), as the tests' logs name them.
    fn two_methods() -> Metadata {
        Metadata::from_readers(
            "1.000000000,15DB9742,LT;,T.java\n".as_bytes(),
            "1.000000000,00000001,a,()V,15DB9742,0\n1.000000000,00000002,b,()V,15DB9742,0\n"
                .as_bytes(),
        )
        .unwrap()
    }

    /// A monitor known only from a `MonitorHolds` line (an OSGi bundle's own monitor, 100
    /// holds at `Act.java:7`) is in `--all` and in the JSON however many monitors rank before
    /// it (issue 46: both cut it at `--top`, 10 by default, and Felix has dozens); the default
    /// text says how many it leaves out.
    #[test]
    fn a_monitor_known_only_from_a_monitor_holds_line_is_in_all_and_in_the_json() {
        let b = orca_format::hist::bucket;
        let log = format!(
            "\
1.000000000,ObjectClass,00001111,Lorg/apache/felix/framework/Felix;
1.000000000,ObjectClass,00002222,Ljava/lang/Object;
1.000000000,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000001;00000010
1.003000000,MonitorContendedEntered,0000BBBB,00001111,1;00000001;00000010
2.000000000,MonitorHolds,0000AAAA,00001111,2,5000000,2500000,1;{}:2,1;00000001;00000010
2.000000000,MonitorHolds,0000AAAA,00002222,100,40000,400,1;{}:100,1;00000002;0000000E
",
            b(2_500_000),
            b(400)
        );
        let a = analyse(&log, false);
        let md = Metadata::default();
        let all = text(&a, &md, "t", 1, true);
        assert!(
            all.contains("  Object@00002222: held 100 times, total 40.000 µs"),
            "{all}"
        );
        let default = text(&a, &md, "t", 1, false);
        assert!(!default.contains("Object@00002222"), "{default}");
        assert!(
            default.contains("  ... 1 more monitors (--all shows them)\n"),
            "{default}"
        );
        let j = json(&a, &md, "t", false);
        assert!(
            j.contains("{\"id\":\"00002222\",\"name\":\"Object@00002222\",\"summary_row\":false,\"folded\":true,\"blocked_ns\":0,\"contentions\":0,"),
            "{j}"
        );
        assert!(j.contains("\"holds\":{\"count\":100,\"timed\":100,"), "{j}");
    }

    /// A program with one monitor and one `ReentrantLock`, recorded with tracking=sampled:
    /// the holds the tracker left unidentified (rows 00000000) are shown at their sites, named
    /// by the class identified there, "not timed" when none was; never as a monitor or lock
    /// of their own ("other locks (summarised together): held 13206743 times, total ~0 ns"),
    /// nor counted as a folded lock (issue 46). The JSON has them, marked `summary_row`.
    #[test]
    fn unidentified_holds_are_shown_at_their_sites_never_as_a_lock_of_their_own() {
        let b = orca_format::hist::bucket;
        let log = format!(
            "\
0.500000000,RecordingStarted,mode=instrument;trace=summary;holdtiming=sampled;tracking=sampled;stackdepth=8
1.000000000,ObjectClass,00001111,Ljava/lang/Object;
1.000000000,ObjectClass,00002222,Ljava/util/concurrent/locks/ReentrantLock$NonfairSync;
2.000000000,MonitorContentions,0000AAAA,00001111,1,5000,5000,1;{b5},1;00000001;00000010
2.000000000,MonitorHolds,0000AAAA,00001111,2,800,400,1;{b4}:2,1;00000001;00000010
2.000000000,MonitorHoldsUntimed,0000AAAA,00000000,1670329,1;00000001;00000010
2.000000000,LockContentions,0000AAAA,00002222,W,1,5000,5000,1;{b5},1;00000002;00000010
2.000000000,LockHolds,0000AAAA,00002222,W,2,800,400,1;{b4}:2,1;00000002;00000010
2.000000000,LockHoldsUntimed,0000AAAA,00000000,W,13206743,1;00000002;00000010
",
            b5 = b(5000),
            b4 = b(400)
        );
        let a = analyse(&log, false);
        let md = two_methods();
        let f = crate::deadlocks::analyze(EventReader::new(log.as_bytes())).unwrap();
        for all in [false, true] {
            let v = crate::verdict::text(&crate::verdict::verdict(&a, &f, &md, "t", all));
            let out = format!("{v}{}", text(&a, &md, "t", 10, all));
            for want in [
                "      Object at T.a(T.java): held 1670329 times, not timed (identified there: Object@00001111)\n",
                "      ReentrantLock$NonfairSync at T.b(T.java): held 13206743 times, not timed (identified there: ReentrantLock$NonfairSync@00002222)\n",
            ] {
                assert!(out.contains(want), "{want}\n{out}");
            }
            for phantom in ["summarised together", "~0 ns", "folded", "#2"] {
                assert!(!out.contains(phantom), "{phantom}\n{out}");
            }
        }
        let j = json(&a, &md, "t", false);
        for want in [
            "{\"id\":\"00000000\",\"name\":\"other monitors\",\"summary_row\":true,\"folded\":false,",
            "{\"id\":\"00000000\",\"name\":\"other locks\",\"summary_row\":true,\"folded\":false,",
            "\"hold_sites\":[{\"site\":\"T.a(T.java)\",\"name\":\"Object at T.a(T.java)\",\"count\":1670329,\"timed\":0,\"ns\":0}]",
            "\"hold_sites\":[{\"site\":\"T.b(T.java)\",\"name\":\"ReentrantLock$NonfairSync at T.b(T.java)\",\"count\":13206743,\"timed\":0,\"ns\":0}]",
            "{\"id\":\"00002222\",\"name\":\"ReentrantLock$NonfairSync@00002222\",\"summary_row\":false,\"folded\":false,",
            "\"juc_locks_folded\":0,",
        ] {
            assert!(j.contains(want), "{want}\n{j}");
        }
    }

    /// One key on three intervals' lines, another site of the same monitor, and another
    /// thread: counts, totals and buckets add up, maxima are the largest, sites apart.
    #[test]
    fn monitor_holds_lines_are_summed_across_intervals() {
        let a = analyse(
            "\
1.000000000,MonitorHolds,0000AAAA,00001111,2,3000,2000,2;317;1;381;1,1;00000001;00000010
2.000000000,MonitorHolds,0000AAAA,00001111,1,5000,5000,1;462;1,1;00000001;00000010
2.000000000,MonitorHolds,0000AAAA,00001111,1,70,70,1;70;1,1;00000002;00000004
2.500000000,MonitorHolds,0000BBBB,00001111,1,1000,1000,1;317;1,1;00000001;00000010
3.000000000,MonitorHolds,0000AAAA,00001111,1,1000,1000,1;317;1,1;00000001;00000010
",
            false,
        );
        assert!(a.has_holds && a.holds_from_summaries);
        let o = &a.objects[&Hash(0x1111)];
        let mut one_by_one = Hist::default();
        for v in [1000, 2000, 5000, 70, 1000, 1000] {
            one_by_one.add(v);
        }
        assert_eq!(o.holds, one_by_one);
        assert_eq!(
            (o.holds.count(), o.holds.total(), o.holds.max()),
            (6, 10070, 5000)
        );
        let site = |m, l| {
            Some(Frame {
                method: orca_format::MethodId(m),
                location: l,
            })
        };
        assert_eq!(o.hold_sites[&site(1, 0x10)], (5, 10000));
        assert_eq!(o.hold_sites[&site(2, 4)], (1, 70));
        assert_eq!(o.hold_sites.len(), 2);
    }

    /// Sampled hold timing: untimed holds are counted exactly, per monitor and per site, and
    /// their time is scaled from the timed ones (per site from that site's); the text marks
    /// the estimate and its sample size, the JSON says so.
    #[test]
    fn untimed_holds_are_counted_and_their_time_estimated() {
        let log = "\
1.000000000,MonitorHolds,0000AAAA,00001111,2,3000,2000,2;317;1;381;1,1;00000001;00000010
1.000000000,MonitorHoldsUntimed,0000AAAA,00001111,4,1;00000001;00000010
2.000000000,MonitorHoldsUntimed,0000AAAA,00001111,2,1;00000001;00000010
2.000000000,MonitorHoldsUntimed,0000AAAA,00001111,3,1;00000002;00000004
";
        let a = analyse(log, false);
        let o = &a.objects[&Hash(0x1111)];
        assert!(o.holds.is_estimate());
        // 11 holds, 2 timed: 3000 ns scaled by 11 / 2.
        assert_eq!(
            (
                o.holds.count(),
                o.holds.timed(),
                o.holds.total(),
                o.holds.max()
            ),
            (11, 2, 16500, 2000)
        );
        let site = |m, l| {
            Some(Frame {
                method: orca_format::MethodId(m),
                location: l,
            })
        };
        // 8 holds at the first site, 2 of them timed; none timed at the second.
        assert_eq!(o.hold_sites[&site(1, 0x10)], (8, 12000));
        assert_eq!(o.hold_sites[&site(2, 4)], (3, 0));
        let text = holds_line(o, false);
        assert!(
            text.contains("total ~16.500 µs") && text.contains("(estimated from 2 timed)"),
            "{text}"
        );
        // Every hold timed: no estimate.
        let exact = analyse(&format!("{}\n", log.lines().next().unwrap()), false);
        assert!(!holds_line(&exact.objects[&Hash(0x1111)], false).contains('~'));
    }

    /// tracking=sampled: a monitor held at a site whose row of other monitors counts holds
    /// (maybe its own, left unidentified) has its count said to be a lower bound; one whose
    /// sites have no such row, the row of other monitors itself, and any monitor of a log
    /// recorded with tracking=full, do not.
    #[test]
    fn a_sampled_trackings_monitor_counts_are_lower_bounds_where_its_sites_left_holds_unidentified()
    {
        let rows = "\
1.000000000,MonitorHoldsUntimed,0000AAAA,00001111,4,1;00000001;00000010
1.000000000,MonitorHoldsUntimed,0000AAAA,00000000,40,1;00000001;00000010
1.000000000,MonitorHoldsUntimed,0000AAAA,00002222,5,1;00000002;00000004
";
        let started = |tracking: &str| {
            format!("0.500000000,RecordingStarted,mode=instrument;trace=summary;holdtiming=sampled;tracking={tracking};stackdepth=8\n{rows}")
        };
        let a = analyse(&started("sampled"), false);
        assert!(a.identified_only(Hash(0x1111)));
        assert!(!a.identified_only(Hash(0x2222)) && !a.identified_only(Hash(0)));
        assert!(holds_line(&a.objects[&Hash(0x1111)], true).starts_with("held at least 4 times"));
        let md = Metadata::default();
        let out = text(&a, &md, "p", 10, true);
        assert!(out.contains(": held at least 4 times"), "{out}");
        assert!(out.contains(": held 5 times"), "{out}");
        let j = json(&a, &md, "p", true);
        assert!(
            j.contains("\"open\":0,\"lower_bound\":true") && j.contains("\"lower_bound\":false"),
            "{j}"
        );
        for log in [started("full"), rows.to_string()] {
            let a = analyse(&log, false);
            assert!(!a.identified_only(Hash(0x1111)));
            assert!(!text(&a, &md, "p", 10, true).contains("held at least"));
        }
    }

    /// The same for j.u.c. holds (`LockHoldsUntimed`): counted exactly per mode and site,
    /// time scaled from the mode's timed sample, marked in the text and the JSON.
    #[test]
    fn untimed_lock_holds_are_counted_and_their_time_estimated() {
        let log = "\
1.000000000,LockHolds,0000AAAA,00002222,W,2,3000,2000,2;317;1;381;1,1;00000001;00000010
1.000000000,LockHoldsUntimed,0000AAAA,00002222,W,4,1;00000001;00000010
2.000000000,LockHoldsUntimed,0000AAAA,00002222,W,2,1;00000001;00000010
2.000000000,LockHoldsUntimed,0000AAAA,00002222,R,3,1;00000002;00000004
";
        let a = analyse(log, false);
        let l = &a.locks[&Hash(0x2222)];
        let w = &l.write_holds;
        assert_eq!(
            (w.count(), w.timed(), w.total(), w.max()),
            (8, 2, 12000, 2000)
        );
        assert!(w.is_estimate());
        let r = &l.read_holds;
        assert_eq!((r.count(), r.timed(), r.total()), (3, 0, 0));
        let site = |m, loc| {
            Some(Frame {
                method: orca_format::MethodId(m),
                location: loc,
            })
        };
        assert_eq!(l.hold_sites[&site(1, 0x10)], (8, 12000));
        assert_eq!(l.hold_sites[&site(2, 4)], (3, 0));
        let md = two_methods();
        let out = text(&a, &md, "t", 10, true);
        assert!(
            out.contains("write/exclusive held 8 times, total ~12.000 µs")
                && out.contains("(estimated from 2 timed)"),
            "{out}"
        );
        // The read holds' site had none timed: not "~0 ns".
        assert!(
            out.contains(" x3 not timed") && !out.contains("~0 ns"),
            "{out}"
        );
        let j = json(&a, &md, "t", true);
        assert!(
            j.contains(
                "\"write_holds\":{\"count\":8,\"timed\":2,\"estimated\":true,\"total_ns\":12000,"
            ),
            "{j}"
        );
    }

    /// A second `ObjectClass` line for one ID (the agent saw another object with that
    /// identity hash): the report says the ID names two objects, with both classes; locks
    /// keep the first one's name.
    #[test]
    fn an_id_naming_two_objects_is_said() {
        let a = analyse(
            "\
1.000000000,ObjectClass,00001111,Ljava/util/HashMap;
1.100000000,MonitorContendedEnter,0000AAAA,00001111,0000BBBB,1;00000001;00000010
1.200000000,ObjectClass,00001111,Ljava/lang/Object;
1.300000000,MonitorContendedEntered,0000AAAA,00001111,1;00000001;00000010
",
            true,
        );
        let md = Metadata::default();
        let out = text(&a, &md, "t", 10, true);
        assert!(
            out.contains("  ID 00001111 names two objects (HashMap, Object: one identity hash); its lines may be of either\n"),
            "{out}"
        );
        assert_eq!(a.lock_name(Hash(0x1111), false), "HashMap@00001111");
        let j = json(&a, &md, "t", true);
        assert!(
            j.contains(r#""shared_ids":[{"id":"00001111","classes":["java.util.HashMap","java.lang.Object"]}]"#),
            "{j}"
        );
        let one = analyse(
            "1.000000000,ObjectClass,00001111,Ljava/util/HashMap;\n",
            true,
        );
        assert!(!text(&one, &md, "t", 10, true).contains("names two objects"));
        assert!(json(&one, &md, "t", true).contains(r#""shared_ids":[]"#));
    }

    /// An instrumentation-mode log says where each monitor's contention owners came from: the
    /// tracker for a monitor instrumented code takes (it has holds), the JVM for one it does
    /// not; a log without holds (JVMTI mode) says nothing of it.
    /// A JDK-internal lock is folded only while it has at most 5% of the blocked time, and the
    /// fold note gives the time it hides; the JSON has every lock, folded or not (issue 46: a
    /// pool's queue lock with 18% of the blocked time was folded with "(499 ... locks
    /// folded)", and the JSON left out every folded lock).
    #[test]
    fn a_jdk_lock_with_much_blocked_time_is_shown_and_the_fold_says_what_it_hides() {
        // method 1: the program's; 2: LinkedBlockingQueue's (the JDK's)
        let md = Metadata::from_readers(
            "1.000000000,15DB9742,LT;,T.java\n\
             1.000000000,25DB9742,Ljava/util/concurrent/LinkedBlockingQueue;,LinkedBlockingQueue.java\n"
                .as_bytes(),
            "1.000000000,00000001,a,()V,15DB9742,0\n\
             1.000000000,00000002,take,()V,25DB9742,0\n"
                .as_bytes(),
        )
        .unwrap();
        // the program's monitor: 10 ms; the queue's lock: 5 ms (33%); another JDK lock: 100 µs
        let b = orca_format::hist::bucket;
        let log = format!(
            "\
1.000000000,MonitorContentions,0000BBBB,00001111,1,10000000,10000000,1;{};1,1;00000001;00000010
1.000000000,LockContentions,0000BBBB,00002222,W,1,5000000,5000000,1;{};1,1;00000002;00000010
1.000000000,LockContentions,0000BBBB,00003333,W,1,100000,100000,1;{};1,1;00000002;00000010
",
            b(10_000_000),
            b(5_000_000),
            b(100_000)
        );
        let a = analyse(&log, false);
        let out = text(&a, &md, "t", 10, false);
        assert!(out.contains("00002222"), "{out}");
        assert!(!out.contains("00003333"), "{out}");
        assert!(
            out.contains(
                "(1 uncontended or JDK-internal locks folded, 100.000 µs blocked on them; --all shows them)"
            ),
            "{out}"
        );
        let json = json(&a, &md, "t", false);
        assert!(json.contains("\"id\":\"00003333\",\"name\":"), "{json}");
        assert!(
            json.contains("\"juc_locks_folded\":1,\"juc_locks_folded_blocked_ns\":100000"),
            "{json}"
        );
    }

    #[test]
    fn owners_source_is_named_in_instrumentation_mode() {
        let contended = "\
1.000000000,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000001;00000010
1.000001000,MonitorContendedEntered,0000BBBB,00001111,1;00000001;00000010
1.000002000,MonitorContendedEnter,0000BBBB,00002222,00000000,1;00000001;00000010
1.000003000,MonitorContendedEntered,0000BBBB,00002222,1;00000001;00000010
";
        let md = Metadata::from_readers(
            "1.000000000,15DB9742,LT;,T.java\n".as_bytes(),
            "1.000000000,00000001,a,()V,15DB9742,0\n".as_bytes(),
        )
        .unwrap();
        let holds =
            "2.000000000,MonitorHolds,0000AAAA,00001111,1,1000,1000,1;317;1,1;00000001;00000010\n";
        let out = text(
            &analyse(&(contended.to_string() + holds), false),
            &md,
            "t",
            10,
            true,
        );
        let entry = |m: &str| {
            let i = out
                .find(&format!(" monitor {m}: "))
                .unwrap_or_else(|| panic!("{out}"));
            let e = &out[i..];
            e[..e[1..].find("  #").map_or(e.len(), |j| j + 1)].to_string()
        };
        assert!(
            entry("00001111").contains(
                "      owners from: the tracker (instrumented code takes this monitor)\n"
            ),
            "{out}"
        );
        assert!(
            entry("00002222")
                .contains("      owners from: the JVM (no instrumented code took this monitor)\n"),
            "{out}"
        );
        let out = text(&analyse(contended, false), &md, "t", 10, true);
        assert!(!out.contains("owners from:"), "{out}");
    }

    /// A monitor's notify and a lock's signal figures are the calls written one by one; the
    /// ones counted at their sites (`Notifies`, which name no object) are in no object's, and
    /// the text and the JSON say so beside the figures, with how many were counted (the demo
    /// read "125 waits, 0 notify, 0 notifyAll" beside "notifyAll at PingPong.play(...) x200
    /// counted", ProdCons "0 signal, 0 signalAll" beside "signal at ... x553090").
    #[test]
    fn notify_and_signal_figures_say_they_leave_the_counted_calls_out() {
        let log = "\
1.000000000,ObjectWait,0000AAAA,00001111,1;00000001;00000010
1.020000000,ObjectWaited,0000AAAA,00001111,1;00000001;00000010
1.000000000,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000010
1.000000100,LockAcquired,0000BBBB,00002222,W,1;00000002;00000010
1.000001000,ConditionAwait,0000BBBB,00003333,00002222,1;00000002;00000030
1.030000000,ConditionAwaited,0000BBBB,00003333,00002222,1;00000002;00000030
2.000000000,Waits,0000AAAA,wait,00001111,124,3000000,40000,1;00000001;00000010
2.000000000,Notifies,0000CCCC,notifyAll,200,1;00000001;00000020
2.000000000,Notifies,0000CCCC,signal,553,1;00000002;00000020
";
        let a = analyse(log, false);
        let md = two_methods();
        let out = text(&a, &md, "t", 10, true);
        assert!(
            out.contains("  notifyAll at T.a(T.java) x200 counted"),
            "{out}"
        );
        assert!(
            out.contains(": 125 waits (23.000 ms), 0 notify, 0 notifyAll written one by one (the 200 counted at their sites above name no object)\n"),
            "{out}"
        );
        assert!(
            out.contains("      conditions: 1 awaits (29.999 ms), 0 signal, 0 signalAll written one by one (the 553 counted at their sites name no condition)\n"),
            "{out}"
        );
        let j = json(&a, &md, "t", true);
        assert!(
            j.contains("\"waits\":125,\"waited_ns\":23000000,\"notify\":0,\"notify_all\":0,\"written_only\":true,\"counted_at_sites\":200}"),
            "{j}"
        );
        assert!(
            j.contains("\"signals\":0,\"signal_alls\":0,\"signals_written_only\":true,\"signals_counted_at_sites\":553}"),
            "{j}"
        );
        // With every call written, the figures stand alone.
        let written = "\
1.000000000,ObjectWait,0000AAAA,00001111,1;00000001;00000010
1.000000500,ObjectNotify,0000CCCC,00001111,1;00000001;00000020
1.020000000,ObjectWaited,0000AAAA,00001111,1;00000001;00000010
";
        let a = analyse(written, false);
        let out = text(&a, &md, "t", 10, true);
        assert!(
            out.contains(": 1 waits (20.000 ms), 1 notify, 0 notifyAll\n"),
            "{out}"
        );
        let j = json(&a, &md, "t", true);
        assert!(
            j.contains(
                "\"notify\":1,\"notify_all\":0,\"written_only\":false,\"counted_at_sites\":0}"
            ),
            "{j}"
        );
    }

    /// j.u.c. locks: a contention names its owner and site, holds are outermost per lock and
    /// mode with the await time taken out, and the threads' blocked, awaiting and parked time.
    #[test]
    fn juc_locks_contention_holds_awaits_and_parks() {
        let a = analyse(
            "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
1.000000100,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
1.000000200,LockAcquire,0000AAAA,00002222,W,0000AAAA,1;00000001;00000020
1.000000300,LockAcquired,0000AAAA,00002222,W,1;00000001;00000020
1.000000400,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000010
1.000001000,ConditionAwait,0000AAAA,00003333,00002222,1;00000001;00000030
1.000001500,LockAcquired,0000BBBB,00002222,W,1;00000002;00000010
1.000001600,ConditionSignal,0000BBBB,00003333,00002222,1;00000002;00000014
1.000002000,LockRelease,0000BBBB,00002222,W,1;00000002;00000018
1.000003000,ConditionAwaited,0000AAAA,00003333,00002222,1;00000001;00000030
1.000003500,LockRelease,0000AAAA,00002222,W,1;00000001;00000040
1.000004000,LockRelease,0000AAAA,00002222,W,1;00000001;00000050
1.000005000,ThreadPark,0000BBBB,00004444,1;00000002;00000020
1.000007000,ThreadParked,0000BBBB,00004444,1;00000002;00000020
1.000008000,LockAcquire,0000BBBB,00002222,R,00000000,1;00000002;00000030
1.000008100,LockFailed,0000BBBB,00002222,R,1;00000002;00000030
",
            false,
        );
        let l = &a.locks[&Hash(0x2222)];
        assert_eq!((l.acquisitions, l.contentions, l.failed), (4, 1, 1));
        // BBBB waited from 1.0000004 to 1.0000015 while AAAA owned it.
        assert_eq!((l.blocked, l.blocked_max), (1100, 1100));
        assert_eq!(l.owners[&Hash(0xAAAA)], 1);
        // AAAA's one outermost hold: 1.0000001 to 1.000004, minus the await 1.000001 to 1.000003;
        // BBBB's: 1.0000015 to 1.000002.
        assert_eq!(l.write_holds.count(), 2);
        assert_eq!(l.write_holds.total(), (3900 - 2000) + 500);
        assert_eq!((l.awaits, l.awaited, l.signals), (1, 2000, 1));
        assert_eq!(a.parks[&Hash(0x4444)], (1, 2000));
        let b = &a.threads[&Hash(0xBBBB)];
        assert_eq!((b.juc_blocked, b.parked), ((1, 1100), (1, 2000)));
        assert_eq!(a.threads[&Hash(0xAAAA)].awaiting, (1, 2000));
        let md = two_methods();
        let out = text(&a, &md, "t", 10, true);
        assert!(
            out.contains("  #1 lock 00002222: 1.100 µs blocked in 1 contentions (max 1.100 µs) of 4 acquisitions, 1 failed, 0 timed out, 0 interrupted\n"),
            "{out}"
        );
        assert!(
            out.contains("      owners at contention: [0000AAAA] x1\n"),
            "{out}"
        );
        assert!(
            out.contains("      write/exclusive held 2 times, total 2.400 µs"),
            "{out}"
        );
        assert!(
            out.contains("  blocker 00004444: 1 parks, 2.000 µs\n"),
            "{out}"
        );
    }

    /// A trace=all log: the summary lines win over the events unless `from_events`.
    #[test]
    fn summaries_or_events_never_both() {
        let log = "\
1.000000000,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
1.000001000,MonitorExit,0000AAAA,00001111,1;00000001;00000010
1.000002000,MonitorHolds,0000AAAA,00001111,1,1000,1000,1;317;1,1;00000001;00000010
";
        let s = analyse(log, false);
        let o = &s.objects[&Hash(0x1111)];
        assert_eq!((o.holds.count(), o.holds.total()), (1, 1000));
        let e = analyse(log, true);
        assert!(!e.holds_from_summaries);
        assert_eq!(e.objects[&Hash(0x1111)].holds, o.holds);
        // Only events: as before.
        let e = analyse(
            &log.lines()
                .take(2)
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            false,
        );
        assert!(!e.holds_from_summaries);
        assert_eq!(e.objects[&Hash(0x1111)].holds, o.holds);
    }

    /// Counted contentions (`MonitorContentions`, `LockContentions`) add to the monitors' and
    /// locks' contentions, blocked time, maximum and sites, and to the threads' blocked time,
    /// with the written ones; a counted j.u.c. contention is an acquisition too.
    #[test]
    fn counted_contentions_add_to_the_written_ones() {
        let log = "\
1.000000000,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000002;00000010
1.003000000,MonitorContendedEntered,0000BBBB,00001111,1;00000002;00000010
2.000000000,MonitorContentions,0000BBBB,00001111,3,37000,30000,3;381;1;462;1;629;1,1;00000002;00000010
2.000000000,MonitorContentions,0000CCCC,00001111,1,900,900,1;304;1,1;00000002;00000014
2.000000000,LockContentions,0000BBBB,00002222,W,4,15700,12000,4;279;1;317;1;381;1;541;1,1;00000001;00000010
";
        let a = analyse(log, false);
        let o = &a.objects[&Hash(0x1111)];
        assert_eq!(
            (o.contentions, o.blocked, o.blocked_max),
            (5, 3_000_000 + 37_000 + 900, 3_000_000)
        );
        assert_eq!(
            o.owners.values().sum::<u64>(),
            1,
            "owners of the written one only"
        );
        let site = |m, loc| {
            Some(Frame {
                method: orca_format::MethodId(m),
                location: loc,
            })
        };
        assert_eq!(o.sites[&site(2, 0x10)], (4, 3_037_000));
        assert_eq!(o.sites[&site(2, 0x14)], (1, 900));
        let l = &a.locks[&Hash(0x2222)];
        assert_eq!(
            (l.acquisitions, l.contentions, l.blocked, l.blocked_max),
            (4, 4, 15700, 12000)
        );
        assert_eq!(l.sites[&site(1, 0x10)], (4, 15700));
        let t = &a.threads[&Hash(0xBBBB)];
        assert_eq!(t.states()[0], 3_037_000 + 15700);
        // A lock whose contentions were all counted has no owner recorded, and says so (issue
        // 46: its owners line was empty); one with some counted says its owners are of the
        // written ones (the demo read "owners at contention: referee x1, pong x1" for 5).
        let md = two_methods();
        let out = text(&a, &md, "t", 10, true);
        let owners: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("owners at contention:"))
            .collect();
        assert_eq!(owners.len(), 2, "{out}");
        // The owners are the written contentions' only, and the line says so.
        assert!(
            owners[0].ends_with("[0000AAAA] x1 (of the 1 written; the 4 counted name no owner)"),
            "{out}"
        );
        assert!(
            owners[1].contains("not recorded (each contention was counted"),
            "{out}"
        );
    }

    /// j.u.c. hold summaries: LockHolds lines summed per lock and mode across intervals and
    /// threads, the LockHold listed and not added again; in the default mode's log the
    /// contended acquisition's hold (never released in the log) is not an open hold, and the
    /// number of acquisitions is not known.
    #[test]
    fn lock_holds_lines_are_summed_and_long_holds_listed() {
        let log = "\
1.000000000,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000010
1.000000400,LockAcquired,0000BBBB,00002222,W,1;00000002;00000010
1.000001000,LockHold,0000AAAA,00002222,W,20000,1;00000001;00000010,2;00000001;00000014;00000002;00000001
1.000002000,LockHolds,0000AAAA,00002222,W,2,21000,20000,2;317;1;590;1,1;00000001;00000010
1.000002000,LockHolds,0000AAAA,00002222,R,1,70,70,1;70;1,1;00000001;00000020
2.000000000,LockHolds,0000AAAA,00002222,W,1,2000,2000,1;381;1,1;00000001;00000010
2.000000000,LockHolds,0000BBBB,00002222,W,1,5000,5000,1;462;1,1;00000002;00000010
";
        let a = analyse(log, false);
        assert!(a.lock_holds_from_summaries && a.juc_summarised());
        let l = &a.locks[&Hash(0x2222)];
        let mut w = Hist::default();
        for v in [1000, 20000, 2000, 5000] {
            w.add(v);
        }
        assert_eq!(l.write_holds, w);
        assert_eq!((l.read_holds.count(), l.read_holds.total()), (1, 70));
        assert_eq!(l.open_holds, 0);
        assert_eq!((l.contentions, l.blocked), (1, 400));
        let site = |m, loc| {
            Some(Frame {
                method: orca_format::MethodId(m),
                location: loc,
            })
        };
        assert_eq!(l.hold_sites[&site(1, 0x10)], (3, 23000));
        assert_eq!(l.hold_sites[&site(1, 0x20)], (1, 70));
        assert_eq!(l.hold_sites[&site(2, 0x10)], (1, 5000));
        assert_eq!(a.long_lock_holds.len(), 1);
        assert_eq!(a.long_lock_holds[0].0, 20000);
        let md = two_methods();
        let out = text(&a, &md, "t", 10, true);
        for want in [
            "  (hold times from LockHolds summary lines; only contended or unsuccessful acquisitions are events, so their number is not known)\n",
            "  #1 lock 00002222: 400 ns blocked in 1 contentions (max 400 ns)\n",
            "      write/exclusive held 4 times, total 28.000 µs",
            "      read held 1 time, total 70 ns",
            "Longest j.u.c. lock holds (LockHold events)\n  lock 00002222 (write/exclusive) held 20.000 µs by [0000AAAA], acquired at T.a(T.java), released at T.a(T.java)\n",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        assert!(!out.contains("still open"), "{out}");
        let j = json(&a, &md, "t", true);
        for want in [
            "\"acquisitions\":null",
            "\"write_holds\":{\"count\":4,\"timed\":4,\"estimated\":false,\"total_ns\":28000,",
            "\"lock_holds_source\":\"summaries\"",
            "\"long_lock_holds\":[{\"lock\":\"00002222\",\"mode\":\"W\",\"thread\":\"0000AAAA\",\"ns\":20000,",
        ] {
            assert!(j.contains(want), "{want}\n{j}");
        }
    }

    /// A trace=all log of j.u.c. locks: the LockHolds lines win over the events (no double
    /// counting) unless `from_events`, and both say the same; a log without LockHolds uses
    /// the events as before.
    #[test]
    fn lock_holds_or_events_never_both() {
        let log = "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
1.000000100,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
1.000001100,LockRelease,0000AAAA,00002222,W,1;00000001;00000020
1.000001100,LockHold,0000AAAA,00002222,W,1000,1;00000001;00000010,1;00000001;00000020
1.000002000,LockHolds,0000AAAA,00002222,W,1,1000,1000,1;317;1,1;00000001;00000010
1.000003000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
1.000003100,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
";
        let s = analyse(log, false);
        assert!(s.lock_holds_from_summaries && !s.juc_summarised());
        let l = &s.locks[&Hash(0x2222)];
        assert_eq!((l.write_holds.count(), l.write_holds.total()), (1, 1000));
        // A complete trace: the hold still open at the end is one.
        assert_eq!((l.open_holds, l.acquisitions), (1, 2));
        let e = analyse(log, true);
        assert!(!e.lock_holds_from_summaries);
        assert_eq!(e.locks[&Hash(0x2222)].write_holds, l.write_holds);
        assert_eq!(e.locks[&Hash(0x2222)].hold_sites, l.hold_sites);
        let only_events: String = log
            .lines()
            .filter(|l| !l.contains(",LockHold"))
            .map(|l| format!("{l}\n"))
            .collect();
        let o = analyse(&only_events, false);
        assert!(!o.lock_holds_from_summaries && !o.juc_summarised());
        assert_eq!(o.locks[&Hash(0x2222)].write_holds, l.write_holds);
    }
}
