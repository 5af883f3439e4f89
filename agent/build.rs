//! Compiles `java-tracker/orca/OrcaProfilerTracker.java` with `javac --release 8` (the oldest
//! class version the agent supports) into OUT_DIR, so that `liborca.so` embeds the tracker
//! and needs no file beside it at run time.
//!
//! The tracker's event codes are not written in Java: they are generated here, as
//! `OUT_DIR/orca/OrcaEvents.java`, from the agent's own taxonomy (`src/events.rs`), and
//! compiled with the tracker, so the two sides cannot disagree.

#[allow(dead_code)]
#[path = "src/events.rs"]
mod events;

use std::path::{Path, PathBuf};
use std::process::Command;

fn find_javac() -> Option<PathBuf> {
    for var in ["ORCA_JAVAC", "JDK17_HOME", "JAVA_HOME"] {
        if let Some(v) = std::env::var_os(var) {
            let p = PathBuf::from(&v);
            let javac = if var == "ORCA_JAVAC" {
                p
            } else {
                p.join("bin/javac")
            };
            if javac.exists() {
                return Some(javac);
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/jvm") {
        let mut homes: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        homes.sort();
        // Prefer a JDK 17: its javac still emits `--release 8`.
        homes.sort_by_key(|h| !h.to_string_lossy().contains("17"));
        if let Some(h) = homes.into_iter().find(|h| h.join("bin/javac").exists()) {
            return Some(h.join("bin/javac"));
        }
    }
    let on_path = Command::new("javac")
        .arg("-version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    on_path.then(|| PathBuf::from("javac"))
}

fn main() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../java-tracker/orca/OrcaProfilerTracker.java");
    let taxonomy = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/events.rs");
    // compile-time stand-in for the JDK's annotation (see the file); never embedded
    let hidden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../java-tracker/jdk/internal/vm/annotation/Hidden.java");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed={}", hidden.display());
    println!("cargo:rerun-if-changed={}", taxonomy.display());
    for var in ["ORCA_JAVAC", "JDK17_HOME", "JAVA_HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let generated = out.join("orca/OrcaEvents.java");
    std::fs::create_dir_all(out.join("orca")).expect("OUT_DIR/orca");
    std::fs::write(&generated, events::java_source()).expect("OUT_DIR/orca/OrcaEvents.java");
    let Some(javac) = find_javac() else {
        panic!("orca-agent: no javac found (looked at $ORCA_JAVAC, $JDK17_HOME, $JAVA_HOME, /usr/lib/jvm, PATH); install a JDK 17 (scripts/ensure-jdk does) to build the tracker class");
    };
    let status = Command::new(&javac)
        .args(["--release", "8", "-Xlint:-options", "-g", "-d"])
        .arg(&out)
        .arg(&source)
        .arg(&generated)
        .arg(&hidden)
        .status()
        .unwrap_or_else(|e| panic!("orca-agent: cannot run {}: {e}", javac.display()));
    assert!(
        status.success(),
        "orca-agent: {} failed to compile {}",
        javac.display(),
        source.display()
    );
}
