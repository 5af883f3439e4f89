//! `orca bench`: what watching a Java program costs, mode by mode.
//!
//! Runs the user's command once per mode as a warm-up, then `--runs` interleaved rounds
//! (none, jvmti, instrument, jfr, none, jvmti, ...), so that the runs compared with each other
//! share whatever else the machine was doing at the time. Each run is one child process reaped
//! with `wait4`, which gives its own CPU time (user + system) and peak resident set.
//!
//! Modes:
//! - `none`: the command as given;
//! - `jvmti`, `instrument`: with `-agentpath:<liborca.so>=<tmp prefix>,mode=...` right after
//!   the `java` executable; `instrument:stackdepth=1+jdk=yes` adds agent options (`+` between
//!   them); the agent's exit line gives the event count, the three files the log bytes;
//! - `jfr`: with `-XX:StartFlightRecording` and a settings file that enables only the events
//!   comparable to Orca's (monitor enter and wait, sleep, park, thread start and end) at
//!   threshold 0 with stack traces; `jfr summary` of the last round's recording gives the
//!   event count, the recording's size the log bytes.
//!
//! The ratio to `none` is taken pair by pair: each round's run divided by the same round's
//! `none` run, then the median of those ratios.

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
    /// Comma-separated modes: none, jvmti, instrument, jfr; an agent mode may carry options
    /// after `:`, joined by `+` (`instrument:stackdepth=1+jdk=yes`).
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
            ("jvmti" | "instrument", o) => {
                let mut a = format!("mode={base}");
                for opt in o.into_iter().flat_map(|o| o.split('+')) {
                    if !opt.contains('=') {
                        return Err(format!("mode {tok}: agent option {opt:?} is not key=value"));
                    }
                    a.push(',');
                    a.push_str(opt);
                }
                Kind::Agent(a)
            }
            _ => {
                return Err(format!(
                    "unknown mode {tok:?}; modes are none, jvmti, instrument, jfr (agent modes may take :key=value+key=value)"
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
}

/// Runs one command, reaping it with wait4 for its own rusage.
fn run_child(argv: &[String], stderr_path: &Path) -> Result<Sample, String> {
    let err = File::create(stderr_path).map_err(|e| format!("{}: {e}", stderr_path.display()))?;
    let t = Instant::now();
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = loop {
        // SAFETY: valid pointers to locals; pid is our child, not yet reaped.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    let wall = t.elapsed().as_secs_f64();
    // The child is reaped: dropping `child` neither waits nor kills.
    drop(child);
    if r != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok {
        let text = std::fs::read_to_string(stderr_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "the program failed ({}): {}\n{}",
            if libc::WIFEXITED(status) {
                format!("exit status {}", libc::WEXITSTATUS(status))
            } else {
                format!("signal {}", libc::WTERMSIG(status))
            },
            argv.join(" "),
            tail.join("\n")
        ));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok(Sample {
        wall,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        rss_kb: ru.ru_maxrss as u64,
        ..Sample::default()
    })
}

/// `orca: N events, D dropped...` from the agent's stderr.
fn parse_agent_exit(stderr: &str) -> Option<(u64, u64)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("orca: "))
        .find_map(|l| {
            let (n, rest) = l.split_once(" events, ")?;
            let (d, _) = rest.split_once(" dropped")?;
            Some((n.parse().ok()?, d.parse().ok()?))
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
}

impl Ctx {
    /// Runs `mode` once; `summarize_jfr` also counts the JFR recording's events.
    fn run(&self, mode: &Mode, tag: &str, summarize_jfr: bool) -> Result<Sample, String> {
        let mut argv = vec![self.java.clone()];
        let prefix = self.dir.join(tag);
        let jfr_file = self.dir.join(format!("{tag}.jfr"));
        match &mode.kind {
            Kind::None => {}
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
        let mut s = run_child(&argv, &err_path)?;
        match &mode.kind {
            Kind::None => {}
            Kind::Agent(_) => {
                let text = std::fs::read_to_string(&err_path).unwrap_or_default();
                let (n, d) = parse_agent_exit(&text).ok_or_else(|| {
                    format!(
                        "no `orca: N events` exit line from the agent in {}",
                        err_path.display()
                    )
                })?;
                s.events = Some(n);
                s.dropped = d;
                for ext in ["orca", "methods", "classtable"] {
                    let f = prefix.with_extension(ext);
                    s.log_bytes += file_len(&f);
                    let _ = std::fs::remove_file(f);
                }
            }
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

/// Per-mode summary of the rounds.
struct Summary {
    mode: String,
    wall: (f64, f64, f64),
    cpu: (f64, f64, f64),
    rss_mb: (f64, f64, f64),
    ratio: (f64, f64, f64),
    cpu_ratio: f64,
    events: Option<u64>,
    dropped: u64,
    events_per_s: Option<f64>,
    ns_per_event: Option<f64>,
    log_bytes: u64,
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
        .map(|(i, m)| {
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
            Summary {
                mode: m.name.clone(),
                wall: stats(&wall),
                cpu: stats(&cpu),
                rss_mb: stats(&rss),
                ratio,
                cpu_ratio,
                events,
                dropped,
                events_per_s,
                ns_per_event,
                log_bytes: col.last().map(|s| s.log_bytes).unwrap_or(0),
            }
        })
        .collect()
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn markdown(label: &str, sums: &[Summary], runs: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "`{label}`, {runs} interleaved rounds after a warm-up; median (min–max):\n"
    );
    s.push_str("| mode | wall (s) | CPU user+sys (s) | peak RSS (MB) | wall ratio to none | CPU ratio to none | events | events/s | extra ns per event | log bytes |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for m in sums {
        let _ = writeln!(
            s,
            "| {} | {:.3} ({:.3}–{:.3}) | {:.3} ({:.3}–{:.3}) | {:.0} ({:.0}–{:.0}) | {:.2}x ({:.2}–{:.2}) | {:.2}x | {} | {} | {} | {} |",
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
            opt(m.events, |e| if m.dropped > 0 {
                format!("{e} (+{} dropped)", m.dropped)
            } else {
                e.to_string()
            }),
            opt(m.events_per_s, |e| format!("{e:.0}")),
            opt(m.ns_per_event, |e| format!("{e:.0}")),
            m.log_bytes
        );
    }
    s
}

const CSV_HEADER: &str = "label,mode,runs,wall_median,wall_min,wall_max,cpu_median,cpu_min,cpu_max,rss_mb_median,ratio_median,ratio_min,ratio_max,cpu_ratio_median,events,dropped,events_per_s,ns_per_event,log_bytes";

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
            "{},{},{runs},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.1},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{}",
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
            m.log_bytes
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
    let agent = if modes.iter().any(|m| matches!(m.kind, Kind::Agent(_))) {
        Some(find_agent(a.agent.clone())?)
    } else {
        None
    };
    let dir = std::env::temp_dir().join(format!("orca-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let jfc = dir.join("orca-bench.jfc");
    std::fs::write(&jfc, jfr_settings()).map_err(|e| format!("{}: {e}", jfc.display()))?;
    let ctx = Ctx {
        java: java.clone(),
        rest,
        agent,
        jfc,
        dir: dir.clone(),
    };
    let label = a.label.clone().unwrap_or_else(|| {
        std::iter::once(java.as_str())
            .chain(ctx.rest.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let names: Vec<&str> = modes.iter().map(|m| m.name.as_str()).collect();
    println!(
        "orca bench: {label}\n  modes {}, warm-up then {} interleaved rounds",
        names.join(", "),
        a.runs
    );
    if let Some(ag) = &ctx.agent {
        println!("  agent {}", ag.display());
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
        for m in &modes {
            eprint!("  warm-up {} ...", m.name);
            let s = ctx.run(m, &format!("warmup-{}", sanitize(&m.name)), false)?;
            eprintln!(" {:.3} s", s.wall);
        }
        let mut rounds = Vec::new();
        for r in 0..a.runs {
            let last = r + 1 == a.runs;
            let mut row = Vec::new();
            eprint!("  round {}/{}:", r + 1, a.runs);
            for m in &modes {
                let s = ctx.run(m, &format!("r{r}-{}", sanitize(&m.name)), last)?;
                eprint!(" {} {:.3} s", m.name, s.wall);
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
    let md = markdown(&label, &sums, a.runs);
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
    fn agent_exit_line() {
        let e = "orca: recording (mode=instrument, stackdepth=8) to a\n\
                 orca: 469 events, 3 dropped, 1 classes instrumented; wrote a.orca, b, c\n";
        assert_eq!(parse_agent_exit(e), Some((469, 3)));
        assert_eq!(parse_agent_exit("nothing"), None);
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
