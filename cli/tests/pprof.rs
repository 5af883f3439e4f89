//! `orca pprof` and `orca record --pprof` read by a real consumer: `go tool pprof` (Debian's
//! `golang-go`, which scripts/ensure-tools installs) must read every profile written from real
//! runs (tests/java, instrumentation mode, every JDK `orca_tests::jdks()` finds), with
//! `-raw` and `-top`, and its totals per line, per function, per lock and per thread must be
//! `orca report --json`'s figures for the same log: exactly, counts and nanoseconds alike
//! (`-unit=ns` prints whole nanoseconds). A default (summarised) recording and a complete
//! trace of the same deterministic program give the same hold counts per line; logs with
//! nothing of a kind give empty profiles that the tool accepts.
//!
//! The tests fail, naming the package, when `go` is missing; they never skip.
//!
//! `cargo test --release -p orca-cli --test pprof`

mod json;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use json::Json;
use orca_tests::{agent_path, jdks, output_with_timeout, prefix_for, test_classes, Jdk};

/// The labels `orca pprof` writes.
const LABELS: [&str; 6] = ["thread", "thread id", "lock", "lock kind", "owner", "mode"];

const KINDS: [&str; 4] = ["blocked", "held", "waited", "semaphores"];

/// The leaf frames `orca pprof` puts under each stack: `-hide` them and the flat figures
/// are the Java frames'.
const LEAVES: &str = "^(monitor|lock|condition|park|semaphore)( |$)";

fn go() -> PathBuf {
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let p = Path::new(dir).join("go");
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "go is not installed: the pprof tests read the profiles with `go tool pprof` from \
         Debian's `golang-go` package; install it (apt-get install golang-go, which \
         scripts/ensure-tools does) and run again"
    );
}

/// `go tool pprof ARGS`: its standard output; fails the test when it does not succeed.
fn pprof(args: &[&str]) -> String {
    let mut c = Command::new(go());
    c.args(["tool", "pprof"]).args(args).stdin(Stdio::null());
    // Its own cache and home, so that nothing outside the work directory is touched.
    let home = orca_tests::work_dir().join("go-home");
    std::fs::create_dir_all(&home).unwrap();
    c.env("HOME", &home).env("PPROF_TMPDIR", &home);
    let o = output_with_timeout(c, 120);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "go tool pprof {args:?}: {:?}\n{out}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Runs `orca ARGS`: (exit status, stdout + stderr).
fn orca(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .env("ORCA_AGENT", agent_path())
        .stdin(Stdio::null())
        .output()
        .expect("run orca");
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// One sample of `go tool pprof -raw`: its values, its stack (leaf first: the lock, then the
/// Java frames as `Class.method:line`) and its labels.
#[derive(Debug)]
struct Sample {
    values: [u64; 2],
    stack: Vec<String>,
    labels: BTreeMap<String, String>,
}

/// A profile as `go tool pprof -raw` prints it: the sample types and the samples.
#[derive(Debug)]
struct Raw {
    text: String,
    types: String,
    samples: Vec<Sample>,
}

fn raw(file: &Path) -> Raw {
    let text = pprof(&["-raw", file.to_str().unwrap()]);
    let mut lines = text.lines().skip_while(|l| *l != "Samples:").skip(1);
    let types = lines.next().expect("sample types").trim().to_string();
    // (values, location ids, labels)
    type Parsed = (Vec<u64>, Vec<u64>, BTreeMap<String, String>);
    let mut samples: Vec<Parsed> = Vec::new();
    for l in lines.by_ref() {
        if l == "Locations" {
            break;
        }
        if let Some((vals, locs)) = l.split_once(": ").filter(|_| !l.contains(":[")) {
            let v: Vec<u64> = vals
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let ids = locs
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            samples.push((v, ids, BTreeMap::new()));
        } else {
            // `key:[value] key:[value]`; values may hold spaces and brackets (`name [ID]`):
            // a value ends at the `]` that the end or the next known key follows.
            let labels = &mut samples.last_mut().expect("labels after a sample").2;
            let mut rest = l.trim();
            while let Some((k, v)) = rest.split_once(":[") {
                let end = v
                    .match_indices(']')
                    .map(|(i, _)| i)
                    .find(|&i| {
                        let after = &v[i + 1..];
                        after.is_empty()
                            || LABELS.iter().any(|k| after.starts_with(&format!(" {k}:[")))
                    })
                    .unwrap_or_else(|| panic!("labels {l:?}"));
                labels.insert(k.trim().to_string(), v[..end].to_string());
                rest = &v[end + 1..];
            }
        }
    }
    // `  7: 0x0 M=1 Juc.two Juc.java:21 s=0(Juc.two()V)`, `  1: 0x0 M=1 lock 00002222 :0 s=0`
    let mut locations: BTreeMap<u64, String> = BTreeMap::new();
    for l in lines.take_while(|l| *l != "Mappings") {
        let (id, rest) = l.trim().split_once(": ").unwrap();
        let rest = rest.split_once(" M=1 ").unwrap().1;
        let rest = &rest[..rest.rfind(" s=").unwrap()];
        let (name_file, line) = rest.rsplit_once(':').unwrap();
        let name = name_file.rsplit_once(' ').unwrap().0;
        let name = if line == "0" && name.contains(' ') {
            name.to_string()
        } else {
            format!("{name}:{line}")
        };
        locations.insert(id.parse().unwrap(), name);
    }
    let samples = samples
        .into_iter()
        .map(|(v, ids, labels)| Sample {
            values: [v[0], v[1]],
            stack: ids.iter().map(|i| locations[i].clone()).collect(),
            labels,
        })
        .collect();
    Raw {
        text,
        types,
        samples,
    }
}

/// (count, ns) per key.
type Totals = BTreeMap<String, (u64, u64)>;

fn add(t: &mut Totals, k: String, c: u64, ns: u64) {
    if c == 0 && ns == 0 {
        return;
    }
    let e = t.entry(k).or_default();
    e.0 += c;
    e.1 += ns;
}

impl Raw {
    /// Per top Java frame (`Class.method:line`, `(no stack)`).
    fn per_line(&self) -> Totals {
        let mut t = Totals::new();
        for s in &self.samples {
            let k = s.stack.get(1).cloned().unwrap_or("(no stack)".into());
            add(&mut t, k, s.values[0], s.values[1]);
        }
        t
    }
    /// Per leaf frame, with `f` applied to its name.
    fn per_leaf(&self, f: impl Fn(&str) -> Option<String>) -> Totals {
        let mut t = Totals::new();
        for s in &self.samples {
            if let Some(k) = f(&s.stack[0]) {
                add(&mut t, k, s.values[0], s.values[1]);
            }
        }
        t
    }
}

/// A report site, `Class.method(File.java:12)`, as the raw profile names it:
/// `Class.method:12` (`:0` without a line).
fn site_key(site: &str) -> String {
    if site == "(no stack)" {
        return site.into();
    }
    let (name, src) = site.split_once('(').unwrap();
    let line = src
        .trim_end_matches(')')
        .rsplit_once(':')
        .map_or("0", |(_, l)| l);
    format!("{name}:{line}")
}

fn arr<'a>(j: &'a Json, key: &str) -> &'a [Json] {
    match j.get(key) {
        Some(Json::Arr(a)) => a,
        v => panic!("{key}: {v:?}"),
    }
}

fn str_of<'a>(j: &'a Json, key: &str) -> &'a str {
    match j.get(key) {
        Some(Json::Str(s)) => s,
        v => panic!("{key}: {v:?}"),
    }
}

fn sites(t: &mut Totals, items: &[Json], key: &str) {
    for i in items {
        for s in arr(i, key) {
            add(t, site_key(str_of(s, "site")), s.num("count"), s.num("ns"));
        }
    }
}

/// What `orca report --json` says a profile of `kind` must hold: (per line, per leaf, per
/// thread id for the monitor part); `None` where the report has no such figure.
fn expected(report: &Json, kind: &str) -> (Option<Totals>, Totals) {
    let (mons, locks, sems) = (
        arr(report, "monitors"),
        arr(report, "juc_locks"),
        arr(report, "semaphores"),
    );
    let mut lines = Totals::new();
    let mut leaves = Totals::new();
    let id = |j: &Json| str_of(j, "id").to_string();
    // The row of other monitors (locks), 00000000, is named at its sites as the report's text
    // names it (`hold_sites[].name`, `sites[].name`), never one lock (issue 46).
    let summary = |j: &Json| j.get("summary_row") == Some(&Json::Bool(true));
    let per_site = |leaves: &mut Totals, what: &str, j: &Json, key: &str| {
        for s in arr(j, key) {
            let k = format!("{what} {}", str_of(s, "name"));
            add(leaves, k, s.num("count"), s.num("ns"));
        }
    };
    match kind {
        "blocked" => {
            sites(&mut lines, mons, "sites");
            sites(&mut lines, locks, "sites");
            for m in mons {
                // the monitors' contentions of that row are the text's row `other monitors`
                let k = match summary(m) {
                    true => format!("monitor {}", str_of(m, "name")),
                    false => format!("monitor {}", id(m)),
                };
                add(&mut leaves, k, m.num("contentions"), m.num("blocked_ns"));
            }
            for l in locks {
                if summary(l) {
                    per_site(&mut leaves, "lock", l, "sites");
                    continue;
                }
                let k = format!("lock {}", id(l));
                add(&mut leaves, k, l.num("contentions"), l.num("blocked_ns"));
            }
        }
        "held" => {
            sites(&mut lines, mons, "hold_sites");
            sites(&mut lines, locks, "hold_sites");
            for m in mons {
                if summary(m) {
                    per_site(&mut leaves, "monitor", m, "hold_sites");
                    continue;
                }
                let h = m.get("holds").unwrap();
                let k = format!("monitor {}", id(m));
                add(&mut leaves, k, h.num("count"), h.num("total_ns"));
            }
            for l in locks {
                if summary(l) {
                    per_site(&mut leaves, "lock", l, "hold_sites");
                    continue;
                }
                for mode in ["write_holds", "read_holds"] {
                    if let Some(h @ Json::Obj(_)) = l.get(mode) {
                        let k = format!("lock {}", id(l));
                        add(&mut leaves, k, h.num("count"), h.num("total_ns"));
                    }
                }
            }
        }
        "waited" => {
            for w in arr(report, "wait_notify") {
                let k = format!("monitor {}", id(w));
                add(&mut leaves, k, w.num("waits"), w.num("waited_ns"));
            }
            for l in locks {
                let k = format!("lock {}", id(l));
                add(&mut leaves, k, l.num("awaits"), l.num("awaited_ns"));
            }
            for p in arr(report, "parks") {
                let k = match str_of(p, "blocker") {
                    "00000000" => "park".to_string(),
                    b => format!("park {b}"),
                };
                add(&mut leaves, k, p.num("parks"), p.num("parked_ns"));
            }
            return (None, leaves);
        }
        "semaphores" => {
            sites(&mut lines, sems, "sites");
            for s in sems {
                let k = format!("semaphore {}", id(s));
                add(&mut leaves, k, s.num("acquires"), s.num("acquiring_ns"));
            }
        }
        _ => unreachable!(),
    }
    (Some(lines), leaves)
}

/// The leaf as the report keys it: a condition's figures are its lock's.
fn report_leaf(leaf: &str) -> Option<String> {
    Some(unclassed(match leaf.split_once(" of ") {
        Some((_, lock)) => lock,
        None => leaf,
    }))
}

/// Whether `log` has a `Waits` line of one of `calls`.
fn waits_of(log: &str, calls: &[&str]) -> bool {
    log.lines().any(|l| {
        let mut f = l.split(',').skip(1);
        f.next() == Some("Waits") && f.nth(1).is_some_and(|c| calls.contains(&c))
    })
}

/// A leaf frame as the report keys its object: `monitor Object@077DC686` (the class, where
/// the log names it, as `orca flame` and `orca pprof` print it) is `monitor 077DC686`.
fn unclassed(leaf: &str) -> String {
    match leaf.split_once(' ') {
        Some((kind, obj)) => match obj.rsplit_once('@') {
            Some((_, id)) => format!("{kind} {id}"),
            None => leaf.to_string(),
        },
        None => leaf.to_string(),
    }
}

/// `go tool pprof -top` with the leaves hidden: flat figure per node (functions, or lines
/// with `-lines`), for the sample type `index`, in whole units.
fn top(file: &Path, index: usize, lines: bool) -> BTreeMap<String, u64> {
    let f = file.to_str().unwrap();
    let si = format!("-sample_index={index}");
    let hide = format!("-hide={LEAVES}");
    let mut args = vec![
        "-top",
        "-nodefraction=0",
        "-nodecount=1000000",
        "-unit=ns",
        &si,
        &hide,
    ];
    if lines {
        args.push("-lines");
    }
    args.push(f);
    let out = pprof(&args);
    let mut m = BTreeMap::new();
    for l in out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
    {
        let w: Vec<&str> = l.split_whitespace().collect();
        // A sample without a Java frame keeps its leaf: not a line of the report's.
        if ["monitor", "lock", "condition", "park", "semaphore"].contains(&w[5]) {
            continue;
        }
        let flat: u64 = w[0].trim_end_matches("ns").parse().unwrap_or_else(|_| {
            panic!("{l:?} in\n{out}");
        });
        // `Class.method` or `Class.method File.java:12`.
        let name = match w.get(6) {
            Some(fl) if lines => format!("{}:{}", w[5], fl.rsplit_once(':').unwrap().1),
            _ => w[5].to_string(),
        };
        if flat > 0 {
            *m.entry(name).or_default() += flat;
        }
    }
    m
}

/// Checks the profile `file` of `kind` against `report` with `go tool pprof -raw` and `-top`.
fn check_profile(file: &Path, kind: &str, report: &Json, ctx: &str) -> Raw {
    let r = raw(file);
    let ctx = format!("{ctx}, {kind} ({}):\n{}", file.display(), r.text);
    let types = match kind {
        "blocked" => "contentions/count delay/nanoseconds[dflt]",
        "held" => "holds/count held/nanoseconds[dflt]",
        "waited" => "waits/count waiting/nanoseconds[dflt]",
        _ => "acquires/count acquiring/nanoseconds[dflt]",
    };
    assert_eq!(r.types, types, "{ctx}");
    // every figure true, or labelled an estimate: held times of holds that were not timed
    // (holdtiming=sampled) are estimates, and the profile says so
    let estimated = kind == "held" && r.text.contains("hold times are estimates");
    assert!(
        estimated
            || r.text
                .contains("every event recorded: values are the true totals")
            || r.text.contains(
                "values are the true totals; those the agent counted instead of writing them"
            ),
        "{ctx}"
    );
    for s in &r.samples {
        for l in ["thread", "thread id", "lock", "lock kind"] {
            assert!(s.labels.contains_key(l), "{l} in {s:?}: {ctx}");
        }
        assert_eq!(s.labels["lock"], s.stack[0], "{ctx}");
    }
    let (lines, leaves) = expected(report, kind);
    assert_eq!(r.per_leaf(report_leaf), leaves, "per lock: {ctx}");
    if let Some(lines) = lines {
        assert_eq!(r.per_line(), lines, "per line: {ctx}");
        // -top reads the same, per line and per function, counts and nanoseconds.
        let mut functions: BTreeMap<String, [u64; 2]> = BTreeMap::new();
        for (k, (c, ns)) in &lines {
            if k != "(no stack)" {
                let f = functions
                    .entry(k.rsplit_once(':').unwrap().0.to_string())
                    .or_default();
                f[0] += c;
                f[1] += ns;
            }
        }
        for index in 0..2 {
            let want: BTreeMap<String, u64> = lines
                .iter()
                .filter(|(k, _)| *k != "(no stack)")
                .map(|(k, v)| (k.clone(), [v.0, v.1][index]))
                .filter(|(_, v)| *v > 0)
                .collect();
            let got = top(file, index, true);
            assert_eq!(got, want, "-top -lines, sample {index}: {ctx}");
            let want: BTreeMap<String, u64> = functions
                .iter()
                .map(|(k, v)| (k.clone(), v[index]))
                .filter(|(_, v)| *v > 0)
                .collect();
            let got = top(file, index, false);
            assert_eq!(got, want, "-top, sample {index}: {ctx}");
        }
    }
    // Per thread, the monitor part of what the report's thread table has.
    let thread_figure = match kind {
        "blocked" => Some(("blocked", "blocked_ns", "monitor ")),
        "waited" => Some(("waits", "waiting_ns", "monitor ")),
        "semaphores" => Some(("acquires", "acquiring_ns", "semaphore ")),
        _ => None,
    };
    if let Some((count, ns, leaf)) = thread_figure {
        let mut want = Totals::new();
        for t in arr(report, "threads") {
            add(&mut want, id(t), t.num(count), t.num(ns));
        }
        let mut got = Totals::new();
        for s in r.samples.iter().filter(|s| s.stack[0].starts_with(leaf)) {
            add(
                &mut got,
                s.labels["thread id"].clone(),
                s.values[0],
                s.values[1],
            );
        }
        assert_eq!(got, want, "per thread: {ctx}");
    }
    r
}

fn id(j: &Json) -> String {
    str_of(j, "id").to_string()
}

/// nanoseconds per leaf of `orca flame --weight WEIGHT`, the leaf keyed as the report keys it
/// (`monitor Object@077DC686` is `monitor 077DC686`).
fn flame_leaves(prefix: &str, weight: &str) -> BTreeMap<String, u64> {
    let (code, out) = orca(&["flame", "--weight", weight, prefix]);
    assert_eq!(code, Some(0), "{out}");
    let mut m = BTreeMap::new();
    for l in out.lines() {
        let (stack, ns) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{l:?}"));
        let key = unclassed(stack.rsplit(';').next().unwrap());
        *m.entry(key).or_default() += ns.parse::<u64>().unwrap();
    }
    m
}

/// The page's data (the JSON `orca html` embeds).
fn page(prefix: &str, dir: &Path) -> Json {
    let file = dir.join("page.html");
    let (code, out) = orca(&["html", prefix, "-o", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    let html = std::fs::read_to_string(&file).unwrap();
    let start = "id=\"orca-data\" type=\"application/json\">";
    let data = html.split(start).nth(1).expect("the page's data");
    Json::parse(&data[..data.find("</script>").expect("its end")])
}

/// Every output of one log gives each lock, each thread and each kind of time the report's
/// figure (issue 46: outputs folded over one pairing agree by construction, and this keeps
/// them so): `orca flame`'s weights per leaf, and the page's locks table and thread states.
/// The profiles are checked against the report by [`check_profile`].
fn check_flame_and_page(prefix: &str, dir: &Path, report: &Json, ctx: &str) {
    let ns = |t: Totals| -> BTreeMap<String, u64> {
        t.into_iter()
            .filter(|(_, (_, ns))| *ns > 0)
            .map(|(k, (_, ns))| (k, ns))
            .collect()
    };
    let nonzero = |m: BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.into_iter().filter(|(_, v)| *v > 0).collect()
    };
    for (weight, kind) in [("blocked", "blocked"), ("held", "held")] {
        let want = ns(expected(report, kind).1);
        let got = nonzero(flame_leaves(prefix, weight));
        assert_eq!(got, want, "{ctx}: flame --weight {weight} per lock");
    }
    // Waiting: waits per monitor and parks per blocker as the report keys them; awaits by
    // condition in the graph and by lock in the report, so their sums; acquires per semaphore.
    let mut want = ns(expected(report, "waited").1);
    let mut got = nonzero(flame_leaves(prefix, "waiting"));
    let conditions: u64 = got
        .iter()
        .filter(|(k, _)| k.starts_with("condition "))
        .map(|(_, v)| v)
        .sum();
    got.retain(|k, _| !k.starts_with("condition "));
    let awaits: u64 = want
        .iter()
        .filter(|(k, _)| k.starts_with("lock "))
        .map(|(_, v)| v)
        .sum();
    want.retain(|k, _| !k.starts_with("lock "));
    want.extend(ns(expected(report, "semaphores").1));
    assert_eq!(got, want, "{ctx}: flame --weight waiting per object");
    assert_eq!(conditions, awaits, "{ctx}: flame --weight waiting, awaits");

    let data = page(prefix, dir);
    let rows = arr(data.get("locks").expect("locks"), "rows");
    let mut locks: BTreeMap<String, &Json> = BTreeMap::new();
    for l in arr(report, "monitors")
        .iter()
        .chain(arr(report, "juc_locks"))
    {
        locks.insert(id(l), l);
    }
    // The row of other monitors (locks): the page's rows of it, per site and named as the
    // report names it, are the report's sites of it (issue 46), and the monitors' contentions
    // of it one row `other monitors`.
    type Figures = BTreeMap<(String, String), [u64; 4]>;
    let (mut want, mut got): (Figures, Figures) = Default::default();
    for (kind, key) in [("monitor", "monitors"), ("j.u.c. lock", "juc_locks")] {
        for r in arr(report, key) {
            if r.get("summary_row") != Some(&Json::Bool(true)) {
                continue;
            }
            if kind == "monitor" {
                if r.num("contentions") > 0 {
                    let e = want
                        .entry((kind.into(), str_of(r, "name").into()))
                        .or_default();
                    e[0] += r.num("blocked_ns");
                    e[1] += r.num("contentions");
                }
            } else {
                for s in arr(r, "sites") {
                    let e = want
                        .entry((kind.into(), str_of(s, "name").into()))
                        .or_default();
                    e[0] += s.num("ns");
                    e[1] += s.num("count");
                }
            }
            for s in arr(r, "hold_sites") {
                let e = want
                    .entry((kind.into(), str_of(s, "name").into()))
                    .or_default();
                e[2] += s.num("count");
                e[3] += s.num("ns");
            }
        }
    }
    for row in rows.iter().filter(|r| id(r) == "00000000") {
        let e = got
            .entry((str_of(row, "kind").into(), str_of(row, "name").into()))
            .or_default();
        for (i, k) in ["blocked", "contentions", "holds", "held"]
            .iter()
            .enumerate()
        {
            e[i] += row.num(k);
        }
    }
    if data
        .get("locks")
        .is_some_and(|l| l.num("total") == rows.len() as u64)
    {
        assert_eq!(
            got, want,
            "{ctx}: the page's rows of other monitors (per site)"
        );
    }
    for row in rows {
        let l = id(row);
        if l == "00000000" {
            continue;
        }
        let Some(r) = locks.get(&l) else {
            // a semaphore's or a waited-on object's row only
            assert_eq!(
                row.num("contentions") + row.num("holds"),
                0,
                "{ctx}: page row {l}"
            );
            continue;
        };
        let c = format!("{ctx}: page row {l}");
        assert_eq!(row.num("blocked"), r.num("blocked_ns"), "{c}");
        assert_eq!(row.num("contentions"), r.num("contentions"), "{c}");
        let (mut holds, mut held) = (0, 0);
        for key in ["holds", "write_holds", "read_holds"] {
            if let Some(h @ Json::Obj(_)) = r.get(key) {
                holds += h.num("count");
                held += h.num("total_ns");
            }
        }
        assert_eq!((row.num("holds"), row.num("held")), (holds, held), "{c}");
    }
    // The lanes draw what was written one by one, never more than the thread's totals, and
    // all of them when nothing was counted per site instead (the page says what is left out).
    let log = std::fs::read_to_string(format!("{prefix}.orca")).unwrap();
    let counted = log.lines().any(|l| {
        [",Waits,", ",MonitorContentions,", ",LockContentions,"]
            .iter()
            .any(|k| l.contains(k))
    });
    let totals = data.get("totals").expect("totals");
    for lane in arr(&data, "lanes") {
        let drawn = arr(lane, "drawn");
        let tot = match totals.get(&id(lane)) {
            Some(Json::Arr(v)) => v.clone(),
            t => panic!("{ctx}: totals of {}: {t:?}", id(lane)),
        };
        for k in 0..5 {
            let num = |j: &Json| match j {
                Json::Num(n) => n.parse::<u64>().unwrap(),
                j => panic!("{j:?}"),
            };
            let (d, t) = (num(&drawn[k]), num(&tot[k]));
            let c = format!("{ctx}: lane {} state {k}: drawn {d}, total {t}", id(lane));
            assert!(d <= t, "{c}");
            if !counted {
                assert_eq!(d, t, "{c}");
            }
        }
    }
    let threads = arr(&data, "threads");
    assert_eq!(
        threads.len(),
        arr(report, "threads").len(),
        "{ctx}: page threads"
    );
    for (p, r) in threads.iter().zip(arr(report, "threads")) {
        let c = format!("{ctx}: page thread {}", id(p));
        assert_eq!(id(p), id(r), "{c}");
        for (page_key, report_key) in [
            ("blocked", "blocked_ns"),
            ("waiting", "waiting_ns"),
            ("sleeping", "sleeping_ns"),
            ("joining", "joining_ns"),
            ("acquiring", "acquiring_ns"),
        ] {
            assert_eq!(p.num(page_key), r.num(report_key), "{c}: {page_key}");
        }
    }
}

fn report(prefix: &str, extra: &[&str]) -> Json {
    // --all: the figures of every lock, the uncontended ones too (folded by default).
    let mut args = vec!["report", prefix, "--json", "--top", "1000000", "--all"];
    args.extend_from_slice(extra);
    let (code, out) = orca(&args);
    assert_eq!(code, Some(0), "{out}");
    let j = Json::parse(&out);
    // Every real run's JSON is what docs/JSON.md describes (issue 46).
    json::assert_documented(&j, &format!("{prefix} {extra:?}"));
    j
}

/// `orca record --pprof DIR` of `main`, then `orca check`: the prefix and DIR.
fn record(test: &str, jdk: &Jdk, options: &[&str], main: &str, args: &[&str]) -> (String, PathBuf) {
    let prefix = prefix_for(test, jdk);
    let dir = prefix.with_file_name("pprof");
    let p = prefix.to_str().unwrap();
    let java = jdk.java();
    let classes = test_classes().to_str().unwrap().to_string();
    let mut a = vec!["record", "-o", p, "--pprof", dir.to_str().unwrap()];
    a.extend_from_slice(options);
    a.extend_from_slice(&["--", java.to_str().unwrap(), "-cp", &classes, main]);
    a.extend_from_slice(args);
    let (code, out) = orca(&a);
    assert_eq!(code, Some(0), "{} {main}: {out}", jdk.label());
    assert!(out.contains("orca: wrote the pprof profiles "), "{out}");
    let (code, out) = orca(&["check", p]);
    assert_eq!(code, Some(0), "{} {main}: orca check: {out}", jdk.label());
    (p.to_string(), dir)
}

const JUC_ARGS: [&str; 5] = ["3", "40", "2", "5", "4"];

/// The programs, and the kinds each one forces samples of: j.u.c. locks (a contended
/// `tryLock`), conditions and parks; wait/notify; forced monitor contention; semaphores.
#[allow(clippy::type_complexity)]
fn programs() -> [(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
); 4] {
    [
        ("JucLocks", &JUC_ARGS, &["blocked", "held", "waited"]),
        ("PingPong", &[], &["held", "waited"]),
        ("Contention", &[], &["blocked", "held"]),
        ("SemaphoreHandoff", &[], &["semaphores"]),
    ]
}

/// Every profile `orca record --pprof` writes of real runs, summarised and complete traces,
/// reads in `go tool pprof` with `orca report`'s figures; and `orca pprof --from-events`
/// with `orca report --from-events`'s.
#[test]
fn profiles_of_real_runs_have_the_reports_figures() {
    for jdk in jdks() {
        for (main, args, forced) in programs() {
            for trace in ["summary", "all"] {
                let test = format!("pprof-{main}-{trace}");
                let (prefix, dir) = record(&test, jdk, &["--trace", trace], main, args);
                let ctx = format!("{} {main} trace={trace}", jdk.label());
                let rep = report(&prefix, &[]);
                check_flame_and_page(&prefix, &dir, &rep, &ctx);
                let log = std::fs::read_to_string(format!("{prefix}.orca")).unwrap();
                let has = |kinds: &[&str]| log.lines().any(|l| kinds.iter().any(|k| l.contains(k)));
                let untimed = has(&[",MonitorHoldsUntimed,", ",LockHoldsUntimed,"]);
                for kind in KINDS {
                    let r = check_profile(&dir.join(format!("{kind}.pb.gz")), kind, &rep, &ctx);
                    // "every event recorded" only when none of the kind's figures was counted
                    // per site instead (issue 46: it was said of the counted short ones too)
                    let counted = match kind {
                        "blocked" => has(&[",MonitorContentions,", ",LockContentions,"]),
                        "held" => has(&[",MonitorHolds,", ",LockHolds,", "HoldsUntimed,"]),
                        // `<timestamp>,Waits,<thread>,<call>,...`
                        "waited" => waits_of(&log, &["wait", "await", "park"]),
                        _ => waits_of(&log, &["acquire"]),
                    };
                    assert_eq!(
                        r.text.contains("every event recorded"),
                        !counted && !r.text.contains("estimates"),
                        "{ctx} {kind}: {}",
                        r.text
                    );
                    if kind == "held" {
                        // estimates labelled as such exactly when some hold was not timed
                        assert_eq!(
                            r.text.contains("hold times are estimates"),
                            untimed,
                            "{ctx}: {}",
                            r.text
                        );
                    }
                    assert!(
                        !forced.contains(&kind) || !r.samples.is_empty(),
                        "{ctx}: no {kind} sample: {}",
                        r.text
                    );
                }
                if trace == "all" {
                    let rep = report(&prefix, &["--from-events"]);
                    let out = dir.join("held-events.pb.gz");
                    let o = out.to_str().unwrap();
                    let (code, text) =
                        orca(&["pprof", &prefix, "--kind", "held", "--from-events", "-o", o]);
                    assert_eq!(code, Some(0), "{text}");
                    let r = check_profile(&out, "held", &rep, &format!("{ctx} --from-events"));
                    assert!(
                        r.text
                            .contains("holds from MonitorEntered/MonitorExit events"),
                        "{ctx}: {}",
                        r.text
                    );
                }
            }
        }
    }
}

/// Hold counts per line and per lock of deterministic programs: the default recording
/// (summary lines) and the complete trace (its events) give the same; and within the complete
/// trace, its summary lines and its events give the same counts and nanoseconds.
#[test]
fn summarised_and_complete_traces_give_the_same_counts() {
    let counts = |t: Totals| -> BTreeMap<String, u64> {
        t.into_iter()
            .map(|(k, (c, _))| (k, c))
            // Holds of a JDK-internal lock at startup are not the program's.
            .filter(|(k, _)| !k.starts_with("java.") && !k.starts_with("jdk."))
            .collect()
    };
    for jdk in jdks() {
        for (main, args) in [("JucLocks", &JUC_ARGS[..]), ("PingPong", &[][..])] {
            let ctx = format!("{} {main}", jdk.label());
            let (_, sdir) = record(&format!("pprof-parity-{main}-s"), jdk, &[], main, args);
            let (full, fdir) = record(
                &format!("pprof-parity-{main}-a"),
                jdk,
                &["--trace", "all"],
                main,
                args,
            );
            let events = fdir.join("held-events.pb.gz");
            let (code, text) = orca(&[
                "pprof",
                &full,
                "--kind",
                "held",
                "--from-events",
                "-o",
                events.to_str().unwrap(),
            ]);
            assert_eq!(code, Some(0), "{text}");
            let summarised = raw(&sdir.join("held.pb.gz"));
            let from_summaries = raw(&fdir.join("held.pb.gz"));
            let from_events = raw(&events);
            assert!(
                !from_events.samples.is_empty() && from_events.per_line().len() > 1,
                "{ctx}: {}",
                from_events.text
            );
            assert_eq!(
                counts(summarised.per_line()),
                counts(from_events.per_line()),
                "{ctx}: default recording vs complete trace"
            );
            assert_eq!(
                from_summaries.per_line(),
                from_events.per_line(),
                "{ctx}: the complete trace's summary lines vs its events"
            );
        }
    }
}

/// A log with no event of a kind gives a profile with no sample, which the tool reads: JVMTI
/// mode has no holds, Hello has no contention or semaphore (the JDK's Common-Cleaner waits);
/// and a log of nothing but a thread's start and end has nothing of any kind.
#[test]
fn logs_without_events_of_a_kind_give_empty_profiles_the_tool_accepts() {
    let empty = |file: &Path, kind: &str, rep: &Json, ctx: &str| {
        let r = check_profile(file, kind, rep, ctx);
        assert!(r.samples.is_empty(), "{ctx} {kind}: {}", r.text);
        let top = pprof(&["-top", file.to_str().unwrap()]);
        assert!(
            top.contains("Showing nodes accounting for 0, 0% of 0 total"),
            "{ctx} {kind}: {top}"
        );
    };
    for jdk in jdks() {
        let (prefix, dir) = record("pprof-empty", jdk, &["--mode", "jvmti"], "Hello", &[]);
        let rep = report(&prefix, &[]);
        for kind in ["blocked", "held", "semaphores"] {
            empty(&dir.join(format!("{kind}.pb.gz")), kind, &rep, &jdk.label());
        }
        check_profile(&dir.join("waited.pb.gz"), "waited", &rep, &jdk.label());
    }
    let dir = orca_tests::work_dir().join("pprof-nothing");
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("run");
    let p = prefix.to_str().unwrap();
    std::fs::write(
        format!("{p}.orca"),
        "1.000000000,ThreadStarted,0000000A,main\n1.500000000,ThreadEnded,0000000A\n",
    )
    .unwrap();
    std::fs::write(format!("{p}.methods"), "").unwrap();
    std::fs::write(format!("{p}.classtable"), "").unwrap();
    let (code, out) = orca(&["check", p]);
    assert_eq!(code, Some(0), "{out}");
    let rep = report(p, &[]);
    for kind in KINDS {
        let file = dir.join(format!("{kind}.pb.gz"));
        let (code, out) = orca(&["pprof", p, "--kind", kind, "-o", file.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{out}");
        empty(&file, kind, &rep, "a log of one thread");
        let top = pprof(&["-top", file.to_str().unwrap()]);
        assert!(
            top.contains("Duration: 500ms, Total samples = 0"),
            "{kind}: {top}"
        );
    }
}

/// A hold-heavy program under the default (holdtiming=sampled) leaves most holds untimed: the
/// held profile says its times are estimates, with how many, and keeps `orca report`'s
/// figures (which estimate them the same way); its counts are exact.
#[test]
fn held_times_of_untimed_holds_are_labelled_estimates() {
    for jdk in jdks() {
        let (prefix, dir) = record("pprof-sampled", jdk, &[], "SampledHolds", &["2000000"]);
        let ctx = format!("{} SampledHolds", jdk.label());
        let log = std::fs::read_to_string(format!("{prefix}.orca")).unwrap();
        assert!(
            log.contains(",MonitorHoldsUntimed,"),
            "{ctx}: every hold timed"
        );
        let rep = report(&prefix, &[]);
        let r = check_profile(&dir.join("held.pb.gz"), "held", &rep, &ctx);
        let said = r
            .text
            .lines()
            .find(|l| l.contains("hold times are estimates"))
            .unwrap_or_else(|| panic!("{ctx}: no estimate said: {}", r.text));
        let scaled: u64 = said
            .split("estimates: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{ctx}: {said}"));
        assert!(scaled > 0, "{ctx}: {said}");
    }
}

/// A program with many holds on one thread, recorded with the defaults (tracking=sampled):
/// most of its holds are left unidentified, counted at their sites in the row of other
/// monitors (`00000000`). Every output shows that row as `orca report` does, at its sites and
/// by the same names (`Object at ProdCons.lambda$main$1(ProdCons.java:71)`), with the same
/// figures: `report --json`'s `hold_sites[]`, the page's locks table, the held profile and
/// the held flame graph; none shows it as one lock "other monitors (summarised together)"
/// or `monitor 00000000` (issue 46: the page, pprof and flame did).
#[test]
fn unidentified_holds_read_alike_in_every_output() {
    // ProdCons: a busy thread's holds left unidentified (not timed); ManyMonitors: a site's
    // monitors past its first 4 (timed, so in the held flame graph too).
    let programs: [(&str, &[&str]); 2] = [
        ("ProdCons", &["4", "20000", "4"]),
        ("ManyMonitors", &["200000"]),
    ];
    for jdk in jdks() {
        for (main, args) in programs {
            let (prefix, dir) = record(&format!("pprof-unidentified-{main}"), jdk, &[], main, args);
            let ctx = format!("{} {main} {args:?}", jdk.label());
            let log = std::fs::read_to_string(format!("{prefix}.orca")).unwrap();
            let row = |l: &&str| {
                let f: Vec<&str> = l.split(',').collect();
                f.len() > 3
                    && matches!(f[1], "MonitorHolds" | "MonitorHoldsUntimed")
                    && f[3] == "00000000"
            };
            assert!(
                log.lines().any(|l| row(&l)),
                "{ctx}: no MonitorHolds row 00000000"
            );
            // (Not `check_flame_and_page` nor `check_profile`: a lock's estimated hold time is
            // scaled by its mean in the report's per-lock total, by each site's in its sites,
            // in pprof and in flame, which differ for a lock held at several sites.)
            let rep = report(&prefix, &[]);

            // The report's sites of the row, by name: (count, ns).
            let mons = arr(&rep, "monitors");
            let summary = mons
                .iter()
                .find(|m| m.get("summary_row") == Some(&Json::Bool(true)))
                .unwrap_or_else(|| panic!("{ctx}: no summary row in the JSON"));
            let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
            for s in arr(summary, "hold_sites") {
                let e = want.entry(str_of(s, "name").to_string()).or_default();
                e.0 += s.num("count");
                e.1 += s.num("ns");
            }
            assert!(
                want.keys()
                    .any(|k| k.starts_with(&format!("Object at {main}."))),
                "{ctx}: {want:?}"
            );
            // The text names each of them, with its count.
            let (code, text) = orca(&["report", &prefix, "--all"]);
            assert_eq!(code, Some(0), "{text}");
            for (name, (c, _)) in &want {
                let times = if *c == 1 {
                    "1 time".into()
                } else {
                    format!("{c} times")
                };
                let line = format!("      {name}: held {times}");
                assert!(text.contains(&line), "{ctx}: {line}\n{text}");
            }
            // The page: one row per site, the same counts.
            let data = page(&prefix, &dir);
            let mut page_rows: BTreeMap<String, (u64, u64)> = BTreeMap::new();
            for r in arr(data.get("locks").unwrap(), "rows") {
                if id(r) == "00000000" && str_of(r, "kind") == "monitor" && r.num("holds") > 0 {
                    let e = page_rows.entry(str_of(r, "name").to_string()).or_default();
                    e.0 += r.num("holds");
                    e.1 += r.num("held");
                }
            }
            assert_eq!(page_rows, want, "{ctx}: page vs report --json");
            // The held profile: the leaf `monitor NAME`, the same counts and nanoseconds.
            let held = raw(&dir.join("held.pb.gz"));
            let mut profile: BTreeMap<String, (u64, u64)> = BTreeMap::new();
            for s in &held.samples {
                if let Some(name) = s.stack[0].strip_prefix("monitor ") {
                    if want.contains_key(name) {
                        let e = profile.entry(name.to_string()).or_default();
                        e.0 += s.values[0];
                        e.1 += s.values[1];
                    }
                }
            }
            // counts and nanoseconds: the untimed holds' time estimated per site, as the
            // report's (it was per site and thread, 0.1% off for ManyMonitors).
            assert_eq!(profile, want, "{ctx}: pprof held vs report --json");
            // The held flame graph: the same nanoseconds (it has no counts), where there are any.
            let flame = flame_leaves(&prefix, "held");
            let timed: BTreeMap<String, u64> = want
                .iter()
                .filter(|(_, (_, ns))| *ns > 0)
                .map(|(k, (_, ns))| (format!("monitor {k}"), *ns))
                .collect();
            let got: BTreeMap<String, u64> = flame
                .into_iter()
                .filter(|(k, _)| timed.contains_key(k))
                .collect();
            assert_eq!(got, timed, "{ctx}: flame held vs report --json");
            assert!(
                main != "ManyMonitors" || !timed.is_empty(),
                "{ctx}: no timed hold in the row"
            );
            // Nothing reads as one phantom lock.
            let html = std::fs::read_to_string(dir.join("page.html")).unwrap();
            let (_, json_text) = orca(&["report", &prefix, "--json", "--all"]);
            let mut outputs = vec![
                ("report", text.clone()),
                ("report --json", json_text),
                ("html", html),
                ("pprof held", held.text.clone()),
                ("pprof blocked", raw(&dir.join("blocked.pb.gz")).text),
            ];
            for w in ["blocked", "held", "waiting"] {
                let (code, out) = orca(&["flame", "--weight", w, &prefix]);
                assert_eq!(code, Some(0), "{out}");
                outputs.push(("flame", out));
            }
            for (what, out) in &outputs {
                for phantom in ["summarised together", "monitor 00000000", "lock 00000000"] {
                    assert!(!out.contains(phantom), "{ctx}: {what} says {phantom:?}");
                }
            }
        }
    }
}
