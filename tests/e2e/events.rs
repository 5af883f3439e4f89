//! Exact per-thread event sequences of deterministic programs, on every JDK found.

use orca_tests::*;

/// The hash a test program printed as `KEY=HEX` on stdout.
fn printed_hash(run: &Run, key: &str) -> u32 {
    run.stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .expect("the program prints its hashes")
}

fn top(log: &Log, e: &Event) -> String {
    log.top_frame(e)
        .unwrap_or_else(|| format!("<no frame> line {}", e.line))
}

#[test]
fn ping_pong_sequences_frames_and_lines() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(
            &format!("pingpong-{}", tag(mode)),
            jdk,
            mode,
            "PingPong",
            &[],
        );
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        assert!(run.stdout.contains("pingpong done"));
        let log = run.log();
        assert_valid(&run, &log);
        // The program's own calls on main: events whose caller is PingPong.main. (The JDK's
        // start-up and shutdown code makes calls of its own on main.)
        let main_calls: Vec<&Event> = by_thread_name(&log, "main")
            .into_iter()
            .filter(|e| {
                !e.name.starts_with("Monitor")
                    && e.name != "LockOrder"
                    && e.frames
                        .first()
                        .is_some_and(|f| log.method_name(f.0) == "PingPong.main")
            })
            .collect();
        let mut expected = vec!["ThreadStart".to_string()];
        for _ in 0..5 {
            expected.extend(["ObjectNotify", "ObjectWait", "ObjectWaited"].map(String::from));
        }
        expected
            .extend(["ThreadJoin", "ThreadJoined", "ThreadSleep", "ThreadSlept"].map(String::from));
        assert_eq!(names(&main_calls), expected, "{} {mode}: main", jdk.label());

        let pong = by_thread_name(&log, "pong");
        let pong_calls: Vec<&Event> = pong
            .iter()
            .copied()
            .filter(|e| e.name.starts_with("Object"))
            .collect();
        let mut expected = vec!["ObjectNotify".to_string()];
        for _ in 0..4 {
            expected.extend(["ObjectWait", "ObjectWaited", "ObjectNotify"].map(String::from));
        }
        assert_eq!(names(&pong_calls), expected, "{} {mode}: pong", jdk.label());
        assert_eq!(pong.first().map(|e| e.name.as_str()), Some("ThreadStarted"));
        assert_eq!(pong.last().map(|e| e.name.as_str()), Some("ThreadEnded"));

        // Every call event names the caller's line, entry and exit alike, and one monitor.
        let line = |m: &str| format!("PingPong.main:{}", marker_line("PingPong.java", m));
        let ours = &main_calls[..];
        assert_eq!(top(&log, ours[0]), line("start"));
        assert_eq!(top(&log, ours[1]), line("ping-notify"));
        assert_eq!(top(&log, ours[2]), line("ping-wait"));
        assert_eq!(top(&log, ours[3]), line("ping-wait"));
        assert_eq!(top(&log, ours[16]), line("join"));
        assert_eq!(top(&log, ours[17]), line("join"));
        assert_eq!(top(&log, ours[18]), line("sleep"));
        let pong_line = |m: &str| format!("PingPong.pong:{}", marker_line("PingPong.java", m));
        assert_eq!(top(&log, pong_calls[0]), pong_line("pong-notify"));
        assert_eq!(top(&log, pong_calls[1]), pong_line("pong-wait"));
        assert_eq!(top(&log, pong_calls[2]), pong_line("pong-wait"));
        let lock = ours[1].object;
        assert!(
            pong_calls
                .iter()
                .chain(&ours[1..16])
                .all(|e| e.object == lock),
            "one monitor"
        );
        // ThreadStart and ThreadJoin name the pong thread.
        let pong_id = pong[0].thread;
        assert_eq!(ours[0].object, Some(pong_id));
        assert_eq!(ours[16].object, Some(pong_id));
        // Causality across threads: pong starts after main's ThreadStart.
        assert!(pong[0].nanos >= ours[0].nanos);
    }
}

#[test]
fn semaphore_hand_off_and_failed_try_acquire() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(
            &format!("semaphore-{}", tag(mode)),
            jdk,
            mode,
            "SemaphoreHandoff",
            &[],
        );
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        assert!(
            run.stdout.contains("semaphore done true true"),
            "{}",
            run.stdout
        );
        let log = run.log();
        assert_valid(&run, &log);
        let main: Vec<&Event> = by_thread_name(&log, "main")
            .into_iter()
            .filter(|e| e.name.starts_with("Semaphore"))
            .collect();
        assert_eq!(
            names(&main),
            [
                "SemaphoreRelease",
                "SemaphoreAcquire",
                "SemaphoreAcquired",
                "SemaphoreAcquire",
                "SemaphoreAcquired",
                "SemaphoreAcquire",
                "SemaphoreAcquired"
            ],
            "{}",
            jdk.label()
        );
        let line = |m: &str| {
            format!(
                "SemaphoreHandoff.main:{}",
                marker_line("SemaphoreHandoff.java", m)
            )
        };
        assert_eq!(top(&log, main[0]), line("main-release"));
        assert_eq!(top(&log, main[1]), line("main-acquire"));
        assert_eq!(top(&log, main[4]), line("main-tryacquire-timeout"));
        assert_eq!(top(&log, main[6]), line("main-tryacquire"));
        // The timed tryAcquire really waited about 20 ms between its two events.
        let waited = main[4].nanos - main[3].nanos;
        assert!(waited >= 15_000_000, "timed tryAcquire took {waited} ns");
        let taker: Vec<&Event> = by_thread_name(&log, "taker")
            .into_iter()
            .filter(|e| e.name.starts_with("Semaphore"))
            .collect();
        assert_eq!(
            names(&taker),
            ["SemaphoreAcquire", "SemaphoreAcquired", "SemaphoreRelease"]
        );
        assert_eq!(taker[0].object, main[0].object, "the same semaphore");
        assert_ne!(
            taker[2].object, main[0].object,
            "`done` is another semaphore"
        );
        // Causality: the taker's acquire completes after main released.
        assert!(taker[1].nanos >= main[0].nanos);
    }
}

#[test]
fn forced_contention_names_the_owner() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(
            &format!("contention-{}", tag(mode)),
            jdk,
            mode,
            "Contention",
            &[],
        );
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        let field = |k: &str| {
            let w = run
                .stdout
                .split_whitespace()
                .find(|w| w.starts_with(&format!("{k}=")))
                .unwrap();
            w[k.len() + 1..].to_string()
        };
        let (lock, main, blocked) = (field("lock"), field("main"), field("blocked"));
        let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
        let log = run.log();
        assert_valid(&run, &log);
        let ev: Vec<&Event> = log
            .events
            .iter()
            .filter(|e| e.thread == hex(&blocked) && e.name.starts_with("MonitorContended"))
            .collect();
        assert_eq!(
            names(&ev),
            ["MonitorContendedEnter", "MonitorContendedEntered"],
            "{}",
            jdk.label()
        );
        assert_eq!(ev[0].object, Some(hex(&lock)));
        assert_eq!(ev[0].owner, Some(hex(&main)), "the owner is main");
        assert_eq!(ev[1].object, Some(hex(&lock)));
        let site = format!(
            "Contention.lambda$main$0:{}",
            marker_line("Contention.java", "blocked-enter")
        );
        assert_eq!(top(&log, ev[0]), site);
        assert_eq!(top(&log, ev[1]), site);
        assert_eq!(
            log.thread_names.get(&hex(&blocked)).map(String::as_str),
            Some("blocked")
        );
    }
}

#[test]
fn thread_names_survive_separators_and_unicode() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(&format!("names-{}", tag(mode)), jdk, mode, "Names", &[]);
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        let log = run.log();
        assert_valid(&run, &log);
        for expected in [
            "comma,name",
            "line\nbreak\r\n",
            "semi;colon%percent",
            "ünïcödé 線程 😀",
            "",
            "tab\there",
        ] {
            assert!(
                log.thread_names.values().any(|n| n == expected),
                "{}: {expected:?} not in {:?}",
                jdk.label(),
                log.thread_names
            );
        }
        let raw = std::fs::read_to_string(format!("{}.orca", run.prefix.display())).unwrap();
        assert!(
            raw.contains(",comma%2Cname\n")
                && raw.contains(",line%0Abreak%0D%0A\n")
                && raw.contains(",semi%3Bcolon%25percent\n")
        );
    }
}

#[test]
fn interrupted_calls_still_end_their_pairs() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(
            &format!("interrupts-{}", tag(mode)),
            jdk,
            mode,
            "Interrupts",
            &[],
        );
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        for s in [
            "wait interrupted",
            "sleep interrupted",
            "join interrupted",
            "acquire interrupted",
        ] {
            assert!(run.stdout.contains(s), "{}", run.stdout);
        }
        let log = run.log();
        assert_valid(&run, &log);
        for (thread, pair, marker) in [
            ("waiter", ["ObjectWait", "ObjectWaited"], "waiter-wait"),
            ("sleeper", ["ThreadSleep", "ThreadSlept"], "sleeper-sleep"),
            ("joiner", ["ThreadJoin", "ThreadJoined"], "joiner-join"),
            (
                "acquirer",
                ["SemaphoreAcquire", "SemaphoreAcquired"],
                "acquirer-acquire",
            ),
        ] {
            let ev: Vec<&Event> = by_thread_name(&log, thread)
                .into_iter()
                .filter(|e| pair.contains(&e.name.as_str()))
                .collect();
            assert_eq!(names(&ev), pair, "{}: {thread}", jdk.label());
            let line = marker_line("Interrupts.java", marker);
            assert!(
                top(&log, ev[1]).ends_with(&format!(":{line}")),
                "{}: {thread} exit at {}",
                jdk.label(),
                top(&log, ev[1])
            );
        }
    }
}

#[test]
fn stack_depth_option_bounds_every_trace() {
    let jdk = jdk17();
    for depth in [0usize, 1, 3] {
        let run = run(
            &format!("depth{depth}"),
            jdk,
            // waitthreshold=0: every wait and notify an event with its stack, whatever its
            // length (PingPong's waits are short; the test looks at their traces).
            &format!("stackdepth={depth},waitthreshold=0"),
            "PingPong",
            &[],
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let log = run.log();
        assert_valid(&run, &log);
        let calls: Vec<&Event> = log
            .events
            .iter()
            .filter(|e| e.name.starts_with("Object"))
            .collect();
        assert!(calls.len() >= 20);
        assert!(calls.iter().all(|e| e.frames.len() <= depth));
        assert!(
            calls.iter().any(|e| e.frames.len() == depth),
            "some trace reaches depth {depth}"
        );
        assert!(run.stderr.contains(&format!("stackdepth={depth}")));
    }
}

#[test]
fn metadata_is_lazy_and_complete() {
    for mode in MODES {
        let jdk = jdk17();
        let run = run(
            &format!("metadata-{}", tag(mode)),
            jdk,
            mode,
            "PingPong",
            &[],
        );
        let log = run.log();
        assert_valid(&run, &log);
        // Lazy: only methods that some event's stack refers to are described.
        let used: std::collections::HashSet<u32> = log
            .events
            .iter()
            .flat_map(|e| e.frames.iter().map(|f| f.0))
            .collect();
        let listed: std::collections::HashSet<u32> = log.methods.keys().copied().collect();
        assert_eq!(used, listed);
        let main = log
            .methods
            .values()
            .find(|m| m.name == "main" && m.signature == "([Ljava/lang/String;)V")
            .expect("main listed");
        assert_eq!(
            log.classes[&main.class],
            ("LPingPong;".to_string(), "PingPong.java".to_string())
        );
        assert!(main.lines.as_ref().is_some_and(|l| !l.is_empty()));
    }
}

#[test]
fn receivers_are_exact_with_several_monitors_owned() {
    for (jdk, mode) in jdks_and_modes() {
        let run = run(&format!("nested-{}", tag(mode)), jdk, mode, "Nested", &[]);
        assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
        let hex = |k: &str| {
            let w = run
                .stdout
                .split_whitespace()
                .find(|w| w.starts_with(&format!("{k}=")))
                .unwrap();
            u32::from_str_radix(&w[k.len() + 1..], 16).unwrap()
        };
        let log = run.log();
        assert_valid(&run, &log);
        let main: Vec<&Event> = by_thread_name(&log, "main")
            .into_iter()
            .filter(|e| {
                !e.name.starts_with("Monitor")
                    && e.name != "LockOrder"
                    && e.frames
                        .first()
                        .is_some_and(|f| log.method_name(f.0) == "Nested.main")
            })
            .collect();
        assert_eq!(
            names(&main),
            [
                "ObjectNotify",
                "ObjectNotifyAll",
                "ObjectWait",
                "ObjectWaited"
            ],
            "{}",
            jdk.label()
        );
        assert_eq!(main[0].object, Some(hex("b")));
        assert_eq!(main[1].object, Some(hex("a")));
        assert_eq!(main[2].object, Some(hex("b")));
        assert_eq!(main[3].object, Some(hex("b")));
    }
}

/// Instrumentation mode names the owner of a contended monitor from the tracker's own
/// record of holds, with no safepoint, also when the owner released it between the JVM's
/// seeing the contention and the agent's handling it (which is when the JVM, asked then,
/// answers "nobody"): in `Owners`, main releases the lock the moment the other thread
/// blocks on it, 100 times, so every one of the 100 contentions is main's.
#[test]
fn contention_owners_in_instrumentation_mode_are_exact_when_released_at_once() {
    for jdk in jdks() {
        // About 30,000 events: fewer than the agent's queue holds, so none is dropped.
        let run = run(
            "owners",
            jdk,
            "mode=instrument,trace=all,stackdepth=1",
            "Owners",
            &["100"],
        );
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        let field = |k: &str| printed_hash(&run, k);
        let (lock, main, taker) = (field("lock"), field("main"), field("taker"));
        let log = run.log();
        assert_valid(&run, &log);
        let contended: Vec<&Event> = log
            .events
            .iter()
            .filter(|e| e.name == "MonitorContendedEnter" && e.object == Some(lock))
            .collect();
        assert!(log.dropped == 0, "{}: events were dropped", jdk.label());
        assert_eq!(
            contended.len(),
            100,
            "{}: one contention a round; the program's stderr: {}",
            jdk.label(),
            run.stderr
        );
        let site = format!(
            "Owners.lambda$main$0:{}",
            marker_line("Owners.java", "taker-enter")
        );
        for c in &contended {
            assert_eq!(c.thread, taker, "{}: line {}", jdk.label(), c.line);
            assert_eq!(top(&log, c), site, "{}: line {}", jdk.label(), c.line);
        }
        let owners: Vec<u32> = contended.iter().filter_map(|c| c.owner).collect();
        let not_main = owners.iter().filter(|&&o| o != main).count();
        assert_eq!(
            not_main,
            0,
            "{}: {not_main} of 100 contentions do not name main ({main:08X}) as the owner: {:08X?}",
            jdk.label(),
            owners
        );
        // The same run's timestamps (docs/FORMAT.md): an acquisition is entered once it
        // holds the monitor, not before its attempt; one that blocked, after the
        // contention's end.
        let (blocked, free) = entered_times(&log, &jdk.label());
        assert!(
            blocked >= 100,
            "{}: {blocked} blocked acquisitions",
            jdk.label()
        );
        assert!(free >= 10_000, "{}: {free} free acquisitions", jdk.label());
    }
}

/// A contention on a monitor that only the JDK's code takes (the tracker cannot name its
/// owner; the JVM names it at a safepoint) costs no safepoint unless it lasts: the agent
/// asks once the contention is half `contentionthreshold` old (1 ms by default). In
/// `JdkOwners`, main holds a `Collections.synchronizedList`'s mutex inside the list's own
/// `forEach` and releases it as soon as taker blocks on it, 200 times, then once 300 ms
/// later. Every contention is counted or written; `GetObjectMonitorUsage` safepoints
/// (`-Xlog:safepoint`) are at most the contentions that lasted 400 µs or more (one each
/// before the asker: 201 here), and the long one names main as its owner.
#[test]
fn short_contentions_on_jdk_monitors_cost_no_safepoint_and_long_ones_name_their_owner() {
    for jdk in jdks() {
        let prefix_log = std::env::temp_dir().join(format!(
            "orca-jdkowners-{}-{}.safepoints",
            jdk.major,
            std::process::id()
        ));
        let xlog = format!("-Xlog:safepoint:file={}", prefix_log.display());
        let run = run_with(
            "jdkowners",
            jdk,
            "mode=instrument",
            &[&xlog],
            "JdkOwners",
            &["200", "300"],
        );
        let ctx = jdk.label();
        assert_eq!(run.code, Some(0), "{ctx}: {}", run.stderr);
        let field = |k: &str| printed_hash(&run, k);
        let (list, main, taker) = (field("list"), field("main"), field("taker"));
        let log = run.log();
        assert_valid(&run, &log);
        let safepoints = std::fs::read_to_string(&prefix_log).expect("the safepoint log");
        let _ = std::fs::remove_file(&prefix_log);
        let asked = safepoints
            .lines()
            .filter(|l| l.contains("\"GetObjectMonitorUsage\""))
            .count();
        // Written contentions (their waits from the pairs), and counted ones (from their
        // histograms): every one of the 201, and how many lasted 400 µs or more.
        let mut written = Vec::new();
        let mut since = None;
        for e in log.events.iter().filter(|e| e.object == Some(list)) {
            match e.name.as_str() {
                "MonitorContendedEnter" => {
                    assert_eq!(e.thread, taker, "{ctx}: line {}", e.line);
                    since = Some((e.nanos, e.owner));
                }
                "MonitorContendedEntered" => {
                    let (t0, owner) = since.take().expect("an enter before");
                    written.push((e.nanos - t0, owner.unwrap_or(0)));
                }
                _ => {}
            }
        }
        let (mut counted, mut counted_long) = (0, 0);
        let text = std::fs::read_to_string(format!("{}.orca", run.prefix.display())).unwrap();
        for l in text.lines() {
            let rec = orca_format::parse_event_line(l.as_bytes()).expect("a valid line");
            if let orca_format::Event::MonitorContentions {
                monitor, durations, ..
            } = rec.event
            {
                if monitor.0 == list {
                    counted += durations.count;
                    for (b, n) in durations.histogram.buckets() {
                        if orca_format::hist::bucket_upper(b) >= 400_000 {
                            counted_long += n;
                        }
                    }
                }
            }
        }
        assert_eq!(
            written.len() as u64 + counted,
            201,
            "{ctx}: one contention a round ({} written, {counted} counted); stderr: {}",
            written.len(),
            run.stderr
        );
        let long_ones = written.iter().filter(|w| w.0 >= 400_000).count() as u64 + counted_long;
        // A contention elsewhere written as it happened (a thread the tracker has no buffer
        // for: the JDK's own, at start-up or exit) may have asked at once.
        let elsewhere = log
            .events
            .iter()
            .filter(|e| e.name == "MonitorContendedEnter" && e.object != Some(list))
            .count() as u64;
        assert!(
            asked as u64 <= long_ones + elsewhere,
            "{ctx}: {asked} GetObjectMonitorUsage safepoints for {long_ones} contentions of 400 µs or more and {elsewhere} on other monitors"
        );
        let (waited, owner) = *written.last().expect("the long contention is written");
        assert!(
            waited >= 300_000_000,
            "{ctx}: the last contention waited {waited} ns"
        );
        assert_eq!(
            owner, main,
            "{ctx}: the long contention's owner is main ({main:08X})"
        );
        // A written contention names main, or nobody when it ended before it was asked about.
        for (w, o) in &written {
            assert!(
                *o == main || *o == 0,
                "{ctx}: a contention of {w} ns names {o:08X}"
            );
        }
    }
}

/// Checks every MonitorEntered that follows its thread's MonitorEnter against it: not before
/// it, and not before the contention's MonitorContendedEntered when one came between them.
/// How many blocked and how many did not.
fn entered_times(log: &Log, jdk: &str) -> (usize, usize) {
    use std::collections::HashMap;
    // Per thread: the MonitorEnter under way, and the end of its contention if it blocked.
    let mut pending: HashMap<u32, (&Event, Option<u64>, bool)> = HashMap::new();
    let (mut blocked, mut free) = (0, 0);
    for e in &log.events {
        match e.name.as_str() {
            "MonitorEnter" => {
                pending.insert(e.thread, (e, None, false));
            }
            "MonitorContendedEnter" => {
                if let Some(p) = pending.get_mut(&e.thread) {
                    p.2 = true;
                }
            }
            "MonitorContendedEntered" => {
                if let Some(p) = pending.get_mut(&e.thread) {
                    p.1 = Some(e.nanos);
                }
            }
            "MonitorEntered" => {
                let Some((enter, contention_end, contended)) = pending.remove(&e.thread) else {
                    continue; // a synchronized method: no MonitorEnter before it
                };
                assert_eq!(enter.object, e.object, "{jdk}: line {}", e.line);
                if contended {
                    let end = contention_end.expect("a contention ends before its entered");
                    assert!(
                        e.nanos >= end && e.nanos > enter.nanos,
                        "{jdk}: line {}: a blocked acquisition entered before its contention ended",
                        e.line
                    );
                    blocked += 1;
                } else {
                    assert!(
                        e.nanos >= enter.nanos,
                        "{jdk}: line {}: an acquisition entered before its attempt",
                        e.line
                    );
                    free += 1;
                }
            }
            _ => {}
        }
    }
    (blocked, free)
}

/// The fast stack walker (HotSpot's `AsyncGetCallTrace`, the default) gives exactly the frames
/// JVMTI's `GetStackTrace` gives (`stackwalk=jvmti`): every event of PingPong with its whole
/// stack, by thread name, in both modes, and it did walk most of them (the exit line says how
/// many).
#[test]
fn fast_stack_walker_gives_the_frames_jvmti_gives() {
    for (jdk, mode) in jdks_and_modes() {
        let stacks = |walker: &str| {
            let run = run(
                &format!("walker-{}-{walker}", tag(mode)),
                jdk,
                &format!("{mode},stackwalk={walker}"),
                "PingPong",
                &[],
            );
            assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
            let log = run.log();
            assert_valid(&run, &log);
            let mut all: Vec<String> = log
                .events
                .iter()
                .filter(|e| {
                    !e.frames.is_empty()
                        && !e.name.starts_with("MonitorContended")
                        && !e.name.ends_with("Holds")
                        && !matches!(e.name.as_str(), "LockOrder" | "MonitorHold" | "LockHold")
                })
                .filter_map(|e| {
                    let thread = log.thread_names.get(&e.thread)?;
                    let frames: Vec<String> = e
                        .frames
                        .iter()
                        .map(|&(m, loc)| {
                            format!("{}@{loc}", without_addresses(&log.method_name(m)))
                        })
                        .collect();
                    Some(format!("{thread} {} {}", e.name, frames.join(" ")))
                })
                .collect();
            all.sort();
            (all, run.stderr)
        };
        let (fast, stderr) = stacks("fast");
        let (slow, _) = stacks("jvmti");
        assert!(
            fast.len() >= 20,
            "{} {mode}: {} events",
            jdk.label(),
            fast.len()
        );
        assert_eq!(fast, slow, "{} {mode}", jdk.label());
        let walked = stderr
            .lines()
            .find_map(|l| {
                let (head, _) = l.split_once(" stacks walked fast")?;
                let (fast, all) = head.rsplit(", ").next()?.split_once(" of ")?;
                Some((fast.parse::<u64>().ok()?, all.parse::<u64>().ok()?))
            })
            .unwrap_or_else(|| panic!("{} {mode}: no walker count in {stderr}", jdk.label()));
        assert!(
            walked.0 * 2 > walked.1,
            "{} {mode}: only {} of {} stacks walked fast",
            jdk.label(),
            walked.0,
            walked.1
        );
    }
}

/// A program that locks more fresh objects than the agent names, then notifies 20,000 fresh
/// objects of another class (tests/java/NamedLater.java), each notify an event
/// (`notifies=events`): every one of those is named (its `ObjectClass` line), because the
/// monitors the tracker sees taken fill at most half of the agent's table of names, and the
/// agent says once that it names no more of those. (Before, the tracker's monitors filled the
/// table until a name found no room, and later objects of events found little.) With
/// `tracking=full`, so that every monitor taken is named (by default a sample is).
#[test]
fn objects_of_events_after_many_fresh_monitors_are_still_named() {
    const LATER: usize = 20_000;
    let at = marker_line("NamedLater.java", "late-notify");
    for jdk in jdks() {
        let run = run(
            "named-later",
            jdk,
            "notifies=events,tracking=full",
            "NamedLater",
            &["400000", &LATER.to_string()],
        );
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        let log = run.log();
        assert_valid(&run, &log);
        let notified: Vec<u32> = log
            .events
            .iter()
            .filter(|e| {
                e.name == "ObjectNotify" && log.line_of(e.frames[0].0, e.frames[0].1) == Some(at)
            })
            .filter_map(|e| e.object)
            .collect();
        assert_eq!(notified.len(), LATER, "{}: notify events", jdk.label());
        let unnamed = notified
            .iter()
            .filter(|o| log.object_classes.get(o).map(String::as_str) != Some("LNamedLater$Late;"))
            .count();
        assert_eq!(unnamed, 0, "{}: notified objects not named", jdk.label());
        assert_eq!(
            run.stderr
                .matches("more monitors and locks taken than the agent names")
                .count(),
            1,
            "{}: {}",
            jdk.label(),
            run.stderr
        );
    }
}
