//! `orca html` on real runs (JDK 17, instrumentation mode), loaded in a real headless
//! Chromium: the page's own self-test (`#selftest`: every section drawn and non-empty, a
//! scripted hover and click on a lock's span highlighting every thread's spans on it, the
//! locks table sorted and expanded, the flame graphs zoomed and searched, no error of any
//! kind) must pass, and a screenshot must show something.
//!
//! Needs Debian's `chromium` (scripts/ensure-tools installs it): the tests fail, naming the
//! package, when it is missing; they never skip.
//!
//! `cargo test --release -p orca-cli --test html`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use orca_tests::{agent_path, finish, jdk17, output_with_timeout, prefix_for, root, run, Run};

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "chromium is not installed: the HTML report tests load the page in Debian's `chromium` \
         package; install it (apt-get install chromium, which scripts/ensure-tools does) and run again"
    );
}

/// Headless Chromium with a fresh profile, no network chatter, then `args`.
fn browser(dir: &Path, args: &[String]) -> std::process::Output {
    let profile = dir.join(format!(
        "chromium-profile-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&profile).unwrap();
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .stdin(Stdio::null());
    let out = output_with_timeout(c, 120);
    let _ = std::fs::remove_dir_all(&profile);
    out
}

fn orca(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Writes the page of `r`, checks it is self-contained, runs its self-test in Chromium and
/// screenshots it; returns the DOM after the self-test. `flames`: the log has blocked, held
/// or waiting time, so the self-test must have clicked into a flame graph.
fn check_page(r: &Run, name: &str, flames: bool) -> String {
    assert_eq!(r.code, Some(0), "{name}: {r:?}");
    let dir = r.prefix.parent().unwrap();
    let html = dir.join(format!("{name}.html"));
    let (code, out) = orca(&[
        "html",
        r.prefix.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{name}: orca html: {out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.len() < 10_000_000, "{name}: {} bytes", page.len());
    // Self-contained: nothing to fetch (the SVG namespace is a name, not a request).
    for bad in [
        "<script src",
        "<link",
        "src=",
        "url(",
        "https://",
        "@import",
    ] {
        assert!(!page.contains(bad), "{name}: the page contains {bad:?}");
    }
    assert_eq!(
        page.matches("http://").count(),
        page.matches("http://www.w3.org/2000/svg").count(),
        "{name}: a URL in the page"
    );

    let url = format!("file://{}#selftest", html.display());
    let o = browser(dir, &["--dump-dom".into(), url]);
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    let result = dom
        .split("<pre id=\"selftest\"")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("{name}: no self-test result in the DOM:\n{dom}\n{err}"));
    assert!(
        result.contains("data-result=\"PASS\"") && !result.contains("FAIL"),
        "{name}: self-test:\n{result}\nchromium stderr:\n{err}"
    );
    // Every page here has spans of a single lock on screen: the scripted hover and click ran.
    for check in [
        "PASS axis labels never overlap at 12 zoom levels (keyboard +)",
        "PASS keyboard 0 shows the whole run",
        "PASS verdict first: ",
        "PASS hover shows lock, site and duration",
        "PASS click on a span highlights its lock",
        "PASS the highlighted lock is marked in the locks table",
        if flames {
            "PASS flame click zooms into"
        } else {
            "PASS flame graphs: no blocked, held or waiting time"
        },
    ] {
        assert!(result.contains(check), "{name}: no {check:?} in\n{result}");
    }
    // Chromium's own report of the page's console (a second, independent witness).
    for l in err.lines() {
        assert!(
            !(l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error"))),
            "{name}: console: {l}"
        );
    }

    let png = dir.join(format!("{name}.png"));
    let o = browser(
        dir,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,1000".into(),
            format!("file://{}", html.display()),
        ],
    );
    assert!(
        png.is_file(),
        "{name}: no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (colours, non_white) = picture(&png);
    assert!(
        colours >= 6 && non_white > 0.05,
        "{name}: the screenshot looks blank: {colours} colours, {:.1}% non-white",
        non_white * 100.0
    );
    dom
}

/// Distinct colours (coarsely) and the fraction of pixels that are not white.
fn picture(png: &Path) -> (usize, f64) {
    let d = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut r = d.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    assert!(bpp >= 3, "{:?}", info.color_type);
    assert_eq!((info.width, info.height), (1400, 1000));
    let mut colours = std::collections::HashSet::new();
    let mut non_white = 0usize;
    let px = &buf[..info.buffer_size()];
    for p in px.chunks(bpp) {
        colours.insert((p[0] >> 4, p[1] >> 4, p[2] >> 4));
        if p[0] < 240 || p[1] < 240 || p[2] < 240 {
            non_white += 1;
        }
    }
    (colours.len(), non_white as f64 / (px.len() / bpp) as f64)
}

/// examples/PingPong.java (the README's demo, not tests/java's) run under the agent, with
/// `holdthreshold=0`: every hold is then a `MonitorHold` event, a span on the lock that the
/// page's self-test hovers and clicks, whatever the scheduler did. (With the defaults a
/// contention shorter than `contentionthreshold` is counted, not a span, and the players
/// contended that long in some runs and not in others.)
fn run_example_ping_pong() -> Run {
    let jdk = jdk17();
    let prefix = prefix_for("html-pingpong", jdk);
    let classes = prefix.parent().unwrap().join("classes");
    let st = Command::new(jdk.javac())
        .args(["-g", "-d"])
        .arg(&classes)
        .arg(root().join("examples/PingPong.java"))
        .status()
        .unwrap();
    assert!(st.success(), "javac examples/PingPong.java");
    let mut c = Command::new(jdk.java());
    c.arg(format!(
        "-agentpath:{}={},holdthreshold=0",
        agent_path().display(),
        prefix.display()
    ))
    .arg("-cp")
    .arg(&classes)
    .arg("PingPong")
    .stdin(Stdio::null());
    finish(prefix, output_with_timeout(c, 120))
}

#[test]
fn ping_pong_page_works_in_chromium() {
    let r = run_example_ping_pong();
    let dom = check_page(&r, "pingpong", true);
    // The referee's holds and the players' contention are in the locks table.
    assert!(dom.contains("<tr class=\"lock"), "{dom}");
    assert!(dom.contains("PingPong.java"), "{dom}");
    // The table's notify figures are the calls written one by one, and say so beside the
    // notifyAlls counted at their sites (the page read "0 notify" where the report counted
    // x200), with how many were counted.
    let (_, json) = orca(&["report", "--json", r.prefix.to_str().unwrap()]);
    let counted = json
        .split("\"call\":\"notifyAll\",\"site\":")
        .nth(1)
        .and_then(|s| s.split("\"count\":").nth(1))
        .and_then(|s| s.split('}').next())
        .unwrap_or_else(|| panic!("no counted notifyAll in {json}"));
    assert!(
        dom.contains(&format!(
            " notifyAll written one by one (the {counted} counted at their sites name no object)"
        )),
        "{dom}"
    );
}

#[test]
fn lock_order_cycle_page_shows_the_potential_deadlock() {
    let r = run(
        "html-lockorder",
        jdk17(),
        // The complete trace: every hold is a span in the lanes.
        "mode=instrument,trace=all",
        "LockOrder",
        &["cycle"],
    );
    let dom = check_page(&r, "lockorder", true);
    let dl = dom
        .split("<div id=\"dl\">")
        .nth(1)
        .expect("deadlocks section");
    assert!(
        dl.contains("Potential deadlock #1: lock-order cycle of 2 monitors"),
        "{dl}"
    );
    assert!(
        dl.contains("LockOrder.aThenB(LockOrder.java:")
            && dl.contains("LockOrder.bThenA(LockOrder.java:"),
        "{dl}"
    );
}

#[test]
fn default_recording_draws_long_holds_in_the_lanes() {
    // The agent's default writes summaries, not every hold: its 5 holds of 50 ms are
    // MonitorHold events, the lanes' only holds (the self-test clicks one of them).
    let r = run("html-holdtimes", jdk17(), "", "HoldTimes", &[]);
    let orca = std::fs::read_to_string(format!("{}.orca", r.prefix.display())).unwrap();
    assert!(
        !orca.contains(",MonitorEntered,"),
        "not the default recording"
    );
    assert_eq!(orca.matches(",MonitorHold,").count(), 5);
    check_page(&r, "holdtimes", true);
}

#[test]
fn contention_page_works_in_chromium() {
    let r = run(
        "html-contention",
        jdk17(),
        "mode=instrument",
        "Contention",
        &[],
    );
    let dom = check_page(&r, "contention", true);
    assert!(
        dom.contains("Contention.lambda$main$0(Contention.java:"),
        "{dom}"
    );
}

mod json;
mod synthetic;

/// JDK-internal holds are folded out of the lanes by default, as `orca report` folds
/// JDK-internal locks (tests/java/PoolHolds.java, the default recording: a one-thread pool's
/// worker holds its own lock in `ThreadPoolExecutor.runWorker` around each of two tasks, and
/// each task holds a monitor of its own for 30 ms). The worker's lane draws the program's two
/// holds; the worker lock's holds (at least two) are in its folded row, counted in the page
/// (`jdkFolded`), and the self-test ticks the toggle: every folded span drawn, then folded
/// again.
#[test]
fn jdk_internal_holds_are_folded_in_the_lanes_with_a_toggle() {
    let r = run("html-poolholds", jdk17(), "", "PoolHolds", &[]);
    let dom = check_page(&r, "poolholds", true);
    assert!(
        dom.contains("PASS JDK-internal holds folded by default: "),
        "{dom}"
    );
    let page = std::fs::read_to_string(r.prefix.with_file_name("poolholds.html")).unwrap();
    let data = page
        .split("<script id=\"orca-data\" type=\"application/json\">")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .expect("the page's data");
    let d = json::Json::parse(data);
    let Some(json::Json::Obj(names)) = d.get("names") else {
        panic!("no names in {data}");
    };
    let worker = names
        .iter()
        .find(|(_, n)| *n == json::Json::Str("pool-1-thread-1".into()))
        .map(|(h, _)| h.clone())
        .unwrap_or_else(|| panic!("no pool worker in {names:?}"));
    let Some(json::Json::Arr(lanes)) = d.get("lanes") else {
        panic!("no lanes");
    };
    let lane = lanes
        .iter()
        .find(|l| l.get("id") == Some(&json::Json::Str(worker.clone())))
        .expect("the worker's lane");
    let original = |row: &str| lane.get(row).unwrap().num("original");
    assert_eq!(original("holds"), 2, "the program's holds: {lane:?}");
    assert!(original("jdkHolds") >= 2, "the worker lock's: {lane:?}");
    let folded = d.get("jdkFolded").expect("jdkFolded");
    let all: u64 = lanes
        .iter()
        .map(|l| l.get("jdkHolds").unwrap().num("original"))
        .sum();
    assert_eq!(folded.num("holds"), all);
    assert!(folded.num("locks") >= 1, "{folded:?}");
    // The program's holds, drawn by default, are at its own site.
    let Some(json::Json::Arr(sites)) = d.get("sites") else {
        panic!("no sites");
    };
    let line = orca_tests::marker_line("PoolHolds.java", "held");
    assert!(
        sites
            .iter()
            .any(|s| *s
                == json::Json::Str(format!("PoolHolds.lambda$main$0(PoolHolds.java:{line})"))),
        "{sites:?}"
    );
}

#[test]
fn large_synthetic_log_page_merges_spans_and_works_in_chromium() {
    let dir = orca_tests::work_dir().join("runs/html-synthetic");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("run");
    let (_, events) = synthetic::generate(&prefix, synthetic::Until::Events(1_000_000));
    let r = Run {
        prefix,
        code: Some(0),
        stdout: String::new(),
        stderr: String::new(),
    };
    let dom = check_page(&r, "synthetic", true);
    assert!(
        dom.contains(&format!("PASS data: {events} events")),
        "{dom}"
    );
    // More spans than the page draws: the limits say so.
    assert!(dom.contains(" spans merged into "), "{dom}");
    let _ = std::fs::remove_file(dir.join("run.orca"));
}

#[test]
fn deadlocked_fixture_page_shows_the_cycle_and_the_threads_blocked_at_the_end() {
    let dir = orca_tests::work_dir().join("runs/html-stuck");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for ext in ["orca", "methods", "classtable"] {
        std::fs::copy(
            fixtures.join(format!("stuck.{ext}")),
            dir.join(format!("run.{ext}")),
        )
        .unwrap();
    }
    let r = Run {
        prefix: dir.join("run"),
        code: Some(0),
        stdout: String::new(),
        stderr: String::new(),
    };
    // The contentions still open at the end are blocked time, in the flame graph too.
    let dom = check_page(&r, "stuck", true);
    assert!(
        dom.contains("PASS flame graphs with data: blocked"),
        "no blocked flame graph in\n{dom}"
    );
    let vd = dom
        .split("<div id=\"vd\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("verdict section");
    assert!(
        vd.contains("DEADLOCK: 2 threads blocked on each other for good"),
        "no deadlock in the verdict:\n{vd}"
    );
    let dl = dom
        .split("<div id=\"dl\">")
        .nth(1)
        .expect("deadlocks section");
    for want in [
        "Potential deadlock #1: lock-order cycle of 2 monitors",
        "TwoLocks.forward(TwoLocks.java:10)",
        "TwoLocks.backward(TwoLocks.java:21)",
        "Threads blocked on a monitor at the end of the log",
        "wait-for cycle: \"t1\" [00000A01] → \"t2\" [00000A02] → \"t1\" [00000A01]",
        "2 lock-order edges, 1 potential deadlocks, 2 threads blocked at the end",
    ] {
        assert!(dl.contains(want), "no {want:?} in\n{dl}");
    }
}

/// j.u.c. locks on the page: the hand-written complete trace `juc` (cli/tests/fixtures) and
/// its default mode's log (j.u.c. summaries, tests/src/summary.rs). Both pages pass their
/// self-test; the j.u.c. lock is a row of the locks table (holds from the events or from the
/// LockHolds lines: the same figures), its holds are in the lanes (every hold from the
/// events, the LockHold of the long one from the summaries), awaits are waiting spans, the
/// contended acquisition a blocked span, and the cross-kind cycle is in the deadlocks.
#[test]
fn juc_locks_are_in_the_table_the_lanes_and_the_deadlocks() {
    let dir = orca_tests::work_dir().join("runs/html-juc");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let trace = std::fs::read_to_string(fixtures.join("juc.orca")).unwrap();
    let summary = orca_tests::summary::Summarize {
        interval_ns: 1_000_000_000,
        threshold_ns: 1_000_000,
    }
    .run(&trace)
    .summary;
    let mut data = Vec::new();
    for (name, text) in [("juc-full", trace.as_str()), ("juc-summary", &summary)] {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("run.orca"), text).unwrap();
        for ext in ["methods", "classtable"] {
            std::fs::copy(
                fixtures.join(format!("juc.{ext}")),
                sub.join(format!("run.{ext}")),
            )
            .unwrap();
        }
        let r = Run {
            prefix: sub.join("run"),
            code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
        };
        let dom = check_page(&r, name, true);
        let dl = dom
            .split("<div id=\"dl\">")
            .nth(1)
            .expect("deadlocks section");
        for want in [
            "Potential deadlock #1: lock-order cycle of 2 locks",
            "holds j.u.c. lock 00002222",
            "then takes monitor 00001111",
            "holds monitor 00001111",
            "then takes j.u.c. lock 00002222",
        ] {
            assert!(dl.contains(want), "{name}: no {want:?} in\n{dl}");
        }
        assert!(
            dom.contains("j.u.c. lock 00002222"),
            "{name}: no j.u.c. row"
        );
        let page = std::fs::read_to_string(sub.join(format!("{name}.html"))).unwrap();
        let json = page
            .split("\"locks\":{\"total\":")
            .nth(1)
            .unwrap()
            .split("\"flames\":")
            .next()
            .unwrap()
            .to_string();
        data.push((name, page, json));
    }
    // The locks table's j.u.c. row: the same holds, contention and awaits from both logs.
    let row = |json: &str| {
        let r = json
            .split("{\"id\":\"00002222\",\"kind\":\"j.u.c. lock\",")
            .nth(1)
            .unwrap_or_else(|| panic!("no j.u.c. row in {json}"));
        r.split(",\"owners\":").next().unwrap().to_string()
    };
    assert_eq!(row(&data[0].2), row(&data[1].2));
    assert!(
        row(&data[0].2).contains("\"contentions\":1,")
            && row(&data[0].2).contains("\"holds\":3,")
            && row(&data[0].2).contains("\"openHolds\":0,"),
        "{}",
        row(&data[0].2)
    );
    // Holds drawn in each thread's lane: from the events, one's hold of 2222 in two parts
    // (the await between) and its hold of 1111, two's three holds; from the summaries, the
    // LockHold only (short holds are in the LockHolds lines, not in the lanes).
    let holds_drawn = |page: &str, thread: &str| -> u64 {
        let lane = page
            .split(&format!("{{\"id\":\"{thread}\",\"start\":"))
            .nth(1)
            .unwrap_or_else(|| panic!("no lane {thread}"));
        let holds = lane.split("\"holds\":{").nth(1).unwrap();
        holds
            .split("\"original\":")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(holds_drawn(&data[0].1, "0000000A"), 3);
    assert_eq!(holds_drawn(&data[0].1, "0000000B"), 3);
    assert_eq!(holds_drawn(&data[1].1, "0000000A"), 1);
    assert_eq!(holds_drawn(&data[1].1, "0000000B"), 0);
    for (name, page, _) in &data {
        assert!(page.contains("\"juc\":[\"00002222\"]"), "{name}");
    }
}

/// The recorded j.u.c. traces (cli/tests/fixtures/traces: JucLocks, MixedDeadlock) and their
/// default mode's logs: every page passes its self-test, with the j.u.c. locks in its table.
#[test]
fn recorded_juc_trace_pages_work_in_chromium() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces");
    for name in ["juclocks", "mixed"] {
        let trace = std::fs::read_to_string(traces.join(format!("{name}.orca"))).unwrap();
        let summary = orca_tests::summary::Summarize {
            interval_ns: 1_000_000_000,
            threshold_ns: 1_000_000,
        }
        .run(&trace)
        .summary;
        for (tag, text) in [("full", trace.as_str()), ("summary", &summary)] {
            let page = format!("{name}-{tag}");
            let dir = orca_tests::work_dir().join("runs/html-juc").join(&page);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("run.orca"), text).unwrap();
            for ext in ["methods", "classtable"] {
                std::fs::copy(
                    traces.join(format!("{name}.{ext}")),
                    dir.join(format!("run.{ext}")),
                )
                .unwrap();
            }
            let r = Run {
                prefix: dir.join("run"),
                code: Some(0),
                stdout: String::new(),
                stderr: String::new(),
            };
            // MixedDeadlock's threads block for good: their time blocked up to the end of
            // the log is in the blocked flame graph.
            let dom = check_page(&r, &page, true);
            if name == "mixed" {
                assert!(
                    dom.contains("PASS flame graphs with data: blocked"),
                    "{page}: no blocked flame graph"
                );
            }
            assert!(
                dom.contains("j.u.c. lock "),
                "{page}: no j.u.c. lock in the page"
            );
        }
    }
}

/// Under the defaults (tracking=sampled) a busy thread's holds are mostly left unidentified,
/// counted at their sites in the row of other monitors (`00000000`): the locks table shows
/// that row as `orca report` does, one row per site named as the report's text names it
/// (`Object at ProdCons.lambda$main$1(ProdCons.java:71)`), never as one lock, and the page's
/// self-test passes with those rows (issue 46).
#[test]
fn unidentified_holds_are_rows_per_site_in_the_locks_table() {
    let r = run(
        "html-unidentified",
        jdk17(),
        "",
        "ProdCons",
        &["4", "20000", "4"],
    );
    let orca_log = std::fs::read_to_string(format!("{}.orca", r.prefix.display())).unwrap();
    assert!(
        orca_log.lines().any(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f.len() > 3
                && matches!(f[1], "MonitorHolds" | "MonitorHoldsUntimed")
                && f[3] == "00000000"
        }),
        "no row of other monitors in the log"
    );
    let dom = check_page(&r, "unidentified", true);
    let (code, text) = orca(&["report", r.prefix.to_str().unwrap(), "--all"]);
    assert_eq!(code, Some(0), "{text}");
    // The report's names of the row at its sites: `      Object at ...: held 41998 times, ...`.
    let names: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  holds of monitors without a row of their own"))
        .skip(1)
        .take_while(|l| l.starts_with("      "))
        .filter_map(|l| l.trim().split_once(": held ").map(|(n, _)| n))
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("Object at ProdCons.")),
        "{names:?}\n{text}"
    );
    for n in &names {
        assert!(
            dom.contains(&format!(">{n}</td>")),
            "no row {n:?} in the locks table"
        );
    }
    assert!(
        dom.contains("one row per site"),
        "the table does not say so"
    );
    for phantom in ["summarised together", ">monitor 00000000<"] {
        assert!(!dom.contains(phantom), "the page says {phantom:?}");
    }
}
