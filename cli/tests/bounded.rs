//! Bounded recordings (`maxsize`, `maxage`: a ring of chunk files) and `orca dump`, on real
//! JVMs (every JDK found): the ring keeps its exact bound, every chunk and every dump is a
//! valid recording, a dump holds every line written before it and exactly the lines of the
//! chunks it covers; and the fault cases (issue 48): two dumps at once, a dump during a
//! detach, a chunk deleted by hand, the JVM killed mid-chunk, the disk full mid-chunk.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use orca_tests::{agent_path, jdks, test_classes, work_dir, Jdk};

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
    let d = work_dir().join(format!("bounded-{name}-{}", jdk.label()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `orca check` accepts `prefix` (a recording, a chunk, or a chunk folder).
fn assert_valid(prefix: &Path, ctx: &str) -> String {
    let (code, out, err) = orca(&["check", prefix.to_str().unwrap()]);
    assert_eq!(
        code,
        0,
        "{ctx}: orca check {}: {out}{err}",
        prefix.display()
    );
    out
}

/// The chunk files of a folder, in order, with their numbers.
fn chunks(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = p.file_stem()?.to_str()?.parse().ok()?;
            (p.extension()? == "orca").then_some((n, p))
        })
        .collect();
    v.sort();
    v
}

/// The method IDs named `name` in a `.methods` file.
fn method_ids(methods: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(methods)
        .unwrap()
        .lines()
        .filter(|l| l.split(',').nth(2) == Some(name))
        .map(|l| l.split(',').nth(1).unwrap().to_string())
        .collect()
}

/// The `kind` lines of an event file whose innermost frame is in one of `methods`.
fn count(orca: &Path, kind: &str, methods: &[String]) -> u64 {
    std::fs::read_to_string(orca)
        .unwrap()
        .lines()
        .filter(|l| l.split(',').nth(1) == Some(kind))
        .filter(|l| {
            let stack = l.split(',').next_back().unwrap();
            stack
                .split(';')
                .nth(1)
                .is_some_and(|m| methods.iter().any(|x| x == m))
        })
        .count() as u64
}

/// tests/java/AttachLoop.java, running (see cli/tests/attach.rs).
struct Program {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    paused: bool,
}

impl Program {
    fn start(jdk: &Jdk, jvm_args: &[String], dir: &Path) -> Program {
        let stderr = dir.join("stderr.txt");
        let mut child = Command::new(jdk.java())
            .args(jvm_args)
            .arg("-cp")
            .arg(test_classes())
            .arg("AttachLoop")
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
            paused: false,
        };
        p.expect("ready");
        p
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn expect(&mut self, what: &str) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let line = line.trim_end().to_string();
        assert!(
            line.starts_with(what),
            "expected {what:?}, the program said {line:?}; stderr: {}",
            self.stderr_text()
        );
        line
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Pauses the worker between iterations; the number of iterations done.
    fn pause(&mut self) -> u64 {
        self.send("pause");
        self.paused = true;
        let line = self.expect("paused ");
        line["paused ".len()..].parse().unwrap()
    }

    fn go(&mut self) {
        self.send("go");
        self.paused = false;
        self.expect("going");
    }

    /// Lets it run until it has done at least `n` more iterations, then pauses it.
    fn run_for(&mut self, n: u64) -> u64 {
        let start = self.pause();
        loop {
            self.go();
            std::thread::sleep(std::time::Duration::from_millis(50));
            let done = self.pause();
            if done >= start + n {
                return done;
            }
        }
    }

    fn finish(&mut self, ctx: &str) {
        if self.paused {
            self.go();
        }
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
}

impl Drop for Program {
    /// A test that fails leaves no JVM running (it would write into the next run's folder).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent_arg(options: &str) -> String {
    format!("-agentpath:{}={options}", agent_path().display())
}

/// The ring keeps its bound exactly: after the run the chunks take at most `maxsize` in all
/// and more than `maxsize` less one chunk (the oldest is removed only once the total passes
/// the bound), every closed chunk has at least `maxsize / 8` bytes, the oldest chunks are
/// gone; each chunk, and the folder read as one recording, is valid.
#[test]
fn the_ring_keeps_its_bound_and_every_chunk_is_a_recording() {
    for jdk in jdks() {
        let dir = fresh_dir("ring", jdk);
        let prefix = dir.join("run");
        let out = Command::new(jdk.java())
            .arg(agent_arg(&format!(
                "{},trace=all,maxsize=256KB",
                prefix.display()
            )))
            .arg("-cp")
            .arg(test_classes())
            .args(["Flood", "20000"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        let ctx = format!("{}: {said}", jdk.label());
        assert!(out.status.success(), "{ctx}");
        let folder = dir.join("run.chunks");
        let chunks = chunks(&folder);
        // The exit line says which chunks the ring kept and how many it removed.
        let (first, last) = (chunks[0].0, chunks.last().unwrap().0);
        assert!(
            said.contains(&format!(
                ", chunks {first:06} to {last:06} kept ({} older removed by the ring)",
                first - 1
            )),
            "{ctx}"
        );
        let sizes: Vec<u64> = chunks
            .iter()
            .map(|(_, p)| std::fs::metadata(p).unwrap().len())
            .collect();
        let total: u64 = sizes.iter().sum();
        let (max, chunk) = (256u64 << 10, 32u64 << 10);
        assert!(total <= max, "{ctx}: {total} bytes: {sizes:?}");
        let largest = *sizes.iter().max().unwrap();
        assert!(total > max - largest, "{ctx}: {total} bytes: {sizes:?}");
        for s in &sizes[..sizes.len() - 1] {
            assert!(*s >= chunk, "{ctx}: a closed chunk of {s} bytes: {sizes:?}");
        }
        assert!(chunks[0].0 > 1, "{ctx}: no chunk removed: {chunks:?}");
        let numbers: Vec<u64> = chunks.iter().map(|c| c.0).collect();
        let expected: Vec<u64> = (chunks[0].0..chunks[0].0 + chunks.len() as u64).collect();
        assert_eq!(numbers, expected, "{ctx}");
        for (i, (n, p)) in chunks.iter().enumerate() {
            let text = std::fs::read_to_string(p).unwrap();
            let first = text.lines().next().unwrap();
            assert!(
                first.contains(",RecordingStarted,") && first.contains(&format!(";chunk={n};")),
                "{ctx}: {first}"
            );
            let last = text.lines().last().unwrap();
            let end = if i + 1 == chunks.len() {
                ",RecordingEnded,vmdeath"
            } else {
                ",RecordingEnded,chunk"
            };
            assert!(last.ends_with(end), "{ctx}: chunk {n} ends {last}");
            let c = assert_valid(&p.with_extension(""), &ctx);
            assert!(c.contains(&format!("chunk={n}")), "{ctx}: {c}");
        }
        let all = assert_valid(&prefix, &ctx);
        assert!(all.contains("the JVM ended in order"), "{ctx}: {all}");
        // The folder reads as one recording with every reader.
        let p = prefix.to_str().unwrap();
        let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
        for args in [
            vec!["report", p],
            vec!["deadlocks", p],
            vec!["flame", p],
            vec!["timeline", p, "-o", &file("run.json")],
            vec!["html", p, "-o", &file("run.html")],
            vec!["pprof", p, "-o", &file("run.pb.gz")],
        ] {
            let (code, out, err) = orca(&args);
            assert_eq!(code, 0, "{ctx}: orca {args:?}: {out}{err}");
        }
    }
}

/// A bad `maxsize` or `maxage` stops the JVM with one line naming the option.
#[test]
fn a_bad_bound_stops_the_jvm_with_one_line() {
    let jdk = &jdks()[0];
    let dir = fresh_dir("bad", jdk);
    for (opt, line) in [
        ("maxsize=12", "orca: bad value '12' for option 'maxsize'; expected a size of at least 128KB such as 512KB, 200MB or 2GB (KB, MB, GB: 1024, 1024², 1024³ bytes)"),
        ("maxage=1s", "orca: bad value '1s' for option 'maxage'; expected a duration of at least 2s such as 30s, 10m, 1h or 2d"),
        ("maxage=", "orca: option 'maxage' has an empty value; expected a duration of at least 2s such as 30s, 10m, 1h or 2d"),
    ] {
        let out = Command::new(jdk.java())
            .arg(agent_arg(&format!("{},{opt}", dir.join("x").display())))
            .arg("-cp")
            .arg(test_classes())
            .args(["Flood", "1"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{opt}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().next(), Some(line), "{opt}: {err}");
    }
}

/// `orca dump` of a JVM started with `-agentpath:...,maxsize=...`: with nothing removed yet
/// the dump has every iteration run before it (2 sleeps each in `step`, the complete trace),
/// while the recording goes on; with the ring turning (a small bound) the dump has exactly
/// the lines of the chunks on disk; two dumps at once are both whole and valid; a dump of
/// the last 200 ms holds the current chunk only.
#[test]
fn a_dump_is_every_line_before_it_and_the_chunks_it_covers() {
    for jdk in jdks() {
        let dir = fresh_dir("dump", jdk);
        let prefix = dir.join("live");
        let mut p = Program::start(
            jdk,
            &[agent_arg(&format!(
                "{},trace=all,maxsize=64MB",
                prefix.display()
            ))],
            &dir,
        );
        let done = p.run_for(20);
        let out = dir.join("all");
        let (code, _, err) = orca(&["dump", &p.pid(), "-o", out.to_str().unwrap()]);
        let ctx = format!("{}: {err} {}", jdk.label(), p.stderr_text());
        assert_eq!(code, 0, "{ctx}");
        let checked = assert_valid(&out, &ctx);
        assert!(checked.contains("orca dump"), "{ctx}: {checked}");
        let step = method_ids(&dir.join("all.methods"), "step");
        let sleeps = count(&dir.join("all.orca"), "ThreadSleep", &step);
        // Each iteration has 2 sleeps in step: done iterations, plus those of the ones
        // that ran before the agent's first drain of the worker (none are lost: trace=all).
        assert_eq!(sleeps, 2 * done, "{ctx}");
        // It goes on: more iterations, a second dump has them too.
        let more = p.run_for(10);
        let out2 = dir.join("more");
        let (code, _, err) = orca(&["dump", &p.pid(), "-o", out2.to_str().unwrap()]);
        assert_eq!(code, 0, "{ctx} {err}");
        assert_valid(&out2, &ctx);
        assert_eq!(
            count(&dir.join("more.orca"), "ThreadSleep", &step),
            2 * more,
            "{ctx}"
        );
        p.finish(&ctx);
        assert_valid(&prefix, &ctx);

        // The ring turning: a small bound, chunks removed.
        let prefix = dir.join("ring");
        let mut p = Program::start(
            jdk,
            &[agent_arg(&format!(
                "{},trace=all,maxsize=128KB",
                prefix.display()
            ))],
            &dir,
        );
        let folder = dir.join("ring.chunks");
        loop {
            p.run_for(20);
            if chunks(&folder)[0].0 > 1 {
                break;
            }
        }
        // Two dumps at once: the attach listener takes them in turn. (It is started by a
        // first dump: two first attaches at once would both send SIGQUIT, and a JVM whose
        // listener runs already answers the second with a thread dump on its stdout.)
        let pid = p.pid();
        let (code, _, err) = orca(&["dump", &pid, "-o", dir.join("first").to_str().unwrap()]);
        assert_eq!(code, 0, "{ctx}: {err}");
        let a = dir.join("a");
        let b = dir.join("b");
        let spawn = |o: &Path| {
            Command::new(env!("CARGO_BIN_EXE_orca"))
                .args(["dump", &pid, "-o", o.to_str().unwrap()])
                .env("ORCA_AGENT", agent_path())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (ca, cb) = (spawn(&a), spawn(&b));
        for (c, o) in [(ca, &a), (cb, &b)] {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{ctx}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_valid(o, &ctx);
        }
        let step = method_ids(&dir.join("ring.methods"), "step");
        let in_chunks: u64 = chunks(&folder)
            .iter()
            .map(|(_, c)| count(c, "ThreadSleep", &step))
            .sum();
        for o in ["a.orca", "b.orca"] {
            assert_eq!(
                count(&dir.join(o), "ThreadSleep", &step),
                in_chunks,
                "{ctx}: {o}"
            );
        }
        let last = dir.join("last");
        let (code, _, err) = orca(&["dump", &pid, "-o", last.to_str().unwrap(), "--last", "1ms"]);
        assert_eq!(code, 0, "{ctx} {err}");
        assert_valid(&last, &ctx);
        let current = chunks(&folder).last().unwrap().1.clone();
        assert_eq!(
            count(&dir.join("last.orca"), "ThreadSleep", &step),
            count(&current, "ThreadSleep", &step),
            "{ctx}"
        );
        p.finish(&ctx);
    }
}

/// `orca attach PID -d 0 --maxage 1h`, then `orca dump PID -o out/last --last 10m` (the
/// README's lines), then a dump and a detach at once: the detach stops the recording, and
/// the dump is either whole and valid or says that no recording is under way.
#[test]
fn an_attached_bounded_recording_is_dumped_and_a_dump_during_a_detach_is_whole_or_refused() {
    for jdk in jdks() {
        let dir = fresh_dir("attach", jdk);
        let mut p = Program::start(jdk, &[], &dir);
        let live = dir.join("live");
        let pid = p.pid();
        let (code, _, err) = orca(&[
            "attach",
            &pid,
            "-d",
            "0",
            "--maxage",
            "1h",
            "-o",
            live.to_str().unwrap(),
        ]);
        let ctx = format!("{}: {err}", jdk.label());
        assert_eq!(code, 0, "{ctx}");
        p.run_for(10);
        let last = dir.join("out").join("last");
        std::fs::create_dir_all(last.parent().unwrap()).unwrap();
        let (code, _, err) = orca(&["dump", &pid, "-o", last.to_str().unwrap(), "--last", "10m"]);
        assert_eq!(code, 0, "{ctx} {err}");
        assert_valid(&last, &ctx);
        // Every reader reads the dump.
        let l = last.to_str().unwrap();
        let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
        for args in [
            vec!["report", l],
            vec!["deadlocks", l],
            vec!["flame", l],
            vec!["timeline", l, "-o", &file("last.json")],
            vec!["html", l, "-o", &file("last.html")],
            vec!["pprof", l, "-o", &file("last.pb.gz")],
        ] {
            let (code, out, err) = orca(&args);
            assert_eq!(code, 0, "{ctx}: orca {args:?}: {out}{err}");
        }
        p.go();
        let racing = dir.join("racing");
        let dump = Command::new(env!("CARGO_BIN_EXE_orca"))
            .args(["dump", &pid, "-o", racing.to_str().unwrap()])
            .env("ORCA_AGENT", agent_path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (code, _, err) = orca(&["detach", &pid]);
        assert_eq!(code, 0, "{ctx}: {err}");
        let out = dump.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            assert_valid(&racing, &ctx);
        } else {
            assert!(
                said.contains("has no Orca recording under way"),
                "{ctx}: {said}"
            );
        }
        let checked = assert_valid(&live, &ctx);
        assert!(checked.contains("orca detach"), "{ctx}: {checked}");
        p.finish(&ctx);
    }
}

/// A chunk deleted by hand (an old one, and the one being written): the recording goes on in
/// the next chunk, said once; the folder and every chunk left stay valid. Then the JVM killed
/// mid-chunk: the last chunk is readable up to its last whole line.
#[test]
fn a_chunk_deleted_by_hand_and_the_jvm_killed_mid_chunk() {
    for jdk in jdks() {
        let dir = fresh_dir("deleted", jdk);
        let prefix = dir.join("run");
        let mut p = Program::start(
            jdk,
            &[agent_arg(&format!(
                "{},trace=all,maxsize=1MB",
                prefix.display()
            ))],
            &dir,
        );
        let folder = dir.join("run.chunks");
        while chunks(&folder).len() < 3 {
            p.run_for(20);
        }
        // Paused: the writer writes what is queued, then nothing rotates the chunk.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let c = chunks(&folder);
        std::fs::remove_file(&c[0].1).unwrap();
        std::fs::remove_file(&c.last().unwrap().1).unwrap();
        p.run_for(20);
        std::thread::sleep(std::time::Duration::from_millis(300));
        p.run_for(20);
        let ctx = format!("{}: {}", jdk.label(), p.stderr_text());
        assert_eq!(
            p.stderr_text()
                .matches("was deleted; its lines are lost, the recording goes on in the next chunk")
                .count(),
            1,
            "{ctx}"
        );
        for (_, c) in chunks(&folder) {
            assert_valid(&c.with_extension(""), &ctx);
        }
        assert_valid(&prefix, &ctx);
        p.go();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let _ = p.child.kill();
        let _ = p.child.wait();
        let left = chunks(&folder);
        let last = &left.last().unwrap().1;
        let out = assert_valid(&last.with_extension(""), &ctx);
        assert!(out.contains("no RecordingEnded line"), "{ctx}: {out}");
        assert_valid(&prefix, &ctx);
    }
}

/// The disk fills up mid-chunk (a 4 MiB tmpfs of the test's own, `unshare -Urm`, as
/// tests/e2e/faults.rs does): with a bound larger than the disk, the oldest chunks are
/// removed to make room and nothing is lost; with a first chunk larger than the disk, there
/// is nothing to remove: the agent says once that events are dropped. The program runs on to
/// its end both times, and every chunk is valid.
#[test]
fn a_full_disk_removes_the_oldest_chunks_then_drops_events_said_once() {
    for jdk in jdks() {
        for (max, drops) in [("6MB", false), ("64MB", true)] {
            let dir = fresh_dir(&format!("full-{max}"), jdk);
            let mnt = dir.join("mnt");
            let copy = dir.join("copy");
            std::fs::create_dir_all(&mnt).unwrap();
            std::fs::create_dir_all(&copy).unwrap();
            let mut cmd = Command::new("unshare");
            cmd.args(["-Urm", "sh", "-c"])
                .arg(
                    "mount -t tmpfs -o size=4m orca-full \"$1\" || exit 90; m=$1; c=$2; shift 2; \
                     \"$@\"; rc=$?; cp -r \"$m\"/run.* \"$c\"/ || exit 91; exit $rc",
                )
                .arg("sh")
                .arg(&mnt)
                .arg(&copy)
                .arg(jdk.java())
                .arg(agent_arg(&format!(
                    "{},trace=all,maxsize={max}",
                    mnt.join("run").display()
                )))
                .arg("-cp")
                .arg(test_classes())
                .args(["Flood", "150000"]);
            let out = cmd.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let ctx = format!("{} {max}: {err}", jdk.label());
            assert_ne!(out.status.code(), Some(90), "cannot mount a tmpfs: {ctx}");
            assert!(out.status.success(), "{ctx}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "flood done\n",
                "{ctx}"
            );
            let said = err
                .matches("events are dropped until there is room")
                .count();
            assert_eq!(said, drops as usize, "{ctx}");
            let folder = copy.join("run.chunks");
            let left = chunks(&folder);
            if !drops {
                assert!(left[0].0 > 1, "{ctx}: no chunk removed: {left:?}");
                assert!(!err.contains("cannot write"), "{ctx}");
            }
            for (_, c) in &left {
                assert_valid(&c.with_extension(""), &ctx);
            }
            assert_valid(&copy.join("run"), &ctx);
        }
    }
}

/// The timestamp of a line.
fn stamp(line: &str) -> f64 {
    line.split(',').next().unwrap().parse().unwrap()
}

/// `maxage=4s`: chunks of 1 s (an eighth, at least 1 s), each removed once its last line is
/// older than 4 s. After 8 s of running, the oldest chunks are gone, every closed chunk left
/// was closed within the last 4 s (and 1 s of slack for the writer's pass, which removes them
/// at its next flush, every 100 ms), and each spans about a second.
#[test]
fn maxage_removes_the_chunks_older_than_it() {
    for jdk in jdks() {
        let dir = fresh_dir("maxage", jdk);
        let prefix = dir.join("run");
        let mut p = Program::start(
            jdk,
            &[agent_arg(&format!("{},maxage=4s", prefix.display()))],
            &dir,
        );
        std::thread::sleep(std::time::Duration::from_secs(8));
        p.pause();
        // The chunks on disk now; "now" is when the current one began (every closed chunk
        // was closed by then, and the ring removes one at most 4 s and a flush after).
        let folder = dir.join("run.chunks");
        let left = chunks(&folder);
        let ctx = format!("{}: {left:?} {}", jdk.label(), p.stderr_text());
        let current = std::fs::read_to_string(&left.last().unwrap().1).unwrap();
        let now = stamp(current.lines().next().unwrap());
        p.finish(&ctx);
        assert!(left[0].0 > 2, "{ctx}: nothing removed");
        assert!(left.len() >= 4, "{ctx}: fewer chunks than 4 s of them");
        for (n, c) in &left[..left.len() - 1] {
            let text = std::fs::read_to_string(c).unwrap();
            let (first, last) = (text.lines().next().unwrap(), text.lines().last().unwrap());
            assert!(
                last.ends_with(",RecordingEnded,chunk"),
                "{ctx}: {n}: {last}"
            );
            let (opened, closed) = (stamp(first), stamp(last));
            assert!(
                now - closed <= 5.0,
                "{ctx}: chunk {n} closed {} s before the end",
                now - closed
            );
            assert!(
                (0.9..=2.0).contains(&(closed - opened)),
                "{ctx}: chunk {n} spans {} s",
                closed - opened
            );
            assert_valid(&c.with_extension(""), &ctx);
        }
        assert_valid(&prefix, &ctx);
    }
}

/// `orca dump` of an unbounded recording (no `maxsize`, `maxage`) writes it whole, up to the
/// dump: every iteration run before it.
#[test]
fn an_unbounded_recording_is_dumped_whole() {
    for jdk in jdks() {
        let dir = fresh_dir("unbounded", jdk);
        let prefix = dir.join("live");
        let mut p = Program::start(
            jdk,
            &[agent_arg(&format!("{},trace=all", prefix.display()))],
            &dir,
        );
        let done = p.run_for(10);
        let out = dir.join("all");
        let (code, _, err) = orca(&["dump", &p.pid(), "-o", out.to_str().unwrap()]);
        let ctx = format!("{}: {err} {}", jdk.label(), p.stderr_text());
        assert_eq!(code, 0, "{ctx}");
        assert_valid(&out, &ctx);
        let step = method_ids(&dir.join("all.methods"), "step");
        assert_eq!(
            count(&dir.join("all.orca"), "ThreadSleep", &step),
            2 * done,
            "{ctx}"
        );
        p.finish(&ctx);
        assert_valid(&prefix, &ctx);
    }
}
