//! The log-linear bucket scheme of the `<histogram>` field of `MonitorHolds`
//! lines (docs/FORMAT.md, "Summary lines"): one definition for the validator,
//! the `orca` command and the tests. (The agent, the writer, has its own copy
//! on purpose: the reader checks it instead of sharing its assumptions.)

/// Sub-buckets per power of two (2^6 = 64): relative error below 1/64.
pub const SUB_BITS: u32 = 6;

/// The largest bucket index: that of `u64::MAX`.
pub const MAX_BUCKET: u32 = ((63 - SUB_BITS + 1) << SUB_BITS) | ((1 << SUB_BITS) - 1);

/// The bucket of a duration `v` (nanoseconds): `v` itself below 64; else,
/// with `exp = floor(log2 v)`, `shift = exp - 6` and `mant = (v >> shift) & 63`,
/// `((shift + 1) << 6) | mant`. Buckets grow with `v` and never decrease.
pub fn bucket(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = exp - SUB_BITS;
    let mant = (v >> shift) as u32 & ((1 << SUB_BITS) - 1);
    ((shift + 1) << SUB_BITS) | mant
}

/// The smallest value in bucket `b` (`b <= MAX_BUCKET`).
pub fn bucket_lower(b: u32) -> u64 {
    if b < (1 << SUB_BITS) {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) - 1;
    let mant = (b & ((1 << SUB_BITS) - 1)) as u64;
    ((1u64 << SUB_BITS) | mant) << shift
}

/// The largest value in bucket `b` (`b <= MAX_BUCKET`): what percentiles
/// report, so that they never under-report.
pub fn bucket_upper(b: u32) -> u64 {
    if b < (1 << SUB_BITS) {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) - 1;
    bucket_lower(b) + ((1u64 << shift) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(63), 63);
        assert_eq!(bucket(64), 64);
        assert_eq!(bucket(127), 127);
        assert_eq!(bucket(128), 128);
        assert_eq!(bucket(129), 128);
        assert_eq!(bucket(u64::MAX), MAX_BUCKET);
        for b in 0..=MAX_BUCKET {
            let (lo, hi) = (bucket_lower(b), bucket_upper(b));
            assert!(lo <= hi);
            assert_eq!((bucket(lo), bucket(hi)), (b, b), "bucket {b}");
            if b < MAX_BUCKET {
                assert_eq!(bucket_lower(b + 1), hi + 1, "bucket {b}");
            }
        }
        assert_eq!(bucket_upper(MAX_BUCKET), u64::MAX);
    }
}
