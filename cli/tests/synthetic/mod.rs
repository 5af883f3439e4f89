//! A valid synthetic Orca log of any length, shared by the throughput benchmarks and the
//! HTML report's test on a log large enough that the page merges spans: 16 threads in a loop
//! of contention, holds, wait/notify, sleeps and semaphores on 13 monitors, with 8-frame
//! stacks, every event 137 ns after the previous one.

use std::io::{BufWriter, Write};

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

/// Where the synthetic log stops.
#[derive(Clone, Copy)]
#[allow(dead_code)] // each test crate that includes this module uses one of them
pub enum Until {
    Bytes(u64),
    Events(u64),
}

/// Writes the log; returns its size in bytes and its number of events.
pub fn generate(prefix: &std::path::Path, until: Until) -> (u64, u64) {
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
    let mut events = 0u64;
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
        events += 1;
    }
    let stacks: Vec<String> = (0..97).map(stack).collect();
    let mut i: u32 = 0;
    let more = |bytes: u64, events: u64| match until {
        Until::Bytes(b) => bytes < b,
        // Room for the ThreadEnded lines and the last iteration's (at most 5) events.
        Until::Events(n) => events + u64::from(THREADS) + 5 <= n,
    };
    while more(bytes, events) {
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
            events += 1;
        }
    }
    for t in 1..=THREADS {
        bytes += line(&mut o, &mut ts, &format!("ThreadEnded,{:08X}", 0x7000 + t));
        events += 1;
    }
    o.flush().unwrap();
    (bytes, events)
}
