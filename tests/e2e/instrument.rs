//! Instrumentation mode end to end, with every class verified (`-Xverify:all`
//! `-XX:+BytecodeVerificationLocal`), on every JDK found.

use std::collections::HashMap;

use orca_tests::*;

/// Output with identity hashes (`=` and 8 hex digits) blanked: they differ from run to run.
fn without_hashes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'='
            && b.len() >= i + 9
            && b[i + 1..i + 9]
                .iter()
                .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(c))
        {
            out.push_str("=########");
            i += 9;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The spec's method-call events whose caller is the test program's own code, as
/// (event, thread name, top frame method, line): what both modes must agree on.
fn call_events(log: &Log) -> Vec<(String, String, String, u32)> {
    let mut v: Vec<(String, String, String, u32)> = log
        .events
        .iter()
        .filter(|e| {
            e.name.starts_with("Object")
                || e.name.starts_with("Semaphore")
                || matches!(
                    e.name.as_str(),
                    "ThreadStart" | "ThreadJoin" | "ThreadJoined" | "ThreadSleep" | "ThreadSlept"
                )
        })
        .filter_map(|e| {
            let (m, loc) = *e.frames.first()?;
            let method = log.method_name(m);
            let class = method.rsplit_once('.').map(|(c, _)| c).unwrap_or("");
            if class.contains('.') {
                return None; // a JDK class (java.*, jdk.*): only the program's classes count
            }
            let thread = log.thread_names.get(&e.thread).cloned().unwrap_or_default();
            Some((
                e.name.clone(),
                thread,
                method,
                log.line_of(m, loc).unwrap_or(0),
            ))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn both_modes_report_the_same_calls_at_the_same_lines() {
    for jdk in jdks() {
        for main in [
            "PingPong",
            "SemaphoreHandoff",
            "Nested",
            "Interrupts",
            "Names",
        ] {
            let a = run(
                &format!("parity-jvmti-{main}"),
                jdk,
                "mode=jvmti",
                main,
                &[],
            );
            let b = run_with(
                &format!("parity-instr-{main}"),
                jdk,
                "mode=instrument,trace=all",
                VERIFY_ALL,
                main,
                &[],
            );
            // guarded monitor sites (guards=on) report the same calls at the same lines
            let g = run_with(
                &format!("parity-guards-{main}"),
                jdk,
                "mode=instrument,trace=all,guards=on",
                VERIFY_ALL,
                main,
                &[],
            );
            assert_eq!(
                g.code,
                Some(0),
                "{} {main} guards=on: {}",
                jdk.label(),
                g.stderr
            );
            let lg = g.log();
            assert_valid(&g, &lg);
            assert!(
                lg.settings
                    .as_deref()
                    .is_some_and(|s| s.contains("guards=on")),
                "{main}: settings {:?}",
                lg.settings
            );
            assert_eq!(
                a.code,
                Some(0),
                "{} {main} jvmti: {}",
                jdk.label(),
                a.stderr
            );
            assert_eq!(
                b.code,
                Some(0),
                "{} {main} instrument: {}",
                jdk.label(),
                b.stderr
            );
            assert_eq!(
                without_hashes(&a.stdout),
                without_hashes(&b.stdout),
                "{} {main}: the program's output differs",
                jdk.label()
            );
            let (la, lb) = (a.log(), b.log());
            assert_valid(&a, &la);
            assert_valid(&b, &lb);
            let (ea, eb) = (call_events(&la), call_events(&lb));
            assert!(!ea.is_empty(), "{main}: no events");
            assert_eq!(
                ea,
                eb,
                "{} {main}: jvmti (left) and instrument (right) differ",
                jdk.label()
            );
            assert_eq!(
                eb,
                call_events(&lg),
                "{} {main}: unguarded (left) and guards=on (right) differ",
                jdk.label()
            );
        }
    }
}

fn hashes(stdout: &str) -> HashMap<String, u32> {
    stdout
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), u32::from_str_radix(v, 16).ok()?)))
        .collect()
}

#[test]
fn every_monitor_operation_is_counted_and_exits_balance() {
    // unguarded, and guarded monitor sites (guards=on), whose enters and exits hand each
    // other a value through a local of the frame
    for (jdk, options) in jdks().iter().flat_map(|j| {
        [
            (j, "mode=instrument,trace=all"),
            (j, "mode=instrument,trace=all,guards=on"),
        ]
    }) {
        let run = run_with(
            if options.contains("guards") {
                "monitors-guards"
            } else {
                "monitors"
            },
            jdk,
            options,
            VERIFY_ALL,
            "Monitors",
            &[],
        );
        assert_eq!(
            run.code,
            Some(0),
            "{} {options}: {}",
            jdk.label(),
            run.stderr
        );
        let plain = run_plain(jdk, "Monitors", &[]);
        // Same output, the stack trace thrown through a synchronized block included (line
        // numbers are those of the original class).
        assert_eq!(
            without_hashes(&run.stdout),
            without_hashes(&String::from_utf8_lossy(&plain.stdout)),
            "{}",
            jdk.label()
        );
        assert!(run.stdout.contains(&format!(
            "Monitors.fail(Monitors.java:{})",
            marker_line("Monitors.java", "fail")
        )));
        let h = hashes(&run.stdout);
        let log = run.log();
        assert_valid(&run, &log);
        let n = 50;
        let count = |kind: &str, monitor: &str| {
            log.events
                .iter()
                .filter(|e| e.name == kind && e.object == Some(h[monitor]))
                .count()
        };
        for (monitor, enter, entered_exit) in [
            ("a", 2 * n, 2 * n),
            ("b", 2 * n, 2 * n),
            ("c", 1, 1),
            ("m", 0, 2 * n),
            ("class", 0, n),
        ] {
            assert_eq!(
                count("MonitorEnter", monitor),
                enter,
                "{} MonitorEnter on {monitor}",
                jdk.label()
            );
            assert_eq!(
                count("MonitorEntered", monitor),
                entered_exit,
                "{} MonitorEntered on {monitor}",
                jdk.label()
            );
            assert_eq!(
                count("MonitorExit", monitor),
                entered_exit,
                "{} MonitorExit on {monitor}",
                jdk.label()
            );
        }
        // Per thread, each MonitorEntered is followed by exactly one MonitorExit of the same
        // monitor, innermost first.
        let mut held: HashMap<u32, Vec<u32>> = HashMap::new();
        for e in &log.events {
            match e.name.as_str() {
                "MonitorEntered" => held.entry(e.thread).or_default().push(e.object.unwrap()),
                "MonitorExit" => assert_eq!(
                    held.entry(e.thread).or_default().pop(),
                    e.object,
                    "line {}",
                    e.line
                ),
                _ => {}
            }
        }
        assert!(
            held.values().all(|v| v.is_empty()),
            "{}: held at the end: {held:?}",
            jdk.label()
        );
        // Locations are the original class file's: the MonitorEnter of `c` is on the line of
        // its synchronized statement.
        let c_enter = log
            .events
            .iter()
            .find(|e| e.name == "MonitorEnter" && e.object == Some(h["c"]))
            .unwrap();
        let src = std::fs::read_to_string(root().join("tests/java/Monitors.java")).unwrap();
        let line = src
            .lines()
            .position(|l| l.contains("synchronized (m.c)"))
            .unwrap() as u32
            + 1;
        assert_eq!(
            log.top_frame(c_enter).unwrap(),
            format!("Monitors.main:{line}")
        );
    }
}

/// A `synchronized` method's monitor is locked before the tracker can name it by its identity
/// hash, and on JDK 17 hashing a stack-locked object with no hash yet inflates its monitor. The
/// agent has the constructors of such classes hash `this` (rewriter's `hash_at_birth`, JDK 22
/// and earlier), so the program's 2,000 fresh monitors stay thin, as without the agent. Before
/// that change this run inflated every one of them on JDK 17 (2,000 `inflate(has_locker)`
/// lines); JDK 25's lightweight locking never does.
#[test]
fn fresh_monitors_of_synchronized_methods_are_not_inflated() {
    for jdk in jdks() {
        let prefix = prefix_for("fresh-monitors", jdk);
        let trace = prefix.with_file_name("inflation.log");
        let log_flag = format!("-Xlog:monitorinflation=trace:file={}", trace.display());
        let mut jvm_args = VERIFY_ALL.to_vec();
        jvm_args.push(&log_flag);
        let out = output_with_timeout(
            java_command(
                jdk,
                &prefix.display().to_string(),
                &jvm_args,
                "FreshMonitors",
                &["2000"],
            ),
            300,
        );
        let run = finish(prefix, out);
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.stdout, "calls: 2000\n", "{}", jdk.label());
        let log = run.log();
        assert_valid(&run, &log);
        let text = std::fs::read_to_string(&trace).expect("the JVM's inflation log");
        let inflated: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("inflate") && l.contains("FreshMonitors$Cell"))
            .collect();
        assert!(
            inflated.is_empty(),
            "{}: {} of the 2,000 monitors inflated, e.g. {:?}",
            jdk.label(),
            inflated.len(),
            inflated.first()
        );
        // and every hold is counted (timed or not)
        let holds: u64 = std::fs::read_to_string(run.prefix.with_extension("orca"))
            .unwrap()
            .lines()
            .filter(|l| l.contains(",MonitorHolds,") || l.contains(",MonitorHoldsUntimed,"))
            .map(|l| l.split(',').nth(4).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(holds, 2000, "{}: holds counted", jdk.label());
    }
}

#[test]
fn a_java_util_concurrent_program_runs_unchanged_with_jdk_classes_instrumented() {
    for jdk in jdks() {
        let run = run_with(
            "pool",
            jdk,
            "mode=instrument,jdk=yes,trace=all",
            VERIFY_ALL,
            "PoolWork",
            &[],
        );
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        let plain = run_plain(jdk, "PoolWork", &[]);
        assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout));
        assert_eq!(run.stdout.trim(), "counter=20000 sum=19900 total=39800");
        let log = run.log();
        assert_valid(&run, &log);
        let entered = log
            .events
            .iter()
            .filter(|e| e.name == "MonitorEntered")
            .count();
        assert!(entered >= 20_000, "{entered} MonitorEntered");
        assert!(
            !run.stderr.contains("left uninstrumented (unreadable)"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn javac_compiles_the_same_classes_under_full_instrumentation() {
    // A few hundred generated sources, with synchronized code in them.
    let src = work_dir().join("javac-src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let mut files = Vec::new();
    for i in 0..300 {
        let next = (i + 1) % 300;
        let body = format!(
            "package gen;\npublic class C{i} {{\n    private int n;\n    public synchronized int bump(C{next} other) {{\n        synchronized (this) {{ n++; }}\n        return other == null ? n : n + 1;\n    }}\n    public static String name() {{ return \"C{i}\" + java.util.List.of({i}, {next}); }}\n}}\n"
        );
        let f = src.join(format!("C{i}.java"));
        std::fs::write(&f, body).unwrap();
        files.push(f.display().to_string());
    }
    for jdk in jdks() {
        let out_plain = work_dir().join(format!("javac-out-plain-{}", jdk.label()));
        let out_instr = work_dir().join(format!("javac-out-instr-{}", jdk.label()));
        for d in [&out_plain, &out_instr] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d).unwrap();
        }
        let javac_args = |out: &std::path::Path| {
            let mut a = vec![
                "-m".to_string(),
                "jdk.compiler/com.sun.tools.javac.Main".to_string(),
                "-d".to_string(),
                out.display().to_string(),
            ];
            a.extend(files.iter().cloned());
            a
        };
        let mut plain = std::process::Command::new(jdk.java());
        plain.args(javac_args(&out_plain));
        let plain = output_with_timeout(plain, 300);
        assert!(
            plain.status.success(),
            "{}: {}",
            jdk.label(),
            String::from_utf8_lossy(&plain.stderr)
        );

        let prefix = prefix_for("javac", jdk);
        let mut cmd = std::process::Command::new(jdk.java());
        cmd.arg(format!(
            "-agentpath:{}={},mode=instrument,jdk=yes,trace=all",
            agent_path().display(),
            prefix.display()
        ));
        cmd.args(VERIFY_ALL).args(javac_args(&out_instr));
        let run = finish(prefix, output_with_timeout(cmd, 600));
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        for i in 0..300 {
            let name = format!("gen/C{i}.class");
            let a = std::fs::read(out_plain.join(&name)).unwrap();
            let b = std::fs::read(out_instr.join(&name)).unwrap();
            assert!(a == b, "{}: {name} differs", jdk.label());
        }
        let log = run.log();
        assert_valid(&run, &log);
        let instrumented: u64 = run
            .stderr
            .lines()
            .find_map(|l| {
                let before = l
                    .split(" classes instrumented")
                    .next()
                    .filter(|b| b.len() < l.len())?;
                before.rsplit(' ').next()?.parse().ok()
            })
            .expect("exit line counts instrumented classes");
        // javac's and the JDK's classes with monitors or tracked calls, loaded after start-up.
        assert!(
            instrumented > 30,
            "{}: only {instrumented} classes instrumented",
            jdk.label()
        );
        assert!(!run.stderr.contains("unreadable"), "{}", run.stderr);
    }
}

#[test]
fn virtual_threads_each_get_their_own_state() {
    let newer: Vec<&Jdk> = jdks().iter().filter(|j| j.major >= 21).collect();
    if newer.is_empty() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "orca-tests: no JDK 21+ found: the virtual-thread test did NOT run"
        );
        return;
    }
    for jdk in newer {
        let classes = work_dir().join(format!("classes21-{}", jdk.label()));
        std::fs::create_dir_all(&classes).unwrap();
        let ok = std::process::Command::new(jdk.javac())
            .args(["--release", "21", "-d"])
            .arg(&classes)
            .arg(root().join("tests/java21/VThreads.java"))
            .status()
            .unwrap()
            .success();
        assert!(ok, "javac --release 21 failed");
        let prefix = prefix_for("vthreads", jdk);
        let mut cmd = std::process::Command::new(jdk.java());
        cmd.arg(format!(
            "-agentpath:{}={},mode=instrument,trace=all",
            agent_path().display(),
            prefix.display()
        ));
        cmd.args(VERIFY_ALL)
            .arg("-cp")
            .arg(&classes)
            .arg("VThreads");
        let run = finish(prefix, output_with_timeout(cmd, 120));
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.stdout.trim(), "counter=10000");
        let log = run.log();
        assert_valid(&run, &log);
        let count = |k: &str| log.events.iter().filter(|e| e.name == k).count();
        assert_eq!(
            (
                count("MonitorEnter"),
                count("MonitorEntered"),
                count("MonitorExit")
            ),
            (10_000, 10_000, 10_000)
        );
        assert_eq!((count("ThreadSleep"), count("ThreadSlept")), (100, 100));
        // Each virtual thread is its own thread in the log: 100 distinct sleepers.
        let sleepers: std::collections::HashSet<u32> = log
            .events
            .iter()
            .filter(|e| e.name == "ThreadSleep")
            .map(|e| e.thread)
            .collect();
        assert!(
            sleepers.len() >= 95,
            "{} distinct sleeping threads",
            sleepers.len()
        );
        // Each virtual thread is announced and ended (JVMTI VirtualThreadStart/End), so its
        // state is freed.
        for t in &sleepers {
            let started = log
                .events
                .iter()
                .filter(|e| e.thread == *t && e.name == "ThreadStarted")
                .count();
            let ended = log
                .events
                .iter()
                .filter(|e| e.thread == *t && e.name == "ThreadEnded")
                .count();
            assert_eq!(
                (started, ended),
                (1, 1),
                "{}: virtual thread {t:08X}",
                jdk.label()
            );
        }
    }
}

#[test]
fn no_jni_misuse_under_xcheck_jni() {
    for jdk in jdks() {
        for (main, opts) in [
            ("Monitors", "mode=instrument,trace=all"),
            ("PoolWork", "mode=instrument,jdk=yes,trace=all"),
            ("Interrupts", "mode=instrument,trace=all"),
        ] {
            let run = run_with(
                &format!("xcheck-{main}"),
                jdk,
                opts,
                &["-Xcheck:jni"],
                main,
                &[],
            );
            assert_eq!(run.code, Some(0), "{} {main}: {}", jdk.label(), run.stderr);
            let warnings: Vec<&str> = run
                .stderr
                .lines()
                .filter(|l| l.contains("WARNING") || l.contains("FATAL"))
                .collect();
            assert!(
                warnings.is_empty(),
                "{} {main}: -Xcheck:jni says {warnings:?}",
                jdk.label()
            );
        }
    }
}

/// Generates `Big.java`: `straight` has `blocks` synchronized blocks one after another (its code
/// grows past 32 KiB when rewritten: offsets in the exception table, line table and stack map
/// beyond the signed 16-bit range); `looped` has the same blocks inside a loop (the loop's
/// branches must be widened to `goto_w`, its condition inverted); `huge` is so large that
/// rewriting it would pass 65,535 bytes. Returns the class folder and the line of each block
/// in `straight` and in `looped`.
fn big_class(blocks: usize, huge_blocks: usize) -> (std::path::PathBuf, Vec<u32>, Vec<u32>) {
    let dir = work_dir().join("big");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut src = String::from(
        "public class Big {\n    static final Object lock = new Object();\n    static int count;\n",
    );
    let mut lines = Vec::new();
    let mut looped_lines = Vec::new();
    let block = |k: usize| format!("            synchronized (lock) {{ count += {k}; }}\n");
    src.push_str("    static int straight() {\n        {\n");
    for k in 0..blocks {
        lines.push(src.lines().count() as u32 + 1);
        src.push_str(&block(k));
    }
    src.push_str("        }\n        return count;\n    }\n");
    for (name, n) in [("looped", blocks), ("huge", huge_blocks)] {
        src.push_str(&format!(
            "    static int {name}(int reps) {{\n        for (int i = 0; i < reps; i++) {{\n"
        ));
        for k in 0..n {
            if name == "looped" {
                looped_lines.push(src.lines().count() as u32 + 1);
            }
            src.push_str(&block(k));
        }
        src.push_str("        }\n        return count;\n    }\n");
    }
    src.push_str(
        "    public static void main(String[] a) {\n        int reps = Integer.parseInt(a[0]);\n        for (int r = 0; r < reps; r++) straight();\n        System.out.println(count + \" \" + looped(2) + \" \" + huge(1));\n    }\n}\n",
    );
    std::fs::write(dir.join("Big.java"), src).unwrap();
    let status = std::process::Command::new(jdk17().javac())
        .args(["--release", "11", "-g", "-d"])
        .arg(&dir)
        .arg(dir.join("Big.java"))
        .status()
        .unwrap();
    assert!(status.success(), "javac Big.java");
    (dir, lines, looped_lines)
}

/// Very large methods: one whose rewritten code passes 32 KiB, and one whose loop branches
/// must be widened (the loop condition inverted around a `goto_w`, with a stack map frame the
/// rewriter adds at its fall-through) are instrumented, every event on its own source line;
/// one that would pass the 65,535-byte limit is left as it is, named on stderr with the
/// reason, and counted in the exit line.
#[test]
fn very_large_methods_are_instrumented_or_named_on_stderr() {
    let (blocks, reps) = (1000usize, 3usize);
    let (dir, lines, looped_lines) = big_class(blocks, 1850);
    for jdk in jdks() {
        let prefix = prefix_for("big", jdk);
        let mut cmd = std::process::Command::new(jdk.java());
        cmd.arg(format!(
            "-agentpath:{}={},trace=all",
            agent_path().display(),
            prefix.display()
        ))
        .args(VERIFY_ALL)
        .arg("-cp")
        .arg(&dir)
        .args(["Big", &reps.to_string()]);
        let run = finish(prefix, output_with_timeout(cmd, 300));
        let plain = std::process::Command::new(jdk.java())
            .arg("-cp")
            .arg(&dir)
            .args(["Big", &reps.to_string()])
            .output()
            .unwrap();
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.code, plain.status.code(), "{ctx}");
        assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout), "{ctx}");
        let log = run.log();
        assert_valid(&run, &log);
        let mut per_line: HashMap<(String, u32), usize> = HashMap::new();
        for e in &log.events {
            if !matches!(
                e.name.as_str(),
                "MonitorEnter" | "MonitorEntered" | "MonitorExit"
            ) {
                continue;
            }
            let Some(&(m, loc)) = e.frames.first() else {
                continue;
            };
            let method = log.method_name(m);
            assert!(
                method == "Big.straight" || method == "Big.looped",
                "{method} should not be instrumented: {ctx}"
            );
            *per_line
                .entry((e.name.clone(), log.line_of(m, loc).unwrap_or(0)))
                .or_default() += 1;
        }
        for kind in ["MonitorEnter", "MonitorEntered", "MonitorExit"] {
            // main calls straight() `reps` times and looped(2).
            for (lines, n) in [(&lines, reps), (&looped_lines, 2)] {
                for &line in lines {
                    assert_eq!(
                        per_line.get(&(kind.to_string(), line)).copied(),
                        Some(n),
                        "{kind} at Big.java:{line}: {ctx}"
                    );
                }
            }
        }
        assert_eq!(per_line.len(), 6 * blocks, "{ctx}");
        let said: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("orca: method Big.huge(I)I is left uninstrumented"))
            .collect();
        assert_eq!(said.len(), 1, "{ctx}");
        assert!(
            said[0].contains("would exceed 65535 bytes of code"),
            "{ctx}"
        );
        assert!(
            run.stderr.contains(", 1 methods left uninstrumented"),
            "{ctx}"
        );
    }
}
