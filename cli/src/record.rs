//! `orca record`: runs a Java command under `liborca.so`, then prints
//! `orca report PREFIX` and its output for the files the run wrote.
//!
//! The agent is `$ORCA_AGENT` when set, else `liborca.so` in the folder of the
//! `orca` executable (cargo puts both in `target/release`). The
//! `-agentpath:` option goes right after the first word after `--` (the java
//! executable), so it comes before the main class or `-jar`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// How `orca record` was asked to run.
pub struct Record {
    pub prefix: String,
    pub mode: Option<String>,
    pub stackdepth: Option<u32>,
    pub jdk: bool,
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
    if let Some(d) = r.stackdepth {
        opts.push_str(&format!(",stackdepth={d}"));
    }
    if r.jdk {
        opts.push_str(",jdk=yes");
    }
    Ok(opts)
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
    let mut child = Command::new(&args[0])
        .args(&args[1..])
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", args[0]))?;
    // Ctrl-C and Ctrl-\ go to the whole foreground process group: let the JVM handle them
    // (it exits, and the agent writes its files) while `orca` stays to print the report, as
    // a shell does for its children. Set after the spawn, so the JVM keeps the defaults.
    let ignore = IgnoreTerminalSignals::new();
    let status = child.wait();
    drop(ignore);
    let status = status.map_err(|e| format!("waiting for {}: {e}", args[0]))?;
    let files: Vec<String> = ["orca", "methods", "classtable"]
        .iter()
        .map(|ext| format!("{}.{ext}", r.prefix))
        .collect();
    if files.iter().all(|f| Path::new(f).is_file()) {
        println!();
        println!("$ orca report {}", shell_word(&r.prefix));
        match crate::report_text(Path::new(&r.prefix), 10, false) {
            Ok(text) => crate::print_out(&text)?,
            Err(e) => eprintln!("orca: cannot report on {}: {e}", r.prefix),
        }
    } else {
        eprintln!(
            "orca: the run did not write {} (did the JVM start with the agent?)",
            files.join(", ")
        );
    }
    let code = match status.code() {
        Some(c) => c,
        None => {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// Ignores SIGINT and SIGQUIT in this process until dropped.
struct IgnoreTerminalSignals {
    old: [libc::sighandler_t; 2],
}

const TERMINAL_SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGQUIT];

impl IgnoreTerminalSignals {
    fn new() -> Self {
        // SAFETY: signal(2) with SIG_IGN installs no handler code; the old dispositions are
        // restored on drop.
        let old = TERMINAL_SIGNALS.map(|s| unsafe { libc::signal(s, libc::SIG_IGN) });
        IgnoreTerminalSignals { old }
    }
}

impl Drop for IgnoreTerminalSignals {
    fn drop(&mut self) {
        for (s, h) in TERMINAL_SIGNALS.iter().zip(self.old) {
            if h != libc::SIG_ERR {
                // SAFETY: restores the disposition signal(2) returned above.
                unsafe { libc::signal(*s, h) };
            }
        }
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
            stackdepth: Some(4),
            jdk: true,
            command: vec!["java".into(), "-cp".into(), "x".into(), "Main".into()],
        };
        let o = agent_options(&r).unwrap();
        assert_eq!(o, "out/run,mode=jvmti,stackdepth=4,jdk=yes");
        let a = java_args(Path::new("/a/liborca.so"), &o, &r.command);
        assert_eq!(
            a,
            [
                "java",
                "-agentpath:/a/liborca.so=out/run,mode=jvmti,stackdepth=4,jdk=yes",
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
            stackdepth: None,
            jdk: false,
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
