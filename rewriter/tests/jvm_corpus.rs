//! HotSpot verification over the whole corpus, through the scripts in
//! `tests/jvm/` (they need `cargo build --release -p orca-rewriter` first and
//! take a few minutes on 2 cores, hence `#[ignore]`):
//!
//! `cargo build --release -p orca-rewriter && cargo test --release -p orca-rewriter --test jvm_corpus -- --ignored --nocapture`

use std::process::Command;

fn script(name: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/jvm/").to_string() + name;
    let mut c = Command::new("sh");
    c.arg(path).args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let o = c.output().expect("run script");
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name} failed:\n{text}");
    text
}

/// Every class of the JDK 17 jmods and /usr/share/java jars: original and
/// rewritten loaded and linked with verification forced; same outcome.
#[test]
#[ignore = "minutes; needs a release build and a JDK"]
fn corpus_verifies_like_the_original() {
    let t = script("verify_corpus.sh", &["all"], &[]);
    let total = t
        .lines()
        .find(|l| l.starts_with("TOTAL verify:"))
        .expect("summary");
    eprintln!(
        "{total}\n{}",
        t.lines()
            .find(|l| l.starts_with("TOTAL rewrite:"))
            .unwrap_or("")
    );
    assert!(
        total.contains(" differ=0") && total.contains(" newVerifyOrFormatErrors=0"),
        "{t}"
    );
}

/// The whole JDK rewritten and patched in: every class links with
/// verification forced; the rewritten javac and Demo give identical output.
#[test]
#[ignore = "minutes; needs a release build and a JDK"]
fn whole_jdk_rewritten_runs() {
    for home in [
        "/usr/lib/jvm/java-17-openjdk-amd64",
        "/usr/lib/jvm/temurin-25-jdk-amd64",
    ] {
        if !std::path::Path::new(home).join("bin/java").exists() {
            continue;
        }
        let t = script("patched_jdk.sh", &[], &[("JAVA_HOME", home)]);
        let keep: Vec<&str> = t.lines().filter(|l| !l.starts_with("WARNING")).collect();
        eprintln!("{home}:\n{}", keep.join("\n"));
        assert!(t.contains("verifyErrors=0 otherErrors=0"), "{t}");
        assert!(
            t.contains("javac output identical") && t.contains("Demo output identical"),
            "{t}"
        );
    }
}
