//! Issue 12: instrumentation mode records the call events JVMTI mode records, with the same
//! thread, subject and caller frame (method, location, line), whoever the caller is.
//!
//! `ParityCalls` runs in both modes on every JDK; the multisets of call events, each keyed by
//! (event, thread name, subject, top frame), must be equal. One documented exception
//! (rewriter/README.md, "Decision: hooks and call sites"): a tracked method that is *native*
//! in the running JVM (`notify`/`notifyAll` everywhere; `Object.wait(long)` and
//! `Thread.sleep(long)` on JDK 17) cannot be hooked, so instrumentation mode sees it only
//! where application code calls it; calls of it made by JDK code (reflection's and method
//! handles' own frames included) are JVMTI mode's alone. Those, and only those, are set
//! aside, and instrumentation mode must have none that JVMTI mode lacks.

use std::collections::{BTreeMap, HashMap};

use orca_tests::*;

const CALLS: &[&str] = &[
    "ObjectWait",
    "ObjectWaited",
    "ObjectNotify",
    "ObjectNotifyAll",
    "ThreadStart",
    "ThreadJoin",
    "ThreadJoined",
    "ThreadSleep",
    "ThreadSlept",
    "SemaphoreAcquire",
    "SemaphoreAcquired",
    "SemaphoreRelease",
];

/// The JDK's own threads: their calls begin around VMInit, sooner or later from run to run.
const JDK_THREADS: &[&str] = &[
    "Reference Handler",
    "Finalizer",
    "Signal Dispatcher",
    "Common-Cleaner",
    "Notification Thread",
    "Attach Listener",
];

/// Whether the call of an event is native in this JDK (see the module comment).
fn native_call(kind: &str, jdk: &Jdk) -> bool {
    match kind {
        "ObjectNotify" | "ObjectNotifyAll" => true,
        "ObjectWait" | "ObjectWaited" | "ThreadSleep" | "ThreadSlept" => jdk.major < 21,
        _ => false,
    }
}

type Key = (String, String, String, String);

/// (compared, set aside) call events of one run, each a count by key.
fn call_events(run: &Run, jdk: &Jdk) -> (BTreeMap<Key, usize>, BTreeMap<Key, usize>) {
    let log = run.log();
    assert_valid(run, &log);
    let mut subjects: HashMap<u32, String> = log
        .thread_names
        .iter()
        .map(|(id, name)| (*id, format!("thread {name}")))
        .collect();
    for line in run.stdout.lines() {
        if let Some(rest) = line.strip_prefix("subject ") {
            let (name, hash) = rest.split_once(' ').expect("subject NAME HASH");
            subjects.insert(u32::from_str_radix(hash, 16).unwrap(), name.to_string());
        }
    }
    let mut compared = BTreeMap::new();
    let mut aside = BTreeMap::new();
    for e in &log.events {
        if !CALLS.contains(&e.name.as_str()) {
            continue;
        }
        let thread = log.thread_names.get(&e.thread).cloned().unwrap_or_default();
        if JDK_THREADS.contains(&thread.as_str()) {
            continue;
        }
        let subject = match e.object {
            None | Some(0) => "-".to_string(),
            Some(h) => subjects
                .get(&h)
                .cloned()
                .unwrap_or_else(|| "unnamed".into()),
        };
        let (m, loc) = *e.frames.first().expect("a call event has a frame");
        let method = without_addresses(&log.method_name(m));
        let top = format!(
            "{method}@{}:{}",
            loc as i64,
            log.line_of(m, loc).map_or("?".into(), |l| l.to_string())
        );
        let jdk_caller = ["java.", "jdk.", "sun."]
            .iter()
            .any(|p| method.starts_with(p));
        let key = (e.name.clone(), thread, subject, top);
        let into = if jdk_caller && native_call(&e.name, jdk) {
            &mut aside
        } else {
            &mut compared
        };
        *into.entry(key).or_insert(0) += 1;
    }
    (compared, aside)
}

fn difference(a: &BTreeMap<Key, usize>, b: &BTreeMap<Key, usize>) -> Vec<String> {
    let mut out = Vec::new();
    for k in a.keys().chain(b.keys()) {
        let (x, y) = (
            a.get(k).copied().unwrap_or(0),
            b.get(k).copied().unwrap_or(0),
        );
        if x != y && !out.iter().any(|l: &String| l.ends_with(&format!("{k:?}"))) {
            out.push(format!("jvmti {x} instrument {y}: {k:?}"));
        }
    }
    out
}

#[test]
fn both_modes_record_the_same_calls_with_the_same_callers() {
    for jdk in jdks() {
        let mut results = Vec::new();
        // jdk=yes too: the JDK's own call sites of the natives are rewritten then, inside the
        // hooked methods (Object.wait() calling wait(0) on JDK 17), and every hooked call
        // that throws from such a call must still end once.
        let with_jdk = format!("{INSTRUMENT},jdk=yes");
        for mode in [MODES[0], MODES[1], with_jdk.as_str()] {
            let mut flags = vec!["-Djava.util.concurrent.ForkJoinPool.common.parallelism=1"];
            flags.extend_from_slice(VERIFY_ALL);
            let run = run_with(
                &format!("parity-{}", mode.replace([',', '='], "-")),
                jdk,
                mode,
                &flags,
                "ParityCalls",
                &[],
            );
            assert_eq!(run.code, Some(0), "{} {mode}: {}", jdk.label(), run.stderr);
            assert!(run.stdout.contains("parity done"), "{}", run.stdout);
            results.push(call_events(&run, jdk));
        }
        let (jvmti, jvmti_aside) = &results[0];
        for (i, (instrument, instrument_aside)) in results.iter().enumerate().skip(1) {
            let jdk_too = if i == 2 { " (jdk=yes)" } else { "" };
            let diff = difference(jvmti, instrument);
            assert!(
                diff.is_empty(),
                "{}{jdk_too}: the modes differ:\n{}",
                jdk.label(),
                diff.join("\n")
            );
            // What was set aside: JVMTI mode's only, never an extra of instrumentation mode.
            for (k, n) in instrument_aside {
                assert!(
                    jvmti_aside.get(k).is_some_and(|m| m >= n),
                    "{}{jdk_too}: instrumentation mode recorded {k:?} {n} times, JVMTI mode not",
                    jdk.label()
                );
            }
        }
        // The cases are there: a test that compares nothing proves nothing.
        let has = |kind: &str, top: &str| jvmti.keys().any(|k| k.0 == kind && k.3.starts_with(top));
        for (kind, top) in [
            ("ThreadStart", "ParityCalls$Starter.start"),
            ("ThreadStart", "java.lang.invoke.LambdaForm$DMH"),
            ("ThreadSleep", "ParityCalls.main"),
            ("ThreadSleep", "ParityCalls$Interrupted.run"),
            ("ThreadJoin", "ParityCalls$Interrupted.run"),
            ("ObjectWait", "ParityCalls$Interrupted.run"),
            ("SemaphoreAcquire", "ParityCalls$Interrupted.run"),
            ("SemaphoreRelease", "ParityCalls$Pool.release"),
            ("SemaphoreAcquire", "ParityCalls$Pool.acquire"),
            ("SemaphoreAcquire", "ParityCalls.main"),
        ] {
            assert!(has(kind, top), "{}: no {kind} from {top}", jdk.label());
        }
        // Threads the JDK starts for the program: from the executors themselves on JDK 17,
        // through JavaLangAccess.start (System$1) on JDK 21 and later.
        let starts = |top: &str| -> usize {
            jvmti
                .iter()
                .filter(|(k, _)| k.0 == "ThreadStart" && k.3.starts_with(top))
                .map(|(_, n)| n)
                .sum()
        };
        if jdk.major < 21 {
            assert_eq!(
                starts("java.util.concurrent.ThreadPoolExecutor.addWorker"),
                2
            );
            assert_eq!(starts("java.util.concurrent.ForkJoinPool.createWorker"), 1);
            assert!(starts("java.util.concurrent.CompletableFuture") >= 2);
            assert_eq!(
                starts("jdk.internal.reflect.NativeMethodAccessorImpl.invoke0"),
                1
            );
        } else {
            assert!(starts("java.lang.System$1.start") >= 3, "{}", jdk.label());
        }
        println!(
            "{}: {} call events alike in both modes ({} kinds of caller); set aside (natives called by the JDK): {}",
            jdk.label(),
            jvmti.values().sum::<usize>(),
            jvmti.len(),
            jvmti_aside.values().sum::<usize>()
        );
    }
}
