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

use orca_tests::JUC_KINDS as KINDS;

type Key = (String, u32, Option<char>);

/// The line of the event's first frame in JucLocks (the call site in the program, whatever
/// JDK frames are above it: `countDown` unparks from inside the synchronizer).
fn program_line(log: &Log, e: &Event) -> Option<u32> {
    line_in(log, e, "JucLocks.")
}

/// The line of the event's first frame in the methods of a class (`prefix`: `Class.`).
fn line_in(log: &Log, e: &Event, prefix: &str) -> Option<u32> {
    e.frames
        .iter()
        .find(|(m, _)| log.method_name(*m).starts_with(prefix))
        .and_then(|(m, l)| log.line_of(*m, *l))
}

/// The events JucLocks.java's lines made, counted by (event, line, mode).
fn counts_by_line(log: &Log) -> BTreeMap<Key, usize> {
    let mut all = counts_in(log, "JucLocks.");
    all.retain(|k, _| k.0 != "LockHolds");
    all
}

/// The j.u.c. events of a class's lines, counted by (event, line, mode), and its `LockHolds`
/// counts as `("LockHolds", line of the site, mode)`.
fn counts_in(log: &Log, prefix: &str) -> BTreeMap<Key, usize> {
    let mut out = BTreeMap::new();
    for e in &log.events {
        if e.name == "LockHolds" {
            if let Some(&(m, l)) = e.frames.first() {
                if log.method_name(m).starts_with(prefix) {
                    let line = log.line_of(m, l).unwrap_or(0);
                    let n = e.numbers[0] as usize;
                    *out.entry((e.name.clone(), line, e.mode)).or_insert(0) += n;
                }
            }
            continue;
        }
        if !KINDS.contains(&e.name.as_str()) {
            continue;
        }
        if let Some(line) = line_in(log, e, prefix) {
            *out.entry((e.name.clone(), line, e.mode)).or_insert(0) += 1;
        }
    }
    out
}

/// What the default (summarised) log of a program must count, from what its complete trace
/// must: a `LockHolds` count per acquisition line and mode equal to the `LockAcquired` lines
/// there, the failed, timed-out and interrupted acquisitions with their `LockAcquire`, every
/// condition and park line; no `LockRelease`. Successful acquisitions may come with a
/// `LockAcquire`/`LockAcquired` pair of their own when they were contended (timing), which
/// [`default_part`] sets aside.
/// `reentrant`: the lines of reentrant acquisitions (inside a hold of the same lock and mode by
/// the same thread: no hold of their own).
fn default_expected(full: &BTreeMap<Key, usize>, reentrant: &[u32]) -> BTreeMap<Key, usize> {
    let mut want = BTreeMap::new();
    for ((name, line, mode), n) in full {
        match name.as_str() {
            "LockAcquired" if reentrant.contains(line) => {}
            "LockAcquired" => {
                *want.entry(("LockHolds".into(), *line, *mode)).or_insert(0) += n;
            }
            "LockRelease" | "LockAcquire" => {}
            "LockFailed" | "LockTimedOut" | "LockInterrupted" => {
                *want.entry((name.clone(), *line, *mode)).or_insert(0) += n;
                *want
                    .entry(("LockAcquire".into(), *line, *mode))
                    .or_insert(0) += n;
            }
            _ => *want.entry((name.clone(), *line, *mode)).or_insert(0) += n,
        }
    }
    want
}

/// A default log's counts less the contended acquisitions' own lines (a `LockAcquired` and
/// its `LockAcquire` at the same line: as many as the contention the run happened to have),
/// after checking they are no more than the holds there.
fn default_part(got: &BTreeMap<Key, usize>, label: &str) -> BTreeMap<Key, usize> {
    let mut out = got.clone();
    for ((name, line, mode), n) in got {
        if name != "LockAcquired" {
            continue;
        }
        let holds = got
            .get(&("LockHolds".into(), *line, *mode))
            .copied()
            .unwrap_or(0);
        assert!(
            *n <= holds,
            "{label}: {n} contended of {holds} at line {line}"
        );
        out.remove(&(name.clone(), *line, *mode));
        let acquire = ("LockAcquire".to_string(), *line, *mode);
        let left = out.get(&acquire).copied().unwrap_or(0).checked_sub(*n);
        let left = left.unwrap_or_else(|| panic!("{label}: LockAcquired without LockAcquire"));
        if left == 0 {
            out.remove(&acquire);
        } else {
            out.insert(acquire, left);
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

/// A test-name part for a mode (`instrument-all` for the complete trace).
fn name(mode: &str) -> String {
    if mode.contains("trace=all") {
        format!("{}-all", tag(mode))
    } else {
        tag(mode).to_string()
    }
}

/// The modes that write every j.u.c. line: JVMTI mode and instrumentation mode's complete
/// trace. (Instrumentation mode's default summarises lock holds: [`DEFAULT`].)
const JUC_MODES: [&str; 2] = ["mode=jvmti", INSTRUMENT];
/// Instrumentation mode with its defaults.
const DEFAULT: &str = "mode=instrument";

fn run_juc(test: &str, jdk: &Jdk, mode: &str) -> Run {
    let args = [THREADS, PAIRS, READERS, READS, WRITES].map(|n| n.to_string());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let jvm: &[&str] = if mode == "mode=jvmti" {
        &[]
    } else {
        VERIFY_ALL
    };
    run_with(test, jdk, mode, jvm, "JucLocks", &args)
}

/// j.u.c. locks are recorded by default; `juc=no` leaves every one of their lines out in both
/// modes, and the program runs the same.
#[test]
fn juc_locks_are_left_out_with_juc_no() {
    let args = [THREADS, PAIRS, READERS, READS, WRITES].map(|n| n.to_string());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    for jdk in jdks() {
        for mode in ["mode=jvmti", "mode=instrument"] {
            let run = run_with(
                &format!("juc-off-{}", tag(mode)),
                jdk,
                &format!("{mode},juc=no"),
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
            assert_eq!(juc, 0, "{} {mode}: j.u.c. lines with juc=no", jdk.label());
            assert!(
                run.stdout
                    .contains(&format!("juc done {} true", THREADS * PAIRS + WRITES)),
                "{}",
                run.stdout
            );
            // The same program by default does write them (the filter above can match).
            let with = run_juc(&format!("juc-on-{}", tag(mode)), jdk, mode);
            let text = std::fs::read_to_string(format!("{}.orca", with.prefix.display())).unwrap();
            let line = if mode == DEFAULT {
                ",LockHolds,"
            } else {
                ",LockAcquired,"
            };
            assert!(text.contains(line), "{} {mode}", jdk.label());
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
        for mode in JUC_MODES.into_iter().chain([DEFAULT]) {
            let run = run_juc(&format!("juc-stack-{}", name(mode)), jdk, mode);
            assert_eq!(trace(&run.stdout), plain, "{} {mode}", jdk.label());
        }
    }
}

/// Instrumentation mode's default: j.u.c. lock holds are counted per site exactly as the
/// complete trace acquires them, and full lines are written only for what needs one
/// (contended, failed, timed-out, interrupted acquisitions, conditions, parks), with the same
/// counts on every line as the complete trace has; never a `LockRelease`.
#[test]
fn the_default_summarises_juc_holds_per_site() {
    let inner = marker_line("JucLocks.java", "reentrant-inner");
    let want = default_expected(&expected(), &[inner]);
    for jdk in jdks() {
        // waitthreshold=0: the condition and park lines are compared one for one with the
        // complete trace's, whatever their length (summary.rs tests the threshold).
        let run = run_juc("juc-default", jdk, &format!("{DEFAULT},waitthreshold=0"));
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        let log = run.log();
        assert_valid(&run, &log);
        assert!(
            !log.events.iter().any(|e| e.name == "LockRelease"),
            "{}: a LockRelease by default",
            jdk.label()
        );
        let marked: Vec<u32> = want.keys().map(|k| k.1).collect();
        let got: BTreeMap<Key, usize> = counts_in(&log, "JucLocks.")
            .into_iter()
            .filter(|(k, _)| marked.contains(&k.1))
            .collect();
        let label = format!("{} default", jdk.label());
        assert_eq!(default_part(&got, &label), want, "{label}");
        // The failed acquisitions name the holder, as in the complete trace.
        let hashes = printed(&run.stdout);
        let h = |w: &str| *hashes.get(w).unwrap_or_else(|| panic!("{w} not printed"));
        for marker in ["try-fails", "try-times-out"] {
            assert_eq!(
                at(&log, "LockAcquire", marker).owner,
                Some(h("holder")),
                "{marker}"
            );
        }
    }
}

/// A program's j.u.c. counts per marked line and mode, exactly, in JVMTI mode and the
/// complete trace (the same multiset), and per site by the default's summaries; `stdout` its
/// output.
fn exact_counts(main: &str, args: &[&str], full: &BTreeMap<Key, usize>, stdout: &str) {
    let marked: Vec<u32> = full.keys().map(|k| k.1).collect();
    // the program's classes, nested ones (`Main$Lock`) included
    let prefix = main.to_string();
    for jdk in jdks() {
        for mode in JUC_MODES.into_iter().chain([DEFAULT]) {
            let jvm: &[&str] = if mode == "mode=jvmti" {
                &[]
            } else {
                VERIFY_ALL
            };
            let test = format!("juc-{}-{}", main.to_lowercase(), name(mode));
            let run = run_with(&test, jdk, mode, jvm, main, args);
            let label = format!("{main} {} {mode}", jdk.label());
            assert_eq!(run.code, Some(0), "{label}: {}", run.stderr);
            assert_eq!(run.stdout.trim(), stdout, "{label}");
            let log = run.log();
            assert_valid(&run, &log);
            let got: BTreeMap<Key, usize> = counts_in(&log, &prefix)
                .into_iter()
                .filter(|(k, _)| marked.contains(&k.1))
                .collect();
            if mode == DEFAULT {
                assert_eq!(
                    default_part(&got, &label),
                    default_expected(full, &[]),
                    "{label}"
                );
            } else {
                let events: BTreeMap<Key, usize> = got
                    .into_iter()
                    .filter(|(k, _)| k.0 != "LockHolds")
                    .collect();
                assert_eq!(&events, full, "{label}");
            }
        }
    }
}

/// A program's own AQS lock whose `tryRelease` contends for a monitor after it has let the
/// lock go, while another thread takes and releases the lock (tests/java/JucAqsRelease.java):
/// the first release is stamped before that acquisition (the log is valid: no two owners at
/// once), and each line is counted once. The interleaving is forced by the program.
#[test]
fn a_contention_inside_unlock_after_the_release_keeps_one_owner_at_a_time() {
    let mut e = Expect {
        file: "JucAqsRelease.java",
        counts: BTreeMap::new(),
    };
    e.held("releaser-lock", "releaser-unlock", 'W', 1);
    e.held("taker-lock", "taker-unlock", 'W', 1);
    exact_counts("JucAqsRelease", &[], &e.counts, "release done true");
}

/// Expected counts of a program's marked lines, built up call by call.
struct Expect {
    file: &'static str,
    counts: BTreeMap<Key, usize>,
}

impl Expect {
    fn add(&mut self, name: &str, marker: &str, mode: char, n: usize) {
        let key = (name.to_string(), marker_line(self.file, marker), Some(mode));
        *self.counts.entry(key).or_insert(0) += n;
    }

    /// `n` acquisitions at `lock` that took the lock, and their releases at `unlock`.
    fn held(&mut self, lock: &str, unlock: &str, mode: char, n: usize) {
        self.add("LockAcquire", lock, mode, n);
        self.add("LockAcquired", lock, mode, n);
        self.add("LockRelease", unlock, mode, n);
    }
}

/// StampedLock (tests/java/JucStamped.java): its write and read locks with every way to take
/// and release them, and its Lock views.
#[test]
fn stamped_locks_exact_counts_in_both_modes() {
    const T: usize = 3;
    const N: usize = 20;
    let mut e = Expect {
        file: "JucStamped.java",
        counts: BTreeMap::new(),
    };
    e.held("write-lock", "write-unlock", 'W', T * N);
    e.held("read-lock", "read-unlock", 'R', T * N);
    e.held("write-intr", "unlock-stamp", 'W', 1);
    e.held("read-intr", "unlock-stamp-read", 'R', 1);
    e.held("try-write", "try-unlock-write", 'W', 1);
    e.held("try-read-timed", "try-unlock-read", 'R', 1);
    e.held("view-write-lock", "view-write-unlock", 'W', 1);
    e.held("view-read-lock", "view-read-unlock", 'R', 1);
    e.held("holder-lock", "holder-unlock", 'W', 1);
    e.add("LockAcquire", "try-read-fails", 'R', 1);
    e.add("LockFailed", "try-read-fails", 'R', 1);
    e.add("LockAcquire", "try-write-times-out", 'W', 1);
    e.add("LockTimedOut", "try-write-times-out", 'W', 1);
    let (t, n) = (T.to_string(), N.to_string());
    let done = format!("stamped done {} true true 0 0", T * N);
    exact_counts("JucStamped", &[&t, &n], &e.counts, &done);
}

/// A program's own Lock built on AbstractQueuedSynchronizer (tests/java/JucAqs.java): its
/// exclusive acquire, acquireInterruptibly, timed tryAcquireNanos and release, at the lines of
/// the lock's methods that call them; a CountDownLatch (shared) is no lock.
#[test]
fn a_programs_own_aqs_lock_exact_counts_in_both_modes() {
    const T: usize = 3;
    const N: usize = 30;
    let mut e = Expect {
        file: "JucAqs.java",
        counts: BTreeMap::new(),
    };
    // the threads' pairs and the holder's lock; every release (also after the two below)
    e.add("LockAcquire", "mutex-lock", 'W', T * N + 1);
    e.add("LockAcquired", "mutex-lock", 'W', T * N + 1);
    e.add("LockRelease", "mutex-unlock", 'W', T * N + 3);
    // a timed tryLock that took it, one that timed out
    e.add("LockAcquire", "mutex-try-timed", 'W', 2);
    e.add("LockAcquired", "mutex-try-timed", 'W', 1);
    e.add("LockTimedOut", "mutex-try-timed", 'W', 1);
    // lockInterruptibly: main's took it, the victim's was interrupted
    e.add("LockAcquire", "mutex-lock-intr", 'W', 2);
    e.add("LockAcquired", "mutex-lock-intr", 'W', 1);
    e.add("LockInterrupted", "mutex-lock-intr", 'W', 1);
    let (t, n) = (T.to_string(), N.to_string());
    let done = format!("aqs done {} true true", T * N);
    exact_counts("JucAqs", &[&t, &n], &e.counts, &done);
}
