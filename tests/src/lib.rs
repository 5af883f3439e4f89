//! Helpers for the end-to-end tests: find the JDKs, compile the Java test programs, run them
//! under `liborca.so`, and read the logs they leave.
//!
//! Every end-to-end test runs on JDK 17 and on every other JDK under `/usr/lib/jvm`, so a
//! behaviour change in a newer JVM shows up as a failing test, not as a surprise for a user.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub mod log;
pub mod summary;

pub use log::{Event, Log};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The agent under test: `$ORCA_AGENT` or `target/release/liborca.so`.
pub fn agent_path() -> PathBuf {
    let p = std::env::var_os("ORCA_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/release/liborca.so"));
    assert!(
        p.exists(),
        "{} is missing: build it first with `cargo build --release` (scripts/test does)",
        p.display()
    );
    p
}

/// One installed JDK.
#[derive(Clone, Debug)]
pub struct Jdk {
    pub home: PathBuf,
    /// The feature release, e.g. 17 or 25.
    pub major: u32,
}

impl Jdk {
    pub fn java(&self) -> PathBuf {
        self.home.join("bin/java")
    }
    pub fn javac(&self) -> PathBuf {
        self.home.join("bin/javac")
    }
    /// A short label for messages and output folders, e.g. `jdk17`.
    pub fn label(&self) -> String {
        format!("jdk{}", self.major)
    }
}

fn read_major(home: &Path) -> Option<u32> {
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    let line = release.lines().find(|l| l.starts_with("JAVA_VERSION="))?;
    let v = line.trim_start_matches("JAVA_VERSION=").trim_matches('"');
    let first = v.split(['.', '-', '+']).next()?;
    let major: u32 = first.parse().ok()?;
    Some(if major == 1 {
        v.split('.').nth(1)?.parse().ok()?
    } else {
        major
    })
}

/// JDK 17 first, then every other distinct JDK under `/usr/lib/jvm` (and `$JAVA_HOME`),
/// newest last. Panics without a JDK 17: the suite must never pass having run on nothing.
pub fn jdks() -> &'static [Jdk] {
    static JDKS: OnceLock<Vec<Jdk>> = OnceLock::new();
    JDKS.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(h) = std::env::var_os("JDK17_HOME") {
            candidates.push(h.into());
        }
        if let Ok(rd) = std::fs::read_dir("/usr/lib/jvm") {
            let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            v.sort();
            candidates.extend(v);
        }
        if let Some(h) = std::env::var_os("JAVA_HOME") {
            candidates.push(h.into());
        }
        let mut seen = Vec::new();
        let mut found: Vec<Jdk> = Vec::new();
        let mut skipped = Vec::new();
        for home in candidates {
            let Ok(canon) = home.canonicalize() else { continue };
            if seen.contains(&canon) {
                continue;
            }
            seen.push(canon.clone());
            if !canon.join("bin/java").exists() {
                continue;
            }
            match read_major(&canon) {
                Some(major) if canon.join("bin/javac").exists() || major != 17 => found.push(Jdk { home: canon, major }),
                _ => skipped.push(canon),
            }
        }
        found.sort_by_key(|j| j.major);
        found.dedup_by_key(|j| j.major);
        let jdk17 = found.iter().position(|j| j.major == 17);
        let Some(i) = jdk17 else {
            panic!("no JDK 17 with javac found under /usr/lib/jvm (found {found:?}); run scripts/ensure-jdk");
        };
        let j17 = found.remove(i);
        found.insert(0, j17);
        // Written to the real stderr, not through `eprintln!`, which the test harness captures:
        // which JDKs ran must show in every test log.
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let list: Vec<String> = found.iter().map(|j| format!("{} ({})", j.label(), j.home.display())).collect();
        let _ = writeln!(err, "orca-tests: running on {}", list.join(", "));
        if found.len() == 1 {
            let _ = writeln!(err, "orca-tests: no JDK other than 17 found under /usr/lib/jvm: newer JDKs NOT tested");
        }
        for s in skipped {
            let _ = writeln!(err, "orca-tests: ignoring {} (no release file, or a JDK 17 without javac)", s.display());
        }
        found
    })
}

/// The two ways of recording, as agent options. Instrumentation mode writes the complete
/// trace (`trace=all`) so that every monitor event can be checked; its default summaries are
/// checked against that trace in tests/e2e/summary.rs.
pub const MODES: [&str; 2] = ["mode=jvmti", INSTRUMENT];
/// Instrumentation mode with the complete trace.
pub const INSTRUMENT: &str = "mode=instrument,trace=all";

/// The `java.util.concurrent` events (docs/FORMAT.md): what the j.u.c. tests count.
pub const JUC_KINDS: [&str; 13] = [
    "LockAcquire",
    "LockAcquired",
    "LockFailed",
    "LockTimedOut",
    "LockInterrupted",
    "LockRelease",
    "ConditionAwait",
    "ConditionAwaited",
    "ConditionSignal",
    "ConditionSignalAll",
    "ThreadPark",
    "ThreadParked",
    "ThreadUnpark",
];

/// Every (JDK, mode) pair: the end-to-end tests run each case on each.
pub fn jdks_and_modes() -> Vec<(&'static Jdk, &'static str)> {
    jdks()
        .iter()
        .flat_map(|j| MODES.iter().map(move |m| (j, *m)))
        .collect()
}

/// A short tag for a mode option, for output folders: `jvmti` or `instrument`.
pub fn tag(mode: &str) -> &str {
    let m = mode.trim_start_matches("mode=");
    m.split(',').next().unwrap_or(m)
}

/// The JDK 17 (first of [`jdks`]).
pub fn jdk17() -> &'static Jdk {
    &jdks()[0]
}

/// Where tests write: `target/orca-tests`.
pub fn work_dir() -> PathBuf {
    let d = root().join("target/orca-tests");
    std::fs::create_dir_all(&d).expect("create target/orca-tests");
    d
}

/// Compiles every program in `tests/java` once (with JDK 17's javac, `--release 11`, with
/// debug info) and returns the class folder.
///
/// The folder is named by a hash of the sources and is never rewritten: test binaries run
/// at the same time (two `cargo test` in one worktree, a runner that starts a process per
/// test) share it, and one that removed and recompiled it under another's running JVM made
/// that JVM fail with "Could not find or load main class" (seen under load). A process
/// compiles into a folder of its own and renames it into place; the first rename wins and
/// the others use its folder. Folders of other sources are removed once a day old.
pub fn test_classes() -> &'static Path {
    static CLASSES: OnceLock<PathBuf> = OnceLock::new();
    CLASSES.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let mut sources: Vec<PathBuf> = std::fs::read_dir(root().join("tests/java"))
            .expect("tests/java")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "java"))
            .collect();
        sources.sort();
        let javac = jdk17().javac();
        let args = ["--release", "11", "-g", "-encoding", "UTF-8", "-d"];
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&javac, args).hash(&mut h);
        for s in &sources {
            (s.file_name(), std::fs::read(s).expect("read tests/java")).hash(&mut h);
        }
        let name = format!("classes-{:016x}", h.finish());
        let work = work_dir();
        let out = work.join(&name);
        if out.is_dir() {
            return out;
        }
        let tmp = work.join(format!("{name}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let status = Command::new(javac)
            .args(args)
            .arg(&tmp)
            .args(&sources)
            .status()
            .expect("run javac");
        assert!(status.success(), "javac failed on tests/java");
        if std::fs::rename(&tmp, &out).is_err() {
            // Another test binary put the same classes there first.
            assert!(
                out.is_dir(),
                "cannot move {} to {}",
                tmp.display(),
                out.display()
            );
            let _ = std::fs::remove_dir_all(&tmp);
        }
        let day = std::time::Duration::from_secs(24 * 3600);
        for e in std::fs::read_dir(&work).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > day);
            if (n == "classes" || n.starts_with("classes-")) && n != name && old {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        out
    })
}

/// One JVM run under the agent.
#[derive(Debug)]
pub struct Run {
    pub prefix: PathBuf,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Reads the three files this run wrote.
    pub fn log(&self) -> Log {
        Log::read(&self.prefix).unwrap_or_else(|e| {
            panic!(
                "reading {}: {e}\nstderr:\n{}",
                self.prefix.display(),
                self.stderr
            )
        })
    }
}

/// A fresh output prefix for `test` on `jdk`.
pub fn prefix_for(test: &str, jdk: &Jdk) -> PathBuf {
    let dir = work_dir()
        .join("runs")
        .join(format!("{test}-{}", jdk.label()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("run")
}

/// The java command for `main` under the agent with `options` (after `=`), and `jvm_args`.
pub fn java_command(
    jdk: &Jdk,
    options: &str,
    jvm_args: &[&str],
    main: &str,
    args: &[&str],
) -> Command {
    let mut c = Command::new(jdk.java());
    c.arg(format!("-agentpath:{}={}", agent_path().display(), options));
    c.args(jvm_args)
        .arg("-cp")
        .arg(test_classes())
        .arg(main)
        .args(args);
    c.stdin(Stdio::null());
    c
}

/// JVM flags that make a bad rewrite fail loudly: every class verified, the JDK's own too.
pub const VERIFY_ALL: &[&str] = &[
    "-Xverify:all",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+BytecodeVerificationLocal",
];

/// Runs `main` from tests/java on `jdk` with the agent writing to a fresh prefix, plus
/// `extra_options` (e.g. `stackdepth=4`).
pub fn run(test: &str, jdk: &Jdk, extra_options: &str, main: &str, args: &[&str]) -> Run {
    run_with(test, jdk, extra_options, &[], main, args)
}

/// [`run`] with extra JVM flags (before the main class).
pub fn run_with(
    test: &str,
    jdk: &Jdk,
    extra_options: &str,
    jvm_args: &[&str],
    main: &str,
    args: &[&str],
) -> Run {
    let prefix = prefix_for(test, jdk);
    let mut options = prefix.display().to_string();
    if !extra_options.is_empty() {
        options.push(',');
        options.push_str(extra_options);
    }
    let out = output_with_timeout(java_command(jdk, &options, jvm_args, main, args), 300);
    finish(prefix, out)
}

/// Wraps a finished process into a [`Run`].
pub fn finish(prefix: PathBuf, out: Output) -> Run {
    Run {
        prefix,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a command to completion, killing it after `secs` seconds: a hung JVM fails the test
/// instead of hanging the suite.
pub fn output_with_timeout(mut cmd: Command, secs: u64) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("start java");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if rx
            .recv_timeout(std::time::Duration::from_secs(secs))
            .is_err()
        {
            eprintln!("{}", dump_hung(pid));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            eprintln!("orca-tests: killed pid {pid} after {secs} s");
        }
    });
    let out = child.wait_with_output().expect("wait for java");
    let _ = tx.send(());
    out
}

/// What `pid` and every process under it are doing, for a test that is about to kill them
/// as hung: a hang that happens once under load is found from this, not by guessing. For each
/// process its command line, every thread's name, state and kernel wait channel, a Java
/// thread dump (`jstack -l`, which a JVM stuck in its exit may not answer) and every native
/// thread's stack (`gdb`, when installed: it shows an agent thread stuck in Rust). Each
/// tool gets a bounded time, so that the dump cannot hang the test in turn.
pub fn dump_hung(pid: u32) -> String {
    use std::fmt::Write as _;
    let mut pids = vec![pid];
    let mut i = 0;
    while i < pids.len() {
        let p = pids[i];
        for task in tasks(p) {
            let children = std::fs::read_to_string(format!("/proc/{p}/task/{task}/children"))
                .unwrap_or_default();
            pids.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
        i += 1;
    }
    let mut s = String::new();
    for p in pids {
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let _ = writeln!(s, "orca-tests: hung process {p}: {cmdline}");
        // Which signals it ignores, blocks and catches: a JVM started with SIGINT ignored (a
        // background job of a script) keeps ignoring it, and a Ctrl-C then never ends it.
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        let signals: Vec<&str> = status
            .lines()
            .filter(|l| {
                ["SigBlk:", "SigIgn:", "SigCgt:"]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .collect();
        let _ = writeln!(s, "  {}", signals.join(" "));
        for task in tasks(p) {
            let read = |f: &str| {
                std::fs::read_to_string(format!("/proc/{p}/task/{task}/{f}"))
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            // The state is the field after the parenthesised name, which may hold spaces.
            let stat = read("stat");
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("?")
                .to_string();
            let _ = writeln!(
                s,
                "  task {task} {:?} state {state} wchan {}",
                read("comm"),
                read("wchan")
            );
        }
        let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
        if comm.trim() == "java" {
            let _ = writeln!(
                s,
                "{}",
                bounded("timeout", &["20", "jstack", "-l", &p.to_string()])
            );
        }
        let _ = writeln!(
            s,
            "{}",
            bounded(
                "timeout",
                &[
                    "60",
                    "gdb",
                    "-p",
                    &p.to_string(),
                    "-batch",
                    "-nx",
                    "-ex",
                    "handle SIGSEGV SIGBUS nostop noprint pass",
                    "-ex",
                    "thread apply all bt",
                ]
            )
        );
    }
    s
}

fn tasks(pid: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// `program args` with its output, or why it did not run.
fn bounded(program: &str, args: &[&str]) -> String {
    match Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) => format!(
            "$ {program} {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("$ {program} {}: {e}", args.join(" ")),
    }
}

/// Runs the same program without the agent, to compare its output.
pub fn run_plain(jdk: &Jdk, main: &str, args: &[&str]) -> Output {
    let mut c = Command::new(jdk.java());
    c.arg("-cp")
        .arg(test_classes())
        .arg(main)
        .args(args)
        .stdin(Stdio::null());
    output_with_timeout(c, 120)
}

/// Events of one thread, by thread name.
pub fn by_thread_name<'a>(log: &'a Log, name: &str) -> Vec<&'a Event> {
    let ids: Vec<u32> = log
        .thread_names
        .iter()
        .filter(|(_, n)| n.as_str() == name)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(
        ids.len(),
        1,
        "expected one thread named {name:?}, found {ids:?} in {:?}",
        log.thread_names
    );
    log.events.iter().filter(|e| e.thread == ids[0]).collect()
}

/// The names of the events, for sequence comparisons.
pub fn names(events: &[&Event]) -> Vec<String> {
    events.iter().map(|e| e.name.clone()).collect()
}

/// Counts of each event name.
pub fn counts(log: &Log) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for e in &log.events {
        *m.entry(e.name.clone()).or_insert(0) += 1;
    }
    m
}

/// The line of `tests/java/<file>` that carries the comment `// @<marker>`: tests name source
/// lines by marker so they never hard-code a number.
pub fn marker_line(file: &str, marker: &str) -> u32 {
    let src =
        std::fs::read_to_string(root().join("tests/java").join(file)).expect("read test source");
    let tag = format!("// @{marker}");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            l.contains(&tag)
                && !l[l.find(&tag).unwrap() + tag.len()..]
                    .starts_with(|c: char| c.is_alphanumeric() || c == '-')
        })
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "marker {tag} in {file}: {hits:?}");
    hits[0] as u32
}

/// Asserts that a log is well formed and consistent, with context on failure: every line
/// through the strict, independent `orca-format` validator (docs/FORMAT.md), then the
/// invariants this crate's own reader checks.
pub fn assert_valid(run: &Run, log: &Log) {
    let report = orca_format::validate_prefix(&run.prefix, &orca_format::Options::default())
        .unwrap_or_else(|e| panic!("{}: cannot validate: {e}", run.prefix.display()));
    assert!(
        report.is_valid(),
        "{}: orca-format says:\n{}\nstderr:\n{}",
        run.prefix.display(),
        report.error_lines().join("\n"),
        run.stderr
    );
    let v = log.invariant_violations();
    assert!(
        v.is_empty(),
        "{}: {} violations:\n{}\nstderr:\n{}",
        run.prefix.display(),
        v.len(),
        v.join("\n"),
        run.stderr
    );
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A JVM run as an unprivileged user, for tests of file permissions (root ignores them). As
/// root, the JVM runs as `nobody` (uid 65534, through `setpriv`), and the agent and the test
/// classes are copied under a world-readable folder in the temporary directory, because the
/// checkout itself may sit in a folder only root can enter (a `mktemp -d` clone is 0700).
/// Otherwise the JVM runs as the current user.
pub struct Unprivileged {
    /// Owned by the user the JVM runs as: output folders go here.
    pub dir: PathBuf,
    agent: PathBuf,
    classes: PathBuf,
    as_nobody: bool,
}

impl Unprivileged {
    pub fn new(test: &str, jdk: &Jdk) -> Unprivileged {
        use std::os::unix::fs::PermissionsExt;
        let as_nobody = running_as_root();
        let top = std::env::temp_dir().join(format!(
            "orca-tests-unprivileged-{}",
            root().display().to_string().replace('/', "_")
        ));
        let base = top.join(format!("{test}-{}", jdk.label()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        for d in [&top, &base] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let agent = base.join("liborca.so");
        std::fs::copy(agent_path(), &agent).unwrap();
        let classes = base.join("classes");
        copy_tree(test_classes(), &classes);
        let dir = base.join("work");
        std::fs::create_dir_all(&dir).unwrap();
        let u = Unprivileged {
            dir,
            agent,
            classes,
            as_nobody,
        };
        u.give(&u.dir);
        u
    }

    /// The folder of this test and JDK, the one [`Unprivileged::new`] made.
    fn base(&self) -> Option<&Path> {
        self.agent.parent()
    }

    /// The agent's copy, readable by the user the JVM runs as.
    pub fn agent(&self) -> &Path {
        &self.agent
    }

    /// The test classes' copy, readable by the user the JVM runs as.
    pub fn classes(&self) -> &Path {
        &self.classes
    }

    /// Whether the JVM runs as `nobody` (the tests run as root).
    pub fn as_nobody(&self) -> bool {
        self.as_nobody
    }

    /// Makes `path` belong to the user the JVM runs as.
    pub fn give(&self, path: &Path) {
        if self.as_nobody {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).expect("chown to nobody");
        }
    }

    /// `program` run as the user the JVM runs as.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = if self.as_nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(program);
            c
        } else {
            Command::new(program)
        };
        c.stdin(Stdio::null());
        c
    }

    /// The java command for `main` from tests/java under the agent writing to `prefix`, with
    /// the agent's `options` after it (`""`: none).
    pub fn java(
        &self,
        jdk: &Jdk,
        (prefix, options): (&Path, &str),
        main: &str,
        args: &[&str],
    ) -> Command {
        let mut c = self.command(jdk.java());
        let sep = if options.is_empty() { "" } else { "," };
        c.arg(format!(
            "-agentpath:{}={}{sep}{options}",
            self.agent.display(),
            prefix.display()
        ))
        .arg("-cp")
        .arg(&self.classes)
        .arg(main)
        .args(args)
        .stdin(Stdio::null());
        c
    }
}

/// The copies go when the test passes (a fresh clone's checkout path names a new folder each
/// time, so they would pile up in /tmp); a failing test leaves them to be looked at.
impl Drop for Unprivileged {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            if let Some(base) = self.base() {
                let _ = std::fs::remove_dir_all(base);
            }
        }
    }
}

/// `s` with the hexadecimal digits after every `0x` left out: addresses (monitors in a thread
/// dump, hidden classes' names) differ from run to run.
pub fn without_addresses(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i + 2]);
        rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}
