//! Compiles the tracker, every `.java` file of `java-tracker/orca/` (`OrcaProfilerTracker`, the
//! class rewritten code calls, and the classes of its per-thread state), with `javac
//! --release 8` (the oldest class version the agent supports) into OUT_DIR, so that
//! `liborca.so` embeds the tracker and needs no file beside it at run time. It writes
//! `OUT_DIR/tracker_classes.rs`, the list of the classes to define (moved to `java.lang`:
//! see [`PACKAGE`]), each superclass before its subclasses, the tracker last
//! (`engines/tracker.rs` includes it).
//!
//! The tracker's event codes, and the numbers and layouts it shares with the agent, are not
//! written in Java: they are generated here, as `OUT_DIR/orca/OrcaEvents.java`, from the
//! definitions the agent uses (`src/events.rs`), and compiled with the tracker, so the two
//! sides cannot disagree.

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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../java-tracker/orca");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("orca-agent: cannot list {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.sort();
    assert!(
        sources
            .iter()
            .any(|p| p.ends_with("OrcaProfilerTracker.java")),
        "orca-agent: no OrcaProfilerTracker.java in {}",
        dir.display()
    );
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
    // (the folder too: a file added or removed changes the classes)
    println!("cargo:rerun-if-changed={}", dir.display());
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    for a in &annotations {
        println!("cargo:rerun-if-changed={}", a.display());
    }
    println!("cargo:rerun-if-changed={}", taxonomy.display());
    for var in ["ORCA_JAVAC", "JDK17_HOME", "JAVA_HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let generated = out.join("orca/OrcaEvents.java");
    // A class of an earlier build (a source since removed) must not be embedded.
    let _ = std::fs::remove_dir_all(out.join("orca"));
    let _ = std::fs::remove_dir_all(out.join(PACKAGE));
    std::fs::create_dir_all(out.join("orca")).expect("OUT_DIR/orca");
    std::fs::write(&generated, events::java_source()).expect("OUT_DIR/orca/OrcaEvents.java");
    let Some(javac) = find_javac() else {
        panic!("orca-agent: no javac found (looked at $ORCA_JAVAC, $JDK17_HOME, $JAVA_HOME, /usr/lib/jvm, PATH); install a JDK 17 (scripts/ensure-jdk does) to build the tracker class");
    };
    let status = Command::new(&javac)
        .args(["--release", "8", "-Xlint:-options", "-g", "-d"])
        .arg(&out)
        .args(&sources)
        .arg(&generated)
        .args(&annotations)
        .status()
        .unwrap_or_else(|e| panic!("orca-agent: cannot run {}: {e}", javac.display()));
    assert!(
        status.success(),
        "orca-agent: {} failed to compile {}",
        javac.display(),
        dir.display()
    );
    // The agent defines the tracker's classes in java.lang: see PACKAGE. Every class javac
    // made of them but OrcaEvents (its constants are inlined: never loaded).
    let renamed = out.join(PACKAGE);
    std::fs::create_dir_all(&renamed).expect("OUT_DIR/java/lang");
    let mut classes: Vec<(String, String)> = Vec::new(); // (name, superclass), moved
    let mut names: Vec<String> = std::fs::read_dir(out.join("orca"))
        .expect("OUT_DIR/orca")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".class"))
        .filter(|n| n != "OrcaEvents.class" && !n.starts_with("OrcaEvents$"))
        .collect();
    names.sort();
    for name in &names {
        let bytes = std::fs::read(out.join("orca").join(name)).expect("compiled tracker class");
        assert!(
            name.starts_with("Orca"),
            "orca-agent: {name}: the tracker's classes are named Orca* (the rewriter and the agent's stack walks know them by that)"
        );
        let moved = move_package(&bytes, b"orca/Orca", b"java/lang/Orca")
            .unwrap_or_else(|| panic!("orca-agent: cannot read the compiled {name}"));
        let superclass = super_name(&moved)
            .unwrap_or_else(|| panic!("orca-agent: cannot read the superclass of {name}"));
        std::fs::write(renamed.join(name), &moved).expect("write the tracker class");
        let class = format!("{PACKAGE}/{}", name.trim_end_matches(".class"));
        classes.push((class, superclass));
    }
    let order = define_order(&classes, &format!("{PACKAGE}/OrcaProfilerTracker"));
    let mut list = String::from(
        "// Generated by agent/build.rs: the tracker's classes, in the order the agent defines them\n\
         // (each superclass first, the tracker last).\n\
         pub static CLASSES: &[(&std::ffi::CStr, &[u8])] = &[\n",
    );
    for class in order {
        let path = out.join(format!("{class}.class"));
        list.push_str(&format!(
            "    (c{:?}, include_bytes!({:?})),\n",
            class,
            path.display().to_string()
        ));
    }
    list.push_str("];\n");
    std::fs::write(out.join("tracker_classes.rs"), list).expect("OUT_DIR/tracker_classes.rs");
}

/// `classes` (name, superclass) ordered so that each class comes after its superclass when
/// that is one of them, `last` at the end (the tracker: defined once its classes are, so
/// that its initialization, and its verification under -Xverify:all, finds them all).
fn define_order(classes: &[(String, String)], last: &str) -> Vec<String> {
    let mut done: Vec<String> = Vec::new();
    let mut left: Vec<&(String, String)> = classes.iter().filter(|(n, _)| n != last).collect();
    while !left.is_empty() {
        let before = left.len();
        left.retain(|(name, superclass)| {
            let ready = done.contains(superclass) || !classes.iter().any(|(n, _)| n == superclass);
            if ready {
                done.push(name.clone());
            }
            !ready
        });
        assert!(
            left.len() < before,
            "orca-agent: a cycle of superclasses among {left:?}"
        );
    }
    assert!(
        classes.iter().any(|(n, _)| n == last),
        "orca-agent: javac made no {last}"
    );
    done.push(last.to_string());
    done
}

/// The internal name of the superclass of class file `bytes`; `None` if it cannot be read.
fn super_name(bytes: &[u8]) -> Option<String> {
    let u2 = |i: usize| -> Option<usize> {
        Some(u16::from_be_bytes([*bytes.get(i)?, *bytes.get(i + 1)?]) as usize)
    };
    let count = u2(8)?;
    // Offsets of the constant pool's entries (index 0 unused).
    let mut at = vec![0usize; count];
    let mut i = 10;
    let mut index = 1;
    while index < count {
        at[index] = i;
        let tag = *bytes.get(i)?;
        let len = match tag {
            1 => 2 + u2(i + 1)?,
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => 4,
            5 | 6 => 8,
            7 | 8 | 16 | 19 | 20 => 2,
            15 => 3,
            _ => return None,
        };
        i += 1 + len;
        index += if tag == 5 || tag == 6 { 2 } else { 1 };
    }
    // access_flags, this_class, super_class
    let class = *at.get(u2(i + 4)?)?;
    (*bytes.get(class)? == 7).then_some(())?;
    let utf8 = *at.get(u2(class + 1)?)?;
    (*bytes.get(utf8)? == 1).then_some(())?;
    let n = u2(utf8 + 1)?;
    String::from_utf8(bytes.get(utf8 + 3..utf8 + 3 + n)?.to_vec()).ok()
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
