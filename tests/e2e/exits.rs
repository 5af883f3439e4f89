//! Every way a JVM ends leaves complete files (a torn last line only after `kill -9` or a
//! crash), and the log says how it ended: a `RecordingEnded` line last when the agent saw the
//! JVM end, none when it was killed or crashed, which `orca check` and `orca report` tell.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use orca_tests::*;

const NOTIFIES: usize = 2000;

/// Every `notify` an event: the program's notifies (nobody waits) are how these tests count
/// what reached the log, line by line, up to the moment the JVM ended (the default counts
/// them in summary lines, written every 10 s and at exit).
const EVENTS: &str = "notifies=events";

fn notifies_logged(log: &Log) -> usize {
    log.events
        .iter()
        .filter(|e| {
            e.name == "ObjectNotify"
                && e.frames
                    .first()
                    .is_some_and(|f| log.method_name(f.0) == "Exits.notifies")
        })
        .count()
}

#[test]
fn orderly_ends_write_everything() {
    for jdk in jdks() {
        for (how, code) in [("exit", 3), ("exit-many", 4), ("throw", 1), ("halt", 5)] {
            let run = run(&format!("exit-{how}"), jdk, EVENTS, "Exits", &[how]);
            let ctx = format!("{} {how}: stderr:\n{}", jdk.label(), run.stderr);
            assert_eq!(run.code, Some(code), "{ctx}");
            assert!(run.stdout.contains("ready"), "{ctx}");
            let log = run.log();
            assert!(!log.torn, "{ctx}");
            assert_valid(&run, &log);
            assert_eq!(notifies_logged(&log), NOTIFIES, "{ctx}");
            assert!(run.stderr.contains("; wrote "), "exit line missing: {ctx}");
            assert!(
                run.stderr
                    .contains(&format!("{} events, 0 dropped", log.lines_written())),
                "the exit line counts every event: {ctx}"
            );
            assert_eq!(log.ended.as_deref(), Some("vmdeath"), "{ctx}");
            if how == "exit-many" {
                // Every exiter started (each has its ThreadStarted) before the first exit.
                let exiters = log
                    .thread_names
                    .values()
                    .filter(|n| n.starts_with("exiter-"))
                    .count();
                assert_eq!(exiters, 16, "{ctx}");
            }
        }
    }
}

/// `orca` (the command, beside the agent) on `prefix`: its standard output.
fn orca(args: &[&str], prefix: &std::path::Path) -> String {
    let bin = agent_path().with_file_name("orca");
    let o = std::process::Command::new(&bin)
        .args(args)
        .arg(prefix)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What `orca check` and `orca report` say of a log that ended in order, and of one cut short.
fn assert_said_ending(prefix: &std::path::Path, in_order: bool, ctx: &str) {
    let said = if in_order {
        "how it ended: the JVM ended in order (VMDeath"
    } else {
        "how it ended: no RecordingEnded line: the JVM was killed (SIGKILL) or crashed"
    };
    let check = orca(&["check"], prefix);
    assert!(check.contains(said), "{ctx}: orca check said:\n{check}");
    assert!(
        check.contains(": valid ("),
        "{ctx}: orca check said:\n{check}"
    );
    let report = orca(&["report"], prefix);
    assert!(report.contains(said), "{ctx}: orca report said:\n{report}");
}

/// An OutOfMemoryError in the program, with the heap filled inside synchronized blocks (so
/// the tracker runs while memory is short): uncaught, it ends the JVM in order; caught, the
/// program goes on and every later event is recorded. Nothing of the agent's reaches the
/// program: the error is the program's own.
#[test]
fn an_out_of_memory_error_ends_the_recording_in_order() {
    for jdk in jdks() {
        for (how, code, notifies) in [("oom", 1, NOTIFIES), ("oom-caught", 0, 2 * NOTIFIES)] {
            let run = run_with(
                &format!("exit-{how}"),
                jdk,
                EVENTS,
                &["-Xmx64m"],
                "Exits",
                &[how],
            );
            let ctx = format!("{} {how}: stderr:\n{}", jdk.label(), run.stderr);
            assert_eq!(run.code, Some(code), "{ctx}");
            if how == "oom" {
                assert!(
                    run.stderr
                        .contains("Exception in thread \"main\" java.lang.OutOfMemoryError"),
                    "{ctx}"
                );
            } else {
                assert!(
                    run.stdout.contains("caught java.lang.OutOfMemoryError"),
                    "{ctx}"
                );
            }
            let log = run.log();
            assert!(!log.torn, "{ctx}");
            assert_valid(&run, &log);
            assert_eq!(notifies_logged(&log), notifies, "{ctx}");
            assert!(
                run.stderr
                    .contains(&format!("{} events, 0 dropped", log.lines_written())),
                "the exit line counts every event: {ctx}"
            );
            assert_eq!(log.ended.as_deref(), Some("vmdeath"), "{ctx}");
            assert_said_ending(&run.prefix, true, &ctx);
        }
    }
}

/// A JVM ended by a fatal error (-XX:+CrashOnOutOfMemoryError: HotSpot reports and aborts,
/// no VMDeath): the log is valid up to its last complete line and has no `RecordingEnded`,
/// so `orca check` and `orca report` say it was killed or crashed. What the writer had
/// flushed before the abort depends on timing: only its upper bound is certain.
#[test]
fn a_fatal_error_leaves_a_valid_log_that_says_it_was_cut_short() {
    for jdk in jdks() {
        let prefix = prefix_for("exit-crash", jdk);
        let dir = prefix.parent().unwrap().to_path_buf();
        let error_file = format!("-XX:ErrorFile={}/hs_err_%p.log", dir.display());
        let mut cmd = java_command(
            jdk,
            &format!("{},{EVENTS}", prefix.display()),
            &[
                "-Xmx64m",
                "-XX:+CrashOnOutOfMemoryError",
                "-XX:-CreateCoredumpOnCrash",
                &error_file,
            ],
            "Exits",
            &["crash"],
        );
        cmd.current_dir(&dir);
        let run = finish(prefix, output_with_timeout(cmd, 300));
        let ctx = format!(
            "{}: stdout:\n{}\nstderr:\n{}",
            jdk.label(),
            run.stdout,
            run.stderr
        );
        assert_ne!(run.code, Some(0), "{ctx}");
        assert!(
            run.stdout
                .contains("Aborting due to java.lang.OutOfMemoryError")
                || run
                    .stderr
                    .contains("Aborting due to java.lang.OutOfMemoryError"),
            "{ctx}"
        );
        assert!(
            !run.stderr.contains("; wrote "),
            "no exit line after a crash: {ctx}"
        );
        let log = run.log();
        assert_valid(&run, &log);
        assert_eq!(log.ended, None, "{ctx}");
        assert!(notifies_logged(&log) <= NOTIFIES, "{ctx}");
        assert_said_ending(&run.prefix, false, &ctx);
    }
}

/// Starts Exits in `wait` mode and returns once it printed "ready".
fn start_waiting(test: &str, jdk: &Jdk) -> (std::process::Child, std::path::PathBuf) {
    let prefix = prefix_for(test, jdk);
    let options = format!("{},{EVENTS}", prefix.display());
    let cmd = java_command(jdk, &options, &[], "Exits", &["wait"]);
    (spawn_until_ready(cmd, jdk), prefix)
}

fn spawn_until_ready(mut cmd: std::process::Command, jdk: &Jdk) -> std::process::Child {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("ready") {}
    assert!(line.contains("ready"), "{}: no ready line", jdk.label());
    child
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
        assert_eq!(notifies_logged(&log), NOTIFIES);
        assert!(run.stderr.contains("; wrote "), "{}", run.stderr);
        assert_eq!(log.ended.as_deref(), Some("vmdeath"), "{}", jdk.label());
        assert_said_ending(&run.prefix, true, &jdk.label());
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
            notifies_logged(&log),
            NOTIFIES,
            "{}: events before the kill were flushed",
            jdk.label()
        );
        assert_eq!(log.ended, None, "{}", jdk.label());
        assert_said_ending(&run.prefix, false, &jdk.label());
    }
}

/// The output folder removed mid-run: the writer goes on writing to the open (unlinked)
/// files, says so once per file, and writes them back at exit, so nothing is lost.
#[test]
fn the_output_folder_vanishing_mid_run_loses_nothing() {
    for jdk in jdks() {
        let (mut child, prefix) = start_waiting("vanish", jdk);
        std::fs::remove_dir_all(prefix.parent().unwrap()).unwrap();
        // The writer looks at its files at every periodic flush (100 ms).
        std::thread::sleep(Duration::from_millis(500));
        signal(&child, "-TERM");
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let ctx = format!("{}: {stderr}", jdk.label());
        assert_eq!(status.code(), Some(143), "{ctx}");
        assert_eq!(
            stderr
                .matches("was deleted during the run (its folder removed?)")
                .count(),
            3,
            "said once per file, during the run: {ctx}"
        );
        assert_eq!(stderr.matches("orca: wrote ").count(), 3, "{ctx}");
        let run = Run {
            prefix,
            code: status.code(),
            stdout: String::new(),
            stderr,
        };
        let log = run.log();
        assert!(!log.torn, "{ctx}");
        assert_valid(&run, &log);
        assert_eq!(notifies_logged(&log), NOTIFIES, "{ctx}");
        assert!(
            run.stderr
                .contains(&format!("{} events, 0 dropped", log.lines_written())),
            "every event is in the written-back file: {ctx}"
        );
    }
}

fn set_mode(dir: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn end_with_sigterm(mut child: std::process::Child, prefix: std::path::PathBuf) -> Run {
    signal(&child, "-TERM");
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    Run {
        prefix,
        code: status.code(),
        stdout: String::new(),
        stderr,
    }
}

/// The output folder made read-only mid-run (the program runs as an unprivileged user, for
/// whom permissions count): the files are already open, so nothing is lost or reported.
#[test]
fn the_output_folder_becoming_read_only_mid_run_loses_nothing() {
    for jdk in jdks() {
        let user = Unprivileged::new("readonly", jdk);
        let dir = user.dir.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        user.give(&dir);
        let prefix = dir.join("run");
        let child = spawn_until_ready(user.java(jdk, (&prefix, EVENTS), "Exits", &["wait"]), jdk);
        set_mode(&dir, 0o555);
        let touch = user
            .command("touch")
            .arg(dir.join("probe"))
            .output()
            .unwrap();
        assert!(
            !touch.status.success(),
            "the folder should be read-only for the JVM's user"
        );
        std::thread::sleep(Duration::from_millis(300));
        let run = end_with_sigterm(child, prefix);
        set_mode(&dir, 0o755);
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.code, Some(143), "{ctx}");
        assert!(!run.stderr.contains("cannot"), "{ctx}");
        let log = run.log();
        assert!(!log.torn, "{ctx}");
        assert_valid(&run, &log);
        assert_eq!(notifies_logged(&log), NOTIFIES, "{ctx}");
        assert!(
            run.stderr
                .contains(&format!("{} events, 0 dropped", log.lines_written())),
            "{ctx}"
        );
    }
}

/// The output folder removed and its parent made read-only: the files cannot be written
/// back at exit. The agent says so once per file with its line count, and the exit line's
/// count of lost lines is their sum; the program's exit is unchanged.
#[test]
fn a_deleted_output_that_cannot_be_written_back_is_counted_as_lost() {
    for jdk in jdks() {
        let user = Unprivileged::new("gone", jdk);
        let top = user.dir.clone();
        let dir = top.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        user.give(&dir);
        let prefix = dir.join("run");
        let child = spawn_until_ready(user.java(jdk, (&prefix, EVENTS), "Exits", &["wait"]), jdk);
        std::fs::remove_dir_all(&dir).unwrap();
        set_mode(&top, 0o555);
        std::thread::sleep(Duration::from_millis(300));
        let run = end_with_sigterm(child, prefix);
        set_mode(&top, 0o755);
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.code, Some(143), "{ctx}");
        let lost_per_file: Vec<u64> = run
            .stderr
            .lines()
            .filter(|l| l.contains("cannot be written back (Permission denied"))
            .map(|l| {
                l.split("; its ")
                    .nth(1)
                    .and_then(|t| t.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("no line count in {l:?}"))
            })
            .collect();
        assert_eq!(lost_per_file.len(), 3, "{ctx}");
        assert!(lost_per_file[0] >= NOTIFIES as u64, "{ctx}");
        let total: u64 = lost_per_file.iter().sum();
        assert!(
            run.stderr
                .contains(&format!(", {total} lines lost to write errors,")),
            "{ctx}"
        );
        assert!(!dir.exists());
    }
}
