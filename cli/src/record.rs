//! `orca record`: runs a Java command under `liborca.so`, then prints
//! `orca report PREFIX` and its output for the files the run wrote.
//!
//! The agent is `$ORCA_AGENT` when set, else `liborca.so` in the folder of the
//! `orca` executable (cargo puts both in `target/release`). The
//! `-agentpath:` option goes right after the first word after `--` (the java
//! executable), so it comes before the main class or `-jar`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};

/// The agent options `orca record` and `orca attach` both take, declared once so that the
/// two commands cannot drift apart; each is passed on as the agent option of its name only
/// when given (the agent's defaults are docs/OPTIONS.md's).
#[derive(clap::Args, Default)]
pub struct AgentFlags {
    /// Frames per stack trace, 0 to 1024 (default: the agent's, 8).
    #[arg(long)]
    pub stackdepth: Option<u32>,
    /// Keep the events as a ring of chunk files (PREFIX.chunks/) of at most SIZE in all
    /// (`200MB`; agent option maxsize=SIZE): the oldest chunk is removed first.
    #[arg(long, value_name = "SIZE")]
    pub maxsize: Option<String>,
    /// Keep the events as a ring of chunk files (PREFIX.chunks/), each removed once its last
    /// line is older than D (`1h`, `10m`; agent option maxage=D).
    #[arg(long, value_name = "D")]
    pub maxage: Option<String>,
    /// Instrumentation mode: also rewrite the JDK's own classes (agent option jdk=yes).
    #[arg(long)]
    pub jdk: bool,
    /// Leave java.util.concurrent locks, conditions and parks out (agent option juc=no;
    /// they are recorded by default).
    #[arg(long)]
    pub no_juc: bool,
    /// Instrumentation mode: `summary` (the agent's default: per-site hold summaries) or
    /// `all` (also every monitor enter and exit as an event: the complete trace).
    #[arg(long, value_parser = ["summary", "all"])]
    pub trace: Option<String>,
    /// Instrumentation mode: holds at least this long are events with a stack
    /// (`10ms`, `500us`, `0`, `off`; the agent's default is 10ms).
    #[arg(long, value_name = "DURATION")]
    pub holdthreshold: Option<String>,
    /// Instrumentation mode: `sampled` (the agent's default: every hold counted, a bounded
    /// sample timed) or `exact` (every hold timed).
    #[arg(long, value_parser = ["sampled", "exact"])]
    pub holdtiming: Option<String>,
    /// Instrumentation mode, with sampled timing: `sampled` (the agent's default: a sample
    /// identified, the other holds counted per site) or `full` (every hold identified, its
    /// monitor hashed and its lock orders counted).
    #[arg(long, value_parser = ["full", "sampled"])]
    pub tracking: Option<String>,
    /// Instrumentation mode: `on` guards the monitor sites kept in a local (javac's
    /// `synchronized` blocks and methods): past a million holds, one outermost hold in 16 is
    /// followed and the others make no tracker call, their figures estimated (docs/MODES.md,
    /// "Guarded sites"); `off` (the agent's default) follows every hold.
    #[arg(long, value_parser = ["on", "off"])]
    pub guards: Option<String>,
    /// Instrumentation mode: waits (wait, await, park) at least this long are events with
    /// a stack, shorter ones are counted per site (`10ms`, `0` for every wait as an event;
    /// the agent's default is 10ms).
    #[arg(long, value_name = "DURATION")]
    pub waitthreshold: Option<String>,
    /// Instrumentation mode: contentions at least this long are events with a stack and
    /// owner, shorter ones are counted per site (`1ms`, `0` for every contention as events;
    /// the agent's default is 1ms).
    #[arg(long, value_name = "DURATION")]
    pub contentionthreshold: Option<String>,
}

/// How `orca record` was asked to run.
pub struct Record {
    pub prefix: String,
    pub mode: Option<String>,
    pub flags: AgentFlags,
    /// Also write the HTML report there.
    pub html: Option<PathBuf>,
    /// Also write the pprof profiles of every kind into this directory.
    pub pprof: Option<PathBuf>,
    pub command: Vec<String>,
}

/// Where the agent is, or a message saying where it was looked for.
pub fn find_agent() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ORCA_AGENT") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "ORCA_AGENT is set to {}, which is not a file; point it at liborca.so \
                 (cargo build --release -p orca-agent builds target/release/liborca.so)",
                p.display()
            ))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the orca executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let so = dir.join("liborca.so");
    if so.is_file() {
        Ok(so)
    } else {
        Err(format!(
            "cannot find the agent: no {} beside the orca executable and ORCA_AGENT is not set; \
             build it with `cargo build --release -p orca-agent` or set ORCA_AGENT=/path/to/liborca.so",
            so.display()
        ))
    }
}

/// The agent options after `=`: the prefix first, then the given options.
pub fn agent_options(r: &Record) -> Result<String, String> {
    if r.prefix.is_empty() || r.prefix.contains(',') {
        return Err(format!(
            "the prefix {:?} cannot be used: it must be non-empty and cannot contain ',' (the agent's option separator)",
            r.prefix
        ));
    }
    let mut opts = r.prefix.clone();
    if let Some(m) = &r.mode {
        opts.push_str(",mode=");
        opts.push_str(m);
    }
    let f = &r.flags;
    if let Some(d) = f.stackdepth {
        opts.push_str(&format!(",stackdepth={d}"));
    }
    if let Some(t) = &f.trace {
        opts.push_str(&format!(",trace={t}"));
    }
    if let Some(t) = &f.holdthreshold {
        opts.push_str(&format!(",holdthreshold={t}"));
    }
    if let Some(t) = &f.holdtiming {
        opts.push_str(&format!(",holdtiming={t}"));
    }
    if let Some(t) = &f.tracking {
        opts.push_str(&format!(",tracking={t}"));
    }
    if let Some(g) = &f.guards {
        opts.push_str(&format!(",guards={g}"));
    }
    if let Some(t) = &f.waitthreshold {
        opts.push_str(&format!(",waitthreshold={t}"));
    }
    if let Some(t) = &f.contentionthreshold {
        opts.push_str(&format!(",contentionthreshold={t}"));
    }
    if f.jdk {
        opts.push_str(",jdk=yes");
    }
    if f.no_juc {
        opts.push_str(",juc=no");
    }
    if let Some(v) = &f.maxsize {
        opts.push_str(&format!(",maxsize={v}"));
    }
    if let Some(v) = &f.maxage {
        opts.push_str(&format!(",maxage={v}"));
    }
    Ok(opts)
}

/// The files (and, for a bounded recording, the chunk folder) the agent writes at the
/// prefix of `r`: the event file's (folder's) first. `remove_stale` takes the files only: the
/// agent empties its chunk folder of an earlier run's chunks itself.
pub fn outputs(r: &Record) -> (String, Vec<String>) {
    let bounded = r.flags.maxsize.is_some() || r.flags.maxage.is_some();
    let events = format!("{}.{}", r.prefix, if bounded { "chunks" } else { "orca" });
    let mut files = vec![
        format!("{}.methods", r.prefix),
        format!("{}.classtable", r.prefix),
    ];
    if !bounded {
        files.insert(0, events.clone());
    }
    (events, files)
}

/// `java ARGS...` with `-agentpath:<so>=<options>` inserted after `java`.
pub fn java_args(so: &Path, options: &str, command: &[String]) -> Vec<String> {
    let mut v = Vec::with_capacity(command.len() + 1);
    v.push(command[0].clone());
    v.push(format!("-agentpath:{}={options}", so.display()));
    v.extend(command[1..].iter().cloned());
    v
}

/// Runs the command; the exit status is the Java program's (2 when `orca`
/// itself cannot run it, 128+N when a signal N ended it).
pub fn run(r: Record) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if r.command.is_empty() {
        return Err(
            "no command to run: write it after `--`, e.g. orca record -- java -cp app.jar Main"
                .into(),
        );
    }
    let so = find_agent()?;
    let options = agent_options(&r)?;
    let args = java_args(&so, &options, &r.command);
    let (events, files) = outputs(&r);
    remove_stale(&files, None)?;
    // Signals that arrive while the JVM starts wait (blocked) for the forwarder.
    let blocked = BlockSignals::new();
    let mut child = Command::new(&args[0])
        .args(&args[1..])
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", args[0]))?;
    let forward = ForwardSignals::new(child.id());
    drop(blocked);
    let status = child.wait();
    drop(forward);
    let status = status.map_err(|e| format!("waiting for {}: {e}", args[0]))?;
    let code = match status.code() {
        Some(c) => c,
        None => {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
    };
    if !files.iter().all(|f| Path::new(f).is_file()) || !Path::new(&events).exists() {
        // The JVM stops before loading agents when its own options are wrong (an
        // unrecognized -XX option, a bad -Xmx): it printed why, and no file was written.
        eprintln!(
            "orca: {} exited with status {code} before the agent started: it wrote no {} \
             (the JVM's own message above says why); nothing to report",
            r.command[0],
            files.join(", ")
        );
    } else if code != 0 && !has_program_events(Path::new(&r.prefix)) {
        // The agent started but the program did not (a class not found, a bad jar): an
        // empty report would only look like a program that did nothing.
        eprintln!(
            "orca: {} exited with status {code} and the log has no lock, wait, park, sleep or \
             join event outside the JDK (did the program start? the message above says why); not printing an \
             empty report (`orca report {}` prints it)",
            r.command[0],
            shell_word(&r.prefix)
        );
    } else {
        println!();
        println!("$ orca report {}", shell_word(&r.prefix));
        match crate::report_text(Path::new(&r.prefix), 10, false) {
            Ok(text) => crate::print_out(&text)?,
            Err(e) => eprintln!("orca: cannot report on {}: {e}", r.prefix),
        }
        if let Some(out) = &r.html {
            if let Err(e) = crate::write_html(Path::new(&r.prefix), out) {
                eprintln!("orca: cannot write {}: {e}", out.display());
            }
        }
        if let Some(dir) = &r.pprof {
            if let Err(e) = crate::write_pprof(Path::new(&r.prefix), dir) {
                eprintln!("orca: cannot write the pprof profiles: {e}");
            }
        }
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// Removes the files an earlier run left under this prefix, saying so, so that what is
/// reported after the run is what this run wrote (a JVM that fails before loading the agent
/// writes nothing, and the old files would be reported as if they were new).
pub fn remove_stale(files: &[String], writer: Option<u32>) -> Result<(), String> {
    // What the agent would refuse (a link, a FIFO, another user's file) is refused here,
    // before the JVM starts, and left as it is. `writer`: the user the agent writes as, when
    // not this one (an attach as root).
    for f in files {
        let f = Path::new(f);
        match writer {
            Some(uid) => orca_format::output::may_create_as(f, uid),
            None => orca_format::output::may_create(f),
        }
        .map_err(|e| e.to_string())?;
    }
    let stale: Vec<&String> = files.iter().filter(|f| Path::new(f).exists()).collect();
    for f in &stale {
        std::fs::remove_file(f).map_err(|e| {
            format!("cannot remove {f}, left by an earlier run: {e}; remove it or choose another prefix with -o")
        })?;
    }
    if !stale.is_empty() {
        let names: Vec<&str> = stale.iter().map(|s| s.as_str()).collect();
        eprintln!(
            "orca: removed {} (left by an earlier run)",
            names.join(", ")
        );
    }
    Ok(())
}

/// Whether the log has any event of the program's own doing: a lock, wait, park, sleep or
/// join with a frame outside the JDK in its stack (a log with only thread births, deaths and
/// starts, and the JDK's own locking while it looks for the main class, is a program that did
/// not get to run). A log that cannot be read, and an event without a stack (`stackdepth=0`),
/// count as the program's: the report then says what is in it.
fn has_program_events(prefix: &Path) -> bool {
    use orca_format::EventKind as K;
    let (Ok(md), Ok(mut r)) = (
        orca_format::Metadata::load(prefix),
        orca_format::EventReader::open(prefix),
    ) else {
        return true;
    };
    loop {
        match r.next_event() {
            Ok(Some((_, Ok(rec)))) => {
                if matches!(
                    rec.event.kind(),
                    K::ThreadStarted
                        | K::ThreadEnded
                        | K::ThreadStart
                        | K::EventsDropped
                        | K::ObjectClass
                        | K::RecordingStarted
                        | K::RecordingEnded
                ) {
                    continue;
                }
                let mut stacks = rec.event.stacks().peekable();
                if stacks.peek().is_none() {
                    return true;
                }
                for st in stacks {
                    if st.is_empty() || st.frames().any(|f| !crate::util::is_jdk_frame(&md, f)) {
                        return true;
                    }
                }
            }
            Ok(Some((_, Err(_)))) | Err(_) => return true,
            Ok(None) => return false,
        }
    }
}

/// Signals `orca record` passes on to the JVM: the ones that ask a program to stop (and
/// SIGQUIT, a thread dump), so that `kill PID` on `orca` stops the JVM the way it would stop
/// the JVM itself (the agent writes its files) and `orca` still reports.
const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The JVM's pid while `orca record` waits for it (0: none), for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // A terminal's Ctrl-C or Ctrl-\ (sent by the kernel, SI_KERNEL) went to the whole
    // foreground process group, the JVM included: sending it again would make two.
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let from_terminal = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 && !from_terminal {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Blocks the forwarded signals in this thread until dropped, so that one arriving between
/// the spawn and the handler's installation is delivered (to the handler) afterwards, not
/// lost or fatal. The JVM does not inherit the mask: std clears it in the child.
struct BlockSignals {
    old: libc::sigset_t,
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set they are given.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

impl BlockSignals {
    fn new() -> Self {
        let set = signal_set();
        // SAFETY: both sets are valid; the old mask is restored on drop.
        let old = unsafe {
            let mut old = std::mem::zeroed::<libc::sigset_t>();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            old
        };
        BlockSignals { old }
    }
}

impl Drop for BlockSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// Forwards [`FORWARDED`] signals to `pid` until dropped, then restores the old handlers.
struct ForwardSignals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl ForwardSignals {
    fn new(pid: u32) -> Self {
        CHILD.store(pid as i32, Ordering::SeqCst);
        let mut old = Vec::new();
        for s in FORWARDED {
            // SAFETY: a zeroed sigaction with a valid handler, an empty mask and flags is a
            // valid argument; the handler only calls async-signal-safe functions.
            unsafe {
                let mut sa = std::mem::zeroed::<libc::sigaction>();
                sa.sa_sigaction = forward as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut prev = std::mem::zeroed::<libc::sigaction>();
                if libc::sigaction(s, &sa, &mut prev) == 0 {
                    old.push((s, prev));
                }
            }
        }
        ForwardSignals { old }
    }
}

impl Drop for ForwardSignals {
    fn drop(&mut self) {
        for (s, prev) in &self.old {
            // SAFETY: restores the disposition sigaction(2) returned above.
            unsafe { libc::sigaction(*s, prev, std::ptr::null_mut()) };
        }
        CHILD.store(0, Ordering::SeqCst);
    }
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agentpath_goes_right_after_java() {
        let r = Record {
            prefix: "out/run".into(),
            mode: Some("jvmti".into()),
            flags: AgentFlags {
                stackdepth: Some(4),
                jdk: true,
                no_juc: true,
                trace: Some("all".into()),
                holdtiming: Some("exact".into()),
                tracking: Some("sampled".into()),
                guards: Some("on".into()),
                waitthreshold: Some("0".into()),
                contentionthreshold: Some("0".into()),
                ..AgentFlags::default()
            },
            html: None,
            pprof: None,
            command: vec!["java".into(), "-cp".into(), "x".into(), "Main".into()],
        };
        let o = agent_options(&r).unwrap();
        assert_eq!(
            o,
            "out/run,mode=jvmti,stackdepth=4,trace=all,holdtiming=exact,tracking=sampled,guards=on,waitthreshold=0,contentionthreshold=0,jdk=yes,juc=no"
        );
        let a = java_args(Path::new("/a/liborca.so"), &o, &r.command);
        assert_eq!(
            a,
            [
                "java",
                "-agentpath:/a/liborca.so=out/run,mode=jvmti,stackdepth=4,trace=all,holdtiming=exact,tracking=sampled,guards=on,waitthreshold=0,contentionthreshold=0,jdk=yes,juc=no",
                "-cp",
                "x",
                "Main"
            ]
        );
    }

    #[test]
    fn prefix_with_comma_is_refused() {
        let r = Record {
            prefix: "a,b".into(),
            mode: None,
            flags: AgentFlags::default(),
            html: None,
            pprof: None,
            command: vec!["java".into()],
        };
        assert!(agent_options(&r).is_err());
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("out/run"), "out/run");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
