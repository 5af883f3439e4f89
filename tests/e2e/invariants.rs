//! The log never contradicts itself (docs/FORMAT.md, "Consistency"): real programs whose
//! logs the strict validator checks for two owners of one monitor or lock at once, and for
//! IDs that name two things.

use orca_tests::*;

/// Four threads on one monitor, then on one `ReentrantLock`, with the complete trace: no
/// acquisition is stamped before the previous owner's release. (HotSpot spins for a
/// contended monitor before it posts MonitorContendedEnter: before issue 25 an acquisition
/// without that event took its attempt's time, and about one in thirty of these overlapped
/// the previous holder's.)
#[test]
fn contended_monitor_and_lock_have_one_owner_at_a_time() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 5000;
    for jdk in jdks() {
        let run = run(
            "exclusive",
            jdk,
            "mode=instrument,trace=all,stackdepth=2",
            "Exclusive",
            &[&THREADS.to_string(), &ROUNDS.to_string()],
        );
        assert_eq!(run.code, Some(0), "{}: {}", jdk.label(), run.stderr);
        let total = THREADS * ROUNDS;
        assert!(
            run.stdout
                .contains(&format!("inMonitor={total} inLock={total}")),
            "{}: {}",
            jdk.label(),
            run.stdout
        );
        let monitor = run
            .stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix("monitor="))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .expect("the program prints the monitor's hash");
        let log = run.log();
        // Lost events would make an overlap a warning only: this run must lose none.
        assert!(
            !log.events.iter().any(|e| e.name == "EventsDropped"),
            "{}: events were dropped",
            jdk.label()
        );
        let entered = log
            .events
            .iter()
            .filter(|e| e.name == "MonitorEntered" && e.object == Some(monitor))
            .count();
        assert_eq!(entered, total, "{}", jdk.label());
        // The lock's synchronizer is the lock taken most (the JDK takes locks of its own).
        let mut per_lock = std::collections::HashMap::new();
        for e in &log.events {
            if e.name == "LockAcquired" && e.mode == Some('W') {
                *per_lock.entry(e.object).or_insert(0usize) += 1;
            }
        }
        assert_eq!(
            per_lock.values().max().copied(),
            Some(total),
            "{}",
            jdk.label()
        );
        assert_valid(&run, &log);
    }
}
