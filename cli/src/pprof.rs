//! `orca pprof`: the log as gzip-compressed pprof profiles (`profile.proto`), for
//! `go tool pprof`, Grafana/Pyroscope and speedscope.
//!
//! One profile per [`Kind`], two values per sample (a count and nanoseconds), as Go's own
//! mutex profile has them. A sample's stack is the Java stack of the event, innermost first,
//! under a leaf frame naming what the thread was on (`monitor HASH`, `lock HASH`,
//! `condition HASH of lock HASH`, `park HASH`, `semaphore HASH`: the names `orca flame`
//! prints, a condition with its lock), so a flame graph ends at the lock and `-focus` can pick
//! one; the same name is a `lock` label and the thread a `thread` label, for `-tagfocus`.
//! Monitors are named by identity hash and class (`ObjectClass` lines) where the log has it.
//! The row of other monitors (locks), `00000000`, is no lock: its leaf is the report's name
//! of it at the sample's site, `monitor Object at T.a(T.java:12)` (`Profiles::name_rows`, from
//! the report's analysis of the same log), and its monitor contentions `monitor other
//! monitors`, the report's row of them.
//!
//! The figures follow `orca report`'s rules exactly (report.rs, `Analysis`): which events pair,
//! what is still open at the end of the log (counted up to its last timestamp), hold times from
//! the summary lines unless `--from-events`, `Object.wait` and `await` taken out of holds. The
//! difference is that this keeps the whole stack where the report keeps its top frame; the
//! tests hold the two equal per lock (here, against `Analysis`) and per line, function and
//! thread (cli/tests/pprof.rs, through `go tool pprof`).

use std::collections::HashMap;
use std::path::Path;

use clap::ValueEnum;
use flate2::{write::GzEncoder, Compression};
use orca_format::spans::{Call, Held, Pairer, Span, SpanKind};
use orca_format::{
    parse_stack, Durations, Event, EventReader, Frame, Hash, LockMode, Metadata, WaitCall,
};
use prost::Message;

/// What a profile measures.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug, Hash)]
pub enum Kind {
    /// Contended monitor entries and contended j.u.c. lock acquisitions (Go's mutex profile:
    /// contentions/count, delay/nanoseconds).
    Blocked,
    /// Outermost monitor and j.u.c. lock holds (instrumentation mode): holds/count,
    /// held/nanoseconds.
    Held,
    /// `Object.wait`, `Condition.await` and `LockSupport.park` (not sleeps or joins):
    /// waits/count, waiting/nanoseconds.
    Waited,
    /// `Semaphore.acquire`: acquires/count, acquiring/nanoseconds.
    Semaphores,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Blocked, Kind::Held, Kind::Waited, Kind::Semaphores];

    /// The file name stem `orca record --pprof DIR` uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Blocked => "blocked",
            Kind::Held => "held",
            Kind::Waited => "waited",
            Kind::Semaphores => "semaphores",
        }
    }

    /// The sample types: (count, unit) and (time, unit).
    fn sample_types(self) -> [(&'static str, &'static str); 2] {
        let count = match self {
            Kind::Blocked => "contentions",
            Kind::Held => "holds",
            Kind::Waited => "waits",
            Kind::Semaphores => "acquires",
        };
        let time = match self {
            Kind::Blocked => "delay",
            Kind::Held => "held",
            Kind::Waited => "waiting",
            Kind::Semaphores => "acquiring",
        };
        [(count, "count"), (time, "nanoseconds")]
    }
}

/// What a sample's thread was on: its leaf frame.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Leaf {
    Monitor(Hash),
    Lock(Hash),
    /// A condition and its lock.
    Condition(Hash, Hash),
    /// The blocker, [`Hash::UNKNOWN`] for none.
    Park(Hash),
    Semaphore(Hash),
}

impl Leaf {
    /// The leaf frame's name, as `orca flame` names it: `monitor HashMap@6404CC3C` when the log
    /// names the object's class (`ObjectClass`), else `monitor 6404CC3C`.
    fn name(self, classes: &HashMap<Hash, String>) -> String {
        let obj = |h: Hash| match classes.get(&h) {
            Some(c) => format!("{}@{h}", crate::report::simple_name(c)),
            None => h.to_string(),
        };
        match self {
            Leaf::Monitor(h) => format!("monitor {}", obj(h)),
            Leaf::Lock(h) => format!("lock {}", obj(h)),
            Leaf::Condition(c, l) => format!("condition {} of lock {}", obj(c), obj(l)),
            Leaf::Park(h) if h == Hash::UNKNOWN => "park".into(),
            Leaf::Park(h) => format!("park {}", obj(h)),
            Leaf::Semaphore(h) => format!("semaphore {}", obj(h)),
        }
    }

    fn class(self) -> &'static str {
        match self {
            Leaf::Monitor(_) => "monitor",
            Leaf::Lock(_) => "j.u.c. lock",
            Leaf::Condition(..) => "condition",
            Leaf::Park(_) => "park",
            Leaf::Semaphore(_) => "semaphore",
        }
    }
}

/// One sample before encoding: the same key adds up.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    leaf: Leaf,
    /// The raw `<stackTrace>` (innermost first).
    stack: String,
    thread: Hash,
    /// The owner when the contention began (blocked samples).
    owner: Option<Hash>,
    /// The j.u.c. hold's mode (held samples).
    mode: Option<LockMode>,
}

impl Key {
    /// A sample of `thread` at `stack`, without an owner or a mode.
    fn of(leaf: Leaf, stack: String, thread: Hash) -> Key {
        Key {
            leaf,
            stack,
            thread,
            owner: None,
            mode: None,
        }
    }
}

type Sums = HashMap<Key, (u64, u64)>;

fn add(m: &mut Sums, k: Key, count: u64, ns: u64) {
    let e = m.entry(k).or_default();
    e.0 += count;
    e.1 += ns;
}

/// Every kind's samples of one log, from one pass.
#[derive(Default)]
pub struct Profiles {
    blocked: Sums,
    waited: Sums,
    semaphores: Sums,
    held_events: Sums,
    held_summaries: Sums,
    /// Holds counted but not timed per key (`MonitorHoldsUntimed`): added to
    /// `held_summaries` at the end, their time scaled from the key's timed holds.
    held_untimed: HashMap<Key, u64>,
    lock_held_events: Sums,
    lock_held_summaries: Sums,
    /// The same for j.u.c. holds (`LockHoldsUntimed`), added to `lock_held_summaries`.
    lock_held_untimed: HashMap<Key, u64>,
    names: HashMap<Hash, String>,
    /// The objects' classes (`ObjectClass` lines; the first of an ID), for the leaves' names.
    classes: HashMap<Hash, String>,
    /// Per [`Kind`] (in its order): whether the log counted some of its samples per
    /// one-frame site (short contentions and waits, holds from summary lines) instead of
    /// writing them with their stacks.
    counted: [bool; 4],
    first_ts: Option<u64>,
    last_ts: u64,
    has_summaries: bool,
    /// Some monitor hold rows were of a sample (guards=on past the exact budget): their
    /// counts and times are scaled estimates.
    sampled: bool,
    has_lock_summaries: bool,
    from_events: bool,
    /// Holds counted but not timed (monitors, j.u.c. locks): (those whose time is estimated
    /// from their site's timed holds, those at a site with no timed hold, which add no time).
    untimed: [(u64, u64); 2],
    /// The row of other monitors (locks), `00000000`, named at its sites as `orca report`
    /// names it ([`Profiles::name_rows`]): (j.u.c., site) to `Object at T.a(T.java:12)`; and
    /// the report's name of the monitors' row, for its contentions.
    rows: HashMap<(bool, Option<Frame>), String>,
    other_monitors: Option<String>,
}

impl Profiles {
    /// Reads every event of `r` and closes what is still open at the end, as `orca report`.
    pub fn read<R: std::io::Read>(
        mut r: EventReader<R>,
        from_events: bool,
    ) -> std::io::Result<Profiles> {
        let mut p = Profiles {
            from_events,
            ..Default::default()
        };
        // The one pairing of lines into spans (orca_format::spans), with whole stacks.
        let mut pairer = Pairer::with_stacks();
        let mut ended = Vec::new();
        while let Some((_, rec)) = r.next_event()? {
            // Malformed and torn lines are skipped, as `orca report` skips them.
            if let Ok(rec) = rec {
                let ts = rec.timestamp.nanos();
                pairer.feed(ts, &rec.event, &mut |s| ended.push(s));
                p.event(&rec.event);
                for s in ended.drain(..) {
                    p.span(s);
                }
            }
        }
        p.finish();
        // The log's span is the pairer's (its first and last events, as in `orca report`).
        (p.first_ts, p.last_ts) = (pairer.start(), pairer.end());
        // What is still open ends at the log's last event, as in `orca report`.
        pairer.finish(&mut |s| p.span(s));
        Ok(p)
    }

    fn event(&mut self, ev: &Event<'_>) {
        if let Event::ObjectClass { object, class } = *ev {
            // the first: a second line names another object with the same ID (the report says so)
            self.classes
                .entry(object)
                .or_insert_with(|| orca_format::java_class_name(&class.decode()));
        }
        let Some(thread) = ev.thread() else { return };
        let key = |leaf, stack| Key::of(leaf, stack, thread);
        match *ev {
            Event::ThreadStarted { name, .. } => {
                self.names.insert(thread, name.decode().into_owned());
            }
            // Contentions counted per stack (short ones, and long ones beyond the budget; an
            // older agent's per one-frame site), no owner.
            Event::MonitorContentions {
                monitor,
                site,
                stack,
                durations: Durations { count, total, .. },
                ..
            } => {
                self.counted[Kind::Blocked as usize] = true;
                let k = key(
                    Leaf::Monitor(monitor),
                    stack.or_site(site).raw().to_string(),
                );
                add(&mut self.blocked, k, count, total);
            }
            Event::LockContentions {
                lock,
                site,
                stack,
                durations: Durations { count, total, .. },
                ..
            } => {
                self.counted[Kind::Blocked as usize] = true;
                let k = key(Leaf::Lock(lock), stack.or_site(site).raw().to_string());
                add(&mut self.blocked, k, count, total);
            }
            Event::MonitorHolds {
                monitor,
                site,
                durations: Durations { count, total, .. },
                sample,
                ..
            } => {
                self.has_summaries = true;
                // a row of a sample stands for `sample` times its holds
                let (count, total) = (count * sample, total * sample);
                self.sampled |= sample > 1;
                let k = key(Leaf::Monitor(monitor), site.raw().to_string());
                add(&mut self.held_summaries, k, count, total);
            }
            Event::MonitorHoldsUntimed {
                monitor,
                count,
                site,
                sample,
                ..
            } => {
                self.has_summaries = true;
                let count = count * sample;
                self.sampled |= sample > 1;
                let k = key(Leaf::Monitor(monitor), site.raw().to_string());
                *self.held_untimed.entry(k).or_default() += count;
            }
            Event::LockOrder { .. } => self.has_summaries = true,
            Event::LockHolds {
                lock,
                mode,
                site,
                durations: Durations { count, total, .. },
                ..
            } => {
                self.has_summaries = true;
                self.has_lock_summaries = true;
                let k = Key {
                    mode: Some(mode),
                    ..key(Leaf::Lock(lock), site.raw().to_string())
                };
                add(&mut self.lock_held_summaries, k, count, total);
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
                let k = Key {
                    mode: Some(mode),
                    ..key(Leaf::Lock(lock), site.raw().to_string())
                };
                *self.lock_held_untimed.entry(k).or_default() += count;
            }
            Event::LockHold { .. } => self.has_lock_summaries = true,
            Event::Waits {
                call,
                object,
                count,
                total,
                site,
                stack,
                ..
            } => {
                // Short waits, counted per stack (an older agent's per one-frame site).
                let site = stack.or_site(site);
                let leaf = match call {
                    WaitCall::Wait => Leaf::Monitor(object),
                    // `<object>` is the condition's lock; the condition is not written.
                    WaitCall::Await => Leaf::Condition(Hash::UNKNOWN, object),
                    WaitCall::Park => Leaf::Park(object),
                    WaitCall::Acquire => {
                        self.counted[Kind::Semaphores as usize] = true;
                        let k = key(Leaf::Semaphore(object), site.raw().to_string());
                        add(&mut self.semaphores, k, count, total);
                        return;
                    }
                    // As their events (`close_call`): joins and sleeps wait for no lock.
                    WaitCall::Join | WaitCall::Sleep => return,
                };
                self.counted[Kind::Waited as usize] = true;
                add(
                    &mut self.waited,
                    key(leaf, site.raw().to_string()),
                    count,
                    total,
                );
            }
            _ => {}
        }
    }

    /// What one span adds: its stack (where it began; a semaphore's, where it was acquired) and
    /// its time.
    fn span(&mut self, s: Span) {
        let ns = s.nanos();
        let thread = s.thread;
        let key = |leaf, stack| Key::of(leaf, stack, thread);
        match s.kind {
            SpanKind::Blocked { monitor, owner } => {
                let k = Key {
                    owner: Some(owner),
                    ..key(Leaf::Monitor(monitor), s.begin.stack)
                };
                add(&mut self.blocked, k, 1, ns);
            }
            SpanKind::Call { call, object } => {
                let (sums, leaf, stack) = match call {
                    Call::Wait => (&mut self.waited, Leaf::Monitor(object), s.begin.stack),
                    // The report has no site for a call still open: no stack.
                    Call::Semaphore => (
                        &mut self.semaphores,
                        Leaf::Semaphore(object),
                        s.end.map(|e| e.stack).unwrap_or_default(),
                    ),
                    // Joins and sleeps wait for no lock.
                    Call::Join | Call::Sleep => return,
                };
                add(sums, key(leaf, stack), 1, ns);
            }
            // Holds still open at the end are left out (their time is not known).
            SpanKind::Hold { .. } if s.end.is_none() => {}
            SpanKind::Hold {
                held: Held::Monitor(m),
                nanos,
            } => {
                let k = key(Leaf::Monitor(m), s.begin.stack);
                add(&mut self.held_events, k, 1, nanos);
            }
            SpanKind::Hold {
                held: Held::Lock(lock, mode),
                nanos,
            } => {
                let k = Key {
                    mode: Some(mode),
                    ..key(Leaf::Lock(lock), s.begin.stack)
                };
                add(&mut self.lock_held_events, k, 1, nanos);
            }
            SpanKind::Acquire { lock, owner, .. } => {
                self.acquired(thread, lock, owner, ns, s.begin.stack)
            }
            SpanKind::Await { lock, condition } => {
                let k = key(Leaf::Condition(condition, lock), s.begin.stack);
                add(&mut self.waited, k, 1, ns);
            }
            SpanKind::Park { blocker } => {
                add(
                    &mut self.waited,
                    key(Leaf::Park(blocker), s.begin.stack),
                    1,
                    ns,
                );
            }
            // Its Hold has its time (this pairer hands out no stretches).
            SpanKind::Stretch { .. } => {}
        }
    }

    /// A j.u.c. acquisition that took `ns`: a contention when another thread owned the lock
    /// as it began.
    fn acquired(&mut self, thread: Hash, lock: Hash, owner: Hash, ns: u64, stack: String) {
        if owner != Hash::UNKNOWN && owner != thread {
            let k = Key {
                leaf: Leaf::Lock(lock),
                stack,
                thread,
                owner: Some(owner),
                mode: None,
            };
            add(&mut self.blocked, k, 1, ns);
        }
    }

    /// Adds the holds counted but not timed to their keys, their time estimated as the
    /// report estimates it: per lock and site, each untimed hold the mean of the site's timed
    /// holds (report.rs, `add_untimed_sites`), whatever the thread and mode. A site's extra
    /// time goes to its keys in proportion to their untimed holds, the remainder of the
    /// division one nanosecond each to the keys with the largest, so that the site's samples
    /// add up to the report's figure for the site exactly (`hold_sites`; estimated per thread
    /// from each thread's own timed holds, a site's time was 0.1% off the report's: issue 46).
    /// A lock's total is then its sites' sum, which the report's per-lock total, scaled by the
    /// lock's mean, is not when the lock's sites differ.
    fn finish(&mut self) {
        for (i, (untimed, sums)) in [
            (
                std::mem::take(&mut self.held_untimed),
                &mut self.held_summaries,
            ),
            (
                std::mem::take(&mut self.lock_held_untimed),
                &mut self.lock_held_summaries,
            ),
        ]
        .into_iter()
        .enumerate()
        {
            // Per (lock, site): timed holds, their ns, untimed holds; and the untimed keys.
            type Site = (Leaf, String);
            let mut timed: HashMap<Site, (u64, u64)> = HashMap::new();
            for (k, (c, ns)) in sums.iter() {
                let e = timed.entry((k.leaf, k.stack.clone())).or_default();
                e.0 += c;
                e.1 += ns;
            }
            let mut sites: HashMap<Site, Vec<(Key, u64)>> = HashMap::new();
            for (k, n) in untimed {
                sites
                    .entry((k.leaf, k.stack.clone()))
                    .or_default()
                    .push((k, n));
            }
            for (site, mut keys) in sites {
                let (c, ns) = timed.get(&site).copied().unwrap_or_default();
                let u: u64 = keys.iter().map(|(_, n)| n).sum();
                if c > 0 {
                    self.untimed[i].0 += u;
                } else {
                    self.untimed[i].1 += u;
                }
                let extra = u128::from(crate::util::estimate(ns, c, u) - ns);
                keys.sort_by_key(|(k, _)| (k.thread, k.owner, k.mode.map(|m| m == LockMode::Read)));
                let mut shares: Vec<(u64, u128)> = keys
                    .iter()
                    .map(|(_, n)| {
                        let x = extra * u128::from(*n);
                        ((x / u128::from(u)) as u64, x % u128::from(u))
                    })
                    .collect();
                let given: u128 = shares.iter().map(|(s, _)| u128::from(*s)).sum();
                let mut order: Vec<usize> = (0..shares.len()).collect();
                order.sort_by(|a, b| shares[*b].1.cmp(&shares[*a].1).then(a.cmp(b)));
                for &j in order.iter().take((extra - given) as usize) {
                    shares[j].0 += 1;
                }
                for ((k, n), (share, _)) in keys.into_iter().zip(shares) {
                    let e = sums.entry(k).or_default();
                    e.0 += n;
                    e.1 += share;
                }
            }
        }
    }

    /// The keys of the row of other monitors (locks), `00000000`, that the report shows at
    /// their sites (j.u.c. contentions and holds, monitor holds) or as its row `other
    /// monitors` (monitor contentions): (j.u.c., kind, key).
    fn row_keys(&self) -> impl Iterator<Item = (bool, Kind, &Key)> {
        fn of(kind: Kind, m: &Sums) -> Vec<(bool, Kind, &Key)> {
            m.keys()
                .filter_map(|k| match k.leaf {
                    Leaf::Monitor(Hash(0)) => Some((false, kind, k)),
                    Leaf::Lock(Hash(0)) => Some((true, kind, k)),
                    _ => None,
                })
                .collect()
        }
        let mut v = of(Kind::Blocked, &self.blocked);
        for m in [
            &self.held_events,
            &self.held_summaries,
            &self.lock_held_events,
            &self.lock_held_summaries,
        ] {
            v.extend(of(Kind::Held, m));
        }
        v.into_iter()
    }

    /// Whether the profiles have the row of other monitors (locks), which
    /// [`Profiles::name_rows`] names.
    pub fn has_rows(&self) -> bool {
        self.row_keys().next().is_some()
    }

    /// Names the row of other monitors (locks) as `orca report` does, from its analysis of the
    /// same log (issue 46): `monitor Object at T.a(T.java:12)` per site
    /// ([`crate::report::Analysis::unidentified_sites`]), never one lock `monitor 00000000`;
    /// the monitors' contentions `monitor other monitors`, the report's row.
    pub fn name_rows(&mut self, a: &crate::report::Analysis, md: &Metadata) {
        let mut rows = HashMap::new();
        for (juc, _, k) in self.row_keys() {
            let site = parse_stack(k.stack.as_bytes(), 0)
                .ok()
                .and_then(|s| s.top());
            rows.entry((juc, site)).or_insert_with(|| {
                crate::report::unidentified_label(md, &a.unidentified_name(site, juc), site)
            });
        }
        self.rows = rows;
        self.other_monitors = Some(a.lock_name(Hash(0), false));
    }

    /// The leaf frame's name of a sample of `kind` ([`Leaf::name`], the row of other monitors
    /// named as [`Profiles::name_rows`] says).
    fn leaf_name(&self, k: &Key, kind: Kind) -> String {
        let row = match (k.leaf, kind) {
            (Leaf::Monitor(Hash(0)), Kind::Blocked) => {
                if let Some(n) = &self.other_monitors {
                    return format!("monitor {n}");
                }
                None
            }
            (Leaf::Monitor(Hash(0)), Kind::Held) => Some((false, "monitor")),
            (Leaf::Lock(Hash(0)), Kind::Blocked | Kind::Held) => Some((true, "lock")),
            _ => None,
        };
        if let Some((juc, what)) = row {
            let site = parse_stack(k.stack.as_bytes(), 0)
                .ok()
                .and_then(|s| s.top());
            if let Some(n) = self.rows.get(&(juc, site)) {
                return format!("{what} {n}");
            }
        }
        k.leaf.name(&self.classes)
    }

    /// Whether monitor holds come from `MonitorHolds` lines and j.u.c. holds from
    /// `LockHolds` lines (report.rs's `holds_from_summaries`, `lock_holds_from_summaries`).
    fn holds_from_summaries(&self) -> (bool, bool) {
        (
            self.has_summaries && !self.from_events,
            self.has_lock_summaries && !self.from_events,
        )
    }

    fn samples(&self, kind: Kind) -> Vec<(&Key, (u64, u64))> {
        let (mon, juc) = self.holds_from_summaries();
        let parts: Vec<&Sums> = match kind {
            Kind::Blocked => vec![&self.blocked],
            Kind::Waited => vec![&self.waited],
            Kind::Semaphores => vec![&self.semaphores],
            Kind::Held => vec![
                if mon {
                    &self.held_summaries
                } else {
                    &self.held_events
                },
                if juc {
                    &self.lock_held_summaries
                } else {
                    &self.lock_held_events
                },
            ],
        };
        let mut v: Vec<(&Key, (u64, u64))> = parts
            .into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k, *v)))
            .collect();
        // Stable output: the same log gives the same bytes.
        v.sort_by_cached_key(|(k, _)| {
            let name = self.leaf_name(k, kind);
            (name, k.stack.clone(), k.thread, k.owner, k.mode)
        });
        v
    }

    /// How many real events one recorded event stands for. Every event is recorded today, so
    /// 1; when the agent samples (issue 21), the weight the log gives goes here, and
    /// [`Profiles::encode`] scales every value by it and says so in a comment.
    /// For the held profile, the holds whose time is estimated and those left untimed
    /// ([`Profiles::untimed`]), of the holds taken from summary lines; (0, 0) otherwise.
    fn estimated(&self, kind: Kind) -> (u64, u64) {
        if !matches!(kind, Kind::Held) {
            return (0, 0);
        }
        let (mon, juc) = self.holds_from_summaries();
        let [m, j] = self.untimed;
        let pick = |on: bool, x: (u64, u64)| if on { x } else { (0, 0) };
        let (a, b) = (pick(mon, m), pick(juc, j));
        (a.0 + b.0, a.1 + b.1)
    }

    /// Whether some samples of `kind` were counted per one-frame site rather than written.
    fn counted(&self, kind: Kind) -> bool {
        match kind {
            Kind::Held => {
                let (mon, juc) = self.holds_from_summaries();
                mon || juc
            }
            k => self.counted[k as usize],
        }
    }

    fn sample_weight(&self) -> u64 {
        1
    }

    /// The profile of `kind` as uncompressed `profile.proto` bytes.
    pub fn encode(&self, kind: Kind, md: &Metadata, prefix: &Path, mtime: Option<u64>) -> Vec<u8> {
        let mut b = Builder::default();
        b.string(""); // index 0 is the empty string, by the format's rule
        let types = kind.sample_types();
        let sample_type: Vec<ValueType> = types
            .iter()
            .map(|(t, u)| ValueType {
                r#type: b.string(t),
                unit: b.string(u),
            })
            .collect();
        let weight = self.sample_weight();
        let (mon, juc) = self.holds_from_summaries();
        let source = match kind {
            Kind::Held => format!(
                "monitor holds from {}, j.u.c. holds from {}",
                if mon {
                    "MonitorHolds summary lines (one-frame sites)"
                } else {
                    "MonitorEntered/MonitorExit events"
                },
                if juc {
                    "LockHolds summary lines (one-frame sites)"
                } else {
                    "LockAcquired/LockRelease events"
                },
            ),
            _ => "from events".into(),
        };
        let comments = [
            format!(
                "orca pprof {}: {} ({source})",
                prefix.display(),
                kind.name()
            ),
            match self.estimated(kind) {
                _ if weight != 1 => format!("sampled: each recorded event counts {weight} times, so totals estimate the true totals"),
                _ if self.sampled && kind == Kind::Held => "hold counts and times are estimates: rows of a sample of the guarded sites' holds count each hold seen as the holds it stands for (see `orca report` for their intervals)".into(),
                (0, 0) if self.counted(kind) => "values are the true totals; those the agent counted instead of writing them (short ones: docs/FORMAT.md) have the stack it kept for them (contentions and waits: up to 8 per site, the rest their site's frame; hold times from summary lines: their site's frame only)".into(),
                (0, 0) => "every event recorded: values are the true totals".into(),
                (scaled, unsampled) => format!(
                    "hold counts are the true totals; hold times are estimates: {scaled} holds were not timed and count their site's mean timed hold, {unsampled} were not timed at a site with no timed hold and count 0 ns (see `orca report`)"
                ),
            },
        ];
        let comment = comments.iter().map(|c| b.string(c)).collect();
        // pprof names a profile after its main mapping's file: the log's.
        let log_name = prefix
            .file_name()
            .map_or("java".into(), |n| n.to_string_lossy());
        let mapping = Mapping {
            id: 1,
            filename: b.string(&format!("{log_name}.orca")),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            ..Default::default()
        };
        let mut sample = Vec::new();
        for (k, (count, ns)) in self.samples(kind) {
            if count == 0 {
                continue;
            }
            let leaf = self.leaf_name(k, kind);
            let mut location_id = vec![b.leaf(&leaf)];
            if let Ok(st) = parse_stack(k.stack.as_bytes(), 0) {
                location_id.extend(st.frames().map(|f| b.frame(md, f)));
            }
            let thread_name = self
                .names
                .get(&k.thread)
                .cloned()
                .unwrap_or_else(|| format!("[{}]", k.thread));
            let mut labels = vec![
                ("thread", thread_name),
                ("thread id", k.thread.to_string()),
                ("lock", leaf),
                ("lock kind", k.leaf.class().to_string()),
            ];
            if let Some(o) = k.owner {
                let name = match self.names.get(&o) {
                    Some(n) => format!("{n} [{o}]"),
                    None if o == Hash::UNKNOWN => "unknown".into(),
                    None => format!("[{o}]"),
                };
                labels.push(("owner", name));
            }
            if let Some(m) = k.mode {
                let m = match m {
                    LockMode::Write => "write",
                    LockMode::Read => "read",
                };
                labels.push(("mode", m.to_string()));
            }
            let label = labels
                .into_iter()
                .map(|(key, s)| Label {
                    key: b.string(key),
                    str: b.string(&s),
                    ..Default::default()
                })
                .collect();
            sample.push(Sample {
                location_id,
                value: vec![
                    (count.saturating_mul(weight)) as i64,
                    (ns.saturating_mul(weight)) as i64,
                ],
                label,
            });
        }
        let first = self.first_ts.unwrap_or(self.last_ts);
        let duration = self.last_ts - first;
        // One recorded event in `period` events: the count is what is sampled, as in Go's
        // mutex profile (`contentions count`, the sampling rate).
        let period_type = ValueType {
            r#type: sample_type[0].r#type,
            unit: sample_type[0].unit,
        };
        let default_sample_type = sample_type[1].r#type;
        Profile {
            sample_type,
            sample,
            mapping: vec![mapping],
            location: b.locations,
            function: b.functions,
            string_table: b.strings,
            drop_frames: 0,
            keep_frames: 0,
            // The log's clock has no date: its start is dated from the file's last write,
            // which is the log's last timestamp.
            time_nanos: mtime.map_or(0, |m| m.saturating_sub(duration)) as i64,
            duration_nanos: duration as i64,
            period_type: Some(period_type),
            period: weight as i64,
            comment,
            default_sample_type,
        }
        .encode_to_vec()
    }
}

/// Interns strings, functions and locations.
#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    functions: Vec<Function>,
    function_ids: HashMap<String, u64>,
    locations: Vec<Location>,
    /// By (function, line).
    location_ids: HashMap<(u64, i64), u64>,
}

impl Builder {
    fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    fn function(&mut self, name: &str, system_name: &str, file: &str) -> u64 {
        let key = format!("{system_name}\0{file}");
        if let Some(&i) = self.function_ids.get(&key) {
            return i;
        }
        let id = self.functions.len() as u64 + 1;
        let f = Function {
            id,
            name: self.string(name),
            system_name: self.string(system_name),
            filename: self.string(file),
            start_line: 0,
        };
        self.functions.push(f);
        self.function_ids.insert(key, id);
        id
    }

    fn location(&mut self, function_id: u64, line: i64) -> u64 {
        if let Some(&i) = self.location_ids.get(&(function_id, line)) {
            return i;
        }
        let id = self.locations.len() as u64 + 1;
        self.locations.push(Location {
            id,
            mapping_id: 1,
            address: 0,
            line: vec![Line {
                function_id,
                line,
                column: 0,
            }],
            is_folded: false,
        });
        self.location_ids.insert((function_id, line), id);
        id
    }

    fn leaf(&mut self, name: &str) -> u64 {
        let f = self.function(name, name, "");
        self.location(f, 0)
    }

    /// A Java frame: `Class.method`, its source file and the original line, as `orca report`
    /// resolves them (`Metadata`); the descriptor in the system name tells overloads apart.
    fn frame(&mut self, md: &Metadata, fr: Frame) -> u64 {
        let name = md.method_name(fr.method);
        let mi = md.methods.get(&fr.method);
        let system = match mi {
            Some(m) => format!("{name}{}", m.signature),
            None => name.clone(),
        };
        let file = mi
            .and_then(|m| md.classes.get(&m.class))
            .map(|c| c.source_file.clone())
            .unwrap_or_default();
        let line = md.line_of(fr).map_or(0, i64::from);
        let f = self.function(&name, &system, &file);
        self.location(f, line)
    }
}

/// Writes the profile of `kind` of the log at `prefix` to `out`, gzip-compressed.
pub fn write(
    prefix: &Path,
    md: &Metadata,
    p: &Profiles,
    kind: Kind,
    out: &Path,
) -> Result<(), PprofError> {
    let mtime = std::fs::metadata(orca_format::paths(prefix).orca)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64);
    let bytes = p.encode(kind, md, prefix, mtime);
    let io = |e| PprofError::Write(out.display().to_string(), e);
    let f = orca_format::output::create(out, false)?;
    let mut gz = GzEncoder::new(std::io::BufWriter::new(f), Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).map_err(io)?;
    let mut w = gz.finish().map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)?;
    Ok(())
}

/// Reads the log once and writes the profile of every kind in `kinds`.
pub fn run(
    prefix: &Path,
    kinds: &[(Kind, std::path::PathBuf)],
    from_events: bool,
) -> Result<(), PprofError> {
    let md = Metadata::load(prefix)?;
    let read = |e| PprofError::Read(prefix.display().to_string(), e);
    let mut p =
        Profiles::read(orca_format::EventReader::open(prefix)?, from_events).map_err(read)?;
    if p.has_rows() {
        // A second pass, only for a log with a row of other monitors: its names are the
        // report's, from the report's analysis.
        let a =
            crate::report::Analysis::run_with(orca_format::EventReader::open(prefix)?, from_events)
                .map_err(read)?;
        p.name_rows(&a, &md);
    }
    for (kind, out) in kinds {
        write(prefix, &md, &p, *kind, out)?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum PprofError {
    #[error(transparent)]
    Log(#[from] orca_format::OrcaError),
    #[error("{0}.orca: {1}")]
    Read(String, std::io::Error),
    #[error("cannot write {0}: {1} (does its directory exist?)")]
    Write(String, std::io::Error),
    #[error("cannot write the profile: {0}")]
    Output(#[from] orca_format::output::OutputError),
}

// profile.proto (github.com/google/pprof/proto/profile.proto), message by message: the same
// field numbers and types, for prost to encode.

#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
    #[prost(int64, tag = "3")]
    pub column: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Analysis;
    use std::collections::BTreeMap;

    /// (count, ns) per leaf frame of the profile of `kind`, decoded from its bytes.
    fn per_leaf(bytes: &[u8]) -> BTreeMap<String, (u64, u64)> {
        let p = Profile::decode(bytes).unwrap();
        assert_eq!(p.string_table[0], "");
        let mut m = BTreeMap::new();
        for s in &p.sample {
            let loc = &p.location[s.location_id[0] as usize - 1];
            assert_eq!(loc.id, s.location_id[0]);
            let f = &p.function[loc.line[0].function_id as usize - 1];
            let name = p.string_table[f.name as usize].clone();
            let e: &mut (u64, u64) = m.entry(name).or_default();
            e.0 += s.value[0] as u64;
            e.1 += s.value[1] as u64;
        }
        m
    }

    /// On every fixture, per lock, the profiles hold `orca report`'s figures (`Analysis`),
    /// what is still open at the end of the log included (`stuck`).
    #[test]
    fn fixtures_have_the_reports_figures_per_lock() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for name in ["juc", "pingpong", "stuck", "twolocks", "ordered"] {
            let prefix = dir.join(name);
            let md = Metadata::load(&prefix).unwrap();
            for from_events in [false, true] {
                let a =
                    Analysis::run_with(EventReader::open(&prefix).unwrap(), from_events).unwrap();
                let p = Profiles::read(EventReader::open(&prefix).unwrap(), from_events).unwrap();
                let profile = |k| per_leaf(&p.encode(k, &md, &prefix, None));
                let mut blocked = BTreeMap::new();
                let mut held = BTreeMap::new();
                let mut waited = BTreeMap::new();
                let mut sems = BTreeMap::new();
                let put = |m: &mut BTreeMap<String, (u64, u64)>, k: String, c, ns| {
                    if c > 0 {
                        let e = m.entry(k).or_default();
                        e.0 += c;
                        e.1 += ns;
                    }
                };
                for (h, o) in &a.objects {
                    put(
                        &mut blocked,
                        format!("monitor {h}"),
                        o.contentions,
                        o.blocked,
                    );
                    put(
                        &mut held,
                        format!("monitor {h}"),
                        o.holds.count(),
                        o.holds.total(),
                    );
                    put(&mut waited, format!("monitor {h}"), o.waits, o.waited);
                    put(
                        &mut sems,
                        format!("semaphore {h}"),
                        o.sem_acquires,
                        o.sem_time,
                    );
                }
                for (h, l) in &a.locks {
                    put(&mut blocked, format!("lock {h}"), l.contentions, l.blocked);
                    for hist in [&l.write_holds, &l.read_holds] {
                        put(&mut held, format!("lock {h}"), hist.count(), hist.total());
                    }
                }
                for (h, (c, ns)) in &a.parks {
                    let k = if *h == Hash::UNKNOWN {
                        "park".into()
                    } else {
                        format!("park {h}")
                    };
                    put(&mut waited, k, *c, *ns);
                }
                let mut got_waited = BTreeMap::new();
                for (k, (c, ns)) in profile(Kind::Waited) {
                    // The report counts a condition's awaits against its lock.
                    let k = match k.split_once(" of ") {
                        Some((_, lock)) => lock.to_string(),
                        None => k,
                    };
                    put(&mut got_waited, k, c, ns);
                }
                for (h, l) in &a.locks {
                    put(&mut waited, format!("lock {h}"), l.awaits, l.awaited);
                }
                let ctx = format!("{name}, from_events {from_events}");
                assert_eq!(profile(Kind::Blocked), blocked, "{ctx}");
                assert_eq!(profile(Kind::Held), held, "{ctx}");
                assert_eq!(got_waited, waited, "{ctx}");
                assert_eq!(profile(Kind::Semaphores), sems, "{ctx}");
            }
        }
    }
}
