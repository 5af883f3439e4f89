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
//!
//! The row of other monitors (locks), `00000000`, is named at its sites as `orca report`
//! names it ([`name_rows`]: `monitor Object at T.a(T.java:12)`), from the report's analysis,
//! a second pass over the log only when it has such a row.

use std::collections::HashMap;
use std::fmt::Write as _;

use orca_format::spans::{Call, Held, Pairer, Span, SpanKind, Stacks};
use orca_format::{parse_stack, Durations, Event, EventReader, Frame, Hash, Metadata, WaitCall};

use crate::FlameWeight;

/// One collapsed stack: frames outermost first, the last one `monitor HASH`.
pub struct Collapsed {
    pub frames: Vec<String>,
    pub monitor: Hash,
    pub ns: u64,
    /// What the leaf is: `monitor`, `lock`, `condition`, `park`, `semaphore`.
    pub what: &'static str,
    /// The stack's innermost frame: the site of a summary line's row.
    pub site: Option<Frame>,
}

/// Whether some stack ends at the row of other monitors (locks), `00000000`, which
/// [`name_rows`] names at its sites as `orca report` does.
pub fn has_rows(stacks: &[Collapsed], w: FlameWeight) -> bool {
    stacks.iter().any(|c| renamed(c, w))
}

/// A stack whose leaf [`name_rows`] names: the row of other locks (j.u.c.), blocked or held;
/// the row of other monitors, held at its sites (its contentions are one row of the report's
/// monitors, `other monitors`).
fn renamed(c: &Collapsed, w: FlameWeight) -> bool {
    c.monitor == Hash(0) && matches!(c.what, "lock" | "monitor") && w != FlameWeight::Waiting
}

/// Names the row of other monitors (locks) as `orca report` does (issue 46): the holds of a
/// site's monitors without a row of their own, mostly those a sampled tracking left
/// unidentified, are `monitor Object at T.a(T.java:12)` (the class of the monitors identified
/// there when they share one, [`crate::report::Analysis::unidentified_sites`]), never one
/// lock `monitor 00000000`; a j.u.c. lock's blocked time too; the monitors' blocked time is
/// `monitor other monitors`, the report's row. Stacks that now read alike are merged.
pub fn name_rows(
    stacks: Vec<Collapsed>,
    a: &crate::report::Analysis,
    md: &Metadata,
    w: FlameWeight,
) -> Vec<Collapsed> {
    let mut stacks = stacks;
    for c in stacks.iter_mut().filter(|c| renamed(c, w)) {
        let juc = c.what == "lock";
        let name = if !juc && w == FlameWeight::Blocked {
            a.lock_name(Hash(0), false)
        } else {
            crate::report::unidentified_label(md, &a.unidentified_name(c.site, juc), c.site)
        };
        if let Some(leaf) = c.frames.last_mut() {
            *leaf = format!("{} {name}", c.what);
        }
    }
    merged(stacks)
}

/// Sorted by their frames, identical ones merged (different raw stacks can resolve alike).
fn merged(mut stacks: Vec<Collapsed>) -> Vec<Collapsed> {
    stacks.sort_by_cached_key(|c| c.frames.join(";"));
    let mut out: Vec<Collapsed> = Vec::new();
    for c in stacks {
        match out.last_mut() {
            Some(o) if o.frames == c.frames => o.ns += c.ns,
            _ => out.push(c),
        }
    }
    out
}

/// The collapsed-stack text of `stacks`.
pub fn text(stacks: &[Collapsed]) -> String {
    let mut out = String::new();
    for c in stacks {
        let _ = writeln!(out, "{} {}", c.frames.join(";"), c.ns);
    }
    out
}

/// `orca flame PREFIX`: the text, the rows of other monitors named at their sites from the
/// report's analysis (a second pass over the log, only when it has such a row).
pub fn run_prefix(
    prefix: &std::path::Path,
    md: &Metadata,
    w: FlameWeight,
    from_events: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut stacks = collapse_with(EventReader::open(prefix)?, md, w, from_events)?;
    if has_rows(&stacks, w) {
        let a = crate::report::Analysis::run_with(EventReader::open(prefix)?, from_events)?;
        stacks = name_rows(stacks, &a, md, w);
    }
    Ok(text(&stacks))
}

/// The weights of one graph: per (stack, monitor), and per (stack, j.u.c. object, kind).
#[derive(Default)]
struct Weights {
    monitors: HashMap<(String, Hash), u64>,
    juc: HashMap<(String, Hash, &'static str), u64>,
}

impl Weights {
    fn add(&mut self, raw: String, m: Hash, ns: u64) {
        *self.monitors.entry((raw, m)).or_default() += ns;
    }

    /// What one span of the pairing adds to the graph of `w`, as it ends (so that memory
    /// grows with the stacks, not with the spans).
    fn fold(&mut self, w: FlameWeight, s: Span) {
        let ns = s.nanos();
        let open = s.is_open();
        let stack = s.begin.stack;
        match (w, s.kind) {
            (FlameWeight::Blocked, SpanKind::Blocked { monitor, .. }) => {
                self.add(stack, monitor, ns)
            }
            (FlameWeight::Blocked, SpanKind::Acquire { lock, owner, .. })
                if owner != Hash::UNKNOWN && owner != s.thread =>
            {
                *self.juc.entry((stack, lock, "lock")).or_default() += ns;
            }
            (
                FlameWeight::Waiting,
                SpanKind::Call {
                    call: Call::Wait,
                    object,
                },
            ) => self.add(stack, object, ns),
            (
                FlameWeight::Waiting,
                SpanKind::Call {
                    call: Call::Semaphore,
                    object,
                },
            ) => {
                // as the short acquires counted in Waits lines are
                *self.juc.entry((stack, object, "semaphore")).or_default() += ns;
            }
            (FlameWeight::Waiting, SpanKind::Await { condition, .. }) => {
                *self.juc.entry((stack, condition, "condition")).or_default() += ns;
            }
            (FlameWeight::Waiting, SpanKind::Park { blocker }) => {
                *self.juc.entry((stack, blocker, "park")).or_default() += ns;
            }
            (FlameWeight::Held, SpanKind::Hold { held, nanos }) if !open => match held {
                Held::Monitor(m) => self.add(stack, m, nanos),
                Held::Lock(lock, _) => {
                    *self.juc.entry((stack, lock, "lock")).or_default() += nanos;
                }
            },
            _ => {}
        }
    }
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
    Ok(text(&collapse_with(r, md, w, from_events)?))
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
    // The one pairing of lines into spans (orca_format::spans), with whole stacks.
    let mut pairer = Pairer::with_stacks_for(Stacks {
        blocked: w == FlameWeight::Blocked,
        holds: w == FlameWeight::Held,
        waits: w == FlameWeight::Waiting,
    });
    let mut acc = Weights::default();
    let mut summary_weights: HashMap<(String, Hash), u64> = HashMap::new();
    // (timed, untimed) holds per key: holdtiming=sampled's totals are a sample's, scaled.
    let mut summary_counts: HashMap<(String, Hash), (u64, u64)> = HashMap::new();
    let mut summary_lines = 0u64;
    // j.u.c. spans, labelled by kind, kept apart from both; and the holds of LockHolds lines.
    let mut juc_summary_weights: HashMap<(String, Hash, &'static str), u64> = HashMap::new();
    let mut juc_summary_counts: HashMap<(String, Hash, &'static str), (u64, u64)> = HashMap::new();
    let mut lock_summary_lines = 0u64;
    let mut classes: HashMap<Hash, String> = HashMap::new();
    while let Some((_, rec)) = r.next_event()? {
        let Ok(rec) = rec else { continue };
        pairer.feed(rec.timestamp.nanos(), &rec.event, &mut |s| acc.fold(w, s));
        let Some(_thread) = rec.event.thread() else {
            if let Event::ObjectClass { object, class } = rec.event {
                // the first: a second line names another object with the same ID (the report says so)
                classes
                    .entry(object)
                    .or_insert_with(|| orca_format::java_class_name(&class.decode()));
            }
            continue;
        };
        match (w, rec.event) {
            (
                _,
                Event::MonitorHolds {
                    monitor,
                    site,
                    durations: Durations { count, total, .. },
                    sample,
                    ..
                },
            ) => {
                summary_lines += 1;
                // a row of a sample stands for `sample` times its holds
                let (count, total) = (count * sample, total * sample);
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
                    sample,
                    ..
                },
            ) => {
                summary_lines += 1;
                let count = count * sample;
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
            // Contentions the agent counted per stack (short ones, and long ones beyond their
            // site's budget; an older agent's per one-frame site).
            (
                FlameWeight::Blocked,
                Event::MonitorContentions {
                    monitor,
                    site,
                    stack,
                    durations: Durations { total, .. },
                    ..
                },
            ) => acc.add(stack.or_site(site).raw().to_string(), monitor, total),
            (
                FlameWeight::Blocked,
                Event::LockContentions {
                    lock,
                    site,
                    stack,
                    durations: Durations { total, .. },
                    ..
                },
            ) => {
                let stack = stack.or_site(site).raw().to_string();
                *acc.juc.entry((stack, lock, "lock")).or_default() += total;
            }
            // Waits shorter than the agent's threshold, counted per stack (an older agent's
            // per one-frame site).
            (
                FlameWeight::Waiting,
                Event::Waits {
                    call,
                    object,
                    total,
                    site,
                    stack,
                    ..
                },
            ) => match call {
                WaitCall::Wait => acc.add(stack.or_site(site).raw().to_string(), object, total),
                WaitCall::Await | WaitCall::Park | WaitCall::Acquire => {
                    let what = match call {
                        WaitCall::Await => "condition",
                        WaitCall::Park => "park",
                        _ => "semaphore",
                    };
                    let stack = stack.or_site(site).raw().to_string();
                    *acc.juc.entry((stack, object, what)).or_default() += total;
                }
                // As their events: joins and sleeps wait for no lock.
                WaitCall::Join | WaitCall::Sleep => {}
            },
            _ => {}
        }
    }
    // Contentions, waits and parks still open when the log ends (a deadlock, a thread
    // waiting for good) count up to its last timestamp, as in `orca report`. Open holds do
    // not: the report counts them apart ("still held at end").
    pairer.finish(&mut |s| acc.fold(w, s));
    if w == FlameWeight::Held && summary_lines > 0 && !from_events {
        for (k, (timed, untimed)) in summary_counts {
            if let Some(ns) = summary_weights.get_mut(&k) {
                *ns = crate::util::estimate(*ns, timed, untimed);
            }
        }
        acc.monitors = summary_weights;
    }
    if w == FlameWeight::Held && lock_summary_lines > 0 && !from_events {
        for (k, (timed, untimed)) in juc_summary_counts {
            if let Some(ns) = juc_summary_weights.get_mut(&k) {
                *ns = crate::util::estimate(*ns, timed, untimed);
            }
        }
        acc.juc = juc_summary_weights;
    }
    let lines: Vec<Collapsed> = acc
        .monitors
        .into_iter()
        .map(|((raw, m), ns)| ((raw, m, "monitor"), ns))
        .chain(acc.juc)
        .filter(|(_, ns)| *ns > 0)
        .map(|((raw, m, what), ns)| {
            let st = parse_stack(raw.as_bytes(), 0).ok();
            let site = st.as_ref().and_then(|s| s.top());
            let mut frames: Vec<String> = match st {
                Some(st) => st
                    .frames()
                    .map(|f| md.frame_to_string(f).replace(';', ":"))
                    .collect(),
                None => Vec::new(),
            };
            frames.reverse(); // outermost first
            frames.push(if what == "park" && m == Hash::UNKNOWN {
                "park".to_string()
            } else if let Some(c) = classes.get(&m) {
                format!("{what} {}@{m}", crate::report::simple_name(c))
            } else {
                format!("{what} {m}")
            });
            Collapsed {
                frames,
                monitor: m,
                ns,
                what,
                site,
            }
        })
        .collect();
    Ok(merged(lines))
}
