//! `orca`: validate and analyse the three Orca log files of a run.
//!
//! Exit status: 0 when all is well, 1 when the log is invalid (`check`) or a
//! deadlock was found (`deadlocks`), 2 when the files cannot be read or the
//! command line is wrong; `record` exits with the Java program's status.

mod attach;
mod bench;
mod deadlocks;
mod flame;
mod html;
mod pprof;
mod record;
mod report;
mod timeline;
mod util;
mod verdict;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use orca_format::{validate_prefix, EventReader, Metadata, Options, OrcaError, Severity};

#[derive(Parser)]
#[command(
    name = "orca",
    version,
    about = "Check and analyse Orca concurrency-profiler logs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a Java command under liborca.so and print its report (exit status: the Java
    /// program's).
    ///
    /// `orca record [OPTIONS] -- java ARGS...` runs `java ARGS...` with the agent (found
    /// beside `orca` or in $ORCA_AGENT), then prints `orca report PREFIX`.
    Record {
        /// Dump prefix: the run writes PREFIX.orca, PREFIX.methods, PREFIX.classtable.
        #[arg(
            short = 'o',
            long = "output",
            visible_alias = "prefix",
            value_name = "PREFIX",
            default_value = "orca"
        )]
        prefix: String,
        /// How the agent sees events (default: the agent's, instrument).
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        #[command(flatten)]
        flags: record::AgentFlags,
        /// Also write the HTML report (`orca html`) to FILE after the run.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Also write the pprof profiles (`orca pprof`) of every kind to DIR after the run:
        /// DIR/blocked.pb.gz, held.pb.gz, waited.pb.gz, semaphores.pb.gz.
        #[arg(long, value_name = "DIR")]
        pprof: Option<PathBuf>,
        /// The Java command: `java` (or a path to it) and its arguments.
        #[arg(last = true, required = true, value_name = "JAVA ARGS")]
        command: Vec<String>,
    },
    /// Record a JVM that is already running, then leave it as it was, and print the report.
    ///
    /// `orca attach PID -d 30s` loads liborca.so into JVM PID (HotSpot's attach protocol: no
    /// JDK tool needed; as root, a JVM of another user or in a container too), records for
    /// the duration or until Ctrl-C, stops (every class gets its original bytes back), and
    /// prints `orca report PREFIX`. Instrumentation mode only.
    Attach {
        /// The JVM's process ID.
        pid: u32,
        /// How long to record (`30s`, `500ms`, `2m`); without it, until Ctrl-C; `0` starts
        /// the recording and returns (`orca detach PID` stops it).
        #[arg(short = 'd', long = "duration", value_name = "DURATION", value_parser = attach::parse_duration)]
        duration: Option<std::time::Duration>,
        /// Dump prefix: PREFIX.orca, PREFIX.methods, PREFIX.classtable (made absolute; the
        /// JVM's user must be able to write there).
        #[arg(
            short = 'o',
            long = "output",
            visible_alias = "prefix",
            value_name = "PREFIX",
            default_value = "orca"
        )]
        prefix: String,
        #[command(flatten)]
        flags: record::AgentFlags,
        /// Also write the HTML report (`orca html`) to FILE after the recording.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// How long the JVM has to answer each command (`10s` by default).
        #[arg(long, value_name = "DURATION", value_parser = attach::parse_duration, default_value = "10s")]
        timeout: std::time::Duration,
    },
    /// Stop the recording `orca attach PID` started in JVM PID (its classes get their
    /// original bytes back; the files are closed).
    Detach {
        /// The JVM's process ID.
        pid: u32,
        /// How long the JVM has to answer (`10s` by default).
        #[arg(long, value_name = "DURATION", value_parser = attach::parse_duration, default_value = "10s")]
        timeout: std::time::Duration,
    },
    /// Write the last D of a running recording (`orca attach PID -d 0 --maxage 1h`, or
    /// `-agentpath:liborca.so=PREFIX,maxage=1h`) as one self-contained recording,
    /// PREFIX.orca, .methods, .classtable, while the recording goes on.
    Dump {
        /// The JVM's process ID.
        pid: u32,
        /// Where to write: PREFIX.orca, PREFIX.methods, PREFIX.classtable.
        #[arg(short = 'o', long = "output", value_name = "PREFIX")]
        prefix: String,
        /// How much: the last D (`10m`, `30s`); without it, all that is on disk.
        #[arg(long, value_name = "D", value_parser = attach::parse_duration)]
        last: Option<std::time::Duration>,
        /// How long the JVM has to answer (`10s` by default).
        #[arg(long, value_name = "DURATION", value_parser = attach::parse_duration, default_value = "10s")]
        timeout: std::time::Duration,
    },
    /// Validate PREFIX.orca/.methods/.classtable against docs/FORMAT.md.
    /// Prints one `file:line: what is wrong` per violation; exit 1 if invalid.
    Check {
        /// Dump prefix (the files are PREFIX.orca, PREFIX.methods, PREFIX.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// The agent's stackdepth, to reject deeper stacks.
        #[arg(long)]
        stackdepth: Option<u32>,
        /// Also print notes (pairs still open at the end of the log).
        #[arg(long, short)]
        verbose: bool,
        /// Most violations to print (the rest are counted).
        #[arg(long, default_value_t = 10_000)]
        max_violations: usize,
    },
    /// The verdict first (deadlocks, most blocked locks, long holds, missed wakeups), then
    /// threads, locks with owners and sites, hold times, semaphores, wait/notify.
    Report {
        /// Dump prefix (`out/run` for out/run.orca, out/run.methods, out/run.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// Rows per table of the text (`--json` has every row).
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// Print JSON instead of text: everything in the log, folded or not (docs/JSON.md).
        #[arg(long)]
        json: bool,
        /// Hold times from MonitorEntered/MonitorExit (and LockAcquired/LockRelease)
        /// events even when the log has MonitorHolds (LockHolds) summary lines (a
        /// `trace=all` log has both).
        #[arg(long)]
        from_events: bool,
        /// Show every thread, monitor and lock (not only the first --top), and the locks
        /// folded by default: uncontended ones and those only the JDK's own code takes.
        #[arg(long)]
        all: bool,
    },
    /// Lock-order cycles (potential deadlocks) and threads blocked at the end
    /// (actual deadlocks); exit 1 if any is found.
    Deadlocks {
        /// Dump prefix (`out/run` for out/run.orca, out/run.methods, out/run.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// The lock-order graph from MonitorEnter/MonitorEntered and LockAcquire
        /// events even when the log has LockOrder summary lines (a `trace=all` log
        /// has both).
        #[arg(long)]
        from_events: bool,
    },
    /// Collapsed stacks (`frame;frame;... weight`) for FlameGraph or speedscope.
    Flame {
        /// Dump prefix (`out/run` for out/run.orca, out/run.methods, out/run.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// Weight: nanoseconds blocked on monitors, or held (instrumentation mode).
        #[arg(long, value_enum, default_value_t = FlameWeight::Blocked)]
        weight: FlameWeight,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// `--weight held` from MonitorEntered/MonitorExit (LockAcquired/LockRelease)
        /// events even when the log has MonitorHolds (LockHolds) summary lines.
        #[arg(long)]
        from_events: bool,
    },
    /// A gzip-compressed pprof profile (`go tool pprof`, Grafana/Pyroscope, speedscope):
    /// count and nanoseconds per stack, the lock as the leaf frame, the thread as a label.
    Pprof {
        /// Dump prefix.
        prefix: PathBuf,
        /// What the samples measure.
        #[arg(long, value_enum, default_value_t = pprof::Kind::Blocked)]
        kind: pprof::Kind,
        /// Output file (`.pb.gz`).
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// `--kind held` from MonitorEntered/MonitorExit (LockAcquired/LockRelease) events
        /// even when the log has MonitorHolds (LockHolds) summary lines.
        #[arg(long)]
        from_events: bool,
    },
    /// Chrome trace-event JSON (Perfetto, chrome://tracing).
    Timeline {
        /// Dump prefix (`out/run` for out/run.orca, out/run.methods, out/run.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// One self-contained HTML page (no network needed): threads over time, locks, flame
    /// graphs, deadlocks.
    Html {
        /// Dump prefix (`out/run` for out/run.orca, out/run.methods, out/run.classtable).
        #[arg(value_parser = parse_prefix)]
        prefix: PathBuf,
        /// Output file.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
    /// Overhead of each mode (none, jvmti, instrument, jfr) on a Java program:
    /// `orca bench [--runs N] [--modes ...] [--load CMD --port N] -- java ARGS...`.
    Bench(bench::BenchArgs),
}

/// The agent's `mode=` option.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Rewritten bytecode: monitor exits, hold times, lock order.
    Instrument,
    /// JVMTI MethodEntry/MethodExit events.
    Jvmti,
}

/// What a flame graph's weights mean.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum FlameWeight {
    /// ns between MonitorContendedEnter and MonitorContendedEntered.
    Blocked,
    /// ns between MonitorEntered and MonitorExit, LockAcquired and LockRelease
    /// (from MonitorHolds and LockHolds summary lines when the log has any:
    /// one-frame stacks).
    Held,
    /// ns waiting: in Object.wait, Condition.await, LockSupport.park and Semaphore.acquire
    /// (the waits written one by one, and those counted per site in Waits lines).
    Waiting,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let start = std::time::Instant::now();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("orca: {e}");
            ExitCode::from(2)
        }
    };
    if std::env::var_os("ORCA_STATS").is_some() {
        // For the throughput benchmark: wall time and peak resident memory.
        let hwm = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .map(|l| l[6..].trim().to_string())
            })
            .unwrap_or_default();
        eprintln!(
            "orca-stats: seconds={:.3} VmHWM={hwm}",
            start.elapsed().as_secs_f64()
        );
    }
    code
}

fn run(cli: Cli) -> Result<ExitCode, Box<dyn std::error::Error>> {
    match cli.cmd {
        Cmd::Bench(a) => bench::run(a),
        Cmd::Attach {
            pid,
            duration,
            prefix,
            flags,
            html,
            timeout,
        } => attach::run(attach::Attach {
            pid,
            duration,
            record: record::Record {
                prefix,
                mode: None,
                flags,
                html,
                pprof: None,
                command: Vec::new(),
            },
            timeout,
        }),
        Cmd::Detach { pid, timeout } => attach::detach(pid, timeout),
        Cmd::Dump {
            pid,
            prefix,
            last,
            timeout,
        } => attach::dump(pid, &prefix, last, timeout),
        Cmd::Record {
            prefix,
            mode,
            flags,
            html,
            pprof,
            command,
        } => record::run(record::Record {
            prefix,
            mode: mode.map(|m| match m {
                Mode::Instrument => "instrument".to_string(),
                Mode::Jvmti => "jvmti".to_string(),
            }),
            flags,
            html,
            pprof,
            command,
        }),
        Cmd::Check {
            prefix,
            stackdepth,
            verbose,
            max_violations,
        } => check(&prefix, stackdepth, verbose, max_violations),
        Cmd::Report {
            prefix,
            top,
            json,
            from_events,
            all,
        } => {
            print_out(&report_text_with(&prefix, top, json, from_events, all)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Deadlocks {
            prefix,
            from_events,
        } => {
            let md = Metadata::load(&prefix)?;
            let (text, found) = deadlocks::run_with(open_events(&prefix)?, &md, from_events)?;
            print_out(&text)?;
            Ok(if found {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::Flame {
            prefix,
            weight,
            output,
            from_events,
        } => {
            let md = Metadata::load(&prefix)?;
            let text = flame::run_prefix(&prefix, &md, weight, from_events)?;
            match output {
                Some(p) => orca_format::output::write(&p, text).map_err(|e| e.to_string())?,
                None => print_out(&text)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Html { prefix, output } => {
            write_html(&prefix, &output)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Pprof {
            prefix,
            kind,
            output,
            from_events,
        } => {
            pprof::run(&prefix, &[(kind, output.clone())], from_events)?;
            eprintln!("orca: wrote {}", output.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Timeline { prefix, output } => {
            let md = Metadata::load(&prefix)?;
            let n = timeline::run(&prefix, &md, &output)?;
            eprintln!("orca: wrote {} trace events to {}", n, output.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What `orca report PREFIX [--top N] [--json]` prints.
fn report_text(
    prefix: &Path,
    top: usize,
    json: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    report_text_with(prefix, top, json, false, false)
}

/// [`report_text`], with `--from-events`.
fn report_text_with(
    prefix: &Path,
    top: usize,
    json: bool,
    from_events: bool,
    all: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let md = Metadata::load(prefix)?;
    // Two passes over the log, side by side: the figures and the deadlock analysis.
    let (ev_a, ev_f) = (open_events(prefix)?, open_events(prefix)?);
    let (a, f) = std::thread::scope(|sc| {
        let d = sc.spawn(|| deadlocks::analyze_with(ev_f, from_events));
        let a = report::Analysis::run_with(ev_a, from_events);
        (a, d.join().expect("the deadlock analysis panicked"))
    });
    let (a, f) = (a?, f?);
    let p = prefix.display().to_string();
    let v = verdict::verdict(&a, &f, &md, &p, all);
    Ok(if json {
        let j = report::json(&a, &md, &p, all);
        format!("{{\"verdict\":{},{}", verdict::json(&v), &j[1..])
    } else {
        format!(
            "{}\n{}",
            verdict::text(&v),
            report::text(&a, &md, &p, top, all)
        )
    })
}

/// A PREFIX argument; `out/run.orca` (or `.methods`, `.classtable`) names the prefix `out/run`
/// when that is what exists: a user who points at one of the files means the run.
fn parse_prefix(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    for ext in [".orca", ".methods", ".classtable"] {
        if let Some(stem) = s.strip_suffix(ext) {
            let orca = format!("{s}.orca");
            if !stem.is_empty()
                && !Path::new(&orca).exists()
                && Path::new(&format!("{stem}.orca")).exists()
            {
                return Ok(PathBuf::from(stem));
            }
        }
    }
    Ok(p)
}

/// Writes the HTML report and says where, with its size.
fn write_html(prefix: &Path, output: &Path) -> Result<(), html::HtmlError> {
    let bytes = html::run(prefix, output)?;
    eprintln!(
        "orca: wrote {} ({:.1} MB)",
        output.display(),
        bytes as f64 / 1e6
    );
    Ok(())
}

/// Writes the profile of every kind into `dir` (made if missing) and says where.
fn write_pprof(prefix: &Path, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let kinds: Vec<_> = pprof::Kind::ALL
        .iter()
        .map(|k| (*k, dir.join(format!("{}.pb.gz", k.name()))))
        .collect();
    pprof::run(prefix, &kinds, false)?;
    eprintln!(
        "orca: wrote the pprof profiles {}/{{{}}}.pb.gz",
        dir.display(),
        pprof::Kind::ALL.map(|k| k.name()).join(",")
    );
    Ok(())
}

fn open_events(prefix: &Path) -> Result<EventReader<orca_format::LogFile>, OrcaError> {
    EventReader::open(prefix)
}

/// Writes to stdout, treating a closed pipe (`| head`) as success.
fn print_out(s: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

fn check(
    prefix: &Path,
    stackdepth: Option<u32>,
    verbose: bool,
    max_violations: usize,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let opts = Options {
        max_stack_depth: stackdepth,
        max_violations,
    };
    let r = validate_prefix(prefix, &opts)?;
    let mut s = String::new();
    let (mut warnings, mut notes) = (0, 0);
    for v in &r.violations {
        match v.severity {
            Severity::Error => {}
            Severity::Warning => warnings += 1,
            Severity::Note => {
                notes += 1;
                if !verbose {
                    continue;
                }
            }
        }
        s.push_str(&v.to_string());
        s.push('\n');
    }
    if r.suppressed > 0 {
        s.push_str(&format!(
            "... {} more violations not printed\n",
            r.suppressed
        ));
    }
    s.push_str(&format!("how it ended: {}\n", r.ending()));
    if r.gaps > 0 {
        s.push_str(&format!(
            "chunks missing: the chunk folder has {} gaps (chunks deleted by hand?); lines do not pair across them\n",
            r.gaps
        ));
    }
    if let Some(settings) = &r.settings {
        s.push_str(&format!("{}\n", report::settings_text(settings)));
    }
    s.push_str(&format!(
        "{}: {} events, {} methods, {} classes, {} threads{}: {} ({} errors, {} warnings, {} notes{})\n",
        prefix.display(),
        r.events,
        r.methods,
        r.classes,
        r.threads,
        if r.dropped > 0 { format!(", {} events dropped", r.dropped) } else { String::new() },
        if r.is_valid() { "valid" } else { "INVALID" },
        r.errors,
        warnings,
        notes,
        if notes > 0 && !verbose { ", -v prints them" } else { "" }
    ));
    print_out(&s)?;
    Ok(if r.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
