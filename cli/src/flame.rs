//! `orca flame`: collapsed stacks (`outer;...;inner;monitor HASH weight`; `monitor
//! HashMap@HASH` when the log names the object's class in an `ObjectClass` line),
//! weighted by nanoseconds blocked, held or waiting, as async-profiler's lock
//! mode does; feed it to FlameGraph's `flamegraph.pl` or speedscope.
//! Stacks are aggregated by their raw text, so memory grows with distinct
//! stacks, not with events. `--weight held` uses the `MonitorHolds` summary
//! lines when the log has summary lines (their one-frame site, summed totals),
//! and the `LockHolds` lines for j.u.c. locks when the log has any.
//!
//! j.u.c. locks are in the same graphs, their last frame `lock HASH`: `blocked` has the
//! contended acquisitions (another thread owned the lock as the `LockAcquire` began), `held`
//! the outermost holds per lock and mode (less the time in `await`), and `waiting` the condition awaits
//! (`condition HASH`) and parks (`park HASH`, the blocker; `park` without one).

use std::collections::HashMap;
use std::fmt::Write as _;

use orca_format::{
    parse_stack, ConditionOp, Durations, Event, EventReader, Hash, LockMode, LockOp, Metadata,
    WaitCall,
};

use crate::FlameWeight;

#[derive(Default)]
struct ThreadState {
    /// Open span: (monitor/object, since, stack).
    open: Option<(Hash, u64, String)>,
    /// Held monitors: (monitor, count, since, stack).
    held: Vec<(Hash, u32, u64, String)>,
    /// Open j.u.c. span: (what, object, since, stack).
    juc_open: Option<(&'static str, Hash, u64, String)>,
    /// Held j.u.c. locks: (lock, mode, count, since, stack); since is `u64::MAX` during an
    /// await.
    juc_held: Vec<(Hash, LockMode, u32, u64, String)>,
}

/// One collapsed stack: frames outermost first, the last one `monitor HASH`.
pub struct Collapsed {
    pub frames: Vec<String>,
    pub monitor: Hash,
    pub ns: u64,
}

/// Builds the collapsed-stack text.
#[allow(dead_code)] // the entry point without options
pub fn run<R: std::io::Read>(
    r: EventReader<R>,
    md: &Metadata,
    w: FlameWeight,
) -> std::io::Result<String> {
    run_with(r, md, w, false)
}

/// [`run`]; with `from_events`, `held` comes from events even when the log
/// has summary lines.
pub fn run_with<R: std::io::Read>(
    r: EventReader<R>,
    md: &Metadata,
    w: FlameWeight,
    from_events: bool,
) -> std::io::Result<String> {
    let mut out = String::new();
    for c in collapse_with(r, md, w, from_events)? {
        let _ = writeln!(out, "{} {}", c.frames.join(";"), c.ns);
    }
    Ok(out)
}

/// The stacks and their weights, merged and sorted as `orca flame` prints them, for the
/// text output and the HTML report alike.
pub fn collapse<R: std::io::Read>(
    r: EventReader<R>,
    md: &Metadata,
    w: FlameWeight,
) -> std::io::Result<Vec<Collapsed>> {
    collapse_with(r, md, w, false)
}

/// [`collapse`]; with `from_events`, `held` comes from events even when the log has
/// summary lines.
pub fn collapse_with<R: std::io::Read>(
    mut r: EventReader<R>,
    md: &Metadata,
    w: FlameWeight,
    from_events: bool,
) -> std::io::Result<Vec<Collapsed>> {
    let mut threads: HashMap<Hash, ThreadState> = HashMap::new();
    let mut weights: HashMap<(String, Hash), u64> = HashMap::new();
    let mut summary_weights: HashMap<(String, Hash), u64> = HashMap::new();
    // (timed, untimed) holds per key: holdtiming=sampled's totals are a sample's, scaled.
    let mut summary_counts: HashMap<(String, Hash), (u64, u64)> = HashMap::new();
    let mut summary_lines = 0u64;
    // j.u.c. spans, labelled by kind, kept apart from both; and the holds of LockHolds lines.
    let mut juc_weights: HashMap<(String, Hash, &'static str), u64> = HashMap::new();
    let mut juc_summary_weights: HashMap<(String, Hash, &'static str), u64> = HashMap::new();
    let mut juc_summary_counts: HashMap<(String, Hash, &'static str), (u64, u64)> = HashMap::new();
    let mut lock_summary_lines = 0u64;
    let mut add = |raw: String, m: Hash, ns: u64| {
        *weights.entry((raw, m)).or_default() += ns;
    };
    let mut last_ts = 0;
    let mut classes: HashMap<Hash, String> = HashMap::new();
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        if matches!(
            rec.event,
            Event::RecordingStarted { .. } | Event::RecordingEnded { .. }
        ) {
            // Not an event: the log's end is its last event's time, as in `report`.
            continue;
        }
        let ts = rec.timestamp.nanos();
        last_ts = last_ts.max(ts);
        let Some(thread) = rec.event.thread() else {
            if let Event::ObjectClass { object, class } = rec.event {
                // the first: a second line names another object with the same ID (the report says so)
                classes
                    .entry(object)
                    .or_insert_with(|| orca_format::java_class_name(&class.decode()));
            }
            continue;
        };
        let t = threads.entry(thread).or_default();
        match (w, rec.event) {
            (
                _,
                Event::MonitorHolds {
                    monitor,
                    site,
                    durations: Durations { count, total, .. },
                    ..
                },
            ) => {
                summary_lines += 1;
                *summary_weights
                    .entry((site.raw().to_string(), monitor))
                    .or_default() += total;
                let c = summary_counts.entry((site.raw().to_string(), monitor));
                c.or_default().0 += count;
            }
            (
                _,
                Event::MonitorHoldsUntimed {
                    monitor,
                    count,
                    site,
                    ..
                },
            ) => {
                summary_lines += 1;
                let c = summary_counts.entry((site.raw().to_string(), monitor));
                c.or_default().1 += count;
            }
            (_, Event::LockOrder { .. }) => summary_lines += 1,
            (
                _,
                Event::LockHolds {
                    lock,
                    site,
                    durations: Durations { count, total, .. },
                    ..
                },
            ) => {
                lock_summary_lines += 1;
                *juc_summary_weights
                    .entry((site.raw().to_string(), lock, "lock"))
                    .or_default() += total;
                let c = juc_summary_counts.entry((site.raw().to_string(), lock, "lock"));
                c.or_default().0 += count;
            }
            (
                _,
                Event::LockHoldsUntimed {
                    lock, count, site, ..
                },
            ) => {
                lock_summary_lines += 1;
                let c = juc_summary_counts.entry((site.raw().to_string(), lock, "lock"));
                c.or_default().1 += count;
            }
            (FlameWeight::Blocked, Event::MonitorContendedEnter { monitor, stack, .. })
            | (
                FlameWeight::Waiting,
                Event::ObjectWait {
                    object: monitor,
                    stack,
                    ..
                },
            ) => {
                t.open = Some((monitor, ts, stack.raw().to_string()));
            }
            (FlameWeight::Blocked, Event::MonitorContendedEntered { monitor, .. })
            | (
                FlameWeight::Waiting,
                Event::ObjectWaited {
                    object: monitor, ..
                },
            ) => {
                if let Some((m, since, raw)) = t.open.take() {
                    if m == monitor {
                        add(raw, m, ts.saturating_sub(since));
                    }
                }
            }
            // Contentions the agent counted per one-frame site (short ones, and long ones
            // beyond their site's budget).
            (
                FlameWeight::Blocked,
                Event::MonitorContentions {
                    monitor,
                    site,
                    durations: Durations { total, .. },
                    ..
                },
            ) => add(site.raw().to_string(), monitor, total),
            (
                FlameWeight::Blocked,
                Event::LockContentions {
                    lock,
                    site,
                    durations: Durations { total, .. },
                    ..
                },
            ) => {
                *juc_weights
                    .entry((site.raw().to_string(), lock, "lock"))
                    .or_default() += total;
            }
            // Waits shorter than the agent's threshold, counted per one-frame site.
            (
                FlameWeight::Waiting,
                Event::Waits {
                    call,
                    object,
                    total,
                    site,
                    ..
                },
            ) => match call {
                WaitCall::Wait => add(site.raw().to_string(), object, total),
                WaitCall::Await | WaitCall::Park | WaitCall::Acquire => {
                    let what = match call {
                        WaitCall::Await => "condition",
                        WaitCall::Park => "park",
                        _ => "semaphore",
                    };
                    *juc_weights
                        .entry((site.raw().to_string(), object, what))
                        .or_default() += total;
                }
                // As their events: joins and sleeps wait for no lock.
                WaitCall::Join | WaitCall::Sleep => {}
            },
            (FlameWeight::Held, Event::MonitorEntered { monitor, stack, .. }) => {
                match t.held.iter_mut().find(|h| h.0 == monitor) {
                    Some(h) => h.1 += 1,
                    None => t.held.push((monitor, 1, ts, stack.raw().to_string())),
                }
            }
            (FlameWeight::Held, Event::ObjectWait { object, .. }) => {
                // Object.wait releases the monitor: count the hold so far.
                if let Some(h) = t.held.iter_mut().find(|h| h.0 == object) {
                    add(h.3.clone(), object, ts.saturating_sub(h.2));
                    h.2 = u64::MAX;
                }
            }
            (FlameWeight::Held, Event::ObjectWaited { object, .. }) => {
                if let Some(h) = t.held.iter_mut().find(|h| h.0 == object) {
                    h.2 = ts; // re-acquired
                }
            }
            (
                FlameWeight::Blocked,
                Event::LockAcquire {
                    lock, owner, stack, ..
                },
            ) if owner != Hash::UNKNOWN && owner != thread => {
                t.juc_open = Some(("lock", lock, ts, stack.raw().to_string()));
            }
            (FlameWeight::Blocked, Event::Lock { op, lock, .. }) if op != LockOp::Release => {
                if let Some((what, l, since, raw)) = t.juc_open.take() {
                    if l == lock {
                        *juc_weights.entry((raw, l, what)).or_default() += ts.saturating_sub(since);
                    }
                }
            }
            (
                FlameWeight::Waiting,
                Event::Condition {
                    op: ConditionOp::Await,
                    condition,
                    stack,
                    ..
                },
            ) => t.juc_open = Some(("condition", condition, ts, stack.raw().to_string())),
            (FlameWeight::Waiting, Event::ThreadPark { blocker, stack, .. }) => {
                t.juc_open = Some(("park", blocker, ts, stack.raw().to_string()));
            }
            (
                FlameWeight::Waiting,
                Event::Condition {
                    op: ConditionOp::Awaited,
                    ..
                }
                | Event::ThreadParked { .. },
            ) => {
                if let Some((what, o, since, raw)) = t.juc_open.take() {
                    *juc_weights.entry((raw, o, what)).or_default() += ts.saturating_sub(since);
                }
            }
            (
                FlameWeight::Held,
                Event::Lock {
                    op: LockOp::Acquired,
                    lock,
                    mode,
                    stack,
                    ..
                },
            ) => match t.juc_held.iter_mut().find(|h| h.0 == lock && h.1 == mode) {
                Some(h) => h.2 += 1,
                None => t
                    .juc_held
                    .push((lock, mode, 1, ts, stack.raw().to_string())),
            },
            (
                FlameWeight::Held,
                Event::Lock {
                    op: LockOp::Release,
                    lock,
                    mode,
                    ..
                },
            ) => {
                if let Some(i) = t.juc_held.iter().position(|h| h.0 == lock && h.1 == mode) {
                    t.juc_held[i].2 -= 1;
                    if t.juc_held[i].2 == 0 {
                        let (l, _, _, since, raw) = t.juc_held.swap_remove(i);
                        if since != u64::MAX {
                            *juc_weights.entry((raw, l, "lock")).or_default() +=
                                ts.saturating_sub(since);
                        }
                    }
                }
            }
            (FlameWeight::Held, Event::Condition { op, lock, .. }) => {
                // await releases the lock: count the holds so far, resume when it returns.
                for h in t.juc_held.iter_mut().filter(|h| h.0 == lock) {
                    match op {
                        ConditionOp::Await if h.3 != u64::MAX => {
                            *juc_weights.entry((h.4.clone(), lock, "lock")).or_default() +=
                                ts.saturating_sub(h.3);
                            h.3 = u64::MAX;
                        }
                        ConditionOp::Awaited => h.3 = ts,
                        _ => {}
                    }
                }
            }
            (FlameWeight::Held, Event::MonitorExit { monitor, .. }) => {
                if let Some(i) = t.held.iter().position(|h| h.0 == monitor) {
                    t.held[i].1 -= 1;
                    if t.held[i].1 == 0 {
                        let (m, _, since, raw) = t.held.swap_remove(i);
                        add(raw, m, ts.saturating_sub(since));
                    }
                }
            }
            _ => {}
        }
    }
    // Contentions, waits and parks still open when the log ends (a deadlock, a thread
    // waiting for good) count up to its last timestamp, as in `orca report`. Open holds do
    // not: the report counts them apart ("still held at end").
    if w != FlameWeight::Held {
        let mut threads: Vec<(Hash, ThreadState)> = threads.into_iter().collect();
        threads.sort_by_key(|(h, _)| *h);
        for (_, t) in threads {
            if let Some((m, since, raw)) = t.open {
                *weights.entry((raw, m)).or_default() += last_ts.saturating_sub(since);
            }
            if let Some((what, o, since, raw)) = t.juc_open {
                *juc_weights.entry((raw, o, what)).or_default() += last_ts.saturating_sub(since);
            }
        }
    }
    if w == FlameWeight::Held && summary_lines > 0 && !from_events {
        for (k, (timed, untimed)) in summary_counts {
            if let Some(ns) = summary_weights.get_mut(&k) {
                *ns = crate::util::estimate(*ns, timed, untimed);
            }
        }
        weights = summary_weights;
    }
    if w == FlameWeight::Held && lock_summary_lines > 0 && !from_events {
        for (k, (timed, untimed)) in juc_summary_counts {
            if let Some(ns) = juc_summary_weights.get_mut(&k) {
                *ns = crate::util::estimate(*ns, timed, untimed);
            }
        }
        juc_weights = juc_summary_weights;
    }
    let mut lines: Vec<(String, Hash, Vec<String>, u64)> = weights
        .into_iter()
        .map(|((raw, m), ns)| ((raw, m, "monitor"), ns))
        .chain(juc_weights)
        .filter(|(_, ns)| *ns > 0)
        .map(|((raw, m, what), ns)| {
            let mut frames: Vec<String> = match parse_stack(raw.as_bytes(), 0) {
                Ok(st) => st
                    .frames()
                    .map(|f| md.frame_to_string(f).replace(';', ":"))
                    .collect(),
                Err(_) => Vec::new(),
            };
            frames.reverse(); // outermost first
            frames.push(if what == "park" && m == Hash::UNKNOWN {
                "park".to_string()
            } else if let Some(c) = classes.get(&m) {
                format!("{what} {}@{m}", crate::report::simple_name(c))
            } else {
                format!("{what} {m}")
            });
            (frames.join(";"), m, frames, ns)
        })
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    // Merge identical lines (different raw stacks can resolve alike).
    let mut out: Vec<Collapsed> = Vec::new();
    for (_, monitor, frames, ns) in lines {
        match out.last_mut() {
            Some(c) if c.frames == frames => c.ns += ns,
            _ => out.push(Collapsed {
                frames,
                monitor,
                ns,
            }),
        }
    }
    Ok(out)
}
