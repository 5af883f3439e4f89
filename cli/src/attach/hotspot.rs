//! HotSpot's attach protocol, spoken directly (as async-profiler's jattach does), so that
//! `orca attach` needs no JDK tool on the machine and works on a JVM in a container.
//!
//! The JVM starts its attach listener when it gets SIGQUIT while a file `.attach_pid<NSPID>`
//! exists in its working directory or its `/tmp`; the listener is a UNIX socket
//! `/tmp/.java_pid<NSPID>`. A client writes protocol version `1`, a command and three
//! arguments, each NUL-terminated; for `load` the JVM answers `0` (the command ran) and then
//! `return code: N`, N being what `Agent_OnAttach` returned.
//!
//! Paths are reached through `/proc/PID/root` and `/proc/PID/cwd`, so a JVM in another mount
//! namespace is found at its own `/tmp`, and `NSPID` is its PID in its own PID namespace (the
//! last field of `NSpid` in `/proc/PID/status`). As root, the trigger file and the socket are
//! made with the JVM's effective user and group, as jattach does: HotSpot trusts a trigger
//! file only when its owner is the JVM's user (or root, on recent JDKs) and checks its
//! peer's credentials the same way.

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why a JVM could not be attached to or did not do what was asked. Each message names the
/// cause and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(
        "no process {pid}: check the PID (`jps -l` or `pgrep -a java` lists the Java processes)"
    )]
    NoProcess { pid: u32 },
    #[error("process {pid} ({name}) is not a HotSpot JVM (no libjvm.so in its memory): orca attach works with OpenJDK/HotSpot JVMs; give the PID of the java process")]
    NotHotSpot { pid: u32, name: String },
    #[error("JVM {pid} was started with -XX:+DisableAttachMechanism, which refuses every attach: restart it without that option, or record from the start with -agentpath:liborca.so=PREFIX")]
    AttachDisabled { pid: u32 },
    #[error("JVM {pid} was started with -XX:-EnableDynamicAgentLoading, which refuses agents loaded at run time: restart it without that option (or with -XX:+EnableDynamicAgentLoading), or record from the start with -agentpath:liborca.so=PREFIX")]
    DynamicLoadingDisabled { pid: u32 },
    #[error("JVM {pid} did not answer within {secs} s (its attach listener did not start: the process is stopped, hung, or still starting); try again when it runs, or wait longer with --timeout")]
    Timeout { pid: u32, secs: u64 },
    #[error("{path} is not visible at the same path inside process {pid}'s mount namespace (a container?): copy liborca.so to that path inside it, or set ORCA_AGENT to a path both see")]
    LibraryNotVisible { pid: u32, path: String },
    #[error("JVM {pid} belongs to user {owner} (uid {uid}), not to you: run orca as that user (sudo -u {owner} orca ...) or as root")]
    OtherUser { pid: u32, uid: u32, owner: String },
    #[error("JVM {pid} is already being recorded by Orca (attached earlier, or started with -agentpath:liborca.so): stop that recording first (orca detach {pid}), or read the files it writes")]
    AlreadyRecording { pid: u32 },
    #[error("JVM {pid} is not being recorded by an attached Orca: nothing to detach (orca attach {pid} starts a recording)")]
    NotRecording { pid: u32 },
    #[error("JVM {pid}: {what}")]
    Refused { pid: u32, what: String },
    #[error("JVM {pid}: cannot {doing}: {source}")]
    Io {
        pid: u32,
        doing: String,
        source: std::io::Error,
    },
}

/// What `Agent_OnAttach` returns besides 0, for `orca` to say why (the agent's own line goes
/// to the JVM's standard error, which `orca` does not see). Shared with agent/src/entry.rs.
pub mod codes {
    /// A recording is under way already (attached, or loaded at start-up).
    pub const ALREADY_RECORDING: i32 = 101;
    /// `stop` with no attached recording under way.
    pub const NOT_RECORDING: i32 = 102;
    /// The options were refused (the JVM's standard error has the line).
    pub const BAD_OPTIONS: i32 = 103;
    /// `mode=jvmti` cannot work in a running JVM.
    pub const JVMTI_MODE: i32 = 104;
    /// The recording could not start (the JVM's standard error has the line).
    pub const CANNOT_START: i32 = 105;
    /// `dump=`: the dump could not be written.
    pub const DUMP_FAILED: i32 = 106;
}

/// A running process to attach to, with what the protocol needs of it.
#[derive(Debug)]
pub struct Target {
    pub pid: u32,
    /// Its PID inside its own PID namespace.
    pub nspid: u32,
    pub uid: u32,
    pub gid: u32,
    /// `/proc/PID/root`: its view of the file system.
    pub root: PathBuf,
}

impl Target {
    /// Finds process `pid` and checks that it is a HotSpot JVM that accepts attaches and
    /// that this user may attach to.
    pub fn find(pid: u32) -> Result<Target, AttachError> {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let status = std::fs::read_to_string(proc.join("status"))
            .map_err(|_| AttachError::NoProcess { pid })?;
        let field = |name: &str| -> Vec<u32> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| {
                    v.split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        let name = status
            .lines()
            .find_map(|l| l.strip_prefix("Name:"))
            .unwrap_or("")
            .trim()
            .to_string();
        // Effective IDs: the second field.
        let uid = field("Uid:").get(1).copied().unwrap_or(0);
        let gid = field("Gid:").get(1).copied().unwrap_or(0);
        let nspid = field("NSpid:").last().copied().unwrap_or(pid);
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 && me != uid {
            return Err(AttachError::OtherUser {
                pid,
                uid,
                owner: user_name(uid),
            });
        }
        let maps = std::fs::read_to_string(proc.join("maps"))
            .map_err(|_| AttachError::NoProcess { pid })?;
        if !maps.contains("/libjvm.so") {
            return Err(AttachError::NotHotSpot { pid, name });
        }
        let args = jvm_arguments(pid);
        // The last occurrence of a flag wins, as in HotSpot.
        let last = |on: &str, off: &str| {
            args.iter()
                .rev()
                .find(|a| *a == on || *a == off)
                .map(|a| a == on)
        };
        if last("-XX:+DisableAttachMechanism", "-XX:-DisableAttachMechanism") == Some(true) {
            return Err(AttachError::AttachDisabled { pid });
        }
        if last(
            "-XX:+EnableDynamicAgentLoading",
            "-XX:-EnableDynamicAgentLoading",
        ) == Some(false)
        {
            return Err(AttachError::DynamicLoadingDisabled { pid });
        }
        Ok(Target {
            pid,
            nspid,
            uid,
            gid,
            root: proc.join("root"),
        })
    }

    /// The listener's socket, as this process reaches it.
    fn socket(&self) -> PathBuf {
        self.root.join(format!("tmp/.java_pid{}", self.nspid))
    }

    /// Checks that `path` (absolute) is the same file inside the target's mount namespace,
    /// since the JVM opens the library by the path it is given.
    pub fn check_visible(&self, path: &Path) -> Result<(), AttachError> {
        let inside = self.root.join(path.strip_prefix("/").unwrap_or(path));
        let same = match (std::fs::metadata(path), std::fs::metadata(&inside)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            Ok(())
        } else {
            Err(AttachError::LibraryNotVisible {
                pid: self.pid,
                path: path.display().to_string(),
            })
        }
    }

    /// Runs `load PATH true OPTIONS` and returns what `Agent_OnAttach` returned. The
    /// listener is started first if it is not running; `timeout` bounds the whole exchange.
    pub fn load(
        &self,
        library: &Path,
        options: &str,
        timeout: Duration,
    ) -> Result<i32, AttachError> {
        let _creds = Credentials::assume(self.uid, self.gid);
        let deadline = Instant::now() + timeout;
        if !is_socket(&self.socket()) {
            self.start_listener(deadline, timeout)?;
        }
        let io = |doing: &str| {
            let doing = doing.to_string();
            let pid = self.pid;
            move |source| AttachError::Io { pid, doing, source }
        };
        let mut s =
            UnixStream::connect(self.socket()).map_err(io("connect to its attach listener"))?;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100));
        s.set_read_timeout(Some(left))
            .map_err(io("set a timeout"))?;
        s.set_write_timeout(Some(left))
            .map_err(io("set a timeout"))?;
        let lib = library.display().to_string();
        let mut msg = Vec::new();
        for part in ["1", "load", &lib, "true", options] {
            msg.extend_from_slice(part.as_bytes());
            msg.push(0);
        }
        s.write_all(&msg).map_err(io("send the load command"))?;
        let mut reply = String::new();
        match s.read_to_string(&mut reply) {
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return Err(AttachError::Timeout {
                    pid: self.pid,
                    secs: timeout.as_secs().max(1),
                })
            }
            Err(e) => return Err(io("read its answer")(e)),
        }
        parse_reply(self.pid, &reply)
    }

    /// Makes the JVM start its attach listener: the trigger file, SIGQUIT, then the socket
    /// is waited for.
    fn start_listener(&self, deadline: Instant, timeout: Duration) -> Result<(), AttachError> {
        let name = format!(".attach_pid{}", self.nspid);
        let proc = PathBuf::from(format!("/proc/{}", self.pid));
        // Its working directory first, as jattach does; /tmp when that cannot be written.
        let mut trigger = proc.join("cwd").join(&name);
        if std::fs::File::create(&trigger).is_err() {
            trigger = self.root.join("tmp").join(&name);
            std::fs::File::create(&trigger).map_err(|source| AttachError::Io {
                pid: self.pid,
                doing: format!("create {}", trigger.display()),
                source,
            })?;
        }
        // SAFETY: kill has no memory preconditions.
        let sent = unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGQUIT) };
        let result = if sent != 0 {
            Err(AttachError::NoProcess { pid: self.pid })
        } else {
            let mut delay = Duration::from_millis(10);
            loop {
                if is_socket(&self.socket()) {
                    break Ok(());
                }
                if Instant::now() >= deadline {
                    break Err(AttachError::Timeout {
                        pid: self.pid,
                        secs: timeout.as_secs().max(1),
                    });
                }
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_millis(200));
            }
        };
        let _ = std::fs::remove_file(&trigger);
        result
    }
}

/// Reads the JVM's answer to `load`: `0` then `return code: N` (JDK 9+), or `0` then `N`;
/// any other first line is the JVM's refusal, whose text is passed on.
fn parse_reply(pid: u32, reply: &str) -> Result<i32, AttachError> {
    let mut lines = reply.lines();
    let first = lines.next().unwrap_or("").trim();
    if first != "0" {
        let rest: Vec<&str> = reply
            .lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if rest.iter().any(|l| l.contains("EnableDynamicAgentLoading")) {
            return Err(AttachError::DynamicLoadingDisabled { pid });
        }
        let what = if rest.is_empty() {
            format!("the attach listener answered {first:?}")
        } else {
            rest.join("; ")
        };
        return Err(AttachError::Refused { pid, what });
    }
    let rest: String = lines.collect::<Vec<_>>().join("\n");
    if rest.contains("EnableDynamicAgentLoading") {
        return Err(AttachError::DynamicLoadingDisabled { pid });
    }
    let code = rest.trim();
    let code = code.strip_prefix("return code:").unwrap_or(code).trim();
    code.parse().map_err(|_| AttachError::Refused {
        pid,
        what: format!("unexpected answer to load: {:?}", rest.trim()),
    })
}

fn is_socket(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_socket())
}

/// The JVM's own options: its command line and the variables the launcher reads options
/// from (`JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`, `_JAVA_OPTIONS`), in the order HotSpot
/// applies them (later wins).
fn jvm_arguments(pid: u32) -> Vec<String> {
    let mut args = Vec::new();
    let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    let var = |name: &str| -> Vec<String> {
        env.split(|&b| b == 0)
            .filter_map(|kv| kv.strip_prefix(format!("{name}=").as_bytes()))
            .flat_map(|v| {
                String::from_utf8_lossy(v)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    args.extend(var("JAVA_TOOL_OPTIONS"));
    args.extend(var("JDK_JAVA_OPTIONS"));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    args.extend(
        cmdline
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned()),
    );
    args.extend(var("_JAVA_OPTIONS"));
    args
}

/// A user's name from /etc/passwd (the number when it has none).
fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|p| {
            p.lines().find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() > 2 && f[2] == uid.to_string()).then(|| f[0].to_string())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}

/// The JVM's effective user and group, assumed while talking to it when `orca` runs as
/// root and the JVM does not; given back on drop.
struct Credentials {
    switched: bool,
}

impl Credentials {
    fn assume(uid: u32, gid: u32) -> Credentials {
        // SAFETY: geteuid/setegid/seteuid have no memory preconditions; `orca` is
        // single-threaded here.
        unsafe {
            if libc::geteuid() != 0 || uid == 0 {
                return Credentials { switched: false };
            }
            if libc::setegid(gid) != 0 {
                return Credentials { switched: false };
            }
            if libc::seteuid(uid) != 0 {
                libc::setegid(0);
                return Credentials { switched: false };
            }
        }
        Credentials { switched: true }
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        if self.switched {
            // SAFETY: as above; the saved set-user-ID is root, so both succeed.
            unsafe {
                libc::seteuid(0);
                libc::setegid(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies() {
        assert_eq!(parse_reply(1, "0\nreturn code: 0\n").unwrap(), 0);
        assert_eq!(parse_reply(1, "0\nreturn code: 101\n").unwrap(), 101);
        assert_eq!(parse_reply(1, "0\n-1\n").unwrap(), -1);
        assert!(matches!(
            parse_reply(1, "-1\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.\n"),
            Err(AttachError::DynamicLoadingDisabled { pid: 1 })
        ));
        assert!(matches!(
            parse_reply(1, "100\nlibfoo.so was not loaded.\n"),
            Err(AttachError::Refused { .. })
        ));
    }
}
