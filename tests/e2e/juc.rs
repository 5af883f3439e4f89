//! java.util.concurrent locks, conditions and parks (docs/FORMAT.md, "`java.util.concurrent`
//! lock events"): exact counts per line and mode of a program whose counts do not depend on
//! timing, the owners and objects the program prints, the same multiset of events from JVMTI
//! mode and instrumentation mode (hooked JDK methods, with and without trace=all), on every
//! JDK found.

use std::collections::{BTreeMap, HashMap};

use orca_tests::*;

/// tests/java/JucLocks.java's arguments: threads, lock/unlock pairs per thread, readers, reads
/// per reader, writes.
const THREADS: usize = 3;
const PAIRS: usize = 50;
const READERS: usize = 2;
const READS: usize = 10;
const WRITES: usize = 7;

const KINDS: [&str; 13] = [
    "LockAcquire",
    "LockAcquired",
    "LockFailed",
    "LockTimedOut",
    "LockInterrupted",
    "LockRelease",
    "ConditionAwait",
    "ConditionAwaited",
    "ConditionSignal",
    "ConditionSignalAll",
    "ThreadPark",
    "ThreadParked",
    "ThreadUnpark",
];

type Key = (String, u32, Option<char>);

/// The line of the event's first frame in JucLocks (the call site in the program, whatever
/// JDK frames are above it: `countDown` unparks from inside the synchronizer).
fn program_line(log: &Log, e: &Event) -> Option<u32> {
    e.frames
        .iter()
        .find(|(m, _)| log.method_name(*m).starts_with("JucLocks."))
        .and_then(|(m, l)| log.line_of(*m, *l))
}

/// The events JucLocks.java's lines made, counted by (event, line, mode).
fn counts_by_line(log: &Log) -> BTreeMap<Key, usize> {
    let mut out = BTreeMap::new();
    for e in &log.events {
        if !KINDS.contains(&e.name.as_str()) {
            continue;
        }
        if let Some(line) = program_line(log, e) {
            *out.entry((e.name.clone(), line, e.mode)).or_insert(0) += 1;
        }
    }
    out
}

/// What the program must produce, computed from its constants and control flow.
fn expected() -> BTreeMap<Key, usize> {
    let mut want = BTreeMap::new();
    let mut add = |name: &str, marker: &str, mode: Option<char>, n: usize| {
        let key = (name.to_string(), marker_line("JucLocks.java", marker), mode);
        *want.entry(key).or_insert(0) += n;
    };
    let w = Some('W');
    let r = Some('R');
    // A successful acquisition and its release, n times.
    let mut held = |lock: &str, unlock: &str, mode: Option<char>, n: usize| {
        add("LockAcquire", lock, mode, n);
        add("LockAcquired", lock, mode, n);
        add("LockRelease", unlock, mode, n);
    };
    held("pairs-lock", "pairs-unlock", w, THREADS * PAIRS);
    held("reentrant-outer", "reentrant-outer-unlock", w, 1);
    held("reentrant-inner", "reentrant-inner-unlock", w, 1);
    held("holder-lock", "holder-unlock", w, 1);
    held("try-succeeds", "try-unlock", w, 1);
    held("intr-main-lock", "intr-main-unlock", w, 1);
    held("read-lock", "read-unlock", r, READERS * READS);
    held("write-lock", "write-unlock", w, WRITES);
    held("downgrade-write", "downgrade-write-unlock", w, 1);
    held("downgrade-read", "downgrade-read-unlock", r, 1);
    held("cond-consumer-lock", "cond-consumer-unlock", w, 1);
    held("cond-producer-lock", "cond-producer-unlock", w, 1);
    held("all-consumer-lock", "all-consumer-unlock", w, 2);
    held("all-producer-lock", "all-producer-unlock", w, 1);
    held("trace-lock", "trace-unlock", w, 1);
    add("LockAcquire", "try-fails", w, 1);
    add("LockFailed", "try-fails", w, 1);
    add("LockAcquire", "try-times-out", w, 1);
    add("LockTimedOut", "try-times-out", w, 1);
    add("LockAcquire", "intr-victim", w, 1);
    add("LockInterrupted", "intr-victim", w, 1);
    add("ConditionAwait", "cond-await", None, 1);
    add("ConditionAwaited", "cond-await", None, 1);
    add("ConditionSignal", "cond-signal", None, 1);
    add("ConditionAwait", "all-await", None, 2);
    add("ConditionAwaited", "all-await", None, 2);
    add("ConditionSignalAll", "all-signal", None, 1);
    add("ThreadPark", "latch-await", None, 1);
    add("ThreadParked", "latch-await", None, 1);
    add("ThreadUnpark", "latch-countdown", None, 1);
    add("ThreadPark", "park", None, 1);
    add("ThreadParked", "park", None, 1);
    add("ThreadUnpark", "unpark", None, 1);
    want
}

/// `<word> <hash>` pairs the program printed (`main 1AFFBEBC`, `blocker 74938D86`).
fn printed(stdout: &str) -> HashMap<String, u32> {
    let mut out = HashMap::new();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        for pair in words.windows(2) {
            if pair[1].len() == 8 {
                if let Ok(h) = u32::from_str_radix(pair[1], 16) {
                    out.insert(pair[0].to_string(), h);
                }
            }
        }
    }
    out
}

/// Both modes; instrumentation mode with its default summaries and with the complete trace
/// (j.u.c. lines are complete in both: they have no summaries yet).
const JUC_MODES: [&str; 3] = ["mode=jvmti", INSTRUMENT, "mode=instrument"];

fn run_juc(test: &str, jdk: &Jdk, mode: &str) -> Run {
    let args = [THREADS, PAIRS, READERS, READS, WRITES].map(|n| n.to_string());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let jvm: &[&str] = if mode == "mode=jvmti" {
        &[]
    } else {
        VERIFY_ALL
    };
    run_with(
        test,
        jdk,
        &format!("{mode},juc=yes"),
        jvm,
        "JucLocks",
        &args,
    )
}

/// j.u.c. locks are recorded with `juc=yes` only (README: their lines have no summaries yet):
/// without it neither mode writes one of their lines, and the program runs the same.
#[test]
fn juc_locks_are_recorded_only_with_the_option() {
    let args = [THREADS, PAIRS, READERS, READS, WRITES].map(|n| n.to_string());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    for jdk in jdks() {
        for mode in ["mode=jvmti", "mode=instrument"] {
            let run = run_with(
                &format!("juc-off-{}", tag(mode)),
                jdk,
                mode,
                &[],
                "JucLocks",
                &args,
            );
            assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
            let log = run.log();
            assert_valid(&run, &log);
            let text = std::fs::read_to_string(format!("{}.orca", run.prefix.display())).unwrap();
            let juc = text
                .lines()
                .filter(|l| {
                    let kind = l.split(',').nth(1).unwrap_or("");
                    kind.starts_with("Lock") && kind != "LockOrder"
                        || kind.starts_with("Condition")
                        || kind.starts_with("ThreadPark")
                        || kind == "ThreadUnpark"
                })
                .count();
            assert_eq!(
                juc,
                0,
                "{} {mode}: j.u.c. lines without juc=yes",
                jdk.label()
            );
            // The same program with the option does write them (the filter above can match).
            let with = run_juc(&format!("juc-on-{}", tag(mode)), jdk, mode);
            let text = std::fs::read_to_string(format!("{}.orca", with.prefix.display())).unwrap();
            assert!(text.contains(",LockAcquired,"), "{} {mode}", jdk.label());
        }
    }
}

/// The first event of `name` made at `marker`'s line.
fn at<'a>(log: &'a Log, name: &str, marker: &str) -> &'a Event {
    let line = marker_line("JucLocks.java", marker);
    log.events
        .iter()
        .find(|e| e.name == name && program_line(log, e) == Some(line))
        .unwrap_or_else(|| panic!("no {name} at @{marker} (line {line})"))
}

#[test]
fn juc_locks_exact_counts_owners_and_objects_in_both_modes() {
    let mut multisets: Vec<(String, BTreeMap<Key, usize>)> = Vec::new();
    for (jdk, mode) in jdks()
        .iter()
        .flat_map(|j| JUC_MODES.iter().map(move |m| (j, *m)))
    {
        let trace = if mode.contains("trace=all") {
            "-all"
        } else {
            ""
        };
        let run = run_juc(&format!("juc-{}{trace}", tag(mode)), jdk, mode);
        eprintln!("juc: {} {mode}", jdk.label());
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        assert!(
            run.stdout
                .contains(&format!("juc done {} true", THREADS * PAIRS + WRITES)),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains(" false false true"), "{}", run.stdout);
        let log = run.log();
        assert_valid(&run, &log);

        // Counts per (event, line, mode) on every line the program marks, nothing else there.
        let want = expected();
        let marked: Vec<u32> = want.keys().map(|k| k.1).collect();
        let all = counts_by_line(&log);
        let got: BTreeMap<Key, usize> = all
            .clone()
            .into_iter()
            .filter(|(k, _)| marked.contains(&k.1))
            .collect();
        assert_eq!(got, want, "{} {mode}", jdk.label());
        multisets.push((format!("{} {mode}", jdk.label()), all));
        // The first frame is the caller of the j.u.c. method (the program's line), except
        // where the JDK calls it for the program (the latch's park and unpark).
        let latch = [
            marker_line("JucLocks.java", "latch-await"),
            marker_line("JucLocks.java", "latch-countdown"),
        ];
        for e in log
            .events
            .iter()
            .filter(|e| KINDS.contains(&e.name.as_str()))
        {
            if let Some(line) = program_line(&log, e) {
                if marked.contains(&line) && !latch.contains(&line) {
                    let top = e.frames[0];
                    assert!(
                        log.method_name(top.0).starts_with("JucLocks.")
                            && log.line_of(top.0, top.1) == Some(line),
                        "{} {mode}: {} line {}: top frame {}",
                        jdk.label(),
                        e.name,
                        e.line,
                        log.top_frame(e).unwrap_or_default()
                    );
                }
            }
        }

        let hashes = printed(&run.stdout);
        let h = |w: &str| *hashes.get(w).unwrap_or_else(|| panic!("{w} not printed"));
        // Owners: none for a free lock, the thread itself when reentrant, the holder else.
        assert_eq!(at(&log, "LockAcquire", "reentrant-outer").owner, Some(0));
        assert_eq!(
            at(&log, "LockAcquire", "reentrant-inner").owner,
            Some(h("main"))
        );
        assert_eq!(
            at(&log, "LockAcquire", "try-fails").owner,
            Some(h("holder"))
        );
        assert_eq!(
            at(&log, "LockAcquire", "try-times-out").owner,
            Some(h("holder"))
        );
        assert_eq!(
            at(&log, "LockAcquire", "intr-victim").owner,
            Some(h("main"))
        );
        // The read view taken under the write view: the exclusive owner is the thread itself.
        assert_eq!(
            at(&log, "LockAcquire", "downgrade-read").owner,
            Some(h("main"))
        );
        // The timed tryLock waited its 10 ms.
        let (a, t) = (
            at(&log, "LockAcquire", "try-times-out"),
            at(&log, "LockTimedOut", "try-times-out"),
        );
        assert!(t.nanos - a.nanos >= 9_000_000, "{} ns", t.nanos - a.nanos);
        // The two views of one read-write lock are one lock; other locks are others.
        let read = at(&log, "LockAcquired", "read-lock").object;
        assert_eq!(read, at(&log, "LockAcquired", "write-lock").object);
        assert_eq!(
            read,
            at(&log, "LockRelease", "downgrade-write-unlock").object
        );
        assert_ne!(read, at(&log, "LockAcquired", "pairs-lock").object);
        // A condition names itself and the lock that made it.
        let await_ = at(&log, "ConditionAwait", "cond-await");
        assert_eq!(await_.object, Some(h("condition")));
        assert_eq!(
            await_.owner,
            at(&log, "LockAcquired", "cond-consumer-lock").object
        );
        assert_eq!(
            at(&log, "ConditionSignal", "cond-signal").object,
            Some(h("condition"))
        );
        // Parks name their blocker, unparks the thread they wake.
        let park = at(&log, "ThreadPark", "park");
        assert_eq!(park.object, Some(h("blocker")));
        assert_eq!(park.thread, h("parker"));
        assert_eq!(at(&log, "ThreadParked", "park").object, Some(h("blocker")));
        assert_eq!(at(&log, "ThreadUnpark", "unpark").object, Some(h("parker")));
        let latch = at(&log, "ThreadPark", "latch-await");
        assert_eq!(latch.thread, h("latch-waiter"));
        assert_ne!(
            latch.object,
            Some(0),
            "the latch's synchronizer is the blocker"
        );
        assert_eq!(
            at(&log, "ThreadUnpark", "latch-countdown").object,
            Some(h("latch-waiter"))
        );
        // A release is stamped before the lock is free and an acquisition after it is
        // taken, so in time order the contended pairs lock never has two holders.
        let pairs = at(&log, "LockAcquired", "pairs-lock").object;
        let mut holds: Vec<(u64, bool, u32)> = log
            .events
            .iter()
            .filter(|e| e.object == pairs)
            .filter(|e| e.name == "LockAcquired" || e.name == "LockRelease")
            .map(|e| (e.nanos, e.name == "LockAcquired", e.thread))
            .collect();
        holds.sort();
        assert_eq!(holds.len(), 2 * THREADS * PAIRS);
        let mut holder = None;
        for (nanos, acquired, thread) in holds {
            if acquired {
                assert_eq!(holder, None, "{}: two holders at {nanos}", jdk.label());
                holder = Some(thread);
            } else {
                assert_eq!(holder, Some(thread), "{}: release at {nanos}", jdk.label());
                holder = None;
            }
        }
    }
    assert_same_multisets(&multisets);
}

/// The multisets per (event, program line, mode) of one JDK's runs in the modes, equal.
fn assert_same_multisets(multisets: &[(String, BTreeMap<Key, usize>)]) {
    for jdk in jdks() {
        let runs: Vec<&(String, BTreeMap<Key, usize>)> = multisets
            .iter()
            .filter(|(label, _)| label.split(' ').next() == Some(jdk.label().as_str()))
            .collect();
        assert_eq!(runs.len(), JUC_MODES.len());
        for r in &runs[1..] {
            assert_eq!(r.1, runs[0].1, "{} differs from {}", r.0, runs[0].0);
        }
    }
}

#[test]
fn stack_traces_inside_a_held_reentrant_lock_are_unchanged() {
    let trace = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("java.lang.Throwable") || l.starts_with("\tat "))
            .map(str::to_string)
            .collect()
    };
    for jdk in jdks() {
        let args = [THREADS, PAIRS, READERS, READS, WRITES].map(|n| n.to_string());
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let plain = run_plain(jdk, "JucLocks", &args);
        let plain = trace(&String::from_utf8_lossy(&plain.stdout));
        assert!(plain.len() >= 3, "{plain:?}");
        for mode in JUC_MODES {
            let run = run_juc(&format!("juc-trace-{}", tag(mode)), jdk, mode);
            assert_eq!(trace(&run.stdout), plain, "{} {mode}", jdk.label());
        }
    }
}
