//! The one clock of all three files: `CLOCK_MONOTONIC`, which HotSpot also uses for
//! `System.nanoTime()` on Linux, so log timestamps line up with the program's own timings.

/// Nanoseconds on the monotonic clock.
pub fn now_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Appends `nanos` as `<seconds>.<9 digits>`, the timestamp syntax of docs/FORMAT.md.
pub fn push_timestamp(out: &mut Vec<u8>, nanos: u64) {
    use std::io::Write;
    let _ = write!(
        out,
        "{}.{:09}",
        nanos / 1_000_000_000,
        nanos % 1_000_000_000
    );
}
