//! Runs the `orca` binary on the hand-written fixture logs in tests/fixtures
//! (and on broken copies of them) and checks what it prints and its exit code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod json;
use json::{Json, Schema};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn orca(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .output()
        .expect("run orca")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Copies fixture `name` into a fresh temp dir, applying `edit` to its .orca
/// text, and returns the new prefix.
fn broken(
    name: &str,
    tag: &str,
    edit: impl Fn(&str, &str, &str) -> (String, String, String),
) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-cli-test-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |ext: &str| std::fs::read_to_string(fixture(&format!("{name}.{ext}"))).unwrap();
    let (c, m, o) = edit(&read("classtable"), &read("methods"), &read("orca"));
    let prefix = dir.join(name);
    std::fs::write(prefix.with_extension("classtable"), c).unwrap();
    std::fs::write(prefix.with_extension("methods"), m).unwrap();
    std::fs::write(prefix.with_extension("orca"), o).unwrap();
    prefix
}

fn replace_line(text: &str, n: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                new.to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect()
}

#[test]
fn check_accepts_valid_fixtures() {
    for name in ["pingpong", "twolocks", "ordered", "stuck"] {
        let p = fixture(name);
        let o = orca(&["check", p.to_str().unwrap()]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {out}");
        assert!(
            out.trim_end()
                .lines()
                .last()
                .unwrap()
                .contains("valid (0 errors"),
            "{out}"
        );
    }
    let o = orca(&["check", fixture("pingpong").to_str().unwrap()]);
    assert!(stdout(&o).contains(": 29 events, 4 methods, 3 classes, 2 threads: valid"));
}

#[test]
fn check_reports_missing_method_with_line() {
    let p = broken("pingpong", "missing", |c, m, o| {
        // Drop method 00000004 (used from line 15 of the .orca on).
        let m: String = m
            .lines()
            .filter(|l| !l.contains(",00000004,"))
            .map(|l| format!("{l}\n"))
            .collect();
        (c.into(), m, o.into())
    });
    let o = orca(&["check", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let file = p.with_extension("orca");
    let expected = format!(
        "{}:15: method ID 00000004 is not in the methods file",
        file.display()
    );
    assert!(out.lines().any(|l| l.starts_with(&expected)), "{out}");
    assert!(out.contains("INVALID (1 errors"), "{out}");
}

#[test]
fn check_reports_unbalanced_exit_bad_hex_and_fraction() {
    let p = broken("pingpong", "multi", |c, m, o| {
        let o = replace_line(
            o,
            12,
            "5087.200006000,MonitorExit,0000BBBB,00002222,1;00000002;00000006",
        );
        let o = replace_line(
            &o,
            21,
            "5087.200009000,SemaphoreAcquire,0000BBBB,0000333G,1;00000002;00000006",
        );
        let o = replace_line(
            &o,
            24,
            "5087.20001050,ThreadSleep,0000BBBB,1;00000002;00000006",
        );
        (c.into(), m.into(), o)
    });
    let o = orca(&["check", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let f = p.with_extension("orca").display().to_string();
    for want in [
        format!("{f}:12: unbalanced MonitorExit: thread 0000BBBB does not hold monitor 00002222"),
        format!("{f}:21: field 4 (semaphore) `0000333G`: expected 8 uppercase hex digits"),
        format!("{f}:24: field 1 (timestamp) `5087.20001050`: expected exactly 9 fraction digits"),
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&want)),
            "missing `{want}` in:\n{out}"
        );
    }
}

#[test]
fn check_torn_last_line_is_a_warning_not_an_error() {
    let p = broken("pingpong", "torn", |c, m, o| {
        // kill -9 in the middle of the last line.
        (c.into(), m.into(), o[..o.len() - 10].to_string())
    });
    let o = orca(&["check", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let f = p.with_extension("orca").display().to_string();
    assert!(
        out.contains(&format!("{f}:29: warning: torn last line")),
        "{out}"
    );
    assert!(out.contains("valid (0 errors, 1 warnings"), "{out}");
}

#[test]
fn check_missing_files_exit_2() {
    let o = orca(&["check", "/nonexistent/prefix"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/prefix.classtable"));
}

#[test]
fn report_text() {
    let o = orca(&["report", fixture("pingpong").to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("29 events, 2 threads"), "{out}");
    assert!(out.contains("worker,1 [0000BBBB]"), "{out}");
    assert!(
        out.contains("#1 monitor 00001111: 3.000 µs blocked in 1 contentions"),
        "{out}"
    );
    assert!(
        out.contains("owners at contention: main [0000AAAA] x1"),
        "{out}"
    );
    assert!(
        out.contains("blocked at com.example.PingPong.run(PingPong.java:33) x1 3.000 µs"),
        "{out}"
    );
    // main holds 1111 from 1.0 to 3.0 µs and from 6.5 to 7.0 µs (the wait releases it).
    // Percentiles are bucket upper edges (FORMAT.md, MonitorHolds): 1000 ns is in the bucket
    // 1000..=1007; p99 is capped at the max.
    assert!(
        out.contains("monitor 00001111: held 3 times, total 4.500 µs, p50 1.007 µs, p99 2.500 µs, max 2.500 µs"),
        "{out}"
    );
    assert!(
        out.contains("semaphore 00003333: 1.000 µs acquiring in 1 acquires"),
        "{out}"
    );
    assert!(
        out.contains("object 00001111: 1 waits (3.500 µs), 1 notify, 0 notifyAll"),
        "{out}"
    );
}

/// A notify counted at its site (`Notifies`) names no object: the object's line says its
/// figures are the ones written one by one, so that it does not read "0 notifyAll" beside
/// "notifyAll at ... x2 counted" (the README's example did).
#[test]
fn counted_notifies_do_not_contradict_the_objects_line() {
    let p = broken("pingpong", "counted-notifies", |c, m, o| {
        let (ends, lines): (Vec<&str>, Vec<&str>) =
            o.lines().partition(|l| l.contains(",ThreadEnded,"));
        let mut o = lines.join("\n");
        o.push_str("\n5087.200021000,Notifies,0000AAAA,notifyAll,2,1;00000001;00000010\n");
        o.push_str(&ends.join("\n"));
        o.push('\n');
        (c.into(), m.into(), o)
    });
    let o = orca(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = orca(&["report", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("notifyAll at "), "{out}");
    assert!(
        out.contains(
            "object 00001111: 1 waits (3.500 µs), 1 notify, 0 notifyAll written one by one \
             (the 2 counted at their sites above name no object)"
        ),
        "{out}"
    );
}

/// Joins and sleeps the agent counted (`Waits`, calls `join` and `sleep`) add to the threads'
/// figures as their events do, and counted thread starts (`Notifies`, call `start`) are no
/// wake-ups: the pingpong fixture with its sleep, its join and a start counted instead.
#[test]
fn report_counts_counted_joins_and_sleeps_and_no_starts() {
    let p = broken("pingpong", "counted-threads", |c, m, o| {
        let keep = |l: &&str| !l.contains(",ThreadSle") && !l.contains(",ThreadJoin");
        let (ends, lines): (Vec<&str>, Vec<&str>) = o
            .lines()
            .filter(keep)
            .partition(|l| l.contains(",ThreadEnded,"));
        let mut o = lines.join("\n");
        o.push_str(concat!(
            "\n5087.200020500,Waits,0000BBBB,sleep,00000000,1,10000,10000,1;00000002;00000006",
            "\n5087.200021000,Waits,0000AAAA,join,0000BBBB,1,12000,12000,1;00000001;00000010",
            "\n5087.200021000,Notifies,0000AAAA,start,1,1;00000001;00000010\n",
        ));
        o.push_str(&ends.join("\n"));
        o.push('\n');
        (c.into(), m.into(), o)
    });
    let o = orca(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = orca(&["report", "--all", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in {out}"))
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // thread, lifetime, blocked, waiting, sleeping, joining, semaphores
    assert!(
        row("worker,1").contains("0 ns 10.000 µs 0 ns 1.000 µs"),
        "{out}"
    );
    assert!(
        row("main [").contains("3.500 µs 0 ns 12.000 µs 0 ns"),
        "{out}"
    );
    let waits = out
        .split("\nWait/notify")
        .nth(1)
        .expect("a Wait/notify section");
    assert!(!waits.contains("start at"), "{out}");
    assert!(
        !waits.contains("join at") && !waits.contains("sleep at"),
        "{out}"
    );
}

#[test]
fn report_json_and_top() {
    let o = orca(&[
        "report",
        "--json",
        "--top",
        "1",
        fixture("pingpong").to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.starts_with('{') && out.trim_end().ends_with('}'),
        "{out}"
    );
    assert!(out.contains("\"name\":\"worker,1\""), "{out}");
    assert!(
        out.contains("\"id\":\"00001111\",\"name\":\"monitor 00001111\",\"summary_row\":false,\"folded\":false,\"blocked_ns\":3000,\"contentions\":1"),
        "{out}"
    );
    assert!(out.contains("\"holds\":{\"count\":3,\"timed\":3,\"estimated\":false,\"total_ns\":4500,\"p50_ns\":1007,\"p99_ns\":2500,\"max_ns\":2500"), "{out}");
    // --top cuts the text's tables, never the JSON: it has every monitor (issue 46).
    assert!(out.contains("\"id\":\"00002222\""), "{out}");
}

/// `orca report --json` of every fixture, with and without `--all`, is exactly what
/// docs/JSON.md describes (every field, of its type, none undocumented, none missing), with a
/// `schema_version`; and the check fails on a field added or removed (issue 46).
#[test]
fn report_json_follows_its_documented_schema() {
    let schema = Schema::documented();
    let mut seen = std::collections::BTreeSet::new();
    for name in [
        "pingpong",
        "juc",
        "demo",
        "demo-trace",
        "ordered",
        "stuck",
        "twolocks",
    ] {
        for extra in [&[][..], &["--all"][..], &["--from-events"][..]] {
            let p = fixture(name);
            let mut args = vec!["report", "--json", p.to_str().unwrap()];
            args.extend_from_slice(extra);
            let o = orca(&args);
            let out = stdout(&o);
            assert!(o.status.success(), "{name} {extra:?}: {out}");
            let j = Json::parse(&out);
            json::assert_documented(&j, &format!("{name} {extra:?}"));
            assert_eq!(j.num("schema_version"), 1, "{name}");
            collect_paths(&j, "report", &mut seen);
        }
    }
    // The check has teeth: a field more, a field less.
    let p = fixture("pingpong");
    let mut j = Json::parse(&stdout(&orca(&["report", "--json", p.to_str().unwrap()])));
    if let Json::Obj(f) = &mut j {
        f.push(("undocumented".into(), Json::Num("1".into())));
    }
    let problems = schema.problems(&j);
    assert!(
        problems == ["report.undocumented: not described in docs/JSON.md"],
        "{problems:?}"
    );
    j.remove("undocumented");
    j.remove("span_ns");
    let problems = schema.problems(&j);
    assert!(
        problems == ["report.span_ns: described in docs/JSON.md, missing"],
        "{problems:?}"
    );
    // The fixtures reach most sections (the real runs of pprof.rs and e2e.rs the rest).
    for path in [
        "report.monitors[].hold_sites[]",
        "report.juc_locks[].write_holds",
    ] {
        assert!(seen.contains(path), "{path} not reached: {seen:?}");
    }
}

/// The paths of the objects in `v`, as docs/JSON.md names them.
fn collect_paths(v: &Json, path: &str, seen: &mut std::collections::BTreeSet<String>) {
    match v {
        Json::Obj(f) => {
            seen.insert(path.to_string());
            for (k, x) in f {
                collect_paths(x, &format!("{path}.{k}"), seen);
            }
        }
        Json::Arr(items) => {
            for x in items {
                collect_paths(x, &format!("{path}[]"), seen);
            }
        }
        _ => {}
    }
}

#[test]
fn deadlocks_potential_actual_and_clean() {
    let o = orca(&["deadlocks", fixture("twolocks").to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("Potential deadlock #1: lock-order cycle of 2 monitors: 0000F001 -> 0000F002 -> 0000F001"), "{out}");
    assert!(out.contains("TwoLocks.forward(TwoLocks.java:11)"), "{out}");
    assert!(out.contains("TwoLocks.backward(TwoLocks.java:21)"), "{out}");

    let o = orca(&["deadlocks", fixture("ordered").to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("0 potential deadlocks, 0 threads blocked at the end"),
        "{out}"
    );

    let o = orca(&["deadlocks", fixture("stuck").to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(
            "thread \"t1\" [00000A01] blocked on monitor 0000F002 owned by \"t2\" [00000A02]"
        ),
        "{out}"
    );
    assert!(out.contains("wait-for cycle"), "{out}");
}

#[test]
fn flame_collapsed_stacks() {
    let o = orca(&["flame", fixture("pingpong").to_str().unwrap()]);
    assert_eq!(
        stdout(&o),
        "com.example.PingPong.run(PingPong.java:33);monitor 00001111 3000\n"
    );
    let o = orca(&[
        "flame",
        "--weight",
        "held",
        fixture("twolocks").to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(out.contains("TwoLocks.run(TwoLocks.java:30);TwoLocks.forward(TwoLocks.java:10);monitor 0000F001 300\n"), "{out}");
}

#[test]
fn timeline_is_chrome_trace_json() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-cli-test-{}-tl", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("trace.json");
    let o = orca(&[
        "timeline",
        fixture("pingpong").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
    assert!(
        text.contains("\"ph\":\"X\",\"pid\":1,\"tid\":2,\"name\":\"blocked on 00001111\""),
        "{text}"
    );
    assert_eq!(
        text.matches("\"ph\":\"b\"").count(),
        text.matches("\"ph\":\"e\"").count()
    );
    assert!(
        text.contains("\"name\":\"thread_name\",\"args\":{\"name\":\"worker,1 [0000BBBB]\"}"),
        "{text}"
    );
    assert_eq!(
        text.matches("\"ph\":\"s\"").count(),
        text.matches("\"ph\":\"f\"").count()
    );
}

#[test]
fn timeline_balances_spans_open_at_end() {
    // Cut after main's ObjectWait (line 8): main holds 1111 but waits on it.
    let p = broken("pingpong", "tlcut", |c, m, o| {
        let o: String = o.lines().take(8).map(|l| format!("{l}\n")).collect();
        (c.into(), m.into(), o)
    });
    let out = p.with_extension("json");
    let o = orca(&["timeline", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.matches("\"ph\":\"b\"").count(),
        text.matches("\"ph\":\"e\"").count(),
        "{text}"
    );
    assert!(text.contains("\"name\":\"wait on 00001111\""), "{text}");
    assert!(text.contains("\"open_at_end\":true"), "{text}");
}

/// The JSON object the page carries (`\u003c` stands for `<` there).
fn page_data(page: &str) -> &str {
    let start = page
        .find("<script id=\"orca-data\" type=\"application/json\">")
        .expect("data element")
        + "<script id=\"orca-data\" type=\"application/json\">".len();
    &page[start..start + page[start..].find("</script>").expect("end of data")]
}

#[test]
fn html_page_carries_what_report_flame_and_deadlocks_say() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-cli-test-{}-html", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("twolocks.html");
    let o = orca(&[
        "html",
        fixture("twolocks").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("orca: wrote ") && err.contains("twolocks.html ("),
        "{err}"
    );
    let page = std::fs::read_to_string(&out).unwrap();
    let data = page_data(&page);
    assert!(
        !data.contains('<'),
        "a raw < in the data could end the script element"
    );
    // deadlocks: the cycle with both stacks of each edge, and the text's summary line.
    assert!(
        data.contains("\"cycles\":[{\"monitors\":[\"0000F001\",\"0000F002\"],\"edges\":[{\"from\":\"0000F001\",\"to\":\"0000F002\""),
        "{data}"
    );
    assert!(
        data.contains("\"fromStack\":[\"TwoLocks.forward(TwoLocks.java:10)\",\"TwoLocks.run(TwoLocks.java:30)\"],\"toStack\":[\"TwoLocks.forward(TwoLocks.java:11)\",\"TwoLocks.run(TwoLocks.java:30)\"]"),
        "{data}"
    );
    // flame (held): the same stack and weight as `orca flame --weight held`.
    assert!(data.contains("\"held\":{\"frames\":["), "{data}");
    // report: both monitors in the locks table, with their hold sites.
    assert!(
        data.contains("{\"id\":\"0000F001\",\"kind\":\"monitor\""),
        "{data}"
    );
    assert!(
        data.contains("{\"id\":\"0000F002\",\"kind\":\"monitor\""),
        "{data}"
    );
    assert!(
        data.contains("\"holdSites\":[{\"site\":\"TwoLocks."),
        "{data}"
    );
    assert!(page.ends_with("</html>\n"));

    let o = orca(&[
        "html",
        dir.join("missing").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("orca: ") && err.contains("missing"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn html_page_stays_small_with_deep_distinct_stacks_and_long_names() {
    // 2,000 contentions and holds on 50 monitors, each with its own 128-frame stack of
    // methods with 150-character names: unbounded, the flame graphs and the locks table's
    // full stacks alone would be tens of MB.
    use std::fmt::Write as _;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-cli-test-{}-deep", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("deep");
    let long = "x".repeat(150);
    std::fs::write(
        prefix.with_extension("classtable"),
        "1.000000000,0000C1A5,Ldeep/Work;,Work.java\n",
    )
    .unwrap();
    let mut m = String::new();
    for i in 1..=2_000u32 {
        let _ = writeln!(
            m,
            "1.000000000,{i:08X},m{i}{long},()V,0000C1A5,1;00000000;{i:08X}"
        );
    }
    std::fs::write(prefix.with_extension("methods"), m).unwrap();
    let mut o = String::new();
    let mut ts = 2_000_000_000_000u64;
    let mut ev = |o: &mut String, rest: &str| {
        ts += 1_000;
        let _ = writeln!(o, "{}.{:09},{rest}", ts / 1_000_000_000, ts % 1_000_000_000);
    };
    let mut seed = 12345u32;
    for i in 0..2_000u32 {
        let t = 0xA00 + i % 4;
        let mon = 0xF000 + i % 50;
        let mut st = String::from("128");
        for _ in 0..128 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let _ = write!(st, ";{:08X};00000000", seed % 2_000 + 1);
        }
        let owner = 0xA00 + (i + 1) % 4;
        ev(
            &mut o,
            &format!("MonitorContendedEnter,{t:08X},{mon:08X},{owner:08X},{st}"),
        );
        ev(
            &mut o,
            &format!("MonitorContendedEntered,{t:08X},{mon:08X},{st}"),
        );
        ev(&mut o, &format!("MonitorEntered,{t:08X},{mon:08X},{st}"));
        ev(&mut o, &format!("MonitorExit,{t:08X},{mon:08X},{st}"));
    }
    std::fs::write(prefix.with_extension("orca"), o).unwrap();
    let out = dir.join("deep.html");
    let r = orca(&[
        "html",
        prefix.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.len() < 10_000_000, "{} bytes", page.len());
    let data = page_data(&page);
    // What was left out is counted, and long stacks say how much they lost.
    assert!(data.contains("more frames"), "no cut stack");
    for w in ["blocked", "held"] {
        let f = &data[data
            .find(&format!("\"{w}\":{{\"frames\":"))
            .expect("flame graph")..];
        let omitted = &f[f.find("\"omitted\":").unwrap() + 10..];
        assert!(
            !omitted.starts_with("0,"),
            "the {w} flame graph was not cut"
        );
    }
    assert!(data.contains("\"locks\":{\"total\":50,"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file of the log given where the prefix is meant (`out/run.orca`) names the run, and
/// `orca html -o` creates the folder it is asked to write into.
#[test]
fn a_log_file_names_its_prefix_and_html_creates_its_folder() {
    let p = fixture("pingpong");
    let by_prefix = stdout(&orca(&["report", p.to_str().unwrap()]));
    for ext in ["orca", "methods", "classtable"] {
        let f = format!("{}.{ext}", p.display());
        let o = orca(&["report", &f]);
        assert!(
            o.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // The same report, but for the prefix it names in its first line.
        let out = stdout(&o);
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            by_prefix.lines().skip(1).collect::<Vec<_>>(),
            "{f}"
        );
    }
    let dir = std::env::temp_dir().join(format!("orca-cli-html-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("new/sub/x.html");
    let o = orca(&["html", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every output `orca` writes (`html`, `pprof`, `timeline`, `flame -o`) is refused with one
/// line naming the path when what is there is a symbolic link (to a file or to a folder), a
/// FIFO, or (run as root) another user's file, and what is there is left as it was; a file of
/// our own is replaced (issue 47).
#[test]
fn outputs_are_never_written_through_links_fifos_or_into_others_files() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-cli-outputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let root = String::from_utf8_lossy(&Command::new("id").arg("-u").output().unwrap().stdout)
        .trim()
        == "0";
    let prefix = fixture("pingpong");
    let prefix = prefix.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["html", prefix, "-o"],
        &["pprof", prefix, "-o"],
        &["timeline", prefix, "-o"],
        &["flame", prefix, "-o"],
    ];
    for (i, cmd) in commands.iter().enumerate() {
        let mut cases = vec![
            (
                "link-to-file",
                "is a symbolic link; Orca does not write through links",
            ),
            (
                "link-to-folder",
                "is a symbolic link; Orca does not write through links",
            ),
            ("fifo", "is a FIFO, not a regular file"),
            ("folder", "is a directory"),
        ];
        if root {
            cases.push(("other-user", "belongs to user 65534, not to this user (0)"));
        }
        for (case, why) in cases {
            let out = dir.join(format!("{i}-{case}"));
            match case {
                "link-to-file" => std::os::unix::fs::symlink(&victim, &out).unwrap(),
                "link-to-folder" => std::os::unix::fs::symlink(&dir, &out).unwrap(),
                "fifo" => assert!(Command::new("mkfifo").arg(&out).status().unwrap().success()),
                "folder" => std::fs::create_dir(&out).unwrap(),
                _ => {
                    std::fs::write(&out, "theirs").unwrap();
                    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
                }
            }
            let mut args = cmd.to_vec();
            let o = out.to_str().unwrap();
            args.push(o);
            let run = orca(&args);
            let err = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(2), "{cmd:?} {case}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd:?} {case}: {err}");
            assert!(
                err.contains(&format!("{o}: {why}")),
                "{cmd:?} {case}: {err}"
            );
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
            if case == "other-user" {
                assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs");
            }
        }
        // our own file is replaced
        let own = dir.join(format!("{i}-own"));
        std::fs::write(&own, "x".repeat(1 << 20)).unwrap();
        let mut args = cmd.to_vec();
        args.push(own.to_str().unwrap());
        let run = orca(&args);
        assert!(
            run.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_ne!(std::fs::metadata(&own).unwrap().len(), 1 << 20, "{cmd:?}");
    }
    // `orca record` refuses a log path the agent would refuse, before it runs the command
    let rec = dir.join("rec");
    std::os::unix::fs::symlink(&victim, rec.with_extension("methods")).unwrap();
    let marker = dir.join("ran");
    let run = orca(&[
        "record",
        "-o",
        rec.to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "record: {err}");
    assert!(
        err.contains("rec.methods: is a symbolic link"),
        "record: {err}"
    );
    assert!(!marker.exists(), "record ran the command: {err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    std::fs::remove_dir_all(&dir).unwrap();
}
