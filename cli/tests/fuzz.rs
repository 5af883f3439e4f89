//! Mutated logs through every `orca` reader (issue 47): real recordings of the demo
//! (examples/PingPong.java, with the default options and with `trace=all`, in
//! tests/fixtures/demo*) and the hand-written j.u.c. fixture, each mutant changing one of the
//! three files. Every subcommand that reads a log runs on each mutant and must end by itself
//! (within 10 s) with exit code 0, 1 (a verdict: `check`'s INVALID, `deadlocks`' cycle) or 2
//! (saying on stderr what it cannot read), never a panic (101) or a signal. Seeded (`ORCA_FUZZ_SEED`), and bounded: as many mutants as fit in
//! `ORCA_FUZZ_SECS` seconds (10), at least 50.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A small, seeded generator (xorshift64*): the same seed, the same mutants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that readers get wrong: extremes, negatives, malformed numbers and IDs, escapes.
const NASTY: &[&str] = &[
    "",
    "0",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "FFFFFFFF",
    "00000000",
    "1e308",
    "NaN",
    "0.000000001",
    "-0.5",
    "\\",
    "\\u0000",
    ";;;;",
    ",,,",
    "\u{FEFF}",
    "ÿ\u{7f}",
    "9223372036854775807.999999999",
];

/// One mutation of `text` (a file's lines).
fn mutate(rng: &mut Rng, text: &str) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let i = rng.below(lines.len());
    match rng.below(10) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), l);
        }
        2 => {
            let j = rng.below(lines.len());
            lines.swap(i, j);
        }
        3 | 4 => {
            // a field replaced
            let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            let f = rng.below(fields.len());
            fields[f] = NASTY[rng.below(NASTY.len())].to_string();
            lines[i] = fields.join(",");
        }
        5 => {
            // a field dropped or added
            let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            if rng.below(2) == 0 && fields.len() > 1 {
                fields.remove(rng.below(fields.len()));
            } else {
                fields.insert(
                    rng.below(fields.len() + 1),
                    NASTY[rng.below(NASTY.len())].into(),
                );
            }
            lines[i] = fields.join(",");
        }
        6 => {
            // a line of another kind's fields: an event name swapped
            let j = rng.below(lines.len());
            let name = lines[j].split(',').nth(1).unwrap_or("").to_string();
            let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            if fields.len() > 1 {
                fields[1] = name;
            }
            lines[i] = fields.join(",");
        }
        _ => {}
    }
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    match rng.below(6) {
        0 if !bytes.is_empty() => {
            // truncated anywhere (a torn last line)
            let at = rng.below(bytes.len());
            bytes.truncate(at);
        }
        1 if !bytes.is_empty() => {
            // one byte flipped
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
        }
        2 if !bytes.is_empty() => {
            // invalid UTF-8 or a NUL
            let at = rng.below(bytes.len());
            bytes.insert(at, [0xFF, 0x00, 0xC3][rng.below(3)]);
        }
        _ => {}
    }
    bytes
}

/// The readers, each as it is run on PREFIX (and OUT, a file it may write).
fn commands(prefix: &str, out: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["check", prefix]),
        v(&["report", prefix]),
        v(&["report", prefix, "--all"]),
        v(&["report", prefix, "--json"]),
        v(&["deadlocks", prefix]),
        v(&["flame", prefix]),
        v(&["timeline", prefix, "-o", out]),
        v(&["pprof", prefix, "-o", out]),
        v(&["html", prefix, "-o", out]),
    ]
}

/// Runs `orca args`, killed after `limit`: its exit code, or why it did not end well.
fn run(args: &[String], limit: Duration) -> Result<i32, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_orca"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run orca");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for orca") {
            let mut err = String::new();
            use std::io::Read;
            child.stderr.take().unwrap().read_to_string(&mut err).ok();
            return match status.code() {
                // 1: a verdict on standard output (`check`: INVALID, `deadlocks`: found one)
                Some(c @ (0 | 1)) if !err.contains("panicked") => Ok(c),
                // 2: a log it cannot read, which it says
                Some(c @ 2) if !err.trim().is_empty() && !err.contains("panicked") => Ok(c),
                Some(c) => Err(format!("exit code {c}: {err}")),
                None => Err(format!("ended by a signal ({status}): {err}")),
            };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {limit:?}: a hang"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn mutated_logs_never_crash_or_hang_a_reader() {
    let seed: u64 = std::env::var("ORCA_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(47);
    let secs: u64 = std::env::var("ORCA_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orca-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let logs = ["demo", "demo-trace", "juc"];
    let exts = ["orca", "methods", "classtable"];
    let texts: Vec<[String; 3]> = logs
        .iter()
        .map(|l| exts.map(|e| std::fs::read_to_string(fixtures.join(format!("{l}.{e}"))).unwrap()))
        .collect();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let start = Instant::now();
    let mut mutants = 0u64;
    let mut failed = 0u64;
    let mut codes = [0u64; 3];
    let mut failures = Vec::new();
    while mutants < 50 || start.elapsed() < Duration::from_secs(secs) {
        let l = rng.below(logs.len());
        let f = rng.below(exts.len());
        let prefix = dir.join("m");
        for (k, e) in exts.iter().enumerate() {
            let data = if k == f {
                mutate(&mut rng, &texts[l][k])
            } else {
                texts[l][k].clone().into_bytes()
            };
            std::fs::write(prefix.with_extension(e), data).unwrap();
        }
        let out = dir.join("out");
        for cmd in commands(prefix.to_str().unwrap(), out.to_str().unwrap()) {
            match run(&cmd, Duration::from_secs(10)) {
                Ok(c) => codes[c as usize] += 1,
                Err(why) => {
                    failed += 1;
                    // keep the mutant for the report
                    let keep = dir.join(format!("failed-{mutants}"));
                    std::fs::create_dir_all(&keep).unwrap();
                    for e in exts {
                        let _ =
                            std::fs::copy(prefix.with_extension(e), keep.join(format!("m.{e}")));
                    }
                    failures.push(format!(
                        "mutant {mutants} of {}.{}: orca {}: {why} (kept in {})",
                        logs[l],
                        exts[f],
                        cmd.join(" "),
                        keep.display()
                    ));
                }
            }
        }
        mutants += 1;
    }
    eprintln!(
        "fuzz: seed {seed}: {mutants} mutants, {} runs in {:.1} s: exit 0 {}, 1 {}, 2 {}, {failed} failed",
        mutants * 9,
        start.elapsed().as_secs_f64(),
        codes[0],
        codes[1],
        codes[2]
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}
