//! `orca deadlocks`: the lock-order graph (GoodLock / JCarder style) built from
//! nested `MonitorEntered` events, its cycles (potential deadlocks), and the
//! threads still blocked on a monitor at the end of the log (actual deadlocks).
//!
//! When the log has summary lines (docs/FORMAT.md, "Summary lines"), the graph
//! comes from its `LockOrder` lines instead, each one the edge occurrences
//! [`add_edges`] would have counted, `count` times: the same edges, counts and
//! guards, with one-frame sites (`--from-events` forces the events).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use orca_format::{parse_stack, Event, EventReader, Hash, LineError, Metadata};

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
    held: Vec<(Hash, u32, String)>,
    /// Last event was MonitorContendedEnter: (monitor, owner, stack, line).
    blocked: Option<Blocked>,
    /// MonitorEnter seen, MonitorEntered not yet: its edges are already in.
    entering: Option<Hash>,
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
    mut r: EventReader<R>,
    md: &Metadata,
    from_events: bool,
) -> std::io::Result<(String, bool)> {
    let mut threads: HashMap<Hash, ThreadState> = HashMap::new();
    let mut edges: HashMap<(Hash, Hash), Edge> = HashMap::new();
    let mut summary_edges: HashMap<(Hash, Hash), Edge> = HashMap::new();
    let mut entered_events = 0u64;
    let mut summary_lines = 0u64;
    while let Some((line, rec)) = r.next_event()? {
        let rec = match rec {
            Ok(rec) => rec,
            Err(LineError::Torn) | Err(_) => continue,
        };
        let Some(thread) = rec.event.thread() else {
            continue;
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
                let guards: Vec<Hash> = guards.iter().collect();
                let site = (held_site.raw(), acquired_site.raw());
                add_edge(
                    &mut summary_edges,
                    (thread, line),
                    (held, acquired),
                    site,
                    guards,
                    count,
                );
                continue;
            }
            Event::MonitorHolds { .. } => {
                summary_lines += 1;
                continue;
            }
            Event::MonitorHold { .. } => continue,
            _ => {}
        }
        t.blocked = None;
        let entering = t.entering.take();
        match rec.event {
            Event::ThreadStarted { name, .. } => t.name = Some(name.decode().into_owned()),
            Event::MonitorContendedEnter {
                monitor,
                owner,
                stack,
                ..
            } => {
                t.blocked = Some((monitor, owner, stack.raw().to_string(), line));
                t.entering = entering;
            }
            Event::MonitorContendedEntered { .. } => t.entering = entering,
            Event::MonitorEnter { monitor, stack, .. }
            | Event::MonitorEntered { monitor, stack, .. } => {
                let is_enter = rec.event.kind() == orca_format::EventKind::MonitorEnter;
                if is_enter {
                    // The order is what the thread tries: record it before it
                    // blocks, so that a run that really deadlocks shows it too.
                    t.entering = Some(monitor);
                } else {
                    entered_events += 1;
                    if let Some(h) = t.held.iter_mut().find(|h| h.0 == monitor) {
                        h.1 += 1; // reentrant: no new order
                        continue;
                    }
                }
                if t.held.iter().any(|h| h.0 == monitor) {
                    continue; // reentrant MonitorEnter
                }
                if entering != Some(monitor) || is_enter {
                    add_edges(&mut edges, t, thread, monitor, stack.raw(), line);
                }
                if !is_enter {
                    t.held.push((monitor, 1, stack.raw().to_string()));
                }
            }
            Event::MonitorExit { monitor, .. } => {
                if let Some(i) = t.held.iter().position(|h| h.0 == monitor) {
                    t.held[i].1 -= 1;
                    if t.held[i].1 == 0 {
                        t.held.remove(i);
                    }
                }
            }
            _ => {}
        }
    }
    let from_summaries = summary_lines > 0 && !from_events;
    let (edges, source) = if from_summaries {
        (summary_edges, Some("LockOrder summary lines"))
    } else {
        (edges, None)
    };
    report(threads, edges, entered_events + summary_lines, source, md)
}

/// One acquisition of `monitor` at `site` while holding `t.held`: one edge
/// occurrence per held monitor, the other held monitors being its guards.
/// (A `LockOrder` line is `count` such occurrences of one held monitor.)
fn add_edges(
    edges: &mut HashMap<(Hash, Hash), Edge>,
    t: &ThreadState,
    thread: Hash,
    monitor: Hash,
    site: &str,
    line: u64,
) {
    let held_ids: Vec<Hash> = t.held.iter().map(|h| h.0).collect();
    for (from, _, from_site) in &t.held {
        let guards: Vec<Hash> = held_ids.iter().copied().filter(|g| g != from).collect();
        add_edge(
            edges,
            (thread, line),
            (*from, monitor),
            (from_site, site),
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

fn report(
    threads: HashMap<Hash, ThreadState>,
    edges: HashMap<(Hash, Hash), Edge>,
    entered_events: u64,
    source: Option<&str>,
    md: &Metadata,
) -> std::io::Result<(String, bool)> {
    let label = |h: Hash| -> String {
        if h == Hash::UNKNOWN {
            return "unknown thread".into();
        }
        match threads.get(&h).and_then(|t| t.name.as_deref()) {
            Some(n) => format!("\"{n}\" [{h}]"),
            None => format!("[{h}]"),
        }
    };

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

    let mut out = String::new();
    let mut potential = 0;
    let mut single_thread = 0;
    let mut guarded = 0;
    for cyc in &cycles {
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
        potential += 1;
        let names: Vec<String> = cyc
            .iter()
            .chain(std::iter::once(&cyc[0]))
            .map(|h| h.to_string())
            .collect();
        let _ = writeln!(
            out,
            "Potential deadlock #{potential}: lock-order cycle of {} monitors: {}",
            cyc.len(),
            names.join(" -> ")
        );
        for (e, a, b) in cedges {
            let _ = writeln!(
                out,
                "  thread {} holds monitor {a} (order first seen at line {} of the log, {} times), acquired at:",
                label(e.thread),
                e.line,
                e.count
            );
            out.push_str(&stack_lines(md, &e.from_site, "      "));
            let _ = writeln!(out, "    then takes monitor {b} at:");
            out.push_str(&stack_lines(md, &e.to_site, "      "));
        }
        out.push('\n');
    }

    // Threads blocked at the end of the log.
    let mut blocked: Vec<(Hash, &Blocked)> = threads
        .iter()
        .filter_map(|(h, t)| t.blocked.as_ref().map(|b| (*h, b)))
        .collect();
    blocked.sort_by_key(|(_, b)| b.3);
    if !blocked.is_empty() {
        let _ = writeln!(
            out,
            "Threads blocked on a monitor at the end of the log (actual deadlock):"
        );
        for (h, (m, owner, site, line)) in &blocked {
            let _ = writeln!(
                out,
                "  thread {} blocked on monitor {m} owned by {} (line {line}), at:",
                label(*h),
                label(*owner)
            );
            out.push_str(&stack_lines(md, site, "      "));
        }
        // Wait-for cycle among them.
        let waits: HashMap<Hash, Hash> = blocked.iter().map(|(h, b)| (*h, b.1)).collect();
        let mut reported: HashSet<Hash> = HashSet::new();
        for (start, _) in &blocked {
            let mut path = vec![*start];
            let mut x = *start;
            while let Some(&o) = waits.get(&x) {
                if let Some(i) = path.iter().position(|p| *p == o) {
                    let cyc = &path[i..];
                    if cyc.iter().all(|c| reported.insert(*c)) {
                        let names: Vec<String> = cyc
                            .iter()
                            .chain(std::iter::once(&cyc[0]))
                            .map(|h| label(*h))
                            .collect();
                        let _ = writeln!(out, "  wait-for cycle: {}", names.join(" -> "));
                    }
                    break;
                }
                path.push(o);
                x = o;
            }
        }
        out.push('\n');
    }

    if entered_events == 0 {
        let _ = writeln!(
            out,
            "note: no MonitorEntered events or summary lines (JVMTI mode?): the lock-order graph needs mode=instrument"
        );
    }
    if let Some(source) = source {
        let _ = writeln!(
            out,
            "note: lock order from {source} (sites are one frame; --from-events uses the events)"
        );
    }
    let _ = writeln!(
        out,
        "{} lock-order edges, {} potential deadlocks, {} threads blocked at the end{}{}",
        edges.len(),
        potential,
        blocked.len(),
        if single_thread > 0 {
            format!(", {single_thread} single-thread cycles ignored")
        } else {
            String::new()
        },
        if guarded > 0 {
            format!(", {guarded} cycles guarded by a common lock ignored")
        } else {
            String::new()
        },
    );
    Ok((out, potential > 0 || !blocked.is_empty()))
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
}
