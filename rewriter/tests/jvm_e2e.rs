//! End to end on a real JVM: compile `tests/jvm/Demo.java`, rewrite its
//! classes, run original and rewritten with verification forced, against a
//! counting variant of the tracker (its native `event` replaced by a Java
//! counter). Output (including exception line numbers) must be identical and
//! the event counts exact. Skipped when no JDK is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tracker's event codes, generated from the agent's taxonomy as agent/build.rs does:
/// included by path, since `orca-agent` depends on this crate and not the other way round.
#[allow(dead_code)]
#[path = "../../agent/src/events.rs"]
mod events;

fn jdks() -> Vec<PathBuf> {
    [
        "/usr/lib/jvm/java-17-openjdk-amd64",
        "/usr/lib/jvm/temurin-25-jdk-amd64",
    ]
    .iter()
    .map(PathBuf::from)
    .filter(|p| p.join("bin/javac").exists())
    .collect()
}

/// Rewrites every class of `from` into `to`; `guards`: guarded monitor reports
/// (`Config::guards`, with site IDs), whose tracker entry points report what the unguarded
/// ones do, so that the counts are the same.
fn rewrite_dir(from: &Path, to: &Path, guards: bool) -> usize {
    let mut changed = 0;
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("class") {
            continue;
        }
        let b = std::fs::read(&p).unwrap();
        let out = match orca_rewriter::rewrite(
            &b,
            &orca_rewriter::Config {
                hash_at_birth: true,
                guards,
                sites: guards.then(Default::default),
                ..orca_rewriter::Config::default()
            },
        )
        .unwrap()
        {
            orca_rewriter::Outcome::Changed { bytes, .. } => {
                changed += 1;
                bytes
            }
            _ => b,
        };
        std::fs::write(to.join(p.file_name().unwrap()), out).unwrap();
    }
    changed
}

fn run(java: &Path, cp: &str) -> (String, String) {
    let o = Command::new(java)
        .args([
            "-Xverify:all",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+BytecodeVerificationLocal",
            "-cp",
            cp,
            "Demo",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "java failed: {err}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), err)
}

#[test]
fn demo_runs_identically_with_exact_event_counts() {
    let jdks = jdks();
    if jdks.is_empty() {
        eprintln!("no JDK: skipped");
        return;
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = std::env::temp_dir().join(format!("orca-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    // counting tracker
    let src = std::fs::read_to_string(here.join("../java-tracker/orca/OrcaProfilerTracker.java"))
        .unwrap();
    let native = "private static native void event(int kind, Object subject);";
    assert!(src.contains(native));
    // The agent's natives become Java that counts: call reports by kind, and the monitor
    // records of the per-thread buffer (kinds 1-3, the complete trace's) when they are put.
    let mut counting = src.replace(
        native,
        "static final java.util.concurrent.atomic.AtomicLongArray C = new java.util.concurrent.atomic.AtomicLongArray(32);\n\
         private static void event(int kind, Object subject) { C.incrementAndGet(kind); }\n\
         public static String counts() { StringBuilder b = new StringBuilder(); for (int i = 1; i < 17; i++) b.append(C.get(i)).append(i < 16 ? \",\" : \"\"); return b.toString(); }",
    );
    for (from, to) in [
        ("static volatile boolean ready;", "static volatile boolean ready = true;"),
        ("static boolean traceAll;", "static boolean traceAll = true;"),
        (
            "static native OrcaRec register(OrcaRec r);",
            "static OrcaRec register(OrcaRec r) { return r; }",
        ),
        ("static native void flush(OrcaRec r);", "static void flush(OrcaRec r) { r.pos = 0; }"),
        ("private static native int stack(OrcaRec r, int site);", "private static int stack(OrcaRec r, int site) { return 0; }"),
        (
            "private static native void longHold(OrcaRec r, int site, int hash, long nanos, long end, long start);",
            "private static void longHold(OrcaRec r, int site, int hash, long nanos, long end, long start) {}",
        ),
        (
            "static native boolean name(Object o, int hash);",
            "static boolean name(Object o, int hash) { return true; }",
        ),
        (
            "private static native boolean stackRoom();",
            "private static boolean stackRoom() { return true; }",
        ),
    ] {
        assert!(counting.contains(from), "the tracker no longer has {from:?}");
        counting = counting.replace(from, to);
    }
    // ... and the records of the per-thread buffer, counted as they are put.
    let rec_src = std::fs::read_to_string(here.join("../java-tracker/orca/OrcaRec.java")).unwrap();
    let put = "    int put(int kind, int site, int hash, long nanos, long third) {";
    assert!(rec_src.contains(put), "OrcaRec no longer has {put:?}");
    let counting_rec = rec_src.replace(
        put,
        &format!("{put}\n        OrcaProfilerTracker.C.incrementAndGet(kind);"),
    );
    let tsrc = base.join("tsrc/orca");
    std::fs::create_dir_all(&tsrc).unwrap();
    // every other class of the tracker as it is
    let mut sources = Vec::new();
    for e in std::fs::read_dir(here.join("../java-tracker/orca")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".java") && name != "OrcaProfilerTracker.java" && name != "OrcaRec.java" {
            std::fs::copy(&p, tsrc.join(&name)).unwrap();
            sources.push(tsrc.join(&name));
        }
    }
    std::fs::write(tsrc.join("OrcaProfilerTracker.java"), counting).unwrap();
    std::fs::write(tsrc.join("OrcaRec.java"), counting_rec).unwrap();
    std::fs::write(tsrc.join("OrcaEvents.java"), events::java_source()).unwrap();
    sources.push(tsrc.join("OrcaRec.java"));
    for jdk in &jdks {
        let javac = jdk.join("bin/javac");
        let java = jdk.join("bin/java");
        for release in ["8", "17"] {
            let d = base.join(format!(
                "{}-{release}",
                jdk.file_name().unwrap().to_string_lossy()
            ));
            let (orig, new, guarded, trk) = (
                d.join("orig"),
                d.join("new"),
                d.join("guarded"),
                d.join("trk"),
            );
            for p in [&orig, &new, &guarded, &trk] {
                std::fs::create_dir_all(p).unwrap();
            }
            let ok = Command::new(&javac)
                .args(["--release", release, "-nowarn", "-d"])
                .arg(&orig)
                .arg(here.join("tests/jvm/Demo.java"))
                .status()
                .unwrap();
            assert!(ok.success());
            let ok = Command::new(&javac)
                .args(["--release", "8", "-nowarn", "-d"])
                .arg(&trk)
                .arg(tsrc.join("OrcaProfilerTracker.java"))
                .args(&sources)
                .arg(tsrc.join("OrcaEvents.java"))
                .arg(here.join("../java-tracker/jdk/internal/vm/annotation/DontInline.java"))
                .arg(here.join("../java-tracker/jdk/internal/vm/annotation/Hidden.java"))
                .arg(here.join("../java-tracker/jdk/internal/misc/Unsafe.java"))
                .status()
                .unwrap();
            assert!(ok.success());
            let (o1, e1) = run(&java, orig.to_str().unwrap());
            assert!(e1.contains("COUNTS none"));
            for (new, guards) in [(&new, false), (&guarded, true)] {
                let changed = rewrite_dir(&orig, new, guards);
                assert!(changed >= 2, "Demo and Demo$MyThread must change");
                if guards {
                    let demo = std::fs::read(new.join("Demo.class")).unwrap();
                    for m in [
                        "guardEnter",
                        "guardEntered",
                        "guardSyncEntered",
                        "guardExit",
                    ] {
                        let found = demo.windows(m.len()).any(|w| w == m.as_bytes());
                        assert!(found, "Demo.class calls no {m}");
                    }
                }
                let (o2, e2) = run(&java, &format!("{}:{}", new.display(), trk.display()));
                assert_eq!(
                    o1,
                    o2,
                    "output differs on {} release {release}, guards {guards}",
                    jdk.display()
                );
                let counts = e2
                    .lines()
                    .find_map(|l| l.strip_prefix("COUNTS "))
                    .unwrap()
                    .to_string();
                // enter, entered, exit, wait, waited, notify, notifyAll, tstart, join, joined, sleep, slept,
                // sem acquire, acquired, failed, release
                assert_eq!(
                    counts,
                    "205,409,409,1,1,0,1,3,3,3,1,1,4,3,1,2",
                    "counts on {} release {release}, guards {guards}\n{o2}",
                    jdk.display()
                );
                eprintln!(
                "{} release {release}, guards {guards}: {changed} classes changed, counts {counts}\n{o2}",
                jdk.display()
            );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
