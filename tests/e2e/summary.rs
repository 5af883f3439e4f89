//! Instrumentation mode's default recording: per-site hold summaries and lock-order edges
//! instead of every monitor event, and long holds as events with stacks. Checked against the
//! complete trace (`trace=all`), which writes both: the summaries of a run must be exactly
//! what the reference aggregator (tests/src/summary.rs) derives from its own events, and a run
//! with the defaults must count what the complete trace counts.

use std::collections::BTreeMap;

use orca_tests::summary::{Summarize, Sums};
use orca_tests::*;

/// The `.orca` text of a run.
fn orca_text(run: &Run) -> String {
    std::fs::read_to_string(format!("{}.orca", run.prefix.display())).unwrap()
}

/// Hold counts per (thread name, `Class.method:line` of the site): comparable across runs
/// (hashes and method IDs are not).
fn counts_by_site(log: &Log, sums: &Sums) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for ((thread, _, (m, loc)), (n, ..)) in &sums.holds {
        let name = log.thread_names.get(&thread.0).cloned().unwrap_or_default();
        let site = format!(
            "{}:{}",
            log.method_name(*m),
            log.line_of(*m, *loc).unwrap_or(0)
        );
        *out.entry((name, site)).or_default() += n;
    }
    out
}

/// The reference aggregator (tests/src/summary.rs) at the agent's defaults.
const REFERENCE: Summarize = Summarize {
    interval_ns: 1_000_000_000,
    threshold_ns: 10_000_000,
};

const PROGRAMS: [(&str, &[&str]); 4] = [
    ("Monitors", &[]),
    ("LockOrder", &["cycle"]),
    ("PingPong", &[]),
    ("Summaries", &[]),
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
            let text = orca_text(&run);
            let agent = Sums::of(&text);
            let reference = Sums::of(&REFERENCE.run(&text).summary);
            assert!(!reference.holds.is_empty(), "{main}: no holds in the trace");
            assert_eq!(
                agent.holds,
                reference.holds,
                "{main} on {}: holds",
                jdk.label()
            );
            assert_eq!(
                agent.orders,
                reference.orders,
                "{main} on {}: orders",
                jdk.label()
            );
            if main == "LockOrder" {
                assert!(!agent.orders.is_empty(), "LockOrder: no lock-order edge");
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
            let want = Sums::of(&REFERENCE.run(&orca_text(&full)).summary);
            let got = Sums::of(&orca_text(&default));
            assert_eq!(
                counts_by_site(&log, &got),
                counts_by_site(&full_log, &want),
                "{main} on {}",
                jdk.label()
            );
            if main == "LockOrder" {
                // thread A: a then b; thread B: b then a.
                assert_eq!(got.orders.len(), 2, "{:?}", got.orders);
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
