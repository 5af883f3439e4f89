//! One thread's monitor summaries: per (monitor, site) hold counts, times and histograms, and
//! lock-order edges, built from the tracker's records on the thread itself.
//!
//! Why: a complete trace costs an event line per `monitorenter` and `monitorexit`, millions a
//! second on a server. What a user reads from them (hold times per site, lock orders) is an
//! aggregate, so the agent aggregates at the source and writes a few lines per interval
//! (`MonitorHolds`, `LockOrder` in docs/FORMAT.md). The rules are those `orca report` and
//! `orca deadlocks` apply to a complete trace, so both give the same figures.

use std::collections::HashMap;

use crate::events::{SiteBits, Sizes};
use crate::recorder::writer::{Frame, Frames};
use orca_format::{WaitCall, WakeCall};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Objects with a `Waits` row of their own per thread, interval, call and site (as holds'
/// rows): a database that waits on a fresh latch per page must not get a line per page.
pub const WAIT_ROWS: usize = 4;

/// The counted contentions of one stack (and lock mode): (monitor or lock, 0: the others;
/// their waits, timed as holds are).
pub type ContentionRows = Vec<(u32, HoldStat)>;

/// The counted waits of one site (and call): per stack, in the order they came, its objects'
/// rows.
pub type SiteWaits = Vec<(Frames, Vec<(u32, WaitStat)>)>;

/// A `Waits` line's key: (call, site, stack whose top frame is the site, object).
pub type WaitKey = (WaitCall, Frame, Frames, u32);

/// The counted contentions of one site (and mode): per stack, in the order they came.
pub type SiteContentions = Vec<(Frames, ContentionRows)>;

/// A `MonitorContentions` (mode `None`) or `LockContentions` line's key: (mode, site, stack
/// whose top frame is the site, monitor or lock).
pub type ContentionKey = (Option<u8>, Frame, Frames, u32);

/// Stacks a site's counted contentions keep apart in an interval (per mode); the contentions of
/// further stacks are counted under the site's frame alone. A stack is what names the user's
/// line when the site is a library's (issue 46: log4j's blocked time was all at
/// `Category.callAppenders`, the program's logging call nowhere), and stacks are few per site,
/// so a few keep nearly every contention's, and a site called from everywhere stays bounded.
pub const CONTENTION_STACKS: usize = 8;

/// Short waits of one row: how many, their total and longest (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitStat {
    pub count: u64,
    pub total: u64,
    pub max: u64,
}

/// A multiply-rotate hasher for the tables' small integer keys: SipHash (std's default,
/// resistant to chosen keys, which identity hashes are not) was a tenth of the agent's time.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Sub-buckets per power of two of the hold-time histogram (docs/FORMAT.md; the CLI's own
/// copy is in orca-format: writer and reader are kept apart on purpose).
const SUB_BITS: u32 = 6;

/// The histogram bucket of a duration in nanoseconds.
pub fn bucket(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros();
    let shift = exp - SUB_BITS;
    let mant = (v >> shift) as u32 & ((1 << SUB_BITS) - 1);
    ((shift + 1) << SUB_BITS) | mant
}

/// Buckets a [`HoldStat`] keeps inline before it moves to an array.
const INLINE_BUCKETS: usize = 4;

/// Holds of one monitor at one site.
///
/// Aligned to a cache line: the counts, total, maximum and the histogram's first words are
/// one line, the only one a hold reads besides the histogram's bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct HoldStat {
    /// Timed holds, with their total, maximum and histogram.
    pub count: u64,
    /// Holds counted but not timed (`holdtiming=sampled`).
    pub untimed: u64,
    pub total: u64,
    pub max: u64,
    histogram: Histogram,
}

/// Counts per bucket. Most keys are short-lived objects (a request's, a connection's) held a
/// few times: their few buckets stay inline, with no allocation. A key held often gets one
/// array of counts over the range of buckets it uses, so adding a hold is one indexing into
/// memory next to nothing else (per-octave arrays behind a table of pointers cost two cache
/// misses per hold, most of the agent's time on a web server; a sorted list searched per
/// hold was worse).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Histogram {
    Inline(u8, [(u32, u64); INLINE_BUCKETS]),
    /// `counts[i]` is bucket `first + i`. A count per interval (at most a second or so of one
    /// thread) fits 32 bits.
    Range {
        first: u32,
        counts: Vec<u32>,
    },
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::Inline(0, [(0, 0); INLINE_BUCKETS])
    }
}

impl HoldStat {
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total += ns;
        self.max = self.max.max(ns);
        self.add_to_bucket(bucket(ns), 1);
    }

    /// The holds of `other` (the same monitor's at another site ID for the same place) added.
    pub fn merge(&mut self, other: &HoldStat) {
        self.count += other.count;
        self.total += other.total;
        self.max = self.max.max(other.max);
        self.untimed += other.untimed;
        for (b, c) in other.histogram() {
            self.add_to_bucket(b, c);
        }
    }

    fn add_to_bucket(&mut self, b: u32, c: u64) {
        match &mut self.histogram {
            Histogram::Range { first, counts } => {
                let i = b.wrapping_sub(*first) as usize;
                let c32 = c.min(u32::MAX as u64) as u32;
                if let Some(n) = counts.get_mut(i) {
                    *n = n.saturating_add(c32);
                } else {
                    range_add(first, counts, b, c32);
                }
            }
            Histogram::Inline(n, entries) => {
                if let Some(e) = entries[..*n as usize].iter_mut().find(|e| e.0 == b) {
                    e.1 += c;
                    return;
                }
                if (*n as usize) < INLINE_BUCKETS {
                    entries[*n as usize] = (b, c);
                    *n += 1;
                    return;
                }
                let (mut first, mut counts) = (b, vec![c.min(u32::MAX as u64) as u32]);
                for &(b, c) in entries.iter() {
                    range_add(&mut first, &mut counts, b, c.min(u32::MAX as u64) as u32);
                }
                self.histogram = Histogram::Range { first, counts };
            }
        }
    }

    /// `(bucket, count)` of every bucket with holds, increasing.
    pub fn histogram(&self) -> Vec<(u32, u64)> {
        match &self.histogram {
            Histogram::Inline(n, entries) => {
                let mut v = entries[..*n as usize].to_vec();
                v.sort_unstable();
                v
            }
            Histogram::Range { first, counts } => counts
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| (first + i as u32, c as u64))
                .collect(),
        }
    }
}

/// Adds `c` to bucket `b` of a range, widening the range to take it.
fn range_add(first: &mut u32, counts: &mut Vec<u32>, b: u32, c: u32) {
    if b < *first {
        let grow = (*first - b) as usize;
        counts.splice(0..0, std::iter::repeat_n(0, grow));
        *first = b;
    }
    let i = (b - *first) as usize;
    if i >= counts.len() {
        counts.resize(i + 1, 0);
    }
    counts[i] = counts[i].saturating_add(c);
}

/// A lock-order edge: `acquired` taken at `acquired_site` while `held` (taken at `held_site`)
/// was held, with the other monitors held then (`guards`, in hold order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeKey {
    pub held: u32,
    pub acquired: u32,
    pub held_site: u32,
    pub acquired_site: u32,
    pub guards: Guards,
}

/// Guards kept inline, up to this many.
const INLINE_GUARDS: usize = 3;

/// The guards of an edge occurrence. Why not a `Vec`: every nested acquisition looks its edges
/// up, and comparing keys that point to heap arrays (a `memcmp` call and a cache miss per
/// probe) was 2.5% of a Jetty server's samples (its socket locks nest).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Guards {
    /// The count, then the guards (the slots after them zero, so that derived `Eq` and
    /// `Hash` see the guards only).
    Inline(u8, [u32; INLINE_GUARDS]),
    Heap(Box<[u32]>),
}

impl Default for Guards {
    /// No guards (an unused row's).
    fn default() -> Self {
        Guards::Inline(0, [0; INLINE_GUARDS])
    }
}

impl Guards {
    fn new(guards: impl Iterator<Item = u32>) -> Self {
        let mut inline = [0; INLINE_GUARDS];
        let mut n = 0;
        let mut rest = Vec::new();
        for g in guards {
            if n < INLINE_GUARDS {
                inline[n] = g;
                n += 1;
            } else {
                if rest.is_empty() {
                    rest.extend_from_slice(&inline);
                }
                rest.push(g);
            }
        }
        if rest.is_empty() {
            Guards::Inline(n as u8, inline)
        } else {
            Guards::Heap(rest.into_boxed_slice())
        }
    }

    pub fn as_slice(&self) -> &[u32] {
        match self {
            Guards::Inline(n, g) => &g[..*n as usize],
            Guards::Heap(g) => g,
        }
    }
}

/// An `Object.wait` on a monitor: from `since` until `until` (`None`: under way) its hold, if
/// the thread held it, was paused. Matched to a hold by time, not by order of arrival: a
/// thread's records are drained in batches, after the wait events that followed them.
#[derive(Clone, Debug)]
struct Pause {
    monitor: u32,
    /// A j.u.c. lock's (`Condition.await`), not a monitor's.
    lock: bool,
    since: u64,
    until: Option<u64>,
}

/// Pauses kept at most: those of the holds whose records are not drained yet (a buffer's
/// worth at most), and stale ones (waits that threw), dropped oldest first.
const MAX_PAUSES: usize = 1024;

/// Monitors (or j.u.c. locks in one mode) with a row of their own per site and thread in an
/// interval; the holds of any further one go to the site's row of "other monitors" (`<monitor>`
/// 0, docs/FORMAT.md). Why: a program that takes a fresh monitor per row, statement or request
/// (Derby) made a key, and a line, per object: the summaries grew as large as a complete trace
/// and their tables missed the cache on every hold. With this bound the lines of an interval
/// grow with the program's lock sites, not with its objects.
pub const ROWS: usize = 4;

/// Holds (or lock-order occurrences) in an interval that keep a row's monitor its row in the
/// next interval: a long-lived, busy monitor keeps its own figures even at a site that also
/// sees a stream of fresh objects, which would otherwise take the free rows first.
pub const HOT: u64 = 16;

/// A hold row is kept for its monitor when it also had at least 1/`SHARE` of its site's holds
/// in the interval. Why: a server's thread serves every connection in turn, so the monitors of
/// a connection's objects were each held hundreds of times an interval at their sites, and
/// kept four rows a site, each two lines (timed and untimed): in a 5-minute Jetty log, 15 of
/// its 31 MB were rows of monitors with less than an eighth of their site's holds (a
/// connection's, a sixteenth each), which tell a reader little that the site's row of other
/// monitors does not. A monitor with an eighth of its site's holds is one a reader looks for.
pub const SHARE: u64 = 8;

/// The holds of one site (and, for a j.u.c. lock, mode) in the interval.
///
/// Why the monitors are inline and the figures boxed: every hold record looks its site up
/// and compares the rows' monitors. With the rows in a `Vec` of (monitor, figures), 112 bytes
/// apart, that was a pointer to follow and up to four lines to read before the figures
/// themselves (`Summary::row` was the largest of the agent's costs on a Jetty server, a third
/// of its samples on that compare). Now the key and the monitors share one small table entry,
/// and the one row that counts the hold is the only other line read.
#[derive(Debug, Default)]
struct SiteHolds {
    /// Rows in use: `monitors[..len]`, `stats.rows[..len]`.
    len: u8,
    /// The site had holds in the thread's previous interval: a new monitor gets a free row
    /// only as the interval's trial ([`Summary::row`]).
    seen: bool,
    /// This interval's trial row is taken.
    trial: bool,
    /// Up to [`ROWS`] monitors with a row of their own; a row of count 0 is kept for a
    /// monitor that was hot in the previous interval.
    monitors: [u32; ROWS],
    stats: Box<SiteStats>,
}

/// The figures of one site's rows ([`SiteHolds`]).
#[derive(Debug, Default)]
struct SiteStats {
    rows: [HoldStat; ROWS],
    /// The holds of every other monitor.
    other: HoldStat,
}

/// The lock-order occurrences of one pair of sites (held, acquired) in the interval.
///
/// Why the rows are inline, their (held, acquired) pairs apart from the rest: every nested
/// acquisition looks up one entry per monitor held and compares its rows' pairs. In a `Vec`
/// the rows were a second cache miss that waited for the first (the pointer), and a `malloc`
/// for each pair of sites in each interval; `Summary::order` was then the largest of the
/// agent's costs on Derby (7.4% of its samples), which acquires 425 nested monitors per
/// transaction.
#[derive(Debug, Default)]
#[repr(C)]
struct SiteEdges {
    /// Rows in use: `pairs[..len]`, `counts[..len]`, `guards[..len]`.
    len: u8,
    /// (held, acquired) of each row.
    pairs: [(u32, u32); ROWS],
    /// A row's occurrences (0: kept for a hot one).
    counts: [u64; ROWS],
    guards: [Guards; ROWS],
    /// The occurrences between other monitors.
    other: u64,
}

/// One thread's aggregation state.
///
/// Which monitors are held is the tracker's business (it hands over one record per outermost
/// hold and one per nested acquisition): keeping a second held stack here cost a record per
/// `monitorenter` and was most of the agent's time on a web server.
#[derive(Debug, Default)]
pub struct Summary {
    holds: FastMap<u32, SiteHolds>,
    edges: FastMap<(u32, u32), SiteEdges>,
    /// `notify`, `notifyAll`, `signal` and `signalAll` calls that woke nobody, per site frame.
    notifies: FastMap<(WakeCall, Frame), u64>,
    /// Waits counted (shorter than `waitthreshold`, or long beyond the budget), per call and
    /// site: at most [`WAIT_ROWS`] objects
    /// with a row of their own, then the row of other objects (0).
    waits: FastMap<(WaitCall, Frame), SiteWaits>,
    /// Contended acquisitions counted (shorter than `contentionthreshold`, or long beyond
    /// their site's budget), per lock mode (`None`: a monitor) and site: at most
    /// [`WAIT_ROWS`] monitors (locks) with a row of their own, then the row of others (0).
    contentions: FastMap<(Option<u8>, Frame), SiteContentions>,
    /// Lines the next [`Summary::take`] and [`Summary::take_notifies`] give.
    lines: usize,
    /// Long holds already written (`MonitorHold`, `LockHold`) whose records are not drained
    /// yet: (monitor, site, end, nanos). Their summary figure is the line's, not one computed
    /// again here: the tracker takes an `await` out of a hold from its own clock reads, the
    /// summaries from the `ConditionAwait`/`Awaited` events' times, and the two can differ by
    /// a few microseconds either way, which made a `LockHolds` maximum fall short of the
    /// `LockHold` it counts (orca check: 13,123,203 against 13,125,126 ns).
    long: Vec<(u32, u32, u64, u64)>,
    pauses: Vec<Pause>,
    /// When the tables were last written (the interval's start).
    pub last_written: u64,
}

/// The rows of `stack` among its site's `stacks` (its first frame is the site): its own while
/// the site has fewer than [`CONTENTION_STACKS`], else the site's one-frame stack's.
fn stack_rows<'a, T>(stacks: &'a mut Vec<(Frames, Vec<T>)>, stack: &[Frame]) -> &'a mut Vec<T> {
    let site_only = [stack[0]];
    let stack = match stacks.iter().position(|(s, _)| **s == *stack) {
        Some(_) => stack,
        None if stacks.len() < CONTENTION_STACKS => stack,
        None => &site_only[..],
    };
    let at = match stacks.iter().position(|(s, _)| **s == *stack) {
        Some(i) => i,
        None => {
            let mut frames = Frames::with_capacity(stack.len());
            stack.iter().for_each(|&f| frames.push(f));
            stacks.push((frames, Vec::new()));
            stacks.len() - 1
        }
    };
    &mut stacks[at].1
}

/// The row of `object` among a site's `rows` (waits, contentions): its own while the site has
/// fewer than [`WAIT_ROWS`] objects with rows (or already has it), else the row of other
/// objects (0); a new row adds a line to `lines`.
fn object_row<T: Default>(rows: &mut Vec<(u32, T)>, object: u32, lines: &mut usize) -> usize {
    if let Some(i) = rows.iter().position(|r| r.0 == object) {
        return i;
    }
    let own = rows.iter().filter(|r| r.0 != 0).count();
    let row = if own < WAIT_ROWS { object } else { 0 };
    if let Some(i) = rows.iter().position(|r| r.0 == row) {
        return i;
    }
    rows.push((row, T::default()));
    *lines += 1;
    rows.len() - 1
}

impl Summary {
    /// Empty tables; the first interval starts at `nanos`.
    pub fn starting(nanos: u64) -> Summary {
        Summary {
            last_written: nanos,
            ..Summary::default()
        }
    }

    /// The thread is about to take `monitor` at `site` while it holds `held` (monitor, site
    /// of its outermost hold; outermost first, each once, `monitor` not among them): a
    /// lock-order occurrence for each, counted when attempted (so that an acquisition that
    /// blocks forever, a real deadlock, is in the thread's summary at exit).
    pub fn order(
        &mut self,
        monitor: u32,
        site: u32,
        held: impl Iterator<Item = (u32, u32)> + Clone,
    ) {
        for (i, (h, h_site)) in held.clone().enumerate() {
            let guards = || {
                Guards::new(
                    held.clone()
                        .enumerate()
                        .filter(|&(k, _)| k != i)
                        .map(|(_, g)| g.0),
                )
            };
            let e = self.edges.entry((h_site, site)).or_default();
            // The guards (a pass over the held monitors for each of them: quadratic in the
            // nesting) are made only for a row of the same pair of monitors, or a new row: a
            // program that locks a fresh object per row under long-held ones (Derby) counts
            // its occurrences in the row of other monitors without them.
            let n = e.len as usize;
            let mut made = None;
            let mut found = None;
            for k in 0..n {
                if e.pairs[k] == (h, monitor) && e.guards[k] == *made.get_or_insert_with(guards) {
                    found = Some(k);
                    break;
                }
            }
            if let Some(k) = found {
                self.lines += (e.counts[k] == 0) as usize;
                e.counts[k] += 1;
            } else if n < ROWS {
                self.lines += 1;
                e.pairs[n] = (h, monitor);
                e.guards[n] = made.unwrap_or_else(guards);
                e.counts[n] = 1;
                e.len += 1;
            } else {
                self.lines += (e.other == 0) as usize;
                e.other += 1;
            }
        }
    }

    /// The rows of the pair of sites (`held_site`, `site`) an occurrence with at most
    /// [`TRACKED_GUARDS`] guards can count in: each (held, acquired, guards, 0 for none) with
    /// its row's index (`u8::MAX`: no row), and whether the rows are full (a further key
    /// counts in the row of other monitors). `None`: no entry.
    #[allow(clippy::type_complexity)]
    fn order_rows(
        &self,
        held_site: u32,
        site: u32,
    ) -> Option<([([u32; 2 + TRACKED_GUARDS], u8); ROWS], bool)> {
        let e = self.edges.get(&(held_site, site))?;
        let mut rows = [([0; 2 + TRACKED_GUARDS], u8::MAX); ROWS];
        let mut j = 0;
        for k in 0..e.len as usize {
            let g = e.guards[k].as_slice();
            if g.len() <= TRACKED_GUARDS {
                rows[j].0[0] = e.pairs[k].0;
                rows[j].0[1] = e.pairs[k].1;
                rows[j].0[2..2 + g.len()].copy_from_slice(g);
                rows[j].1 = k as u8;
                j += 1;
            }
        }
        Some((rows, e.len as usize == ROWS))
    }

    /// Occurrences the tracker counted in a slot of the pair of sites (`held_site`, `site`):
    /// `counts[j]` in row `rows[j]`, `counts[ROWS]` in the row of other monitors.
    fn add_orders(&mut self, held_site: u32, site: u32, rows: &[u8; ROWS], counts: &[i32]) {
        let e = self.edges.entry((held_site, site)).or_default();
        for (j, &c) in counts.iter().enumerate() {
            let c = c.max(0) as u64;
            if c == 0 {
                continue;
            }
            match rows
                .get(j)
                .map(|&k| k as usize)
                .filter(|&k| k < e.len as usize)
            {
                Some(k) => {
                    self.lines += (e.counts[k] == 0) as usize;
                    e.counts[k] += c;
                }
                None => {
                    self.lines += (e.other == 0) as usize;
                    e.other += c;
                }
            }
        }
    }

    /// The row `monitor`'s holds at `site` count in: its own if it has one, else a free one
    /// (of [`ROWS`]) in the site's first interval, or the interval's one trial row after
    /// that, else the site's "other monitors" row. Why a trial: a monitor that becomes hot at
    /// a busy site is found (the first new monitor held in an interval is most likely the
    /// busiest), and a stream of fresh or rotating objects gets one row, not four.
    /// Monitor 0 (a hold the tracker left unidentified, `tracking=sampled`) is always an
    /// other monitor's.
    fn row(&mut self, monitor: u32, site: u32) -> &mut HoldStat {
        let e = self.holds.entry(site).or_default();
        let n = e.len as usize;
        match e.monitors[..n].iter().position(|&m| m == monitor) {
            _ if monitor == 0 => &mut e.stats.other,
            Some(i) => &mut e.stats.rows[i],
            None if n < ROWS && !(e.seen && e.trial) => {
                e.trial |= e.seen;
                e.monitors[n] = monitor;
                e.len += 1;
                &mut e.stats.rows[n]
            }
            None => &mut e.stats.other,
        }
    }

    /// An outermost hold of `monitor`, taken at `site`, from `start` to `end`; `waited`: the
    /// thread waited on it meanwhile (the tracker knows; a wait on a monitor not held, which
    /// throws, is no pause of anything). A j.u.c. lock's hold has the lock's
    /// [`SiteBits`](crate::events::SiteBits) in its site (part of the key: the mode).
    pub fn hold(&mut self, monitor: u32, site: u32, start: u64, end: u64, waited: bool) {
        let mut ns = end.saturating_sub(start);
        if !self.pauses.is_empty() {
            let lock = site & SiteBits::Lock as u32 != 0;
            let mut paused = 0;
            self.pauses.retain(|p| {
                if p.monitor != monitor || p.lock != lock || p.since > end {
                    return true; // another monitor's, or a later hold's
                }
                if waited && p.since >= start {
                    paused += p.until.unwrap_or(end).min(end).saturating_sub(p.since);
                }
                false // this hold's, or stale (a wait that threw)
            });
            ns = ns.saturating_sub(paused);
        }
        if let Some(i) = self
            .long
            .iter()
            .position(|l| (l.0, l.1, l.2) == (monitor, site & !(SiteBits::Sampled as u32), end))
        {
            ns = self.long.swap_remove(i).3;
        }
        let stat = self.row(monitor, site);
        let new = stat.count == 0;
        stat.add(ns);
        self.lines += new as usize;
    }

    /// `n` outermost holds of `monitor` taken at `site`, ending at `end`, counted but not timed
    /// (`holdtiming=sampled`; `end` may be the coarse clock's; one tracker record stands for
    /// the holds of a site and monitor that ended in the same tick one after another).
    pub fn untimed_hold(&mut self, monitor: u32, site: u32, end: u64, waited: bool, n: u64) {
        if waited && !self.pauses.is_empty() {
            // Its waits are over: its pauses go, and those begun after its end stay, which
            // are a later hold's whose record is not drained yet (the pauses come at once, the
            // records a buffer later). A pause in the tick after a coarse end stays too: a
            // later hold takes it only if it began within that hold, else drops it as stale.
            // Dropping every finished pause here took the later holds' too, and a timed hold
            // after an untimed one kept its waits (ProdCons under tracking=full: ~30 s held
            // in a 5 s run, 4.2 s exactly).
            let lock = site & SiteBits::Lock as u32 != 0;
            self.pauses.retain(|p| {
                p.monitor != monitor || p.lock != lock || p.until.is_none() || p.since > end
            });
        }
        if let Some(i) = self
            .long
            .iter()
            .position(|l| (l.0, l.1, l.2) == (monitor, site & !(SiteBits::Sampled as u32), end))
        {
            self.long.swap_remove(i);
        }
        let stat = self.row(monitor, site);
        let new = stat.untimed == 0;
        stat.untimed += n;
        self.lines += new as usize;
    }

    /// How long the hold of `monitor` taken at `site` (its mode bits tell a j.u.c. lock's),
    /// from `start` to `end`, was paused by waits, as [`Summary::hold`] will count it.
    pub fn paused(&self, monitor: u32, site: u32, start: u64, end: u64) -> u64 {
        let lock = site & SiteBits::Lock as u32 != 0;
        self.pauses
            .iter()
            .filter(|p| p.monitor == monitor && p.lock == lock && p.since >= start)
            .filter(|p| p.since <= end)
            .map(|p| p.until.unwrap_or(end).min(end).saturating_sub(p.since))
            .sum()
    }

    /// A long hold of `monitor` taken at `site` (with a j.u.c. lock's mode bits), ending at
    /// `end`, was written as lasting `nanos`: its hold record, still to come, counts that.
    pub fn long_hold(&mut self, monitor: u32, site: u32, end: u64, nanos: u64) {
        if self.long.len() >= MAX_PAUSES {
            self.long.remove(0);
        }
        self.long.push((monitor, site, end, nanos));
    }

    /// The last summaries of a thread drained while it may still run (a detach, the JVM's
    /// exit): the long holds already written whose hold records have not come are counted
    /// now, with the lines' lengths. The tracker writes a long hold's line a few instructions
    /// before it puts the hold's record, so a drain in between would otherwise leave the line
    /// counted in no summary (the record, put after the drain, is late).
    pub fn count_written_long_holds(&mut self) {
        for (monitor, site, _, nanos) in std::mem::take(&mut self.long) {
            let stat = self.row(monitor, site);
            let new = stat.count == 0;
            stat.add(nanos);
            self.lines += new as usize;
        }
    }

    /// `Object.wait` on `object` released it (`lock`: `Condition.await` released j.u.c. lock
    /// `object`): its hold pauses.
    pub fn wait(&mut self, object: u32, lock: bool, nanos: u64) {
        if self.pauses.len() >= MAX_PAUSES {
            // Waits on monitors not held (they threw) are never claimed by a hold.
            self.pauses.remove(0);
        }
        self.pauses.push(Pause {
            monitor: object,
            lock,
            since: nanos,
            until: None,
        });
    }

    /// The wait returned: the monitor (or lock) is held again.
    pub fn waited(&mut self, object: u32, lock: bool, nanos: u64) {
        if let Some(p) = self
            .pauses
            .iter_mut()
            .rev()
            .find(|p| p.monitor == object && p.lock == lock && p.until.is_none())
        {
            p.until = Some(nanos);
        }
    }

    /// `calls` calls of `notify` (or `notifyAll`, `signal`, `signalAll`: `call`) at `site`
    /// that found no thread waiting.
    pub fn notified(&mut self, call: WakeCall, site: Frame, calls: u64) {
        let n = self.notifies.entry((call, site)).or_default();
        self.lines += (*n == 0) as usize;
        *n += calls;
    }

    /// A wait (`call`) on `object` at `stack` (its first frame is the site) that lasted `nanos`
    /// and is counted: less than `waitthreshold`, or long beyond its object's budget of
    /// written ones. Kept per stack as contentions are ([`CONTENTION_STACKS`] per site).
    pub fn waited_short(&mut self, call: WaitCall, object: u32, stack: &[Frame], nanos: u64) {
        let Some(&site) = stack.first() else { return };
        let rows = stack_rows(self.waits.entry((call, site)).or_default(), stack);
        let at = object_row(rows, object, &mut self.lines);
        let stat = &mut rows[at].1;
        stat.count += 1;
        stat.total += nanos;
        stat.max = stat.max.max(nanos);
    }

    /// A contended acquisition of `object` at `stack` (its first frame is the site; `mode`: of
    /// a j.u.c. lock; `None`: a monitor) that waited `nanos` and is counted instead of written.
    /// An empty stack is counted nowhere (a contention with no frame has no site).
    pub fn contended(&mut self, mode: Option<u8>, object: u32, stack: &[Frame], nanos: u64) {
        let Some(&site) = stack.first() else { return };
        let rows = stack_rows(self.contentions.entry((mode, site)).or_default(), stack);
        let row = object_row(rows, object, &mut self.lines);
        rows[row].1.add(nanos);
    }

    /// The interval's counted contentions, sorted (monitors first, then j.u.c. locks by
    /// mode; per site its stacks in the order they came, each one's row of others (0) last);
    /// the table starts over.
    pub fn take_contentions(&mut self) -> Vec<(ContentionKey, HoldStat)> {
        let mut v: Vec<_> = self
            .contentions
            .drain()
            .flat_map(|((mode, site), stacks)| {
                stacks
                    .into_iter()
                    .enumerate()
                    .flat_map(move |(i, (st, rows))| {
                        rows.into_iter()
                            .map(move |(o, c)| (i, (mode, site, st.clone(), o), c))
                    })
            })
            .collect();
        self.lines -= v.len().min(self.lines);
        v.sort_by_key(|&(i, (mode, f, _, o), _)| (mode, f.method, f.location, i, o == 0, o));
        v.into_iter().map(|(_, k, c)| (k, c)).collect()
    }

    /// The interval's short waits, sorted, each site's row of other objects (0) last; the
    /// table starts over.
    pub fn take_waits(&mut self) -> Vec<(WaitKey, WaitStat)> {
        let mut v: Vec<_> = self
            .waits
            .drain()
            .flat_map(|((call, site), stacks)| {
                stacks
                    .into_iter()
                    .enumerate()
                    .flat_map(move |(i, (st, rows))| {
                        rows.into_iter()
                            .map(move |(o, w)| (i, (call, site, st.clone(), o), w))
                    })
            })
            .collect();
        self.lines -= v.len().min(self.lines);
        v.sort_by_key(|&(i, (call, f, _, o), _)| (call, f.method, f.location, i, o == 0, o));
        v.into_iter().map(|(_, k, w)| (k, w)).collect()
    }

    /// The interval's counted `notify`/`notifyAll` calls, sorted; the table starts over.
    pub fn take_notifies(&mut self) -> Vec<((WakeCall, Frame), u64)> {
        let mut v: Vec<_> = self.notifies.drain().collect();
        self.lines -= v.len().min(self.lines);
        v.sort_by_key(|&((call, f), _)| (call, f.method, f.location));
        v
    }

    /// Lines the next [`Summary::take`] would give.
    pub fn pending_lines(&self) -> usize {
        self.lines
    }

    /// The interval's holds and edges, sorted (deterministic output), each site's row of other
    /// monitors (monitor 0) after its own rows; the tables start over, keeping the rows of hot
    /// monitors ([`HOT`], and for holds [`SHARE`]) and which sites had holds.
    #[allow(clippy::type_complexity)]
    pub fn take(&mut self) -> (Vec<((u32, u32), HoldStat)>, Vec<(EdgeKey, u64)>) {
        self.lines = self.notifies.len()
            + self
                .waits
                .values()
                .flat_map(|stacks| stacks.iter().map(|(_, rows)| rows.len()))
                .sum::<usize>()
            + self
                .contentions
                .values()
                .flat_map(|stacks| stacks.iter().map(|(_, rows)| rows.len()))
                .sum::<usize>();
        let mut holds = Vec::new();
        self.holds.retain(|&site, e| {
            let held = |s: &HoldStat| s.count + s.untimed;
            let rows = e.stats.rows[..e.len as usize].iter();
            let site_holds = rows.map(held).sum::<u64>() + held(&e.stats.other);
            let mut kept = 0;
            for k in 0..e.len as usize {
                let m = e.monitors[k];
                let stat = &mut e.stats.rows[k];
                if stat.count == 0 && stat.untimed == 0 {
                    continue; // kept for a monitor hot before, not held since: freed
                }
                let hot = held(stat) >= HOT && held(stat) * SHARE >= site_holds;
                holds.push(((m, site), std::mem::take(stat)));
                if hot && m != 0 {
                    // kept, with a count of 0 until its next hold
                    e.monitors[kept] = m;
                    kept += 1;
                }
            }
            e.len = kept as u8;
            let other = &mut e.stats.other;
            if other.count > 0 || other.untimed > 0 {
                holds.push(((0, site), std::mem::take(other)));
            }
            // A site without holds in the interval is forgotten: its next holds have a first
            // interval again (the table stays as large as the sites in use).
            e.seen = site_holds > 0;
            e.trial = false;
            kept > 0 || e.seen
        });
        // Monitor 0 (other monitors) sorts last.
        holds.sort_by_key(|&((m, site), _)| (m == 0, m, site));
        let mut edges = Vec::new();
        self.edges.retain(|&(held_site, acquired_site), e| {
            let mut kept = 0;
            for k in 0..e.len as usize {
                let count = std::mem::take(&mut e.counts[k]);
                if count == 0 {
                    continue; // kept for a monitor hot before, not held since: freed
                }
                let key = EdgeKey {
                    held: e.pairs[k].0,
                    acquired: e.pairs[k].1,
                    held_site,
                    acquired_site,
                    guards: e.guards[k].clone(),
                };
                edges.push((key, count));
                if count >= HOT {
                    // kept, with a count of 0 until its next occurrence
                    e.pairs[kept] = e.pairs[k];
                    e.guards.swap(kept, k);
                    kept += 1;
                }
            }
            e.len = kept as u8;
            if e.other > 0 {
                let key = EdgeKey {
                    held: 0,
                    acquired: 0,
                    held_site,
                    acquired_site,
                    guards: Guards::new(std::iter::empty()),
                };
                edges.push((key, std::mem::take(&mut e.other)));
            }
            kept > 0
        });
        edges.sort_by(|a, b| {
            (
                a.0.held == 0,
                a.0.held,
                a.0.acquired,
                a.0.held_site,
                a.0.acquired_site,
                a.0.guards.as_slice(),
            )
                .cmp(&(
                    b.0.held == 0,
                    b.0.held,
                    b.0.acquired,
                    b.0.held_site,
                    b.0.acquired_site,
                    b.0.guards.as_slice(),
                ))
        });
        (holds, edges)
    }
}

/// Slots of the lock-order table a thread's tracker makes ([`Sizes::OrderSlots`]), and
/// the most the agent gives one: a thread that nests at a few hundred pairs of sites (a
/// Derby client, about 200) needs a table several times that large, or its busy pairs
/// share slots and take them from one another at every drain.
const FIRST_SLOTS: usize = Sizes::OrderSlots as usize;
const MAX_SLOTS: usize = 4096;
/// Guards of the occurrences the tracker counts (one fewer than the monitors held).
const TRACKED_GUARDS: usize = Sizes::OrderHeld as usize - 1;
/// Ints per slot of the tracker's table (`Rec.ordKeys`): held site, acquired site, state,
/// filter, the counts (`OTHER`, then each row's), then the rows from `ROW`. (The agent's
/// copy, `OrderSlots::keys`, has a slot's ints in that order; the tracker's has them in two
/// parts: see [`tracker_index`].)
const KEY: usize = Sizes::OrderKey as usize;
const OTHER: usize = 4;
const ROW: usize = OTHER + 1 + ROWS;
/// The ints of a slot the tracker reads for every occurrence it counts (held site, acquired
/// site, state, filter, the other monitors' count), which its table keeps together, `SLOT_HOT`
/// per slot from index 0; the rest of each slot (the rows' counts and keys) follows the
/// last slot's. Why: a nested acquisition of a fresh monitor (the common case) reads those
/// five ints of each monitor held's slot; packed, a thread's busy slots share cache lines
/// (a slot of 25 ints was two lines of its own), and Derby's working set evicts them
/// between transactions.
const SLOT_HOT: usize = Sizes::OrderHot as usize;
const _: () = assert!(SLOT_HOT == OTHER + 1);

/// Where int `i` of slot `k` (in the order of [`KEY`]) is in the tracker's table of `slots`
/// slots (`OrcaOrderSlots.edge` in java-tracker/ computes the same).
fn tracker_index(slots: usize, k: usize, i: usize) -> usize {
    if i < SLOT_HOT {
        k * SLOT_HOT + i
    } else {
        slots * SLOT_HOT + k * (KEY - SLOT_HOT) + (i - SLOT_HOT)
    }
}

/// The slot of a pair of raw site IDs (held, acquired), before the table's mask: one
/// definition with the tracker's constants (`OrcaOrderSlots.orderSlot`).
pub use crate::events::order_slot;

/// What the agent tells a thread's tracker of its lock-order rows, so that the tracker counts
/// the common nested acquisition itself (`OrcaOrderSlots.orderCounted` in java-tracker/): per pair of raw
/// site IDs (held, acquired), direct-mapped, the (held, acquired, guards) keys with a row of
/// their own and at most [`TRACKED_GUARDS`] guards, and whether the rows are full. Why: every
/// nested acquisition was a record (one, then one per monitor held) that the agent drained
/// and looked up (`Summary::order`, the drain, `Sites::canonical`), an eighth of Derby's
/// time, which takes 425 a transaction, nearly all of them under one to three monitors and
/// going to rows that exist or to the rows of other monitors.
///
/// Correct because a pair's rows are only ever added to until [`Summary::take`]: a slot
/// published earlier in the interval names rows that still exist, and rows full stay full;
/// an occurrence that may take a row is still a record, decided here in order. So the
/// summaries are those the records would make. The slots are cleared when the summaries are
/// taken ([`OrderSlots::clear`]); the counts are added at every drain, before its records.
#[derive(Debug)]
pub struct OrderSlots {
    /// Slots of the tracker's table (a power of two).
    slots: usize,
    /// The tracker's `ordKeys` as last published.
    keys: Vec<i32>,
    /// Per slot: the pair of sites the summaries count it under, and each published row's
    /// index in its entry.
    shadow: Vec<((u32, u32), [u8; ROWS])>,
    /// Slots in use (published since the last clear), and those to write to the tracker
    /// (`stale[k]`: k is in `dirty`). The tracker's arrays are read and written only there:
    /// a busy thread's table has thousands of slots, of which it uses a few hundred.
    used: Vec<u32>,
    dirty: Vec<u32>,
    stale: Vec<bool>,
    /// Slots taken from another pair of sites since the table last grew.
    evictions: usize,
    /// Occurrences counted by the tracker, and by the agent from records, since last taken.
    pub in_tracker: u64,
    pub recorded: u64,
}

impl Default for OrderSlots {
    fn default() -> Self {
        let mut s = OrderSlots {
            slots: 0,
            keys: Vec::new(),
            shadow: Vec::new(),
            used: Vec::new(),
            dirty: Vec::new(),
            stale: Vec::new(),
            evictions: 0,
            in_tracker: 0,
            recorded: 0,
        };
        s.resize(FIRST_SLOTS);
        s
    }
}

impl OrderSlots {
    /// An empty table of `slots` slots.
    fn resize(&mut self, slots: usize) {
        self.slots = slots;
        self.keys = vec![0; slots * KEY];
        self.shadow = vec![((0, 0), [u8::MAX; ROWS]); slots];
        self.stale = vec![false; slots];
        self.used.clear();
        self.dirty.clear();
        self.evictions = 0;
    }

    /// After a record's occurrence of held site `held_site` and acquired site `site` (the
    /// record's raw IDs; `canon`: the pair the summaries count it under) was counted: its
    /// slot says what the pair's rows are now.
    pub fn publish(&mut self, summary: &Summary, held_site: u32, site: u32, canon: (u32, u32)) {
        let Some((rows, full)) = summary.order_rows(canon.0, canon.1) else {
            return;
        };
        let k = order_slot(held_site, site) & (self.slots - 1);
        let slot = &mut self.keys[k * KEY..(k + 1) * KEY];
        let mut new = [0i32; KEY];
        new[0] = held_site as i32;
        new[1] = site as i32;
        new[2] = if full { 2 } else { 1 };
        let mut index = [u8::MAX; ROWS];
        let width = 2 + TRACKED_GUARDS;
        for (j, &(key, i)) in rows.iter().enumerate() {
            if i != u8::MAX {
                for (w, &v) in key.iter().enumerate() {
                    new[ROW + width * j + w] = v as i32;
                }
                new[3] |= 1 << (key[1] & 31);
                index[j] = i;
            }
        }
        if slot[..] != new[..] {
            if slot[2] == 0 {
                self.used.push(k as u32);
            } else if slot[..2] != new[..2] {
                self.evictions += 1;
            }
            slot.copy_from_slice(&new);
            if !self.stale[k] {
                self.stale[k] = true;
                self.dirty.push(k as u32);
            }
        }
        self.shadow[k] = (canon, index);
    }

    /// Whether the table should grow (to [`OrderSlots::grow`]'s size): its pairs of sites
    /// took one another's slots more often than it has pairs, and fill a sixteenth of it.
    /// Why a sixteenth: pairs placed at random share slots as a table fills (n pairs in m
    /// slots: about n² / 2m collisions), and a pair whose slot another took is a record at
    /// every occurrence until the next drain gives it back. A Derby client (about 200 pairs)
    /// stopped at 2,048 slots when it grew while they filled a quarter, and 14-16% of its
    /// lock orders were records; at 4,096 5-7% (JDK 17, `DbBench derby 4 steady`).
    pub fn crowded(&self) -> bool {
        self.slots < MAX_SLOTS
            && self.evictions > self.used.len()
            && self.used.len() * 16 > self.slots
    }

    /// A table four times larger, empty (the caller gives the tracker new arrays, after the
    /// counts were added: nothing is counted in the old ones); its size.
    pub fn grow(&mut self) -> usize {
        self.resize((self.slots * 4).min(MAX_SLOTS));
        self.slots
    }

    /// Whether the tracker may have counted anything.
    pub fn active(&self) -> bool {
        !self.used.is_empty()
    }

    /// Adds the counts in the tracker's table (its `ordKeys`) to the summaries, and with
    /// `zero` sets them back to 0; whether there were any.
    pub fn fold(&mut self, summary: &mut Summary, table: &mut [i32], zero: bool) -> bool {
        let mut any = false;
        if table.len() < self.slots * KEY {
            return false;
        }
        for &k in &self.used {
            let k = k as usize;
            // the rows' counts, then the other monitors'
            let other = tracker_index(self.slots, k, OTHER);
            let first = tracker_index(self.slots, k, OTHER + 1);
            let mut counts = [0; ROWS + 1];
            counts[..ROWS].copy_from_slice(&table[first..first + ROWS]);
            counts[ROWS] = table[other];
            if counts.iter().all(|&n| n == 0) {
                continue;
            }
            any = true;
            self.in_tracker += counts.iter().map(|&n| n.max(0) as u64).sum::<u64>();
            let ((hs, s), rows) = self.shadow[k];
            summary.add_orders(hs, s, &rows, &counts);
            if zero {
                table[other] = 0;
                table[first..first + ROWS].fill(0);
            }
        }
        any
    }

    /// Whether slots changed since they were last written to the tracker.
    pub fn dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Writes the slots that changed into the tracker's `ordKeys`, all but their counts
    /// (added and set to 0 before, or, at exit, left to the tracker).
    pub fn write_keys(&mut self, table: &mut [i32]) {
        let fits = table.len() >= self.slots * KEY;
        for k in self.dirty.drain(..) {
            let k = k as usize;
            self.stale[k] = false;
            if !fits {
                continue;
            }
            let (at, to) = (k * KEY, (k + 1) * KEY);
            let hot = tracker_index(self.slots, k, 0);
            table[hot..hot + OTHER].copy_from_slice(&self.keys[at..at + OTHER]);
            let rows = tracker_index(self.slots, k, ROW);
            table[rows..rows + (KEY - ROW)].copy_from_slice(&self.keys[at + ROW..to]);
        }
    }

    /// The summaries were taken: no row is known any more (the slots, once written, empty).
    pub fn clear(&mut self) {
        for k in std::mem::take(&mut self.used) {
            let k = k as usize;
            self.keys[k * KEY..(k + 1) * KEY].fill(0);
            if !self.stale[k] {
                self.stale[k] = true;
                self.dirty.push(k as u32);
            }
        }
    }
}

/// The rows of [`Summary::take`] with each site resolved to its place by `place` (`None`:
/// left out), the rows of site IDs that stand for the same place summed into the first's
/// (order kept: the rows of other monitors stay last), so that a flush has one line per key.
///
/// Why: the summaries count holds under one site ID per place
/// ([`Sites::canonical`](crate::recorder::sites::Sites::canonical)), except a site counted
/// before it was bound, which is its own; two lines of one key would be an error (orca check).
pub fn by_place<P: Copy + Eq + Hash>(
    holds: Vec<((u32, u32), HoldStat)>,
    mut place: impl FnMut(u32) -> Option<P>,
) -> Vec<((u32, u32, P), HoldStat)> {
    let mut out: Vec<((u32, u32, P), HoldStat)> = Vec::with_capacity(holds.len());
    let mut index: FastMap<(u32, u32, P), usize> = FastMap::default();
    for ((monitor, site), stat) in holds {
        let Some(p) = place(site & SiteBits::Mask as u32) else {
            continue;
        };
        // the mode bits are part of the key
        let key = (monitor, site & !(SiteBits::Mask as u32), p);
        match index.get(&key) {
            Some(&i) => out[i].1.merge(&stat),
            None => {
                index.insert(key, out.len());
                out.push(((monitor, site, p), stat));
            }
        }
    }
    out
}

/// The edges of [`Summary::take`] with both sites resolved to their places, those of one
/// (held, acquired, guards, places) summed (see [`by_place`]).
pub fn edges_by_place<P: Copy + Eq + Hash>(
    edges: Vec<(EdgeKey, u64)>,
    mut place: impl FnMut(u32) -> Option<P>,
) -> Vec<(EdgeKey, P, P, u64)> {
    let mut out: Vec<(EdgeKey, P, P, u64)> = Vec::with_capacity(edges.len());
    let mut index: HashMap<(u32, u32, Guards, P, P), usize, BuildHasherDefault<FastHasher>> =
        HashMap::default();
    for (k, count) in edges {
        let (Some(held), Some(acquired)) = (place(k.held_site), place(k.acquired_site)) else {
            continue;
        };
        let key = (k.held, k.acquired, k.guards.clone(), held, acquired);
        match index.get(&key) {
            Some(&i) => out[i].3 += count,
            None => {
                index.insert(key, out.len());
                out.push((k, held, acquired, count));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_ids_of_one_place_make_one_row() {
        // Sites 1 and 7 are one place (a walked ID and the rewriter's); 3 another. A long
        // hold counted under 7 must be in the one line of the key.
        let lock = SiteBits::Lock as u32;
        let mut s = Summary::starting(0);
        s.hold(0xA, 1 | lock, 0, 100, false);
        s.hold(0xA, 7 | lock, 0, 11_000_000, false);
        s.hold(0xA, 3 | lock, 0, 50, false);
        s.hold(0xA, 1, 0, 70, false); // a monitor's, another key
        s.order(0xB, 7, [(0xA, 1)].into_iter());
        s.order(0xB, 1, [(0xA, 7)].into_iter());
        let (holds, edges) = s.take();
        let place = |site: u32| Some(if site == 7 { 1 } else { site });
        let rows = by_place(holds, place);
        assert_eq!(rows.len(), 3, "{rows:?}");
        let merged = &rows
            .iter()
            .find(|((m, site, p), _)| (*m, site & lock, *p) == (0xA, lock, 1))
            .unwrap()
            .1;
        assert_eq!(
            (merged.count, merged.total, merged.max),
            (2, 11_000_100, 11_000_000)
        );
        assert_eq!(
            merged.histogram(),
            vec![(bucket(100), 1), (bucket(11_000_000), 1)]
        );
        let edges = edges_by_place(edges, place);
        assert_eq!(edges.len(), 1);
        assert_eq!((edges[0].1, edges[0].2, edges[0].3), (1, 1, 2));
    }

    #[test]
    fn buckets_are_the_formats() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(63), 63);
        assert_eq!(bucket(64), 64);
        assert_eq!(bucket(127), 127);
        assert_eq!(bucket(128), 128);
        assert_eq!(bucket(129), 128);
        assert_eq!(bucket(130), 129);
        // monotonic
        let mut last = 0;
        for v in (0..1_000_000u64).step_by(7) {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
        }
    }

    #[test]
    fn an_untimed_hold_leaves_the_pauses_of_the_later_holds() {
        let mut s = Summary::default();
        // Two holds of one lock, each with an await, drained after both awaits: the first
        // counted only, the second timed.
        s.wait(7, true, 110);
        s.waited(7, true, 150);
        s.wait(7, true, 310);
        s.waited(7, true, 390);
        s.untimed_hold(7, 70 | SiteBits::Lock as u32, 200, true, 1);
        s.hold(7, 70 | SiteBits::Lock as u32, 300, 400, true); // 100 less the 80 awaited
        let (holds, _) = s.take();
        let h = &holds
            .iter()
            .find(|(k, _)| *k == (7, 70 | SiteBits::Lock as u32))
            .unwrap_or_else(|| panic!("{holds:?}"))
            .1;
        assert_eq!((h.count, h.total, h.untimed), (1, 20, 1), "{holds:?}");
    }

    #[test]
    fn holds_leave_out_their_waits() {
        let mut s = Summary::default();
        s.hold(1, 10, 100, 160, false);
        s.wait(1, false, 170);
        s.waited(1, false, 370);
        s.hold(1, 10, 100, 400, true); // 300 less the 200 waited
        s.wait(2, false, 500);
        s.waited(2, false, 510);
        s.wait(2, false, 520);
        s.waited(2, false, 550);
        s.hold(2, 20, 480, 600, true); // 120 less 10 and 30
        s.hold(2, 20, 600, 610, true); // the pauses were the last hold's
        s.wait(3, false, 700); // not held: it throws
        s.waited(3, false, 705);
        s.hold(3, 30, 800, 900, false); // no pause of this hold
                                        // Records drained after later waits: each hold takes the pauses within it.
        s.wait(4, false, 1010);
        s.waited(4, false, 1020);
        s.wait(4, false, 1110);
        s.waited(4, false, 1150);
        s.hold(4, 40, 1000, 1050, true); // 50 less 10
        s.hold(4, 40, 1060, 1070, false);
        s.hold(4, 40, 1100, 1200, true); // 100 less 40
        let (holds, edges) = s.take();
        assert!(edges.is_empty());
        assert_eq!(holds.len(), 4);
        assert_eq!(holds[0].0, (1, 10));
        assert_eq!((holds[0].1.count, holds[0].1.total), (2, 160));
        assert_eq!(holds[1].0, (2, 20));
        assert_eq!(
            (holds[1].1.count, holds[1].1.total, holds[1].1.max),
            (2, 90, 80)
        );
        assert_eq!(holds[2].0, (3, 30));
        assert_eq!(holds[2].1.total, 100);
        assert_eq!(holds[3].0, (4, 40));
        assert_eq!((holds[3].1.count, holds[3].1.total), (3, 40 + 10 + 60));
        assert_eq!(s.pending_lines(), 0);
    }

    #[test]
    fn a_long_hold_counts_as_long_as_its_line_says() {
        let mut s = Summary::default();
        // The tracker took 10 ns of await out of this hold, the events 12.
        s.wait(5, true, 1_010);
        s.waited(5, true, 1_022);
        s.long_hold(5, 77, 2_000, 990);
        s.hold(5, 77, 1_000, 2_000, true);
        let (holds, _) = s.take();
        assert_eq!((holds[0].1.max, holds[0].1.total), (990, 990));
        // Another hold of the same key, not written as long: computed as ever.
        s.hold(5, 77, 3_000, 3_100, false);
        let (holds, _) = s.take();
        assert_eq!(holds[0].1.total, 100);
    }

    #[test]
    fn a_site_has_rows_for_a_few_monitors_and_one_for_the_rest() {
        let mut s = Summary::default();
        // A fresh object per hold at site 10 (Derby's rows), and one busy monitor (7) that
        // comes after the rows are taken.
        for m in 100..200 {
            s.hold(m, 10, 0, 5, false);
        }
        for _ in 0..HOT {
            s.hold(7, 10, 0, 3, false);
        }
        assert_eq!(s.pending_lines(), ROWS + 1);
        let (holds, _) = s.take();
        let rows: Vec<_> = holds.iter().map(|(k, h)| (*k, h.count)).collect();
        assert_eq!(
            rows,
            vec![
                ((100, 10), 1),
                ((101, 10), 1),
                ((102, 10), 1),
                ((103, 10), 1),
                ((0, 10), 96 + HOT)
            ]
        );
        // Every hold is counted once, whatever row it is in.
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), 100 + HOT);
        // Next interval: the fresh objects' rows are free again, and the site had holds: the
        // first new monitor, 7, gets the interval's one trial row, the rest the other row.
        for _ in 0..HOT {
            s.hold(7, 10, 0, 3, false);
        }
        for m in 200..300 {
            s.hold(m, 10, 0, 5, false);
        }
        let (holds, _) = s.take();
        let rows: Vec<_> = holds.iter().map(|(k, h)| (*k, h.count)).collect();
        assert_eq!(rows, vec![((7, 10), HOT), ((0, 10), 100)]);
        // 7 was hot (HOT holds, more than an eighth of the site's): its row is kept for it,
        // and the first fresh object has the trial row.
        for m in 300..400 {
            s.hold(m, 10, 0, 5, false);
        }
        s.hold(7, 10, 0, 3, false);
        let (holds, _) = s.take();
        let rows: Vec<_> = holds.iter().map(|(k, h)| (*k, h.count)).collect();
        assert_eq!(rows, vec![((7, 10), 1), ((300, 10), 1), ((0, 10), 99)]);
        // 7 had less than an eighth of the site's holds: its row is not kept, nor is 300's.
        for m in 400..500 {
            s.hold(m, 10, 0, 5, false);
        }
        let (holds, _) = s.take();
        let rows: Vec<_> = holds.iter().map(|(k, h)| (*k, h.count)).collect();
        assert_eq!(rows, vec![((400, 10), 1), ((0, 10), 99)]);
        // HOT holds but less than an eighth of the site's (16 of 216): 7 has the trial row
        // and keeps no row, so the next interval's first new monitor (600) has the trial.
        for _ in 0..HOT {
            s.hold(7, 10, 0, 3, false);
        }
        for m in 400..600 {
            s.hold(m, 10, 0, 5, false);
        }
        let (holds, _) = s.take();
        assert_eq!(holds[0].0, (7, 10));
        s.hold(600, 10, 0, 5, false);
        s.hold(7, 10, 0, 3, false);
        let (holds, _) = s.take();
        let rows: Vec<_> = holds.iter().map(|(k, h)| (*k, h.count)).collect();
        assert_eq!(rows, vec![((600, 10), 1), ((0, 10), 1)]);
        // Not hot any more, and not held: nothing is kept.
        let (holds, _) = s.take();
        assert!(holds.is_empty());
        assert_eq!(s.pending_lines(), 0);
    }

    #[test]
    fn lock_orders_between_many_monitors_stay_a_few_lines_per_pair_of_sites() {
        let mut s = Summary::default();
        for m in 0..1000u32 {
            // held 1000+m at site 1, then 5000+m at site 2: a million objects in one order
            s.order(5000 + m, 2, [(1000 + m, 1)].into_iter());
        }
        s.order(3, 2, [(1, 1)].into_iter());
        let (_, edges) = s.take();
        let e: Vec<_> = edges
            .iter()
            .map(|(k, n)| (k.held, k.acquired, k.held_site, k.acquired_site, *n))
            .collect();
        assert_eq!(
            e,
            vec![
                (1000, 5000, 1, 2, 1),
                (1001, 5001, 1, 2, 1),
                (1002, 5002, 1, 2, 1),
                (1003, 5003, 1, 2, 1),
                (0, 0, 1, 2, 997)
            ]
        );
        assert!(edges.last().unwrap().0.guards.as_slice().is_empty());
    }

    /// (held, acquired, held site, acquired site, guards, count) of each edge row.
    #[allow(clippy::type_complexity)]
    fn edge_rows(edges: &[(EdgeKey, u64)]) -> Vec<(u32, u32, u32, u32, Vec<u32>, u64)> {
        edges
            .iter()
            .map(|(k, n)| {
                (
                    k.held,
                    k.acquired,
                    k.held_site,
                    k.acquired_site,
                    k.guards.as_slice().to_vec(),
                    *n,
                )
            })
            .collect()
    }

    #[test]
    fn a_hot_pair_keeps_its_lock_order_row_in_the_next_interval() {
        let mut s = Summary::default();
        let held = [(1, 10), (9, 90)];
        for _ in 0..HOT {
            s.order(2, 20, held.into_iter()); // hot: (1, 2) guarded by 9, (9, 2) by 1
        }
        s.order(3, 20, held.into_iter()); // one occurrence: its rows are freed
        assert_eq!(s.take().1.len(), 4);
        // The next interval: fresh monitors take every free row and more.
        for m in 100..110 {
            s.order(m, 20, held.into_iter());
        }
        s.order(2, 20, held.into_iter());
        let e = edge_rows(&s.take().1);
        assert_eq!(
            e,
            vec![
                (1, 2, 10, 20, vec![9], 1),
                (1, 100, 10, 20, vec![9], 1),
                (1, 101, 10, 20, vec![9], 1),
                (1, 102, 10, 20, vec![9], 1),
                (9, 2, 90, 20, vec![1], 1),
                (9, 100, 90, 20, vec![1], 1),
                (9, 101, 90, 20, vec![1], 1),
                (9, 102, 90, 20, vec![1], 1),
                (0, 0, 10, 20, vec![], 7),
                (0, 0, 90, 20, vec![], 7),
            ]
        );
        // Nothing was hot in that interval: the tables are empty after it.
        assert!(s.edges.is_empty());
    }

    /// The tracker's side of [`OrderSlots`] (`Rec.orderCounted` and `Rec.edge` in java-tracker/):
    /// where each occurrence of an acquisition of `monitor` at `site` under `held` counts,
    /// or `None` (a record).
    fn tracker_counts(
        keys: &[i32],
        mask: usize,
        held: &[(u32, u32)],
        monitor: u32,
        site: u32,
    ) -> Option<Vec<usize>> {
        if held.is_empty() || held.len() > TRACKED_GUARDS + 1 {
            return None;
        }
        let mut at = Vec::new();
        let at_ = |k, i| tracker_index(mask + 1, k, i);
        for (i, &(h, hs)) in held.iter().enumerate() {
            let k = order_slot(hs, site) & mask;
            let b = at_(k, 0);
            if keys[b + 2] == 0 || keys[b] != hs as i32 || keys[b + 1] != site as i32 {
                return None;
            }
            let mut want = [h as i32, monitor as i32, 0, 0];
            for (w, g) in held
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, g)| g.0)
                .enumerate()
            {
                want[2 + w] = g as i32;
            }
            let filter = keys[b + 3] & (1 << (monitor & 31)) != 0;
            let r = at_(k, ROW);
            let row = (0..ROWS).find(|&j| filter && keys[r + 4 * j..r + 4 + 4 * j] == want);
            match row {
                Some(j) => at.push(at_(k, OTHER + 1 + j)),
                None if keys[b + 2] == 2 => at.push(at_(k, OTHER)),
                None => return None,
            }
        }
        Some(at)
    }

    /// A thread's nested acquisitions counted partly by the tracker in its slots (published
    /// at each drain, cleared at each take, the table growing when crowded) make the
    /// summaries the records alone make: the same rows, the same counts.
    #[test]
    fn occurrences_the_tracker_counts_make_the_summaries_records_make() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as u32
        };
        let mut by_records = Summary::default();
        let mut summary = Summary::default();
        let mut slots = OrderSlots::default();
        // The tracker's arrays.
        let mut keys = vec![0i32; slots.slots * KEY];
        // Records not drained yet: (monitor, site, held).
        type Held = Vec<(u32, u32)>;
        let mut buffer: Vec<(u32, u32, Held)> = Vec::new();
        let (mut in_tracker, mut edges) = (0, 0);
        // The program's nestings: 300 (sites held, site acquired), 1 to 4 monitors held, of
        // 40 sites, where long-lived monitors (1..=6) or fresh ones are taken.
        let patterns: Vec<(Vec<u32>, u32)> = (0..300)
            .map(|_| {
                let depth = 1 + next(4) as usize;
                ((0..depth).map(|_| 1 + next(40)).collect(), 1 + next(40))
            })
            .collect();
        for step in 0..300_000u32 {
            let (sites, site) = &patterns[next(300) as usize];
            let site = *site;
            let mut held: Vec<(u32, u32)> = Vec::new();
            for &hs in sites {
                let m = if next(3) == 0 {
                    1 + next(6)
                } else {
                    1000 + next(1_000_000)
                };
                if !held.iter().any(|h| h.0 == m) {
                    held.push((m, hs));
                }
            }
            let monitor = if next(4) == 0 {
                1 + next(6)
            } else {
                2_000_000 + step
            };
            if held.iter().any(|h| h.0 == monitor) {
                continue;
            }
            by_records.order(monitor, site, held.iter().copied());
            edges += held.len() as u64;
            match tracker_counts(&keys, slots.slots - 1, &held, monitor, site) {
                Some(at) => {
                    for c in at {
                        keys[c] += 1;
                        in_tracker += 1;
                    }
                }
                None => buffer.push((monitor, site, held)),
            }
            // A drain now and then: counts first, then the records, then the slots told.
            if next(64) == 0 {
                slots.fold(&mut summary, &mut keys, true);
                for (monitor, site, held) in buffer.drain(..) {
                    summary.order(monitor, site, held.iter().copied());
                    if held.len() <= TRACKED_GUARDS + 1 {
                        for &(_, hs) in &held {
                            slots.publish(&summary, hs, site, (hs, site));
                        }
                    }
                }
                if slots.crowded() {
                    keys = vec![0; slots.grow() * KEY];
                }
                slots.write_keys(&mut keys);
                // An interval ends now and then.
                if next(200) == 0 {
                    assert_eq!(summary.pending_lines(), by_records.pending_lines());
                    assert_eq!(summary.take(), by_records.take(), "step {step}");
                    slots.clear();
                    slots.write_keys(&mut keys);
                    assert!(keys.iter().all(|&k| k == 0));
                }
            }
        }
        slots.fold(&mut summary, &mut keys, true);
        for (monitor, site, held) in buffer.drain(..) {
            summary.order(monitor, site, held.iter().copied());
        }
        assert_eq!(summary.take(), by_records.take());
        assert_eq!(slots.in_tracker, in_tracker);
        // Many were the tracker's (not those under 4 monitors), and the table grew.
        assert!(in_tracker * 5 > edges * 2, "{in_tracker} of {edges}");
        assert!(slots.slots > FIRST_SLOTS);
    }

    #[test]
    fn guards_beyond_the_inline_ones_are_kept_in_order() {
        let held: Vec<u32> = (1..=6).collect();
        let g = Guards::new(held.iter().copied());
        assert!(matches!(g, Guards::Heap(_)));
        assert_eq!(g.as_slice(), &held[..]);
        let few = Guards::new([7, 8].into_iter());
        assert_eq!(few.as_slice(), &[7, 8]);
        assert_eq!(few, Guards::new([7, 8].into_iter()));
        assert_ne!(few, Guards::new([7, 8, 0].into_iter()));
    }

    #[test]
    fn guards_are_the_other_monitors_held() {
        let mut s = Summary::default();
        s.order(2, 20, [(1, 10)].into_iter());
        s.order(3, 30, [(1, 10), (2, 20)].into_iter());
        s.order(3, 30, [(1, 10), (2, 20)].into_iter());
        let e = edge_rows(&s.take().1);
        assert_eq!(
            e,
            vec![
                (1, 2, 10, 20, vec![], 1),
                (1, 3, 10, 30, vec![2], 2),
                (2, 3, 20, 30, vec![1], 2)
            ]
        );
    }

    #[test]
    fn histogram_sums_to_count() {
        let mut h = HoldStat::default();
        for v in [5, 5, 1000, 70, 1_000_000] {
            h.add(v);
        }
        let hist = h.histogram();
        assert_eq!(hist.iter().map(|e| e.1).sum::<u64>(), 5);
        assert!(hist.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(hist[0], (5, 2));
        assert_eq!(hist.last().unwrap().0, bucket(1_000_000));
        assert_eq!(h.max, 1_000_000);
        let mut top = HoldStat::default();
        top.add(u64::MAX);
        assert_eq!(top.histogram(), vec![(bucket(u64::MAX), 1)]);
        // Past the inline buckets: the same counts from the range, grown both ways.
        let mut many = HoldStat::default();
        let values: Vec<u64> = (0..200)
            .map(|i| 100 + i * 997)
            .rev()
            .chain([7, 1 << 40])
            .collect();
        for &v in values.iter().chain(&values) {
            many.add(v);
        }
        let mut want: Vec<(u32, u64)> = Vec::new();
        for &v in &values {
            match want.iter_mut().find(|e| e.0 == bucket(v)) {
                Some(e) => e.1 += 2,
                None => want.push((bucket(v), 2)),
            }
        }
        want.sort_unstable();
        assert_eq!(many.histogram(), want);
    }

    /// Holds not timed are counted in the row their monitor has (or the row of other
    /// monitors), apart from the timed ones, and keep a hot monitor's row like them; a record
    /// that stands for several counts them all.
    #[test]
    fn untimed_holds_are_counted_in_their_row() {
        let mut s = Summary::starting(0);
        s.hold(1, 10, 100, 150, false);
        s.untimed_hold(1, 10, 200, false, HOT - 3);
        for _ in 0..3 {
            s.untimed_hold(1, 10, 200, false, 1);
        }
        for m in 2..=6 {
            s.untimed_hold(m, 10, 300, false, 1);
        }
        // Monitor 1: a timed and an untimed line; 2, 3, 4: an untimed line; the others: one.
        assert_eq!(s.pending_lines(), 2 + 3 + 1);
        let (holds, _) = s.take();
        let rows: Vec<_> = holds
            .iter()
            .map(|((m, site), h)| (*m, *site, h.count, h.total, h.untimed))
            .collect();
        assert_eq!(
            rows,
            vec![
                (1, 10, 1, 50, HOT),
                (2, 10, 0, 0, 1),
                (3, 10, 0, 0, 1),
                (4, 10, 0, 0, 1),
                (0, 10, 0, 0, 2),
            ]
        );
        // Monitor 1 was hot: its row is kept (and, not held, freed at the next take); the
        // others' are free again, and the site had holds: one trial row, the first new
        // monitor's.
        for m in [5, 6, 7, 8] {
            s.untimed_hold(m, 10, 400, false, 1);
        }
        let (holds, _) = s.take();
        let monitors: Vec<u32> = holds.iter().map(|((m, _), _)| *m).collect();
        assert_eq!(monitors, vec![5, 0]);
    }
    /// Counted contentions: per site (and mode) 4 monitors with rows of their own, the rest
    /// in the row of others (0) written last; monitors and j.u.c. modes are apart; counts,
    /// totals, maxima and histograms are exact; the table starts over, and pending lines
    /// count its rows.
    #[test]
    fn contentions_have_rows_for_a_few_monitors_and_one_for_the_rest() {
        let site = Frame {
            method: 9,
            location: 4,
        };
        let mut s = Summary::starting(0);
        for m in 1..=6u32 {
            s.contended(None, m, &[site], 1000 * m as u64);
        }
        s.contended(None, 2, &[site], 70);
        s.contended(Some(b'W'), 1, &[site], 5);
        assert_eq!(s.pending_lines(), WAIT_ROWS + 1 + 1);
        let v = s.take_contentions();
        let rows: Vec<(Option<u8>, u32, u64, u64, u64)> = v
            .iter()
            .map(|((mode, _, _, m), c)| (*mode, *m, c.count, c.total, c.max))
            .collect();
        assert_eq!(
            rows,
            vec![
                (None, 1, 1, 1000, 1000),
                (None, 2, 2, 2070, 2000),
                (None, 3, 1, 3000, 3000),
                (None, 4, 1, 4000, 4000),
                (None, 0, 2, 11000, 6000),
                (Some(b'W'), 1, 1, 5, 5),
            ]
        );
        assert_eq!(v[1].1.histogram(), vec![(70, 1), (bucket(2000), 1)]);
        assert_eq!(s.pending_lines(), 0);
        assert!(s.take_contentions().is_empty());
    }

    /// Counted contentions keep their stacks apart, up to [`CONTENTION_STACKS`] per site; the
    /// contentions of further stacks are counted under the site's frame alone, none lost.
    #[test]
    fn contentions_keep_a_few_stacks_per_site_and_count_the_rest_at_the_site() {
        let f = |method, location| Frame { method, location };
        let site = f(9, 4);
        let mut s = Summary::starting(0);
        let stacks: Vec<Vec<Frame>> = (0..CONTENTION_STACKS as u32 + 3)
            .map(|c| vec![site, f(100 + c, 7)])
            .collect();
        for (i, st) in stacks.iter().enumerate() {
            s.contended(None, 1, st, 10 + i as u64);
        }
        s.contended(None, 1, &stacks[0], 5);
        let v = s.take_contentions();
        let got: Vec<(Vec<Frame>, u64, u64)> = v
            .iter()
            .map(|((_, at, st, _), c)| {
                assert_eq!(*at, site);
                (st.to_vec(), c.count, c.total)
            })
            .collect();
        let mut want: Vec<(Vec<Frame>, u64, u64)> = (0..CONTENTION_STACKS)
            .map(|i| (stacks[i].clone(), 1, 10 + i as u64))
            .collect();
        want[0] = (stacks[0].clone(), 2, 15);
        let n = CONTENTION_STACKS as u64;
        want.push((vec![site], 3, (10 + n) + (11 + n) + (12 + n)));
        assert_eq!(got, want);
    }

    /// Counted waits keep their stacks apart as contentions do: two callers of one wait site
    /// are two rows.
    #[test]
    fn waits_keep_their_stacks() {
        let f = |method, location| Frame { method, location };
        let site = f(3, 1);
        let mut s = Summary::starting(0);
        s.waited_short(WaitCall::Wait, 5, &[site, f(7, 2)], 100);
        s.waited_short(WaitCall::Wait, 5, &[site, f(8, 2)], 200);
        s.waited_short(WaitCall::Wait, 5, &[site, f(7, 2)], 300);
        let v = s.take_waits();
        let got: Vec<(Vec<Frame>, u64, u64)> = v
            .iter()
            .map(|((_, _, st, _), w)| (st.to_vec(), w.count, w.total))
            .collect();
        assert_eq!(
            got,
            vec![(vec![site, f(7, 2)], 2, 400), (vec![site, f(8, 2)], 1, 200)]
        );
    }
}
