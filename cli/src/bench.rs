//! `orca bench`: what watching a Java program costs, mode by mode.
//!
//! Runs the user's command once per mode as a warm-up (`--warmup-runs`), then `--runs` interleaved rounds
//! (none, jvmti, instrument, jfr, none, jvmti, ...), so that the runs compared with each other
//! share whatever else the machine was doing at the time. Each run is one child process reaped
//! with `wait4`, which gives its own CPU time (user + system) and peak resident set.
//!
//! Modes:
//! - `none`: the command as given;
//! - `jvmti`, `instrument`: with `-agentpath:<liborca.so>=<tmp prefix>,mode=...` right after
//!   the `java` executable; `instrument:stackdepth=1+jdk=yes` adds agent options (`+` between
//!   them); the agent's exit line gives the event count, the three files the log bytes;
//! - `attach` (with `--rate`; `attach:stackdepth=1` adds agent options): the command as
//!   given, plus `-Dorca.bench.windows=stdin`, which asks the program for more than one
//!   window: once it has printed its first `throughput:` line (before any agent), `orca`
//!   attaches (instrumentation mode, as `orca attach`) and writes a line to its standard input,
//!   on which the program waits out its warm-up again (the retransformed code's JIT) and
//!   measures a second window, recorded; then `orca` detaches and asks for a third, after the
//!   detach, and closes the program's input, at which it exits. One run gives three rows
//!   (`attach before`, `attach recording`, `attach after detach`), each rate a fraction of
//!   the same run's window before the attach: the cost while recording and what is left
//!   after the detach. The program's work must be in methods called anew (a frame running
//!   across the attach keeps its old code: tests/java/AttachRate.java);
//! - `jfr`: with `-XX:StartFlightRecording` and a settings file that enables only the events
//!   comparable to Orca's (monitor enter and wait, sleep, park, thread start and end) at
//!   threshold 0 with stack traces; `jfr summary` of the last round's recording gives the
//!   event count, the recording's size the log bytes.
//!
//! The ratio to `none` is taken pair by pair: each round's run divided by the same round's
//! `none` run, then the median of those ratios.
//!
//! A server (`--load CMD --port N`): each run starts the program, waits until 127.0.0.1:N
//! accepts a connection, runs the load generator (`wrk`; its `Requests/sec:` line is the
//! measure), then stops the program with SIGTERM and waits for it to exit, so that the agent
//! has written everything. With `--load-warmup N` the load generator first runs N times
//! unmeasured in the same process: a server's figure is then that of compiled code, not of
//! its first seconds under the JIT (which the agent's inlined tracker makes longer). The figure compared is then the throughput: requests per second,
//! as a fraction of the same round's `none` run (higher is better), beside the server's CPU
//! time per request.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Arguments of `orca bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Interleaved rounds after the warm-up.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Unmeasured runs of each mode before the rounds (they fill the page cache and the
    /// class-data archive's pages). A program that measures its own steady state (`--rate`)
    /// has warmed up inside every run, so 0 saves a run per mode there.
    #[arg(long, default_value_t = 1, value_name = "N")]
    warmup_runs: u32,
    /// Comma-separated modes: none, jvmti, instrument, jfr, attach; an agent mode may carry
    /// options after `:`, joined by `+` (`instrument:stackdepth=1+jdk=yes`). `attach` (needs
    /// --rate) records a JVM started without the agent for one window between two without.
    #[arg(long, default_value = "none,jvmti,instrument,jfr")]
    modes: String,
    /// The `java` executable to use instead of the command's first word.
    #[arg(long)]
    java: Option<PathBuf>,
    /// Append the result table (markdown) to this file.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Append one CSV line per mode to this file (header written when the file is new).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// A name for the workload in the tables (default: the command line).
    #[arg(long)]
    label: Option<String>,
    /// The agent (default: $ORCA_AGENT, else liborca.so beside the orca executable).
    #[arg(long)]
    agent: Option<PathBuf>,
    /// The program is a server: once it listens on 127.0.0.1:PORT, run this load generator
    /// (split on whitespace, no shell; its output must have wrk's `Requests/sec:` line), then
    /// stop the server with SIGTERM. Needs --port.
    #[arg(long, requires = "port", value_name = "CMD")]
    load: Option<String>,
    /// The TCP port on 127.0.0.1 the server listens on (with --load).
    #[arg(long, requires = "load")]
    port: Option<u16>,
    /// With --load: seconds to wait for the server to listen, and for it to exit after SIGTERM.
    #[arg(long, default_value_t = 180)]
    server_timeout: u64,
    /// With --load: runs of the load generator in each server process before the measured
    /// one (the JIT's warm-up; their requests count in the CPU per request).
    #[arg(long, requires = "load", default_value_t = 0, value_name = "N")]
    load_warmup: u32,
    /// The program measures itself in steady state: it prints a line `throughput: N ops/s`
    /// (after its own warm-up, over a window it chooses), and that is the figure compared, as a
    /// fraction of the same round's no-agent run (higher is better), as a server's requests/s
    /// are. A program that runs for days is slowed by what a profiler costs its compiled
    /// code, not by its first second under the JIT, which a wall time mostly measures.
    #[arg(long, conflicts_with = "load")]
    rate: bool,
    /// The program: `-- java ARGS...`.
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

/// The JFR events recorded in `jfr` mode, all at threshold 0 with stack traces.
const JFR_EVENTS: [(&str, bool); 6] = [
    ("jdk.JavaMonitorEnter", true),
    ("jdk.JavaMonitorWait", true),
    ("jdk.ThreadSleep", true),
    ("jdk.ThreadPark", true),
    ("jdk.ThreadStart", false),
    ("jdk.ThreadEnd", false),
];

/// The JFR settings file of `jfr` mode. Events it does not name are not recorded.
pub fn jfr_settings() -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <configuration version=\"2.0\" label=\"orca-bench\" description=\"The events comparable to Orca's, threshold 0, stack traces; nothing else\">\n",
    );
    for (name, has_threshold) in JFR_EVENTS {
        let _ = writeln!(s, "  <event name=\"{name}\">");
        s.push_str("    <setting name=\"enabled\">true</setting>\n");
        if name != "jdk.ThreadEnd" {
            s.push_str("    <setting name=\"stackTrace\">true</setting>\n");
        }
        if has_threshold {
            s.push_str("    <setting name=\"threshold\">0 ms</setting>\n");
        }
        s.push_str("  </event>\n");
    }
    s.push_str("</configuration>\n");
    s
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    None,
    Agent(String),
    Jfr,
    /// Attached to the running program for its second window (agent options, without the
    /// prefix; empty: the defaults).
    Attach(String),
}

#[derive(Clone, Debug)]
struct Mode {
    name: String,
    kind: Kind,
}

fn parse_modes(s: &str) -> Result<Vec<Mode>, String> {
    let mut out: Vec<Mode> = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (base, opts) = match tok.split_once(':') {
            Some((b, o)) => (b, Some(o)),
            None => (tok, None),
        };
        let kind = match (base, opts) {
            ("none", None) => Kind::None,
            ("jfr", None) => Kind::Jfr,
            ("jvmti" | "instrument" | "attach", o) => {
                let mut a = if base == "attach" {
                    String::new()
                } else {
                    format!("mode={base}")
                };
                for opt in o.into_iter().flat_map(|o| o.split('+')) {
                    if !opt.contains('=') {
                        return Err(format!("mode {tok}: agent option {opt:?} is not key=value"));
                    }
                    if !a.is_empty() {
                        a.push(',');
                    }
                    a.push_str(opt);
                }
                if base == "attach" {
                    Kind::Attach(a)
                } else {
                    Kind::Agent(a)
                }
            }
            _ => {
                return Err(format!(
                    "unknown mode {tok:?}; modes are none, jvmti, instrument, jfr, attach (agent modes may take :key=value+key=value)"
                ))
            }
        };
        if out.iter().any(|m| m.name == tok) {
            return Err(format!("mode {tok} given twice"));
        }
        out.push(Mode {
            name: tok.to_string(),
            kind,
        });
    }
    if out.is_empty() {
        return Err("no modes".into());
    }
    Ok(out)
}

/// One run's measurements.
#[derive(Clone, Debug, Default)]
struct Sample {
    wall: f64,
    cpu: f64,
    /// Peak resident set, KiB.
    rss_kb: u64,
    events: Option<u64>,
    dropped: u64,
    log_bytes: u64,
    /// The agent's writer thread's CPU time, from its exit line (when it prints it).
    writer_cpu: Option<f64>,
    /// With --load: what the load generator measured.
    load: Option<LoadResult>,
    /// With --load: seconds until the server listened, and from SIGTERM to its exit.
    startup: f64,
    stop: f64,
    /// `attach`: the program's rates (ops/s) before the attach, while recording, after the
    /// detach.
    windows: Option<[f64; 3]>,
}

/// What the load generator reported.
#[derive(Clone, Debug, Default, PartialEq)]
struct LoadResult {
    /// Requests per second (wrk's `Requests/sec:`).
    rps: f64,
    /// Requests completed (wrk's `N requests in T`).
    requests: u64,
    /// Requests completed by the warm-up runs (`--load-warmup`) in the same process.
    warmup_requests: u64,
    /// Socket errors and non-2xx/3xx responses.
    errors: u64,
}

/// A steady-state program's own figure (`--rate`): its line `throughput: N ops/s`.
fn parse_rate(out: &str) -> Option<f64> {
    out.lines()
        .filter_map(|l| l.trim().strip_prefix("throughput:"))
        .find_map(|v| v.trim().strip_suffix("ops/s")?.trim().parse().ok())
}

/// wrk's summary: `N requests in 5.00s, ...`, `Requests/sec: X`, and the error lines
/// `Socket errors: connect A, read B, write C, timeout D` and `Non-2xx or 3xx responses: N`.
fn parse_wrk(out: &str) -> Option<LoadResult> {
    let mut r = LoadResult::default();
    let mut have_rps = false;
    for l in out.lines().map(str::trim) {
        if let Some(v) = l.strip_prefix("Requests/sec:") {
            r.rps = v.trim().parse().ok()?;
            have_rps = true;
        } else if let Some((n, _)) = l.split_once(" requests in ") {
            r.requests = n.trim().parse().ok()?;
        } else if let Some(v) = l.strip_prefix("Non-2xx or 3xx responses:") {
            r.errors += v.trim().parse::<u64>().ok()?;
        } else if let Some(v) = l.strip_prefix("Socket errors:") {
            for part in v.split(',') {
                r.errors += part.split_whitespace().nth(1)?.parse::<u64>().ok()?;
            }
        }
    }
    have_rps.then_some(r)
}

/// `wait4` for our child: blocking, or with `WNOHANG` (then `None` while it runs).
fn wait_child(
    pid: libc::pid_t,
    block: bool,
) -> Result<Option<(libc::c_int, libc::rusage)>, String> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: valid pointers to locals; pid is our child, not yet reaped.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return match r {
            0 => Ok(None),
            r if r == pid => Ok(Some((status, ru))),
            _ => Err(format!("wait4: {}", std::io::Error::last_os_error())),
        };
    }
}

/// The last lines of a run's stderr, for an error message.
fn stderr_tail(stderr_path: &Path) -> String {
    let text = std::fs::read_to_string(stderr_path).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(15).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

fn describe_status(status: libc::c_int) -> String {
    if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else {
        format!("signal {}", libc::WTERMSIG(status))
    }
}

fn listening(port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200)).is_ok()
}

/// How a server run drives its program.
struct Server {
    load: Vec<String>,
    port: u16,
    timeout: std::time::Duration,
    warmup: u32,
}

/// Drives a server just started (`pid`, since `t`): waits until it listens, runs the load
/// generator, stops the server with SIGTERM and reaps it. Fills the sample's load result,
/// start-up and stop times; returns the exit status and rusage. On an error the server is
/// killed and reaped.
fn drive_server(
    srv: &Server,
    pid: libc::pid_t,
    argv: &[String],
    stderr_path: &Path,
    t: Instant,
    s: &mut Sample,
) -> Result<(libc::c_int, libc::rusage), String> {
    let kill = |sig| {
        // SAFETY: pid is our child, not yet reaped.
        unsafe { libc::kill(pid, sig) };
    };
    let fail = |msg: String| -> String {
        kill(libc::SIGKILL);
        let _ = wait_child(pid, true);
        format!("{msg}: {}\n{}", argv.join(" "), stderr_tail(stderr_path))
    };
    loop {
        if let Some((status, _)) = wait_child(pid, false).map_err(&fail)? {
            return Err(format!(
                "the server exited ({}) before it listened on 127.0.0.1:{}: {}\n{}",
                describe_status(status),
                srv.port,
                argv.join(" "),
                stderr_tail(stderr_path)
            ));
        }
        if listening(srv.port) {
            break;
        }
        if t.elapsed() > srv.timeout {
            return Err(fail(format!(
                "the server did not listen on 127.0.0.1:{} within {} s",
                srv.port,
                srv.timeout.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    s.startup = t.elapsed().as_secs_f64();
    let mut warmup_requests = 0;
    for run in 0..=srv.warmup {
        let out = Command::new(&srv.load[0])
            .args(&srv.load[1..])
            .stdin(Stdio::null())
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => return Err(fail(format!("cannot run {}: {e}", srv.load[0]))),
        };
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(fail(format!(
                "the load generator failed ({}): {}\n{text}{}",
                out.status,
                srv.load.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        match parse_wrk(&text) {
            Some(r) if run < srv.warmup => warmup_requests += r.requests,
            Some(r) => {
                s.load = Some(LoadResult {
                    warmup_requests,
                    ..r
                })
            }
            None => {
                return Err(fail(format!(
                    "no `Requests/sec:` line in the output of {}:\n{text}",
                    srv.load.join(" ")
                )))
            }
        }
    }
    let stop = Instant::now();
    kill(libc::SIGTERM);
    loop {
        if let Some(r) = wait_child(pid, false).map_err(&fail)? {
            s.stop = stop.elapsed().as_secs_f64();
            return Ok(r);
        }
        if stop.elapsed() > srv.timeout {
            return Err(fail(format!(
                "the server did not exit within {} s of SIGTERM",
                srv.timeout.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Runs one command, reaping it with wait4 for its own rusage; a server (`srv`) is driven
/// by [`drive_server`] between start and exit, and may end by SIGTERM.
fn run_child(
    argv: &[String],
    stderr_path: &Path,
    srv: Option<&Server>,
    stdout_path: Option<&Path>,
) -> Result<Sample, String> {
    let err = File::create(stderr_path).map_err(|e| format!("{}: {e}", stderr_path.display()))?;
    let out = match stdout_path {
        Some(p) => Stdio::from(File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => Stdio::null(),
    };
    if let Some(srv) = srv {
        if listening(srv.port) {
            return Err(format!(
                "something already listens on 127.0.0.1:{} before the server started",
                srv.port
            ));
        }
    }
    let mut s = Sample::default();
    let t = Instant::now();
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    let pid = child.id() as libc::pid_t;
    let reaped = match srv {
        Some(srv) => drive_server(srv, pid, argv, stderr_path, t, &mut s),
        None => wait_child(pid, true).map(|r| r.expect("a blocking wait4 returns the child")),
    };
    let wall = t.elapsed().as_secs_f64();
    // The child is reaped (or wait4 failed): dropping `child` neither waits nor kills.
    drop(child);
    let (status, ru) = reaped?;
    let ok = (libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
        || (srv.is_some()
            && ((libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 128 + libc::SIGTERM)
                || (libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTERM)));
    if !ok {
        return Err(format!(
            "the program failed ({}): {}\n{}",
            describe_status(status),
            argv.join(" "),
            stderr_tail(stderr_path)
        ));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s.wall = wall;
    s.cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
    s.rss_kb = ru.ru_maxrss as u64;
    Ok(s)
}

/// The agent's exit line, `orca: N events, D dropped[, ...][, writer CPU X.XXX s][, ...];
/// wrote ...`: the events, the dropped events and the writer thread's CPU seconds (when the
/// line has them).
#[derive(Debug, PartialEq)]
struct AgentExit {
    events: u64,
    dropped: u64,
    writer_cpu: Option<f64>,
}

fn parse_agent_exit(stderr: &str) -> Option<AgentExit> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("orca: "))
        .find_map(|l| {
            let (n, rest) = l.split_once(" events, ")?;
            let (d, _) = rest.split_once(" dropped")?;
            // Only the summary part, before `; wrote <paths>` (a path could say anything).
            let summary = rest.split_once("; wrote ").map_or(rest, |(a, _)| a);
            let writer_cpu = summary.split(", ").find_map(|part| {
                part.strip_prefix("writer CPU ")?
                    .strip_suffix(" s")?
                    .trim()
                    .parse()
                    .ok()
            });
            Some(AgentExit {
                events: n.parse().ok()?,
                dropped: d.parse().ok()?,
                writer_cpu,
            })
        })
}

/// Sum of the counts of the recorded event types in `jfr summary` output.
fn parse_jfr_summary(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next()?;
            let count: u64 = w.next()?.parse().ok()?;
            JFR_EVENTS.iter().any(|(n, _)| *n == name).then_some(count)
        })
        .sum()
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

fn find_agent(given: Option<PathBuf>) -> Result<PathBuf, String> {
    let p = given
        .or_else(|| std::env::var_os("ORCA_AGENT").map(PathBuf::from))
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join("liborca.so")))
        })
        .ok_or("cannot find liborca.so: set $ORCA_AGENT or pass --agent")?;
    if !p.exists() {
        return Err(format!(
            "{} is missing: build it (cargo build --release -p orca-agent), set $ORCA_AGENT or pass --agent",
            p.display()
        ));
    }
    Ok(p)
}

struct Ctx {
    java: String,
    rest: Vec<String>,
    agent: Option<PathBuf>,
    jfc: PathBuf,
    dir: PathBuf,
    server: Option<Server>,
    /// `--rate`: the program prints its own steady-state throughput.
    rate: bool,
}

impl Ctx {
    /// Runs `mode` once; `summarize_jfr` also counts the JFR recording's events.
    fn run(&self, mode: &Mode, tag: &str, summarize_jfr: bool) -> Result<Sample, String> {
        if let Kind::Attach(opts) = &mode.kind {
            return self.run_attached(opts, tag);
        }
        let mut argv = vec![self.java.clone()];
        let prefix = self.dir.join(tag);
        let jfr_file = self.dir.join(format!("{tag}.jfr"));
        match &mode.kind {
            Kind::None | Kind::Attach(_) => {}
            Kind::Agent(opts) => argv.push(format!(
                "-agentpath:{}={},{opts}",
                self.agent.as_ref().expect("agent found").display(),
                prefix.display()
            )),
            Kind::Jfr => argv.push(format!(
                "-XX:StartFlightRecording=filename={},settings={}",
                jfr_file.display(),
                self.jfc.display()
            )),
        }
        argv.extend(self.rest.iter().cloned());
        let err_path = self.dir.join(format!("{tag}.stderr"));
        let out_path = self.dir.join(format!("{tag}.stdout"));
        let mut s = run_child(
            &argv,
            &err_path,
            self.server.as_ref(),
            self.rate.then_some(out_path.as_path()),
        )?;
        if self.rate {
            let text = std::fs::read_to_string(&out_path).unwrap_or_default();
            let rps = parse_rate(&text).ok_or_else(|| {
                format!(
                    "--rate: no `throughput: N ops/s` line in the output of {}:\n{text}",
                    argv.join(" ")
                )
            })?;
            s.load = Some(LoadResult {
                rps,
                ..LoadResult::default()
            });
        }
        match &mode.kind {
            Kind::None | Kind::Attach(_) => {}
            Kind::Agent(_) => agent_figures(&err_path, &prefix, &mut s)?,
            Kind::Jfr => {
                s.log_bytes = file_len(&jfr_file);
                if summarize_jfr {
                    let jfr_tool = Path::new(&self.java).with_file_name("jfr");
                    let out = Command::new(&jfr_tool)
                        .arg("summary")
                        .arg(&jfr_file)
                        .output()
                        .map_err(|e| format!("cannot run {}: {e}", jfr_tool.display()))?;
                    s.events = Some(parse_jfr_summary(&String::from_utf8_lossy(&out.stdout)));
                }
                let _ = std::fs::remove_file(&jfr_file);
            }
        }
        let _ = std::fs::remove_file(&err_path);
        Ok(s)
    }
}

/// The agent's figures of a run: its exit line's (in the JVM's standard error) and the size
/// of the three files, which are removed.
fn agent_figures(err_path: &Path, prefix: &Path, s: &mut Sample) -> Result<(), String> {
    let text = std::fs::read_to_string(err_path).unwrap_or_default();
    let x = parse_agent_exit(&text).ok_or_else(|| {
        format!(
            "no `orca: N events` exit line from the agent in {}",
            err_path.display()
        )
    })?;
    s.events = Some(x.events);
    s.dropped = x.dropped;
    s.writer_cpu = x.writer_cpu;
    for ext in ["orca", "methods", "classtable"] {
        let f = prefix.with_extension(ext);
        s.log_bytes += file_len(&f);
        let _ = std::fs::remove_file(f);
    }
    Ok(())
}

/// The property that asks a `--rate` program for a window per line of its standard input
/// after its first (`attach` mode).
pub const WINDOWS_PROPERTY: &str = "-Dorca.bench.windows=stdin";

impl Ctx {
    /// `attach`: the program started without the agent, its first window measured; attached
    /// (`opts`), a second; detached, a third (see the module's doc). The program is killed
    /// on an error.
    fn run_attached(&self, opts: &str, tag: &str) -> Result<Sample, String> {
        use std::io::{BufRead, BufReader};
        let prefix = self.dir.join(tag);
        let err_path = self.dir.join(format!("{tag}.stderr"));
        let mut argv = vec![self.java.clone(), WINDOWS_PROPERTY.to_string()];
        argv.extend(self.rest.iter().cloned());
        let err = File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        let t = Instant::now();
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err))
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
        let pid = child.id();
        let mut input = child.stdin.take();
        let mut output = BufReader::new(child.stdout.take().expect("piped"));
        let so = self.agent.as_ref().expect("agent found");
        let options = if opts.is_empty() {
            prefix.display().to_string()
        } else {
            format!("{},{opts}", prefix.display())
        };
        let timeout = std::time::Duration::from_secs(30);
        let mut next_rate = || -> Result<f64, String> {
            let mut line = String::new();
            loop {
                line.clear();
                match output.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        return Err(format!(
                            "attach: the program's output ended before its next `throughput: N ops/s` line (does it measure a window per line of input when run with {WINDOWS_PROPERTY}?)"
                        ))
                    }
                    Ok(_) => {
                        if let Some(r) = parse_rate(&line) {
                            return Ok(r);
                        }
                    }
                }
            }
        };
        let ask = |input: &mut Option<std::process::ChildStdin>| {
            input
                .as_mut()
                .map(|i| i.write_all(b"next\n").and_then(|()| i.flush()))
                .transpose()
                .map_err(|e| format!("attach: cannot ask the program for a window: {e}"))
        };
        let windows = (|| -> Result<[f64; 3], String> {
            let before = next_rate()?;
            crate::attach::start_recording(pid, so, &options, timeout)
                .map_err(|e| format!("attach: {e}"))?;
            ask(&mut input)?;
            let recording = next_rate()?;
            crate::attach::stop_recording(pid, so, timeout).map_err(|e| format!("detach: {e}"))?;
            ask(&mut input)?;
            let after = next_rate()?;
            Ok([before, recording, after])
        })();
        // End of input: the program exits.
        drop(input);
        if windows.is_err() {
            // SAFETY: pid is our child, not yet reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        let reaped = wait_child(pid as libc::pid_t, true);
        let wall = t.elapsed().as_secs_f64();
        // Reaped (or wait4 failed): dropping `child` neither waits nor kills.
        drop(child);
        let fail = |msg: String| format!("{msg}: {}\n{}", argv.join(" "), stderr_tail(&err_path));
        let windows = windows.map_err(fail)?;
        let (status, ru) = reaped?.expect("a blocking wait4 returns the child");
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            return Err(fail(format!(
                "the program failed ({})",
                describe_status(status)
            )));
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        let mut s = Sample {
            wall,
            cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
            rss_kb: ru.ru_maxrss as u64,
            windows: Some(windows),
            load: Some(LoadResult {
                rps: windows[1],
                ..LoadResult::default()
            }),
            ..Sample::default()
        };
        agent_figures(&err_path, &prefix, &mut s)?;
        let _ = std::fs::remove_file(&err_path);
        Ok(s)
    }
}

/// Per-mode summary of the rounds (an `attach` mode has three: see [`attach_rows`]).
#[derive(Clone)]
struct Summary {
    mode: String,
    wall: (f64, f64, f64),
    cpu: (f64, f64, f64),
    rss_mb: (f64, f64, f64),
    ratio: (f64, f64, f64),
    cpu_ratio: f64,
    events: Option<u64>,
    /// Dropped in the last round (beside `events`), and the most in any round.
    dropped: u64,
    dropped_max: u64,
    events_per_s: Option<f64>,
    ns_per_event: Option<f64>,
    log_bytes: u64,
    /// Median over the rounds whose exit line had it.
    writer_cpu: Option<f64>,
    /// With --load: requests/s, and its fraction of the same round's `none` run's.
    rps: Option<(f64, f64, f64)>,
    throughput: Option<(f64, f64, f64)>,
    /// With --load: the server's CPU time per request (µs), median over rounds.
    cpu_us_per_request: Option<f64>,
    startup: f64,
    stop: f64,
    /// With --load: socket errors and non-2xx/3xx responses, all rounds.
    load_errors: u64,
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let (lo, hi) = min_max(v);
    (median(v), lo, hi)
}

fn summarize(modes: &[Mode], rounds: &[Vec<Sample>]) -> Vec<Summary> {
    let base = modes.iter().position(|m| m.kind == Kind::None);
    let base_wall = base.map(|b| median(&rounds.iter().map(|r| r[b].wall).collect::<Vec<_>>()));
    modes
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            let col: Vec<&Sample> = rounds.iter().map(|r| &r[i]).collect();
            let wall: Vec<f64> = col.iter().map(|s| s.wall).collect();
            let cpu: Vec<f64> = col.iter().map(|s| s.cpu).collect();
            let rss: Vec<f64> = col.iter().map(|s| s.rss_kb as f64 / 1024.0).collect();
            let (ratio, cpu_ratio) = match base {
                Some(b) => {
                    let r: Vec<f64> = rounds.iter().map(|r| r[i].wall / r[b].wall).collect();
                    let c: Vec<f64> = rounds.iter().map(|r| r[i].cpu / r[b].cpu).collect();
                    (stats(&r), median(&c))
                }
                None => ((f64::NAN, f64::NAN, f64::NAN), f64::NAN),
            };
            let events = col.iter().rev().find_map(|s| s.events);
            let dropped = col.last().map(|s| s.dropped).unwrap_or(0);
            let w = median(&wall);
            let events_per_s = events.map(|e| (e + dropped) as f64 / w);
            let ns_per_event = match (events, base_wall) {
                (Some(e), Some(bw)) if e + dropped > 0 && m.kind != Kind::None => {
                    Some((w - bw) * 1e9 / (e + dropped) as f64)
                }
                _ => None,
            };
            let writer: Vec<f64> = col.iter().filter_map(|s| s.writer_cpu).collect();
            let loads: Vec<&LoadResult> = col.iter().filter_map(|s| s.load.as_ref()).collect();
            let is_load = !loads.is_empty() && loads.len() == col.len();
            let rps = is_load.then(|| stats(&loads.iter().map(|l| l.rps).collect::<Vec<_>>()));
            let throughput = match base {
                Some(b) if is_load => {
                    let r: Option<Vec<f64>> = rounds
                        .iter()
                        .map(|r| Some(r[i].load.as_ref()?.rps / r[b].load.as_ref()?.rps))
                        .collect();
                    r.map(|r| stats(&r))
                }
                _ => None,
            };
            let served = loads.iter().any(|l| l.requests > 0);
            let cpu_us_per_request = (is_load && served).then(|| {
                median(
                    &col.iter()
                        .map(|s| {
                            let n = s
                                .load
                                .as_ref()
                                .map_or(0, |l| l.requests + l.warmup_requests);
                            s.cpu * 1e6 / n.max(1) as f64
                        })
                        .collect::<Vec<_>>(),
                )
            });
            let sum = Summary {
                writer_cpu: (!writer.is_empty()).then(|| median(&writer)),
                rps,
                throughput,
                cpu_us_per_request,
                startup: median(&col.iter().map(|s| s.startup).collect::<Vec<_>>()),
                stop: median(&col.iter().map(|s| s.stop).collect::<Vec<_>>()),
                load_errors: loads.iter().map(|l| l.errors).sum(),
                mode: m.name.clone(),
                wall: stats(&wall),
                cpu: stats(&cpu),
                rss_mb: stats(&rss),
                ratio,
                cpu_ratio,
                events,
                dropped,
                dropped_max: col.iter().map(|s| s.dropped).max().unwrap_or(0),
                events_per_s,
                ns_per_event,
                log_bytes: col.last().map(|s| s.log_bytes).unwrap_or(0),
            };
            if matches!(m.kind, Kind::Attach(_)) {
                attach_rows(sum, &col)
            } else {
                vec![sum]
            }
        })
        .collect()
}

/// An `attach` mode's rows: its windows before the attach, while recording and after the
/// detach, each rate a fraction of the same run's first window. The agent's figures (events,
/// log) are the recording's; the run's CPU, memory and times are the whole run's, in each.
fn attach_rows(sum: Summary, col: &[&Sample]) -> Vec<Summary> {
    let windows: Vec<[f64; 3]> = col.iter().filter_map(|s| s.windows).collect();
    ["before", "recording", "after detach"]
        .iter()
        .enumerate()
        .map(|(k, what)| {
            let rates: Vec<f64> = windows.iter().map(|w| w[k]).collect();
            let ratios: Vec<f64> = windows.iter().map(|w| w[k] / w[0]).collect();
            let mut row = sum.clone();
            row.mode = format!("{} {what}", sum.mode);
            row.rps = (!rates.is_empty()).then(|| stats(&rates));
            row.throughput = (!ratios.is_empty()).then(|| stats(&ratios));
            if k != 1 {
                row.events = None;
                row.dropped = 0;
                row.dropped_max = 0;
                row.writer_cpu = None;
                row.log_bytes = 0;
                row.events_per_s = None;
                row.ns_per_event = None;
            }
            row
        })
        .collect()
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn markdown(label: &str, sums: &[Summary], runs: usize, warmup_runs: u32) -> String {
    let mut s = String::new();
    let warmup = match warmup_runs {
        0 => "no warm-up run".to_string(),
        1 => "a warm-up run".to_string(),
        n => format!("{n} warm-up runs"),
    };
    let _ = writeln!(
        s,
        "`{label}`, {runs} interleaved rounds after {warmup}; median (min–max):\n"
    );
    let events = |m: &Summary| opt(m.events, |e| e.to_string());
    let dropped = |m: &Summary| {
        opt(m.events.map(|_| m.dropped), |d| {
            if m.dropped_max > d {
                format!("{d} (max {})", m.dropped_max)
            } else {
                d.to_string()
            }
        })
    };
    let writer = |m: &Summary| m.writer_cpu.map_or(String::new(), |w| format!("{w:.3}"));
    if sums.iter().any(|m| m.rps.is_some()) {
        if sums.iter().any(|m| m.cpu_us_per_request.is_some()) {
            s.push_str("Server under load: throughput of the measured load run as a fraction of the same round's no-agent run (higher is better); CPU is the server's, start-up to exit, per request served (warm-up load runs, if any, included).\n\n");
        } else {
            s.push_str("Steady state: the program's own throughput after its warm-up (operations/s, in the requests/s column) as a fraction of the same round's no-agent run (higher is better).\n\n");
        }
        if sums.iter().any(|m| m.mode.ends_with(" after detach")) {
            s.push_str("`attach` rows: one JVM started without the agent, three windows (each after the warm-up): before the attach, while recording, after the detach; each as a fraction of the same run's window before the attach. CPU, start-up and RSS are the whole run's; events and log bytes the recording's.\n\n");
        }
        s.push_str("| mode | requests/s | fraction of no-agent throughput | server CPU per request (µs) | CPU user+sys (s) | start-up (s) | stop (s) | peak RSS (MB) | events | dropped | writer CPU (s) | load errors | log bytes |\n");
        s.push_str(
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        for m in sums {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {:.3} ({:.3}–{:.3}) | {:.2} | {:.2} | {:.0} ({:.0}–{:.0}) | {} | {} | {} | {} | {} |",
                m.mode,
                opt(m.rps, |r| format!("{:.0} ({:.0}–{:.0})", r.0, r.1, r.2)),
                opt(m.throughput, |r| format!("{:.3} ({:.3}–{:.3})", r.0, r.1, r.2)),
                opt(m.cpu_us_per_request, |c| format!("{c:.1}")),
                m.cpu.0,
                m.cpu.1,
                m.cpu.2,
                m.startup,
                m.stop,
                m.rss_mb.0,
                m.rss_mb.1,
                m.rss_mb.2,
                events(m),
                dropped(m),
                writer(m),
                m.load_errors,
                m.log_bytes
            );
        }
        return s;
    }
    s.push_str("| mode | wall (s) | CPU user+sys (s) | peak RSS (MB) | wall ratio to none | CPU ratio to none | events | dropped | events/s | extra ns per event | writer CPU (s) | log bytes |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for m in sums {
        let _ = writeln!(
            s,
            "| {} | {:.3} ({:.3}–{:.3}) | {:.3} ({:.3}–{:.3}) | {:.0} ({:.0}–{:.0}) | {:.2}x ({:.2}–{:.2}) | {:.2}x | {} | {} | {} | {} | {} | {} |",
            m.mode,
            m.wall.0,
            m.wall.1,
            m.wall.2,
            m.cpu.0,
            m.cpu.1,
            m.cpu.2,
            m.rss_mb.0,
            m.rss_mb.1,
            m.rss_mb.2,
            m.ratio.0,
            m.ratio.1,
            m.ratio.2,
            m.cpu_ratio,
            events(m),
            dropped(m),
            opt(m.events_per_s, |e| format!("{e:.0}")),
            opt(m.ns_per_event, |e| format!("{e:.0}")),
            writer(m),
            m.log_bytes
        );
    }
    s
}

const CSV_HEADER: &str = "label,mode,runs,wall_median,wall_min,wall_max,cpu_median,cpu_min,cpu_max,rss_mb_median,ratio_median,ratio_min,ratio_max,cpu_ratio_median,events,dropped,events_per_s,ns_per_event,log_bytes,writer_cpu_s,rps_median,rps_min,rps_max,throughput_ratio_median,throughput_ratio_min,throughput_ratio_max,cpu_us_per_request,startup_s,stop_s,load_errors,dropped_max";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_lines(label: &str, sums: &[Summary], runs: usize) -> String {
    let mut s = String::new();
    for m in sums {
        let _ = writeln!(
            s,
            "{},{},{runs},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.1},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{},{}",
            csv_field(label),
            csv_field(&m.mode),
            m.wall.0,
            m.wall.1,
            m.wall.2,
            m.cpu.0,
            m.cpu.1,
            m.cpu.2,
            m.rss_mb.0,
            m.ratio.0,
            m.ratio.1,
            m.ratio.2,
            m.cpu_ratio,
            opt(m.events, |e| e.to_string()),
            m.dropped,
            opt(m.events_per_s, |e| format!("{e:.0}")),
            opt(m.ns_per_event, |e| format!("{e:.1}")),
            m.log_bytes,
            m.writer_cpu.map_or(String::new(), |w| format!("{w:.4}")),
            m.rps.map_or(",,".into(), |r| format!("{:.1},{:.1},{:.1}", r.0, r.1, r.2)),
            m.throughput
                .map_or(",,".into(), |r| format!("{:.4},{:.4},{:.4}", r.0, r.1, r.2)),
            m.cpu_us_per_request
                .map_or(String::new(), |c| format!("{c:.2}")),
            m.startup,
            m.stop,
            m.load_errors,
            m.dropped_max
        );
    }
    s
}

fn append(path: &Path, text: &str, header: Option<&str>) -> Result<(), String> {
    let new = !path.exists() || file_len(path) == 0;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut t = String::new();
    if new {
        if let Some(h) = header {
            t.push_str(h);
            t.push('\n');
        }
    }
    t.push_str(text);
    f.write_all(t.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `orca bench`.
pub fn run(a: BenchArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let modes = parse_modes(&a.modes)?;
    if a.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let java = match &a.java {
        Some(j) => j.display().to_string(),
        None => a.command[0].clone(),
    };
    let rest = a.command[1..].to_vec();
    if modes.iter().any(|m| matches!(m.kind, Kind::Attach(_))) && !a.rate {
        return Err("mode attach needs --rate: the program must measure its own windows (`throughput: N ops/s`, one more per line of input under -Dorca.bench.windows=stdin)".into());
    }
    let agent = if modes
        .iter()
        .any(|m| matches!(m.kind, Kind::Agent(_) | Kind::Attach(_)))
    {
        Some(find_agent(a.agent.clone())?)
    } else {
        None
    };
    let dir = std::env::temp_dir().join(format!("orca-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let jfc = dir.join("orca-bench.jfc");
    std::fs::write(&jfc, jfr_settings()).map_err(|e| format!("{}: {e}", jfc.display()))?;
    let server = match (&a.load, a.port) {
        (Some(load), Some(port)) => {
            let load: Vec<String> = load.split_whitespace().map(String::from).collect();
            if load.is_empty() {
                return Err("--load: empty command".into());
            }
            Some(Server {
                load,
                port,
                timeout: std::time::Duration::from_secs(a.server_timeout),
                warmup: a.load_warmup,
            })
        }
        _ => None,
    };
    let ctx = Ctx {
        java: java.clone(),
        rest,
        agent,
        jfc,
        dir: dir.clone(),
        server,
        rate: a.rate,
    };
    let label = a.label.clone().unwrap_or_else(|| {
        std::iter::once(java.as_str())
            .chain(ctx.rest.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let names: Vec<&str> = modes.iter().map(|m| m.name.as_str()).collect();
    println!(
        "orca bench: {label}\n  modes {}, {} warm-up run(s) then {} interleaved rounds",
        names.join(", "),
        a.warmup_runs,
        a.runs
    );
    if let Some(ag) = &ctx.agent {
        println!("  agent {}", ag.display());
    }
    if ctx.rate {
        println!("  steady state: the figure is the program's own `throughput: N ops/s` line");
    }
    if let Some(srv) = &ctx.server {
        println!(
            "  server: once 127.0.0.1:{} listens, load `{}` ({} warm-up run{} first), then SIGTERM",
            srv.port,
            srv.load.join(" "),
            srv.warmup,
            if srv.warmup == 1 { "" } else { "s" }
        );
    }
    if modes.iter().any(|m| m.kind == Kind::Jfr) {
        println!(
            "  jfr: -XX:StartFlightRecording=filename=<tmp>.jfr,settings=<tmp>/orca-bench.jfc, with these settings:"
        );
        for l in jfr_settings().lines() {
            println!("    {l}");
        }
    }
    let result = (|| -> Result<Vec<Vec<Sample>>, String> {
        for w in 0..a.warmup_runs {
            for m in &modes {
                eprint!("  warm-up {} ...", m.name);
                let s = ctx.run(m, &format!("warmup{w}-{}", sanitize(&m.name)), false)?;
                eprintln!(" {}", progress(&s));
            }
        }
        let mut rounds = Vec::new();
        for r in 0..a.runs {
            let last = r + 1 == a.runs;
            let mut row = Vec::new();
            eprint!("  round {}/{}:", r + 1, a.runs);
            for m in &modes {
                let s = ctx.run(m, &format!("r{r}-{}", sanitize(&m.name)), last)?;
                eprint!(" {} {}", m.name, progress(&s));
                row.push(s);
            }
            eprintln!();
            rounds.push(row);
        }
        Ok(rounds)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    if result.is_err() {
        // End the progress line the failure interrupted.
        eprintln!();
    }
    let rounds = result?;
    let sums = summarize(&modes, &rounds);
    let md = markdown(&label, &sums, a.runs, a.warmup_runs);
    println!();
    print!("{md}");
    if let Some(p) = &a.markdown {
        append(p, &format!("{md}\n"), None)?;
    }
    if let Some(p) = &a.csv {
        append(p, &csv_lines(&label, &sums, a.runs), Some(CSV_HEADER))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One run on the progress line: its wall time, or a server's requests/s.
fn progress(s: &Sample) -> String {
    if let Some([b, r, a]) = s.windows {
        return format!("{b:.0}/{r:.0}/{a:.0} ops/s");
    }
    match &s.load {
        Some(l) => format!("{:.0} req/s", l.rps),
        None => format!("{:.3} s", s.wall),
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        let m = parse_modes("none,jvmti,instrument:stackdepth=1+jdk=yes,jfr").unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].kind, Kind::None);
        assert_eq!(m[1].kind, Kind::Agent("mode=jvmti".into()));
        assert_eq!(
            m[2].kind,
            Kind::Agent("mode=instrument,stackdepth=1,jdk=yes".into())
        );
        assert_eq!(m[3].kind, Kind::Jfr);
        assert!(parse_modes("none,bogus").is_err());
        assert!(parse_modes("none,none").is_err());
        assert!(parse_modes("jfr:x=1").is_err());
    }

    #[test]
    fn a_steady_state_program_gives_its_own_rate() {
        let out = "warming up\nthroughput: 48213.5 ops/s\nderby: 900000 transactions\n";
        assert_eq!(parse_rate(out), Some(48213.5));
        assert_eq!(parse_rate("throughput: fast\n"), None);
        assert_eq!(parse_rate("done in 3 s\n"), None);
    }

    #[test]
    fn agent_exit_line() {
        let e = "orca: recording (mode=instrument, stackdepth=8) to a\n\
                 orca: 469 events, 3 dropped, 1 classes instrumented; wrote a.orca, b, c\n";
        assert_eq!(
            parse_agent_exit(e),
            Some(AgentExit {
                events: 469,
                dropped: 3,
                writer_cpu: None
            })
        );
        assert_eq!(parse_agent_exit("nothing"), None);
        let e = "orca: 12 events, 0 dropped, 1 classes instrumented, writer CPU 0.125 s; wrote a, b, c\n";
        assert_eq!(parse_agent_exit(e).unwrap().writer_cpu, Some(0.125));
        let e = "orca: 12 events, 0 dropped, writer CPU 2.5 s, 3 lines lost to write errors; wrote x, writer CPU 9 s, y\n";
        assert_eq!(
            parse_agent_exit(e),
            Some(AgentExit {
                events: 12,
                dropped: 0,
                writer_cpu: Some(2.5)
            })
        );
        let e = "orca: 1 events, 0 dropped; wrote /tmp/writer CPU 1 s, b, c\n";
        assert_eq!(parse_agent_exit(e).unwrap().writer_cpu, None);
    }

    #[test]
    fn wrk_output() {
        let out = "Running 5s test @ http://127.0.0.1:18080/
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     6.01ms   22.76ms 202.54ms   96.35%
    Req/Sec     9.44k     6.38k   31.94k    67.24%
  54764 requests in 3.03s, 8.76MB read
Requests/sec:  18063.50
Transfer/sec:      2.89MB
";
        assert_eq!(
            parse_wrk(out),
            Some(LoadResult {
                rps: 18063.5,
                requests: 54764,
                errors: 0,
                warmup_requests: 0,
            })
        );
        let out = "  100 requests in 5.00s, 1.00KB read
  Socket errors: connect 0, read 2, write 0, timeout 5
  Non-2xx or 3xx responses: 3
Requests/sec:     20.00
";
        assert_eq!(parse_wrk(out).unwrap().errors, 10);
        assert_eq!(parse_wrk("  100 requests in 5.00s\n"), None);
        assert_eq!(parse_wrk("Requests/sec: lots\n"), None);
    }

    #[test]
    fn throughput_pair_by_pair() {
        let modes = parse_modes("none,instrument:trace=all").unwrap();
        assert_eq!(
            modes[1].kind,
            Kind::Agent("mode=instrument,trace=all".into())
        );
        let s = |rps: f64, writer_cpu| Sample {
            wall: 10.0,
            cpu: 2.0,
            writer_cpu,
            load: Some(LoadResult {
                rps,
                requests: (rps * 5.0) as u64,
                errors: 0,
                warmup_requests: 0,
            }),
            ..Sample::default()
        };
        let rounds = vec![
            vec![
                s(1000.0, None),
                Sample {
                    dropped: 7,
                    ..s(500.0, Some(0.5))
                },
            ],
            vec![s(2000.0, None), s(1500.0, Some(0.25))],
            vec![s(1000.0, None), s(800.0, None)],
        ];
        let sums = summarize(&modes, &rounds);
        assert_eq!(sums[1].throughput, Some((0.75, 0.5, 0.8)));
        assert_eq!(sums[1].rps, Some((800.0, 500.0, 1500.0)));
        assert_eq!(sums[1].writer_cpu, Some(0.375));
        assert_eq!((sums[1].dropped, sums[1].dropped_max), (0, 7));
        assert_eq!(sums[0].writer_cpu, None);
        assert_eq!(sums[0].throughput.unwrap().0, 1.0);
        // 2 s of CPU for 5,000 requests: 400 µs each.
        assert_eq!(sums[0].cpu_us_per_request, Some(400.0));
        // Warm-up runs' requests are served by the same CPU.
        let mut warm = rounds.clone();
        for round in &mut warm {
            for s in round.iter_mut() {
                s.load.as_mut().unwrap().warmup_requests = 5000;
            }
        }
        assert_eq!(summarize(&modes, &warm)[0].cpu_us_per_request, Some(200.0));
        let md = markdown("jetty", &sums, 3, 1);
        assert!(md.contains("fraction of no-agent throughput"), "{md}");
        assert!(
            md.contains("| instrument:trace=all | 800 (500–1500) | 0.750 (0.500–0.800) |"),
            "{md}"
        );
        let csv = csv_lines("jetty", &sums, 3);
        assert_eq!(
            csv.lines().next().unwrap().split(',').count(),
            CSV_HEADER.split(',').count()
        );
    }

    #[test]
    fn jfr_summary_counts_only_recorded_types() {
        let t = " jdk.JavaMonitorWait   7794  179376\n jdk.CheckPoint 13 12174\n jdk.ThreadStart 9 99\n jdk.Metadata 1 9\n";
        assert_eq!(parse_jfr_summary(t), 7803);
        assert!(jfr_settings().contains("<setting name=\"threshold\">0 ms</setting>"));
    }

    #[test]
    fn ratios_pair_by_pair() {
        let modes = parse_modes("none,instrument").unwrap();
        let s = |wall: f64, events| Sample {
            wall,
            cpu: wall,
            events,
            ..Sample::default()
        };
        let rounds = vec![
            vec![s(1.0, None), s(2.0, Some(100))],
            vec![s(2.0, None), s(3.0, Some(100))],
            vec![s(1.0, None), s(1.5, Some(100))],
        ];
        let sums = summarize(&modes, &rounds);
        assert_eq!(sums[1].ratio.0, 1.5);
        assert_eq!(sums[1].ratio.1, 1.5);
        assert_eq!(sums[1].ratio.2, 2.0);
        assert_eq!(sums[0].ratio.0, 1.0);
    }
}
