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

#[test]
fn tracker_declares_every_called_method() {
    let Some(javac) = javac() else {
        eprintln!("no javac: skipped");
        return;
    };
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../java-tracker/orca/OrcaProfilerTracker.java"
    );
    let out = std::env::temp_dir().join(format!("orca-tracker-test-{}", std::process::id()));
    let generated = out.join("src/orca/OrcaEvents.java");
    std::fs::create_dir_all(generated.parent().unwrap()).unwrap();
    std::fs::write(&generated, events::java_source()).unwrap();
    let st = Command::new(javac)
        .args(["--release", "8", "-d"])
        .arg(&out)
        .arg(src)
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
        .unwrap();
    assert!(st.success());
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
            "register(Lorca/OrcaProfilerTracker$Rec;)Lorca/OrcaProfilerTracker$Rec;",
            "flush(Lorca/OrcaProfilerTracker$Rec;)V",
            "stack(Lorca/OrcaProfilerTracker$Rec;I)I",
            "longHold(Lorca/OrcaProfilerTracker$Rec;IIJJJ)V",
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
