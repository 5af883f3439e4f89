//! Instrumentation mode under concurrency and in real deployments (issue 12, item 4): many
//! threads meeting fresh methods at once, class loaders that come and go, other agents,
//! OSGi bundles, module layers, a synchronized method's receiver, and events at exit. Every
//! program here is written (or generated) so that the location of every event is known.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use orca_tests::*;

/// A fresh folder for `name` under target/orca-tests/deploy.
fn fresh_dir(name: &str) -> PathBuf {
    let d = work_dir().join("deploy").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles `sources` (relative to `dir`) with JDK 17's javac (`--release 11`, debug info)
/// into `dir/out`, with `cp` on the class path.
fn javac(dir: &Path, sources: &[&str], cp: &[&Path]) -> PathBuf {
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut c = Command::new(jdk17().javac());
    c.args(["--release", "11", "-g", "-encoding", "UTF-8", "-d"])
        .arg(&out);
    if !cp.is_empty() {
        let joined: Vec<String> = cp.iter().map(|p| p.display().to_string()).collect();
        c.arg("-cp").arg(joined.join(":"));
    }
    for s in sources {
        c.arg(dir.join(s));
    }
    let o = c.output().expect("run javac");
    assert!(
        o.status.success(),
        "javac failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Runs `java` on `jdk` under the agent (options after the prefix) with `jvm_args`.
fn run_java(
    test: &str,
    jdk: &Jdk,
    options: &str,
    env: &[(&str, &str)],
    jvm_args: &[&str],
    secs: u64,
) -> Run {
    let prefix = prefix_for(test, jdk);
    let mut c = Command::new(jdk.java());
    let mut o = prefix.display().to_string();
    if !options.is_empty() {
        o.push(',');
        o.push_str(options);
    }
    c.arg(format!("-agentpath:{}={o}", agent_path().display()));
    c.args(jvm_args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(std::process::Stdio::null());
    finish(prefix, output_with_timeout(c, secs))
}

/// Runs `java` on `jdk` without the agent.
fn run_java_plain(jdk: &Jdk, jvm_args: &[&str], secs: u64) -> std::process::Output {
    let mut c = Command::new(jdk.java());
    c.args(jvm_args).stdin(std::process::Stdio::null());
    output_with_timeout(c, secs)
}

/// Per method of `class` (in `classes`), the original bytecode indexes of its calls to
/// `callee` (e.g. `java/lang/Thread.sleep`), read from `javap -c`.
fn call_bcis(jdk: &Jdk, classes: &Path, class: &str, callee: &str) -> HashMap<String, Vec<u32>> {
    let javap = jdk.home.join("bin/javap");
    let o = Command::new(javap)
        .args(["-c", "-p", "-cp"])
        .arg(classes)
        .arg(class)
        .output()
        .expect("run javap");
    assert!(o.status.success(), "javap {class}");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut out: HashMap<String, Vec<u32>> = HashMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.starts_with("  ") && !line.starts_with("   ") && line.contains('(') {
            let head = line.split('(').next().unwrap();
            current = head.rsplit(' ').next().unwrap().to_string();
        } else if line.contains(&format!("// Method {callee}:")) {
            let bci: u32 = line.trim().split(':').next().unwrap().parse().unwrap();
            out.entry(current.clone()).or_default().push(bci);
        }
    }
    out
}

/// The short method name of a frame's method (`Class.method` -> `method`).
fn short(log: &Log, method: u32) -> String {
    let n = log.method_name(method);
    n.rsplit('.').next().unwrap_or(&n).to_string()
}

/// Many threads reach each of many fresh methods at the same moment (a barrier before
/// each), and the first to describe a method is held up (the agent's test hook) before it
/// publishes the method's offset map: every other thread must still report the original
/// bytecode index, and the line the source has.
#[test]
fn threads_meeting_a_fresh_method_at_once_report_original_locations() {
    const METHODS: usize = 8;
    const THREADS: usize = 4;
    let dir = fresh_dir("fresh-methods");
    let mut src = String::from(
        "import java.util.concurrent.CyclicBarrier;\n\
         public class FreshMethods {\n\
         static int count;\n",
    );
    // Each method: a synchronized block (its rewrite shifts every later index), then a
    // sleep whose location is known. One statement per line.
    let mut sleep_line = HashMap::new();
    for i in 0..METHODS {
        src.push_str(&format!(
            "static void m{i}(int[] mine) throws InterruptedException {{\n\
             synchronized (mine) {{ mine[0]++; }}\n\
             Thread.sleep(0);\n\
             }}\n"
        ));
        let line = src.lines().count() as u32 - 1;
        sleep_line.insert(format!("m{i}"), line);
    }
    src.push_str(&format!(
        "public static void main(String[] a) throws Exception {{\n\
         CyclicBarrier b = new CyclicBarrier({THREADS});\n\
         Thread[] ts = new Thread[{THREADS}];\n\
         int[][] boxes = new int[{THREADS}][1];\n\
         for (int t = 0; t < ts.length; t++) {{\n\
         int[] mine = boxes[t];\n\
         ts[t] = new Thread(() -> {{\n\
         try {{\n\
         for (int i = 0; i < {METHODS}; i++) {{\n\
         b.await();\n\
         switch (i) {{\n"
    ));
    for i in 0..METHODS {
        src.push_str(&format!("case {i}: m{i}(mine); break;\n"));
    }
    src.push_str(
        "}\n}\n} catch (Exception e) { throw new RuntimeException(e); }\n});\n\
         ts[t].start();\n}\nfor (Thread t : ts) t.join();\n\
         for (int[] box : boxes) count += box[0];\n\
         System.out.println(\"count \" + count);\n}\n}\n",
    );
    std::fs::write(dir.join("FreshMethods.java"), &src).unwrap();
    let classes = javac(&dir, &["FreshMethods.java"], &[]);
    let cp = classes.display().to_string();
    for jdk in jdks() {
        let bcis = call_bcis(jdk, &classes, "FreshMethods", "java/lang/Thread.sleep");
        let r = run_java(
            "fresh-methods",
            jdk,
            INSTRUMENT,
            &[("ORCA_TEST_DESCRIBE_DELAY_MS", "200")],
            &[VERIFY_ALL, &["-cp", &cp, "FreshMethods"]].concat(),
            300,
        );
        assert_eq!(r.code, Some(0), "{}: {}", jdk.label(), r.stderr);
        assert_eq!(r.stdout.trim(), format!("count {}", METHODS * THREADS));
        let log = r.log();
        assert_valid(&r, &log);
        let mut seen = 0;
        for e in log.events.iter().filter(|e| e.name == "ThreadSleep") {
            let (m, loc) = e.frames[0];
            let name = short(&log, m);
            let Some(expected) = bcis.get(&name) else {
                continue;
            };
            seen += 1;
            assert_eq!(
                vec![loc],
                *expected,
                "{}: {name}'s sleep reported at index {loc}",
                jdk.label()
            );
            assert_eq!(
                log.line_of(m, loc),
                Some(sleep_line[&name]),
                "{}: {name}'s sleep line",
                jdk.label()
            );
        }
        assert_eq!(seen, METHODS * THREADS, "{}: sleeps seen", jdk.label());
    }
}

/// The classes of tests/deploy, compiled once.
fn deploy_classes() -> &'static Path {
    static CLASSES: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CLASSES.get_or_init(|| {
        let dir = fresh_dir("classes");
        let src = root().join("tests/deploy");
        let mut c = Command::new(jdk17().javac());
        c.args(["--release", "11", "-g", "-encoding", "UTF-8", "-d"])
            .arg(&dir);
        c.arg(src.join("ExitWhileBusy.java"));
        let o = c.output().expect("run javac");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        dir
    })
}

/// The numbers of the agent's exit line: (events written, dropped, late).
fn exit_numbers(stderr: &str) -> (u64, u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("orca: ") && l.contains(" events, "))
        .unwrap_or_else(|| panic!("no exit line in:\n{stderr}"));
    let num = |before: &str| -> u64 {
        let i = line.find(before).unwrap();
        let head = &line[..i];
        let start = head.rfind([' ', ',']).map_or(0, |j| j + 1);
        head[start..].trim().parse().unwrap()
    };
    let late = if line.contains(" events from threads still running") {
        num(" events from threads still running")
    } else {
        0
    };
    (num(" events, "), num(" dropped"), late)
}

/// Threads run synchronized code through System.exit: what the agent wrote is a valid log
/// whose event count is the exit line's, and the events after the last write are counted as
/// late (a test hook holds the exit 300 ms after the last write, so that the three threads
/// locking without pause surely make some however loaded the machine).
#[test]
fn events_after_the_last_write_at_exit_are_counted() {
    let cp = deploy_classes().display().to_string();
    for jdk in jdks() {
        for mode in [INSTRUMENT, "mode=instrument"] {
            let test = format!("exit-busy-{}", mode.len());
            let r = run_java(
                &test,
                jdk,
                mode,
                &[("ORCA_TEST_EXIT_DELAY_MS", "300")],
                &["-cp", &cp, "ExitWhileBusy"],
                120,
            );
            assert_eq!(r.code, Some(0), "{} {mode}: {}", jdk.label(), r.stderr);
            let log = r.log();
            assert_valid(&r, &log);
            let (written, _dropped, late) = exit_numbers(&r.stderr);
            let lines = std::fs::read_to_string(r.prefix.with_extension("orca"))
                .unwrap()
                .lines()
                .filter(|l| {
                    // the agent's own lines are not events
                    [",EventsDropped,", ",RecordingStarted,", ",RecordingEnded,"]
                        .iter()
                        .all(|k| !l.contains(k))
                })
                .count() as u64;
            assert_eq!(written, lines, "{} {mode}: {}", jdk.label(), r.stderr);
            assert!(
                late > 0,
                "{} {mode}: nothing late: {}",
                jdk.label(),
                r.stderr
            );
        }
    }
}

const FELIX_JAR: &str = "/usr/share/java/org.apache.felix.framework.jar";

/// The distinct call events of `log` whose top frame is in a class whose name starts with
/// `prefix`, as (event, method, line), sorted: what both modes must agree on (how often a
/// thread waits depends on the interleaving).
fn calls_in(log: &Log, prefix: &str) -> Vec<(String, String, u32)> {
    let mut v: Vec<_> = log
        .events
        .iter()
        .filter(|e| {
            e.name.starts_with("Object")
                || matches!(
                    e.name.as_str(),
                    "ThreadStart" | "ThreadJoin" | "ThreadJoined"
                )
        })
        .filter_map(|e| {
            let (m, loc) = *e.frames.first()?;
            let method = log.method_name(m);
            method
                .starts_with(prefix)
                .then(|| (e.name.clone(), method, log.line_of(m, loc).unwrap_or(0)))
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Runs `jvm_args` without the agent, in JVMTI mode and in instrumentation mode (every class
/// verified): the program's output must be the same in all three, the call events of the
/// classes under `prefix` the same in both modes, and instrumentation mode must have seen
/// the synchronized method `bump` entered ten times.
fn assert_runs_unchanged_and_recorded(test: &str, jdk: &Jdk, jvm_args: &[&str], prefix: &str) {
    let plain = run_java_plain(jdk, jvm_args, 120);
    let plain_out = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert_eq!(
        plain.status.code(),
        Some(0),
        "{test} {} without the agent: {}",
        jdk.label(),
        String::from_utf8_lossy(&plain.stderr)
    );
    let a = run_java(
        &format!("{test}-jvmti"),
        jdk,
        "mode=jvmti",
        &[],
        jvm_args,
        120,
    );
    let b = run_java(
        &format!("{test}-instr"),
        jdk,
        INSTRUMENT,
        &[],
        &[VERIFY_ALL, jvm_args].concat(),
        120,
    );
    for (r, mode) in [(&a, "jvmti"), (&b, "instrument")] {
        assert_eq!(
            r.code,
            Some(0),
            "{test} {} {mode}: {}",
            jdk.label(),
            r.stderr
        );
        assert_eq!(r.stdout, plain_out, "{test} {} {mode}: output", jdk.label());
        assert!(
            !r.stderr.contains("Error") && !r.stderr.contains("Exception"),
            "{test} {} {mode}: {}",
            jdk.label(),
            r.stderr
        );
    }
    let (la, lb) = (a.log(), b.log());
    assert_valid(&a, &la);
    assert_valid(&b, &lb);
    let (ca, cb) = (calls_in(&la, prefix), calls_in(&lb, prefix));
    assert!(
        ca.iter().any(|c| c.0 == "ObjectWait") && ca.iter().any(|c| c.0 == "ThreadJoin"),
        "{test} {}: {ca:?}",
        jdk.label()
    );
    assert_eq!(
        ca,
        cb,
        "{test} {}: jvmti (left), instrument (right)",
        jdk.label()
    );
    let bump = format!("{prefix}Worker.bump");
    let entered = lb
        .events
        .iter()
        .filter(|e| e.name == "MonitorEntered")
        .filter(|e| {
            e.frames
                .first()
                .is_some_and(|f| lb.method_name(f.0) == bump)
        })
        .count();
    assert_eq!(entered, 10, "{test} {}: {bump} entered", jdk.label());
}

/// A named module in a layer created at run time (`defineModulesWithOneLoader`) reads only
/// what it requires: its rewritten classes must still reach the tracker (no
/// IllegalAccessError), run unchanged and be recorded.
#[test]
fn named_modules_of_a_layer_created_at_run_time_run_instrumented() {
    let dir = fresh_dir("layer");
    let src = root().join("tests/deploy/layer");
    let host = javac_into(&dir.join("host"), &[&src.join("LayerHost.java")], &[], &[]);
    let module = dir.join("mods/app.work");
    javac_into(
        &module,
        &[
            &src.join("app.work/module-info.java"),
            &src.join("app.work/app/work/Worker.java"),
        ],
        &[],
        &[],
    );
    let host_cp = host.display().to_string();
    let mods = dir.join("mods").display().to_string();
    for jdk in jdks() {
        let args = ["-cp", &host_cp, "LayerHost", &mods];
        assert_runs_unchanged_and_recorded("layer", jdk, &args, "app.work.");
    }
}

/// An OSGi bundle's class loader sees nothing of the boot class path but `java.*` (Apache
/// Felix, embedded with its default configuration, no boot delegation set by anyone): its
/// rewritten classes must still reach the tracker (no NoClassDefFoundError), run unchanged
/// and be recorded. The bundle is built here: a jar with an OSGi manifest and an activator.
#[test]
fn osgi_bundles_run_instrumented_without_boot_delegation() {
    assert!(
        Path::new(FELIX_JAR).is_file(),
        "{FELIX_JAR} is missing: install Debian's `libfelix-framework-java` (scripts/ensure-tools does)"
    );
    let dir = fresh_dir("osgi");
    let src = root().join("tests/deploy/osgi");
    let felix = Path::new(FELIX_JAR);
    let host = javac_into(
        &dir.join("host"),
        &[&src.join("FelixHost.java")],
        &[felix],
        &[],
    );
    let bundle_classes = javac_into(
        &dir.join("bundle"),
        &[
            &src.join("work/Activator.java"),
            &src.join("work/Worker.java"),
        ],
        &[felix],
        &[],
    );
    let jar = dir.join("work.jar");
    let o = Command::new(jdk17().home.join("bin/jar"))
        .arg("cfm")
        .arg(&jar)
        .arg(src.join("MANIFEST.MF"))
        .arg("-C")
        .arg(&bundle_classes)
        .arg("work")
        .output()
        .expect("run jar");
    assert!(
        o.status.success(),
        "jar: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cp = format!("{}:{FELIX_JAR}", host.display());
    for jdk in jdks() {
        let cache = dir.join(format!("cache-{}", jdk.label()));
        let (cache, jar) = (cache.display().to_string(), jar.display().to_string());
        // Felix 4.6 reflects into java.base (it predates modules).
        let opens = ["java.net", "java.security", "java.lang"]
            .map(|p| format!("java.base/{p}=ALL-UNNAMED"));
        let mut args = vec![];
        for o in &opens {
            args.extend(["--add-opens", o]);
        }
        args.extend(["-cp", &cp, "FelixHost", &cache, &jar]);
        assert_runs_unchanged_and_recorded("osgi", jdk, &args, "work.");
    }
    // The default recording has the bundle's `bump` monitor only in MonitorHolds lines, and
    // dozens of Felix's monitors rank before it: `--all` and the JSON still have it (issue
    // 46: both cut every table at --top, 10).
    let jdk = jdk17();
    let cache = dir.join("cache-summary").display().to_string();
    let jar = jar.display().to_string();
    let opens =
        ["java.net", "java.security", "java.lang"].map(|p| format!("java.base/{p}=ALL-UNNAMED"));
    let mut args = vec![];
    for o in &opens {
        args.extend(["--add-opens", o]);
    }
    args.extend(["-cp", &cp, "FelixHost", &cache, &jar]);
    let r = run_java("osgi-summary", jdk, "", &[], &args, 120);
    assert_eq!(r.code, Some(0), "osgi summary: {}", r.stderr);
    let report = |extra: &[&str]| {
        let o = Command::new(root().join("target/release/orca"))
            .arg("report")
            .arg(&r.prefix)
            .args(extra)
            .output()
            .expect("run orca report");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let bump = "held from work.Worker.bump(Worker.java:";
    let all = report(&["--all"]);
    assert!(all.contains(bump), "osgi summary --all: {all}");
    let json = report(&["--json"]);
    assert!(
        json.contains("\"site\":\"work.Worker.bump(Worker.java:"),
        "osgi summary --json: {json}"
    );
}

/// Compiles `sources` into `out` with JDK 17's javac (`--release 11`, debug info), with
/// `cp` on the class path and `extra` arguments.
fn javac_into(out: &Path, sources: &[&Path], cp: &[&Path], extra: &[&str]) -> PathBuf {
    std::fs::create_dir_all(out).unwrap();
    let mut c = Command::new(jdk17().javac());
    c.args(["--release", "11", "-g", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .args(extra);
    if !cp.is_empty() {
        let joined: Vec<String> = cp.iter().map(|p| p.display().to_string()).collect();
        c.arg("-cp").arg(joined.join(":"));
    }
    c.args(sources);
    let o = c.output().expect("run javac");
    assert!(
        o.status.success(),
        "javac {}: {}",
        out.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out.to_path_buf()
}

/// The line of `file` carrying `// @<marker>`.
fn line_of_marker(file: &Path, marker: &str) -> u32 {
    let src = std::fs::read_to_string(file).unwrap();
    let tag = format!("// @{marker}");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&tag))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "{tag} in {}", file.display());
    hits[0] as u32
}

/// A server redeploys an application 1,000 times, each time in a new class loader, two
/// versions of the same class in turn (same name, different code), each version's class
/// loaded before the previous one first runs: if one loader's offset maps were ever used
/// for another's class (as when maps were keyed by the loader's identity hash and two
/// loaders shared one), its locations would be wrong. Every event must
/// have its version's original index and line, and the agent must keep no offset maps of
/// the loaders collected: its tables at exit (a test hook prints them) hold at most the
/// loaders of the last hundred deployments, not a thousand.
#[test]
fn redeploying_a_thousand_times_keeps_locations_right_and_memory_flat() {
    const DEPLOYS: usize = 1000;
    let dir = fresh_dir("redeploy");
    let src = root().join("tests/deploy/redeploy");
    let host = javac_into(&dir.join("host"), &[&src.join("Redeploy.java")], &[], &[]);
    let v1 = javac_into(&dir.join("v1"), &[&src.join("v1/app/Svc.java")], &[], &[]);
    let v2 = javac_into(&dir.join("v2"), &[&src.join("v2/app/Svc.java")], &[], &[]);
    let (host, v1s, v2s) = (
        host.display().to_string(),
        v1.display().to_string(),
        v2.display().to_string(),
    );
    let n = DEPLOYS.to_string();
    // (line, original index) of the notify in each version.
    let versions: Vec<(u32, u32)> = [(&v1, "v1"), (&v2, "v2")]
        .iter()
        .map(|(classes, v)| {
            let line = line_of_marker(&src.join(v).join("app/Svc.java"), "notify");
            let bcis = call_bcis(jdk17(), classes, "app.Svc", "java/lang/Object.notify");
            (line, bcis["serve"][0])
        })
        .collect();
    assert_ne!(versions[0], versions[1]);
    for jdk in jdks() {
        let r = run_java(
            "redeploy",
            jdk,
            "mode=instrument",
            &[("ORCA_TEST_TABLES", "1")],
            &["-Xlog:disable", "-cp", &host, "Redeploy", &v1s, &v2s, &n],
            300,
        );
        assert_eq!(r.code, Some(0), "{}: {}", jdk.label(), r.stderr);
        assert_eq!(r.stdout.trim(), format!("sum {DEPLOYS}"));
        let log = r.log();
        assert_valid(&r, &log);
        let mut per_version = [0u64; 2];
        // Nobody waits: the default counts these calls per site (`Notifies`).
        for (calls, (m, loc)) in log.notify_calls(false) {
            // By method name: the version is told by the location below, not by the
            // class (every deployment's app.Svc is a class of its own, of one name).
            assert_eq!(log.methods[&m].name, "serve");
            let line = log.line_of(m, loc).unwrap();
            let v = versions
                .iter()
                .position(|&(l, b)| (l, b) == (line, loc))
                .unwrap_or_else(|| {
                    panic!(
                        "{}: notify at index {loc}, line {line}; the versions: {versions:?}",
                        jdk.label()
                    )
                });
            per_version[v] += calls;
        }
        assert_eq!(per_version, [DEPLOYS as u64 / 2; 2], "{}", jdk.label());
        let tables = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("orca-test: tables: "))
            .unwrap_or_else(|| panic!("no tables line: {}", r.stderr));
        let nums: Vec<usize> = tables
            .split(", ")
            .map(|p| p.split(' ').next().unwrap().parse().unwrap())
            .collect();
        let rss: Vec<u64> = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("rss-kb "))
            .unwrap()
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        eprintln!(
            "orca-tests: {} redeploy x{DEPLOYS}: tables at exit {tables}; RSS {} kB at 100, {} kB at {DEPLOYS}",
            jdk.label(),
            rss[0],
            rss[1]
        );
        let (loaders, classes, maps, pending) = (nums[0], nums[1], nums[2], nums[3]);
        assert!(
            loaders <= 101 && classes <= 101 && maps <= 202 && pending <= 101,
            "{}: the agent keeps the maps of collected loaders: {tables}",
            jdk.label()
        );
    }
}

const ASM_JAR: &str = "/usr/share/java/asm.jar";

/// Another agent (ASM, through java.lang.instrument) rewrites a class before or after Orca
/// (both orders of `-agentpath` and `-javaagent`), at load time and by retransformations,
/// each version inserting more code than the one before: every event must still carry the
/// original class file's index and line. The same agent unable to retransform (its manifest
/// says so) is exact after Orca; before Orca it is the one combination Orca cannot make
/// exact, and says so at start-up. Orca sees the class before the other agents (a
/// retransformation-incapable environment), after the command line's agents (an environment
/// created at VMInit) and, for a retransformation, as it runs (JVMTI's code and constant
/// pool), and maps each version to the original by an instruction diff.
#[test]
fn a_class_rewritten_by_another_agent_keeps_original_locations() {
    assert!(
        Path::new(ASM_JAR).is_file(),
        "{ASM_JAR} is missing: install Debian's `libasm-java` (scripts/ensure-tools does)"
    );
    let dir = fresh_dir("other-agent");
    let src = root().join("tests/deploy/otheragent");
    let asm = Path::new(ASM_JAR);
    let agent_classes = javac_into(&dir.join("agent"), &[&src.join("Shift.java")], &[asm], &[]);
    let target = javac_into(
        &dir.join("target"),
        &[&src.join("OtherAgentTarget.java")],
        &[],
        &[],
    );
    // The same agent as one that can retransform and as one that cannot.
    let make_jar = |name: &str, retransform: bool| {
        let manifest = dir.join(format!("{name}.MF"));
        std::fs::write(
            &manifest,
            format!(
                "Premain-Class: Shift\nCan-Retransform-Classes: {retransform}\nBoot-Class-Path: {ASM_JAR}\n"
            ),
        )
        .unwrap();
        let jar = dir.join(format!("{name}.jar"));
        let o = Command::new(jdk17().home.join("bin/jar"))
            .arg("cfm")
            .arg(&jar)
            .arg(&manifest)
            .arg("-C")
            .arg(&agent_classes)
            .arg(".")
            .output()
            .expect("run jar");
        assert!(
            o.status.success(),
            "jar: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        jar
    };
    let capable = make_jar("shift", true);
    let incapable = make_jar("shift-incapable", false);
    let line = line_of_marker(&src.join("OtherAgentTarget.java"), "notify");
    let sync_line = line - 2;
    let bci = call_bcis(
        jdk17(),
        &target,
        "OtherAgentTarget",
        "java/lang/Object.notify",
    )["work"][0];
    let cp = target.display().to_string();
    let orca = |jdk: &Jdk, case: &str| {
        let prefix = prefix_for(&format!("other-agent-{case}"), jdk);
        let o = format!(
            "-agentpath:{}={},{INSTRUMENT}",
            agent_path().display(),
            prefix.display()
        );
        (prefix, o)
    };
    let said_before =
        "loads before Orca: a class it changes at load without being able to retransform classes";
    let cases = [
        (true, true, "load", 0),
        (true, true, "load", 3),
        (true, true, "later", 3),
        (false, true, "load", 0),
        (false, true, "load", 3),
        (false, true, "later", 3),
        (true, false, "load", 0),
        (false, false, "load", 0),
    ];
    for jdk in jdks() {
        for (orca_first, retransform, agent_arg, rounds) in cases {
            let jar = if retransform { &capable } else { &incapable };
            let order = if orca_first {
                "orca-first"
            } else {
                "orca-last"
            };
            let kind = if retransform { "" } else { "-incapable" };
            let case = format!("{order}{kind}-{agent_arg}-{rounds}");
            let (prefix, agentpath) = orca(jdk, &case);
            let javaagent = format!("-javaagent:{}={agent_arg}", jar.display());
            let mut c = Command::new(jdk.java());
            if orca_first {
                c.arg(&agentpath).arg(&javaagent);
            } else {
                c.arg(&javaagent).arg(&agentpath);
            }
            c.args(["-cp", &cp, "OtherAgentTarget", &rounds.to_string()])
                .stdin(std::process::Stdio::null());
            let r = finish(prefix, output_with_timeout(c, 60));
            let ctx = format!("{} {case}: {}", jdk.label(), r.stderr);
            assert_eq!(r.code, Some(0), "{ctx}");
            assert_eq!(r.stdout, "done\n", "{ctx}");
            assert!(!r.stderr.contains("cannot"), "{ctx}");
            // Orca says at start-up which agents load before it, and what that costs.
            assert_eq!(
                r.stderr.matches(said_before).count(),
                usize::from(!orca_first),
                "{ctx}"
            );
            let log = r.log();
            assert_valid(&r, &log);
            if !orca_first && !retransform {
                // The one order Orca cannot follow: the agent's hook runs before Orca's
                // first (both cannot retransform; the older runs first), so Orca never
                // sees the original: its indexes are the agent's code's, its lines right.
                let notifies: Vec<Option<u32>> = log
                    .events
                    .iter()
                    .filter(|e| e.name == "ObjectNotify")
                    .map(|e| log.line_of(e.frames[0].0, e.frames[0].1))
                    .collect();
                assert_eq!(notifies, vec![Some(line)], "{ctx}");
                continue;
            }
            let notifies: Vec<(u32, Option<u32>)> = log
                .events
                .iter()
                .filter(|e| e.name == "ObjectNotify")
                .map(|e| (e.frames[0].1, log.line_of(e.frames[0].0, e.frames[0].1)))
                .collect();
            assert_eq!(notifies, vec![(bci, Some(line)); 1 + rounds], "{ctx}");
            // The monitor's enter and exit are on the synchronized line, once per call.
            let entered: Vec<Option<u32>> = log
                .events
                .iter()
                .filter(|e| e.name == "MonitorEntered")
                .filter(|e| log.method_name(e.frames[0].0) == "OtherAgentTarget.work")
                .map(|e| log.line_of(e.frames[0].0, e.frames[0].1))
                .collect();
            assert_eq!(entered, vec![Some(sync_line); 1 + rounds], "{ctx}");
        }
    }
}

const BYTE_BUDDY_JAR: &str = "/usr/share/java/byte-buddy.jar";
const BYTE_BUDDY_AGENT_JAR: &str = "/usr/share/java/byte-buddy-agent.jar";

/// Byte Buddy's agent redefines a class Orca instrumented, after its method ran, five times,
/// alternately inlining an advice at the method's start and going back to the class file:
/// given as `-javaagent` before or after Orca, or attached by the program at run time (then
/// its retransformations, whose hook runs after all of Orca's, are the one combination Orca
/// cannot follow, and says so). The
/// program's output is the one it has without Orca, every call is counted, and every event
/// of every version carries the original class file's index and line (a redefinition is
/// compared with the version that runs, whose maps lead to the class file first loaded), so
/// the line table written once still fits.
#[test]
fn a_class_redefined_by_byte_buddy_keeps_original_locations() {
    for jar in [BYTE_BUDDY_JAR, BYTE_BUDDY_AGENT_JAR] {
        assert!(
            Path::new(jar).is_file(),
            "{jar} is missing: install Debian's `libbyte-buddy-java` (scripts/ensure-tools does)"
        );
    }
    const ROUNDS: usize = 5;
    let dir = fresh_dir("byte-buddy-redefine");
    let src = root().join("tests/deploy/otheragent");
    let bb = [Path::new(BYTE_BUDDY_JAR), Path::new(BYTE_BUDDY_AGENT_JAR)];
    let classes = javac_into(
        &dir.join("classes"),
        &[
            &src.join("BBRedefine.java"),
            &src.join("BBTarget.java"),
            &src.join("BBCount.java"),
        ],
        &bb,
        &[],
    );
    let line = line_of_marker(&src.join("BBTarget.java"), "bbnotify");
    let sync_line = line_of_marker(&src.join("BBTarget.java"), "bbsync");
    let bci = call_bcis(jdk17(), &classes, "BBTarget", "java/lang/Object.notify")["work"][0];
    let cp = format!(
        "{}:{BYTE_BUDDY_JAR}:{BYTE_BUDDY_AGENT_JAR}",
        classes.display()
    );
    let rounds = ROUNDS.to_string();
    let expected = format!("work {}, advice {}\n", ROUNDS + 1, ROUNDS.div_ceil(2));
    let javaagent = format!("-javaagent:{BYTE_BUDDY_AGENT_JAR}");
    for jdk in jdks() {
        for (case, strategy) in [
            ("orca-first", "retransform"),
            ("orca-last", "retransform"),
            ("orca-first", "redefine"),
            ("orca-last", "redefine"),
            ("attach", "redefine"),
            ("attach", "retransform"),
        ] {
            let prefix = prefix_for(&format!("byte-buddy-{strategy}-{case}"), jdk);
            let agentpath = format!(
                "-agentpath:{}={},{INSTRUMENT}",
                agent_path().display(),
                prefix.display()
            );
            let mut c = Command::new(jdk.java());
            match case {
                "orca-first" => c.arg(&agentpath).arg(&javaagent),
                "orca-last" => c.arg(&javaagent).arg(&agentpath),
                _ => c.arg(&agentpath).arg("-Djdk.attach.allowAttachSelf=true"),
            };
            if case == "attach" && jdk.major >= 21 {
                c.arg("-XX:+EnableDynamicAgentLoading");
            }
            let how = if case == "attach" {
                "attach"
            } else {
                "premain"
            };
            c.args(["-cp", &cp, "BBRedefine", &rounds, strategy, how])
                .stdin(std::process::Stdio::null());
            let r = finish(prefix, output_with_timeout(c, 120));
            let ctx = format!("{} {case} {strategy}: {}", jdk.label(), r.stderr);
            assert_eq!(r.code, Some(0), "{ctx}");
            assert_eq!(r.stdout, expected, "{ctx}");
            let log = r.log();
            assert_valid(&r, &log);
            let said =
                "orca: class BBTarget was changed after Orca by an agent attached at run time";
            if (case, strategy) == ("attach", "retransform") {
                // The one combination Orca cannot follow: the attached agent's hook runs after
                // Orca's last and hands back its own class, without Orca's code. Orca says so
                // at exit; the first version's events are still exact.
                assert_eq!(r.stderr.matches(said).count(), 1, "{ctx}");
                let notifies: Vec<_> = log
                    .events
                    .iter()
                    .filter(|e| e.name == "ObjectNotify")
                    .map(|e| (e.frames[0].1, log.line_of(e.frames[0].0, e.frames[0].1)))
                    .collect();
                assert_eq!(notifies, vec![(bci, Some(line))], "{ctx}");
                continue;
            }
            assert!(!r.stderr.contains("orca: class"), "{ctx}");
            let in_work = |name: &str| -> Vec<(u32, Option<u32>)> {
                log.events
                    .iter()
                    .filter(|e| e.name == name)
                    .filter(|e| log.method_name(e.frames[0].0) == "BBTarget.work")
                    .map(|e| (e.frames[0].1, log.line_of(e.frames[0].0, e.frames[0].1)))
                    .collect()
            };
            assert_eq!(
                in_work("ObjectNotify"),
                vec![(bci, Some(line)); ROUNDS + 1],
                "{ctx}"
            );
            let entered: Vec<Option<u32>> =
                in_work("MonitorEntered").into_iter().map(|e| e.1).collect();
            assert_eq!(entered, vec![Some(sync_line); ROUNDS + 1], "{ctx}");
        }
    }
}
