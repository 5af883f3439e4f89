//! Compiles `java-tracker/orca/OrcaProfilerTracker.java` with `javac --release 8` (the oldest
//! class version the agent supports) into OUT_DIR, so that `liborca.so` embeds the tracker
//! and needs no file beside it at run time.
//!
//! The tracker's event codes are not written in Java: they are generated here, as
//! `OUT_DIR/orca/OrcaEvents.java`, from the codes the agent defines (`src/events.rs`), and
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
    // Compile-time stand-ins for the JDK's VM annotations and Unsafe (see the files); never
    // embedded.
    let annotations = [
        "vm/annotation/DontInline.java",
        "vm/annotation/Hidden.java",
        "misc/Unsafe.java",
    ]
    .map(|f| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../java-tracker/jdk/internal")
            .join(f)
    });
    println!("cargo:rerun-if-changed={}", source.display());
    for a in &annotations {
        println!("cargo:rerun-if-changed={}", a.display());
    }
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
        .args(&annotations)
        .status()
        .unwrap_or_else(|e| panic!("orca-agent: cannot run {}: {e}", javac.display()));
    assert!(
        status.success(),
        "orca-agent: {} failed to compile {}",
        javac.display(),
        source.display()
    );
    // The agent defines the tracker as java.lang.OrcaProfilerTracker: see PACKAGE.
    let renamed = out.join(PACKAGE);
    std::fs::create_dir_all(&renamed).expect("OUT_DIR/java/lang");
    for name in ["OrcaProfilerTracker.class", "OrcaProfilerTracker$Rec.class"] {
        let bytes = std::fs::read(out.join("orca").join(name)).expect("compiled tracker class");
        let moved = move_package(&bytes, b"orca/Orca", b"java/lang/Orca")
            .unwrap_or_else(|| panic!("orca-agent: cannot read the compiled {name}"));
        std::fs::write(renamed.join(name), moved).expect("write the tracker class");
    }
}

/// The package the tracker is defined in at run time. Every class can reach it: in
/// `java.base`, which every named module reads (a module layer created at run time needs no
/// reads edge), and a `java.*` package, which every class loader delegates to the boot loader
/// (an OSGi bundle's loader sees nothing else of the boot class path without
/// `org.osgi.framework.bootdelegation`). The boot loader may define classes there; no
/// other loader may. The source stays in package `orca` (javac will not compile a
/// `java.lang` class outside `java.base`), and the class files are renamed here.
const PACKAGE: &str = "java/lang";

/// The class file `bytes` with `from` replaced by `to` in every constant-pool UTF-8 entry
/// (class names and descriptors); `None` if the constant pool cannot be read. Nothing outside
/// the constant pool names a class by text, and indexes do not change.
fn move_package(bytes: &[u8], from: &[u8], to: &[u8]) -> Option<Vec<u8>> {
    let u2 = |i: usize| -> Option<usize> {
        Some(u16::from_be_bytes([*bytes.get(i)?, *bytes.get(i + 1)?]) as usize)
    };
    let count = u2(8)?;
    let mut out = bytes.get(..10)?.to_vec();
    let mut i = 10;
    let mut index = 1;
    while index < count {
        let tag = *bytes.get(i)?;
        let len = match tag {
            1 => {
                let n = u2(i + 1)?;
                let text = bytes.get(i + 3..i + 3 + n)?;
                let mut new = Vec::with_capacity(n);
                let mut j = 0;
                while j < text.len() {
                    if text[j..].starts_with(from) {
                        new.extend_from_slice(to);
                        j += from.len();
                    } else {
                        new.push(text[j]);
                        j += 1;
                    }
                }
                out.push(1);
                out.extend_from_slice(&u16::try_from(new.len()).ok()?.to_be_bytes());
                out.extend_from_slice(&new);
                i += 3 + n;
                index += 1;
                continue;
            }
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => 4,
            5 | 6 => 8,
            7 | 8 | 16 | 19 | 20 => 2,
            15 => 3,
            _ => return None,
        };
        out.extend_from_slice(bytes.get(i..i + 1 + len)?);
        i += 1 + len;
        index += if tag == 5 || tag == 6 { 2 } else { 1 };
    }
    out.extend_from_slice(bytes.get(i..)?);
    Some(out)
}
