//! The budget of long contentions written in full per site and second.
//!
//! Why: a contention that waited `contentionthreshold` or longer is written as its two events
//! with the stack and the owner, but a lock that a server's threads queue on all the time
//! blocks them for milliseconds hundreds of times a second, and each written example after
//! the first few tells a user nothing new. Per site (slot of this table) and second of the
//! monotonic clock a few are written; the others are counted with the short ones
//! (`MonitorContentions`, `LockContentions` in docs/FORMAT.md), so every contention is still
//! counted with its length.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::recorder::writer::Frame;

/// Long contentions written per site (slot) and second; as many as long waits per object
/// ([`WRITTEN_PER_SECOND`](crate::recorder::waiters::WRITTEN_PER_SECOND)).
pub const CONTENTIONS_PER_SECOND: u64 = 5;

/// Slots, by a hash of the site's frame: two sites that share one share its budget.
const SLOTS: usize = 4096;

/// Per slot: the second (bits 32..64, wrapping) and the lines written in it (bits 0..32).
static BUDGET: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

/// Whether a long contention at `site` ending at `nanos` may be written (and takes one of
/// its second's budget); `false`: it is counted instead.
pub fn take(site: Frame, nanos: u64) -> bool {
    let h = (site.method as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(site.location as u64)
        .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    let second = (nanos / 1_000_000_000) & 0xFFFF_FFFF;
    BUDGET[(h >> 52) as usize & (SLOTS - 1)]
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
            if b >> 32 != second {
                Some((second << 32) | 1)
            } else if b & 0xFFFF_FFFF < CONTENTIONS_PER_SECOND {
                Some(b + 1)
            } else {
                None
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_writes_a_few_a_second() {
        let site = Frame {
            method: 0x7777,
            location: 3,
        };
        let t = 1_000_000_000 * 4_000_000;
        let written = (0..20).filter(|i| take(site, t + i * 1000)).count() as u64;
        assert_eq!(written, CONTENTIONS_PER_SECOND);
        assert!(
            take(site, t + 1_000_000_000),
            "the next second has its own budget"
        );
    }
}
