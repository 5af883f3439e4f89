//! Instrumentation mode's default recording: per-site hold summaries and lock-order edges
//! instead of every monitor event, and long holds as events with stacks. Checked against the
//! complete trace (`trace=all`), which writes both: the summaries of a run must be exactly
//! what its own events add up to, and a run with the defaults must count what the complete
//! trace counts.

use std::collections::BTreeMap;

use orca_tests::*;

/// (thread, monitor, site method, site location) -> (holds, total ns, max ns).
type Holds = BTreeMap<(u32, u32, u32, u32), (u64, u64, u64)>;
/// (thread, held, acquired, held site, acquired site) -> count.
type Orders = BTreeMap<(u32, u32, u32, (u32, u32), (u32, u32)), u64>;

/// The outermost holds and lock orders of a complete trace, as `orca report` and
/// `orca deadlocks` count them (wait pauses a hold; reentrant entries are no new hold or
/// order).
fn from_events(log: &Log) -> (Holds, Orders) {
    // thread -> [(monitor, count, since, site, counted)]
    let mut held: BTreeMap<u32, Vec<(u32, u32, u64, (u32, u32), u64)>> = BTreeMap::new();
    let mut holds = Holds::new();
    let mut orders = Orders::new();
    for e in &log.events {
        let t = held.entry(e.thread).or_default();
        let m = e.object.unwrap_or(0);
        match e.name.as_str() {
            "MonitorEntered" => {
                if let Some(h) = t.iter_mut().find(|h| h.0 == m) {
                    h.1 += 1;
                    continue;
                }
                let site = e.frames[0];
                for h in t.iter() {
                    *orders.entry((e.thread, h.0, m, h.3, site)).or_default() += 1;
                }
                t.push((m, 1, e.nanos, site, 0));
            }
            "MonitorExit" => {
                if let Some(i) = t.iter().position(|h| h.0 == m) {
                    t[i].1 -= 1;
                    if t[i].1 == 0 {
                        let h = t.remove(i);
                        let ns = h.4 + (e.nanos - h.2);
                        let s = holds.entry((e.thread, m, h.3 .0, h.3 .1)).or_default();
                        s.0 += 1;
                        s.1 += ns;
                        s.2 = s.2.max(ns);
                    }
                }
            }
            "ObjectWait" => {
                if let Some(h) = t.iter_mut().find(|h| h.0 == m) {
                    h.4 += e.nanos - h.2;
                    h.2 = e.nanos;
                }
            }
            "ObjectWaited" => {
                if let Some(h) = t.iter_mut().find(|h| h.0 == m) {
                    h.2 = e.nanos;
                }
            }
            _ => {}
        }
    }
    (holds, orders)
}

/// The summary lines of a log, summed over intervals.
fn from_summaries(log: &Log) -> (Holds, Orders) {
    let mut holds = Holds::new();
    let mut orders = Orders::new();
    for e in &log.events {
        match e.name.as_str() {
            "MonitorHolds" => {
                let (m, loc) = e.frames[0];
                let s = holds
                    .entry((e.thread, e.object.unwrap(), m, loc))
                    .or_default();
                s.0 += e.numbers[0];
                s.1 += e.numbers[1];
                s.2 = s.2.max(e.numbers[2]);
            }
            "LockOrder" => {
                *orders
                    .entry((
                        e.thread,
                        e.object.unwrap(),
                        e.owner.unwrap(),
                        e.frames[0],
                        e.frames[1],
                    ))
                    .or_default() += e.numbers[0];
            }
            _ => {}
        }
    }
    (holds, orders)
}

/// Hold counts per (thread name, `Class.method:line` of the site): comparable across runs
/// (hashes and method IDs are not).
fn counts_by_site(log: &Log, holds: &Holds) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for ((thread, _, m, loc), (n, _, _)) in holds {
        let name = log.thread_names.get(thread).cloned().unwrap_or_default();
        let site = format!(
            "{}:{}",
            log.method_name(*m),
            log.line_of(*m, *loc).unwrap_or(0)
        );
        *out.entry((name, site)).or_default() += n;
    }
    out
}

const PROGRAMS: [(&str, &[&str]); 3] = [
    ("Monitors", &[]),
    ("LockOrder", &["cycle"]),
    ("PingPong", &[]),
];

#[test]
fn summaries_are_what_the_complete_trace_adds_up_to() {
    for jdk in jdks() {
        for (main, args) in PROGRAMS {
            let run = run_with(
                &format!("summary-trace-{main}"),
                jdk,
                "trace=all",
                VERIFY_ALL,
                main,
                args,
            );
            assert_eq!(run.code, Some(0), "{main}: {}", run.stderr);
            let log = run.log();
            assert_valid(&run, &log);
            let (eh, eo) = from_events(&log);
            let (sh, so) = from_summaries(&log);
            assert!(!eh.is_empty(), "{main}: no holds in the trace");
            assert_eq!(sh, eh, "{main} on {}: holds differ", jdk.label());
            assert_eq!(so, eo, "{main} on {}: lock orders differ", jdk.label());
            if main == "LockOrder" {
                assert!(!so.is_empty(), "LockOrder: no lock-order edge");
            }
        }
    }
}

#[test]
fn the_default_counts_what_the_complete_trace_counts() {
    for jdk in jdks() {
        for (main, args) in PROGRAMS {
            let full = run(
                &format!("summary-full-{main}"),
                jdk,
                "trace=all",
                main,
                args,
            );
            let default = run(&format!("summary-default-{main}"), jdk, "", main, args);
            assert_eq!(default.code, Some(0), "{main}: {}", default.stderr);
            let (full_log, log) = (full.log(), default.log());
            assert_valid(&default, &log);
            let per_event = log
                .events
                .iter()
                .filter(|e| e.name.starts_with("MonitorEnter") || e.name == "MonitorExit")
                .count();
            assert_eq!(per_event, 0, "{main}: the default wrote monitor events");
            let (want, _) = from_events(&full_log);
            let (got, orders) = from_summaries(&log);
            assert_eq!(
                counts_by_site(&log, &got),
                counts_by_site(&full_log, &want),
                "{main} on {}",
                jdk.label()
            );
            if main == "LockOrder" {
                // thread A: a then b; thread B: b then a.
                assert_eq!(orders.len(), 2, "{orders:?}");
            }
        }
    }
}

#[test]
fn long_holds_are_events_with_their_stack() {
    let line = marker_line("HoldTimes.java", "hold");
    for jdk in jdks() {
        let run = run("summary-long", jdk, "holdthreshold=20ms", "HoldTimes", &[]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let log = run.log();
        assert_valid(&run, &log);
        // The program measured each hold inside the block: the agent's hold encloses it.
        let each: Vec<u64> = run
            .stdout
            .split("each_ns=")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        let long: Vec<_> = log
            .events
            .iter()
            .filter(|e| e.name == "MonitorHold")
            .collect();
        assert_eq!(long.len(), each.len(), "{}", run.stderr);
        for (e, ns) in long.iter().zip(&each) {
            assert!(
                e.numbers[0] >= *ns,
                "hold {} < program's {ns}",
                e.numbers[0]
            );
            assert_eq!(log.top_frame(e).unwrap(), format!("HoldTimes.main:{line}"));
        }
        // Below the threshold: none.
        let run = run_with(
            "summary-short",
            jdk,
            "holdthreshold=1s",
            &[],
            "HoldTimes",
            &[],
        );
        let log = run.log();
        assert!(log.events.iter().all(|e| e.name != "MonitorHold"));
    }
}
