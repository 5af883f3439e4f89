//! Issue 27: the tracker's natives are bound with `RegisterNatives`, called from the tracker's
//! own static initializer (through its one native found by its JNI name), so the JVM prints
//! nothing of its own: HotSpot warns, on the program's standard output, when a class of
//! `java.base` has natives registered by a caller of another loader or by no caller at all.
//! The program's output is compared byte for byte with a run without the agent, `-Xcheck:jni`
//! too; and the library exports that one tracker symbol only.

use std::process::Command;

use orca_tests::*;

/// Programs whose output is the same in every run, with their arguments: monitors, every
/// tracked blocking call interrupted, j.u.c. locks (exceptions and interrupts, with stack
/// traces printed), a thread pool (JDK code rewritten with `jdk=yes`); and one that dies of
/// an uncaught exception, whose trace is on stderr.
const PROGRAMS: &[(&str, &[&str])] = &[
    ("Interrupts", &[]),
    ("JucExceptions", &[]),
    ("JucInterrupts", &[]),
    ("PoolWork", &[]),
    ("Troubles", &["imse"]),
    ("JucLocks", &[]),
];

/// Option sets that between them reach the tracker's natives in their different uses: the
/// default summaries with every hold written as a long hold (`register`, `flush`, `longHold`,
/// `lockLongHold`, the j.u.c. calls written in full), and the complete trace of the JDK's code
/// too, with stacks (`stack`, `lockEnter`, `lockEnd`, the hooks, and on JDK 17 the inline
/// calls of `Object.wait(long)`); `-Xcheck:jni` checks each call they make.
const OPTIONS: &[&str] = &[
    "mode=instrument,holdthreshold=0",
    "mode=instrument,jdk=yes,trace=all,stackdepth=4",
];

/// `text` without the agent's own `orca: ` lines.
fn without_orca_lines(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| !l.starts_with("orca: "))
        .collect()
}

#[test]
fn the_program_output_is_byte_identical_with_and_without_the_agent() {
    for jdk in jdks() {
        for (main, args) in PROGRAMS {
            let plain = run_plain(jdk, main, args);
            let plain_out = String::from_utf8_lossy(&plain.stdout);
            let plain_err = String::from_utf8_lossy(&plain.stderr);
            assert!(
                !plain_out.is_empty() || !plain_err.is_empty(),
                "{} {main}: no output to compare",
                jdk.label()
            );
            for (k, options) in OPTIONS.iter().enumerate() {
                for check in [None, Some("-Xcheck:jni")] {
                    let jvm_args: Vec<&str> = check.into_iter().collect();
                    let what = format!("{} {main} {options} {jvm_args:?}", jdk.label());
                    let run = run_with(
                        &format!("natives-{main}-{k}-{}", check.is_some()),
                        jdk,
                        options,
                        &jvm_args,
                        main,
                        args,
                    );
                    assert_eq!(run.code, plain.status.code(), "{what}: {}", run.stderr);
                    assert!(
                        run.stderr.contains("orca: recording"),
                        "{what}: the agent did not start: {}",
                        run.stderr
                    );
                    assert!(
                        !run.stderr.contains("recording without instrumentation"),
                        "{what}: the tracker was not installed: {}",
                        run.stderr
                    );
                    assert_eq!(run.stdout, plain_out, "{what}: stdout");
                    assert_eq!(
                        without_orca_lines(&run.stderr),
                        plain_err,
                        "{what}: stderr apart from the agent's lines"
                    );
                }
            }
        }
    }
}

#[test]
fn the_library_exports_one_tracker_native() {
    let out = Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(agent_path())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run nm ({e}): install Debian's binutils (scripts/ensure-tools does)")
        });
    assert!(
        out.status.success(),
        "nm -D: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let symbols = String::from_utf8_lossy(&out.stdout);
    let tracker: Vec<&str> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| s.starts_with("Java_java_lang_OrcaProfilerTracker_"))
        .collect();
    assert_eq!(tracker, ["Java_java_lang_OrcaProfilerTracker_bind"]);
    // Still an agent: the JVM finds these by name.
    for entry in ["Agent_OnLoad", "Agent_OnAttach", "Agent_OnUnload"] {
        assert!(
            symbols.lines().any(|l| l.ends_with(&format!(" {entry}"))),
            "{entry} not exported:\n{symbols}"
        );
    }
}

/// A copy of the agent whose `bind` symbol the JVM cannot find (renamed in the dynamic symbol
/// table, same length): the tracker's static initializer catches the UnsatisfiedLinkError,
/// and the agent says once that it records without instrumentation; the program runs as
/// without the agent.
#[test]
fn without_its_bind_symbol_the_agent_says_so_and_the_program_runs_unchanged() {
    let from: &[u8] = b"Java_java_lang_OrcaProfilerTracker_bind\0";
    let to: &[u8] = b"Java_java_lang_OrcaProfilerTracker_bin_\0";
    let mut bytes = std::fs::read(agent_path()).expect("read liborca.so");
    let mut renamed = 0;
    let mut i = 0;
    while let Some(k) = bytes[i..].windows(from.len()).position(|w| w == from) {
        bytes[i + k..i + k + to.len()].copy_from_slice(to);
        renamed += 1;
        i += k + to.len();
    }
    assert!(renamed > 0, "no bind symbol in liborca.so");
    let dir = work_dir().join("natives-unbound");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agent = dir.join("liborca.so");
    std::fs::write(&agent, &bytes).unwrap();
    for jdk in jdks() {
        let plain = run_plain(jdk, "Interrupts", &[]);
        let mut c = Command::new(jdk.java());
        c.arg(format!(
            "-agentpath:{}={},mode=instrument",
            agent.display(),
            dir.join(jdk.label()).display()
        ))
        .arg("-Xcheck:jni")
        .arg("-cp")
        .arg(test_classes())
        .arg("Interrupts");
        let out = output_with_timeout(c, 120);
        let what = jdk.label();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
        assert_eq!(out.stdout, plain.stdout, "{what}: stdout");
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("cannot bind the native methods"))
            .collect();
        assert_eq!(said.len(), 1, "{what}: {stderr}");
        assert!(
            said[0].contains("recording without instrumentation"),
            "{what}: {stderr}"
        );
        assert_eq!(without_orca_lines(&stderr), "", "{what}: stderr");
    }
}
