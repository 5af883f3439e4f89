//! `orca html`: one self-contained HTML page (no network: the script, styles and data are
//! inline) with the threads over time, the locks table, flame graphs and the deadlocks.
//!
//! The page is built from the same analyses as the text commands (`report::Analysis`,
//! `flame::collapse`, `deadlocks::analyze`), so it says what they say. Only the lanes of the
//! threads-over-time view are computed here, from the pairer's spans (`orca_format::spans`),
//! so that a lane's blocked, waiting and held time is the report's. Whatever the log's length, the page stays
//! small and responsive because everything is bounded at generation time: at most
//! [`MAX_LANES`] lanes, at most [`MAX_SPANS`] spans in all (runs of spans shorter than a
//! lane's resolution are merged into one, the resolution doubling until the lane fits), at
//! most [`MAX_LOCKS`] locks and [`MAX_STACKS`] stacks per flame graph. The page states every
//! limit that was reached.
//!
//! j.u.c. locks are in the locks table (holds of both modes, from events or `LockHolds`
//! lines, as `orca report` has them) and in the lanes (contended acquisitions blocked,
//! awaits and parks waiting, holds; in a log summarised for j.u.c. locks, the `LockHold`
//! events as holds). Holds taken in a JDK class (a pool worker's lock in `runWorker`) go to a
//! row of their own per lane, which the page folds away by default, as `orca report` folds
//! JDK-internal locks: a toggle draws them with the program's holds.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use orca_format::spans::{Call, Held, Pairer, SpanKind};
use orca_format::{parse_stack, Event, EventReader, Frame, Hash, Metadata, OrcaError, WakeCall};

use crate::report::{self, Analysis, Sites};
use crate::util::{json_str, Hist};
use crate::{deadlocks, flame, FlameWeight};

/// The page: markup, styles and script, with `/*ORCA_DATA*/null` where the data goes.
const TEMPLATE: &str = include_str!("../assets/report.html");
const DATA_SLOT: &str = "/*ORCA_DATA*/null";

/// Lanes drawn: a page with thousands of lanes is not readable anyway; the busiest stay.
pub const MAX_LANES: usize = 400;
/// Spans drawn over all lanes. About 45 bytes each in the page, so they stay under 6 MB
/// and the page under [`MAX_PAGE_BYTES`].
pub const MAX_SPANS: usize = 120_000;
/// Spans one lane row keeps while reading before it halves its resolution: bounds memory.
const ROW_SOFT_CAP: usize = 16_384;
/// Locks in the locks table.
pub const MAX_LOCKS: usize = 200;
/// Stacks per flame graph (the heaviest; the rest are summed into one "other stacks" entry).
pub const MAX_STACKS: usize = 3_000;
/// Sites per lock in the locks table, and full stacks per site.
const MAX_SITES: usize = 10;
const MAX_STACKS_PER_SITE: usize = 5;
/// Documented bound on the page size (cli/README.md): tested on a 10-million-event log.
pub const MAX_PAGE_BYTES: usize = 10_000_000;
/// Finest resolution worth keeping: a pixel of a 1400-pixel view at the page's deepest zoom.
const PIXELS_AT_FULL_ZOOM: u64 = 1400 * 100_000;

/// How much of each part the page carries. The defaults keep a page of ordinary stacks
/// (8 frames) well under [`MAX_PAGE_BYTES`]; a page that still exceeds it (deep stacks, very
/// long names) is written again with every part halved until it fits.
#[derive(Clone, Debug)]
pub struct Budget {
    pub spans: usize,
    pub bytes_per_flame: usize,
    pub lock_bytes: usize,
    /// Frames shown of each full stack in the locks table and the deadlocks.
    pub frames_shown: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            spans: MAX_SPANS,
            bytes_per_flame: 600_000,
            lock_bytes: 1_000_000,
            frames_shown: 64,
        }
    }
}

impl Budget {
    fn halved(&self) -> Budget {
        Budget {
            spans: self.spans / 2,
            bytes_per_flame: self.bytes_per_flame / 2,
            lock_bytes: self.lock_bytes / 2,
            frames_shown: (self.frames_shown / 2).max(4),
        }
    }
}

/// Errors of `orca html`.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error(transparent)]
    Orca(#[from] OrcaError),
    #[error("reading the log: {0}")]
    Read(#[from] std::io::Error),
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Output(#[from] orca_format::output::OutputError),
    #[error("an analysis thread panicked")]
    Panicked,
}

/// What a span of a lane shows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    Blocked = 0,
    Waiting = 1,
    Sleeping = 2,
    Joining = 3,
    Acquiring = 4,
    Holding = 5,
}
const KINDS: usize = 6;

/// No lock, owner or site (or several, in a merged span).
const NONE: u32 = u32::MAX;

/// One span of a lane, or a run of short spans merged into one.
#[derive(Clone, Debug)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    /// Spans merged into this one (1: an original span).
    pub n: u32,
    pub lock: u32,
    pub owner: u32,
    pub site: u32,
    /// Nesting depth of a hold (0: outermost).
    pub depth: u8,
    /// Nanoseconds per kind inside: the merged span shows the kind with the most.
    pub mix: [u64; KINDS],
    /// Still open when the log ended.
    pub open: bool,
}

impl Span {
    fn kind(&self) -> usize {
        (0..KINDS).max_by_key(|&k| self.mix[k]).unwrap_or(0)
    }
    fn busy(&self) -> u64 {
        self.mix.iter().sum()
    }
}

/// One row of a lane (states, or holds) with its merge resolution.
#[derive(Default, Debug)]
pub struct Row {
    pub spans: Vec<Span>,
    /// Spans shorter than this were merged with their neighbours (0: none were).
    pub resolution: u64,
    /// Spans before merging.
    pub original: u64,
}

impl Row {
    fn push(&mut self, s: Span) {
        self.original += 1;
        self.spans.push(s);
        if self.spans.len() > ROW_SOFT_CAP {
            // The spans since the last merge at the current resolution first; a coarser
            // one only when that is not enough, so the resolution grows with the row's
            // length, not with the number of merges.
            self.coarsen(self.resolution);
            while self.spans.len() > ROW_SOFT_CAP / 2 && self.resolution < u64::MAX / 4 {
                self.coarsen((self.resolution * 2).max(1_000));
            }
        }
    }

    /// Adds the spans of `other`, drawn at its resolution.
    fn append(&mut self, other: Row) {
        self.original += other.original;
        self.resolution = self.resolution.max(other.resolution);
        self.spans.extend(other.spans);
        if self.spans.len() > ROW_SOFT_CAP {
            self.coarsen(self.resolution);
        }
    }

    /// Merges runs of spans shorter than `res` into aggregates at most `res` long: one per
    /// pixel when `res` is a pixel's time.
    pub fn coarsen(&mut self, res: u64) {
        self.resolution = self.resolution.max(res);
        let res = self.resolution;
        self.spans.sort_by_key(|s| s.start);
        let mut out: Vec<Span> = Vec::with_capacity(self.spans.len() / 2 + 1);
        for x in self.spans.drain(..) {
            let short = |s: &Span| s.n > 1 || s.end - s.start < res;
            if let Some(o) = out.last_mut() {
                // An aggregate spans at most `res`, so the row keeps its shape at that scale.
                if short(o) && short(&x) && x.end <= o.start + res {
                    o.end = o.end.max(x.end);
                    o.n += x.n;
                    for k in 0..KINDS {
                        o.mix[k] += x.mix[k];
                    }
                    for (a, b) in [
                        (&mut o.lock, x.lock),
                        (&mut o.owner, x.owner),
                        (&mut o.site, x.site),
                    ] {
                        if *a != b {
                            *a = NONE;
                        }
                    }
                    o.depth = o.depth.min(x.depth);
                    o.open |= x.open;
                    continue;
                }
            }
            out.push(x);
        }
        self.spans = out;
    }
}

/// A thread's lane.
#[derive(Debug)]
pub struct Lane {
    pub thread: Hash,
    pub states: Row,
    pub holds: Row,
    /// Holds taken in a JDK class (a pool worker's lock in `runWorker`, a class loader's):
    /// folded away by default, as `orca report` folds JDK-internal locks; the page has a
    /// toggle that draws them with the others.
    pub jdk_holds: Row,
    /// Time spent in spans (blocked, waiting, ... holding): which lanes to keep.
    activity: u64,
    /// Time drawn per state (blocked, waiting, sleeping, joining, acquiring): the spans
    /// written one by one. The page compares it with the thread's totals, which count the
    /// short ones the agent counted per site too, and says what the lanes leave out.
    pub drawn: [u64; 5],
}

impl Lane {
    fn new(thread: Hash) -> Lane {
        Lane {
            thread,
            states: Row::default(),
            holds: Row::default(),
            jdk_holds: Row::default(),
            activity: 0,
            drawn: [0; 5],
        }
    }

    /// Draws a hold in the row it belongs to ([`row_for`]).
    fn hold(&mut self, sp: Span, jdk: &[bool]) {
        row_for(&mut self.holds, &mut self.jdk_holds, &sp, jdk).push(sp);
    }
}

/// The row of a hold: `jdk[site]` says whether its site is in a JDK class (a span with no
/// site, or several, is the program's).
fn row_for<'a>(holds: &'a mut Row, jdk_holds: &'a mut Row, sp: &Span, jdk: &[bool]) -> &'a mut Row {
    if sp.site != NONE && jdk.get(sp.site as usize).copied().unwrap_or(false) {
        jdk_holds
    } else {
        holds
    }
}

/// Interns strings (frames, IDs) so the page names each once.
#[derive(Default)]
struct Strings {
    index: HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(s.to_string(), i);
        self.list.push(s.to_string());
        i
    }
}

/// Lanes of every thread, from one pass over the log.
pub struct Lanes {
    pub lanes: Vec<Lane>,
    /// Lanes left out ([`MAX_LANES`]).
    pub dropped_lanes: usize,
    /// Spans before any merging, over the lanes kept.
    pub original_spans: u64,
    /// Locks with holds in the lanes' JDK-internal rows (before any lane was left out).
    pub jdk_locks: usize,
    objs: Strings,
    sites: Strings,
}

fn span(kind: Kind, start: u64, end: u64, lock: u32, owner: u32, site: u32) -> Span {
    let mut mix = [0; KINDS];
    mix[kind as usize] = end.saturating_sub(start).max(1);
    Span {
        start,
        end: end.max(start),
        n: 1,
        lock,
        owner,
        site,
        depth: 0,
        mix,
        open: false,
    }
}

/// A thread's lane being drawn, and its long-hold lines.
struct LaneState {
    lane: Lane,
    /// `MonitorHold` events (holds over the agent's threshold): drawn as holds when the log
    /// has no per-hold events (the agent's default, summary lines), so the long ones show.
    long_holds: Vec<Span>,
    /// `LockHold` events, drawn as holds in a log summarised for j.u.c. locks (the default).
    long_lock_holds: Vec<Span>,
    /// The stretches of j.u.c. holds (the program's, the JDK's), drawn unless the log turns
    /// out to be summarised for j.u.c. locks, which only its end tells.
    juc_holds: [Row; 2],
}

/// Reads the log into lanes, bounded as the module's comment says. The spans are the pairer's
/// (`orca_format::spans`), as every reader's.
pub fn lanes<R: std::io::Read>(mut r: EventReader<R>, md: &Metadata) -> std::io::Result<Lanes> {
    let mut threads: HashMap<Hash, LaneState> = HashMap::new();
    let mut order: Vec<Hash> = Vec::new();
    let mut ids = Ids {
        objs: Strings::default(),
        sites: Strings::default(),
        site_ids: HashMap::new(),
        obj_ids: HashMap::new(),
        jdk: Vec::new(),
        md,
    };
    let mut pairer = Pairer::new().with_stretches();
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        let ts = rec.timestamp.nanos();
        if let Some(thread) = rec.event.thread() {
            threads.entry(thread).or_insert_with(|| {
                order.push(thread);
                LaneState {
                    lane: Lane::new(thread),
                    long_holds: Vec::new(),
                    long_lock_holds: Vec::new(),
                    juc_holds: Default::default(),
                }
            });
        }
        pairer.feed(ts, &rec.event, &mut |sp| draw(&mut threads, &mut ids, &sp));
        match rec.event {
            Event::MonitorHold {
                thread,
                monitor,
                nanos,
                ref stack,
                ..
            } => {
                let site = ids.site(stack.top());
                let sp = span(
                    Kind::Holding,
                    ts.saturating_sub(nanos),
                    ts,
                    ids.obj(monitor),
                    NONE,
                    site,
                );
                if let Some(t) = threads.get_mut(&thread) {
                    t.long_holds.push(sp);
                }
            }
            Event::LockHold {
                thread,
                lock,
                nanos,
                site: ref at,
                ..
            } => {
                let site = ids.site(at.top());
                let sp = span(
                    Kind::Holding,
                    ts.saturating_sub(nanos),
                    ts,
                    ids.obj(lock),
                    NONE,
                    site,
                );
                if let Some(t) = threads.get_mut(&thread) {
                    t.long_lock_holds.push(sp);
                }
            }
            _ => {}
        }
    }
    let shape = pairer.shape();
    let (first, last) = (pairer.start().unwrap_or(0), pairer.end());
    // Close what is open at the end.
    pairer.finish(&mut |sp| draw(&mut threads, &mut ids, &sp));
    for t in threads.values_mut() {
        let [juc, juc_jdk] = std::mem::take(&mut t.juc_holds);
        if !shape.juc_summarised() {
            // Its LockAcquired lines are every hold's and its releases are written
            // (docs/FORMAT.md), so the pairer's j.u.c. holds are holds.
            t.lane.holds.append(juc);
            t.lane.jdk_holds.append(juc_jdk);
        }
        let mut long = Vec::new();
        if !shape.monitor_entered {
            long.append(&mut t.long_holds);
        }
        if shape.juc_summarised() {
            long.append(&mut t.long_lock_holds);
        }
        if !long.is_empty() {
            for sp in long {
                t.lane.activity += sp.end - sp.start;
                t.lane.hold(sp, &ids.jdk);
            }
            t.lane.holds.spans.sort_by_key(|sp| sp.start);
            t.lane.jdk_holds.spans.sort_by_key(|sp| sp.start);
        }
    }
    let Ids { objs, sites, .. } = ids;
    let jdk_locks = threads
        .values()
        .flat_map(|t| t.lane.jdk_holds.spans.iter().map(|sp| sp.lock))
        .filter(|&l| l != NONE)
        .collect::<std::collections::HashSet<u32>>()
        .len();
    let mut lanes: Vec<Lane> = order
        .iter()
        .filter_map(|h| threads.remove(h))
        .map(|t| t.lane)
        .collect();
    let mut dropped_lanes = 0;
    if lanes.len() > MAX_LANES {
        let mut by_activity: Vec<(u64, usize)> = lanes
            .iter()
            .enumerate()
            .map(|(i, l)| (l.activity, i))
            .collect();
        by_activity.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let keep: std::collections::HashSet<usize> =
            by_activity.iter().take(MAX_LANES).map(|x| x.1).collect();
        dropped_lanes = lanes.len() - MAX_LANES;
        lanes = lanes
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, l)| l)
            .collect();
    }
    let span_ns = last.saturating_sub(first.min(last));
    fit(&mut lanes, span_ns / PIXELS_AT_FULL_ZOOM, MAX_SPANS);
    let original_spans = lanes
        .iter()
        .map(|l| l.states.original + l.holds.original + l.jdk_holds.original)
        .sum();
    Ok(Lanes {
        lanes,
        dropped_lanes,
        original_spans,
        jdk_locks,
        objs,
        sites,
    })
}

/// The page's names for objects and sites, each interned once.
struct Ids<'a> {
    objs: Strings,
    sites: Strings,
    site_ids: HashMap<Frame, u32>,
    obj_ids: HashMap<Hash, u32>,
    /// Per site ID: whether its frame is in a JDK class (holds there are folded by default).
    jdk: Vec<bool>,
    md: &'a Metadata,
}

impl Ids<'_> {
    fn site(&mut self, f: Option<Frame>) -> u32 {
        let Some(f) = f else { return NONE };
        let (md, sites, jdk) = (self.md, &mut self.sites, &mut self.jdk);
        *self.site_ids.entry(f).or_insert_with(|| {
            let id = sites.id(&md.frame_to_string(f));
            if id as usize == jdk.len() {
                jdk.push(crate::util::is_jdk_frame(md, f));
            }
            id
        })
    }

    fn obj(&mut self, h: Hash) -> u32 {
        let objs = &mut self.objs;
        *self
            .obj_ids
            .entry(h)
            .or_insert_with(|| objs.id(&h.to_string()))
    }
}

/// Draws one span of the pairer in its thread's lane (a [`SpanKind::Hold`] is drawn by its
/// stretches).
fn draw(threads: &mut HashMap<Hash, LaneState>, ids: &mut Ids<'_>, s: &orca_format::spans::Span) {
    let Some(t) = threads.get_mut(&s.thread) else {
        return;
    };
    let (since, ts) = (s.begin.ts, s.end_ts);
    let site = ids.site(s.begin.top);
    let state = |kind, lock, owner| {
        let mut sp = span(kind, since, ts, lock, owner, site);
        sp.open = s.is_open();
        sp
    };
    let sp = match s.kind {
        SpanKind::Blocked { monitor, owner } => {
            state(Kind::Blocked, ids.obj(monitor), ids.obj(owner))
        }
        // A contended acquisition (another thread owned the lock as it began) is blocked time.
        SpanKind::Acquire { lock, owner, .. } if owner != Hash::UNKNOWN && owner != s.thread => {
            state(Kind::Blocked, ids.obj(lock), ids.obj(owner))
        }
        SpanKind::Acquire { .. } | SpanKind::Hold { .. } => return,
        SpanKind::Call { call, object } => match call {
            Call::Wait => state(Kind::Waiting, ids.obj(object), NONE),
            Call::Join => state(Kind::Joining, NONE, ids.obj(object)),
            Call::Sleep => state(Kind::Sleeping, NONE, NONE),
            Call::Semaphore => state(Kind::Acquiring, ids.obj(object), NONE),
        },
        SpanKind::Await { condition, .. } => state(Kind::Waiting, ids.obj(condition), NONE),
        SpanKind::Park { blocker } => {
            let b = if blocker == Hash::UNKNOWN {
                NONE
            } else {
                ids.obj(blocker)
            };
            state(Kind::Waiting, b, NONE)
        }
        SpanKind::Stretch { held, depth, .. } => {
            let (h, juc) = match held {
                Held::Monitor(m) => (m, false),
                Held::Lock(l, _) => (l, true),
            };
            let mut sp = state(Kind::Holding, ids.obj(h), NONE);
            sp.depth = depth.min(3) as u8;
            if !sp.open {
                t.lane.activity += ts - since.min(ts);
            }
            if juc {
                let [holds, jdk_holds] = &mut t.juc_holds;
                row_for(holds, jdk_holds, &sp, &ids.jdk).push(sp);
            } else {
                t.lane.hold(sp, &ids.jdk);
            }
            return;
        }
    };
    t.lane.activity += ts - since.min(ts);
    t.lane.drawn[sp.kind()] += ts - since.min(ts);
    t.lane.states.push(sp);
}

/// Merges spans shorter than `min_res` everywhere, then coarsens the fullest rows until all
/// rows together hold at most `max` spans.
pub fn fit(lanes: &mut [Lane], min_res: u64, max: usize) {
    for l in lanes.iter_mut() {
        for row in [&mut l.states, &mut l.holds, &mut l.jdk_holds] {
            if min_res > 0 || row.resolution > 0 {
                row.coarsen(min_res);
            } else {
                row.spans.sort_by_key(|s| s.start);
            }
        }
    }
    let total = |lanes: &[Lane]| -> usize {
        lanes
            .iter()
            .map(|l| l.states.spans.len() + l.holds.spans.len() + l.jdk_holds.spans.len())
            .sum()
    };
    while total(lanes) > max {
        let Some(row) = lanes
            .iter_mut()
            .flat_map(|l| [&mut l.states, &mut l.holds, &mut l.jdk_holds])
            .max_by_key(|r| r.spans.len())
        else {
            break;
        };
        let before = row.spans.len();
        row.coarsen((row.resolution * 2).max(1_000));
        if row.spans.len() == before && row.resolution > u64::MAX / 4 {
            break;
        }
    }
}

/// The first `max` frames of a raw stack trace, innermost first, and a last line saying
/// how many more there are.
fn frames(md: &Metadata, raw: &str, max: usize) -> Vec<String> {
    match parse_stack(raw.as_bytes(), 0) {
        Ok(st) => shown(st.frames().map(|f| md.frame_to_string(f)).collect(), max),
        Err(_) => Vec::new(),
    }
}

fn shown(mut v: Vec<String>, max: usize) -> Vec<String> {
    if v.len() > max {
        let more = v.len() - max;
        v.truncate(max);
        v.push(format!("... {more} more frames"));
    }
    v
}

fn json_list<T>(items: impl IntoIterator<Item = T>, f: impl FnMut(T) -> String) -> String {
    let v: Vec<String> = items.into_iter().map(f).collect();
    format!("[{}]", v.join(","))
}

fn strs(v: &[String]) -> String {
    json_list(v, |s| json_str(s))
}

/// Everything the page needs, as one JSON object (times in ns, relative to the first event).
pub struct Inputs<'a> {
    pub title: &'a str,
    pub md: &'a Metadata,
    pub analysis: &'a Analysis,
    pub lanes: &'a Lanes,
    pub flames: &'a [(FlameWeight, Vec<flame::Collapsed>)],
    pub deadlocks: &'a deadlocks::Findings,
    pub budget: &'a Budget,
}

/// The page's data blob.
pub fn data_json(inp: &Inputs<'_>) -> String {
    let a = inp.analysis;
    let t0 = a.first_ts.unwrap_or(0);
    let mut s = String::with_capacity(1 << 20);
    let span = a.last_ts.saturating_sub(t0);
    let _ = write!(
        s,
        "{{\"title\":{},\"events\":{},\"malformed\":{},\"torn\":{},\"dropped\":{},\"heldAtStart\":{},\"span\":{span},",
        json_str(inp.title),
        a.events,
        a.malformed,
        a.torn,
        a.dropped,
        a.held_at_start
    );
    let _ = write!(
        s,
        "\"limits\":{{\"maxLanes\":{MAX_LANES},\"droppedLanes\":{},\"maxSpans\":{},\"originalSpans\":{},\"maxLocks\":{MAX_LOCKS},\"maxStacks\":{MAX_STACKS},\"maxPageBytes\":{MAX_PAGE_BYTES}}},",
        inp.lanes.dropped_lanes, inp.budget.spans, inp.lanes.original_spans
    );
    // Thread names, for owners and labels.
    let names = json_list(a.sorted_threads(), |(h, t)| {
        format!(
            "{}:{}",
            json_str(&h.to_string()),
            t.name
                .as_deref()
                .map(json_str)
                .unwrap_or_else(|| "null".into())
        )
    });
    let _ = write!(s, "\"names\":{{{}}},", &names[1..names.len() - 1]);
    // Only the IDs and sites that the kept spans name: merging may have left most unused.
    let (mut objs, mut sites) = (Strings::default(), Strings::default());
    let mut obj_map: HashMap<u32, u32> = HashMap::new();
    let mut site_map: HashMap<u32, u32> = HashMap::new();
    for l in &inp.lanes.lanes {
        for sp in l
            .states
            .spans
            .iter()
            .chain(&l.holds.spans)
            .chain(&l.jdk_holds.spans)
        {
            for x in [sp.lock, sp.owner] {
                if x != NONE {
                    obj_map
                        .entry(x)
                        .or_insert_with(|| objs.id(&inp.lanes.objs.list[x as usize]));
                }
            }
            if sp.site != NONE {
                site_map
                    .entry(sp.site)
                    .or_insert_with(|| sites.id(&inp.lanes.sites.list[sp.site as usize]));
            }
        }
    }
    let idx = |m: &HashMap<u32, u32>, x: u32| -> i64 { m.get(&x).map_or(-1, |&i| i64::from(i)) };
    let _ = write!(s, "\"objs\":{},", strs(&objs.list));
    // Which IDs are j.u.c. locks (from the report and the lock-order graph) and park
    // blockers, so that the page names them so.
    let mut juc: Vec<Hash> = a
        .locks
        .keys()
        .chain(inp.deadlocks.juc.iter())
        .copied()
        .collect();
    juc.sort();
    juc.dedup();
    let _ = write!(s, "\"juc\":{},", json_list(&juc, |h| format!("\"{h}\"")));
    let mut parks: Vec<Hash> = a
        .parks
        .keys()
        .filter(|h| **h != Hash::UNKNOWN)
        .copied()
        .collect();
    parks.sort();
    let _ = write!(
        s,
        "\"parks\":{},",
        json_list(&parks, |h| format!("\"{h}\""))
    );
    let _ = write!(s, "\"sites\":{},", strs(&sites.list));
    let _ = write!(
        s,
        "\"jdkFolded\":{{\"holds\":{},\"locks\":{}}},",
        inp.lanes
            .lanes
            .iter()
            .map(|l| l.jdk_holds.original)
            .sum::<u64>(),
        inp.lanes.jdk_locks
    );
    s.push_str("\"lanes\":");
    s.push_str(&json_list(&inp.lanes.lanes, |l| {
        let t = a.threads.get(&l.thread);
        let row = |r: &Row| {
            let mut o = String::with_capacity(r.spans.len() * 40);
            o.push('[');
            for (i, sp) in r.spans.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                let k = sp.kind();
                let _ = write!(
                    o,
                    "{},{},{},{},{},{},{},{},{},{}",
                    sp.start.saturating_sub(t0),
                    sp.end - sp.start,
                    k,
                    sp.n,
                    idx(&obj_map, sp.lock),
                    idx(&obj_map, sp.owner),
                    idx(&site_map, sp.site),
                    sp.busy(),
                    sp.depth,
                    u8::from(sp.open)
                );
            }
            o.push(']');
            format!(
                "{{\"res\":{},\"original\":{},\"spans\":{o}}}",
                r.resolution, r.original
            )
        };
        format!(
            "{{\"id\":\"{}\",\"start\":{},\"end\":{},\"alive\":{},\"drawn\":[{}],\"states\":{},\"holds\":{},\"jdkHolds\":{}}}",
            l.thread,
            t.map_or(0, |t| t.started.unwrap_or(t.first).saturating_sub(t0)),
            t.map_or(span, |t| t.ended.unwrap_or(a.last_ts).saturating_sub(t0)),
            t.and_then(|t| t.ended).is_none(),
            l.drawn.map(|d| d.to_string()).join(","),
            row(&l.states),
            row(&l.holds),
            row(&l.jdk_holds)
        )
    }));
    s.push(',');
    s.push_str("\"threads\":");
    s.push_str(&json_list(a.sorted_threads(), |(h, t)| {
        format!(
            "{{\"id\":\"{h}\",\"blocked\":{},\"waiting\":{},\"sleeping\":{},\"joining\":{},\"acquiring\":{}}}",
            t.blocked.1, t.waiting.1, t.sleeping.1, t.joining.1, t.acquiring.1
        )
    }));
    s.push(',');
    s.push_str("\"locks\":");
    s.push_str(&locks_json(inp));
    s.push(',');
    s.push_str("\"flames\":{");
    for (i, (w, stacks)) in inp.flames.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let name = match w {
            FlameWeight::Blocked => "blocked",
            FlameWeight::Held => "held",
            FlameWeight::Waiting => "waiting",
        };
        let _ = write!(
            s,
            "\"{name}\":{}",
            flame_json(stacks, inp.budget.bytes_per_flame)
        );
    }
    // Per thread, the totals of `orca report` (one vocabulary: report::STATES).
    s.push_str("},\"totals\":{");
    for (i, (h, t)) in a.sorted_threads().iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let st = t.states();
        let _ = write!(
            s,
            "\"{h}\":[{},{},{},{},{}]",
            st[0], st[1], st[2], st[3], st[4]
        );
    }
    s.push_str("},\"classes\":{");
    let mut classes: Vec<(&Hash, &String)> = a.classes.iter().collect();
    classes.sort();
    for (i, (h, c)) in classes.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "\"{h}\":{}", json_str(crate::report::simple_name(c)));
    }
    s.push_str("},\"verdict\":");
    let v = crate::verdict::verdict(a, inp.deadlocks, inp.md, inp.title, false);
    s.push_str(&crate::verdict::json(&v));
    s.push_str(",\"deadlocks\":");
    s.push_str(&deadlocks_json(
        inp.deadlocks,
        inp.md,
        inp.budget.frames_shown,
    ));
    s.push('}');
    s
}

/// The heaviest stacks (at most [`MAX_STACKS`], and `max_bytes` of JSON) as a frame table
/// and (frame indexes, ns) pairs; the rest are counted as omitted.
fn flame_json(stacks: &[flame::Collapsed], max_bytes: usize) -> String {
    let mut order: Vec<&flame::Collapsed> = stacks.iter().collect();
    order.sort_by_key(|c| std::cmp::Reverse(c.ns));
    let mut names = Strings::default();
    let (mut rows, mut name_bytes, mut kept) = (String::from("["), 0, 0);
    let (mut rest, mut rest_n) = (0u64, 0usize);
    for c in order {
        if kept >= MAX_STACKS || rows.len() + name_bytes > max_bytes {
            rest += c.ns;
            rest_n += 1;
            continue;
        }
        let known = names.list.len();
        let ids: Vec<String> = c.frames.iter().map(|f| names.id(f).to_string()).collect();
        name_bytes += names.list[known..]
            .iter()
            .map(|n| n.len() + 3)
            .sum::<usize>();
        if kept > 0 {
            rows.push(',');
        }
        let _ = write!(rows, "[[{}],{}]", ids.join(","), c.ns);
        kept += 1;
    }
    rows.push(']');
    format!(
        "{{\"frames\":{},\"stacks\":{rows},\"total\":{},\"omitted\":{rest_n},\"omittedNs\":{rest}}}",
        strs(&names.list),
        stacks.iter().map(|c| c.ns).sum::<u64>()
    )
}

fn stack_json(md: &Metadata, raw: &str, max: usize) -> String {
    strs(&frames(md, raw, max))
}

fn deadlocks_json(f: &deadlocks::Findings, md: &Metadata, max: usize) -> String {
    let cycles = json_list(&f.cycles, |c| {
        format!(
            "{{\"monitors\":{},\"edges\":{}}}",
            json_list(&c.monitors, |m| format!("\"{m}\"")),
            json_list(&c.edges, |e| {
                format!(
                "{{\"from\":\"{}\",\"to\":\"{}\",\"thread\":{},\"line\":{},\"count\":{},\"fromStack\":{},\"toStack\":{}}}",
                e.from,
                e.to,
                json_str(&f.label(e.thread)),
                e.line,
                e.count,
                stack_json(md, &e.from_stack, max),
                stack_json(md, &e.to_stack, max)
            )
            })
        )
    });
    let blocked = json_list(&f.blocked, |b| {
        format!(
            "{{\"thread\":{},\"monitor\":\"{}\",\"owner\":{},\"line\":{},\"stack\":{}}}",
            json_str(&f.label(b.thread)),
            b.monitor,
            json_str(&f.label(b.owner)),
            b.line,
            stack_json(md, &b.stack, max)
        )
    });
    let wait_for = json_list(&f.wait_for_cycles, |c| {
        json_list(c, |h| json_str(&f.label(*h)))
    });
    format!(
        "{{\"cycles\":{cycles},\"blocked\":{blocked},\"waitFor\":{wait_for},\"edges\":{},\"singleThread\":{},\"guarded\":{},\"enteredEvents\":{},\"text\":{}}}",
        f.edges,
        f.single_thread,
        f.guarded,
        f.entered_events,
        json_str(&deadlocks::text(f, md))
    )
}

/// Full stacks (from the flame graph's stacks) whose innermost frame is `site` on `monitor`.
fn stacks_at<'a>(
    flames: &'a [(FlameWeight, Vec<flame::Collapsed>)],
    w: FlameWeight,
    monitor: Hash,
    site: &str,
) -> Vec<&'a flame::Collapsed> {
    let mut v: Vec<&flame::Collapsed> = flames
        .iter()
        .filter(|(fw, _)| *fw == w)
        .flat_map(|(_, s)| s.iter())
        .filter(|c| {
            c.monitor == monitor && c.frames.len() >= 2 && c.frames[c.frames.len() - 2] == site
        })
        .collect();
    v.sort_by_key(|c| std::cmp::Reverse(c.ns));
    v.truncate(MAX_STACKS_PER_SITE);
    v
}

/// One row of the locks table: a monitor, semaphore or wait/notify object, or a j.u.c. lock;
/// or the row of other monitors (locks) at one of its sites, as `orca report` shows it.
struct LockRow<'a> {
    id: Hash,
    /// The row's name where it is not its object's: the row of other monitors at a site
    /// (`Object at T.a(T.java:12)`, [`report::UnidentifiedSite::label`]), or the monitors'
    /// row of their contentions (`other monitors`).
    name: Option<String>,
    /// The row of other monitors at a site: its holds' (count, ns, timed), for `holds`,
    /// which has no histogram per site; and the monitors (locks) identified there.
    at_site: Option<((u64, u64, u64), Vec<Hash>)>,
    kind: &'static str,
    blocked: u64,
    contentions: u64,
    blocked_max: u64,
    still_blocked: u64,
    holds: Hist,
    open_holds: u64,
    owners: &'a HashMap<Hash, u64>,
    sites: &'a HashMap<Option<Frame>, (u64, u64)>,
    hold_sites: &'a HashMap<Option<Frame>, (u64, u64)>,
    sem: Option<&'a crate::report::ObjectStats>,
    /// Waits, waited ns, notifies, notifyAlls (for a j.u.c. lock: its conditions' awaits,
    /// awaited ns, signals, signalAlls).
    waits: (u64, u64, u64, u64),
}

impl LockRow<'_> {
    /// What ranks the rows: the time threads spent on it.
    fn time(&self) -> u64 {
        self.blocked + self.held().1 + self.sem.map_or(0, |o| o.sem_time) + self.waits.1
    }

    /// Holds: (count, ns, timed).
    fn held(&self) -> (u64, u64, u64) {
        match &self.at_site {
            Some((h, _)) => *h,
            None => (self.holds.count(), self.holds.total(), self.holds.timed()),
        }
    }
}

fn locks_json(inp: &Inputs<'_>) -> String {
    let a = inp.analysis;
    let md = inp.md;
    // The row of other monitors (locks), 00000000, is no lock: shown at its sites, each row
    // named and with the figures of `orca report`'s (issue 46); the monitors' contentions of
    // that row stay one row, `other monitors`, as in the report's monitors.
    let unidentified: Vec<(bool, report::UnidentifiedSite, Sites, Sites)> = [false, true]
        .into_iter()
        .flat_map(|juc| a.unidentified_sites(juc).into_iter().map(move |u| (juc, u)))
        .map(|(juc, u)| {
            let one =
                |x: Option<(u64, u64)>| -> Sites { x.map(|x| (u.site, x)).into_iter().collect() };
            let (b, h) = (one(u.blocked), one(u.held));
            (juc, u, b, h)
        })
        .collect();
    let (empty_sites, no_owners) = (Sites::new(), HashMap::new());
    let mut locks: Vec<LockRow<'_>> = a
        .ranked(
            |o| o.blocked + o.holds.total() + o.sem_time + o.waited,
            |o| {
                o.contentions > 0
                    || o.holds.count() > 0
                    || o.open_holds > 0
                    || o.sem_acquires + o.sem_releases > 0
                    || o.waits + o.notifies + o.notify_alls > 0
            },
        )
        .into_iter()
        .filter(|(h, o)| *h != Hash(0) || o.contentions > 0)
        .map(|(h, o)| LockRow {
            id: h,
            name: (h == Hash(0)).then(|| a.lock_name(h, false)),
            at_site: None,
            kind: if o.sem_acquires + o.sem_releases > 0 {
                "semaphore"
            } else if o.contentions > 0 || o.holds.count() > 0 || o.open_holds > 0 {
                "monitor"
            } else {
                "wait/notify"
            },
            blocked: o.blocked,
            contentions: o.contentions,
            blocked_max: o.blocked_max,
            still_blocked: o.still_blocked,
            // The row of other monitors' holds are in its rows per site.
            holds: if h == Hash(0) {
                Hist::default()
            } else {
                o.holds.clone()
            },
            open_holds: o.open_holds,
            owners: &o.owners,
            sites: &o.sites,
            hold_sites: if h == Hash(0) {
                &empty_sites
            } else {
                &o.hold_sites
            },
            sem: Some(o),
            waits: (o.waits, o.waited, o.notifies, o.notify_alls),
        })
        .collect();
    // j.u.c. locks: both modes' holds in one histogram (from events or LockHolds lines, as
    // `orca report` says), contention from the LockAcquire events.
    let mut juc: Vec<(&Hash, &report::LockStats)> =
        a.locks.iter().filter(|(h, _)| **h != Hash(0)).collect();
    juc.sort_by_key(|(h, _)| **h);
    for (h, l) in juc {
        let mut holds = l.write_holds.clone();
        holds.merge(&l.read_holds);
        locks.push(LockRow {
            id: *h,
            name: None,
            at_site: None,
            kind: "j.u.c. lock",
            blocked: l.blocked,
            contentions: l.contentions,
            blocked_max: l.blocked_max,
            still_blocked: l.still_blocked,
            holds,
            open_holds: l.open_holds,
            owners: &l.owners,
            sites: &l.sites,
            hold_sites: &l.hold_sites,
            sem: None,
            waits: (l.awaits, l.awaited, l.signals, l.signal_alls),
        });
    }
    for (juc, u, blocked, held) in &unidentified {
        let (c, ns) = u.held.unwrap_or_default();
        let (bc, bns) = u.blocked.unwrap_or_default();
        locks.push(LockRow {
            id: Hash(0),
            name: Some(u.label(md)),
            at_site: Some(((c, ns, u.timed), u.there.clone())),
            kind: if *juc { "j.u.c. lock" } else { "monitor" },
            blocked: bns,
            contentions: bc,
            blocked_max: 0,
            still_blocked: 0,
            holds: Hist::default(),
            open_holds: 0,
            owners: &no_owners,
            sites: blocked,
            hold_sites: held,
            sem: None,
            waits: (0, 0, 0, 0),
        });
    }
    // Stable: the monitors keep their order among equals, j.u.c. locks after them.
    locks.sort_by_key(|r| std::cmp::Reverse(r.time()));
    let total = locks.len();
    let sites = |h: Hash, m: &HashMap<Option<Frame>, (u64, u64)>, w: Option<FlameWeight>| {
        json_list(report::top_sites(m, MAX_SITES), |(f, c, ns)| {
            let site = report::site(md, f);
            let stacks = match w {
                Some(w) => json_list(stacks_at(inp.flames, w, h, &site), |st| {
                    let mut fr = st.frames[..st.frames.len() - 1].to_vec();
                    fr.reverse();
                    let fr = shown(fr, inp.budget.frames_shown);
                    format!("{{\"frames\":{},\"ns\":{}}}", strs(&fr), st.ns)
                }),
                None => "[]".into(),
            };
            format!(
                "{{\"site\":{},\"count\":{c},\"ns\":{ns},\"stacks\":{stacks}}}",
                json_str(&site)
            )
        })
    };
    let mut bytes = 0;
    let within_budget = |row: &String| {
        bytes += row.len() + 1;
        bytes <= inp.budget.lock_bytes
    };
    let empty = HashMap::new();
    let notifies_counted =
        crate::report::counted_calls(a, &[WakeCall::Notify, WakeCall::NotifyAll]);
    let signals_counted = crate::report::counted_calls(a, &[WakeCall::Signal, WakeCall::SignalAll]);
    let row = |r: &LockRow<'_>| {
        let hh = &r.holds;
        let (holds, held, timed) = r.held();
        let identified = match &r.at_site {
            Some((_, there)) => json_list(there, |h| {
                json_str(&a.lock_name(*h, r.kind == "j.u.c. lock"))
            }),
            None => "null".into(),
        };
        let mut owners: Vec<(&Hash, &u64)> = r.owners.iter().collect();
        owners.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        let juc = r.kind == "j.u.c. lock";
        let (sem_acquires, sem_time, sem_max, sem_releases, sem_sites) = match r.sem {
            Some(o) => (
                o.sem_acquires,
                o.sem_time,
                o.sem_max,
                o.sem_releases,
                &o.sem_sites,
            ),
            None => (0, 0, 0, 0, &empty),
        };
        format!(
            "{{\"id\":\"{}\",\"kind\":\"{}\",\"blocked\":{},\"contentions\":{},\"blockedMax\":{},\"stillBlocked\":{},\"stillText\":{},\"holds\":{},\"timed\":{},\"held\":{},\"p50\":{},\"p99\":{},\"max\":{},\"openHolds\":{},\"atLeast\":{},\"hist\":{},\"owners\":{},\"sites\":{},\"holdSites\":{},\"semAcquires\":{},\"semTime\":{},\"semMax\":{},\"semReleases\":{},\"semSites\":{},\"waits\":{},\"waited\":{},\"notifies\":{},\"notifyAlls\":{},\"juc\":{juc},\"countedCalls\":{},\"name\":{},\"identified\":{identified}}}",
            r.id,
            r.kind,
            r.blocked,
            r.contentions,
            r.blocked_max,
            r.still_blocked,
            crate::util::json_str(&a.still_blocked_text(r.still_blocked)),
            holds,
            timed,
            held,
            hh.percentile(50.0),
            hh.percentile(99.0),
            hh.max(),
            r.open_holds,
            a.identified_only(r.id),
            json_list(hh.buckets(), |(v, c)| format!("[{v},{c}]")),
            json_list(owners.iter().take(MAX_SITES), |(t, c)| format!(
                "[{},{c}]",
                json_str(&a.thread_label(**t))
            )),
            sites(r.id, r.sites, Some(FlameWeight::Blocked)),
            sites(r.id, r.hold_sites, Some(FlameWeight::Held)),
            sem_acquires,
            sem_time,
            sem_max,
            sem_releases,
            sites(r.id, sem_sites, None),
            r.waits.0,
            r.waits.1,
            r.waits.2,
            r.waits.3,
            // The notifies (signals) counted at their sites, which name no object: the row's
            // figures are the ones written one by one, and the page says so.
            if juc { signals_counted } else { notifies_counted },
            r.name.as_deref().map_or("null".into(), json_str)
        )
    };
    // The first row always, then rows while they fit.
    let mut within_budget = within_budget;
    let rows: Vec<String> = locks
        .iter()
        .take(MAX_LOCKS)
        .map(row)
        .enumerate()
        .take_while(|(i, r)| within_budget(r) || *i == 0)
        .map(|(_, r)| r)
        .collect();
    format!("{{\"total\":{total},\"rows\":[{}]}}", rows.join(","))
}

/// The page for `data` (a JSON object): the template with the data in its slot.
pub fn page(data: &str) -> String {
    // `</script` or `<!--` inside a JSON string would end or derail the script element; `<`
    // only occurs inside JSON strings, where `\u003c` means the same.
    let data = data.replace('<', "\\u003c");
    TEMPLATE.replacen(DATA_SLOT, &data, 1)
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T, HtmlError>>) -> Result<T, HtmlError> {
    h.join().map_err(|_| HtmlError::Panicked)?
}

/// Reads the log at `prefix` (the analyses run in parallel, one pass each) and writes the
/// page to `output`; returns its size in bytes.
pub fn run(prefix: &Path, output: &Path) -> Result<usize, HtmlError> {
    let md = Metadata::load(prefix)?;
    let open = || EventReader::open(prefix);
    // Fail early (before the threads) on a missing log.
    drop(open()?);
    let (analysis, lanes, flames, found) = std::thread::scope(|sc| {
        let analysis = sc.spawn(|| -> Result<Analysis, HtmlError> { Ok(Analysis::run(open()?)?) });
        let lanes = sc.spawn(|| -> Result<Lanes, HtmlError> { Ok(lanes(open()?, &md)?) });
        let found = sc.spawn(|| -> Result<deadlocks::Findings, HtmlError> {
            Ok(deadlocks::analyze(open()?)?)
        });
        let flames: Vec<_> = [
            FlameWeight::Blocked,
            FlameWeight::Held,
            FlameWeight::Waiting,
        ]
        .into_iter()
        .map(|w| {
            let md = &md;
            sc.spawn(move || -> Result<_, HtmlError> { Ok((w, flame::collapse(open()?, md, w)?)) })
        })
        .collect();
        let analysis = join(analysis)?;
        let lanes = join(lanes)?;
        let found = join(found)?;
        let mut fl = Vec::new();
        for h in flames {
            let (w, stacks) = join(h)?;
            // The row of other monitors named at its sites, as the report names it.
            let stacks = if flame::has_rows(&stacks, w) {
                flame::name_rows(stacks, &analysis, &md, w)
            } else {
                stacks
            };
            fl.push((w, stacks));
        }
        Ok::<_, HtmlError>((analysis, lanes, fl, found))
    })?;
    let title = prefix.display().to_string();
    let mut lanes = lanes;
    let mut budget = Budget::default();
    let html = loop {
        fit(&mut lanes.lanes, 0, budget.spans);
        let html = page(&data_json(&Inputs {
            title: &title,
            md: &md,
            analysis: &analysis,
            lanes: &lanes,
            flames: &flames,
            deadlocks: &found,
            budget: &budget,
        }));
        if html.len() <= MAX_PAGE_BYTES || budget.spans < 1_000 {
            break html;
        }
        budget = budget.halved();
    };
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| HtmlError::Write {
            path: dir.display().to_string(),
            source,
        })?;
    }
    orca_format::output::write(output, &html)?;
    Ok(html.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(start: u64, len: u64, kind: Kind, lock: u32) -> Span {
        span(kind, start, start + len, lock, NONE, NONE)
    }

    #[test]
    fn short_spans_merge_and_long_ones_stay() {
        let mut r = Row::default();
        for i in 0..100 {
            r.push(short(
                i * 10,
                5,
                if i % 2 == 0 {
                    Kind::Blocked
                } else {
                    Kind::Waiting
                },
                1,
            ));
        }
        r.push(short(2_000, 1_000_000, Kind::Sleeping, NONE));
        r.coarsen(1_000);
        assert_eq!(r.spans.len(), 2, "{:?}", r.spans);
        assert_eq!(r.spans[0].n, 100);
        assert_eq!((r.spans[0].start, r.spans[0].end), (0, 995));
        assert_eq!(r.spans[0].busy(), 500);
        assert_eq!(r.spans[0].lock, 1);
        assert_eq!(r.spans[1].n, 1);
        assert_eq!(r.original, 101);
    }

    #[test]
    fn rows_stay_bounded_however_many_spans() {
        let mut lane = Lane::new(Hash(1));
        for i in 0..200_000u64 {
            lane.states
                .push(short(i * 1_000, 300, Kind::Blocked, (i % 7) as u32));
        }
        assert!(lane.states.spans.len() <= ROW_SOFT_CAP);
        let mut lanes = vec![lane];
        fit(&mut lanes, 0, 5_000);
        let row = &lanes[0].states;
        assert!(row.spans.len() <= 5_000);
        assert_eq!(row.original, 200_000);
        assert_eq!(row.spans.iter().map(|s| s.n as u64).sum::<u64>(), 200_000);
        assert_eq!(
            row.spans.iter().map(|s| s.busy()).sum::<u64>(),
            200_000 * 300
        );
        assert!(row.spans.windows(2).all(|w| w[0].start <= w[1].start));
        // Merged, not flattened: the shape survives at the row's resolution.
        assert!(
            row.spans.len() > 1_000,
            "{} spans at {} ns",
            row.spans.len(),
            row.resolution
        );
        assert!(row.spans.iter().all(|s| s.end - s.start <= row.resolution));
    }

    #[test]
    fn flame_graph_stays_within_its_budget_and_counts_the_rest() {
        let stacks: Vec<flame::Collapsed> = (0..2_000u64)
            .map(|i| flame::Collapsed {
                frames: (0..100)
                    .map(|d| format!("pkg.Class{i}.method{d}(Class.java:{d})"))
                    .collect(),
                monitor: Hash(1),
                ns: 1_000 + i,
                what: "monitor",
                site: None,
            })
            .collect();
        let j = flame_json(&stacks, 100_000);
        assert!(j.len() < 100_000 + 8_000, "{}", j.len());
        let omitted: usize = j
            .split("\"omitted\":")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(omitted > 1_900 && omitted < 2_000, "{omitted}");
        let total: u64 = stacks.iter().map(|c| c.ns).sum();
        assert!(j.contains(&format!("\"total\":{total},")));
        // The heaviest stack is kept.
        assert!(j.contains(&format!(",{}]", 1_000 + 1_999)));
    }

    #[test]
    fn long_stacks_are_cut_with_a_count() {
        let v: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert_eq!(shown(v.clone(), 20), v);
        assert_eq!(shown(v, 3), ["0", "1", "2", "... 7 more frames"]);
    }

    #[test]
    fn page_has_the_data_in_its_slot_and_nothing_can_close_the_script() {
        assert!(TEMPLATE.contains(DATA_SLOT));
        let p = page("{\"title\":\"</script><b>\"}");
        assert!(!p.contains(DATA_SLOT));
        assert!(p.contains("\\u003c/script>\\u003cb>"));
        assert_eq!(
            p.matches("</script>").count(),
            TEMPLATE.matches("</script>").count()
        );
    }
}
