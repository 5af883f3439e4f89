//! Every way a JVM ends leaves complete files (a torn last line only after `kill -9`).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use orca_tests::*;

const NOTIFIES: usize = 2000;

fn notifies_from_main(log: &Log) -> usize {
    log.events
        .iter()
        .filter(|e| {
            e.name == "ObjectNotify"
                && e.frames
                    .first()
                    .is_some_and(|f| log.method_name(f.0) == "Exits.main")
        })
        .count()
}

#[test]
fn orderly_ends_write_everything() {
    for jdk in jdks() {
        for (how, code) in [("exit", 3), ("exit-many", 4), ("throw", 1), ("halt", 5)] {
            let run = run(&format!("exit-{how}"), jdk, "", "Exits", &[how]);
            let ctx = format!("{} {how}: stderr:\n{}", jdk.label(), run.stderr);
            assert_eq!(run.code, Some(code), "{ctx}");
            assert!(run.stdout.contains("ready"), "{ctx}");
            let log = run.log();
            assert!(!log.torn, "{ctx}");
            assert_valid(&run, &log);
            assert_eq!(notifies_from_main(&log), NOTIFIES, "{ctx}");
            assert!(run.stderr.contains("; wrote "), "exit line missing: {ctx}");
            assert!(
                run.stderr
                    .contains(&format!("{} events, 0 dropped", log.events.len())),
                "the exit line counts every event: {ctx}"
            );
        }
    }
}

/// Starts Exits in `wait` mode and returns once it printed "ready".
fn start_waiting(test: &str, jdk: &Jdk) -> (std::process::Child, std::path::PathBuf) {
    let prefix = prefix_for(test, jdk);
    let mut cmd = java_command(jdk, &prefix.display().to_string(), &[], "Exits", &["wait"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("ready") {}
    assert!(line.contains("ready"), "{}: no ready line", jdk.label());
    (child, prefix)
}

fn signal(child: &std::process::Child, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn sigterm_writes_everything() {
    for jdk in jdks() {
        let (mut child, prefix) = start_waiting("sigterm", jdk);
        signal(&child, "-TERM");
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(143), "{}: {stderr}", jdk.label());
        let run = Run {
            prefix,
            code: status.code(),
            stdout: String::new(),
            stderr,
        };
        let log = run.log();
        assert!(!log.torn);
        assert_valid(&run, &log);
        assert_eq!(notifies_from_main(&log), NOTIFIES);
        assert!(run.stderr.contains("; wrote "), "{}", run.stderr);
    }
}

#[test]
fn kill_9_loses_at_most_a_torn_tail() {
    for jdk in jdks() {
        let (mut child, prefix) = start_waiting("kill9", jdk);
        // The writer flushes at least every 100 ms when idle.
        std::thread::sleep(Duration::from_millis(500));
        signal(&child, "-KILL");
        child.wait().unwrap();
        let run = Run {
            prefix,
            code: None,
            stdout: String::new(),
            stderr: String::new(),
        };
        let log = run.log();
        assert_valid(&run, &log);
        assert_eq!(
            notifies_from_main(&log),
            NOTIFIES,
            "{}: events before the kill were flushed",
            jdk.label()
        );
    }
}

#[test]
fn the_output_folder_vanishing_mid_run_breaks_nothing() {
    for jdk in jdks() {
        let (mut child, prefix) = start_waiting("vanish", jdk);
        // The files stay open: on Linux the writer goes on writing to the unlinked files.
        std::fs::remove_dir_all(prefix.parent().unwrap()).unwrap();
        signal(&child, "-TERM");
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(143), "{}: {stderr}", jdk.label());
        assert!(stderr.contains("; wrote "), "{}: {stderr}", jdk.label());
        assert!(!stderr.contains("internal error"));
    }
}
