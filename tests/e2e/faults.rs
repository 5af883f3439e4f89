//! Faults in the agent's world: a full disk, a disk slower than the events, many threads,
//! its own writer thread stopped or stuck at exit.
//! In each case the program's own output and exit code are those of a run without the agent.

use std::process::Command;
use std::time::{Duration, Instant};

use orca_tests::*;

/// What is at an output path is not a file Orca may replace (issue 47): a link to someone's
/// file, a link to a folder, a FIFO, and (run as root) a file of another user. Each is refused
/// with one line naming the path and what to do, nothing there is touched, no log file is
/// emptied, and the JVM runs on unrecorded, its output and exit code unchanged.
#[test]
fn outputs_that_are_not_our_files_are_refused_and_the_program_runs_on() {
    let jdk = jdk17();
    let plain = run_plain(jdk, "PingPong", &[]);
    let id = Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&id.stdout).trim() == "0";
    let mut cases = vec!["link-to-file", "link-to-folder", "fifo", "methods-link"];
    if root {
        cases.push("other-user");
    } else {
        eprintln!("not root: the other user's file case cannot be made here");
    }
    for case in cases {
        let prefix = prefix_for(&format!("refused-{case}"), jdk);
        let dir = prefix.parent().unwrap().to_path_buf();
        let orca = dir.join("run.orca");
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // A log of an earlier run, which a refusal must not empty.
        std::fs::write(dir.join("run.classtable"), "earlier").unwrap();
        let refused = match case {
            "link-to-file" => {
                std::os::unix::fs::symlink(&victim, &orca).unwrap();
                orca.clone()
            }
            "link-to-folder" => {
                std::os::unix::fs::symlink(&dir, &orca).unwrap();
                orca.clone()
            }
            "fifo" => {
                assert!(Command::new("mkfifo")
                    .arg(&orca)
                    .status()
                    .unwrap()
                    .success());
                orca.clone()
            }
            "methods-link" => {
                let methods = dir.join("run.methods");
                std::os::unix::fs::symlink(&victim, &methods).unwrap();
                methods
            }
            _ => {
                std::fs::write(&orca, "theirs").unwrap();
                assert!(Command::new("chown")
                    .args(["65534:65534"])
                    .arg(&orca)
                    .status()
                    .unwrap()
                    .success());
                orca.clone()
            }
        };
        let out = output_with_timeout(
            java_command(jdk, &prefix.display().to_string(), &[], "PingPong", &[]),
            120,
        );
        let run = finish(prefix.clone(), out);
        let ctx = format!("{case}: {}", run.stderr);
        assert_eq!(run.code, plain.status.code(), "{ctx}");
        assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout), "{ctx}");
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("orca:"))
            .collect();
        assert_eq!(lines.len(), 1, "{ctx}");
        let why = match case {
            "fifo" => "is a FIFO, not a regular file",
            "other-user" => "belongs to user 65534, not to this user (0)",
            _ => "is a symbolic link; Orca does not write through links",
        };
        assert!(
            lines[0].starts_with("orca: not recording, the program runs on without Orca: ")
                && lines[0].contains(&format!("{}: {why}", refused.display())),
            "{ctx}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{ctx}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("run.classtable")).unwrap(),
            "earlier",
            "{ctx}"
        );
        if case == "other-user" {
            assert_eq!(std::fs::read_to_string(&orca).unwrap(), "theirs", "{ctx}");
        }
        // not a recording: scripts/check-logs checks every one the suite leaves
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The disk fills up mid-run: the output is on a 4 MiB tmpfs (mounted in a user and mount
/// namespace of the test's own, `unshare -Urm`) and the program writes far more. The agent says
/// it once, cuts the event file back to its last complete flush (no torn line), counts every
/// line it could not write, and the program's output and exit code are unchanged.
#[test]
fn a_disk_filling_up_mid_run_is_said_once_and_counted() {
    let n = 40_000u64;
    for jdk in jdks() {
        let prefix = prefix_for("tmpfs", jdk);
        let dir = prefix.parent().unwrap();
        let mnt = dir.join("mnt");
        let copy = dir.join("copy");
        std::fs::create_dir_all(&mnt).unwrap();
        std::fs::create_dir_all(&copy).unwrap();
        // The complete trace: four events per notify, enough to fill the disk.
        let java = java_command(
            jdk,
            &format!("{},trace=all", mnt.join("run").display()),
            &[],
            "Flood",
            &[&n.to_string()],
        );
        let mut cmd = Command::new("unshare");
        cmd.args(["-Urm", "sh", "-c"])
            .arg(
                "mount -t tmpfs -o size=4m orca-full \"$1\" || exit 90; m=$1; c=$2; shift 2; \
                 \"$@\"; rc=$?; cp \"$m\"/run.* \"$c\"/ || exit 91; exit $rc",
            )
            .arg("sh")
            .arg(&mnt)
            .arg(&copy)
            .arg(java.get_program())
            .args(java.get_args());
        let out = output_with_timeout(cmd, 120);
        let run = finish(copy.join("run"), out);
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        assert_ne!(
            run.code,
            Some(90),
            "cannot mount a tmpfs in a user namespace (unshare -Urm): {ctx}"
        );
        let plain = run_plain(jdk, "Flood", &[&n.to_string()]);
        assert_eq!(run.code, plain.status.code(), "{ctx}");
        assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout));
        let complaints: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("cannot write"))
            .collect();
        assert_eq!(complaints.len(), 1, "{ctx}");
        assert!(
            complaints[0].contains("run.orca (No space left on device"),
            "{ctx}"
        );
        let log = run.log();
        assert!(!log.torn, "cut back to a whole line: {ctx}");
        assert_valid(&run, &log);
        let exit = run
            .stderr
            .lines()
            .find(|l| l.contains("; wrote "))
            .expect("exit line");
        let number = |after: &str| -> u64 {
            exit.split(after)
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let (events, dropped, lost) = (
            number(" events, "),
            number(" dropped"),
            number(" lines lost to write errors"),
        );
        let in_log = std::fs::read_to_string(copy.join("run.orca"))
            .unwrap()
            .lines()
            .count() as u64;
        assert!(in_log > 0 && lost > 0, "{ctx}");
        if dropped == 0 {
            // Every event line, the RecordingStarted line first and the RecordingEnded line
            // last, is either in the file or counted as lost.
            assert_eq!(in_log + lost, events + 2, "{ctx}");
        } else {
            assert!(in_log + lost > events, "{ctx}");
        }
    }
}

/// A disk slower than the events: the writer is held up for two seconds (the test hook
/// `ORCA_TEST_WRITER_STALL_MS`, as a stalled disk would; the agent writes no FIFO), the queue
/// fills, and every event dropped meanwhile is counted, in the exit line and in the log.
#[test]
fn a_slow_disk_drops_events_and_counts_them_in_the_log() {
    let jdk = jdk17();
    let prefix = prefix_for("slowdisk", jdk);
    let n = 300_000;
    // Every notify an event (the default counts those that wake nobody): the flood.
    let mut cmd = java_command(
        jdk,
        &format!("{},notifies=events", prefix.display()),
        &[],
        "Flood",
        &[&n.to_string()],
    );
    cmd.env("ORCA_TEST_WRITER_STALL_MS", "2000");
    let out = output_with_timeout(cmd, 120);
    let text = std::fs::read_to_string(prefix.with_extension("orca")).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("flood done"));
    let exit_line = stderr
        .lines()
        .find(|l| l.contains("; wrote "))
        .expect("exit line");
    let dropped: u64 = exit_line
        .split(" events, ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        dropped > 0,
        "the slow reader should have forced drops: {exit_line}"
    );
    let in_log: u64 = text
        .lines()
        .filter(|l| l.contains(",EventsDropped,"))
        .map(|l| l.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(in_log, dropped, "every drop is counted in the log");
    let notifies = text
        .lines()
        .filter(|l| l.contains(",ObjectNotify,"))
        .count() as u64;
    assert!(
        notifies < n && notifies + dropped >= n,
        "{notifies} written + {dropped} dropped of {n}"
    );
    assert!(text.ends_with('\n'));
}

/// Runs `cmd` (BusyExit under the agent) to its end, killing it after `secs` seconds; how
/// long the JVM took to exit after the program's last line, and the run.
fn time_exit(mut cmd: Command, prefix: std::path::PathBuf, secs: u64) -> (Duration, Run) {
    use std::io::BufRead;
    use std::process::Stdio;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start java");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(secs)).is_err() {
            eprintln!("{}", dump_hung(pid));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            eprintln!("orca-tests: killed pid {pid} after {secs} s");
        }
    });
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    let mut done = None;
    while stdout.read_line(&mut text).unwrap() > 0 {
        if done.is_none() && text.contains("busy exit: ") {
            done = Some(Instant::now());
        }
    }
    let out = child.wait_with_output().expect("wait for java");
    let exited = Instant::now();
    let _ = tx.send(());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let done = done.unwrap_or_else(|| panic!("no last line from the program: {stderr}"));
    let run = Run {
        prefix,
        code: out.status.code(),
        stdout: text,
        stderr,
    };
    (exited - done, run)
}

/// The writer thread stops (a panic, by the test hook) in a program whose eight threads all
/// still run at exit, with the complete trace: every event is dropped and counted, nothing
/// waits for the writer (before, the exit drain's batch of each running thread waited 10 s
/// for room in a queue nobody emptied: 80 s), and the exit line says the writer stopped.
#[test]
fn a_stopped_writer_never_holds_up_exit() {
    for jdk in jdks() {
        let prefix = prefix_for("writer-panic", jdk);
        let mut cmd = java_command(
            jdk,
            &format!("{},trace=all", prefix.display()),
            &[],
            "BusyExit",
            &["8", "2"],
        );
        cmd.env("ORCA_TEST_WRITER_PANIC", "1");
        let (spent, run) = time_exit(cmd, prefix, 300);
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        let plain = run_plain(jdk, "BusyExit", &["8", "0"]);
        assert_eq!(run.code, plain.status.code(), "{ctx}");
        assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout), "{ctx}");
        assert!(
            spent < Duration::from_secs(5),
            "the JVM took {spent:?} to exit: {ctx}"
        );
        assert!(
            run.stderr
                .contains("orca: internal error in the writer thread (ORCA_TEST_WRITER_PANIC)"),
            "{ctx}"
        );
        let exit = run
            .stderr
            .lines()
            .find(|l| l.contains("; wrote "))
            .unwrap_or_else(|| panic!("no exit line: {ctx}"));
        assert!(
            exit.starts_with("orca: 0 events, ")
                && exit.contains(", the writer thread stopped: ")
                && exit.contains(" events taken but never written, later ones counted as dropped"),
            "{ctx}"
        );
        let dropped: u64 = exit
            .split(" events, ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("{ctx}"));
        assert!(dropped > 0, "{ctx}");
    }
}

/// A writer stuck at exit (stalled by the test hook for two minutes, as on a hung file system)
/// in a program whose eight threads all still run at exit, with the complete trace: the exit
/// drain's batches and the final write wait 10 s in all, then what is queued is given up and
/// counted (before, each running thread's batch waited 10 s of its own: 80 s and more).
#[test]
fn a_stuck_writer_holds_up_exit_ten_seconds_in_all() {
    for jdk in jdks() {
        let prefix = prefix_for("writer-stuck", jdk);
        let mut cmd = java_command(
            jdk,
            &format!("{},trace=all", prefix.display()),
            &[],
            "BusyExit",
            &["8", "2"],
        );
        cmd.env("ORCA_TEST_WRITER_STALL_MS", "120000");
        let (spent, run) = time_exit(cmd, prefix, 300);
        let ctx = format!("{}: {}", jdk.label(), run.stderr);
        assert_eq!(run.code, Some(0), "{ctx}");
        assert!(
            (Duration::from_secs(9)..Duration::from_secs(20)).contains(&spent),
            "the JVM took {spent:?} to exit: {ctx}"
        );
        assert!(
            run.stderr
                .contains("orca: the log writer is still blocked on a write after 10 s;"),
            "{ctx}"
        );
        let exit = run
            .stderr
            .lines()
            .find(|l| l.contains("; wrote "))
            .unwrap_or_else(|| panic!("no exit line: {ctx}"));
        assert!(
            exit.contains(" events abandoned (the writer was stuck at exit)"),
            "{ctx}"
        );
    }
}

#[test]
fn two_thousand_threads_start_and_end() {
    for jdk in jdks() {
        let run = run("manythreads", jdk, "", "ManyThreads", &["2000"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.stdout.trim(), "threads done 2000");
        let log = run.log();
        assert_valid(&run, &log);
        let workers: Vec<u32> = log
            .thread_names
            .iter()
            .filter(|(_, n)| n.starts_with("worker-"))
            .map(|(id, _)| *id)
            .collect();
        // Identity hashes of 2000 threads may collide; names may not.
        let names: std::collections::HashSet<&String> = log
            .thread_names
            .values()
            .filter(|n| n.starts_with("worker-"))
            .collect();
        let started = log
            .events
            .iter()
            .filter(|e| e.name == "ThreadStarted")
            .count();
        let ended = log
            .events
            .iter()
            .filter(|e| e.name == "ThreadEnded" && workers.contains(&e.thread))
            .count();
        // Each start, an event or (by default) counted in main's `Notifies` line.
        let starts_from_main: u64 = log
            .events
            .iter()
            .filter(|e| {
                e.frames
                    .first()
                    .is_some_and(|f| log.method_name(f.0) == "ManyThreads.main")
            })
            .map(|e| match e.name.as_str() {
                "ThreadStart" => 1,
                "Notifies" if e.numbers[1] == 6 => e.numbers[0],
                _ => 0,
            })
            .sum();
        // Each thread's notifyAll (an event, or counted in its `Notifies` line at its end).
        let notifies: u64 = log
            .notify_calls(true)
            .iter()
            .filter(|(_, f)| log.method_name(f.0).starts_with("ManyThreads.lambda"))
            .map(|(calls, _)| calls)
            .sum();
        assert!(
            names.len() >= 1990 && started >= 2000,
            "{} names, {started} ThreadStarted",
            names.len()
        );
        assert_eq!(starts_from_main, 2000, "{}", jdk.label());
        assert_eq!(notifies, 2000, "{}", jdk.label());
        assert!(ended >= 1990);
    }
}

#[test]
fn errors_inside_instrumented_code_reach_the_program_unchanged() {
    for (jdk, mode) in jdks_and_modes() {
        for case in ["sof", "imse", "oom"] {
            let jvm: &[&str] = if case == "oom" {
                &["-Xmx64m"]
            } else {
                &["-Xss512k"]
            };
            let mut flags: Vec<&str> = jvm.to_vec();
            if mode == orca_tests::INSTRUMENT {
                flags.extend(VERIFY_ALL);
            }
            let run = run_with(
                &format!("troubles-{case}-{}", tag(mode)),
                jdk,
                mode,
                &flags,
                "Troubles",
                &[case],
            );
            let mut plain = std::process::Command::new(jdk.java());
            plain
                .args(jvm)
                .arg("-cp")
                .arg(test_classes())
                .arg("Troubles")
                .arg(case);
            let plain = output_with_timeout(plain, 120);
            let ctx = format!("{} {mode} {case}: stderr:\n{}", jdk.label(), run.stderr);
            assert_eq!(run.code, plain.status.code(), "{ctx}");
            assert_eq!(run.stdout, String::from_utf8_lossy(&plain.stdout), "{ctx}");
            assert!(
                run.stdout.contains("monitor free") && !run.stdout.contains("still held"),
                "{ctx}"
            );
            assert!(!run.stderr.contains("internal error"), "{ctx}");
            let log = run.log();
            assert_valid(&run, &log);
        }
    }
}

/// StackOverflowErrors through nested `synchronized` blocks under `trace=all`, five in each
/// of twelve JVMs per JDK: each strikes the tracker's reports at another point of a block's
/// section, and none may leave half of one in the log (the section's first report checks that
/// the stack has room for all of it: engines/stack_room.rs). Without that check, 3 or 4 of 12
/// such logs were invalid on each JDK (mostly at the first overflows, while the code is still
/// interpreted); scripts/sof-proof repeats the faults test's `sof` case 200 times per JDK and
/// mode.
#[test]
fn repeated_stack_overflows_never_cut_a_block_in_half() {
    let options = format!("{INSTRUMENT},stackdepth=1");
    for jdk in jdks() {
        let mut flags = vec!["-Xss512k"];
        flags.extend(VERIFY_ALL);
        for round in 0..12 {
            let run = run_with(
                &format!("sof-loop-{round}"),
                jdk,
                &options,
                &flags,
                "SofLoop",
                &["5"],
            );
            assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
            assert_eq!(run.stdout, "free\n", "{}", jdk.label());
            let log = run.log();
            assert_valid(&run, &log);
            // The overflows' blocks are in the log, up to the stack's last stretch.
            let entered = log
                .events
                .iter()
                .filter(|e| e.name == "MonitorEntered")
                .count();
            assert!(
                entered > 5 * 1000,
                "{}: {entered} MonitorEntered",
                jdk.label()
            );
            for ext in ["orca", "methods", "classtable"] {
                let _ = std::fs::remove_file(run.prefix.with_extension(ext));
            }
        }
    }
}
