//! `orca flame`: collapsed stacks (`outer;...;inner;monitor HASH weight`),
//! weighted by nanoseconds blocked, held or waiting, as async-profiler's lock
//! mode does; feed it to FlameGraph's `flamegraph.pl` or speedscope.
//! Stacks are aggregated by their raw text, so memory grows with distinct
//! stacks, not with events. `--weight held` uses the `MonitorHolds` summary
//! lines when the log has summary lines (their one-frame site, summed totals).

use std::collections::HashMap;
use std::fmt::Write as _;

use orca_format::{parse_stack, Event, EventReader, Hash, Metadata};

use crate::FlameWeight;

#[derive(Default)]
struct ThreadState {
    /// Open span: (monitor/object, since, stack).
    open: Option<(Hash, u64, String)>,
    /// Held monitors: (monitor, count, since, stack).
    held: Vec<(Hash, u32, u64, String)>,
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
    let mut summary_lines = 0u64;
    let mut add = |raw: String, m: Hash, ns: u64| {
        *weights.entry((raw, m)).or_default() += ns;
    };
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        let ts = rec.timestamp.nanos();
        let Some(thread) = rec.event.thread() else {
            continue;
        };
        let t = threads.entry(thread).or_default();
        match (w, rec.event) {
            (
                _,
                Event::MonitorHolds {
                    monitor,
                    total,
                    site,
                    ..
                },
            ) => {
                summary_lines += 1;
                *summary_weights
                    .entry((site.raw().to_string(), monitor))
                    .or_default() += total;
            }
            (_, Event::LockOrder { .. }) => summary_lines += 1,
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
    if w == FlameWeight::Held && summary_lines > 0 && !from_events {
        weights = summary_weights;
    }
    let mut lines: Vec<(String, Hash, Vec<String>, u64)> = weights
        .into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|((raw, m), ns)| {
            let mut frames: Vec<String> = match parse_stack(raw.as_bytes(), 0) {
                Ok(st) => st
                    .frames()
                    .map(|f| md.frame_to_string(f).replace(';', ":"))
                    .collect(),
                Err(_) => Vec::new(),
            };
            frames.reverse(); // outermost first
            frames.push(format!("monitor {m}"));
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
