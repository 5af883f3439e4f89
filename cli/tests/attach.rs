//! `orca attach` and `orca detach` on real running JVMs (every JDK found): two recordings of
//! one program started without the agent, with exact counts for the iterations that ran
//! inside each; and every refusal, with its exact line.
//!
//! The program (tests/java/AttachLoop.java) is paused between iterations whenever the test
//! attaches or detaches and prints how many iterations it has done, so the iterations inside
//! a recording are known exactly whatever the scheduler does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use orca_tests::log::Log;
use orca_tests::{agent_path, jdks, test_classes, work_dir, Jdk};

mod json;

/// The loop program, running; its standard error goes to a file.
struct Program {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    said: Vec<String>,
}

impl Program {
    fn start(jdk: &Jdk, jvm_args: &[&str], dir: &Path) -> Program {
        Program::start_with(Command::new(jdk.java()), jvm_args, dir)
    }

    fn start_with(cmd: Command, jvm_args: &[&str], dir: &Path) -> Program {
        Program::start_args(cmd, jvm_args, &[], dir)
    }

    fn start_args(cmd: Command, jvm_args: &[&str], args: &[&str], dir: &Path) -> Program {
        Program::start_class(cmd, jvm_args, "AttachLoop", args, dir)
    }

    fn start_class(
        cmd: Command,
        jvm_args: &[&str],
        class: &str,
        args: &[&str],
        dir: &Path,
    ) -> Program {
        Program::start_full(cmd, test_classes(), jvm_args, class, args, dir)
    }

    /// The loop program with the test classes at `classes`.
    fn start_from(cmd: Command, classes: &Path, dir: &Path) -> Program {
        Program::start_full(cmd, classes, &[], "AttachLoop", &[], dir)
    }

    fn start_full(
        mut cmd: Command,
        classes: &Path,
        jvm_args: &[&str],
        class: &str,
        args: &[&str],
        dir: &Path,
    ) -> Program {
        let stderr = dir.join("stderr.txt");
        let mut child = cmd
            .args(jvm_args)
            .arg("-cp")
            .arg(classes)
            .arg(class)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut p = Program {
            child,
            stdin,
            stdout,
            stderr,
            said: Vec::new(),
        };
        p.expect("ready");
        p
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// The next line of its output, which must start with `what`.
    fn expect(&mut self, what: &str) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let line = line.trim_end().to_string();
        assert!(
            line.starts_with(what),
            "expected {what:?}, the program said {line:?}; stderr: {}",
            self.stderr_text()
        );
        self.said.push(line.clone());
        line
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Pauses the worker between iterations; the number of iterations done.
    fn pause(&mut self) -> u64 {
        self.send("pause");
        let line = self.expect("paused ");
        line["paused ".len()..].parse().unwrap()
    }

    fn go(&mut self) {
        self.send("go");
        self.expect("going");
    }

    /// Lets its monitor holder and waiter end (they wait to be told), quits, and checks that
    /// it exited normally.
    fn finish(&mut self, ctx: &str) {
        self.send("release");
        self.expect("released");
        self.send("wake");
        self.expect("woken");
        self.send("quit");
        self.expect("done");
        assert!(
            self.child.wait().unwrap().success(),
            "{ctx}: {}",
            self.stderr_text()
        );
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `orca ARGS` with the agent under test: (exit code, stdout, stderr).
fn orca(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .env("ORCA_AGENT", agent_path())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn fresh_dir(name: &str, jdk: &Jdk) -> PathBuf {
    let d = work_dir().join(format!("attach-{name}-{}", jdk.label()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether an event's innermost frame is in `AttachLoop.step`.
fn in_step(log: &Log, frames: &[(u32, u32)]) -> bool {
    frames
        .first()
        .is_some_and(|&(m, _)| log.method_name(m) == "AttachLoop.step")
}

/// Per window: (MonitorHolds counts, LockHolds and LockHoldsUntimed counts, ObjectWait,
/// ThreadSleep) in `step`.
fn step_counts(log: &Log) -> (u64, u64, u64, u64) {
    let mut c = (0, 0, 0, 0);
    for e in &log.events {
        if !in_step(log, &e.frames) {
            continue;
        }
        match e.name.as_str() {
            "MonitorHolds" | "MonitorHoldsUntimed" => c.0 += e.numbers[0],
            "LockHolds" | "LockHoldsUntimed" => c.1 += e.numbers[0],
            "ObjectWait" => c.2 += 1,
            // A wait shorter than waitthreshold is counted, not written (numbers[3] 0: wait).
            "Waits" if e.numbers[3] == 0 => c.2 += e.numbers[0],
            "ThreadSleep" => c.3 += 1,
            // So is a sleep (numbers[3] 5: sleep).
            "Waits" if e.numbers[3] == 5 => c.3 += e.numbers[0],
            _ => {}
        }
    }
    c
}

/// A recording of `iterations` whole iterations of `step` counts exactly their holds, j.u.c.
/// holds and sleeps.
fn assert_iterations(log: &Log, iterations: u64, ctx: &str) {
    let (holds, lock_holds, _, sleeps) = step_counts(log);
    assert_eq!(
        (holds, lock_holds, sleeps),
        (4 * iterations, iterations, 2 * iterations),
        "{ctx}: {iterations} iterations"
    );
}

fn assert_valid(prefix: &Path, ctx: &str) {
    let (code, out, err) = orca(&["check", prefix.to_str().unwrap()]);
    assert_eq!(code, 0, "{ctx}: orca check: {out}{err}");
    assert!(
        out.contains("the recording of a running JVM was stopped (orca detach)"),
        "{ctx}: {out}"
    );
}

/// Attach, record while the program runs a known number of iterations, detach; again with
/// `--trace all` and every hold written as a long one too (`--holdthreshold 0`). Each log is
/// valid and has exactly the iterations run inside its recording
/// (each: 4 monitor holds, 1 j.u.c. hold, 1 wait, 2 sleeps in `step`); a monitor held across
/// the attach is released, and a thread waiting across it is woken, inside the first; the
/// program's output is what it prints without the agent; after each detach the agent says
/// every class it changed runs its original code again.
#[test]
fn attach_twice_counts_exactly_what_ran_inside_and_restores_the_classes() {
    for jdk in jdks() {
        twice(jdk, false);
    }
}

/// The same with each iteration in a virtual thread of its own (JDK 21+): the counts are
/// exact, and each iteration's events are those of its own thread.
#[test]
fn attach_twice_with_virtual_threads() {
    let newer: Vec<&Jdk> = jdks().iter().filter(|j| j.major >= 21).collect();
    if newer.is_empty() {
        eprintln!("orca-tests: no JDK 21+ found: the virtual-thread attach test did NOT run");
        return;
    }
    for jdk in newer {
        twice(jdk, true);
    }
}

fn twice(jdk: &Jdk, virtual_threads: bool) {
    {
        let dir = fresh_dir(if virtual_threads { "virtual" } else { "twice" }, jdk);
        let args: &[&str] = if virtual_threads { &["virtual"] } else { &[] };
        let mut p = Program::start_args(Command::new(jdk.java()), &[], args, &dir);
        let pid = p.pid();
        let ctx = jdk.label();
        let w1 = dir.join("w1");
        let w2 = dir.join("w2");

        let n0 = p.pause();
        let (code, _, err) = orca(&["attach", &pid, "-d", "0", "-o", w1.to_str().unwrap()]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.go();
        std::thread::sleep(Duration::from_millis(1000));
        p.send("release");
        p.expect("released");
        p.send("wake");
        p.expect("woken");
        std::thread::sleep(Duration::from_millis(1000));
        let n1 = p.pause();
        let (code, _, err) = orca(&["detach", &pid]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.go();
        std::thread::sleep(Duration::from_millis(300));

        let n2 = p.pause();
        let (code, _, err) = orca(&[
            "attach",
            &pid,
            "-d",
            "0",
            "--trace",
            "all",
            // Every hold is also a long one (`MonitorHold`, `LockHold`): each must be counted
            // once in its summary, also by the drain at the detach (a hold written long was
            // counted twice there when it took more than 10 ms by chance, 1 in about 10 runs).
            "--holdthreshold",
            "0",
            "-o",
            w2.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.go();
        std::thread::sleep(Duration::from_millis(1500));
        let n3 = p.pause();
        let (code, _, err) = orca(&["detach", &pid]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.go();
        std::thread::sleep(Duration::from_millis(300));
        p.send("quit");
        p.expect("done");
        let status = p.child.wait().unwrap();
        let stderr = p.stderr_text();
        let ctx = format!("{ctx}: JVM stderr {stderr:?}");
        assert!(status.success(), "{ctx}");
        assert!(
            n1 > n0 && n3 > n2,
            "{ctx}: the worker ran ({n0} {n1} {n2} {n3})"
        );

        // Its output is the program's own.
        let expected = [
            "ready".to_string(),
            format!("paused {n0}"),
            "going".into(),
            "released".into(),
            "woken".into(),
            format!("paused {n1}"),
            "going".into(),
            format!("paused {n2}"),
            "going".into(),
            format!("paused {n3}"),
            "going".into(),
            "done".into(),
        ];
        assert_eq!(p.said, expected, "{ctx}");
        // Its standard error has the agent's lines and, on JDK 21+, the JVM's warning.
        for line in stderr.lines() {
            assert!(
                line.starts_with("orca: ") || line.starts_with("WARNING: "),
                "{ctx}: unexpected line {line:?}"
            );
        }
        let detached: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("orca: detached: "))
            .collect();
        assert_eq!(detached.len(), 2, "{ctx}");
        for l in detached {
            assert!(
                l.ends_with(" classes given back their original bytes; the program runs as before the attach")
                    && !l.starts_with("orca: detached: 0 "),
                "{ctx}: {l}"
            );
        }

        // Exact counts per window.
        for (prefix, iterations, all) in [(&w1, n1 - n0, false), (&w2, n3 - n2, true)] {
            assert_valid(prefix, &ctx);
            let log = Log::read(prefix).unwrap();
            let (holds, lock_holds, waits, sleeps) = step_counts(&log);
            let ctx = format!("{ctx}: {} ({iterations} iterations)", prefix.display());
            assert_eq!(holds, 4 * iterations, "{ctx}");
            assert_eq!(lock_holds, iterations, "{ctx}");
            assert_eq!(waits, iterations, "{ctx}");
            assert_eq!(sleeps, 2 * iterations, "{ctx}");
            if virtual_threads {
                let threads: std::collections::HashSet<u32> = log
                    .events
                    .iter()
                    .filter(|e| {
                        let sleep =
                            e.name == "ThreadSleep" || e.name == "Waits" && e.numbers[3] == 5;
                        sleep && in_step(&log, &e.frames)
                    })
                    .map(|e| e.thread)
                    .collect();
                assert_eq!(
                    threads.len() as u64,
                    iterations,
                    "{ctx}: one thread per iteration"
                );
            }
            // The j.u.c. hold taken (twice: reentrant) before the attach and released during
            // the first recording: one hold that began before it, seen at its unlock.
            let before: Vec<&str> = log
                .events
                .iter()
                .filter(|e| {
                    e.name == "LockHeldAtStart"
                        && e.frames.first().is_some_and(|&(m, _)| {
                            log.method_name(m).starts_with("AttachLoop.lambda$main")
                        })
                })
                .map(|e| e.name.as_str())
                .collect();
            assert_eq!(before.len(), usize::from(!all), "{ctx}: LockHeldAtStart");
            // The report counts every such line (other threads' too: on JDK 21+ the main
            // thread's `readLine` holds the reader's lock across each attach).
            let every = log
                .events
                .iter()
                .filter(|e| e.name == "LockHeldAtStart")
                .count();
            let (code, out, err) = orca(&["report", prefix.to_str().unwrap()]);
            assert_eq!(code, 0, "{ctx}: {err}");
            let line = format!(
                "  holds begun before the recording: {every} j.u.c. lock hold{} ended in it (seen at the unlock: LockHeldAtStart); monitors held at the attach are not seen",
                if every == 1 { "" } else { "s" }
            );
            assert!(out.lines().any(|l| l == line), "{ctx}: {out}");
            let (code, out, err) = orca(&["report", prefix.to_str().unwrap(), "--json"]);
            assert_eq!(code, 0, "{ctx}: {err}");
            assert!(
                out.contains(&format!("\"held_at_start\":{every},")),
                "{ctx}: {out}"
            );
            // An attached recording's JSON is what docs/JSON.md describes too.
            json::assert_documented(&json::Json::parse(&out), &ctx);
            if all {
                let exits = log
                    .events
                    .iter()
                    .filter(|e| e.name == "MonitorExit" && in_step(&log, &e.frames))
                    .count() as u64;
                assert_eq!(exits, 4 * iterations, "{ctx}");
            }
        }
    }
}

/// A JVM in a PID namespace of its own (`unshare --pid --fork --mount-proc`, as a container
/// runs it: it is PID 1 there), attached from outside by its host PID: the attach protocol
/// must use the JVM's own PID for its files (`.attach_pid1`, `.java_pid1`) and reach them
/// through `/proc/PID/root`. The counts are exact for the iterations inside the recording.
/// Needs root (a PID namespace), as `orca attach` does for a JVM in a container; said on
/// stderr when not run.
#[test]
fn attach_to_a_jvm_in_a_pid_namespace_of_its_own() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("orca-tests: not root: the PID-namespace attach test did NOT run");
        return;
    }
    for jdk in jdks() {
        let dir = fresh_dir("pidns", jdk);
        let mut unshare = Command::new("unshare");
        unshare
            .args(["--pid", "--fork", "--mount-proc"])
            .arg(jdk.java());
        let mut p = Program::start_with(unshare, &[], &dir);
        // The JVM is unshare's child; its host PID is what a user sees in `ps` on the host.
        let children =
            std::fs::read_to_string(format!("/proc/{}/task/{}/children", p.pid(), p.pid()))
                .expect("unshare's children");
        let pid = children
            .split_whitespace()
            .next()
            .expect("the JVM")
            .to_string();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let nspid = status
            .lines()
            .find(|l| l.starts_with("NSpid:"))
            .unwrap_or_default()
            .to_string();
        let ctx = format!("{} (host PID {pid}, {nspid})", jdk.label());
        assert!(
            nspid.ends_with("\t1"),
            "{ctx}: not PID 1 of a namespace of its own"
        );
        // Two recordings: the default (sampled hold timing), then every hold timed.
        let mut windows = Vec::new();
        for (name, options) in [("w1", &[][..]), ("w2", &["--holdtiming", "exact"][..])] {
            let prefix = dir.join(name);
            let n0 = p.pause();
            let mut args = vec!["attach", &pid, "-d", "0", "-o", prefix.to_str().unwrap()];
            args.extend_from_slice(options);
            let (code, _, err) = orca(&args);
            assert_eq!(code, 0, "{ctx}: {err}");
            p.go();
            std::thread::sleep(Duration::from_millis(1000));
            let n1 = p.pause();
            let (code, _, err) = orca(&["detach", &pid]);
            assert_eq!(code, 0, "{ctx}: {err}");
            p.go();
            assert!(n1 > n0, "{ctx}: the worker ran ({n0} {n1})");
            windows.push((prefix, n1 - n0, !options.is_empty()));
        }
        p.finish(&ctx);
        for (prefix, iterations, exact) in windows {
            let ctx = format!("{ctx}: {}", prefix.display());
            assert_valid(&prefix, &ctx);
            let log = Log::read(&prefix).unwrap();
            assert_iterations(&log, iterations, &ctx);
            if exact {
                // after a sampled recording in the same JVM, every hold is timed
                let untimed = log
                    .events
                    .iter()
                    .filter(|e| e.name.ends_with("HoldsUntimed"))
                    .count();
                assert_eq!(untimed, 0, "{ctx}: holdtiming=exact left holds untimed");
            }
        }
    }
}

/// Another user's JVM (`nobody`), attached by root: `orca` takes the JVM's user and group for
/// the attach (HotSpot answers only its own user) and the agent writes the files as that user.
/// The counts are exact for the iterations inside the recording. Needs root; said on stderr
/// when not run.
#[test]
fn root_attaches_to_another_users_jvm() {
    use std::os::unix::fs::MetadataExt;
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("orca-tests: not root: the other-user attach test did NOT run");
        return;
    }
    for jdk in jdks() {
        let u = orca_tests::Unprivileged::new("attach-other-user", jdk);
        assert!(u.as_nobody());
        let dir = fresh_dir("other-user", jdk);
        let mut p = Program::start_from(u.command(jdk.java()), u.classes(), &dir);
        let pid = p.pid();
        let ctx = format!("{} (JVM {pid} as nobody)", jdk.label());
        let prefix = u.dir.join("w");
        let attach = |args: &[&str]| {
            let o = Command::new(env!("CARGO_BIN_EXE_orca"))
                .args(args)
                .env("ORCA_AGENT", u.agent())
                .output()
                .unwrap();
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let n0 = p.pause();
        let (code, err) = attach(&["attach", &pid, "-d", "0", "-o", prefix.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{ctx}: {err}");
        p.go();
        std::thread::sleep(Duration::from_millis(1000));
        let n1 = p.pause();
        let (code, err) = attach(&["detach", &pid]);
        assert_eq!(code, Some(0), "{ctx}: {err}");
        p.go();
        p.finish(&ctx);
        assert!(n1 > n0, "{ctx}: the worker ran ({n0} {n1})");
        let owner = std::fs::metadata(prefix.with_extension("orca"))
            .unwrap()
            .uid();
        assert_eq!(owner, 65534, "{ctx}: the log was written by the JVM's user");
        assert_valid(&prefix, &ctx);
        let log = Log::read(&prefix).unwrap();
        assert_iterations(&log, n1 - n0, &ctx);
    }
}

/// Runs `orca ARGS` and checks that it fails (status 2) with exactly `line` on stderr.
fn refused(args: &[&str], line: &str, ctx: &str) {
    let (code, _, err) = orca(args);
    assert_eq!(code, 2, "{ctx}: {err}");
    assert_eq!(err.trim_end(), line, "{ctx}");
}

/// Every refusal is one line naming the cause and the fix, and the JVM runs on.
#[test]
fn every_refusal_is_one_exact_line() {
    // No such process: a child that has ended and been reaped.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let pid = gone.id().to_string();
    refused(
        &["attach", &pid],
        &format!("orca: no process {pid}: check the PID (`jps -l` or `pgrep -a java` lists the Java processes)"),
        "no process",
    );
    // Not a JVM.
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = sleeper.id().to_string();
    // Its name is the test's until its exec is done (seen once, with the suite running).
    for _ in 0..500 {
        if std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c == "sleep\n") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    refused(
        &["attach", &pid],
        &format!("orca: process {pid} (sleep) is not a HotSpot JVM (no libjvm.so in its memory): orca attach works with OpenJDK/HotSpot JVMs; give the PID of the java process"),
        "not a JVM",
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();

    for jdk in jdks() {
        let dir = fresh_dir("refusals", jdk);
        let ctx = jdk.label();
        let prefix = dir.join("run");
        let prefix = prefix.to_str().unwrap();

        // Attach switched off.
        let p = Program::start(jdk, &["-XX:+DisableAttachMechanism"], &dir);
        let pid = p.pid();
        refused(
            &["attach", &pid, "-d", "0", "-o", prefix],
            &format!("orca: JVM {pid} was started with -XX:+DisableAttachMechanism, which refuses every attach: restart it without that option, or record from the start with -agentpath:liborca.so=PREFIX"),
            &ctx,
        );
        p.kill();
        let p = Program::start(jdk, &["-XX:-EnableDynamicAgentLoading"], &dir);
        let pid = p.pid();
        refused(
            &["attach", &pid, "-d", "0", "-o", prefix],
            &format!("orca: JVM {pid} was started with -XX:-EnableDynamicAgentLoading, which refuses agents loaded at run time: restart it without that option (or with -XX:+EnableDynamicAgentLoading), or record from the start with -agentpath:liborca.so=PREFIX"),
            &ctx,
        );
        p.kill();

        let p = Program::start(jdk, &[], &dir);
        let pid = p.pid();
        // Another user's JVM, without root.
        let (code, _, err) = {
            let o = Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_orca"))
                .args(["attach", &pid])
                .env("ORCA_AGENT", agent_path())
                .output()
                .expect("setpriv (util-linux) runs orca as another user");
            (
                o.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        assert_eq!(code, 2, "{ctx}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("orca: JVM {pid} belongs to user root (uid 0), not to you: run orca as that user (sudo -u root orca ...) or as root"),
            "{ctx}"
        );
        // Detach with nothing to detach; attach twice.
        refused(
            &["detach", &pid],
            &format!("orca: JVM {pid} is not being recorded by an attached Orca: nothing to detach (orca attach {pid} starts a recording)"),
            &ctx,
        );
        let (code, _, err) = orca(&["attach", &pid, "-d", "0", "-o", prefix]);
        assert_eq!(code, 0, "{ctx}: {err}");
        refused(
            &["attach", &pid, "-d", "0", "-o", &format!("{prefix}2")],
            &format!("orca: JVM {pid} is already being recorded by Orca (attached earlier, or started with -agentpath:liborca.so): stop that recording first (orca detach {pid}), or read the files it writes"),
            &ctx,
        );
        let (code, _, err) = orca(&["detach", &pid]);
        assert_eq!(code, 0, "{ctx}: {err}");
        // A JVM that does not answer: stopped.
        // SAFETY: kill has no memory preconditions; the child is ours.
        unsafe { libc::kill(p.child.id() as i32, libc::SIGSTOP) };
        std::fs::remove_file(format!("/tmp/.java_pid{pid}")).ok();
        refused(
            &["attach", &pid, "--timeout", "1s", "-o", &format!("{prefix}3")],
            &format!("orca: JVM {pid} did not answer within 1 s (its attach listener did not start: the process is stopped, hung, or still starting); try again when it runs, or wait longer with --timeout"),
            &ctx,
        );
        // (The SIGQUIT waiting for it would print a thread dump when it runs on.)
        p.kill();

        // liborca.so not at the same path inside the JVM's mount namespace: its folder is
        // covered by an empty tmpfs there.
        let so_dir = std::fs::canonicalize(agent_path())
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount -t tmpfs none '{}' && exec '{}' \"$@\"",
                so_dir.display(),
                jdk.java().display()
            ));
        cmd.arg("sh");
        let p = Program::start_with(cmd, &[], &dir);
        let pid = p.pid();
        refused(
            &["attach", &pid, "-o", prefix],
            &format!("orca: {}/liborca.so is not visible at the same path inside process {pid}'s mount namespace (a container?): copy liborca.so to that path inside it, or set ORCA_AGENT to a path both see", so_dir.display()),
            &ctx,
        );
        p.kill();
    }
}

/// The jars of embedded Jetty 9 (Debian's `libjetty9-java`, `libservlet-api-java`; installed
/// by scripts/ensure-tools); the test fails naming the package when one is missing.
fn jetty_classpath() -> Vec<PathBuf> {
    let j = Path::new("/usr/share/java");
    let mut jars = Vec::new();
    for (jar, package) in [
        ("jetty9-server.jar", "libjetty9-java"),
        ("jetty9-http.jar", "libjetty9-java"),
        ("jetty9-io.jar", "libjetty9-java"),
        ("jetty9-util.jar", "libjetty9-java"),
        ("servlet-api.jar", "libservlet-api-java"),
    ] {
        let p = j.join(jar);
        assert!(
            p.is_file(),
            "{} is missing: install Debian's {package} (scripts/ensure-tools does)",
            p.display()
        );
        jars.push(p);
    }
    jars
}

/// A server of the tests (embedded Jetty or Tomcat), compiled and started on a free port of
/// 127.0.0.1 without the agent; its standard error goes to a file.
struct Server {
    child: Child,
    port: u16,
    stderr: PathBuf,
    stdout: PathBuf,
    /// its folder, where a crash report would be
    dir: PathBuf,
    stopped: bool,
}

/// A test that fails leaves no server running (with a recording that would go on writing
/// into the next run's files).
impl Drop for Server {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    /// Compiles `source` against `jars` into `dir` and runs its main class `class` with
    /// arguments PORT 16 (threads), once it says it is listening.
    fn start(jdk: &Jdk, dir: &Path, source: &Path, class: &str, jars: &str) -> Server {
        let ctx = jdk.label();
        let st = Command::new(jdk.javac())
            .args(["-g", "-d"])
            .arg(dir)
            .args(["-cp", jars])
            .arg(source)
            .status()
            .unwrap();
        assert!(st.success(), "{ctx}: javac {}", source.display());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let stderr = dir.join("stderr.txt");
        let mut child = Command::new(jdk.java())
            .arg(format!("-Djava.io.tmpdir={}", dir.display()))
            // a crash report where the test finds it (HotSpot writes its summary to stdout)
            .arg(format!("-XX:ErrorFile={}/hs_err_pid%p.log", dir.display()))
            .arg("-cp")
            .arg(format!("{}:{jars}", dir.display()))
            .args([class, &port.to_string(), "16"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(line.starts_with("listening on"), "{ctx}: {line:?}");
        // the rest of its stdout (a JVM's crash summary goes there), kept for finish
        let stdout = dir.join("stdout.txt");
        let mut file = std::fs::File::create(&stdout).unwrap();
        std::thread::spawn(move || std::io::copy(&mut out, &mut file));
        Server {
            child,
            port,
            stderr,
            stdout,
            dir: dir.to_path_buf(),
            stopped: false,
        }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// `wrk -t2 -c16` on the server for `secs` seconds, started.
    fn load(&self, secs: u32) -> Child {
        Command::new("wrk")
            .args(["-t2", "-c16", &format!("-d{secs}s"), "--timeout", "10s"])
            .arg(format!("http://127.0.0.1:{}/", self.port))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits for the load to end, stops the server (SIGTERM), checks that no request
    /// failed, and returns (what wrk printed, the server's standard error).
    fn finish(mut self, wrk: Child, ctx: &str) -> (String, String) {
        let wrk = wrk.wait_with_output().unwrap();
        let wrk_out = String::from_utf8_lossy(&wrk.stdout).into_owned();
        // a server that ended before it was told to (its exit status says how) is a failure
        // of its own, whatever wrk saw
        let early = self.child.try_wait().ok().flatten();
        // SAFETY: kill has no memory preconditions; the server is ours.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait();
        self.stopped = true;
        let stderr = std::fs::read_to_string(&self.stderr).unwrap();
        let stdout = std::fs::read_to_string(&self.stdout).unwrap_or_default();
        let crash = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("hs_err")
            });
        let ctx = format!(
            "{ctx}: wrk said {wrk_out:?}; server stderr {stderr:?}; server stdout {stdout:?}; server exit {status:?}; crash report {crash:?}"
        );
        assert!(crash.is_none(), "{ctx}: the server crashed");
        assert!(
            early.is_none(),
            "{ctx}: the server ended before the load did: {early:?}"
        );
        assert!(
            wrk.status.success() && wrk_out.contains(" requests in "),
            "{ctx}"
        );
        assert!(
            !wrk_out.contains("Socket errors") && !wrk_out.contains("Non-2xx"),
            "{ctx}: failed requests"
        );
        (wrk_out, stderr)
    }
}

/// The `MonitorHolds` counts of the log at `prefix` whose site is in method `method`.
fn holds_in(prefix: &Path, method: &str) -> u64 {
    let log = Log::read(prefix).unwrap();
    log.events
        .iter()
        .filter(|e| {
            e.name == "MonitorHolds"
                && e.frames
                    .first()
                    .is_some_and(|&(m, _)| log.method_name(m) == method)
        })
        .map(|e| e.numbers[0])
        .sum()
}

fn wrk_is_here() {
    assert!(
        Command::new("wrk").arg("--version").output().is_ok(),
        "wrk is missing: install Debian's wrk (scripts/ensure-tools does)"
    );
}

/// Embedded Jetty (the benches' server) under `wrk`: attached while the load runs, recorded
/// for 1.5 s and detached while it still runs. No request fails, the server says nothing
/// but the agent's lines (and the JDK's dynamic-agent warning), and the log is valid and has
/// the server's `synchronized` map update of every request recorded.
#[test]
fn attach_and_detach_jetty_under_wrk() {
    wrk_is_here();
    let jars = jetty_classpath()
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let source = orca_tests::root().join("benches/java/ext/JettyServer.java");
    for jdk in jdks() {
        let dir = fresh_dir("jetty", jdk);
        let ctx = jdk.label();
        let server = Server::start(jdk, &dir, &source, "JettyServer", &jars);
        let wrk = server.load(5);
        std::thread::sleep(Duration::from_millis(700));
        let prefix = dir.join("run");
        let (code, report, err) = orca(&[
            "attach",
            &server.pid(),
            "-d",
            "1500ms",
            "-o",
            prefix.to_str().unwrap(),
        ]);
        let (_, stderr) = server.finish(wrk, &ctx);
        let ctx = format!("{ctx}: orca said {err:?}; server stderr {stderr:?}");
        assert_eq!(code, 0, "{ctx}");
        assert!(report.contains("$ orca report "), "{ctx}");
        for l in stderr.lines() {
            assert!(
                !l.contains("WARN:") && !l.contains("Exception") && !l.contains("ERROR"),
                "{ctx}: {l}"
            );
        }
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("orca: detached: "))
                .count(),
            1,
            "{ctx}"
        );
        assert_valid(&prefix, &ctx);
        assert!(
            holds_in(&prefix, "JettyServer.hit") > 0,
            "{ctx}: no hold of the hit map recorded"
        );
    }
}

/// Embedded Tomcat 10 (tests/servers/TomcatServer.java) under `wrk`, attached and detached
/// twice while the load runs (issue 47): both recordings pass `orca check`, no request fails,
/// neither report says a contention open at the detach was "still blocked at the end" (it
/// was open when the recording stopped), and the holds that the attach's own
/// retransformation stretched are left out of the long holds (the agent's exit line counts
/// them; their duration is not asserted: the machine is shared).
#[test]
fn attach_and_detach_tomcat_twice_under_wrk() {
    wrk_is_here();
    let jars = [
        ("tomcat10-embed-core.jar", "libtomcat10-embed-java"),
        (
            "jakarta-annotation-api.jar",
            "libjakarta-annotation-api-java",
        ),
    ]
    .map(|(jar, package)| {
        let p = Path::new("/usr/share/java").join(jar);
        assert!(
            p.is_file(),
            "{} is missing: install Debian's {package} (scripts/ensure-tools does)",
            p.display()
        );
        p.display().to_string()
    })
    .join(":");
    let source = orca_tests::root().join("tests/servers/TomcatServer.java");
    for jdk in jdks() {
        let dir = fresh_dir("tomcat", jdk);
        let ctx = jdk.label();
        let server = Server::start(jdk, &dir, &source, "TomcatServer", &jars);
        // a load that outlasts both recordings however long the attaches take on a busy
        // machine (stopped below: wrk prints its summary at SIGINT)
        let wrk = server.load(120);
        std::thread::sleep(Duration::from_millis(1000));
        let mut reports = Vec::new();
        for k in 1..=2 {
            let prefix = dir.join(format!("run{k}"));
            let (code, report, err) = orca(&[
                "attach",
                &server.pid(),
                "-d",
                "1500ms",
                "-o",
                prefix.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{ctx}: attach {k}: {err}");
            assert_valid(&prefix, &format!("{ctx}: attach {k}"));
            reports.push(report);
            std::thread::sleep(Duration::from_millis(500));
        }
        // SAFETY: kill has no memory preconditions; wrk is ours.
        unsafe { libc::kill(wrk.id() as i32, libc::SIGINT) };
        let (_, stderr) = server.finish(wrk, &ctx);
        let ctx = format!("{ctx}: server stderr {stderr:?}");
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("orca: detached: "))
                .count(),
            2,
            "{ctx}"
        );
        for (k, report) in reports.iter().enumerate() {
            assert!(report.contains("$ orca report "), "{ctx}");
            assert!(
                !report.contains("still blocked at the end"),
                "{ctx}: {report}"
            );
            let prefix = dir.join(format!("run{}", k + 1));
            assert!(
                holds_in(&prefix, "TomcatServer.hit") > 0,
                "{ctx}: recording {}: no hold of the hit map",
                k + 1
            );
        }
    }
}

/// `orca bench --rate --modes none,attach`: one JVM per round started without the agent,
/// measured before the attach, while recording and after the detach. The table has the three
/// rows of the attach beside the no-agent run's, each with a rate, a fraction of the same
/// run's first window (1 for it, exactly) and the recording's events in its row only; the
/// CSV has them too. Speeds are not asserted (the machine is shared).
#[test]
fn bench_measures_an_attached_jvm_before_during_and_after() {
    for jdk in jdks() {
        let dir = fresh_dir("bench", jdk);
        let ctx = jdk.label();
        let csv = dir.join("bench.csv");
        let o = Command::new(env!("CARGO_BIN_EXE_orca"))
            .args(["bench", "--rate", "--runs", "2", "--warmup-runs", "0"])
            .args(["--modes", "none,attach:stackdepth=4"])
            .arg("--csv")
            .arg(&csv)
            .args(["--label", "AttachRate"])
            .arg("--")
            .arg(jdk.java())
            .arg("-cp")
            .arg(test_classes())
            .args(["AttachRate", "300", "300"])
            .env("ORCA_AGENT", agent_path())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{ctx}: {out}{err}");
        // Both rounds ran every mode (the progress line shows the attach's three rates).
        let rounds: Vec<&str> = err.lines().filter(|l| l.contains("round ")).collect();
        assert_eq!(rounds.len(), 2, "{ctx}: {err}");
        for r in &rounds {
            assert!(
                r.contains(" none ") && r.contains(" attach:stackdepth=4 "),
                "{ctx}: {r}"
            );
            assert_eq!(r.matches(" ops/s").count(), 1, "{ctx}: {r}");
        }
        let rows: Vec<Vec<&str>> = out
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| mode") && !l.starts_with("| ---"))
            .map(|l| l.split(" | ").map(str::trim).collect())
            .collect();
        let names: Vec<&str> = rows.iter().map(|r| r[0].trim_start_matches("| ")).collect();
        assert_eq!(
            names,
            [
                "none",
                "attach:stackdepth=4 before",
                "attach:stackdepth=4 recording",
                "attach:stackdepth=4 after detach"
            ],
            "{ctx}: {out}"
        );
        for r in &rows {
            assert_ne!(r[1], "-", "{ctx}: a rate in every row: {r:?}");
        }
        assert!(
            rows[1][2].starts_with("1.000 (1.000–1.000)"),
            "{ctx}: the window before the attach is its own base: {:?}",
            rows[1]
        );
        // events: the recording's row only.
        let events = |r: &Vec<&str>| r[8].to_string();
        assert!(
            events(&rows[2]).parse::<u64>().is_ok_and(|n| n > 0),
            "{ctx}: {:?}",
            rows[2]
        );
        assert_eq!(events(&rows[1]), "-", "{ctx}");
        assert_eq!(events(&rows[3]), "-", "{ctx}");
        assert!(
            out.contains("`attach` rows: one JVM started without the agent"),
            "{ctx}: {out}"
        );
        let csv = std::fs::read_to_string(&csv).unwrap();
        let modes: Vec<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap())
            .collect();
        assert_eq!(
            modes,
            [
                "none",
                "attach:stackdepth=4 before",
                "attach:stackdepth=4 recording",
                "attach:stackdepth=4 after detach"
            ],
            "{ctx}: {csv}"
        );
    }
}

/// A detach that drains a thread between the `LockHold` line of its long hold and the hold's
/// record (the tracker writes the line first; the test hook `ORCA_TEST_LONG_HOLD_PAUSE` holds
/// the thread there until the detach is over): the line is counted all the same, in a
/// `LockHolds` line of the detach's last summaries, so the log has no long hold left
/// uncounted (`orca check -v`'s note) and its hold counts agree.
#[test]
fn a_detach_between_a_long_hold_line_and_its_record_counts_the_hold() {
    for jdk in jdks() {
        let dir = fresh_dir("longhold", jdk);
        let ctx = jdk.label();
        let w = dir.join("w");
        let mut cmd = Command::new(jdk.java());
        cmd.env("ORCA_TEST_LONG_HOLD_PAUSE", "1");
        let mut p = Program::start_class(cmd, &[], "AttachLongHold", &[], &dir);
        let pid = p.pid();
        let (code, _, err) = orca(&["attach", &pid, "-d", "0", "-o", w.to_str().unwrap()]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.send("hold");
        let t = std::time::Instant::now();
        while !p.stderr_text().contains("orca-test: LockHold written") {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "{ctx}: no long hold: {}",
                p.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let (code, _, err) = orca(&["detach", &pid]);
        assert_eq!(code, 0, "{ctx}: {err}");
        p.expect("released");
        p.send("quit");
        p.expect("done");
        assert!(p.child.wait().unwrap().success(), "{ctx}");

        let (code, out, err) = orca(&["check", "-v", w.to_str().unwrap()]);
        assert_eq!(code, 0, "{ctx}: {out}{err}");
        assert!(
            !out.contains("counted in no LockHolds line"),
            "{ctx}: the long hold is uncounted: {out}"
        );
        let log = Log::read(&w).unwrap();
        let in_hold = |e: &&orca_tests::log::Event| {
            e.frames
                .first()
                .is_some_and(|&(m, _)| log.method_name(m) == "AttachLongHold.hold")
        };
        let long: Vec<_> = log
            .events
            .iter()
            .filter(|e| e.name == "LockHold")
            .filter(in_hold)
            .collect();
        assert_eq!(long.len(), 1, "{ctx}: one LockHold");
        let counted: u64 = log
            .events
            .iter()
            .filter(|e| e.name == "LockHolds" && e.object == long[0].object)
            .map(|e| e.numbers[0])
            .sum();
        assert_eq!(counted, 1, "{ctx}: its LockHolds count");
    }
}
