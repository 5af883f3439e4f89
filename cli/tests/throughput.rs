//! Throughput benchmark (ignored by default; run it in release mode):
//!
//! `cargo test --release -p orca-cli --test throughput -- --ignored --nocapture`
//!
//! Generates a valid ~200 MB synthetic log (16 threads, contention, holds,
//! waits, sleeps, semaphores, 8-frame stacks) in a temp dir, then times
//! `orca check` and `orca report` on it and prints MB/s and peak RSS (VmHWM).

use std::io::{BufWriter, Write};
use std::process::Command;
use std::time::Instant;

const TARGET_BYTES: u64 = 200_000_000;
const THREADS: u32 = 16;
const METHODS: u32 = 64;

fn stack(seed: u32) -> String {
    let mut s = String::from("8");
    for i in 0..8u32 {
        let m = (seed.wrapping_mul(31).wrapping_add(i * 7)) % METHODS + 1;
        s.push_str(&format!(";{m:08X};{:08X}", (i * 4 + seed) % 40));
    }
    s
}

fn generate(prefix: &std::path::Path) -> u64 {
    let ext = |e: &str| {
        let mut s = prefix.as_os_str().to_owned();
        s.push(e);
        std::path::PathBuf::from(s)
    };
    let mut c = BufWriter::new(std::fs::File::create(ext(".classtable")).unwrap());
    writeln!(c, "1.000000000,00C1A550,Lbench/Work;,Work.java").unwrap();
    let mut m = BufWriter::new(std::fs::File::create(ext(".methods")).unwrap());
    for i in 1..=METHODS {
        writeln!(
            m,
            "1.000000000,{i:08X},m{i},()V,00C1A550,2;00000000;{:08X};00000010;{:08X}",
            i * 10,
            i * 10 + 1
        )
        .unwrap();
    }
    let mut o = BufWriter::with_capacity(1 << 20, std::fs::File::create(ext(".orca")).unwrap());
    let mut ts: u64 = 2_000_000_000_000;
    let mut bytes = 0u64;
    let line = |o: &mut BufWriter<std::fs::File>, ts: &mut u64, rest: &str| {
        *ts += 137;
        let l = format!(
            "{}.{:09},{rest}\n",
            *ts / 1_000_000_000,
            *ts % 1_000_000_000
        );
        o.write_all(l.as_bytes()).unwrap();
        l.len() as u64
    };
    for t in 1..=THREADS {
        bytes += line(
            &mut o,
            &mut ts,
            &format!("ThreadStarted,{:08X},worker-{t}", 0x7000 + t),
        );
    }
    let stacks: Vec<String> = (0..97).map(stack).collect();
    let mut i: u32 = 0;
    while bytes < TARGET_BYTES {
        i = i.wrapping_add(1);
        let t = 0x7000 + (i % THREADS) + 1;
        let mon = 0x1000 + (i % 13) + 1;
        let st = &stacks[(i % 97) as usize];
        let owner = 0x7000 + ((i + 1) % THREADS) + 1;
        let evs: Vec<String> = match i % 5 {
            0 | 1 => vec![
                format!("MonitorEnter,{t:08X},{mon:08X},{st}"),
                format!("MonitorContendedEnter,{t:08X},{mon:08X},{owner:08X},{st}"),
                format!("MonitorContendedEntered,{t:08X},{mon:08X},{st}"),
                format!("MonitorEntered,{t:08X},{mon:08X},{st}"),
                format!("MonitorExit,{t:08X},{mon:08X},{st}"),
            ],
            2 => vec![
                format!("MonitorEntered,{t:08X},{mon:08X},{st}"),
                format!("ObjectWait,{t:08X},{mon:08X},{st}"),
                format!("ObjectWaited,{t:08X},{mon:08X},{st}"),
                format!("ObjectNotifyAll,{t:08X},{mon:08X},{st}"),
                format!("MonitorExit,{t:08X},{mon:08X},{st}"),
            ],
            3 => vec![
                format!("ThreadSleep,{t:08X},{st}"),
                format!("ThreadSlept,{t:08X},{st}"),
            ],
            _ => vec![
                format!("SemaphoreAcquire,{t:08X},00005E30,{st}"),
                format!("SemaphoreAcquired,{t:08X},00005E30,{st}"),
                format!("SemaphoreRelease,{t:08X},00005E30,{st}"),
            ],
        };
        for e in evs {
            bytes += line(&mut o, &mut ts, &e);
        }
    }
    for t in 1..=THREADS {
        bytes += line(&mut o, &mut ts, &format!("ThreadEnded,{:08X}", 0x7000 + t));
    }
    o.flush().unwrap();
    bytes
}

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
    let bytes = generate(&prefix);
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
