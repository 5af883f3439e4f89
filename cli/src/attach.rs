//! `orca attach PID` and `orca detach PID`: record a JVM that is already running, then leave
//! it as it was.
//!
//! `attach` loads `liborca.so` into the JVM with HotSpot's attach protocol ([`hotspot`]),
//! which starts a recording (instrumentation mode: the loaded classes are retransformed);
//! after the duration, or at Ctrl-C, it loads it again with the option `stop`, which gives
//! every class its original bytes back and closes the files; then it prints the report, as
//! `orca record` does. `detach` sends only the `stop` (a recording whose `orca attach` was
//! killed, or one started with `-d 0`, which waits for nothing).

pub mod hotspot;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hotspot::{codes, AttachError, Target};

/// How `orca attach` was asked to run.
pub struct Attach {
    pub pid: u32,
    /// How long to record; `None`: until Ctrl-C (or `orca detach`); zero: start and return.
    pub duration: Option<Duration>,
    /// The agent options (the prefix first), as `orca record` makes them.
    pub record: crate::record::Record,
    /// How long the JVM has to answer each command.
    pub timeout: Duration,
}

/// Parses `30s`, `500ms`, `2m`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?}: write it as 30s, 500ms or 2m"))?;
    let secs = match unit {
        "ms" => n / 1e3,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("bad duration {s:?}: write it as 30s, 500ms or 2m")),
    };
    Ok(Duration::from_secs_f64(secs))
}

/// Set by SIGINT/SIGTERM while `orca attach` records: stop now.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// The agent library as the JVM must open it: absolute, and the same file inside the
/// target's mount namespace.
fn agent_for(target: &Target) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let so = crate::record::find_agent()?;
    let so =
        std::fs::canonicalize(&so).map_err(|e| format!("cannot read {}: {e}", so.display()))?;
    target.check_visible(&so)?;
    Ok(so)
}

/// What a return code of `Agent_OnAttach` means, as an error (0: none).
fn check_code(pid: u32, code: i32) -> Result<(), AttachError> {
    let what = match code {
        0 => return Ok(()),
        codes::ALREADY_RECORDING => return Err(AttachError::AlreadyRecording { pid }),
        codes::NOT_RECORDING => return Err(AttachError::NotRecording { pid }),
        codes::BAD_OPTIONS => "the agent refused its options (the JVM's standard error has its line)".to_string(),
        codes::JVMTI_MODE => "mode=jvmti cannot record a running JVM (HotSpot grants MethodEntry/MethodExit events only at start-up); attach in mode=instrument, the default".to_string(),
        codes::DUMP_FAILED => "the agent could not write the dump (the JVM's standard error has its line: an output folder the JVM's user cannot write?)".to_string(),
        codes::CANNOT_START => "the agent could not start recording (the JVM's standard error has its line: an output folder the JVM's user cannot write?)".to_string(),
        n => format!("loading liborca.so failed (return code {n}; the JVM's standard error may say why)"),
    };
    Err(AttachError::Refused { pid, what })
}

/// `orca attach`.
pub fn run(a: Attach) -> Result<std::process::ExitCode, Box<dyn std::error::Error>> {
    let target = Target::find(a.pid)?;
    let so = agent_for(&target)?;
    let mut record = a.record;
    // The JVM resolves a relative prefix against its own working directory: make it ours.
    let prefix = std::path::absolute(&record.prefix)
        .map_err(|e| format!("cannot make the prefix {} absolute: {e}", record.prefix))?;
    record.prefix = prefix.display().to_string();
    let options = crate::record::agent_options(&record)?;
    let (events, files) = crate::record::outputs(&record);
    crate::record::remove_stale(&files, Some(target.uid))?;
    check_code(a.pid, target.load(&so, &options, a.timeout)?)?;
    // The classes are instrumented by a thread of the agent's once the load has returned:
    // wait for it, so that what runs from now on is recorded.
    if let Err(e) = check_code(a.pid, target.load(&so, "started", a.timeout)?) {
        eprintln!("orca: {e}; recording monitor contention and threads only");
    }
    eprintln!(
        "orca: recording JVM {} to {}, {}.methods, .classtable{}",
        a.pid,
        events,
        record.prefix,
        match a.duration {
            Some(d) if d.is_zero() => format!("; `orca detach {}` stops it", a.pid),
            Some(d) => format!(" for {:.1} s (Ctrl-C stops it sooner)", d.as_secs_f64()),
            None => "; Ctrl-C stops it".to_string(),
        }
    );
    if a.duration.is_some_and(|d| d.is_zero()) {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop as *const () as libc::sighandler_t);
    }
    let start = Instant::now();
    let alive = |pid: u32| Path::new(&format!("/proc/{pid}")).exists();
    let deadline = a.duration.map(|d| start + d);
    while !STOP.load(Ordering::SeqCst) && alive(a.pid) {
        if let Some(end) = deadline {
            if Instant::now() >= end {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !alive(a.pid) {
        eprintln!(
            "orca: JVM {} ended during the recording; its files are as it left them",
            a.pid
        );
    } else {
        match check_code(a.pid, target.load(&so, "stop", a.timeout)?) {
            Ok(()) => eprintln!(
                "orca: stopped; JVM {} runs on with its classes as they were before the attach",
                a.pid
            ),
            // `orca detach` came first: the files are complete all the same.
            Err(AttachError::NotRecording { .. }) => {
                eprintln!("orca: the recording was stopped already (orca detach)")
            }
            Err(e) => return Err(e.into()),
        }
    }
    let prefix = readable_prefix(&target, &prefix);
    let shown = prefix.display().to_string();
    println!();
    println!("$ orca report {shown}");
    match crate::report_text(&prefix, 10, false) {
        Ok(text) => crate::print_out(&text)?,
        Err(e) => eprintln!("orca: cannot report on {shown}: {e}"),
    }
    if let Some(out) = &record.html {
        if let Err(e) = crate::write_html(&prefix, out) {
            eprintln!("orca: cannot write {}: {e}", out.display());
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `orca detach`.
pub fn detach(
    pid: u32,
    timeout: Duration,
) -> Result<std::process::ExitCode, Box<dyn std::error::Error>> {
    let target = Target::find(pid)?;
    let so = agent_for(&target)?;
    check_code(pid, target.load(&so, "stop", timeout)?)?;
    eprintln!("orca: stopped; JVM {pid} runs on with its classes as they were before the attach");
    Ok(std::process::ExitCode::SUCCESS)
}

/// `orca dump`: writes the last `last` (all on disk without it) of the recording under way
/// in JVM `pid` to `PREFIX.orca`, `.methods`, `.classtable`, while it goes on, then checks it.
pub fn dump(
    pid: u32,
    prefix: &str,
    last: Option<Duration>,
    timeout: Duration,
) -> Result<std::process::ExitCode, Box<dyn std::error::Error>> {
    if prefix.is_empty() || prefix.contains(',') {
        return Err(format!(
            "the prefix {prefix:?} cannot be used: it must be non-empty and cannot contain ','"
        )
        .into());
    }
    let target = Target::find(pid)?;
    let so = agent_for(&target)?;
    let abs = std::path::absolute(prefix)
        .map_err(|e| format!("cannot make the prefix {prefix} absolute: {e}"))?;
    let files: Vec<String> = ["orca", "methods", "classtable"]
        .iter()
        .map(|ext| format!("{}.{ext}", abs.display()))
        .collect();
    crate::record::remove_stale(&files, Some(target.uid))?;
    let mut options = format!("dump={}", abs.display());
    if let Some(d) = last {
        options.push_str(&format!(",last={}", d.as_nanos()));
    }
    match check_code(pid, target.load(&so, &options, timeout)?) {
        Err(AttachError::NotRecording { .. }) => {
            return Err(format!("JVM {pid} has no Orca recording under way (start one with orca attach PID -d 0 --maxage 1h, or -agentpath:liborca.so=PREFIX,maxage=1h)").into())
        }
        r => r?,
    }
    let shown = readable_prefix(&target, &abs);
    let r = orca_format::validate_prefix(&shown, &orca_format::Options::default())?;
    eprintln!(
        "orca: dumped {} of JVM {pid} to {}.orca, .methods, .classtable: {} events, {} threads ({}); the recording goes on",
        match last {
            Some(d) => format!("the last {:.0} s", d.as_secs_f64()),
            None => "all that is on disk".to_string(),
        },
        shown.display(),
        r.events,
        r.threads,
        if r.is_valid() { "valid" } else { "INVALID: orca check says why" }
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// `orca bench`'s attach: starts a recording in JVM `pid` with agent `so` and `options`
/// (the prefix first) and returns once its classes are instrumented, as `orca attach -d 0`.
pub fn start_recording(
    pid: u32,
    so: &Path,
    options: &str,
    timeout: Duration,
) -> Result<(), Box<dyn std::error::Error>> {
    let target = Target::find(pid)?;
    check_code(pid, target.load(so, options, timeout)?)?;
    check_code(pid, target.load(so, "started", timeout)?)?;
    Ok(())
}

/// `orca bench`'s detach: stops the recording [`start_recording`] started.
pub fn stop_recording(
    pid: u32,
    so: &Path,
    timeout: Duration,
) -> Result<(), Box<dyn std::error::Error>> {
    let target = Target::find(pid)?;
    check_code(pid, target.load(so, "stop", timeout)?)?;
    Ok(())
}

/// Where this process reads the files the JVM wrote at `prefix` in its own mount namespace.
fn readable_prefix(target: &Target, prefix: &Path) -> PathBuf {
    let same_ns = |p: &str| std::fs::read_link(p).ok();
    let ours = same_ns("/proc/self/ns/mnt");
    let theirs = same_ns(&format!("/proc/{}/ns/mnt", target.pid));
    if ours.is_some() && ours == theirs {
        prefix.to_path_buf()
    } else {
        target.root.join(prefix.strip_prefix("/").unwrap_or(prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("3h").is_err());
        assert!(parse_duration("s").is_err());
    }
}
