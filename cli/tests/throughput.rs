//! Throughput benchmarks (ignored by default; run them in release mode), and one test that
//! runs by default: the streaming readers' memory stays flat as the log grows.
//!
//! `cargo test --release -p orca-cli --test throughput -- --ignored --nocapture`
//!
//! `throughput` generates a valid ~200 MB synthetic log (16 threads, contention, holds,
//! waits, sleeps, semaphores, 8-frame stacks) in a temp dir, then times
//! `orca check` and `orca report` on it and prints MB/s and peak RSS (VmHWM).
//! `html_on_ten_million_events` writes the same kind of log with 10 million events and
//! times `orca html` on it, checking the page's size bound.

mod synthetic;

use std::process::Command;
use std::time::Instant;

use synthetic::{generate, Until};

const TARGET_BYTES: u64 = 200_000_000;
fn timed(args: &[&str], bytes: u64) -> String {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .env("ORCA_STATS", "1")
        .output()
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let hwm = stderr
        .lines()
        .find_map(|l| l.split("VmHWM=").nth(1))
        .unwrap_or("?")
        .to_string();
    assert!(
        out.status.success(),
        "{args:?}: {}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    format!(
        "orca {}: {:.1} MB in {secs:.2} s = {:.0} MB/s, peak RSS {hwm}",
        args[0],
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs
    )
}

#[test]
#[ignore = "benchmark: generates a 200 MB log; run in release with --ignored --nocapture"]
fn throughput() {
    // ORCA_BENCH_DIR keeps the log there (for profiling) instead of a temp dir.
    let keep = std::env::var_os("ORCA_BENCH_DIR");
    let dir = keep
        .clone()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("orca-bench-{}", std::process::id())));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("bench");
    let t = Instant::now();
    let (bytes, _) = generate(&prefix, Until::Bytes(TARGET_BYTES));
    eprintln!(
        "generated {:.1} MB in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let p = prefix.to_str().unwrap();
    for args in [
        vec!["check", p],
        vec!["report", p],
        vec!["report", "--json", p],
    ] {
        let line = timed(&args, bytes);
        println!("{line}");
    }
    if keep.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "benchmark: generates a 10-million-event (2 GB) log; run in release with --ignored --nocapture"]
fn html_on_ten_million_events() {
    let keep = std::env::var_os("ORCA_BENCH_DIR");
    let dir = keep
        .clone()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("orca-bench-html-{}", std::process::id()))
        });
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("bench10m");
    let t = Instant::now();
    let (bytes, events) = generate(&prefix, Until::Events(10_000_000));
    eprintln!(
        "generated {events} events, {:.1} MB in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    assert!((9_999_000..=10_000_000).contains(&events), "{events}");
    let page = dir.join("bench10m.html");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args([
            "html",
            prefix.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .env("ORCA_STATS", "1")
        .output()
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    // CPU time too: on a shared machine the wall time says more about the neighbours.
    let cpu = {
        // SAFETY: getrusage fills the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        t(ru.ru_utime) + t(ru.ru_stime)
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let size = std::fs::metadata(&page).unwrap().len();
    let hwm = stderr
        .lines()
        .find_map(|l| l.split("VmHWM=").nth(1))
        .unwrap_or("?")
        .to_string();
    println!(
        "orca html: {events} events ({:.0} MB) in {secs:.1} s ({cpu:.1} s of CPU), page {:.2} MB, peak RSS {hwm}",
        bytes as f64 / 1e6,
        size as f64 / 1e6
    );
    assert!(size < 10_000_000, "page of {size} bytes");
    if keep.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Peak resident memory (VmHWM, in kB) of `orca ARGS` with ORCA_STATS set.
fn peak_kb(args: &[&str]) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .env("ORCA_STATS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    stderr
        .lines()
        .find_map(|l| l.split("VmHWM=").nth(1))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{args:?}: no VmHWM in {stderr}"))
}

/// The streaming readers' memory does not grow with the log: each reads a 6 MB and a 36 MB
/// log of the same program (16 threads, their contentions, holds, waits and calls) at peak
/// memories less than 8 MB apart. Why: memory is per thread, per lock and per stack, never
/// per event or per span (`orca pprof` aside, whose samples are per stack, thread and
/// owner); the first `flame` over the one pairing (format/src/spans.rs) kept
/// every span to the end, and took 200 MB on a 240 MB log.
#[test]
fn readers_memory_does_not_grow_with_the_log() {
    let dir = std::env::temp_dir().join(format!("orca-flat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let small = dir.join("small");
    let large = dir.join("large");
    generate(&small, Until::Bytes(6_000_000));
    generate(&large, Until::Bytes(36_000_000));
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let readers: &[&[&str]] = &[
        &["check"],
        &["report"],
        &["report", "--json"],
        &["report", "--from-events"],
        // (Not pprof: a profile keeps a sample per distinct stack, thread and owner, and
        // this log's generator keeps making new ones: 8.7 MB and 23.4 MB, before spans.rs too.)
        &["flame", "--weight", "blocked"],
        &["flame", "--weight", "held"],
        &["flame", "--weight", "waiting"],
        &["deadlocks"],
        &["timeline", "-o", out],
    ];
    for args in readers {
        let run = |prefix: &std::path::Path| {
            let mut a = args.to_vec();
            a.push(prefix.to_str().unwrap());
            peak_kb(&a)
        };
        let (s, l) = (run(&small), run(&large));
        assert!(
            l < s + 8 * 1024,
            "orca {args:?}: {s} kB on the 6 MB log, {l} kB on the 36 MB one"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
