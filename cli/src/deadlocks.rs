//! `orca deadlocks`: the lock-order graph (GoodLock / JCarder style) built from
//! nested `MonitorEntered` events, its cycles (potential deadlocks), and the
//! threads still blocked on a monitor at the end of the log (actual deadlocks).
//!
//! j.u.c. locks (`LockAcquire`/`LockAcquired`/`LockRelease`, docs/FORMAT.md) are nodes of
//! the same graph: a thread holding a `ReentrantLock` while entering `synchronized (m)`, and
//! another the reverse, is a cycle; a thread left inside a `LockAcquire` whose owner is
//! another thread is blocked on it, like one left in a `MonitorContendedEnter`, until the
//! acquisition's end line (a contention nested in the acquisition, on a class initialiser's
//! monitor say, does not end it).
//!
//! When the log has summary lines (docs/FORMAT.md, "Summary lines"), the graph
//! comes from its `LockOrder` lines instead, each one the edge occurrences
//! [`add_edges`] would have counted, `count` times: the same edges, counts and
//! guards, with one-frame sites (`--from-events` forces the events). `LockOrder`
//! lines cover j.u.c. locks too when the log has j.u.c. hold summaries (`LockHolds`
//! or `LockHold` lines) or a `LockOrder` line names a j.u.c. lock; in an older log
//! that has `LockOrder` lines of monitors only, the edges to and from j.u.c. locks
//! come from the j.u.c. events, as before.
//!
//! The rules are FORMAT.md's for `LockOrder`: an acquisition (`MonitorEnter`, the
//! `MonitorEntered` of a `synchronized` method, a `LockAcquire`) counts unless the thread
//! already holds that monitor or that (lock, mode); it is an edge from every distinct
//! ID held other than the acquired one (holding the write view and taking the read view
//! of a lock is no edge from that lock), the other held IDs but the acquired one being its
//! guards. A node is labelled a j.u.c. lock when a `Lock*`, `LockHolds`, `LockHold` or
//! `Condition*` line names it as one.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use orca_format::spans::{Held, Pairer, SpanKind, Stacks};
use orca_format::{parse_stack, Event, EventReader, Hash, LineError, LockMode, Metadata};

/// The first time an edge `from -> to` was seen, with both code paths.
struct Edge {
    thread: Hash,
    line: u64,
    /// Stack where `from` was acquired.
    from_site: String,
    /// Stack where `to` was acquired while holding `from`.
    to_site: String,
    count: u64,
    threads: Vec<Hash>,
    /// Monitors held at every occurrence besides `from` (gate locks).
    guards: Vec<Hash>,
}

/// Monitor, owner, stack, line of a MonitorContendedEnter.
type Blocked = (Hash, Hash, String, u64);

#[derive(Default)]
struct ThreadState {
    name: Option<String>,
    /// Blocked at the end of the log: in a contention (the pairer's `MonitorContendedEnter`
    /// without its Entered), else in a `LockAcquire` that another thread owned and no end line
    /// has ended (a contention inside it, for the class initialiser of `LockSupport` that a
    /// ReentrantLock's first park on JDK 17 can wait for, leaves it blocked in the lock).
    blocked: Option<Blocked>,
}

const MAX_THREADS_PER_EDGE: usize = 8;
const MAX_CYCLES: usize = 100;
const FRAMES_SHOWN: usize = 6;

fn stack_lines(md: &Metadata, raw: &str, indent: &str) -> String {
    let mut s = String::new();
    match parse_stack(raw.as_bytes(), 0) {
        Ok(st) if !st.is_empty() => {
            for (i, f) in st.frames().enumerate() {
                if i == FRAMES_SHOWN {
                    let _ = writeln!(
                        s,
                        "{indent}... {} more frames",
                        st.depth() as usize - FRAMES_SHOWN
                    );
                    break;
                }
                let _ = writeln!(s, "{indent}{}", md.frame_to_string(f));
            }
        }
        _ => {
            let _ = writeln!(s, "{indent}(no stack)");
        }
    }
    s
}

/// Runs the analysis; returns the text and whether anything was found.
#[allow(dead_code)] // the entry point without options
pub fn run<R: std::io::Read>(r: EventReader<R>, md: &Metadata) -> std::io::Result<(String, bool)> {
    run_with(r, md, false)
}

/// [`run`]; with `from_events`, the graph comes from events even when the log
/// has summary lines.
pub fn run_with<R: std::io::Read>(
    r: EventReader<R>,
    md: &Metadata,
    from_events: bool,
) -> std::io::Result<(String, bool)> {
    let f = analyze_with(r, from_events)?;
    Ok((text(&f, md), f.found()))
}

/// What the streaming pass found: thread states at the end, lock-order edges, the number
/// of MonitorEntered events, j.u.c. acquisitions and summary lines, where the edges came
/// from, and which nodes are j.u.c. locks.
type Scan = (
    HashMap<Hash, ThreadState>,
    HashMap<(Hash, Hash), Edge>,
    u64,
    Option<&'static str>,
    HashSet<Hash>,
    HashMap<Hash, String>,
    bool,
);

/// The streaming pass.
fn scan<R: std::io::Read>(mut r: EventReader<R>, from_events: bool) -> std::io::Result<Scan> {
    let mut threads: HashMap<Hash, ThreadState> = HashMap::new();
    let mut edges: HashMap<(Hash, Hash), Edge> = HashMap::new();
    // LockOrder lines, and the j.u.c. edges of the events (for LockOrder lines of monitors
    // only, before j.u.c. hold summaries); LockOrder lines alone.
    let mut summary_edges: HashMap<(Hash, Hash), Edge> = HashMap::new();
    let mut lock_order_edges: HashMap<(Hash, Hash), Edge> = HashMap::new();
    let mut juc_summaries = false;
    // The IDs of the LockOrder lines: one known as a j.u.c. lock means they cover j.u.c. locks.
    let mut lock_order_ids: HashSet<Hash> = HashSet::new();
    let mut entered_events = 0u64;
    let mut summary_lines = 0u64;
    let mut juc: HashSet<Hash> = HashSet::new();
    let mut classes: HashMap<Hash, String> = HashMap::new();
    let mut sampled_tracking = false;
    // The one pairing of lines (orca_format::spans): what each thread holds, in the order it
    // took it, with the stack of its outermost acquisition. An event's orders are read from
    // what was held before it, so the pairer takes each event after this pass has.
    let mut pairer = Pairer::with_stacks_for(Stacks {
        holds: true,
        blocked: true,
        ..Stacks::default()
    });
    while let Some((line, rec)) = r.next_event()? {
        let rec = match rec {
            Ok(rec) => rec,
            Err(LineError::Torn) | Err(_) => continue,
        };
        'ev: {
            if let Event::RecordingStarted { settings } = rec.event {
                sampled_tracking = settings.sampled_tracking();
            }
            let Some(thread) = rec.event.thread() else {
                if let Event::ObjectClass { object, class } = rec.event {
                    // the first: a second line names another object with the same ID (the report says so)
                    classes
                        .entry(object)
                        .or_insert_with(|| orca_format::java_class_name(&class.decode()));
                }
                break 'ev;
            };
            let t = threads.entry(thread).or_default();
            // Summary lines and MonitorHold change no thread state: a thread's
            // summaries may come while it is blocked or entering (at JVM exit).
            match rec.event {
                Event::LockOrder {
                    held,
                    acquired,
                    count,
                    guards,
                    held_site,
                    acquired_site,
                    ..
                } => {
                    summary_lines += 1;
                    if held == Hash(0) {
                        // Occurrences between other monitors (FORMAT.md): counted, no edge of the
                        // instance graph.
                        break 'ev;
                    }
                    lock_order_ids.insert(held);
                    lock_order_ids.insert(acquired);
                    let guards: Vec<Hash> = guards.iter().collect();
                    let site = (held_site.raw(), acquired_site.raw());
                    for map in [&mut summary_edges, &mut lock_order_edges] {
                        add_edge(
                            map,
                            (thread, line),
                            (held, acquired),
                            site,
                            guards.clone(),
                            count,
                        );
                    }
                    break 'ev;
                }
                Event::MonitorHolds { .. } | Event::MonitorHoldsUntimed { .. } => {
                    summary_lines += 1;
                    break 'ev;
                }
                Event::LockHolds { lock, .. } | Event::LockHoldsUntimed { lock, .. } => {
                    summary_lines += 1;
                    juc_summaries = true;
                    juc.insert(lock);
                    break 'ev;
                }
                Event::LockHold { lock, .. } => {
                    juc_summaries = true;
                    juc.insert(lock);
                    break 'ev;
                }
                Event::MonitorHold { .. } => break 'ev,
                Event::Condition { lock, .. } => {
                    juc.insert(lock);
                }
                _ => {}
            }
            // A MonitorEnter seen and its MonitorEntered not yet: its edges are already in.
            let entering = pairer.entering(thread).map(|(m, _)| m);
            match rec.event {
                Event::ThreadStarted { name, .. } => t.name = Some(name.decode().into_owned()),
                // Without a MonitorEnter before it (JVMTI mode, summaries) the contention is
                // the only sight of this acquisition: its order after the j.u.c. locks held.
                Event::MonitorContendedEnter { monitor, stack, .. }
                    if entering != Some(monitor) && !holds(&pairer, thread, monitor, None) =>
                {
                    for map in [&mut edges, &mut summary_edges] {
                        add_edges(map, &pairer, thread, monitor, stack.raw(), line);
                    }
                }
                Event::LockAcquire {
                    lock, mode, stack, ..
                } => {
                    entered_events += 1;
                    juc.insert(lock);
                    // The two views of a read-write lock are one node: taking one while holding
                    // the other is no edge from it (add_edges leaves the acquired ID out).
                    if !holds(&pairer, thread, lock, Some(mode)) {
                        for map in [&mut edges, &mut summary_edges] {
                            add_edges(map, &pairer, thread, lock, stack.raw(), line);
                        }
                    }
                }
                Event::Lock { lock, .. } => {
                    juc.insert(lock);
                }
                Event::MonitorEnter { monitor, stack, .. }
                | Event::MonitorEntered { monitor, stack, .. } => {
                    let is_enter = rec.event.kind() == orca_format::EventKind::MonitorEnter;
                    // A MonitorEnter's order is what the thread tries: recorded before it
                    // blocks, so that a run that really deadlocks shows it too.
                    if !is_enter {
                        entered_events += 1;
                    }
                    if holds(&pairer, thread, monitor, None) {
                        break 'ev; // reentrant: no new order
                    }
                    if entering != Some(monitor) || is_enter {
                        add_edges(&mut edges, &pairer, thread, monitor, stack.raw(), line);
                        // LockOrder lines have monitors only: the orders after held j.u.c.
                        // locks count for the summaries' graph from the events.
                        let site = stack.raw();
                        add_juc_edges(&mut summary_edges, &pairer, thread, monitor, site, line);
                    }
                }
                _ => {}
            }
        }
        let ts = rec.timestamp.nanos();
        pairer.feed_checked(line, ts, &rec.event, &mut |_| {}, &mut |_| {});
    }
    for (&thread, t) in &mut threads {
        let contended = pairer.contended(thread);
        let acquiring = pairer.open_call(thread).and_then(|c| match c.kind {
            SpanKind::Acquire { lock, owner, .. } if owner != Hash::UNKNOWN && owner != thread => {
                Some((lock, owner, &c.begin))
            }
            _ => None,
        });
        t.blocked = contended
            .or(acquiring)
            .map(|(m, owner, b)| (m, owner, b.stack.clone(), b.line));
    }
    let from_summaries = summary_lines > 0 && !from_events;
    // LockOrder lines cover j.u.c. locks when the log has j.u.c. hold summaries or one of
    // them names a j.u.c. lock; else (an older agent's) they have monitors only.
    let juc_orders = juc_summaries || lock_order_ids.iter().any(|h| juc.contains(h));
    let (edges, source) = if from_summaries && juc_orders {
        (lock_order_edges, Some("LockOrder summary lines"))
    } else if from_summaries {
        (summary_edges, Some("LockOrder summary lines"))
    } else {
        (edges, None)
    };
    Ok((
        threads,
        edges,
        entered_events + summary_lines,
        source,
        juc,
        classes,
        // The events of a sampled tracking (trace=all has none) are complete.
        from_summaries && sampled_tracking,
    ))
}

/// Whether `thread` holds `id` (a monitor when `mode` is `None`, else the j.u.c. lock in that
/// mode).
fn holds(pairer: &Pairer, thread: Hash, id: Hash, mode: Option<LockMode>) -> bool {
    let held = match mode {
        None => Held::Monitor(id),
        Some(mode) => Held::Lock(id, mode),
    };
    pairer.holds(thread).any(|h| h.held == held)
}

/// The distinct IDs `thread` holds other than `acquired`, in the order of their earliest
/// still-open hold, with that hold's stack and whether it is a j.u.c. lock's.
fn held_ids(pairer: &Pairer, thread: Hash, acquired: Hash) -> Vec<(Hash, &str, bool)> {
    let mut ids: Vec<(Hash, &str, bool)> = Vec::new();
    for h in pairer.holds(thread) {
        let begin = h.begin;
        let (id, juc) = match h.held {
            Held::Monitor(id) => (id, false),
            Held::Lock(id, _) => (id, true),
        };
        if id != acquired && !ids.iter().any(|x| x.0 == id) {
            ids.push((id, &begin.stack, juc));
        }
    }
    ids
}

/// One acquisition of `acquired` at `site` while `thread` holds what it holds: one edge occurrence per
/// distinct ID held other than `acquired`, the other such IDs being its guards. (A
/// `LockOrder` line is `count` such occurrences of one held ID.)
fn add_edges(
    edges: &mut HashMap<(Hash, Hash), Edge>,
    pairer: &Pairer,
    thread: Hash,
    acquired: Hash,
    site: &str,
    line: u64,
) {
    add_edges_if(edges, pairer, thread, acquired, site, line, |_| true)
}

/// [`add_edges`] for the held j.u.c. locks only.
fn add_juc_edges(
    edges: &mut HashMap<(Hash, Hash), Edge>,
    pairer: &Pairer,
    thread: Hash,
    acquired: Hash,
    site: &str,
    line: u64,
) {
    add_edges_if(edges, pairer, thread, acquired, site, line, |juc| juc)
}

fn add_edges_if(
    edges: &mut HashMap<(Hash, Hash), Edge>,
    pairer: &Pairer,
    thread: Hash,
    acquired: Hash,
    site: &str,
    line: u64,
    from: impl Fn(bool) -> bool,
) {
    let ids = held_ids(pairer, thread, acquired);
    for &(held, held_site, juc) in &ids {
        if !from(juc) {
            continue;
        }
        let guards: Vec<Hash> = ids.iter().map(|x| x.0).filter(|g| *g != held).collect();
        add_edge(
            edges,
            (thread, line),
            (held, acquired),
            (held_site, site),
            guards,
            1,
        );
    }
}

/// Adds `count` occurrences of the edge `from -> to` seen on `thread` at `line`,
/// `from` taken at `sites.0` and `to` at `sites.1`, with the other held `guards`.
fn add_edge(
    edges: &mut HashMap<(Hash, Hash), Edge>,
    (thread, line): (Hash, u64),
    (from, to): (Hash, Hash),
    sites: (&str, &str),
    guards: Vec<Hash>,
    count: u64,
) {
    let e = edges.entry((from, to)).or_insert_with(|| Edge {
        thread,
        line,
        from_site: sites.0.to_string(),
        to_site: sites.1.to_string(),
        count: 0,
        threads: Vec::new(),
        guards: guards.clone(),
    });
    e.count += count;
    if !e.threads.contains(&thread) && e.threads.len() < MAX_THREADS_PER_EDGE {
        e.threads.push(thread);
    }
    e.guards.retain(|g| guards.contains(g));
}

/// One edge of a potential deadlock: a thread held `from` and then took `to`.
pub struct CycleEdge {
    pub from: Hash,
    pub to: Hash,
    /// The first thread seen taking them in this order.
    pub thread: Hash,
    /// Line of the log where the order was first seen.
    pub line: u64,
    /// Times the order was seen.
    pub count: u64,
    /// Raw stack where `from` was acquired.
    pub from_stack: String,
    /// Raw stack where `to` was acquired while holding `from`.
    pub to_stack: String,
}

/// A lock-order cycle that two or more threads took part in, with no common gate lock.
pub struct Cycle {
    /// The monitors in cycle order, starting at the smallest ID.
    pub monitors: Vec<Hash>,
    /// `monitors[i] -> monitors[i + 1]`, the last edge closing the cycle.
    pub edges: Vec<CycleEdge>,
}

/// A thread still blocked on a monitor when the log ends.
pub struct BlockedThread {
    pub thread: Hash,
    pub monitor: Hash,
    pub owner: Hash,
    pub stack: String,
    pub line: u64,
}

/// What `orca deadlocks` found, for the text output and the HTML report alike.
pub struct Findings {
    pub cycles: Vec<Cycle>,
    pub blocked: Vec<BlockedThread>,
    /// Cycles of threads blocked at the end waiting for each other (actual deadlocks).
    pub wait_for_cycles: Vec<Vec<Hash>>,
    pub edges: usize,
    pub single_thread: usize,
    pub guarded: usize,
    pub entered_events: u64,
    /// Where the lock-order edges came from, when not from the events.
    pub source: Option<&'static str>,
    /// The edges come from the summary lines of a recording that identified a sample of
    /// the holds (`tracking=sampled` in its `RecordingStarted` line): a rare order may be
    /// missing, which the output says.
    pub sampled: bool,
    names: HashMap<Hash, String>,
    /// The nodes that are j.u.c. locks (their synchronizers); the others are monitors.
    pub juc: HashSet<Hash>,
    /// Classes of the objects the log names (`ObjectClass` lines), Java spelling.
    pub classes: HashMap<Hash, String>,
}

impl Findings {
    /// `"name" [HASH]`, `[HASH]` for an unnamed thread.
    pub fn label(&self, h: Hash) -> String {
        if h == Hash::UNKNOWN {
            return "unknown thread".into();
        }
        match self.names.get(&h) {
            Some(n) => format!("\"{n}\" [{h}]"),
            None => format!("[{h}]"),
        }
    }

    /// `HashMap@HASH` when the log names the class, else `monitor HASH` or `j.u.c. lock HASH`.
    pub fn node(&self, h: Hash) -> String {
        if let Some(c) = self.classes.get(&h) {
            format!("{}@{h}", crate::report::simple_name(c))
        } else if self.juc.contains(&h) {
            format!("j.u.c. lock {h}")
        } else {
            format!("monitor {h}")
        }
    }

    /// Whether `orca deadlocks` exits 1.
    pub fn found(&self) -> bool {
        !self.cycles.is_empty() || !self.blocked.is_empty()
    }
}

/// Runs the analysis without formatting it.
pub fn analyze<R: std::io::Read>(r: EventReader<R>) -> std::io::Result<Findings> {
    analyze_with(r, false)
}

/// [`analyze`]; with `from_events`, the graph comes from events even when the log has
/// summary lines.
pub fn analyze_with<R: std::io::Read>(
    r: EventReader<R>,
    from_events: bool,
) -> std::io::Result<Findings> {
    let (threads, edges, entered_events, source, juc, classes, sampled) = scan(r, from_events)?;
    let mut f = findings(threads, edges, entered_events, source);
    f.juc = juc;
    f.classes = classes;
    f.sampled = sampled;
    Ok(f)
}

fn findings(
    threads: HashMap<Hash, ThreadState>,
    edges: HashMap<(Hash, Hash), Edge>,
    entered_events: u64,
    source: Option<&'static str>,
) -> Findings {
    // Cycles in the lock-order graph.
    let mut adj: HashMap<Hash, Vec<Hash>> = HashMap::new();
    let mut keys: Vec<(Hash, Hash)> = edges.keys().copied().collect();
    keys.sort();
    for &(a, b) in &keys {
        adj.entry(a).or_default().push(b);
    }
    let mut cycles: Vec<Vec<Hash>> = Vec::new();
    let mut seen: HashSet<Vec<Hash>> = HashSet::new();
    for &(u, v) in &keys {
        if cycles.len() >= MAX_CYCLES {
            break;
        }
        // Shortest path v -> u, closing the cycle with u -> v.
        let mut prev: HashMap<Hash, Hash> = HashMap::new();
        let mut q = VecDeque::from([v]);
        let mut found = v == u;
        while let Some(x) = q.pop_front() {
            if x == u {
                found = true;
                break;
            }
            for &y in adj.get(&x).map(|v| v.as_slice()).unwrap_or(&[]) {
                if y != v && !prev.contains_key(&y) {
                    prev.insert(y, x);
                    q.push_back(y);
                }
            }
        }
        if !found {
            continue;
        }
        let mut path = vec![u];
        let mut x = u;
        while x != v {
            x = prev[&x];
            path.push(x);
        }
        path.reverse(); // v ... u
        let mut cyc = path; // edges: v->..->u, then u->v
        let min = cyc
            .iter()
            .enumerate()
            .min_by_key(|(_, h)| **h)
            .map(|(i, _)| i)
            .unwrap_or(0);
        cyc.rotate_left(min);
        if seen.insert(cyc.clone()) {
            cycles.push(cyc);
        }
    }

    let mut potential = Vec::new();
    let mut single_thread = 0;
    let mut guarded = 0;
    for cyc in cycles {
        let cedges: Vec<(&Edge, Hash, Hash)> = (0..cyc.len())
            .map(|i| {
                let (a, b) = (cyc[i], cyc[(i + 1) % cyc.len()]);
                (&edges[&(a, b)], a, b)
            })
            .collect();
        let all_threads: HashSet<Hash> = cedges
            .iter()
            .flat_map(|(e, _, _)| e.threads.iter().copied())
            .collect();
        if all_threads.len() < 2 {
            single_thread += 1;
            continue;
        }
        let common_guard = cedges
            .iter()
            .map(|(e, _, _)| e.guards.clone())
            .reduce(|a, b| a.into_iter().filter(|g| b.contains(g)).collect())
            .unwrap_or_default();
        if !common_guard.is_empty() {
            guarded += 1;
            continue;
        }
        let edges = cedges
            .into_iter()
            .map(|(e, from, to)| CycleEdge {
                from,
                to,
                thread: e.thread,
                line: e.line,
                count: e.count,
                from_stack: e.from_site.clone(),
                to_stack: e.to_site.clone(),
            })
            .collect();
        potential.push(Cycle {
            monitors: cyc,
            edges,
        });
    }

    // Threads blocked at the end of the log.
    let mut blocked: Vec<BlockedThread> = threads
        .iter()
        .filter_map(|(h, t)| {
            t.blocked
                .as_ref()
                .map(|(m, owner, stack, line)| BlockedThread {
                    thread: *h,
                    monitor: *m,
                    owner: *owner,
                    stack: stack.clone(),
                    line: *line,
                })
        })
        .collect();
    blocked.sort_by_key(|b| b.line);
    // Wait-for cycles among them.
    let waits: HashMap<Hash, Hash> = blocked.iter().map(|b| (b.thread, b.owner)).collect();
    let mut reported: HashSet<Hash> = HashSet::new();
    let mut wait_for_cycles = Vec::new();
    for b in &blocked {
        let mut path = vec![b.thread];
        let mut x = b.thread;
        while let Some(&o) = waits.get(&x) {
            if let Some(i) = path.iter().position(|p| *p == o) {
                let cyc = &path[i..];
                if cyc.iter().all(|c| reported.insert(*c)) {
                    wait_for_cycles.push(cyc.to_vec());
                }
                break;
            }
            path.push(o);
            x = o;
        }
    }
    Findings {
        cycles: potential,
        blocked,
        wait_for_cycles,
        edges: edges.len(),
        single_thread,
        guarded,
        entered_events,
        source,
        sampled: false,
        juc: HashSet::new(),
        classes: HashMap::new(),
        names: threads
            .into_iter()
            .filter_map(|(h, t)| t.name.map(|n| (h, n)))
            .collect(),
    }
}

/// The findings as `orca deadlocks` prints them.
pub fn text(f: &Findings, md: &Metadata) -> String {
    let label = |h: Hash| f.label(h);
    let mut out = String::new();
    for (i, c) in f.cycles.iter().enumerate() {
        let names: Vec<String> = c
            .monitors
            .iter()
            .chain(std::iter::once(&c.monitors[0]))
            .map(|h| h.to_string())
            .collect();
        let _ = writeln!(
            out,
            "Potential deadlock #{}: lock-order cycle of {} {}: {}",
            i + 1,
            c.monitors.len(),
            if c.monitors.iter().any(|m| f.juc.contains(m)) {
                "locks"
            } else {
                "monitors"
            },
            names.join(" -> ")
        );
        for e in &c.edges {
            let _ = writeln!(
                out,
                "  thread {} holds {} (order first seen at line {} of the log, {}), acquired at:",
                label(e.thread),
                f.node(e.from),
                e.line,
                crate::util::times(e.count)
            );
            out.push_str(&stack_lines(md, &e.from_stack, "      "));
            let _ = writeln!(out, "    then takes {} at:", f.node(e.to));
            out.push_str(&stack_lines(md, &e.to_stack, "      "));
        }
        out.push('\n');
    }

    if !f.blocked.is_empty() {
        let _ = writeln!(
            out,
            "Threads blocked on a monitor at the end of the log (actual deadlock):"
        );
        for b in &f.blocked {
            let _ = writeln!(
                out,
                "  thread {} blocked on {} owned by {} (line {}), at:",
                label(b.thread),
                f.node(b.monitor),
                label(b.owner),
                b.line
            );
            out.push_str(&stack_lines(md, &b.stack, "      "));
        }
        for cyc in &f.wait_for_cycles {
            let names: Vec<String> = cyc
                .iter()
                .chain(std::iter::once(&cyc[0]))
                .map(|h| label(*h))
                .collect();
            let _ = writeln!(out, "  wait-for cycle: {}", names.join(" -> "));
        }
        out.push('\n');
    }

    if f.entered_events == 0 {
        let _ = writeln!(
            out,
            "note: no MonitorEntered events, j.u.c. lock events or summary lines (JVMTI mode?): the lock-order graph of monitors needs mode=instrument"
        );
    }
    if let Some(source) = f.source {
        let _ = writeln!(
            out,
            "note: lock order from {source} (sites are one frame; --from-events uses the events)"
        );
    }
    if f.sampled {
        let _ = writeln!(
            out,
            "note: recorded with tracking=sampled (lock orders, and so potential deadlocks, come from a sample of each busy thread's holds: a nesting that a thread locking more than about 50,000 times a second takes rarely may be missing; record with tracking=full, `orca record --tracking full`, for a deadlock hunt)"
        );
    }
    let _ = writeln!(
        out,
        "{} lock-order edges, {} potential deadlocks, {} threads blocked at the end{}{}",
        f.edges,
        f.cycles.len(),
        f.blocked.len(),
        if f.single_thread > 0 {
            format!(", {} single-thread cycles ignored", f.single_thread)
        } else {
            String::new()
        },
        if f.guarded > 0 {
            format!(", {} cycles guarded by a common lock ignored", f.guarded)
        } else {
            String::new()
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSES: &str = "1.000000000,15DB9742,LT;,T.java\n";
    const METHODS: &str = "\
1.000000000,00000001,a,()V,15DB9742,1;00000000;0000000A
1.000000000,00000002,b,()V,15DB9742,1;00000000;00000014
";

    fn run_on(orca: &str, from_events: bool) -> String {
        let md = Metadata::from_readers(CLASSES.as_bytes(), METHODS.as_bytes()).unwrap();
        run_with(EventReader::new(orca.as_bytes()), &md, from_events)
            .unwrap()
            .0
    }

    /// A graph from the summary lines of a recording with `tracking=sampled` says that it is
    /// a sample; one of `tracking=full`, of an older log, or from the events does not.
    #[test]
    fn a_graph_from_sampled_tracking_says_so() {
        let orders = "\
1.000000000,LockOrder,0000AAAA,00001111,00002222,2,0,1;00000001;00000001,1;00000001;00000002
2.000000000,LockOrder,0000BBBB,00002222,00001111,1,0,1;00000002;00000001,1;00000002;00000002
";
        let started = |tracking: &str| {
            format!(
                "0.500000000,RecordingStarted,mode=instrument;trace=summary;holdtiming=sampled;tracking={tracking};stackdepth=8\n{orders}"
            )
        };
        let note = "note: recorded with tracking=sampled (lock orders, and so potential deadlocks, come from a sample";
        let out = run_on(&started("sampled"), false);
        assert!(out.contains(note), "{out}");
        assert!(out.contains("Potential deadlock #1"), "{out}");
        for (log, from_events) in [
            (started("full"), false),
            (orders.to_string(), false),
            (started("sampled"), true),
        ] {
            let out = run_on(&log, from_events);
            assert!(!out.contains("tracking=sampled"), "{out}");
        }
    }

    /// LockOrder lines of several intervals and threads add up per edge; an edge is guarded
    /// only by the monitors held at every one of its occurrences.
    #[test]
    fn lock_order_lines_are_summed_across_intervals() {
        let out = run_on(
            "\
1.000000000,LockOrder,0000AAAA,00001111,00002222,2,1;00003333,1;00000001;00000001,1;00000001;00000002
2.000000000,LockOrder,0000AAAA,00001111,00002222,3,1;00003333,1;00000001;00000001,1;00000001;00000002
2.000000000,LockOrder,0000BBBB,00002222,00001111,1,1;00003333,1;00000002;00000001,1;00000002;00000002
3.000000000,LockOrder,0000BBBB,00002222,00001111,4,0,1;00000002;00000001,1;00000002;00000002
",
            false,
        );
        // 1111 -> 2222 always under 3333, 2222 -> 1111 once without it: not a common guard.
        assert!(
            out.contains("Potential deadlock #1: lock-order cycle of 2 monitors: 00001111 -> 00002222 -> 00001111"),
            "{out}"
        );
        assert!(
            out.contains("holds monitor 00001111 (order first seen at line 1 of the log, 5 times)"),
            "{out}"
        );
        assert!(
            out.contains("holds monitor 00002222 (order first seen at line 3 of the log, 5 times)"),
            "{out}"
        );
        assert!(
            out.contains(
                "      T.a(T.java:10)\n    then takes monitor 00002222 at:\n      T.a(T.java:10)\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("note: lock order from LockOrder summary lines"),
            "{out}"
        );
        assert!(
            out.ends_with(
                "2 lock-order edges, 1 potential deadlocks, 0 threads blocked at the end\n"
            ),
            "{out}"
        );
        // Both directions always under 3333: guarded.
        let out = run_on(
            "\
1.000000000,LockOrder,0000AAAA,00001111,00002222,2,1;00003333,1;00000001;00000001,1;00000001;00000002
2.000000000,LockOrder,0000BBBB,00002222,00001111,1,1;00003333,1;00000002;00000001,1;00000002;00000002
",
            false,
        );
        assert!(
            out.contains("0 potential deadlocks")
                && out.contains("1 cycles guarded by a common lock ignored"),
            "{out}"
        );
    }

    /// A thread holding a j.u.c. lock enters a monitor, another holds the monitor and takes
    /// the lock: one cycle over both kinds, with the read and write views one node.
    #[test]
    fn juc_locks_and_monitors_make_one_lock_order_graph() {
        let out = run_on(
            "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000001
1.000000001,LockAcquired,0000AAAA,00002222,W,1;00000001;00000001
1.000000002,LockAcquire,0000AAAA,00002222,R,0000AAAA,1;00000001;00000001
1.000000003,LockAcquired,0000AAAA,00002222,R,1;00000001;00000001
1.000000004,MonitorEnter,0000AAAA,00001111,1;00000001;00000002
1.000000005,MonitorEntered,0000AAAA,00001111,1;00000001;00000002
1.000000006,MonitorExit,0000AAAA,00001111,1;00000001;00000002
1.000000007,LockRelease,0000AAAA,00002222,R,1;00000001;00000001
1.000000008,LockRelease,0000AAAA,00002222,W,1;00000001;00000001
2.000000000,MonitorEnter,0000BBBB,00001111,1;00000002;00000001
2.000000001,MonitorEntered,0000BBBB,00001111,1;00000002;00000001
2.000000002,LockAcquire,0000BBBB,00002222,W,00000000,1;00000002;00000002
2.000000003,LockAcquired,0000BBBB,00002222,W,1;00000002;00000002
2.000000004,LockRelease,0000BBBB,00002222,W,1;00000002;00000002
2.000000005,MonitorExit,0000BBBB,00001111,1;00000002;00000001
",
            false,
        );
        assert!(
            out.contains("Potential deadlock #1: lock-order cycle of 2 locks: 00001111 -> 00002222 -> 00001111"),
            "{out}"
        );
        assert!(
            out.contains("thread [0000AAAA] holds j.u.c. lock 00002222 (order first seen at line 5 of the log, 1 time)"),
            "{out}"
        );
        assert!(out.contains("then takes monitor 00001111 at:"), "{out}");
        assert!(
            out.contains("thread [0000BBBB] holds monitor 00001111 (order first seen at line 12 of the log, 1 time)"),
            "{out}"
        );
        assert!(
            out.ends_with(
                "2 lock-order edges, 1 potential deadlocks, 0 threads blocked at the end\n"
            ),
            "{out}"
        );
    }

    /// JVMTI mode sees no monitor holds, but a real cross-kind deadlock leaves one thread in a
    /// contention and the other in a `LockAcquire`, each owned by the other.
    #[test]
    fn a_thread_left_in_lock_acquire_is_blocked_on_its_owner() {
        let out = run_on(
            "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000001
1.000000001,LockAcquired,0000AAAA,00002222,W,1;00000001;00000001
1.000000002,MonitorContendedEnter,0000AAAA,00001111,0000BBBB,1;00000001;00000002
1.000000003,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000002
",
            false,
        );
        assert!(
            out.contains(
                "thread [0000AAAA] blocked on monitor 00001111 owned by [0000BBBB] (line 3)"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "thread [0000BBBB] blocked on j.u.c. lock 00002222 owned by [0000AAAA] (line 4)"
            ),
            "{out}"
        );
        assert!(
            out.contains("wait-for cycle: [0000AAAA] -> [0000BBBB] -> [0000AAAA]"),
            "{out}"
        );
        // The contention after the held lock is an order edge too.
        assert!(out.contains("1 lock-order edges"), "{out}");
    }

    /// A contention inside a lock call (a class initialiser the acquisition needs, which
    /// another thread runs) does not end the acquisition: once the thread has the monitor, it
    /// is blocked in the lock again (MixedDeadlock on JDK 17, where `main`'s first
    /// `LockSupport.getBlocker` and the lock's first park both initialise `LockSupport`).
    #[test]
    fn a_contention_inside_an_acquisition_leaves_it_blocked() {
        let out = run_on(
            "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000001
1.000000001,LockAcquired,0000AAAA,00002222,W,1;00000001;00000001
1.000000002,MonitorContendedEnter,0000AAAA,00001111,0000BBBB,1;00000001;00000002
1.000000003,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000002
1.000000004,MonitorContendedEnter,0000BBBB,00003333,0000CCCC,1;00000002;00000003
1.000000005,MonitorContendedEntered,0000BBBB,00003333,1;00000002;00000003
",
            false,
        );
        assert!(
            out.contains(
                "thread [0000BBBB] blocked on j.u.c. lock 00002222 owned by [0000AAAA] (line 4)"
            ),
            "{out}"
        );
        assert!(
            out.contains("wait-for cycle: [0000AAAA] -> [0000BBBB] -> [0000AAAA]"),
            "{out}"
        );
        // Its end line ends it: a timed tryLock that timed out is no thread blocked.
        let out = run_on(
            "\
1.000000003,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000002
1.000000004,MonitorContendedEnter,0000BBBB,00003333,0000CCCC,1;00000002;00000003
1.000000005,MonitorContendedEntered,0000BBBB,00003333,1;00000002;00000003
1.000000006,LockTimedOut,0000BBBB,00002222,W,1;00000002;00000002
",
            false,
        );
        assert!(out.contains(", 0 threads blocked at the end"), "{out}");
    }

    /// Summary lines neither end a contention nor an entering: a thread blocked at the end
    /// whose summaries come after its MonitorContendedEnter is still blocked.
    #[test]
    fn summary_lines_after_a_contention_keep_the_thread_blocked() {
        let out = run_on(
            "\
1.000000000,MonitorContendedEnter,0000AAAA,00001111,0000BBBB,1;00000001;00000001
2.000000000,MonitorHolds,0000AAAA,00002222,1,70,70,1;70;1,1;00000001;00000001
",
            false,
        );
        assert!(
            out.contains(
                "thread [0000AAAA] blocked on monitor 00001111 owned by [0000BBBB] (line 1)"
            ),
            "{out}"
        );
        assert!(!out.contains("note: no MonitorEntered"), "{out}");
    }

    /// The default mode's log with j.u.c. summaries: the cross-kind cycle "A holds the
    /// ReentrantLock 2222 and enters synchronized (1111); B holds 1111 and locks 2222" comes
    /// from the LockOrder lines alone. The j.u.c. events of the contended acquisitions (whose
    /// releases are not written) add no edge of their own: 5555 -> 2222 is counted once, and
    /// 2222 -> 1111 first seen at the LockOrder line, not at A's contention.
    #[test]
    fn juc_lock_order_lines_make_the_cross_kind_cycle() {
        let log = "\
1.000000000,ThreadStarted,0000AAAA,a
1.000000001,ThreadStarted,0000BBBB,b
1.000000010,LockAcquire,0000AAAA,00005555,W,0000CCCC,1;00000001;00000001
1.000000020,LockAcquired,0000AAAA,00005555,W,1;00000001;00000001
1.000000030,LockAcquire,0000AAAA,00002222,W,0000CCCC,1;00000001;00000002
1.000000040,LockAcquired,0000AAAA,00002222,W,1;00000001;00000002
1.000000050,MonitorContendedEnter,0000AAAA,00001111,0000BBBB,1;00000001;00000003
1.000000060,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000002
2.000000000,LockOrder,0000AAAA,00005555,00002222,1,0,1;00000001;00000001,1;00000001;00000002
2.000000000,LockOrder,0000AAAA,00005555,00001111,1,1;00002222,1;00000001;00000001,1;00000001;00000003
2.000000000,LockOrder,0000AAAA,00002222,00001111,1,1;00005555,1;00000001;00000002,1;00000001;00000003
2.000000000,LockHolds,0000CCCC,00006666,W,1,100,100,1;100;1,1;00000002;00000004
2.000000001,LockOrder,0000BBBB,00001111,00002222,1,0,1;00000002;00000001,1;00000002;00000002
";
        let out = run_on(log, false);
        for want in [
            "Potential deadlock #1: lock-order cycle of 2 locks: 00001111 -> 00002222 -> 00001111\n",
            "  thread \"b\" [0000BBBB] holds monitor 00001111 (order first seen at line 13 of the log, 1 time), acquired at:\n",
            "    then takes j.u.c. lock 00002222 at:\n",
            "  thread \"a\" [0000AAAA] holds j.u.c. lock 00002222 (order first seen at line 11 of the log, 1 time), acquired at:\n",
            "    then takes monitor 00001111 at:\n",
            "  thread \"a\" [0000AAAA] blocked on monitor 00001111 owned by \"b\" [0000BBBB] (line 7), at:\n",
            "  thread \"b\" [0000BBBB] blocked on j.u.c. lock 00002222 owned by \"a\" [0000AAAA] (line 8), at:\n",
            "note: lock order from LockOrder summary lines",
            "4 lock-order edges, 1 potential deadlocks, 2 threads blocked at the end\n",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        let f = analyze(EventReader::new(log.as_bytes())).unwrap();
        // 6666 is named only by a LockHolds line; 1111 by nothing but monitor lines.
        assert_eq!(f.node(Hash(0x6666)), "j.u.c. lock 00006666");
        assert_eq!(f.node(Hash(0x1111)), "monitor 00001111");
        assert_eq!(f.edges, 4);
        // Without the LockHolds line, the LockOrder lines that name j.u.c. locks still say
        // that they cover them: the same graph.
        let no_holds: String = log
            .lines()
            .filter(|l| !l.contains(",LockHolds,"))
            .map(|l| format!("{l}\n"))
            .collect();
        let out = run_on(&no_holds, false);
        assert!(
            out.contains(
                "holds j.u.c. lock 00002222 (order first seen at line 11 of the log, 1 time)"
            ),
            "{out}"
        );
        // An older agent's log (LockOrder lines of monitors only, no j.u.c. summaries): the
        // j.u.c. edges come from the j.u.c. events, as before: 5555 -> 2222 from A's
        // LockAcquire, 5555 -> 1111 and 2222 -> 1111 from A's contention, and 1111 -> 7777.
        let old: String = log
            .lines()
            .filter(|l| !l.contains(",LockHolds,") && !l.contains(",LockOrder,"))
            .chain(std::iter::once(
                "2.000000002,LockOrder,0000BBBB,00001111,00007777,1,0,1;00000002;00000001,1;00000002;00000002",
            ))
            .map(|l| format!("{l}\n"))
            .collect();
        let out = run_on(&old, false);
        assert!(
            out.ends_with(
                "4 lock-order edges, 0 potential deadlocks, 2 threads blocked at the end\n"
            ),
            "{out}"
        );
    }

    /// Holding the write view and taking the read view of the same lock is no edge from that
    /// lock, but the other locks held are edges to it (FORMAT.md, LockOrder); taking the same
    /// (lock, mode) again counts for nothing.
    #[test]
    fn read_view_under_the_write_view_is_an_edge_from_the_others_only() {
        let out = run_on(
            "\
1.000000000,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000001
1.000000001,LockAcquired,0000AAAA,00002222,W,1;00000001;00000001
1.000000002,MonitorEnter,0000AAAA,00001111,1;00000001;00000002
1.000000003,MonitorEntered,0000AAAA,00001111,1;00000001;00000002
1.000000004,LockAcquire,0000AAAA,00002222,R,0000AAAA,1;00000001;00000003
1.000000005,LockAcquired,0000AAAA,00002222,R,1;00000001;00000003
1.000000006,LockAcquire,0000AAAA,00002222,W,0000AAAA,1;00000001;00000004
1.000000007,LockAcquired,0000AAAA,00002222,W,1;00000001;00000004
1.000000008,LockRelease,0000AAAA,00002222,W,1;00000001;00000004
1.000000009,LockRelease,0000AAAA,00002222,R,1;00000001;00000003
1.000000010,MonitorExit,0000AAAA,00001111,1;00000001;00000002
1.000000011,LockRelease,0000AAAA,00002222,W,1;00000001;00000001
",
            false,
        );
        assert!(
            out.ends_with("2 lock-order edges, 0 potential deadlocks, 0 threads blocked at the end, 1 single-thread cycles ignored\n"),
            "{out}"
        );
    }
}
