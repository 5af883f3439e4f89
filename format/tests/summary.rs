//! Summary lines (docs/FORMAT.md, "Summary lines (instrumentation mode)"): a hand-written
//! valid log in the agent's default mode, and hand-broken lines with the exact
//! `file:line: what` expected.

use orca_format::hist::bucket;
use orca_format::{
    parse_event_line, validate_readers, Durations, Event, Hash, Options, Severity,
    ValidationReport, ViolationKind,
};

const CLASSES: &str = "\
5087.100000000,15DB9742,LPingPong;,PingPong.java
5087.100000001,6D06D69C,Ljava/lang/Object;,Object.java
";

const METHODS: &str = "\
5087.100000000,00000001,main,([Ljava/lang/String;)V,15DB9742,3;00000000;00000046;00000008;00000047;00000010;00000049
5087.100000001,00000002,run,()V,15DB9742,1;00000000;0000000A
5087.100000002,00000003,wait,()V,6D06D69C,-1
";

/// Default mode: no MonitorEnter/Entered/Exit at all. Line 4 is a contention without a
/// MonitorEnter; thread CCCC has no ThreadStarted and its summaries come after its
/// MonitorContendedEnter, at JVM exit; AAAA's key (AAAA, 1111, main@10) is on two lines.
const EVENTS: &str = "\
5087.200000000,ThreadStarted,0000AAAA,main
5087.200000100,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008
5087.200000200,ThreadStarted,0000BBBB,worker
5087.200000600,MonitorContendedEnter,0000BBBB,00001111,0000AAAA,1;00000002;00000000
5087.200000900,MonitorContendedEntered,0000BBBB,00001111,1;00000002;00000000
5087.201000000,MonitorHolds,0000AAAA,00001111,2,3000,2000,2;317;1;381;1,1;00000001;00000010
5087.201000000,LockOrder,0000AAAA,00001111,00002222,2,0,1;00000001;00000010,1;00000001;00000014
5087.201000100,MonitorHold,0000BBBB,00001111,20000000,2;00000002;00000000;00000001;00000008
5087.201000200,MonitorHolds,0000BBBB,00001111,1,20000000,20000000,1;1228;1,1;00000002;00000000
5087.201000300,ThreadEnded,0000BBBB
5087.202000000,MonitorHolds,0000AAAA,00001111,1,5000,5000,1;462;1,1;00000001;00000010
5087.202000000,LockOrder,0000AAAA,00001111,00003333,1,1;00002222,1;00000001;00000010,1;00000002;00000004
5087.202000100,MonitorHolds,0000CCCC,00002222,1,70,70,1;70;1,1;00000002;00000004
5087.202000200,MonitorContendedEnter,0000CCCC,00001111,0000AAAA,1;00000002;00000000
5087.202000300,ThreadEnded,0000AAAA
5087.203000000,MonitorHolds,0000CCCC,00002222,1,80,80,1;80;1,1;00000002;00000004
";

fn run_with(events: &str, opts: &Options) -> ValidationReport {
    validate_readers(
        ("t.classtable", CLASSES.as_bytes()),
        ("t.methods", METHODS.as_bytes()),
        ("t.orca", events.as_bytes()),
        opts,
    )
    .unwrap()
}

fn run(events: &str) -> ValidationReport {
    run_with(events, &Options::default())
}

fn errors(r: &ValidationReport) -> Vec<String> {
    r.error_lines()
}

fn replace_line(text: &str, n: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The errors of EVENTS with line `n` replaced by `new`.
fn broken(n: usize, new: &str) -> Vec<String> {
    errors(&run(&replace_line(EVENTS, n, new)))
}

#[test]
fn summary_log_without_monitor_events_is_valid() {
    let r = run(EVENTS);
    assert!(r.is_valid(), "{:#?}", r.violations);
    // Only the note that CCCC is still blocked at the end.
    let others: Vec<_> = r
        .violations
        .iter()
        .filter(|v| v.kind != ViolationKind::OpenAtEnd)
        .collect();
    assert!(others.is_empty(), "{others:#?}");
    assert_eq!((r.events, r.threads), (16, 3));
}

#[test]
fn summary_lines_parse_into_their_fields() {
    let line = EVENTS.lines().nth(5).unwrap();
    let rec = parse_event_line(line.as_bytes()).unwrap();
    match rec.event {
        Event::MonitorHolds {
            thread,
            monitor,
            durations:
                Durations {
                    count,
                    total,
                    max,
                    histogram,
                },
            site,
            sample,
        } => {
            assert_eq!(sample, 1, "no <sample>: every hold");
            assert_eq!((thread, monitor), (Hash(0xAAAA), Hash(0x1111)));
            assert_eq!((count, total, max), (2, 3000, 2000));
            let b: Vec<_> = histogram.buckets().collect();
            assert_eq!(b, vec![(bucket(1000), 1), (bucket(2000), 1)]);
            assert_eq!(site.depth(), 1);
            assert_eq!(site.top().unwrap().location, 0x10);
        }
        e => panic!("{e:?}"),
    }
    let line = EVENTS.lines().nth(11).unwrap();
    match parse_event_line(line.as_bytes()).unwrap().event {
        Event::LockOrder {
            held,
            acquired,
            count,
            guards,
            held_site,
            acquired_site,
            ..
        } => {
            assert_eq!((held, acquired, count), (Hash(0x1111), Hash(0x3333), 1));
            assert_eq!(guards.iter().collect::<Vec<_>>(), vec![Hash(0x2222)]);
            assert_eq!(held_site.top().unwrap().location, 0x10);
            assert_eq!(acquired_site.top().unwrap().location, 4);
        }
        e => panic!("{e:?}"),
    }
    let line = EVENTS.lines().nth(7).unwrap();
    match parse_event_line(line.as_bytes()).unwrap().event {
        Event::MonitorHold { nanos, stack, .. } => {
            assert_eq!((nanos, stack.depth()), (20_000_000, 2));
        }
        e => panic!("{e:?}"),
    }
}

/// The examples in docs/FORMAT.md parse.
#[test]
fn format_md_examples_parse() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/FORMAT.md")).unwrap();
    let mut n = 0;
    for l in doc.lines() {
        for kind in [
            ",MonitorHolds,",
            ",LockOrder,",
            ",LockHolds,",
            ",LockHold,",
            ",MonitorContentions,",
            ",LockContentions,",
        ] {
            if let Some(ex) = l.strip_prefix("Example: `").filter(|e| e.contains(kind)) {
                let ex = ex.trim_end_matches('`');
                parse_event_line(ex.as_bytes()).unwrap_or_else(|e| panic!("{ex}: {e}"));
                n += 1;
            }
        }
    }
    assert_eq!(n, 6);
}

#[test]
fn monitor_holds_numbers_must_agree() {
    let site = "1;00000001;00000010";
    let at =
        |fields: &str| format!("5087.201000000,MonitorHolds,0000AAAA,00001111,{fields},{site}");
    // Histogram counts sum to 3, count is 2.
    assert_eq!(
        broken(6, &at("2,3000,2000,2;317;2;381;1")),
        ["t.orca:6: field 8 (histogram) `2;317;2;381;1`: counts sum to 3, but count is 2"]
    );
    // max > total.
    assert_eq!(
        broken(6, &at("2,3000,3001,2;317;1;413;1")),
        ["t.orca:6: field 7 (maxNanos) `3001`: greater than totalNanos 3000"]
    );
    // max below the mean: two holds of 3000 in total cannot have a max of 1000.
    assert_eq!(
        broken(6, &at("2,3000,1000,1;317;2")),
        ["t.orca:6: field 7 (maxNanos) `1000`: below the mean hold, ceil(totalNanos / count) = 1500"]
    );
    // Buckets not strictly increasing.
    assert_eq!(
        broken(6, &at("2,3000,2000,2;381;1;381;1")),
        ["t.orca:6: field 8 (histogram) `2;381;1;381;1`: pair 2: bucket 381 is not above the previous bucket 381 (buckets must be strictly increasing)"]
    );
    assert_eq!(
        broken(6, &at("2,3000,2000,2;381;1;317;1")),
        ["t.orca:6: field 8 (histogram) `2;381;1;317;1`: pair 2: bucket 317 is not above the previous bucket 381 (buckets must be strictly increasing)"]
    );
    // The max is not in the last bucket.
    assert_eq!(
        broken(6, &at("2,3000,2000,2;317;1;380;1")),
        ["t.orca:6: field 8 (histogram) `2;317;1;380;1`: the last bucket is 380, but maxNanos 2000 is in bucket 381"]
    );
    // A zero count in the histogram, a count of 0, a wrong number of items, a bucket beyond the scheme.
    assert_eq!(
        broken(6, &at("2,3000,2000,3;317;1;330;0;381;1")),
        ["t.orca:6: field 8 (histogram) `3;317;1;330;0;381;1`: pair 2: count must be > 0"]
    );
    assert_eq!(
        broken(6, &at("0,0,0,0")),
        ["t.orca:6: field 5 (count) `0`: must be >= 1"]
    );
    assert_eq!(
        broken(6, &at("2,3000,2000,2;317;1;381")),
        ["t.orca:6: field 8 (histogram) `2;317;1;381`: count 2 but 3 items follow (expected 2, or 4 in the pairs form of older logs)"]
    );
    assert_eq!(
        broken(6, &at("1,2000,2000,1;3776;1")),
        ["t.orca:6: field 8 (histogram) `1;3776;1`: pair 1: the bucket must be a decimal number from 0 to 3775"]
    );
    assert_eq!(
        broken(6, &at("2,3000,2000,2;0317;1;381;1")),
        ["t.orca:6: field 8 (histogram) `2;0317;1;381;1`: pair 1: the bucket must be a decimal number from 0 to 3775"]
    );
    let r = run(&replace_line(EVENTS, 6, &at("2,3000,3001,2;317;1;413;1")));
    assert_eq!(r.violations[0].kind, ViolationKind::Syntax);
}

#[test]
fn sites_are_exactly_one_known_frame() {
    let holds = "5087.201000000,MonitorHolds,0000AAAA,00001111,2,3000,2000,2;317;1;381;1";
    assert_eq!(
        broken(6, &format!("{holds},2;00000001;00000010;00000002;00000000")),
        ["t.orca:6: field 9 (site) `2;00000001;00000010;00000002;00000000`: a site is exactly one frame (1;<methodID>;<location>), found depth 2"]
    );
    assert_eq!(
        broken(6, &format!("{holds},0")),
        ["t.orca:6: field 9 (site) `0`: a site is exactly one frame (1;<methodID>;<location>), found depth 0"]
    );
    assert_eq!(
        broken(6, &format!("{holds},1;00000001")),
        ["t.orca:6: field 9 (site) `1;00000001`: depth 1 but an odd number (1) of items follow"]
    );
    // Unknown method IDs, in a MonitorHolds site and in both sites of a LockOrder.
    assert_eq!(
        broken(6, &format!("{holds},1;00000009;00000010")),
        ["t.orca:6: method ID 00000009 is not in the methods file (first use)"]
    );
    let lo = "5087.201000000,LockOrder,0000AAAA,00001111,00002222,2,0";
    assert_eq!(
        broken(7, &format!("{lo},1;0000000A;00000010,1;00000001;00000014")),
        ["t.orca:7: method ID 0000000A is not in the methods file (first use)"]
    );
    assert_eq!(
        broken(7, &format!("{lo},1;00000001;00000010,1;0000000B;00000014")),
        ["t.orca:7: method ID 0000000B is not in the methods file (first use)"]
    );
    assert_eq!(
        broken(7, &format!("{lo},1;00000001;00000010,2;00000001;00000014;00000001;00000010")),
        ["t.orca:7: field 9 (acquiredSite) `2;00000001;00000014;00000001;00000010`: a site is exactly one frame (1;<methodID>;<location>), found depth 2"]
    );
    // MonitorHold has a full stack, checked against stackdepth like any event's.
    let r = run_with(
        EVENTS,
        &Options {
            max_stack_depth: Some(1),
            ..Default::default()
        },
    );
    assert_eq!(errors(&r), ["t.orca:8: stack depth 2 exceeds stackdepth 1"]);
}

#[test]
fn lock_order_monitors_and_guards() {
    let sites = "1;00000001;00000010,1;00000001;00000014";
    let lo = |fields: &str| format!("5087.201000000,LockOrder,0000AAAA,{fields},{sites}");
    assert_eq!(
        broken(7, &lo("00001111,00001111,2,0")),
        ["t.orca:7: field 5 (acquiredMonitor) `00001111`: the same as heldMonitor (a reentrant acquisition is no lock order)"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,0,0")),
        ["t.orca:7: field 6 (count) `0`: must be >= 1"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,2,1;00001111")),
        ["t.orca:7: field 7 (guards) `1;00001111`: guard 1 (00001111) is the heldMonitor"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,2,2;00003333;00002222")),
        ["t.orca:7: field 7 (guards) `2;00003333;00002222`: guard 2 (00002222) is the acquiredMonitor"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,2,2;00003333;00003333")),
        ["t.orca:7: field 7 (guards) `2;00003333;00003333`: guard 2 (00003333) is listed twice"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,2,2;00003333")),
        ["t.orca:7: field 7 (guards) `2;00003333`: count 2 but 1 items follow (expected 2)"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00002222,2,1;0000333")),
        ["t.orca:7: field 7 (guards) `1;0000333`: guard 1: expected 8 uppercase hex digits, not 00000000"]
    );
    assert_eq!(
        broken(
            7,
            "5087.201000000,LockOrder,0000AAAA,00001111,00002222,2,0,1;00000001;00000010"
        ),
        ["t.orca:7: LockOrder: expected 9 fields, found 8"]
    );
    // The row of other monitors of a pair of sites: 0 on both ends, no guards.
    assert!(broken(7, &lo("00000000,00000000,997,0")).is_empty());
    assert_eq!(
        broken(7, &lo("00000000,00002222,2,0")),
        ["t.orca:7: field 5 (acquiredMonitor) `00002222`: 0 with a heldMonitor other than 0, or the reverse (0 names other monitors on both ends or neither)"]
    );
    assert_eq!(
        broken(7, &lo("00001111,00000000,2,0")),
        ["t.orca:7: field 5 (acquiredMonitor) `00000000`: 0 with a heldMonitor other than 0, or the reverse (0 names other monitors on both ends or neither)"]
    );
    assert_eq!(
        broken(7, &lo("00000000,00000000,2,1;00003333")),
        ["t.orca:7: field 7 (guards) `1;00003333`: guards on a line of other monitors (heldMonitor 0): it has none"]
    );
}

#[test]
fn monitor_hold_cannot_begin_before_the_clock() {
    assert_eq!(
        broken(8, "0.000001000,MonitorHold,0000BBBB,00001111,1001,1;00000002;00000000"),
        [
            "t.orca:8: field 5 (nanos) `1001`: longer than the timestamp: the hold would begin before the clock's origin"
        ]
    );
}

#[test]
fn summary_lines_follow_the_thread_ordering_rules() {
    // After the thread's ThreadEnded (line 10): the final summary comes before it.
    let ev = format!(
        "{EVENTS}5087.203000001,MonitorHolds,0000BBBB,00001111,1,70,70,1;70;1,1;00000002;00000000\n"
    );
    let r = run(&ev);
    assert_eq!(
        errors(&r),
        ["t.orca:17: MonitorHolds of thread 0000BBBB after its ThreadEnded at line 10"]
    );
    // A timestamp before the thread's previous line.
    assert_eq!(
        broken(
            11,
            "5087.200000500,MonitorHolds,0000AAAA,00001111,1,5000,5000,1;462;1,1;00000001;00000010"
        ),
        ["t.orca:11: timestamp 5087.200000500 of thread 0000AAAA is before its previous event's 5087.201000000 (line 7)"]
    );
}

/// A trace=all log: the events and the summary lines together, and summary lines between a
/// MonitorEnter and its MonitorEntered (a thread blocked at exit) break no pairing rule.
#[test]
fn events_and_summaries_together() {
    let ev = "\
5087.200000000,ThreadStarted,0000AAAA,main
5087.200000100,MonitorEnter,0000AAAA,00001111,1;00000001;00000010
5087.200000200,MonitorEntered,0000AAAA,00001111,1;00000001;00000010
5087.200001200,MonitorExit,0000AAAA,00001111,1;00000001;00000010
5087.200001300,MonitorEnter,0000AAAA,00002222,1;00000001;00000014
5087.200001400,MonitorContendedEnter,0000AAAA,00002222,0000BBBB,1;00000001;00000014
5087.300000000,MonitorHolds,0000AAAA,00001111,1,1000,1000,1;317;1,1;00000001;00000010
";
    let r = run(ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
    let notes: Vec<String> = r
        .violations
        .iter()
        .filter(|v| v.severity == Severity::Note)
        .map(|v| v.to_string())
        .collect();
    assert_eq!(
        notes,
        [
            "t.orca:7: note: thread 0000AAAA: still blocked on monitor 00002222 at the end of the log (MonitorContendedEnter at line 6)",
            "t.orca:7: note: thread 0000AAAA: MonitorEnter of 00002222 at line 5 not yet entered at the end of the log"
        ]
    );
}

/// Every one-byte change or deletion in the summary lines gives a parse result, never a panic
/// (the histogram, guard and site parsers index into their fields).
#[test]
fn summary_mutations_never_panic() {
    let mut n = 0;
    for line in EVENTS.lines().filter(|l| {
        l.contains(",MonitorHolds,") || l.contains(",LockOrder,") || l.contains(",MonitorHold,")
    }) {
        let b = line.as_bytes();
        for i in 0..b.len() {
            for c in [b';', b',', b'0', b'1', b'9', b'A', b'x', b'-'] {
                let mut m = b.to_vec();
                m[i] = c;
                if let Ok(rec) = parse_event_line(&m) {
                    n += 1;
                    if let Event::MonitorHolds {
                        durations: Durations { histogram, .. },
                        ..
                    } = rec.event
                    {
                        assert!(histogram.buckets().count() == histogram.len());
                    }
                }
            }
            let mut m = b.to_vec();
            m.remove(i);
            let _ = parse_event_line(&m);
        }
    }
    assert!(n > 0);
}

/// [`EVENTS`] with `extra` lines after its sixth.
fn with_lines(extra: &[&str]) -> String {
    let mut s = String::new();
    for (i, l) in EVENTS.lines().enumerate() {
        s.push_str(l);
        s.push('\n');
        if i == 5 {
            for e in extra {
                s.push_str(e);
                s.push('\n');
            }
        }
    }
    s
}

/// `MonitorContentions` and `LockContentions`: the short contentions the agent counted per
/// site, checked as strictly as hold summaries (numbers, one frame, one line per key and
/// flush).
#[test]
fn contention_summaries_are_checked_like_hold_summaries() {
    let mc = "5087.201000000,MonitorContentions,0000AAAA,00001111,2,3000,2000,2;317;1;381;1,1;00000001;00000010";
    let lc =
        "5087.201000000,LockContentions,0000AAAA,00002222,W,1,700,700,1;279;1,1;00000001;00000014";
    let other =
        "5087.201000000,MonitorContentions,0000AAAA,00000000,1,90,90,1;90;1,1;00000001;00000010";
    let log = with_lines;
    let r = run(&log(&[mc, lc, other]));
    assert!(r.is_valid(), "{:#?}", r.violations);
    match parse_event_line(mc.as_bytes()).unwrap().event {
        Event::MonitorContentions {
            thread,
            monitor,
            ref site,
            durations: Durations {
                count, total, max, ..
            },
            ..
        } => {
            assert_eq!(
                (thread, monitor, count, total, max),
                (Hash(0xAAAA), Hash(0x1111), 2, 3000, 2000)
            );
            assert_eq!(site.top().map(|f| f.location), Some(0x10));
        }
        ref e => panic!("{e:?}"),
    }
    assert!(matches!(
        parse_event_line(lc.as_bytes()).unwrap().event,
        Event::LockContentions {
            durations: Durations { count: 1, .. },
            ..
        }
    ));
    // The same key twice in one flush.
    assert_eq!(
        errors(&run(&log(&[mc, mc]))),
        ["t.orca:8: MonitorContentions of thread 0000AAAA for 00001111 at 00000001:16 a second time in one flush of its summaries (first at line 7): a key has one line per interval"]
    );
    // Numbers that disagree, a site of two frames, a bad mode.
    let bad = "5087.201000000,MonitorContentions,0000AAAA,00001111,2,3000,2000,2;317;2;381;1,1;00000001;00000010";
    assert_eq!(
        errors(&run(&log(&[bad]))),
        ["t.orca:7: field 8 (histogram) `2;317;2;381;1`: counts sum to 3, but count is 2"]
    );
    let deep = "5087.201000000,MonitorContentions,0000AAAA,00001111,1,90,90,1;90;1,2;00000001;00000010;00000002;00000000";
    assert_eq!(
        errors(&run(&log(&[deep]))),
        ["t.orca:7: field 9 (site) `2;00000001;00000010;00000002;00000000`: a site is exactly one frame (1;<methodID>;<location>), found depth 2"]
    );
    let mode =
        "5087.201000000,LockContentions,0000AAAA,00002222,X,1,700,700,1;279;1,1;00000001;00000014";
    assert_eq!(errors(&run(&log(&[mode]))).len(), 1);
}

/// A contentions line's stack (issue 46): counted per stack, so two stacks at one site are two
/// keys; the stack begins at the site, and its frames resolve; a line without one (an older
/// agent's) reads its site as its stack.
#[test]
fn contention_summaries_carry_their_stack() {
    let at = |stack: &str| {
        format!("5087.201000000,MonitorContentions,0000AAAA,00001111,1,90,90,1;90;1,1;00000001;00000010,{stack}")
    };
    let one = at("2;00000001;00000010;00000002;00000000");
    let two = at("2;00000001;00000010;00000001;00000008");
    let log = with_lines;
    let r = run(&log(&[&one, &two]));
    assert!(r.is_valid(), "{:#?}", r.violations);
    match parse_event_line(one.as_bytes()).unwrap().event {
        Event::MonitorContentions { site, stack, .. } => {
            assert_eq!(stack.depth(), 2);
            assert_eq!(stack.top(), site.top());
            assert_eq!(
                stack.or_site(site).raw(),
                "2;00000001;00000010;00000002;00000000"
            );
        }
        ref e => panic!("{e:?}"),
    }
    let old =
        "5087.201000000,MonitorContentions,0000AAAA,00001111,1,90,90,1;90;1,1;00000001;00000010";
    match parse_event_line(old.as_bytes()).unwrap().event {
        Event::MonitorContentions { site, stack, .. } => {
            assert!(stack.is_empty());
            assert_eq!(stack.or_site(site).raw(), "1;00000001;00000010");
        }
        ref e => panic!("{e:?}"),
    }
    assert_eq!(
        errors(&run(&log(&[&one, &one]))),
        ["t.orca:8: MonitorContentions of thread 0000AAAA for 00001111 at 00000001:16 a second time in one flush of its summaries (first at line 7): a key has one line per interval"]
    );
    let elsewhere = at("2;00000002;00000000;00000001;00000010");
    assert_eq!(
        errors(&run(&log(&[&elsewhere]))),
        ["t.orca:7: MonitorContentions of thread 0000AAAA: its stack 2;00000002;00000000;00000001;00000010 does not begin at its site 1;00000001;00000010"]
    );
    let unknown = at("2;00000001;00000010;0000000F;00000000");
    assert_eq!(errors(&run(&log(&[&unknown]))).len(), 1);
    // Waits lines carry theirs the same way.
    let waits = |stack: &str| {
        format!("5087.201000000,Waits,0000AAAA,wait,00001111,2,900,500,1;00000001;00000010{stack}")
    };
    assert!(run(&log(&[&waits(",2;00000001;00000010;00000002;00000000")])).is_valid());
    assert!(run(&log(&[&waits("")])).is_valid());
    match parse_event_line(waits(",2;00000001;00000010;00000002;00000000").as_bytes())
        .unwrap()
        .event
    {
        Event::Waits { site, stack, .. } => {
            assert_eq!((stack.depth(), stack.top()), (2, site.top()));
        }
        ref e => panic!("{e:?}"),
    }
    assert_eq!(
        errors(&run(&log(&[&waits(",1;00000002;00000000")]))),
        ["t.orca:7: Waits of thread 0000AAAA: its stack 1;00000002;00000000 does not begin at its site 1;00000001;00000010"]
    );
}

/// A hold row's `<sample>`: absent, every hold (1); 2 or more, one hold in that many; 0, 1 or
/// anything else is an error naming the field.
#[test]
fn a_hold_rows_sample_is_two_or_more() {
    let row = "5087.300000000,MonitorHoldsUntimed,0000AAAA,00001111,7,1;00000001;00000010";
    for (tail, want) in [("", Some(1)), (",16", Some(16)), (",2", Some(2))] {
        let line = format!("{row}{tail}");
        let rec = parse_event_line(line.as_bytes()).unwrap();
        let Event::MonitorHoldsUntimed { sample, .. } = rec.event else {
            panic!("{row}{tail}");
        };
        assert_eq!(Some(sample), want, "{row}{tail}");
    }
    for tail in [",1", ",0", ",x", ",016"] {
        let line = format!("{row}{tail}");
        let err = parse_event_line(line.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("sample"), "{row}{tail}: {err}");
    }
}
