//! A summarised run gives the same figures as its complete trace (issue 11, docs/FORMAT.md
//! "Summary lines"). The logs in tests/fixtures/traces are complete traces recorded with the
//! agent in `mode=instrument` (before summary lines existed: see the README there). From each,
//! the reference aggregator (`orca_tests::summary`) derives the default mode's log (summary
//! lines instead of MonitorEnter/Entered/Exit) and the `trace=all` log (both), at several
//! flush intervals; then `orca report --json`, `orca deadlocks` and `orca flame --weight held`
//! must say the same about all of them. What is documented to differ, and is not compared:
//! the prefix, the number of lines (`events`), `holds_source`, `long_holds` (only summarised
//! logs have MonitorHold), holds still open at the end (`open`, and monitors with nothing
//! else: only events show them), the line numbers and the frames below the first in
//! `orca deadlocks` (sites are one frame), and the frames below the first in flame graphs.

use std::path::{Path, PathBuf};
use std::process::Command;

use orca_tests::summary::{Summarize, Sums};

const TRACES: [&str; 7] = [
    "summaries",
    "holdtimes",
    "lockorder",
    "nested",
    "pingpong",
    "contention",
    "monitors",
];

/// Flush intervals: every line (one summary line per hold, the most summing), 1 ms (several
/// lines per key), 1 s (the agent's).
const INTERVALS: [u64; 3] = [0, 1_000_000, 1_000_000_000];

/// Holds above 1 ms are also MonitorHold lines (HoldTimes holds 50 ms, Summaries 3 ms).
const THRESHOLD: u64 = 1_000_000;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

/// Runs `orca ARGS`: (exit status, stdout).
fn orca(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .output()
        .expect("run orca");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() != Some(2), "orca {args:?} failed: {err}");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Writes a log with `orca` as its .orca text and the fixture's metadata.
fn write_log(dir: &Path, tag: &str, name: &str, orca_text: &str) -> String {
    let prefix = dir.join(tag);
    let ext = |p: &Path, e: &str| PathBuf::from(format!("{}.{e}", p.display()));
    std::fs::write(ext(&prefix, "orca"), orca_text).unwrap();
    for e in ["methods", "classtable"] {
        std::fs::copy(ext(&fixture(name), e), ext(&prefix, e)).unwrap();
    }
    prefix.display().to_string()
}

mod json;
use json::Json;

/// The first difference between two JSON values, as a path and both sides.
fn diff(a: &Json, b: &Json, path: &str) -> Option<String> {
    match (a, b) {
        (Json::Obj(x), Json::Obj(y)) => {
            let keys =
                |f: &Vec<(String, Json)>| f.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
            if keys(x) != keys(y) {
                return Some(format!("{path}: keys {:?} vs {:?}", keys(x), keys(y)));
            }
            x.iter()
                .zip(y)
                .find_map(|((k, v), (_, w))| diff(v, w, &format!("{path}.{k}")))
        }
        (Json::Arr(x), Json::Arr(y)) => {
            if x.len() != y.len() {
                return Some(format!(
                    "{path}: {} items vs {}: {x:?} vs {y:?}",
                    x.len(),
                    y.len()
                ));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (v, w))| diff(v, w, &format!("{path}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: {a:?} vs {b:?}")),
    }
}

/// `orca report --json` of `prefix`, without the fields documented to differ between a
/// complete trace and its summarised log.
fn report(prefix: &str, extra: &[&str]) -> Json {
    let mut args = vec!["report", "--json", "--top", "100000", prefix];
    args.extend_from_slice(extra);
    let (code, out) = orca(&args);
    assert_eq!(code, Some(0), "{out}");
    let mut j = Json::parse(&out);
    for k in [
        "prefix",
        "events",
        "holds_source",
        "long_holds",
        "lock_holds_source",
        "long_lock_holds",
        // Derived from the rest, and names the prefix in its commands; its long holds come
        // from the MonitorHold/LockHold lines only the summarised log has.
        "verdict",
    ] {
        j.remove(k);
    }
    // j.u.c. locks: the number of acquisitions is not known in the default mode's log (only
    // contended or unsuccessful ones are events), nor the holds open at the end.
    if let Some(Json::Arr(locks)) = j.get("juc_locks").cloned() {
        let locks: Vec<Json> = locks
            .into_iter()
            .map(|mut l| {
                l.remove("acquisitions");
                l.remove("open_holds");
                l
            })
            .collect();
        if let Json::Obj(f) = &mut j {
            for (k, v) in f.iter_mut() {
                if k == "juc_locks" {
                    *v = Json::Arr(locks.clone());
                }
            }
        }
    }
    if let Some(Json::Arr(mons)) = j.get("monitors").cloned() {
        let mons: Vec<Json> = mons
            .into_iter()
            .filter(|m| m.num("contentions") > 0 || m.get("holds").unwrap().num("count") > 0)
            .map(|mut m| {
                if let Json::Obj(f) = &mut m {
                    for (k, v) in f.iter_mut() {
                        if k == "holds" {
                            v.remove("open");
                        }
                    }
                }
                m
            })
            .collect();
        if let Json::Obj(f) = &mut j {
            for (k, v) in f.iter_mut() {
                if k == "monitors" {
                    *v = Json::Arr(mons.clone());
                }
            }
        }
    }
    j
}

/// `orca deadlocks` of `prefix`: the exit status and the text without what differs (the
/// line numbers, the frames below each stack's first, the note naming the source).
fn deadlocks(prefix: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["deadlocks", prefix];
    args.extend_from_slice(extra);
    let (code, out) = orca(&args);
    let mut text = String::new();
    let mut first_frame = false;
    for l in out.lines() {
        if l.starts_with("note: lock order from") {
            continue;
        }
        if l.starts_with("      ") {
            if first_frame {
                text.push_str(l);
                text.push('\n');
            }
            first_frame = false;
            continue;
        }
        first_frame = l.ends_with("at:");
        // "(order first seen at line N of the log, ..." and "(line N)".
        let mut l = l.to_string();
        for marker in ["at line ", "(line "] {
            if let Some(i) = l.find(marker) {
                let j = i + marker.len();
                let k = l[j..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(l.len(), |k| j + k);
                l.replace_range(j..k, "N");
            }
        }
        text.push_str(&l);
        text.push('\n');
    }
    (code, text)
}

/// `orca flame --weight held` of `prefix` with every stack cut to its innermost frame.
fn flame_held(prefix: &str, extra: &[&str]) -> Vec<(String, u64)> {
    let mut args = vec!["flame", "--weight", "held", prefix];
    args.extend_from_slice(extra);
    let (code, out) = orca(&args);
    assert_eq!(code, Some(0));
    let mut m: std::collections::BTreeMap<String, u64> = Default::default();
    for l in out.lines() {
        let (stack, ns) = l.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        let key = frames[frames.len().saturating_sub(2)..].join(";");
        *m.entry(key).or_default() += ns.parse::<u64>().unwrap();
    }
    m.into_iter().collect()
}

#[test]
fn summarised_logs_report_the_same_holds_and_lock_orders_as_the_complete_trace() {
    let root = orca_tests::work_dir().join("summaries");
    for name in TRACES {
        let full_text =
            std::fs::read_to_string(format!("{}.orca", fixture(name).display())).unwrap();
        let full = fixture(name).display().to_string();
        let full_report = report(&full, &[]);
        let full_deadlocks = deadlocks(&full, &[]);
        let full_flame = flame_held(&full, &[]);
        let holds: u64 = match full_report.get("monitors") {
            Some(Json::Arr(m)) => m.iter().map(|m| m.get("holds").unwrap().num("count")).sum(),
            _ => 0,
        };
        assert!(holds > 0, "{name}: no holds in the trace");
        for interval in INTERVALS {
            let ctx = format!("{name}, interval {interval} ns");
            let dir = root.join(format!("{name}-{interval}"));
            std::fs::create_dir_all(&dir).unwrap();
            let d = Summarize {
                interval_ns: interval,
                threshold_ns: THRESHOLD,
            }
            .run(&full_text);
            let summary = write_log(&dir, "summary", name, &d.summary);
            let all = write_log(&dir, "all", name, &d.trace_all);
            assert!(
                !d.summary.contains(",MonitorEntered,") && d.summary.contains(",MonitorHolds,"),
                "{ctx}"
            );
            for p in [&summary, &all] {
                let (code, out) = orca(&["check", p]);
                assert_eq!(code, Some(0), "{ctx}: {out}");
            }

            // The holds, percentiles, sites, contentions, threads: equal.
            let r = report(&summary, &[]);
            if let Some(d) = diff(&full_report, &r, "report") {
                panic!("{ctx}: complete trace vs summarised log: {d}");
            }
            // trace=all: the summary lines by default, the events with --from-events.
            let r_all = report(&all, &[]);
            if let Some(d) = diff(&r, &r_all, "report") {
                panic!("{ctx}: summarised log vs trace=all: {d}");
            }
            let r_events = report(&all, &["--from-events"]);
            if let Some(d) = diff(&full_report, &r_events, "report") {
                panic!("{ctx}: trace vs trace=all --from-events: {d}");
            }
            let (_, text) = orca(&["report", "--json", &all]);
            assert!(text.contains("\"holds_source\":\"summaries\""), "{ctx}");
            let (_, text) = orca(&["report", "--json", &all, "--from-events"]);
            assert!(text.contains("\"holds_source\":\"events\""), "{ctx}");

            // Lock-order edges, counts, guards, cycles and sites: equal.
            assert_eq!(full_deadlocks, deadlocks(&summary, &[]), "{ctx}");
            assert_eq!(full_deadlocks, deadlocks(&all, &[]), "{ctx}");
            assert_eq!(full_deadlocks, deadlocks(&all, &["--from-events"]), "{ctx}");
            let (_, text) = orca(&["deadlocks", &all]);
            assert!(
                text.contains("note: lock order from LockOrder summary lines"),
                "{ctx}"
            );

            // Held time per site and monitor.
            assert_eq!(full_flame, flame_held(&summary, &[]), "{ctx}");
            assert_eq!(full_flame, flame_held(&all, &["--from-events"]), "{ctx}");
        }
    }
}

/// The long holds: HoldTimes holds its lock 5 times for 50 ms, so the summarised log has 5
/// MonitorHold lines, listed by the report with their stacks, and drawn by the timeline.
#[test]
fn long_holds_are_listed_and_drawn() {
    let name = "holdtimes";
    let full_text = std::fs::read_to_string(format!("{}.orca", fixture(name).display())).unwrap();
    let d = Summarize {
        interval_ns: 1_000_000_000,
        threshold_ns: THRESHOLD,
    }
    .run(&full_text);
    assert_eq!(d.summary.matches(",MonitorHold,").count(), 5);
    let dir = orca_tests::work_dir().join("summaries").join("long-holds");
    std::fs::create_dir_all(&dir).unwrap();
    let summary = write_log(&dir, "summary", name, &d.summary);
    let (_, out) = orca(&["report", "--json", &summary]);
    let j = Json::parse(&out);
    let Some(Json::Arr(long)) = j.get("long_holds") else {
        panic!("{out}")
    };
    assert_eq!(long.len(), 5, "{out}");
    for h in long {
        assert!(h.num("ns") >= 50_000_000, "{out}");
        match h.get("stack") {
            Some(Json::Arr(s)) => assert!(
                matches!(&s[0], Json::Str(f) if f.starts_with("HoldTimes.main(HoldTimes.java:")),
                "{out}"
            ),
            s => panic!("{s:?}"),
        }
    }
    let (_, text) = orca(&["report", &summary]);
    assert!(
        text.contains("Longest holds (MonitorHold events)"),
        "{text}"
    );
    assert!(text.contains("from MonitorHolds summary lines"), "{text}");

    let out = dir.join("timeline.json");
    let (code, _) = orca(&["timeline", &summary, "-o", out.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let t = Json::parse(&std::fs::read_to_string(&out).unwrap());
    let Some(Json::Arr(events)) = t.get("traceEvents") else {
        panic!()
    };
    let begins: Vec<&Json> = events
        .iter()
        .filter(|e| e.get("ph") == Some(&Json::Str("b".into())))
        .collect();
    assert_eq!(begins.len(), 5);
    for b in begins {
        assert!(b.get("args").unwrap().num("nanos") >= 50_000_000);
    }
}

/// However a run is split into intervals, its summary lines sum to the same figures per key,
/// and a `trace=all` log's summary lines (derived again from its events) to those too.
#[test]
fn summary_lines_sum_to_the_same_per_key_at_any_interval() {
    for name in TRACES {
        let text = std::fs::read_to_string(format!("{}.orca", fixture(name).display())).unwrap();
        let derive = |interval_ns| {
            Summarize {
                interval_ns,
                threshold_ns: THRESHOLD,
            }
            .run(&text)
        };
        let once = derive(u64::MAX);
        let sums = Sums::of(&once.summary);
        assert!(!sums.holds.is_empty(), "{name}");
        for interval in INTERVALS {
            let d = derive(interval);
            assert_eq!(Sums::of(&d.summary), sums, "{name}, interval {interval} ns");
            assert_eq!(
                Sums::of(&d.trace_all),
                sums,
                "{name}, interval {interval} ns"
            );
            // The aggregator drops summary lines it is given: trace=all in, the same out.
            let again = Summarize {
                interval_ns: interval,
                threshold_ns: THRESHOLD,
            }
            .run(&d.trace_all);
            assert_eq!(
                again.trace_all, d.trace_all,
                "{name}, interval {interval} ns"
            );
        }
    }
}

/// A complete trace of j.u.c. locks and monitors, written by hand (the fixtures above predate
/// j.u.c. summaries): thread one holds the ReentrantLock 2222 and enters synchronized
/// (1111), awaits a condition of 2222 (while two takes the lock, contended, and signals),
/// holds 2222 for 21 ms (a LockHold at a 1 ms threshold) and later fails a tryLock; thread
/// two holds 1111 and takes the read view of 2222: a cross-kind lock-order cycle.
/// The fixture `juc` (cli/tests/fixtures), a complete trace of j.u.c. locks and monitors
/// written by hand (the traces above predate j.u.c. summaries): thread one holds the
/// ReentrantLock 2222 and enters synchronized (1111), awaits a condition of 2222 (while two
/// takes the lock, contended, and signals), holds 2222 for 21 ms (a LockHold at a 1 ms
/// threshold) and later fails a tryLock; thread two holds 1111 and takes the read view of
/// 2222: a cross-kind lock-order cycle.
fn juc_fixture(ext: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/juc.{ext}"));
    std::fs::read_to_string(p).unwrap()
}

fn write_juc_log(dir: &Path, tag: &str, orca_text: &str) -> String {
    let prefix = dir.join(tag).display().to_string();
    std::fs::write(format!("{prefix}.orca"), orca_text).unwrap();
    std::fs::write(format!("{prefix}.methods"), juc_fixture("methods")).unwrap();
    std::fs::write(format!("{prefix}.classtable"), juc_fixture("classtable")).unwrap();
    prefix
}

/// The j.u.c. trace, its default mode's log and its trace=all log (tests/src/summary.rs) say
/// the same in `orca report --json`, `orca deadlocks` and `orca flame --weight held`; the
/// default mode's log has the LockHold, listed by the report and drawn by the timeline.
#[test]
fn juc_summaries_report_what_the_complete_trace_reports() {
    let root = orca_tests::work_dir().join("summaries").join("juc");
    let full = {
        std::fs::create_dir_all(&root).unwrap();
        write_juc_log(&root, "full", &juc_fixture("orca"))
    };
    let full_report = report(&full, &[]);
    let full_deadlocks = deadlocks(&full, &[]);
    assert_eq!(full_deadlocks.0, Some(1), "{}", full_deadlocks.1);
    assert!(
        full_deadlocks.1.contains(
            "Potential deadlock #1: lock-order cycle of 2 locks: 00001111 -> 00002222 -> 00001111"
        ),
        "{}",
        full_deadlocks.1
    );
    let full_flame = flame_held(&full, &[]);
    match full_report.get("juc_locks") {
        Some(Json::Arr(l)) => {
            assert_eq!(l.len(), 1);
            assert_eq!(l[0].get("write_holds").unwrap().num("count"), 2);
            assert_eq!(l[0].get("read_holds").unwrap().num("count"), 1);
            assert_eq!(l[0].num("contentions"), 1);
            assert_eq!(l[0].num("failed"), 1);
        }
        j => panic!("{j:?}"),
    }
    for interval in INTERVALS {
        let ctx = format!("j.u.c., interval {interval} ns");
        let dir = root.join(format!("{interval}"));
        std::fs::create_dir_all(&dir).unwrap();
        let d = Summarize {
            interval_ns: interval,
            threshold_ns: THRESHOLD,
        }
        .run(&juc_fixture("orca"));
        assert!(
            !d.summary.contains(",LockRelease,") && d.summary.contains(",LockHolds,"),
            "{ctx}"
        );
        assert_eq!(d.summary.matches(",LockHold,").count(), 1, "{ctx}");
        let summary = write_juc_log(&dir, "summary", &d.summary);
        let all = write_juc_log(&dir, "all", &d.trace_all);
        for p in [&summary, &all] {
            let (code, out) = orca(&["check", p]);
            assert_eq!(code, Some(0), "{ctx}: {out}");
            assert!(!out.contains("note:"), "{ctx}: {out}");
        }
        let r = report(&summary, &[]);
        if let Some(d) = diff(&full_report, &r, "report") {
            panic!("{ctx}: complete trace vs summarised log: {d}");
        }
        let r_all = report(&all, &[]);
        if let Some(d) = diff(&r, &r_all, "report") {
            panic!("{ctx}: summarised log vs trace=all: {d}");
        }
        let r_events = report(&all, &["--from-events"]);
        if let Some(d) = diff(&full_report, &r_events, "report") {
            panic!("{ctx}: trace vs trace=all --from-events: {d}");
        }
        let (_, text) = orca(&["report", "--json", &all]);
        assert!(
            text.contains("\"lock_holds_source\":\"summaries\""),
            "{ctx}"
        );
        assert_eq!(full_deadlocks, deadlocks(&summary, &[]), "{ctx}");
        assert_eq!(full_deadlocks, deadlocks(&all, &[]), "{ctx}");
        assert_eq!(full_deadlocks, deadlocks(&all, &["--from-events"]), "{ctx}");
        assert_eq!(full_flame, flame_held(&summary, &[]), "{ctx}");
        assert_eq!(full_flame, flame_held(&all, &[]), "{ctx}");
        assert_eq!(full_flame, flame_held(&all, &["--from-events"]), "{ctx}");

        // The long hold: listed with its sites, drawn as the only j.u.c. hold span.
        let (_, text) = orca(&["report", &summary]);
        assert!(
            text.contains("Longest j.u.c. lock holds (LockHold events)\n  lock 00002222 (write/exclusive) held 20.997 ms by one [0000000A], acquired at Juc.one(Juc.java:10), released at Juc.one(Juc.java:12)\n"),
            "{ctx}: {text}"
        );
        let out = dir.join("timeline.json");
        let (code, _) = orca(&["timeline", &summary, "-o", out.to_str().unwrap()]);
        assert_eq!(code, Some(0));
        let t = Json::parse(&std::fs::read_to_string(&out).unwrap());
        let Some(Json::Arr(events)) = t.get("traceEvents") else {
            panic!()
        };
        let holds = |ph: &str| {
            events
                .iter()
                .filter(|e| {
                    e.get("ph") == Some(&Json::Str(ph.into()))
                        && e.get("name") == Some(&Json::Str("hold lock 00002222".into()))
                })
                .count()
        };
        assert_eq!((holds("b"), holds("e")), (1, 1), "{ctx}");
        let b = events
            .iter()
            .find(|e| {
                e.get("ph") == Some(&Json::Str("b".into()))
                    && e.get("name") == Some(&Json::Str("hold lock 00002222".into()))
            })
            .unwrap();
        assert_eq!(b.get("args").unwrap().num("nanos"), 20_996_800, "{ctx}");
        // The contended acquisition is drawn from its events.
        assert!(
            events
                .iter()
                .any(|e| e.get("name") == Some(&Json::Str("blocked on lock 00002222".into()))),
            "{ctx}"
        );
    }
}

/// Complete traces of j.u.c. locks recorded with the agent (`trace=all,juc=yes`, before
/// j.u.c. summaries existed: every LockAcquire/LockAcquired/LockRelease is there; see
/// tests/fixtures/traces/README.md): `juclocks` is `JucLocks 3 50 2 10 7` (every j.u.c.
/// call the agent tracks, contended, reentrant, failed, timed out, interrupted, both views
/// of a read-write lock, conditions, parks), `mixed` is `MixedDeadlock` (a real deadlock:
/// one thread holds a ReentrantLock and is blocked entering a monitor whose owner is blocked
/// in `lock()`).
const JUC_TRACES: [&str; 2] = ["juclocks", "mixed"];

/// Each recorded j.u.c. trace, its default mode's log and its trace=all log (derived by the
/// reference aggregator at every interval) say the same in `orca report --json`,
/// `orca deadlocks` and `orca flame --weight held`, and are valid without notes on held
/// locks in the default mode's log.
#[test]
fn recorded_juc_traces_report_the_same_summarised() {
    for name in JUC_TRACES {
        let text = std::fs::read_to_string(format!("{}.orca", fixture(name).display())).unwrap();
        let full = fixture(name).display().to_string();
        let full_report = report(&full, &[]);
        let full_deadlocks = deadlocks(&full, &[]);
        let full_flame = flame_held(&full, &[]);
        let once = Sums::of(
            &Summarize {
                interval_ns: u64::MAX,
                threshold_ns: THRESHOLD,
            }
            .run(&text)
            .summary,
        );
        if name == "juclocks" {
            assert!(!once.lock_holds.is_empty() && !once.long_lock_holds.is_empty());
        }
        for interval in INTERVALS {
            let ctx = format!("{name}, interval {interval} ns");
            let dir = orca_tests::work_dir()
                .join("summaries")
                .join(format!("{name}-{interval}"));
            std::fs::create_dir_all(&dir).unwrap();
            let d = Summarize {
                interval_ns: interval,
                threshold_ns: THRESHOLD,
            }
            .run(&text);
            assert!(!d.summary.contains(",LockRelease,"), "{ctx}");
            assert_eq!(Sums::of(&d.summary), once, "{ctx}");
            assert_eq!(Sums::of(&d.trace_all), once, "{ctx}");
            let summary = write_log(&dir, "summary", name, &d.summary);
            let all = write_log(&dir, "all", name, &d.trace_all);
            for p in [&summary, &all] {
                let (code, out) = orca(&["check", "-v", p]);
                assert_eq!(code, Some(0), "{ctx}: {out}");
                assert!(!out.contains("holding lock"), "{ctx}: {out}");
            }
            let r = report(&summary, &[]);
            if let Some(d) = diff(&full_report, &r, "report") {
                panic!("{ctx}: complete trace vs summarised log: {d}");
            }
            let r_all = report(&all, &[]);
            if let Some(d) = diff(&r, &r_all, "report") {
                panic!("{ctx}: summarised log vs trace=all: {d}");
            }
            let r_events = report(&all, &["--from-events"]);
            if let Some(d) = diff(&full_report, &r_events, "report") {
                panic!("{ctx}: trace vs trace=all --from-events: {d}");
            }
            assert_eq!(full_deadlocks, deadlocks(&summary, &[]), "{ctx}");
            assert_eq!(full_deadlocks, deadlocks(&all, &[]), "{ctx}");
            assert_eq!(full_deadlocks, deadlocks(&all, &["--from-events"]), "{ctx}");
            assert_eq!(full_flame, flame_held(&summary, &[]), "{ctx}");
            assert_eq!(full_flame, flame_held(&all, &[]), "{ctx}");
        }
    }
}
