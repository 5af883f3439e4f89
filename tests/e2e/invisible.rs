//! Issue 12: the program cannot tell it is instrumented. `Invisible` prints every stack trace
//! it can observe around the tracked calls (each exception each call can throw, through
//! reflection and method handles too; StackWalker with and without SHOW_REFLECT_FRAMES and a
//! Throwable inside overrides of tracked methods; `Thread.getStackTrace` and
//! `Thread.getAllStackTraces` of threads blocked in every tracked blocking call), and the test
//! takes a `jcmd <pid> Thread.print` while those threads are blocked. Without the agent, with
//! it in instrumentation mode (classes verified; `jdk=no` and `jdk=yes`) and in JVMTI mode: the
//! same output byte for byte, and the same frames of the blocked threads in the thread dump,
//! on every JDK.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use orca_tests::*;

/// The threads `Invisible` keeps blocked while the dump is taken.
const BLOCKED: &[&str] = &[
    "target",
    "subclass-sleeper",
    "timed-waiter",
    "waiter",
    "joiner",
    "acquirer",
    "timed-acquirer",
];

/// The frame lines (`at ...`, `- waiting on ...`) of the blocked threads in a thread dump.
fn blocked_frames(dump: &str) -> String {
    let mut out = String::new();
    for block in dump.split("\n\n") {
        let Some(name) = block
            .lines()
            .next()
            .and_then(|l| l.strip_prefix('"'))
            .and_then(|l| l.split('"').next())
        else {
            continue;
        };
        if !BLOCKED.contains(&name) {
            continue;
        }
        out.push_str(&format!("\"{name}\"\n"));
        for line in block.lines().skip(1) {
            let t = line.trim_start();
            if t.starts_with("at ") || t.starts_with("- ") {
                out.push_str(&without_addresses(t));
                out.push('\n');
            }
        }
    }
    out
}

/// Runs `Invisible` (agent options, or none), returns its output and the blocked threads'
/// frames of a thread dump taken while they are blocked.
fn observe(jdk: &Jdk, options: Option<&str>) -> (String, String) {
    let mut c = match options {
        Some(o) => {
            let prefix = prefix_for(&format!("invisible-{}", o.replace([',', '='], "-")), jdk);
            java_command(
                jdk,
                &format!("{},{o}", prefix.display()),
                VERIFY_ALL,
                "Invisible",
                &["hold"],
            )
        }
        None => {
            let mut c = Command::new(jdk.java());
            c.args(["-cp"])
                .arg(test_classes())
                .args(["Invisible", "hold"]);
            c
        }
    };
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start java");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if rx
            .recv_timeout(std::time::Duration::from_secs(180))
            .is_err()
        {
            eprintln!("{}", orca_tests::dump_hung(pid));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    loop {
        let mut line = String::new();
        let n = out.read_line(&mut line).unwrap();
        assert!(n > 0, "{}: no READY line:\n{printed}", jdk.label());
        if line.starts_with("READY ") {
            break;
        }
        printed.push_str(&line);
    }
    let dump = Command::new(jdk.home.join("bin/jcmd"))
        .args([&pid.to_string(), "Thread.print"])
        .output()
        .expect("run jcmd");
    assert!(dump.status.success(), "jcmd: {dump:?}");
    let dump = String::from_utf8_lossy(&dump.stdout).into_owned();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    printed.push_str(&rest);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    let _ = tx.send(());
    assert_eq!(status.code(), Some(0), "{} {options:?}: {err}", jdk.label());
    (printed, blocked_frames(&dump))
}

#[test]
fn stack_traces_stack_walks_and_thread_dumps_are_unchanged() {
    for jdk in jdks() {
        let (plain, plain_dump) = observe(jdk, None);
        // the program printed what it should, and the dump holds every blocked thread
        assert!(plain.ends_with("END\n"), "{plain}");
        for what in [
            "wait() unowned: java.lang.IllegalMonitorStateException",
            "wait(-1): java.lang.IllegalArgumentException",
            "sleep(100) interrupted: java.lang.InterruptedException",
            "Worker.sleep(-1): java.lang.IllegalArgumentException",
            "join() interrupted: java.lang.InterruptedException",
            "start() twice: java.lang.IllegalThreadStateException",
            "release(-1): java.lang.IllegalArgumentException",
            "acquire() interrupted: java.lang.InterruptedException",
            "reflect wait() unowned / cause: java.lang.IllegalMonitorStateException",
            "handle notify() unowned: java.lang.IllegalMonitorStateException",
            "Pool.release walk: [Invisible.walk",
            "Worker.start walk: [Invisible.walk",
            "timed-waiter getStackTrace:",
        ] {
            assert!(
                plain.contains(what),
                "{}: no {what:?} in\n{plain}",
                jdk.label()
            );
        }
        for name in BLOCKED {
            assert!(
                plain_dump.contains(&format!("\"{name}\"\n")),
                "{}: {name} not in the dump:\n{plain_dump}",
                jdk.label()
            );
        }
        let with_jdk = format!("{INSTRUMENT},jdk=yes");
        for mode in [MODES[0], MODES[1], with_jdk.as_str()] {
            let (out, dump) = observe(jdk, Some(mode));
            assert_eq!(plain, out, "{} {mode}: the program's output", jdk.label());
            assert_eq!(
                plain_dump,
                dump,
                "{} {mode}: the blocked threads in the thread dump",
                jdk.label()
            );
        }
        println!(
            "{}: {} lines of stack traces and {} lines of thread dump alike with and without the agent",
            jdk.label(),
            plain.lines().count(),
            plain_dump.lines().count()
        );
    }
}
