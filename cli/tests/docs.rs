//! The docs' command lines against the real commands, so that docs and behaviour cannot drift:
//! every command line in a fenced block of README.md, cli/README.md and docs/*.md that runs
//! `orca`, `java` (with `-agentpath:`), `javac` or `mkdir` is run as written, with `sh`, in a
//! scratch folder laid out like the repository (`target/` and `examples/` linked, `orca`
//! and JDK 17's `java` first on PATH, and `app.jar` holding the bundled example with a `Main`
//! that runs it), in the order the docs give them. Each must exit 0 (`orca deadlocks`: 0 or 1,
//! its "found" status). A run that reads a recording no line before it wrote (`orca report
//! out/Contention`) gets one of the example first. Lines that need what the machine has not
//! (a server under `wrk`) are not run; their flags are checked like the usage lines: every
//! `--flag` of every `orca SUBCOMMAND ...` in the docs, fenced or inline (the command table
//! of cli/README.md), must be in that subcommand's `--help`, and every subcommand of
//! `orca --help` must have a row in that table.
//!
//! `cargo test --release -p orca-cli --test docs`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use orca_tests::{jdk17, output_with_timeout, root, work_dir};

/// The documents whose command lines are checked.
fn docs() -> Vec<PathBuf> {
    let r = root();
    let mut v = vec![r.join("README.md"), r.join("cli/README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(r.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    v.extend(more);
    v
}

/// A command line of a document: where it is, and its text (without a leading `$ ` prompt
/// or a trailing `# comment`).
#[derive(Debug)]
struct Line {
    at: String,
    text: String,
}

/// The line without a `# comment` that follows whitespace outside quotes.
fn uncommented(l: &str) -> &str {
    let (mut quote, mut prev_space) = (None, true);
    for (i, c) in l.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev_space => return l[..i].trim_end(),
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    l.trim_end()
}

/// The lines of the fenced blocks of `path`.
fn fenced(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.strip_prefix(root()).unwrap().display().to_string();
    let mut out = Vec::new();
    let mut inside = false;
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            let t = l.trim();
            let t = t.strip_prefix("$ ").unwrap_or(t);
            out.push(Line {
                at: format!("{name}:{}", i + 1),
                text: uncommented(t).to_string(),
            });
        }
    }
    out
}

/// The inline code spans of `path` that start with `orca `.
fn inline_orca(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.strip_prefix(root()).unwrap().display().to_string();
    let mut out = Vec::new();
    let mut inside = false;
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        for (k, span) in l.split('`').enumerate() {
            if k % 2 == 1 && span.starts_with("orca ") {
                out.push(Line {
                    at: format!("{name}:{}", i + 1),
                    text: span.replace("\\|", "|"),
                });
            }
        }
    }
    out
}

/// The program a command line starts with, after `cargo build ... &&` (the test runs on
/// what is built already).
fn program(l: &str) -> &str {
    l.split_whitespace().next().unwrap_or("")
}

/// The command line as the test runs it: without a leading `cargo build ... &&`.
fn runnable(l: &str) -> Option<&str> {
    let l = match l.strip_prefix("cargo build") {
        Some(rest) => rest.split_once("&&")?.1.trim(),
        None => l,
    };
    let p = program(l);
    let orca = p == "orca" || p.ends_with("/orca");
    let java = p == "java" && l.contains("-agentpath:");
    (orca || java || p == "javac" || p == "mkdir").then_some(l)
}

/// `orca SUB` of a command line (`target/release/orca record ...` is `record`), if it is one.
fn subcommand(l: &str) -> Option<&str> {
    let mut w = l.split_whitespace();
    let p = w.next()?;
    (p == "orca" || p.ends_with("/orca"))
        .then(|| w.next())
        .flatten()
        .filter(|s| !s.starts_with('-'))
}

/// The `--flags` (and `-x` short flags) of `orca SUB ...` up to its `--`, outside quotes
/// (`--load 'wrk -t2 ...'`).
fn flags(l: &str) -> Vec<String> {
    let before = l.split(" -- ").next().unwrap();
    let unquoted: String = before
        .split('\'')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(" ");
    unquoted
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == '|' || c == '=')
        .filter(|w| w.starts_with('-') && w.len() > 1 && w != &"--")
        .map(|w| w.trim_end_matches([',', '.', ')']).to_string())
        .collect()
}

/// `orca ARGS` (the binary under test): its output as text.
fn orca_help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Lines the test does not run, and why; their flags are still checked.
fn not_run(l: &str) -> Option<&'static str> {
    if l.contains("--load") {
        return Some("needs a server and wrk");
    }
    if l.split_whitespace().any(|w| w == "PID") {
        return Some("needs a running JVM: cli/tests/attach.rs attaches to one");
    }
    None
}

/// The scratch folder: `target` and `examples` of the repository, JDK 17's `java`, and
/// `app.jar` with `Main` running the bundled example.
fn scratch() -> PathBuf {
    let dir = work_dir().join("runs/docs");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for link in ["target", "examples"] {
        std::os::unix::fs::symlink(root().join(link), dir.join(link)).unwrap();
    }
    let jdk = jdk17();
    let build = dir.join("app-build");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::write(
        build.join("Main.java"),
        "public class Main { public static void main(String[] a) throws Exception { PingPong.main(a); } }\n",
    )
    .unwrap();
    let st = Command::new(jdk.javac())
        .args(["-g", "-d"])
        .arg(&build)
        .arg(root().join("examples/PingPong.java"))
        .arg(build.join("Main.java"))
        .status()
        .unwrap();
    assert!(st.success(), "javac examples/PingPong.java Main.java");
    let st = Command::new(jdk.home.join("bin/jar"))
        .arg("cf")
        .arg(dir.join("app.jar"))
        .arg("-C")
        .arg(&build)
        .arg(".")
        .status()
        .unwrap();
    assert!(st.success(), "jar cf app.jar");
    dir
}

/// Runs `line` with `sh -c` in `dir`: (exit status, stdout and stderr).
fn sh(dir: &Path, line: &str) -> (Option<i32>, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_orca")).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        jdk17().home.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("sh");
    c.args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("ORCA_AGENT")
        .stdin(Stdio::null());
    let o = output_with_timeout(c, 900);
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn every_documented_command_line_runs() {
    let dir = scratch();
    let mut ran = Vec::new();
    for doc in docs() {
        for line in fenced(&doc) {
            let Some(l) = runnable(&line.text) else {
                continue;
            };
            if not_run(l).is_some() {
                continue;
            }
            // A recording the docs read but wrote elsewhere (cli/README's example).
            let sub = subcommand(l);
            if sub.is_some_and(|s| s != "record" && s != "bench") {
                for w in l.split_whitespace().filter(|w| w.starts_with("out/")) {
                    if !w.contains('.') && !dir.join(format!("{w}.orca")).exists() {
                        let rec = format!("orca record -o {w} -- java -cp app.jar Main");
                        let (code, out) = sh(&dir, &rec);
                        assert_eq!(code, Some(0), "{rec} (for {}):\n{out}", line.at);
                    }
                }
            }
            let (code, out) = sh(&dir, l);
            let ok = match sub {
                Some("deadlocks") => matches!(code, Some(0 | 1)),
                _ => code == Some(0),
            };
            assert!(ok, "{}: `{l}` exited {code:?}:\n{out}", line.at);
            ran.push(format!("{}: {l}", line.at));
        }
    }
    // The quick start, the agent line and an `orca` line of each document that has one.
    for want in [
        "README.md:7: target/release/orca record -o out/run -- java -cp app.jar Main",
        "README.md:8: target/release/orca html out/run -o out/run.html",
        "README.md:9: target/release/orca deadlocks out/run",
        "java -agentpath:target/release/liborca.so=out/run -cp app.jar Main",
        "cli/README.md:",
        "docs/READING.md:",
        "docs/PERFORMANCE.md:",
    ] {
        assert!(
            ran.iter().any(|r| r.contains(want)),
            "not run: {want}\nran:\n{}",
            ran.join("\n")
        );
    }
    assert!(dir.join("out/run.html").is_file());
}

#[test]
fn every_documented_flag_exists() {
    let top = orca_help(&["--help"]);
    let subs: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(String::from)
        .collect();
    assert!(subs.len() >= 9, "{top}");
    let mut checked = 0;
    let mut bad = Vec::new();
    for doc in docs() {
        let lines = fenced(&doc).into_iter().chain(inline_orca(&doc));
        for line in lines {
            let Some(sub) = subcommand(&line.text) else {
                continue;
            };
            if !subs.iter().any(|s| s == sub) {
                bad.push(format!("{}: no subcommand {sub}: `{}`", line.at, line.text));
                continue;
            }
            let help = orca_help(&[sub, "--help"]);
            for f in flags(&line.text) {
                checked += 1;
                let known = help
                    .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
                    .any(|w| w == f);
                if !known {
                    bad.push(format!(
                        "{}: `orca {sub} --help` has no {f}: `{}`",
                        line.at, line.text
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(checked > 40, "only {checked} flags found in the docs");
    // Every subcommand has a row in cli/README.md's table.
    let table = std::fs::read_to_string(root().join("cli/README.md")).unwrap();
    for s in &subs {
        assert!(
            table.contains(&format!("| `orca {s} ")),
            "cli/README.md has no row for orca {s}"
        );
    }
}

#[test]
fn the_readme_test_command_is_what_ci_runs() {
    // .ci/run runs scripts/test; the README says so, with the command itself.
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "exec scripts/test"), "{ci}");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = fenced(&root().join("README.md"));
    assert!(
        lines.iter().any(|l| l.text == "scripts/test"),
        "README.md has no fenced `scripts/test` line"
    );
    assert!(readme.contains("(CI runs this: .ci/run)"));
    // The quick start comes first, and is short.
    let quick = readme
        .split("## Quick start\n")
        .nth(1)
        .expect("a quick start")
        .split("\n## ")
        .next()
        .unwrap();
    assert_eq!(
        readme.find("\n## "),
        readme.find("\n## Quick start"),
        "the quick start is not the first section"
    );
    assert!(quick.lines().count() <= 16, "{quick}");
}

/// The README's "leave it on" lines (`orca attach PID -d 0 --maxage 1h`, then `orca dump PID
/// -o out/last --last 10m`), which the other tests skip for their `PID`, run as written on a
/// running JVM (tests/java/AttachLoop.java) with its PID put in: both exit 0, and the dump is
/// a valid recording that says it is one.
#[test]
fn the_readme_leave_it_on_lines_run() {
    let lines: Vec<Line> = fenced(&root().join("README.md"))
        .into_iter()
        .filter(|l| l.text.contains("attach PID -d 0 --maxage") || l.text.contains("orca dump PID"))
        .collect();
    assert_eq!(lines.len(), 2, "README.md: {lines:?}");
    assert!(lines[0].text.contains("--maxage 1h"), "{lines:?}");
    assert!(
        lines[1].text.contains("dump PID -o out/last --last 10m"),
        "{lines:?}"
    );
    let dir = work_dir().join("runs/docs-leave-it-on");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(root().join("target"), dir.join("target")).unwrap();
    let mut jvm = Command::new(jdk17().java())
        .arg("-cp")
        .arg(orca_tests::test_classes())
        .arg("AttachLoop")
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(jvm.stdout.as_mut().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready");
    let pid = jvm.id().to_string();
    let mut outcome = Vec::new();
    for l in &lines {
        let text = uncommented(&l.text).replace("PID", &pid);
        let (code, out) = sh(&dir, &text);
        outcome.push((l.at.clone(), text, code, out));
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let (detached, said) = sh(&dir, &format!("target/release/orca detach {pid}"));
    let _ = jvm.kill();
    let _ = jvm.wait();
    for (at, text, code, out) in &outcome {
        assert_eq!(*code, Some(0), "{at}: `{text}`:\n{out}");
    }
    assert_eq!(detached, Some(0), "{said}");
    let (code, out) = sh(&dir, "target/release/orca check out/last");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("orca dump"), "{out}");
}
