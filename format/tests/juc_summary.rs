//! j.u.c. lock summary lines (docs/FORMAT.md, "Summary lines (instrumentation mode)":
//! `LockHolds`, `LockHold`, and `LockOrder` across monitors and j.u.c. locks): a hand-written
//! valid log in the agent's default mode, and hand-broken lines with the exact
//! `file:line: what` expected, one per rule.

use orca_format::hist::bucket;
use orca_format::{
    parse_event_line, validate_readers, Durations, Event, EventKind, Hash, LockMode, Options,
    Severity, ValidationReport,
};

const CLASSES: &str = "\
5087.100000000,15DB9742,LPingPong;,PingPong.java
";

const METHODS: &str = "\
5087.100000000,00000001,main,([Ljava/lang/String;)V,15DB9742,3;00000000;00000046;00000008;00000047;00000010;00000049
5087.100000001,00000002,run,()V,15DB9742,1;00000000;0000000A
";

/// Default mode with j.u.c. summaries: thread BBBB's contended `lock()` of 2222 is written
/// (LockAcquire with owner AAAA, LockAcquired), its release is not; AAAA's holds are in
/// LockHolds only; AAAA's 20 ms hold of 2222 (W) is also a LockHold (line 6), counted in the
/// LockHolds of line 7; a LockOrder edge from the j.u.c. lock 2222 to the monitor 1111
/// (cross-kind) and one from 1111 to 2222 in mode R; CCCC is blocked in `lock()` at the end.
const EVENTS: &str = "\
5087.200000000,ThreadStarted,0000AAAA,main
5087.200000100,ThreadStart,0000AAAA,0000BBBB,1;00000001;00000008
5087.200000200,ThreadStarted,0000BBBB,worker
5087.200000600,LockAcquire,0000BBBB,00002222,W,0000AAAA,1;00000002;00000000
5087.200000900,LockAcquired,0000BBBB,00002222,W,1;00000002;00000000
5087.201000100,LockHold,0000AAAA,00002222,W,20000000,1;00000001;00000010,2;00000001;00000014;00000001;00000008
5087.201000200,LockHolds,0000AAAA,00002222,W,3,20003000,20000000,3;317;1;381;1;1228;1,1;00000001;00000010
5087.201000200,LockOrder,0000AAAA,00002222,00001111,2,0,1;00000001;00000010,1;00000001;00000014
5087.201000300,LockHolds,0000BBBB,00002222,W,1,900,900,1;304;1,1;00000002;00000000
5087.201000300,LockOrder,0000BBBB,00001111,00002222,1,0,1;00000002;00000000,1;00000002;00000000
5087.201000400,ThreadEnded,0000BBBB
5087.202000000,LockHolds,0000AAAA,00002222,R,1,70,70,1;70;1,1;00000001;00000008
5087.202000100,LockAcquire,0000CCCC,00002222,W,0000AAAA,1;00000002;00000000
5087.202000200,MonitorHolds,0000CCCC,00001111,1,80,80,1;80;1,1;00000002;00000000
5087.202000300,ThreadEnded,0000AAAA
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

fn replace_line(text: &str, n: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The errors of EVENTS with line `n` replaced by `new`.
fn broken(n: usize, new: &str) -> Vec<String> {
    run(&replace_line(EVENTS, n, new)).error_lines()
}

fn notes(r: &ValidationReport) -> Vec<String> {
    r.violations
        .iter()
        .filter(|v| v.severity == Severity::Note)
        .map(|v| v.to_string())
        .collect()
}

#[test]
fn summarised_juc_log_is_valid_without_release_notes() {
    let r = run(EVENTS);
    assert!(r.is_valid(), "{:#?}", r.violations);
    // BBBB ended after a LockAcquired without LockRelease: normal in a summarised log (its
    // release was not written), so no note; CCCC's open lock() is one.
    assert_eq!(
        notes(&r),
        ["t.orca:15: note: thread 0000CCCC: LockAcquire of line 13 still open at the end of the log"]
    );
    assert_eq!((r.events, r.threads), (15, 3));
}

/// The same LockAcquired without release, in a log with no j.u.c. summary lines (JVMTI mode,
/// or before this extension), or in a complete trace (it has LockRelease lines), is noted.
#[test]
fn unreleased_locks_are_noted_when_the_log_is_complete() {
    let no_summaries: String = EVENTS
        .lines()
        .filter(|l| !l.contains(",LockHold"))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = run(&no_summaries);
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert_eq!(
        notes(&r)[0],
        "t.orca:8: note: thread 0000BBBB ended holding lock 00002222 in mode W (1 LockAcquired without LockRelease, first at line 5)"
    );
    // With one LockRelease anywhere, the log is a complete trace: the note is back.
    let with_release = replace_line(
        EVENTS,
        13,
        "5087.202000100,LockRelease,0000CCCC,00003333,W,1;00000002;00000000",
    );
    let r = run(&with_release);
    // ... and that release has no LockAcquired: an error in a complete trace.
    assert_eq!(
        r.error_lines(),
        ["t.orca:13: unbalanced LockRelease: thread 0000CCCC does not hold lock 00003333 in mode W (no matching LockAcquired)"]
    );
    assert_eq!(
        notes(&r)[0],
        "t.orca:11: note: thread 0000BBBB ended holding lock 00002222 in mode W (1 LockAcquired without LockRelease, first at line 5)"
    );
}

#[test]
fn juc_summary_lines_parse_into_their_fields() {
    match parse_event_line(EVENTS.lines().nth(6).unwrap().as_bytes())
        .unwrap()
        .event
    {
        Event::LockHolds {
            thread,
            lock,
            mode,
            durations:
                Durations {
                    count,
                    total,
                    max,
                    histogram,
                },
            site,
        } => {
            assert_eq!(
                (thread, lock, mode),
                (Hash(0xAAAA), Hash(0x2222), LockMode::Write)
            );
            assert_eq!((count, total, max), (3, 20_003_000, 20_000_000));
            let b: Vec<_> = histogram.buckets().collect();
            assert_eq!(
                b,
                vec![
                    (bucket(1000), 1),
                    (bucket(2000), 1),
                    (bucket(20_000_000), 1)
                ]
            );
            assert_eq!(site.top().unwrap().location, 0x10);
        }
        e => panic!("{e:?}"),
    }
    let rec = parse_event_line(EVENTS.lines().nth(5).unwrap().as_bytes()).unwrap();
    assert_eq!(rec.event.kind(), EventKind::LockHold);
    assert!(rec.event.kind().is_long_hold() && !rec.event.kind().is_summary());
    assert_eq!(rec.event.object(), Some(Hash(0x2222)));
    assert_eq!(rec.event.mode(), Some(LockMode::Write));
    match rec.event {
        Event::LockHold {
            nanos, site, stack, ..
        } => {
            assert_eq!((nanos, site.depth(), stack.depth()), (20_000_000, 1, 2));
            // Event::stack is the unlock's stack; stacks() has the site too.
            assert_eq!(rec.event.stack().unwrap().depth(), 2);
            assert_eq!(rec.event.stacks().count(), 2);
        }
        e => panic!("{e:?}"),
    }
    assert!(EventKind::LockHolds.is_summary());
    assert_eq!(
        EventKind::from_name(b"LockHolds"),
        Some(EventKind::LockHolds)
    );
    assert_eq!(EventKind::from_name(b"LockHold"), Some(EventKind::LockHold));
    assert!(EventKind::ALL.contains(&EventKind::LockHold));
}

#[test]
fn lock_holds_numbers_must_agree() {
    let site = "1;00000002;00000000";
    let at = |fields: &str| format!("5087.201000300,LockHolds,0000BBBB,00002222,{fields},{site}");
    let cases: &[(&str, &str)] = &[
        ("W,2,3000,2000,2;317;2;381;1", "field 9 (histogram) `2;317;2;381;1`: counts sum to 3, but count is 2"),
        ("W,2,3000,3001,2;317;1;413;1", "field 8 (maxNanos) `3001`: greater than totalNanos 3000"),
        ("W,2,3000,1000,1;317;2", "field 8 (maxNanos) `1000`: below the mean hold, ceil(totalNanos / count) = 1500"),
        ("W,2,3000,2000,2;381;1;317;1", "field 9 (histogram) `2;381;1;317;1`: pair 2: bucket 317 is not above the previous bucket 381 (buckets must be strictly increasing)"),
        ("W,2,3000,2000,2;317;1;380;1", "field 9 (histogram) `2;317;1;380;1`: the last bucket is 380, but maxNanos 2000 is in bucket 381"),
        ("W,2,3000,2000,3;317;1;330;0;381;1", "field 9 (histogram) `3;317;1;330;0;381;1`: pair 2: count must be > 0"),
        ("W,0,0,0,0", "field 6 (count) `0`: must be >= 1"),
        ("W,2,3000,2000,2;317;1;381", "field 9 (histogram) `2;317;1;381`: count 2 but 3 items follow (expected 2, or 4 in the pairs form of older logs)"),
        ("W,1,2000,2000,1;3776;1", "field 9 (histogram) `1;3776;1`: pair 1: the bucket must be a decimal number from 0 to 3775"),
        // The steps form the agent writes: each bucket after the first as its distance from
        // the one before, a count above 1 after `:`.
        ("W,4,4000,2000,2;317;64:2", "field 9 (histogram) `2;317;64:2`: counts sum to 3, but count is 4"),
        ("W,2,3000,2000,2;317;0", "field 9 (histogram) `2;317;0`: item 2: step 0 (buckets must be strictly increasing)"),
        ("W,2,3000,2000,2;317;63", "field 9 (histogram) `2;317;63`: the last bucket is 380, but maxNanos 2000 is in bucket 381"),
        ("W,2,3000,2000,1;381:1", "field 9 (histogram) `1;381:1`: item 1: a count after `:` must be a decimal number above 1 without leading zeros (a count of 1 is written as the step alone)"),
        ("W,2,3000,2000,1;381:02", "field 9 (histogram) `1;381:02`: item 1: a count after `:` must be a decimal number above 1 without leading zeros (a count of 1 is written as the step alone)"),
        ("W,2,3000,2000,2;3000;776", "field 9 (histogram) `2;3000;776`: item 2: bucket 3776 is above the largest bucket, 3775"),
        ("W,2,3000,2000,2;317;+64", "field 9 (histogram) `2;317;+64`: item 2: expected <step> or <step>:<count>, decimal numbers without leading zeros"),
        ("W,1,02000,2000,1;381;1", "field 7 (totalNanos) `02000`: expected a decimal number without leading zeros"),
        ("X,1,900,900,1;304;1", "field 5 (mode) `X`: expected `R` or `W`"),
        ("w,1,900,900,1;304;1", "field 5 (mode) `w`: expected `R` or `W`"),
    ];
    for (fields, msg) in cases {
        assert_eq!(
            broken(9, &at(fields)),
            [format!("t.orca:9: {msg}")],
            "{fields}"
        );
    }
    // Lock 0: the row of other locks of its site and mode (FORMAT.md).
    assert!(broken(
        9,
        "5087.201000300,LockHolds,0000BBBB,00000000,W,1,900,900,1;304;1,1;00000002;00000000"
    )
    .is_empty());
    // The MonitorHolds shape (no mode) is not a LockHolds.
    assert_eq!(
        broken(
            9,
            "5087.201000300,LockHolds,0000BBBB,00002222,1,900,900,1;304;1,1;00000002;00000000"
        ),
        ["t.orca:9: LockHolds: expected 10 fields, found 9"]
    );
}

#[test]
fn juc_sites_are_exactly_one_known_frame() {
    let holds = "5087.201000300,LockHolds,0000BBBB,00002222,W,1,900,900,1;304;1";
    assert_eq!(
        broken(9, &format!("{holds},2;00000002;00000000;00000001;00000008")),
        ["t.orca:9: field 10 (site) `2;00000002;00000000;00000001;00000008`: a site is exactly one frame (1;<methodID>;<location>), found depth 2"]
    );
    assert_eq!(
        broken(9, &format!("{holds},0")),
        ["t.orca:9: field 10 (site) `0`: a site is exactly one frame (1;<methodID>;<location>), found depth 0"]
    );
    assert_eq!(
        broken(9, &format!("{holds},1;00000009;00000000")),
        ["t.orca:9: method ID 00000009 is not in the methods file (first use)"]
    );
    // LockHold: the site is one frame, both the site and the stack resolve, the stack is
    // checked against stackdepth.
    let hold = "5087.201000100,LockHold,0000AAAA,00002222,W,20000000";
    assert_eq!(
        broken(6, &format!("{hold},0,1;00000001;00000014")),
        ["t.orca:6: field 7 (site) `0`: a site is exactly one frame (1;<methodID>;<location>), found depth 0"]
    );
    assert_eq!(
        broken(6, &format!("{hold},1;0000000A;00000010,1;00000001;00000014")),
        [
            "t.orca:6: method ID 0000000A is not in the methods file (first use)",
            // ... and no LockHolds has its site.
            "t.orca:15: thread 0000AAAA ended with its 20000000 ns LockHold of lock 00002222 in mode W at line 6 counted in no LockHolds line"
        ]
    );
    assert_eq!(
        broken(
            6,
            &format!("{hold},1;00000001;00000010,1;0000000B;00000014")
        ),
        ["t.orca:6: method ID 0000000B is not in the methods file (first use)"]
    );
    assert_eq!(
        broken(6, &format!("{hold},1;00000001;00000010")),
        ["t.orca:6: LockHold: expected 8 fields, found 7"]
    );
    let r = run_with(
        EVENTS,
        &Options {
            max_stack_depth: Some(1),
            ..Default::default()
        },
    );
    assert_eq!(
        r.error_lines(),
        ["t.orca:6: stack depth 2 exceeds stackdepth 1"]
    );
}

#[test]
fn lock_hold_rules() {
    // Longer than the clock.
    assert_eq!(
        broken(6, "0.000001000,LockHold,0000AAAA,00002222,W,1001,1;00000001;00000010,0"),
        ["t.orca:6: field 6 (nanos) `1001`: longer than the timestamp: the hold would begin before the clock's origin"]
    );
    assert_eq!(
        broken(6, "5087.201000100,LockHold,0000AAAA,00002222,R,20000000,1;00000001;00000010,0"),
        ["t.orca:15: thread 0000AAAA ended with its 20000000 ns LockHold of lock 00002222 in mode R at line 6 counted in no LockHolds line"]
    );
    // The next LockHolds of the key must count it: its maximum and its bucket.
    assert_eq!(
        broken(6, "5087.201000100,LockHold,0000AAAA,00002222,W,20000001,1;00000001;00000010,0"),
        ["t.orca:7: LockHolds of thread 0000AAAA, lock 00002222, mode W does not count the 20000001 ns LockHold of line 6 (maxNanos 20000000, histogram 3;317;1;381;1;1228;1), nor does a LockHoldsUntimed line of its flush"]
    );
    assert_eq!(
        broken(6, "5087.201000100,LockHold,0000AAAA,00002222,W,5000,1;00000001;00000010,0"),
        ["t.orca:7: LockHolds of thread 0000AAAA, lock 00002222, mode W does not count the 5000 ns LockHold of line 6 (maxNanos 20000000, histogram 3;317;1;381;1;1228;1), nor does a LockHoldsUntimed line of its flush"]
    );
    // Two LockHold lines in a bucket the LockHolds counts once.
    let doubled: String = EVENTS
        .lines()
        .enumerate()
        .flat_map(|(i, l)| if i == 5 { vec![l, l] } else { vec![l] })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        run(&doubled).error_lines(),
        ["t.orca:8: LockHolds of thread 0000AAAA, lock 00002222, mode W does not count the 20000000 ns LockHold of line 7 (maxNanos 20000000, histogram 3;317;1;381;1;1228;1), nor does a LockHoldsUntimed line of its flush"]
    );
    // A LockHold whose thread is still alive and has not flushed by the end: a note.
    let r = run(&format!(
        "{EVENTS}5087.203000000,LockHold,0000CCCC,00002222,W,100,1;00000002;00000000,0\n"
    ));
    assert!(r.is_valid(), "{:#?}", r.error_lines());
    assert!(notes(&r).contains(&"t.orca:16: note: thread 0000CCCC: its 100 ns LockHold of lock 00002222 in mode W at line 16 is counted in no LockHolds line by the end of the log".to_string()));
}

#[test]
fn a_flush_has_one_line_per_key() {
    let with_at = |at: usize, extra: &str| -> String {
        EVENTS
            .lines()
            .enumerate()
            .flat_map(|(i, l)| if i == at { vec![l, extra] } else { vec![l] })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    // The same key again in the same flush (one timestamp): the agent once wrote two site
    // IDs of one place as two lines, and readers took the first as the one that counts.
    let twice = "5087.201000200,LockHolds,0000AAAA,00002222,W,1,70,70,1;70;1,1;00000001;00000010";
    assert_eq!(
        run(&with_at(6, twice)).error_lines(),
        ["t.orca:8: LockHolds of thread 0000AAAA for 00002222 in mode W at 00000001:16 a second time in one flush of its summaries (first at line 7): a key has one line per interval"]
    );
    // In the next interval, or in the other mode, it is another line.
    let later = "5087.202000050,LockHolds,0000AAAA,00002222,W,1,70,70,1;70;1,1;00000001;00000010";
    let r = run(&with_at(11, later));
    assert!(r.is_valid(), "{:?}", r.error_lines());
    let read = "5087.201000200,LockHolds,0000AAAA,00002222,R,1,70,70,1;70;1,1;00000001;00000010";
    let r = run(&with_at(6, read));
    assert!(r.is_valid(), "{:?}", r.error_lines());
}

#[test]
fn juc_summaries_follow_the_thread_ordering_rules() {
    let r = run(&format!(
        "{EVENTS}5087.203000001,LockHolds,0000BBBB,00002222,W,1,70,70,1;70;1,1;00000002;00000000\n"
    ));
    assert_eq!(
        r.error_lines(),
        ["t.orca:16: LockHolds of thread 0000BBBB after its ThreadEnded at line 11"]
    );
    assert_eq!(
        broken(
            12,
            "5087.200000500,LockHolds,0000AAAA,00002222,R,1,70,70,1;70;1,1;00000001;00000008"
        ),
        ["t.orca:12: timestamp 5087.200000500 of thread 0000AAAA is before its previous event's 5087.201000200 (line 8)"]
    );
    let r = run(&format!(
        "{EVENTS}5087.203000001,LockHold,0000BBBB,00002222,W,10,1;00000002;00000000,0\n"
    ));
    assert_eq!(
        r.error_lines()[0],
        "t.orca:16: LockHold of thread 0000BBBB after its ThreadEnded at line 11"
    );
}

/// A LockOrder between a j.u.c. lock and a monitor is the same line: the kinds are not told
/// apart, the held and acquired IDs differ.
#[test]
fn cross_kind_lock_order() {
    assert_eq!(
        broken(
            8,
            "5087.201000200,LockOrder,0000AAAA,00002222,00002222,2,0,1;00000001;00000010,1;00000001;00000014"
        ),
        ["t.orca:8: field 5 (acquiredMonitor) `00002222`: the same as heldMonitor (a reentrant acquisition is no lock order)"]
    );
}

/// A complete trace (trace=all): the full j.u.c. events and the summary lines together.
#[test]
fn juc_events_and_summaries_together() {
    let ev = "\
5087.200000000,ThreadStarted,0000AAAA,main
5087.200000100,LockAcquire,0000AAAA,00002222,W,00000000,1;00000001;00000010
5087.200000200,LockAcquired,0000AAAA,00002222,W,1;00000001;00000010
5087.200000300,LockAcquire,0000AAAA,00002222,R,0000AAAA,1;00000001;00000014
5087.200000400,LockAcquired,0000AAAA,00002222,R,1;00000001;00000014
5087.200001200,LockRelease,0000AAAA,00002222,W,1;00000001;00000010
5087.200001300,LockRelease,0000AAAA,00002222,R,1;00000001;00000014
5087.300000000,LockHolds,0000AAAA,00002222,W,1,1000,1000,1;317;1,1;00000001;00000010
5087.300000000,LockHolds,0000AAAA,00002222,R,1,900,900,1;304;1,1;00000001;00000014
5087.300000100,ThreadEnded,0000AAAA
";
    let r = run(ev);
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    // Without the W release the lock is still held at ThreadEnded: noted (the log is
    // complete, it has LockRelease lines).
    let r = run(&replace_line(
        ev,
        6,
        "5087.200001200,ThreadUnpark,0000AAAA,0000BBBB,0",
    ));
    assert!(r.is_valid(), "{:#?}", r.violations);
    assert_eq!(
        notes(&r),
        ["t.orca:10: note: thread 0000AAAA ended holding lock 00002222 in mode W (1 LockAcquired without LockRelease, first at line 3)"]
    );
}

/// Every one-byte change or deletion in the j.u.c. summary lines gives a parse result, never a
/// panic.
#[test]
fn juc_summary_mutations_never_panic() {
    let mut n = 0;
    for line in EVENTS.lines().filter(|l| l.contains(",LockHold")) {
        let b = line.as_bytes();
        for i in 0..b.len() {
            for c in [b';', b',', b'0', b'1', b'9', b'A', b'R', b'W', b'x', b'-'] {
                let mut m = b.to_vec();
                m[i] = c;
                if let Ok(rec) = parse_event_line(&m) {
                    n += 1;
                    if let Event::LockHolds {
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

/// A lock without a row of its own at its site has its holds in the site's row of other locks
/// (lock 0): that row counts its LockHold, and the row of another site does not.
#[test]
fn a_long_hold_may_be_counted_in_its_sites_row_of_other_locks() {
    let other = "5087.201000200,LockHolds,0000AAAA,00000000,W,3,20003000,20000000,3;317;1;381;1;1228;1,1;00000001;00000010";
    assert!(broken(7, other).is_empty(), "{:?}", broken(7, other));
    let elsewhere = other.replace(",1;00000001;00000010", ",1;00000001;00000014");
    assert_eq!(
        broken(7, &elsewhere),
        ["t.orca:15: thread 0000AAAA ended with its 20000000 ns LockHold of lock 00002222 in mode W at line 6 counted in no LockHolds line"]
    );
}

/// `LockHeldAtStart` (a hold that began before an attached recording, seen at its unlock):
/// parsed with its fields, valid anywhere a release is, and not a release: in a complete
/// trace it leaves the thread's count of the lock alone, so a `LockRelease` after it is still
/// unbalanced.
#[test]
fn a_hold_from_before_the_recording_is_not_a_release() {
    let line = "5087.202000100,LockHeldAtStart,0000CCCC,00003333,W,1;00000002;00000000";
    let rec = parse_event_line(line.as_bytes()).unwrap();
    match rec.event {
        Event::LockHeldAtStart {
            thread,
            lock,
            mode,
            stack,
        } => {
            assert_eq!(thread, Hash(0xCCCC));
            assert_eq!(lock, Hash(0x3333));
            assert_eq!(mode, LockMode::Write);
            assert_eq!(stack.depth(), 1);
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(rec.event.kind(), EventKind::LockHeldAtStart);
    assert!(!EventKind::LockHeldAtStart.is_summary());
    assert!(parse_event_line(b"5087.2,LockHeldAtStart,0000CCCC,00003333,X,0").is_err());

    let r = run(&replace_line(EVENTS, 13, line));
    assert!(r.is_valid(), "{:#?}", r.violations);
    let both = replace_line(
        EVENTS,
        13,
        &format!("{line}\n5087.202000150,LockRelease,0000CCCC,00003333,W,1;00000002;00000000"),
    );
    assert_eq!(
        run(&both).error_lines(),
        ["t.orca:14: unbalanced LockRelease: thread 0000CCCC does not hold lock 00003333 in mode W (no matching LockAcquired)"]
    );
}

/// Sampled hold timing (`LockHoldsUntimed`): the line parses into its fields, counts as a
/// summary key, and counts the `LockHold` lines its flush's `LockHolds` line cannot (holds not
/// timed), at most `<count>`; a `LockHold` that neither counts is an error at that `LockHolds`.
#[test]
fn untimed_lock_holds_count_the_long_holds_their_timed_line_cannot() {
    let untimed = "5087.201000200,LockHoldsUntimed,0000AAAA,00002222,W,5,1;00000001;00000010";
    let rec = parse_event_line(untimed.as_bytes()).unwrap();
    match rec.event {
        Event::LockHoldsUntimed {
            thread,
            lock,
            mode,
            count,
            site,
        } => {
            assert_eq!(
                (thread, lock, mode, count),
                (Hash(0xAAAA), Hash(0x2222), LockMode::Write, 5)
            );
            assert_eq!(site.top().unwrap().location, 0x10);
        }
        e => panic!("{e:?}"),
    }
    assert!(EventKind::LockHoldsUntimed.is_summary());
    assert_eq!(
        EventKind::from_name(b"LockHoldsUntimed"),
        Some(EventKind::LockHoldsUntimed)
    );
    assert!(EventKind::ALL.contains(&EventKind::LockHoldsUntimed));
    let insert = |text: &str, at: usize, extra: &[&str]| -> String {
        text.lines()
            .enumerate()
            .flat_map(|(i, l)| {
                let mut v = vec![l];
                if i == at {
                    v.extend_from_slice(extra);
                }
                v
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    // A 30 ms hold the LockHolds line (max 20 ms) cannot count: not timed, in the flush's
    // LockHoldsUntimed line (line 9, after the LockHolds line 8).
    let long = "5087.201000150,LockHold,0000AAAA,00002222,W,30000000,1;00000001;00000010,0";
    let base = insert(EVENTS, 5, &[long]);
    assert_eq!(
        run(&base).error_lines(),
        ["t.orca:8: LockHolds of thread 0000AAAA, lock 00002222, mode W does not count the 30000000 ns LockHold of line 7 (maxNanos 20000000, histogram 3;317;1;381;1;1228;1), nor does a LockHoldsUntimed line of its flush"]
    );
    let r = run(&insert(&base, 7, &[untimed]));
    assert!(r.is_valid(), "{:?}", r.error_lines());
    // Only by a line of its key, and of the same flush.
    let other_mode = untimed.replace(",W,", ",R,");
    let r = run(&insert(&base, 7, &[&other_mode]));
    assert_eq!(r.error_lines().len(), 1, "{:?}", r.error_lines());
    let next_flush = "5087.202000000,LockHoldsUntimed,0000AAAA,00002222,W,5,1;00000001;00000010";
    let r = run(&insert(&base, 12, &[next_flush]));
    assert_eq!(r.error_lines().len(), 1, "{:?}", r.error_lines());
    // At most its count: two holds the LockHolds line cannot count, an untimed count of 1.
    let long2 = long.replace("30000000", "40000000");
    let one = untimed.replace(",W,5,", ",W,1,");
    let two_long = insert(EVENTS, 5, &[long, &long2]);
    let r = run(&insert(&two_long, 8, &[&one]));
    assert_eq!(r.error_lines().len(), 1, "{:?}", r.error_lines());
    let r = run(&insert(&two_long, 8, &[&untimed.replace(",W,5,", ",W,2,")]));
    assert!(r.is_valid(), "{:?}", r.error_lines());
    // A LockHold with no LockHolds line, only an untimed one (no hold of the key was timed).
    let no_timed = replace_line(
        EVENTS,
        7,
        "5087.201000200,LockHoldsUntimed,0000AAAA,00002222,W,3,1;00000001;00000010",
    );
    let r = run(&no_timed);
    assert!(r.is_valid(), "{:?}", r.error_lines());
    // One line per key and flush, as LockHolds.
    let r = run(&insert(EVENTS, 6, &[untimed, untimed]));
    assert_eq!(r.error_lines().len(), 1, "{:?}", r.error_lines());
    assert!(r.error_lines()[0].contains("a second time in one flush"));
}

/// The agent writes the steps form; a log of an older agent has the pairs form. Both read as
/// the same buckets, and a line is valid in either.
#[test]
fn histograms_read_the_same_in_the_steps_and_the_pairs_form() {
    let line = |h: &str| {
        format!("5087.201000200,LockHolds,0000AAAA,00002222,W,4,20005000,20000000,{h},1;00000001;00000010")
    };
    let buckets = |h: &str| match parse_event_line(line(h).as_bytes()).unwrap().event {
        Event::LockHolds { durations, .. } => {
            assert_eq!(durations.histogram.len(), 3);
            durations.histogram.buckets().collect::<Vec<_>>()
        }
        e => panic!("{e:?}"),
    };
    let want = vec![
        (bucket(1000), 1),
        (bucket(2000), 2),
        (bucket(20_000_000), 1),
    ];
    assert_eq!((317, 381, 1228), (want[0].0, want[1].0, want[2].0));
    assert_eq!(buckets("3;317;1;381;2;1228;1"), want);
    assert_eq!(buckets("3;317;64:2;847"), want);
    // Bucket 0 (a hold shorter than a nanosecond) is a first step of 0.
    match parse_event_line(
        b"1.000000000,MonitorHolds,0000AAAA,00001111,3,2,1,2;0:2;1,1;00000001;00000010",
    )
    .unwrap()
    .event
    {
        Event::MonitorHolds { durations, .. } => assert_eq!(
            durations.histogram.buckets().collect::<Vec<_>>(),
            vec![(0, 2), (1, 1)]
        ),
        e => panic!("{e:?}"),
    }
}
