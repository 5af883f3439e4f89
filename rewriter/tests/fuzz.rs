//! Mutation fuzzing seeded from real classes: mutated class files must give
//! a result or an error, never a panic or a hang; when the mutated input
//! still parses with cafebabe and the rewriter changes it, the output must
//! parse too.
//!
//! Budget: ORCA_FUZZ_SECS seconds (default 20 in release, 3 in debug).
//! A failing input is written to $TMPDIR/orca-fuzz-crash.class.

mod common;
use common::mutate::{mutate, Rng};
use orca_rewriter::{rewrite, Config, Outcome};
use std::time::{Duration, Instant};

#[test]
fn mutation_fuzz_no_panic_no_hang() {
    let secs: u64 = std::env::var("ORCA_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 3 } else { 20 });
    let cfg = Config::default();
    // seeds: classes that the rewriter changes (they exercise the full path) and some that it does not
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    let mut plain = 0;
    for (_, name, b) in common::corpus(true).into_iter().filter(|c| {
        c.1.contains("java/util/concurrent")
            || c.1.contains("java/lang/")
            || c.1.contains("sun/nio")
    }) {
        let _ = name;
        match rewrite(&b, &cfg) {
            Ok(Outcome::Changed { .. }) if seeds.len() < 400 => seeds.push(b),
            Ok(_) if plain < 100 => {
                plain += 1;
                seeds.push(b)
            }
            _ => {}
        }
        if seeds.len() >= 500 {
            break;
        }
    }
    if seeds.is_empty() {
        eprintln!("no JDK jmods: fuzzing only a hand-made class");
        let mut b = common::ClassBuilder::new("t/F", 52);
        b.method(
            0x20,
            "m",
            "()V",
            Some(common::Code {
                max_stack: 1,
                max_locals: 1,
                code: vec![0x2a, 0xc2, 0x2a, 0xc3, 0xb1],
                exc: vec![],
                attrs: vec![],
            }),
        );
        seeds.push(b.build());
    }
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let start = Instant::now();
    let budget = Duration::from_secs(secs);
    let (mut execs, mut changed, mut errors, mut checked) = (0u64, 0u64, 0u64, 0u64);
    let mut slowest = Duration::ZERO;
    // silence panic messages of cafebabe (ours are re-raised below with the default hook)
    std::panic::set_hook(Box::new(|_| {}));
    while start.elapsed() < budget {
        for _ in 0..64 {
            let seed = &seeds[r.below(seeds.len())];
            let m = mutate(seed, &mut r);
            let t = Instant::now();
            let res = std::panic::catch_unwind(|| rewrite(&m, &cfg));
            let dt = t.elapsed();
            slowest = slowest.max(dt);
            execs += 1;
            let crash = std::env::temp_dir().join("orca-fuzz-crash.class");
            match res {
                Err(_) => {
                    std::fs::write(&crash, &m).unwrap();
                    let _ = std::panic::take_hook();
                    panic!("rewrite panicked; input saved to {}", crash.display());
                }
                Ok(Err(_)) => errors += 1,
                Ok(Ok(Outcome::Changed { bytes, .. })) => {
                    changed += 1;
                    // cafebabe itself may panic on malformed input: such mutants are not cross-checked
                    let parses = |b: &[u8]| {
                        std::panic::catch_unwind(|| cafebabe::parse_class(b).is_ok())
                            .unwrap_or(false)
                    };
                    if parses(&m) {
                        checked += 1;
                        if !parses(&bytes) {
                            std::fs::write(&crash, &m).unwrap();
                            let _ = std::panic::take_hook();
                            panic!(
                                "output of a parseable mutant does not parse; input saved to {}",
                                crash.display()
                            );
                        }
                    }
                }
                Ok(Ok(_)) => {}
            }
            if dt > Duration::from_secs(2) {
                let _ = std::panic::take_hook();
                panic!("rewrite took {dt:?} (hang?)");
            }
        }
    }
    let _ = std::panic::take_hook();
    eprintln!(
        "fuzz: {execs} executions in {:?} from {} seeds: {changed} changed ({checked} cross-checked with cafebabe), {errors} errors, slowest {slowest:?}",
        start.elapsed(),
        seeds.len()
    );
}
