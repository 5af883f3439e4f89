//! What the rewriter inserts must not keep the JIT from compiling a method. C1 gives up on a
//! method ("exception handler covers itself") when a call it must treat as throwing sits in
//! the block an exception handler begins and that handler covers: javac's catch-all handler of
//! a `synchronized` block covers its own `monitorexit`, which C1 treats as not throwing, but a
//! tracker call placed beside it is a call. A method C1 skips runs interpreted until C2 takes it
//! (Derby's `EmbedResultSet.movePosition`, a try/finally inside a `synchronized` block, did).
//!
//! Every method of tests/java/JitShapes.java is compiled at its first call (`-Xcomp`), once with
//! C1 only and once with C2 only, with and without the agent; the agent must add no
//! `COMPILE SKIPPED` line and must not change the program's output.

use std::process::Command;

use orca_tests::*;

/// The JIT flags of one compiler, `-Xcomp` limited to the test's class.
const COMPILERS: &[(&str, &[&str])] = &[
    ("C1", &["-XX:TieredStopAtLevel=1"]),
    ("C2", &["-XX:-TieredCompilation"]),
];

const COMMON: &[&str] = &[
    "-Xcomp",
    "-XX:+PrintCompilation",
    "-XX:CompileCommand=quiet",
    "-XX:CompileCommand=compileonly,JitShapes::*",
    "-XX:CompileCommand=dontinline,JitShapes::*",
];

/// The `JitShapes` methods a run's compilation log says were skipped, with the reason.
fn skipped(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout
        .lines()
        .filter(|l| l.contains("COMPILE SKIPPED") && l.contains("JitShapes::"))
        .map(|l| {
            let method = l
                .split_whitespace()
                .find(|w| w.starts_with("JitShapes::"))
                .unwrap_or("?");
            let reason = l.split("COMPILE SKIPPED").nth(1).unwrap_or("").trim();
            format!("{method} {reason}")
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The program's own line, without the compilation log.
fn result_line(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with("done "))
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_rewrite_keeps_every_method_compilable_by_c1_and_c2() {
    for jdk in jdks() {
        for (compiler, flags) in COMPILERS {
            let jvm_args: Vec<&str> = flags.iter().chain(COMMON).copied().collect();
            let mut plain = Command::new(jdk.java());
            plain
                .args(&jvm_args)
                .arg("-cp")
                .arg(test_classes())
                .arg("JitShapes");
            let plain = output_with_timeout(plain, 300);
            let plain_out = String::from_utf8_lossy(&plain.stdout).into_owned();
            assert!(
                plain.status.success(),
                "{} {compiler} without the agent failed",
                jdk.label()
            );
            let compiled = plain_out
                .lines()
                .filter(|l| l.contains("JitShapes::"))
                .count();
            assert!(
                compiled >= 10,
                "{} {compiler}: only {compiled} compilations of JitShapes printed; the flags did \
                 not force compilation:\n{plain_out}",
                jdk.label()
            );
            let before = skipped(&plain_out);

            for options in ["mode=instrument", "mode=instrument,trace=all"] {
                let what = format!("{} {compiler} {options}", jdk.label());
                let run = run_with(
                    &format!("jit-{compiler}-{}", options.len()),
                    jdk,
                    options,
                    &jvm_args,
                    "JitShapes",
                    &[],
                );
                assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
                assert_eq!(
                    result_line(&run.stdout),
                    result_line(&plain_out),
                    "{what}: the program's result changed"
                );
                let after = skipped(&run.stdout);
                let added: Vec<&String> = after.iter().filter(|s| !before.contains(s)).collect();
                assert!(
                    added.is_empty(),
                    "{what}: the JIT skips methods it compiles without the agent: {added:?}"
                );
            }
        }
    }
}

/// An uncontended j.u.c. lock call's reports cost one call into the tracker at each end, not
/// more: the tracker's public lock reports are small enough for C2 to inline into the hooked
/// method (`lockEntry`, `lockExit`, `lockExitZ` and their `ending`), so that a lock call run by
/// the outermost one (AQS's `release` inside `unlock`) costs no call, and only the outermost
/// call's reports (`lockBegin`, `lockDone`) are calls.
#[test]
fn the_lock_reports_common_path_is_inlined_into_the_hooked_methods() {
    const REPORTS: [&str; 4] = ["lockEntry", "lockExit", "lockExitZ", "ending"];
    // C2 only, one compiler thread, the inlining of JucHotPath.pairs printed (with the hooked
    // methods and the reports inlined into it); InlineSmallCode as a tiered JVM has it (C2
    // alone has 1000), so that the hooked methods inline into pairs as they do by default.
    let jvm_args = [
        "-XX:-TieredCompilation",
        "-XX:CICompilerCount=1",
        "-XX:InlineSmallCode=2500",
        "-XX:+UnlockDiagnosticVMOptions",
        "-XX:CompileCommand=quiet",
        "-XX:CompileCommand=PrintInlining,JucHotPath::pairs",
    ];
    for jdk in jdks() {
        let what = jdk.label();
        let run = run_with(
            "jit-juc-inline",
            jdk,
            "mode=instrument",
            &jvm_args,
            "JucHotPath",
            &["3000"],
        );
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        assert!(
            run.stdout.contains("JucHotPath counter=6000000"),
            "{what}: {}",
            run.stdout
        );
        for name in REPORTS {
            let sites: Vec<&str> = run
                .stdout
                .lines()
                .filter(|l| l.contains(&format!("OrcaProfilerTracker::{name} (")))
                .collect();
            assert!(
                !sites.is_empty(),
                "{what}: C2 inlined no {name} into JucHotPath.pairs:\n{}",
                run.stdout
            );
            for l in sites {
                assert!(
                    l.contains("inline (hot)"),
                    "{what}: {name} not inlined into the hooked method:\n{l}\n{}",
                    run.stdout
                );
            }
        }
    }
}
