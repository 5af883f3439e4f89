//! Throughput of the rewriter over the JDK 17 jmods, single-threaded:
//! whole corpus with every transformation on (what the agent pays), and the
//! `Unchanged` and `Changed` classes separately.
//!
//! `cargo bench -p orca-rewriter` (ORCA_CORPUS_JDK selects the JDK,
//! ORCA_BENCH_PASSES the number of timed passes, default 5).

#[path = "../tests/common/mod.rs"]
mod common;

use orca_rewriter::{rewrite, Config, Outcome};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn pass(classes: &[&[u8]], cfg: &Config) -> (Duration, usize) {
    let t = Instant::now();
    let mut out = 0usize;
    for b in classes {
        if let Ok(Outcome::Changed { bytes, .. }) = rewrite(black_box(b), cfg) {
            out += bytes.len();
        }
    }
    (t.elapsed(), black_box(out))
}

fn best(classes: &[&[u8]], cfg: &Config, passes: usize) -> Duration {
    (0..passes)
        .map(|_| pass(classes, cfg).0)
        .min()
        .unwrap_or_default()
}

fn line(what: &str, n: usize, bytes: usize, d: Duration) {
    let s = d.as_secs_f64();
    println!(
        "{what:<28} {n:>6} classes {:>7.1} MB  {:>8.1} ms  {:>9.0} classes/s  {:>7.1} MB/s  {:>6.2} us/class",
        bytes as f64 / 1e6,
        s * 1e3,
        n as f64 / s,
        bytes as f64 / 1e6 / s,
        s * 1e6 / n as f64
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let passes: usize = std::env::var("ORCA_BENCH_PASSES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let corpus = common::corpus(true);
    if corpus.is_empty() {
        println!("no JDK jmods found (set ORCA_CORPUS_JDK): nothing to measure");
        return;
    }
    let cfg = Config::default();
    let all: Vec<&[u8]> = corpus.iter().map(|c| c.2.as_slice()).collect();
    let total: usize = all.iter().map(|b| b.len()).sum();
    let (mut changed, mut unchanged) = (Vec::new(), Vec::new());
    for b in &all {
        match rewrite(b, &cfg) {
            Ok(Outcome::Changed { .. }) => changed.push(*b),
            _ => unchanged.push(*b),
        }
    }
    if std::env::var("ORCA_BENCH_PROFILE_CHANGED").is_ok() {
        // for profilers: only the full-rewrite path, many times
        let d = best(&changed, &cfg, passes);
        line(
            "Changed classes",
            changed.len(),
            changed.iter().map(|b| b.len()).sum(),
            d,
        );
        return;
    }
    let _ = pass(&all, &cfg); // warm-up
    println!("orca-rewriter throughput, single thread, best of {passes} passes");
    let d = best(&all, &cfg, passes);
    line("whole corpus, all on", all.len(), total, d);
    let du = best(&unchanged, &cfg, passes);
    line(
        "  Unchanged classes",
        unchanged.len(),
        unchanged.iter().map(|b| b.len()).sum(),
        du,
    );
    let dc = best(&changed, &cfg, passes);
    line(
        "  Changed classes",
        changed.len(),
        changed.iter().map(|b| b.len()).sum(),
        dc,
    );
    let per_u = du.as_secs_f64() / unchanged.len().max(1) as f64;
    let per_c = dc.as_secs_f64() / changed.len().max(1) as f64;
    let mb_u = unchanged.iter().map(|b| b.len()).sum::<usize>() as f64 / du.as_secs_f64();
    let mb_c = changed.iter().map(|b| b.len()).sum::<usize>() as f64 / dc.as_secs_f64();
    if std::env::var("ORCA_BENCH_DETAIL").is_ok() {
        let nocalls = Config {
            object_calls: false,
            thread_calls: false,
            semaphore_calls: false,
            ..Config::default()
        };
        line(
            "  Unchanged, no call rules",
            unchanged.len(),
            unchanged.iter().map(|b| b.len()).sum(),
            best(&unchanged, &nocalls, passes),
        );
        let none = Config {
            monitors: false,
            synchronized_methods: false,
            ..nocalls
        };
        line(
            "  Unchanged, nothing on",
            unchanged.len(),
            unchanged.iter().map(|b| b.len()).sum(),
            best(&unchanged, &none, passes),
        );
    }
    println!(
        "Unchanged path vs full rewrite: {:.1}x faster per class, {:.1}x per byte",
        per_c / per_u,
        mb_u / mb_c
    );
}
