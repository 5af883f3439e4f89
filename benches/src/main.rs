//! `orca-overhead`: the agent's cost on a lock-heavy Java workload.
//!
//! Runs `benches/java/LockHeavy.java` without the agent, under `mode=jvmti` and under
//! `mode=instrument`, interleaved (none, jvmti, instrument, none, ...) after one warm-up run of
//! each, and prints per mode the median wall time, the median of the ratios to the `none` run
//! of the same round (runs taken side by side share whatever else the machine was doing), the
//! event count and the extra wall time per event. Then it sweeps `stackdepth` in
//! instrumentation mode to show the cost per event of deeper traces (how the default was
//! chosen).
//!
//! Usage: `cargo run --release -p orca-benches -- [--runs N] [--scale S] [--java PATH] [--depths 0,1,8,16,32]`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Args {
    runs: usize,
    scale: u32,
    java_home: PathBuf,
    depths: Vec<usize>,
}

fn parse_args() -> Args {
    let mut a = Args {
        runs: 5,
        scale: 1,
        java_home: PathBuf::from("/usr/lib/jvm/java-17-openjdk-amd64"),
        depths: vec![0, 1, 8, 16, 32],
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || {
            it.next()
                .unwrap_or_else(|| die(&format!("{k} needs a value")))
        };
        match k.as_str() {
            "--runs" => a.runs = v().parse().unwrap_or_else(|_| die("--runs takes a number")),
            "--scale" => {
                a.scale = v()
                    .parse()
                    .unwrap_or_else(|_| die("--scale takes a number"))
            }
            "--java" => a.java_home = PathBuf::from(v()),
            "--depths" => {
                a.depths = v()
                    .split(',')
                    .map(|d| d.parse().unwrap_or_else(|_| die("--depths takes numbers")))
                    .collect()
            }
            _ => die(&format!(
                "unknown argument {k}; see the doc comment of benches/src/main.rs"
            )),
        }
    }
    a
}

fn die(msg: &str) -> ! {
    eprintln!("orca-overhead: {msg}");
    std::process::exit(2)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

struct Sample {
    secs: f64,
    events: u64,
}

fn run_once(java: &Path, classes: &Path, agent: Option<String>, scale: u32) -> Sample {
    let mut cmd = Command::new(java);
    if let Some(a) = agent {
        cmd.arg(a);
    }
    cmd.arg("-cp")
        .arg(classes)
        .arg("LockHeavy")
        .arg(scale.to_string());
    let t = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| die(&format!("cannot run {}: {e}", java.display())));
    let secs = t.elapsed().as_secs_f64();
    if !out.status.success() {
        die(&format!(
            "LockHeavy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("orca: "))
        .find_map(|l| l.split_once(" events, ").and_then(|(n, _)| n.parse().ok()))
        .unwrap_or(0);
    Sample { secs, events }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args = parse_args();
    let root = root();
    let agent = root.join("target/release/liborca.so");
    if !agent.exists() {
        die("target/release/liborca.so is missing: run `cargo build --release` first");
    }
    let java = args.java_home.join("bin/java");
    let javac = args.java_home.join("bin/javac");
    let classes = root.join("target/orca-bench/classes");
    std::fs::create_dir_all(&classes).unwrap();
    let ok = Command::new(&javac)
        .arg("-d")
        .arg(&classes)
        .arg(root.join("benches/java/LockHeavy.java"))
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        die(&format!(
            "{} could not compile benches/java/LockHeavy.java",
            javac.display()
        ));
    }
    let out = root.join("target/orca-bench/run");
    let with_agent = |opts: &str| {
        Some(format!(
            "-agentpath:{}={},{opts}",
            agent.display(),
            out.display()
        ))
    };

    println!(
        "orca-overhead: LockHeavy scale {} on {}, {} interleaved runs per mode (none, jvmti, instrument) after a warm-up",
        args.scale,
        args.java_home.display(),
        args.runs
    );
    let modes: [(&str, Option<String>); 3] = [
        ("none", None),
        ("jvmti", with_agent("mode=jvmti")),
        ("instrument", with_agent("mode=instrument")),
    ];
    for (_, agent) in &modes {
        run_once(&java, &classes, agent.clone(), args.scale);
    }
    let mut secs: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut events = vec![0u64; modes.len()];
    for _ in 0..args.runs {
        let samples: Vec<Sample> = modes
            .iter()
            .map(|(_, agent)| run_once(&java, &classes, agent.clone(), args.scale))
            .collect();
        for (i, s) in samples.iter().enumerate() {
            secs[i].push(s.secs);
            ratios[i].push(s.secs / samples[0].secs);
            events[i] = s.events;
        }
    }
    println!("| mode | median wall (s) | min | max | median ratio to none (pairwise) | events | extra ns per event |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let base = median(secs[0].clone());
    for (i, (name, _)) in modes.iter().enumerate() {
        let v = &secs[i];
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(0.0, f64::max);
        let m = median(v.clone());
        let per_event = if events[i] > 0 {
            format!("{:.0}", (m - base) * 1e9 / events[i] as f64)
        } else {
            "-".into()
        };
        println!(
            "| {name} | {m:.3} | {min:.3} | {max:.3} | {:.2}x | {} | {per_event} |",
            median(ratios[i].clone()),
            events[i]
        );
    }

    if args.depths.is_empty() {
        return;
    }
    println!();
    println!("stackdepth sweep (mode=instrument; cost per event = (wall - wall at depth 0) / events), {} runs each, interleaved:", args.runs);
    let mut per_depth: Vec<(usize, Vec<f64>, u64)> =
        args.depths.iter().map(|d| (*d, Vec::new(), 0)).collect();
    for _ in 0..args.runs {
        for (d, v, ev) in per_depth.iter_mut() {
            let s = run_once(
                &java,
                &classes,
                with_agent(&format!("mode=instrument,stackdepth={d}")),
                args.scale,
            );
            v.push(s.secs);
            *ev = s.events;
        }
    }
    let base = median(per_depth[0].1.clone());
    println!(
        "| stackdepth | median wall (s) | events | extra ns per event vs depth {} |",
        per_depth[0].0
    );
    println!("| --- | --- | --- | --- |");
    for (d, v, ev) in &per_depth {
        let m = median(v.clone());
        let extra = if *ev > 0 {
            (m - base) * 1e9 / *ev as f64
        } else {
            0.0
        };
        println!("| {d} | {m:.3} | {ev} | {extra:.0} |");
    }
}
