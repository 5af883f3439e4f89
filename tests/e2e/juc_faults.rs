//! java.util.concurrent locks when things go wrong: exceptions thrown inside held locks and
//! unlocks that throw (tests/java/JucExceptions.java), interrupted acquisitions and awaits
//! (JucInterrupts.java), a StackOverflowError inside a recursion of held ReentrantLocks
//! (JucOverflow.java), and virtual threads, which park where a platform thread blocks
//! (tests/java21/JucVThreads.java, JDK 21+).
//!
//! Each program runs without the agent and under it with `juc=yes` in instrumentation mode
//! (its default summaries, and `trace=all`, both with every class verified) and in JVMTI mode,
//! on every JDK found. Every run must leave the program as it was: the same exit code and the
//! same stdout, byte for byte, which holds the stack traces of every exception the program
//! caught; and a log the strict validator accepts. Where the full j.u.c. lines are written
//! (`trace=all` and JVMTI mode) the counts per (event, marked source line, mode) are exact.
//! The default summary mode is about to change how j.u.c. locks are written, so only the
//! validity of its log and the program's behaviour are checked there.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::{Command, Output};

use orca_tests::*;

/// The agent options each program runs with (besides the run without the agent).
const JUC_MODES: [&str; 3] = [
    "mode=instrument,juc=yes",
    "mode=instrument,juc=yes,trace=all",
    "mode=jvmti,juc=yes",
];

use orca_tests::JUC_KINDS as KINDS;

/// Whether `mode` writes every j.u.c. line (so that counts are exact).
fn complete(mode: &str) -> bool {
    mode.starts_with("mode=jvmti") || mode.contains("trace=all")
}

fn jvmti(mode: &str) -> bool {
    mode.starts_with("mode=jvmti")
}

/// A short name of a mode for output folders and messages.
fn short(mode: &str) -> &'static str {
    if jvmti(mode) {
        "jvmti"
    } else if mode.contains("trace=all") {
        "all"
    } else {
        "summary"
    }
}

/// One test program: its main class, source file (for its markers), class folder, JVM flags
/// and arguments.
struct Program {
    main: &'static str,
    source: PathBuf,
    classes: PathBuf,
    jvm: Vec<&'static str>,
    args: Vec<String>,
}

impl Program {
    /// A program of tests/java, compiled with the others.
    fn new(main: &'static str, jvm: &[&'static str], args: &[&str]) -> Program {
        Program {
            main,
            source: root().join("tests/java").join(format!("{main}.java")),
            classes: test_classes().to_path_buf(),
            jvm: jvm.to_vec(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The line of the source that carries `// @<marker>` (as `marker_line`, for any folder).
    fn line(&self, marker: &str) -> u32 {
        let src = std::fs::read_to_string(&self.source).expect("read test source");
        let tag = format!("// @{marker}");
        let hits: Vec<usize> = src
            .lines()
            .enumerate()
            .filter(|(_, l)| {
                l.find(&tag).is_some_and(|i| {
                    !l[i + tag.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '-')
                })
            })
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(hits.len(), 1, "marker {tag} in {}: {hits:?}", self.main);
        hits[0] as u32
    }

    fn command(&self, jdk: &Jdk, agent: Option<&str>) -> Command {
        let mut c = Command::new(jdk.java());
        if let Some(options) = agent {
            c.arg(format!("-agentpath:{}={options}", agent_path().display()));
            if !jvmti(options) {
                c.args(VERIFY_ALL);
            }
        }
        c.args(&self.jvm)
            .arg("-cp")
            .arg(&self.classes)
            .arg(self.main)
            .args(&self.args);
        c
    }

    /// The run without the agent.
    fn plain(&self, jdk: &Jdk) -> Output {
        output_with_timeout(self.command(jdk, None), 120)
    }

    /// The run under the agent with `mode`, in a folder of its own (per arguments too: tests
    /// run in parallel).
    fn run(&self, jdk: &Jdk, mode: &str) -> Run {
        let mut name = format!("jucfaults-{}", self.main);
        for a in &self.args {
            name.push('-');
            name.push_str(a);
        }
        let prefix = prefix_for(&format!("{name}-{}", short(mode)), jdk);
        let options = format!("{},{mode}", prefix.display());
        finish(
            prefix,
            output_with_timeout(self.command(jdk, Some(&options)), 300),
        )
    }

    /// The line in this program of an event's first frame of the program's own (its call site,
    /// whatever JDK frames are above it).
    fn line_of(&self, log: &Log, e: &Event) -> Option<u32> {
        let class = format!("{}.", self.main);
        e.frames
            .iter()
            .find(|(m, _)| log.method_name(*m).starts_with(&class))
            .and_then(|(m, l)| log.line_of(*m, *l))
    }

    /// The j.u.c. events this program's marked lines made.
    fn events_at<'a>(&self, log: &'a Log, marker: &str, kind: &str) -> Vec<&'a Event> {
        let line = self.line(marker);
        log.events
            .iter()
            .filter(|e| e.name == kind && self.line_of(log, e) == Some(line))
            .collect()
    }
}

type Key = (String, u32, Option<char>);

/// The exact j.u.c. events a program's marked lines must make.
struct Want<'p> {
    program: &'p Program,
    counts: BTreeMap<Key, usize>,
    /// Every line checked: those with expected events and those that must have none.
    lines: BTreeSet<u32>,
}

impl<'p> Want<'p> {
    fn new(program: &'p Program) -> Want<'p> {
        Want {
            program,
            counts: BTreeMap::new(),
            lines: BTreeSet::new(),
        }
    }

    fn add(&mut self, kind: &str, marker: &str, mode: Option<char>, n: usize) {
        assert!(KINDS.contains(&kind) && n > 0, "{kind} {n}");
        let line = self.program.line(marker);
        self.lines.insert(line);
        *self
            .counts
            .entry((kind.to_string(), line, mode))
            .or_insert(0) += n;
    }

    /// `n` acquisitions at `lock` that took the lock and their releases at `unlock`.
    fn held(&mut self, lock: &str, unlock: &str, mode: char, n: usize) {
        self.add("LockAcquire", lock, Some(mode), n);
        self.add("LockAcquired", lock, Some(mode), n);
        self.add("LockRelease", unlock, Some(mode), n);
    }

    /// A line that must make no j.u.c. event.
    fn none(&mut self, marker: &str) {
        self.lines.insert(self.program.line(marker));
    }

    /// Asserts the counts on the checked lines are exactly these, and that every event
    /// counted there has the program's line as its first frame (the tracked method's caller).
    fn check(&self, ctx: &str, log: &Log) {
        let mut got: BTreeMap<Key, usize> = BTreeMap::new();
        for e in log
            .events
            .iter()
            .filter(|e| KINDS.contains(&e.name.as_str()))
        {
            let Some(line) = self.program.line_of(log, e) else {
                continue;
            };
            if !self.lines.contains(&line) {
                continue;
            }
            *got.entry((e.name.clone(), line, e.mode)).or_insert(0) += 1;
            let top = e.frames[0];
            assert!(
                log.method_name(top.0)
                    .starts_with(&format!("{}.", self.program.main))
                    && log.line_of(top.0, top.1) == Some(line),
                "{ctx}: {} at .orca line {}: first frame {}",
                e.name,
                e.line,
                log.top_frame(e).unwrap_or_default()
            );
        }
        assert!(!self.counts.is_empty());
        assert_eq!(
            got, self.counts,
            "{ctx}: j.u.c. events per (event, line, mode)"
        );
    }
}

/// Asserts that the run under the agent behaved as the run without it (exit code, stdout byte
/// for byte), that the agent ended normally, and that its log is valid; returns the log.
fn check_run(ctx: &str, run: &Run, plain: &Output) -> Log {
    let ctx = format!("{ctx}: stderr:\n{}", run.stderr);
    assert_eq!(run.code, plain.status.code(), "exit code: {ctx}");
    assert!(
        run.stdout.as_bytes() == plain.stdout.as_slice(),
        "stdout differs from the run without the agent: {ctx}\n--- without the agent:\n{}\n--- with:\n{}",
        String::from_utf8_lossy(&plain.stdout),
        run.stdout
    );
    assert!(
        !run.stderr.contains("internal error") && !run.stderr.contains("# A fatal error"),
        "{ctx}"
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("orca: ") && l.contains("; wrote ")),
        "the agent's exit line is missing: {ctx}"
    );
    let log = run.log();
    assert!(!log.torn, "a torn line: {ctx}");
    assert_valid(run, &log);
    log
}

/// Asserts that every hold of a lock the program took (at a line of its own) was released in
/// the log, per (thread, lock, mode): the programs end with their locks free.
fn assert_balanced(ctx: &str, program: &Program, log: &Log) {
    let ours: BTreeSet<u32> = log
        .events
        .iter()
        .filter(|e| e.name == "LockAcquired" && program.line_of(log, e).is_some())
        .filter_map(|e| e.object)
        .collect();
    assert!(!ours.is_empty(), "{ctx}: no LockAcquired of the program's");
    let mut holds: BTreeMap<(u32, u32, Option<char>), i64> = BTreeMap::new();
    for e in &log.events {
        let Some(o) = e.object.filter(|o| ours.contains(o)) else {
            continue;
        };
        let d = match e.name.as_str() {
            "LockAcquired" => 1,
            "LockRelease" => -1,
            _ => continue,
        };
        *holds.entry((e.thread, o, e.mode)).or_insert(0) += d;
    }
    let open: Vec<_> = holds.iter().filter(|(_, n)| **n != 0).collect();
    assert!(
        open.is_empty(),
        "{ctx}: (thread, lock, mode) with LockAcquired minus LockRelease not 0 at the end: {open:?}"
    );
}

/// Asserts that no thread's lines release a j.u.c. lock (in a mode) more times than they
/// acquired it until then ("Reentrancy and holds" in docs/FORMAT.md).
fn assert_no_release_unheld(ctx: &str, log: &Log) {
    let mut holds: BTreeMap<(u32, Option<u32>, Option<char>), i64> = BTreeMap::new();
    for e in &log.events {
        let n = holds.entry((e.thread, e.object, e.mode)).or_insert(0);
        match e.name.as_str() {
            "LockAcquired" => *n += 1,
            "LockRelease" => *n -= 1,
            _ => continue,
        }
        assert!(
            *n >= 0,
            "{ctx}: a LockRelease of a hold the lines do not have: .orca line {}",
            e.line
        );
    }
}

/// The `EventsDropped` lines' total: exact counts need none.
fn dropped(run: &Run) -> u64 {
    std::fs::read_to_string(format!("{}.orca", run.prefix.display()))
        .unwrap()
        .lines()
        .filter(|l| l.contains(",EventsDropped,"))
        .map(|l| l.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// Runs `program` without the agent and in each mode on `jdk`; calls `exact` with the log of
/// each mode that writes every j.u.c. line.
fn each_mode(
    jdk: &Jdk,
    program: &Program,
    check_plain: impl Fn(&str),
    mut exact: impl FnMut(&str, &str, &Run, &Log),
) {
    let plain = program.plain(jdk);
    let plain_out = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert_eq!(
        plain.status.code(),
        Some(0),
        "{} {} without the agent: {}",
        jdk.label(),
        program.main,
        String::from_utf8_lossy(&plain.stderr)
    );
    check_plain(&plain_out);
    for mode in JUC_MODES {
        let ctx = format!("{} {} {mode}", jdk.label(), program.main);
        eprintln!("juc_faults: {ctx}");
        let run = program.run(jdk, mode);
        let log = check_run(&ctx, &run, &plain);
        if complete(mode) {
            assert_eq!(dropped(&run), 0, "{ctx}: events dropped");
            exact(&ctx, mode, &run, &log);
        }
    }
}

/// The end of an interrupted timed `tryLock` at `marker`: `LockInterrupted` in both modes
/// (JVMTI mode sees the exception; instrumentation mode's lock hooks do too, their catch-all
/// handler reports it).
fn timed_try_lock_interrupted(want: &mut Want, marker: &str, _mode: &str) {
    want.add("LockInterrupted", marker, Some('W'), 1);
}

/// The only event of `kind` at `marker`.
fn only<'a>(program: &Program, log: &'a Log, marker: &str, kind: &str) -> &'a Event {
    let v = program.events_at(log, marker, kind);
    assert_eq!(v.len(), 1, "{kind} at @{marker}");
    v[0]
}

#[test]
fn exceptions_inside_held_juc_locks_and_bad_unlocks_leave_the_program_unchanged() {
    let p = Program::new("JucExceptions", &[], &[]);
    let mut want = Want::new(&p);
    want.held("thread-lock", "thread-unlock", 'W', 1);
    want.held("arith-lock", "arith-unlock", 'W', 1);
    want.held("cause-lock", "cause-unlock", 'W', 1);
    want.held("cause-write", "cause-write-unlock", 'W', 1);
    want.held("cause-read", "cause-read-unlock", 'R', 1);
    want.held("holder-lock", "holder-unlock", 'W', 1);
    want.held("holder-write", "holder-write-unlock", 'W', 1);
    want.held("checker-lock", "checker-unlock", 'W', 1);
    want.held("checker-write", "checker-write-unlock", 'W', 1);
    // An unlock that throws IllegalMonitorStateException writes nothing (docs/FORMAT.md).
    for m in [
        "imse-free",
        "imse-free-write",
        "imse-free-read",
        "imse-other",
        "imse-other-write",
    ] {
        want.none(m);
    }
    for jdk in jdks() {
        each_mode(
            jdk,
            &p,
            |out| {
                for s in [
                    "uncaught in thrower, lock held: false\njava.lang.RuntimeException: from the program, inside a ReentrantLock\n",
                    "caught arithmetic, write lock held: false: java.lang.ArithmeticException: / by zero\n",
                    "java.lang.IllegalStateException: three locks held\n",
                    "Caused by: java.lang.NullPointerException",
                    "free true true 0\ntaken by checker\nexceptions done 2\n",
                ] {
                    assert!(out.contains(s), "{}: {s:?} not in\n{out}", jdk.label());
                }
                assert_eq!(
                    out.matches("java.lang.IllegalMonitorStateException")
                        .count(),
                    5,
                    "{out}"
                );
                // Stack traces through the JDK's lock methods, which instrumentation mode
                // rewrites: their line numbers must survive.
                assert!(
                    out.matches("\tat java.base/java.util.concurrent.locks.")
                        .count()
                        >= 10,
                    "{out}"
                );
            },
            |ctx, _mode, _run, log| {
                want.check(ctx, log);
                // Owners: none for a free lock; the thread itself for the read view taken under
                // its own write view.
                for m in [
                    "thread-lock",
                    "arith-lock",
                    "cause-lock",
                    "cause-write",
                    "checker-lock",
                ] {
                    assert_eq!(
                        only(&p, log, m, "LockAcquire").owner,
                        Some(0),
                        "{ctx}: @{m}"
                    );
                }
                let read = only(&p, log, "cause-read", "LockAcquire");
                assert_eq!(read.owner, Some(read.thread), "{ctx}");
                // The read and write views are one lock, the ReentrantLock another.
                let object = |m: &str| only(&p, log, m, "LockAcquired").object;
                assert_eq!(object("cause-read"), object("cause-write"), "{ctx}");
                assert_eq!(object("arith-lock"), object("cause-write"), "{ctx}");
                assert_ne!(object("cause-lock"), object("cause-write"), "{ctx}");
                assert_eq!(object("thread-lock"), object("checker-lock"), "{ctx}");
            },
        );
    }
}

#[test]
fn interrupted_juc_acquisitions_and_awaits_are_recorded_and_unchanged() {
    let p = Program::new("JucInterrupts", &[], &[]);
    for jdk in jdks() {
        each_mode(
            jdk,
            &p,
            |out| {
                assert_eq!(
                    out.matches("caught InterruptedException").count(),
                    8,
                    "{}: {out}",
                    jdk.label()
                );
                for s in [
                    "li-victim caught",
                    "rli-victim caught",
                    "tt-victim caught",
                    "await-victim caught",
                    "tawait-victim caught",
                    "pre-victim caught InterruptedException, lock held: true",
                    "await lock free: true\n",
                    "timed await lock free: true\n",
                    "pre lock free: true\n",
                    "plain-victim acquired, interrupted: true\n",
                    "unint-victim signalled, interrupted: true\ninterrupts done\n",
                    "\tat java.base/java.util.concurrent.locks.ReentrantLock.lockInterruptibly(",
                    "\tat java.base/java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(",
                ] {
                    assert!(out.contains(s), "{}: {s:?} not in\n{out}", jdk.label());
                }
                assert!(!out.contains("?"), "{}: {out}", jdk.label());
            },
            |ctx, mode, _run, log| {
                let mut want = Want::new(&p);
                want.held("li-main-lock", "li-main-unlock", 'W', 1);
                want.add("LockAcquire", "li-victim", Some('W'), 1);
                want.add("LockInterrupted", "li-victim", Some('W'), 1);
                want.held("rli-main-lock", "rli-main-unlock", 'W', 1);
                want.add("LockAcquire", "rli-victim", Some('R'), 1);
                want.add("LockInterrupted", "rli-victim", Some('R'), 1);
                want.held("tt-main-lock", "tt-main-unlock", 'W', 1);
                want.add("LockAcquire", "tt-victim", Some('W'), 1);
                timed_try_lock_interrupted(&mut want, "tt-victim", mode);
                for (lock, await_, unlock) in [
                    ("await-lock", "await-victim", "await-unlock"),
                    ("tawait-lock", "tawait-victim", "tawait-unlock"),
                    ("pre-await-lock", "pre-await", "pre-await-unlock"),
                    ("unint-lock", "unint-await", "unint-unlock"),
                ] {
                    want.held(lock, unlock, 'W', 1);
                    want.add("ConditionAwait", await_, None, 1);
                    want.add("ConditionAwaited", await_, None, 1);
                }
                want.add("LockAcquire", "pre-li", Some('W'), 1);
                want.add("LockInterrupted", "pre-li", Some('W'), 1);
                want.add("LockAcquire", "pre-tt", Some('W'), 1);
                timed_try_lock_interrupted(&mut want, "pre-tt", mode);
                want.held("plain-main-lock", "plain-main-unlock", 'W', 1);
                want.held("plain-victim", "plain-victim-unlock", 'W', 1);
                want.held("unint-main-lock", "unint-main-unlock", 'W', 1);
                want.add("ConditionSignal", "unint-signal", None, 1);
                want.check(ctx, log);

                // Each victim was blocked by main's hold: the owner of its LockAcquire.
                let main = only(&p, log, "li-main-lock", "LockAcquired").thread;
                for m in ["li-victim", "rli-victim", "tt-victim", "plain-victim"] {
                    let a = only(&p, log, m, "LockAcquire");
                    assert_eq!(a.owner, Some(main), "{ctx}: owner at @{m}");
                    assert_ne!(a.thread, main, "{ctx}: @{m}");
                }
                // The calls made with the interrupt pending found the lock free.
                for m in ["pre-li", "pre-tt"] {
                    assert_eq!(
                        only(&p, log, m, "LockAcquire").owner,
                        Some(0),
                        "{ctx}: @{m}"
                    );
                }
                // An await names the lock its condition was made by.
                for (lock, await_) in [
                    ("await-lock", "await-victim"),
                    ("tawait-lock", "tawait-victim"),
                    ("pre-await-lock", "pre-await"),
                    ("unint-lock", "unint-await"),
                ] {
                    let l = only(&p, log, lock, "LockAcquired");
                    let a = only(&p, log, await_, "ConditionAwait");
                    assert_eq!(a.owner, l.object, "{ctx}: @{await_}");
                    assert_eq!(a.thread, l.thread, "{ctx}: @{await_}");
                }
                assert_eq!(
                    only(&p, log, "unint-signal", "ConditionSignal").object,
                    only(&p, log, "unint-await", "ConditionAwait").object,
                    "{ctx}"
                );
                // Main released the lock only after the interrupt ended the victim's
                // acquisition (it joined the victim first).
                for (m, unlock) in [
                    ("li-victim", "li-main-unlock"),
                    ("rli-victim", "rli-main-unlock"),
                ] {
                    let ended = only(&p, log, m, "LockInterrupted");
                    let release = only(&p, log, unlock, "LockRelease");
                    assert!(ended.nanos <= release.nanos, "{ctx}: @{m}");
                }
            },
        );
    }
}

/// `taken` and `leaked` of JucOverflow's stderr line for `name`.
fn overflow_counts(stderr: &str, name: &str) -> (usize, usize) {
    let head = format!("JucOverflow {name} taken=");
    let line = stderr
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no {head:?} line in\n{stderr}"));
    let (taken, leaked) = line[head.len()..].split_once(" leaked=").unwrap();
    (taken.parse().unwrap(), leaked.parse().unwrap())
}

#[test]
fn a_stack_overflow_inside_held_reentrant_locks_leaves_them_free_and_the_log_valid() {
    // A small stack: a few thousand levels.
    let p = Program::new("JucOverflow", &["-Xss512k"], &[]);
    for jdk in jdks() {
        let plain = p.plain(jdk);
        for name in ["reentrant", "write"] {
            let (taken, leaked) = overflow_counts(&String::from_utf8_lossy(&plain.stderr), name);
            assert!(
                taken > 100 && leaked == 0,
                "{} {name}: {taken} {leaked}",
                jdk.label()
            );
        }
        each_mode(
            jdk,
            &p,
            |out| {
                for name in ["reentrant", "write"] {
                    let s = format!(
                        "{name}: caught java.lang.StackOverflowError deep: true\n\
                         {name}: free after the overflow: true\n\
                         {name}: taken by {name}-checker\n"
                    );
                    assert!(out.contains(&s), "{}: {s:?} not in\n{out}", jdk.label());
                }
                assert!(out.ends_with("overflow done true\n"), "{out}");
            },
            |ctx, _mode, run, log| {
                let (r, r_leaked) = overflow_counts(&run.stderr, "reentrant");
                let (w, w_leaked) = overflow_counts(&run.stderr, "write");
                assert_eq!((r_leaked, w_leaked), (0, 0), "{ctx}");
                let mut want = Want::new(&p);
                // Every level that took its lock released it on the way back; nothing was
                // left for the program to release.
                want.held("sof-lock", "sof-unlock", 'W', r + w);
                want.none("leak-unlock");
                want.held("checker-lock", "checker-unlock", 'W', 2);
                want.check(ctx, log);
                // Two locks, each taken `taken` times, the first time free, then reentrant.
                let acquires = p.events_at(log, "sof-lock", "LockAcquire");
                let mut per_lock: BTreeMap<u32, usize> = BTreeMap::new();
                for e in p.events_at(log, "sof-lock", "LockAcquired") {
                    *per_lock.entry(e.object.unwrap()).or_insert(0) += 1;
                }
                let mut got: Vec<usize> = per_lock.values().copied().collect();
                got.sort();
                let mut expected = vec![r, w];
                expected.sort();
                assert_eq!(got, expected, "{ctx}: acquisitions per lock");
                let free = acquires.iter().filter(|e| e.owner == Some(0)).count();
                let reentrant = acquires
                    .iter()
                    .filter(|e| e.owner == Some(e.thread))
                    .count();
                assert_eq!((free, reentrant), (2, r + w - 2), "{ctx}: owners");
                for e in p.events_at(log, "checker-lock", "LockAcquire") {
                    assert_eq!(e.owner, Some(0), "{ctx}: the checker found the lock held");
                }
                assert_balanced(ctx, &p, log);
            },
        );
    }
}

/// The same recursion without the probe: the StackOverflowError strikes inside `lock()` and
/// `unlock()` themselves, and inside the agent's hooks in them. The JVM alone may leave holds
/// behind (the program releases them); the log must still be valid.
///
/// The JDK's lock code is `@ReservedStackAccess`: a StackOverflowError inside it is thrown
/// when it returns, so `lock()` can throw it with the lock taken and `unlock()` with it
/// released (the JVM warns "Potentially dangerous stack overflow in ReservedStackAccess
/// annotated method ReentrantLock$Sync.lock()V", `ReentrantReadWriteLock$Sync.tryAcquire`,
/// `tryRelease`: in every run on JDK 17 and 25). The agent then reads the lock (its owner
/// and hold count) and writes that acquisition `LockAcquired` and that release
/// `LockRelease`; else the lines would miss a hold the program releases at @leak-unlock (a
/// `LockRelease` is written only for a hold the lines have), or keep one it released.
///
/// JVMTI mode sees every call: at least every `lock()` that returned is written, the
/// program's releases of what the overflow left too, and every hold is released. With
/// `trace=all` the tracker tells the agent of a call through native methods, and a native
/// call needs more stack than the lock methods do (the JVM bangs its shadow pages first): the
/// lock calls of the last few levels may make no line at all, or lose their end (an unlock
/// that released then keeps its hold in the lines), so there only what is written is checked:
/// no acquisition or release the program did not make, and no release of a hold the lines do
/// not have.
#[test]
fn a_stack_overflow_inside_lock_and_unlock_themselves_keeps_the_log_valid() {
    let p = Program::new("JucOverflow", &["-Xss512k"], &["0"]);
    for jdk in jdks() {
        each_mode(
            jdk,
            &p,
            |out| {
                for name in ["reentrant", "write"] {
                    let s = format!(
                        "{name}: caught java.lang.StackOverflowError deep: true\n\
                         {name}: free after releasing what the overflow left: true\n\
                         {name}: taken by {name}-checker\n"
                    );
                    assert!(out.contains(&s), "{}: {s:?} not in\n{out}", jdk.label());
                }
            },
            |ctx, mode, run, log| {
                let (r, r_leaked) = overflow_counts(&run.stderr, "reentrant");
                let (w, w_leaked) = overflow_counts(&run.stderr, "write");
                let leaked = r_leaked + w_leaked;
                let acquired = p.events_at(log, "sof-lock", "LockAcquired").len();
                let cleanup = p.events_at(log, "leak-unlock", "LockRelease").len();
                if jvmti(mode) {
                    assert!(
                        acquired >= r + w,
                        "{ctx}: {acquired} LockAcquired, {r} + {w} lock() returned"
                    );
                    assert_eq!(
                        cleanup, leaked,
                        "{ctx}: the program's releases of what was left"
                    );
                    assert_balanced(ctx, &p, log);
                } else {
                    // A hold left is a lock() that took the lock and threw, or an unlock()
                    // that threw before it released.
                    assert!(
                        acquired <= r + w + leaked,
                        "{ctx}: {acquired} LockAcquired, {r} + {w} lock() returned, {leaked} left"
                    );
                    assert!(
                        cleanup <= leaked,
                        "{ctx}: {cleanup} releases of what was left, {leaked} left"
                    );
                    assert_no_release_unheld(ctx, log);
                }
            },
        );
    }
}

/// Lock calls that end by an exception after they took or released the lock, by design
/// (tests/java/JucThrowing.java: a program's own AQS whose tryAcquire and tryRelease throw
/// once they are done, as the JDK's locks do when a StackOverflowError is delayed to the end
/// of their reserved-stack sections): the acquisition is written `LockAcquired` and the
/// release `LockRelease`, as the lock says (its owner: the count of a program's AQS cannot be
/// read, and the thread held it not at all before). An acquisition that threw before it took
/// anything stays `LockInterrupted`, and a release of a lock the thread does not hold writes
/// nothing. By default (summaries) only the line of the acquisition that did not take the
/// lock is written.
#[test]
fn a_lock_call_that_throws_once_done_is_written_as_done() {
    let p = Program::new("JucThrowing", &[], &[]);
    for jdk in jdks() {
        each_mode(
            jdk,
            &p,
            |out| {
                let want = "acquire threw after taking, held: true\n\
                            release threw after releasing, held: false\n\
                            acquire threw before taking, held: false\n\
                            release threw not the owner\n\
                            taken by other\n";
                assert_eq!(out, want, "{}", jdk.label());
            },
            |ctx, _mode, _run, log| {
                let mut want = Want::new(&p);
                want.add("LockAcquire", "taken-lock", Some('W'), 1);
                want.add("LockAcquired", "taken-lock", Some('W'), 1);
                want.add("LockRelease", "released-unlock", Some('W'), 1);
                want.add("LockAcquire", "before-lock", Some('W'), 1);
                want.add("LockInterrupted", "before-lock", Some('W'), 1);
                want.none("unheld-unlock");
                want.held("plain-lock", "plain-unlock", 'W', 1);
                want.held("other-lock", "other-unlock", 'W', 1);
                want.check(ctx, log);
                for e in p.events_at(log, "other-lock", "LockAcquire") {
                    assert_eq!(
                        e.owner,
                        Some(0),
                        "{ctx}: the other thread found the lock held"
                    );
                }
                assert_balanced(ctx, &p, log);
            },
        );
        // The default's summaries: the acquisitions that took the lock are holds, not lines.
        let run = p.run(jdk, JUC_MODES[0]);
        let log = run.log();
        let ctx = format!("{} JucThrowing {}", jdk.label(), JUC_MODES[0]);
        assert!(
            p.events_at(&log, "taken-lock", "LockInterrupted")
                .is_empty(),
            "{ctx}"
        );
        assert_eq!(
            p.events_at(&log, "before-lock", "LockInterrupted").len(),
            1,
            "{ctx}"
        );
    }
}

/// tests/java21/JucVThreads.java's arguments: virtual threads, lock/unlock pairs per thread,
/// hand-off and park rounds.
const VTHREADS: usize = 50;
const VPAIRS: usize = 20;
const VROUNDS: usize = 10;

/// JucVThreads compiled for `jdk` (21+).
fn vthreads_program(jdk: &Jdk) -> Program {
    let source = root().join("tests/java21/JucVThreads.java");
    let classes = work_dir().join(format!("classes21-juc-{}", jdk.label()));
    let _ = std::fs::remove_dir_all(&classes);
    std::fs::create_dir_all(&classes).unwrap();
    let ok = Command::new(jdk.javac())
        .args(["--release", "21", "-g", "-encoding", "UTF-8", "-d"])
        .arg(&classes)
        .arg(&source)
        .status()
        .expect("run javac")
        .success();
    assert!(
        ok,
        "{}: javac --release 21 failed on {}",
        jdk.label(),
        source.display()
    );
    Program {
        main: "JucVThreads",
        source,
        classes,
        jvm: Vec::new(),
        args: [VTHREADS, VPAIRS, VROUNDS].map(|n| n.to_string()).to_vec(),
    }
}

#[test]
fn virtual_threads_contend_hand_off_and_park_on_juc_locks() {
    use std::io::Write;
    let newer: Vec<&Jdk> = jdks().iter().filter(|j| j.major >= 21).collect();
    for jdk in jdks().iter().filter(|j| j.major < 21) {
        // Said on the real stderr (the harness captures eprintln!): never skipped silently.
        let _ = writeln!(
            std::io::stderr(),
            "orca-tests: {}: no virtual threads before JDK 21: JucVThreads NOT run on it",
            jdk.label()
        );
    }
    if newer.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "orca-tests: no JDK 21+ found: the j.u.c. virtual-thread test did NOT run"
        );
        return;
    }
    for jdk in newer {
        let p = vthreads_program(jdk);
        each_mode(
            jdk,
            &p,
            |out| {
                let head = format!(
                    "counter {} free true\nhand-offs {VROUNDS}\nparks {VROUNDS}\n",
                    VTHREADS * VPAIRS
                );
                assert!(out.starts_with(&head), "{}: {out}", jdk.label());
                for s in [
                    "vt-li-victim caught InterruptedException",
                    "vt-tt-victim caught InterruptedException",
                    "vt-await-victim caught InterruptedException",
                    "interrupted locks free: true true true\n",
                    "uncaught in vt-thrower, lock held: false\njava.lang.IllegalStateException: from a virtual thread, inside a ReentrantLock\n",
                    "\tat java.base/java.lang.VirtualThread.run(",
                ] {
                    assert!(out.contains(s), "{}: {s:?} not in\n{out}", jdk.label());
                }
                assert!(
                    out.ends_with("\nvirtual done\n") && !out.contains('?'),
                    "{out}"
                );
            },
            |ctx, mode, _run, log| {
                let mut want = Want::new(&p);
                want.held("vt-lock", "vt-unlock", 'W', VTHREADS * VPAIRS);
                want.held("cond-consumer-lock", "cond-consumer-unlock", 'W', VROUNDS);
                want.held("cond-producer-lock", "cond-producer-unlock", 'W', VROUNDS);
                want.add("ConditionAwait", "cond-await", None, VROUNDS);
                want.add("ConditionAwaited", "cond-await", None, VROUNDS);
                want.add("ConditionSignal", "cond-signal", None, VROUNDS);
                want.add("ThreadPark", "vt-park", None, VROUNDS);
                want.add("ThreadParked", "vt-park", None, VROUNDS);
                want.add("ThreadUnpark", "vt-unpark", None, VROUNDS);
                want.held("vt-li-main-lock", "vt-li-main-unlock", 'W', 1);
                want.add("LockAcquire", "vt-li", Some('W'), 1);
                want.add("LockInterrupted", "vt-li", Some('W'), 1);
                want.held("vt-tt-main-lock", "vt-tt-main-unlock", 'W', 1);
                want.add("LockAcquire", "vt-tt", Some('W'), 1);
                timed_try_lock_interrupted(&mut want, "vt-tt", mode);
                want.held("vt-await-lock", "vt-await-unlock", 'W', 1);
                want.add("ConditionAwait", "vt-await", None, 1);
                want.add("ConditionAwaited", "vt-await", None, 1);
                want.held("vt-throw-lock", "vt-throw-unlock", 'W', 1);
                want.check(ctx, log);
                // Each virtual thread is a thread of its own in the log, named, with its pairs.
                let mut per_thread: HashMap<u32, usize> = HashMap::new();
                for e in p.events_at(log, "vt-lock", "LockAcquired") {
                    *per_thread.entry(e.thread).or_insert(0) += 1;
                }
                let mut names: Vec<String> = per_thread
                    .keys()
                    .map(|t| log.thread_names.get(t).cloned().unwrap_or_default())
                    .collect();
                names.sort();
                let mut expected: Vec<String> =
                    (0..VTHREADS).map(|i| format!("contender-{i}")).collect();
                expected.sort();
                assert_eq!(names, expected, "{ctx}: the contending threads");
                assert!(
                    per_thread.values().all(|n| *n == VPAIRS),
                    "{ctx}: pairs per thread {per_thread:?}"
                );
                // They contended (each holds the lock across a yield): a LockAcquire with
                // another thread as owner is one that parked, its virtual thread unmounted.
                let contended = p
                    .events_at(log, "vt-lock", "LockAcquire")
                    .iter()
                    .filter(|e| e.owner != Some(0) && e.owner != Some(e.thread))
                    .count();
                assert!(contended > 0, "{ctx}: no contention on the shared lock");
                // In time order the lock never has two holders.
                let lock = p.events_at(log, "vt-lock", "LockAcquired")[0].object;
                let mut holds: Vec<(u64, bool, u32)> = log
                    .events
                    .iter()
                    .filter(|e| e.object == lock)
                    .filter(|e| e.name == "LockAcquired" || e.name == "LockRelease")
                    .map(|e| (e.nanos, e.name == "LockAcquired", e.thread))
                    .collect();
                holds.sort();
                assert_eq!(holds.len(), 2 * VTHREADS * VPAIRS, "{ctx}");
                let mut holder = None;
                for (nanos, acquired, thread) in holds {
                    if acquired {
                        assert_eq!(holder, None, "{ctx}: two holders at {nanos}");
                        holder = Some(thread);
                    } else {
                        assert_eq!(holder, Some(thread), "{ctx}: release at {nanos}");
                        holder = None;
                    }
                }
                // Each hand-off: the await names the consumer's lock, the signal its condition.
                let awaits = p.events_at(log, "cond-await", "ConditionAwait");
                let consumer_locks: BTreeSet<Option<u32>> = p
                    .events_at(log, "cond-consumer-lock", "LockAcquired")
                    .iter()
                    .map(|e| e.object)
                    .collect();
                let await_locks: BTreeSet<Option<u32>> = awaits.iter().map(|e| e.owner).collect();
                assert_eq!(await_locks, consumer_locks, "{ctx}");
                assert_eq!(consumer_locks.len(), VROUNDS, "{ctx}: one lock per round");
                let conditions: BTreeSet<Option<u32>> = awaits.iter().map(|e| e.object).collect();
                let signalled: BTreeSet<Option<u32>> = p
                    .events_at(log, "cond-signal", "ConditionSignal")
                    .iter()
                    .map(|e| e.object)
                    .collect();
                assert_eq!(conditions, signalled, "{ctx}");
                // Each unpark wakes a parker, each parker is woken once.
                let parkers: BTreeSet<u32> = p
                    .events_at(log, "vt-park", "ThreadPark")
                    .iter()
                    .map(|e| e.thread)
                    .collect();
                let woken: BTreeSet<u32> = p
                    .events_at(log, "vt-unpark", "ThreadUnpark")
                    .iter()
                    .filter_map(|e| e.object)
                    .collect();
                assert_eq!(parkers.len(), VROUNDS, "{ctx}");
                assert_eq!(woken, parkers, "{ctx}");
                for e in p.events_at(log, "vt-park", "ThreadPark") {
                    assert_ne!(e.object, Some(0), "{ctx}: the blocker");
                }
                // The interrupted virtual threads were blocked by main's holds.
                for (main_lock, m) in [("vt-li-main-lock", "vt-li"), ("vt-tt-main-lock", "vt-tt")] {
                    let main = only(&p, log, main_lock, "LockAcquired").thread;
                    assert_eq!(
                        only(&p, log, m, "LockAcquire").owner,
                        Some(main),
                        "{ctx}: @{m}"
                    );
                }
                assert_balanced(ctx, &p, log);
            },
        );
    }
}
