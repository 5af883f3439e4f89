//! `orca check`/`report`/`deadlocks` on a log written by the real agent
//! (JVMTI mode). Skipped, with a message, when `target/release/liborca.so`
//! (`cargo build --release -p orca-agent`) or `javac` is missing, so that the
//! CLI's own tests never depend on the agent being built.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = r#"
public class OrcaCliContention {
    static final Object lock = new Object();
    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            synchronized (lock) {
                lock.notifyAll();
            }
        }, "contender, #2");
        synchronized (lock) {
            t.start();
            while (t.getState() != Thread.State.BLOCKED) Thread.onSpinWait();
            Thread.sleep(200);
        }
        t.join();
    }
}
"#;

fn agent() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or(root.join("target"));
    let so = target.join("release/liborca.so");
    so.exists().then_some(so)
}

fn orca(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn real_agent_log_is_valid_and_reported() {
    let Some(so) = agent() else {
        eprintln!("skipped: no target/release/liborca.so (cargo build --release -p orca-agent)");
        return;
    };
    if Command::new("javac").arg("-version").output().is_err() {
        eprintln!("skipped: no javac");
        return;
    }
    let dir = std::env::temp_dir().join(format!("orca-cli-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("OrcaCliContention.java"), PROGRAM).unwrap();
    let st = Command::new("javac")
        .arg("OrcaCliContention.java")
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    let prefix = dir.join("run");
    let st = Command::new("java")
        .arg(format!("-agentpath:{}={}", so.display(), prefix.display()))
        .arg("-cp")
        .arg(&dir)
        .arg("OrcaCliContention")
        .status()
        .unwrap();
    assert!(st.success());
    let p = prefix.to_str().unwrap();

    let (code, out) = orca(&["check", p]);
    assert_eq!(code, Some(0), "{out}");

    let (code, out) = orca(&["report", p]);
    assert_eq!(code, Some(0));
    assert!(out.contains("contender, #2 ["), "{out}");
    assert!(out.contains("owners at contention: main ["), "{out}");
    // The lambda's `synchronized (lock)` is line 6 of PROGRAM.
    assert!(
        out.contains("blocked at OrcaCliContention.lambda$main$0(OrcaCliContention.java:6)"),
        "{out}"
    );

    let (code, out) = orca(&["deadlocks", p]);
    assert_eq!(code, Some(0), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
