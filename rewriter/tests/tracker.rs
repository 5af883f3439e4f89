//! The Java tracker declares every method the rewritten code calls, as
//! `public static` with the exact descriptor, and compiles with --release 8.

mod common;

/// The tracker's event codes are generated from the agent's taxonomy (agent/build.rs does the
/// same): the tracker compiles only together with `OrcaEvents.java`. The file is included by
/// path rather than through a dependency on `orca-agent`, which depends on this crate; it is
/// self-contained for that reason.
#[allow(dead_code)]
#[path = "../../agent/src/events.rs"]
mod events;
use std::path::Path;
use std::process::Command;

fn javac() -> Option<String> {
    let home =
        std::env::var("JAVA_HOME").unwrap_or_else(|_| "/usr/lib/jvm/java-17-openjdk-amd64".into());
    let p = format!("{home}/bin/javac");
    Path::new(&p).exists().then_some(p)
}

/// Every `.java` file of java-tracker/orca/ (the tracker and its per-thread record's classes,
/// all compiled together, as agent/build.rs does).
fn tracker_sources() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../java-tracker/orca");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    v.sort();
    v
}

/// Compiles the tracker into `out` (with `extra` sources); whether javac succeeded.
fn compile_tracker(javac: &str, out: &Path, extra: &[&Path]) -> bool {
    let generated = out.join("src/orca/OrcaEvents.java");
    std::fs::create_dir_all(generated.parent().unwrap()).unwrap();
    std::fs::write(&generated, events::java_source()).unwrap();
    Command::new(javac)
        .args(["--release", "8", "-d"])
        .arg(out)
        .args(tracker_sources())
        .args(extra)
        .arg(&generated)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../java-tracker/jdk/internal/vm/annotation/DontInline.java"
        ))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../java-tracker/jdk/internal/vm/annotation/Hidden.java"
        ))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../java-tracker/jdk/internal/misc/Unsafe.java"
        ))
        .status()
        .unwrap()
        .success()
}

/// The lock-order slots' hash is computed on both sides (the agent publishes slots at
/// `order_slot`, the tracker looks them up at `OrcaOrderSlots.orderSlot`), from the same
/// generated constants; this runs the tracker's and compares.
#[test]
fn the_trackers_order_slot_is_the_agents() {
    let Some(javac) = javac() else {
        eprintln!("no javac: skipped");
        return;
    };
    let java = javac.replace("bin/javac", "bin/java");
    let out = std::env::temp_dir().join(format!("orca-tracker-slot-{}", std::process::id()));
    let probe = out.join("src/orca/OrcaSlotProbe.java");
    std::fs::create_dir_all(probe.parent().unwrap()).unwrap();
    let pairs: Vec<(u32, u32)> = (0..200u32)
        .map(|i| {
            (
                i.wrapping_mul(7919) % 5_000_000,
                i.wrapping_mul(104_729) % 5_000_000,
            )
        })
        .chain([(0, 0), (1, 2), (0x07FF_FFFF, 0x07FF_FFFF), (0x07FF_FFFF, 1)])
        .collect();
    let list: Vec<String> = pairs.iter().map(|(h, s)| format!("{h}, {s}")).collect();
    std::fs::write(
        &probe,
        format!(
            "package orca;\n\
             public class OrcaSlotProbe {{\n\
                 public static void main(String[] a) {{\n\
                     int[] p = {{ {} }};\n\
                     StringBuilder b = new StringBuilder();\n\
                     for (int i = 0; i < p.length; i += 2) b.append(OrcaOrderSlots.orderSlot(p[i], p[i + 1]) & 0xFFFFF).append('\\n');\n\
                     System.out.print(b);\n\
                 }}\n\
             }}\n",
            list.join(", ")
        ),
    )
    .unwrap();
    assert!(compile_tracker(&javac, &out, &[&probe]));
    let o = Command::new(&java)
        .arg("-cp")
        .arg(&out)
        .arg("orca.OrcaSlotProbe")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let java_slots: Vec<usize> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let rust_slots: Vec<usize> = pairs
        .iter()
        .map(|&(h, s)| events::order_slot(h, s))
        .collect();
    assert_eq!(java_slots, rust_slots);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn the_trackers_classes_are_never_rewritten() {
    let c = orca_rewriter::Config::default();
    for name in [
        "orca/OrcaProfilerTracker",
        "orca/OrcaRec",
        "orca/OrcaSampler",
    ] {
        assert!(!c.accepts(name.as_bytes()), "{name}");
    }
    for name in ["orca/sub/OrcaRec", "com/example/OrcaRec", "orca/Other"] {
        assert!(c.accepts(name.as_bytes()), "{name}");
    }
}

#[test]
fn tracker_declares_every_called_method() {
    let Some(javac) = javac() else {
        eprintln!("no javac: skipped");
        return;
    };
    let out = std::env::temp_dir().join(format!("orca-tracker-test-{}", std::process::id()));
    assert!(compile_tracker(&javac, &out, &[]));
    let bytes = std::fs::read(out.join("orca/OrcaProfilerTracker.class")).unwrap();
    let cf = cafebabe::parse_class(&bytes).unwrap();
    assert_eq!(cf.major_version, 52);
    for (name, desc) in orca_rewriter::tracker_methods() {
        let m = cf
            .methods
            .iter()
            .find(|m| m.name == name && m.descriptor.to_string() == desc)
            .unwrap_or_else(|| panic!("tracker lacks {name}{desc}"));
        let f = m.access_flags;
        assert!(
            f.contains(cafebabe::MethodAccessFlags::PUBLIC)
                && f.contains(cafebabe::MethodAccessFlags::STATIC),
            "{name}{desc}"
        );
    }
    let natives: Vec<_> = cf
        .methods
        .iter()
        .filter(|m| m.access_flags.contains(cafebabe::MethodAccessFlags::NATIVE))
        .map(|m| format!("{}{}", m.name, m.descriptor))
        .collect();
    assert_eq!(
        natives,
        vec![
            "bind()Z",
            "event(ILjava/lang/Object;)V",
            "register(Lorca/OrcaRec;)Lorca/OrcaRec;",
            "flush(Lorca/OrcaRec;)V",
            "stack(Lorca/OrcaRec;I)I",
            "longHold(Lorca/OrcaRec;IIJJJ)V",
            "reentered(Ljava/lang/Object;)Z",
            "name(Ljava/lang/Object;I)Z",
            "hookEnter(ILjava/lang/Object;)V",
            "hookEnterAt(ILjava/lang/Object;I)V",
            "hookExit()V",
            "semEnter(ILjava/lang/Object;IJ)V",
            "callerSite()I",
            "hookCallerSite()I",
            "wakeClock()V",
            "threadCpu()J",
            "stackRoom()Z",
            "lockOwner(ILjava/lang/Object;)I",
            "lockContended(ILjava/lang/Object;JJII)V",
            "lockBlocked(ILjava/lang/Object;J)V",
            "lockEnter(ILjava/lang/Object;J)V",
            "lockEnd(IJ)V",
            "lockThrew(ILjava/lang/Object;I)Z",
            "lockLongHold(IIJJJ)V",
            "lockHeldAtStart(ILjava/lang/Object;IZJ)V",
            "callEnter(ILjava/lang/Object;I)V",
            "callEnterVia(ILjava/lang/Class;)V",
            "callExit0()V",
        ]
    );
    // the tracker itself is never rewritten
    assert!(matches!(
        orca_rewriter::rewrite(&bytes, &orca_rewriter::Config::default()).unwrap(),
        orca_rewriter::Outcome::Excluded
    ));
    let _ = std::fs::remove_dir_all(out);
}
