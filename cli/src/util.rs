//! Small helpers shared by the subcommands: JSON string escaping, duration
//! formatting and a bounded-memory histogram for percentiles.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `s` as a JSON string literal (with quotes). Hand-written so the CLI needs
/// no serialization dependency.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Human duration: `812 ns`, `3.412 µs`, `12.004 ms`, `1.500 s`.
pub fn dur(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.3} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    }
}

/// Samples kept exactly before switching to buckets.
const EXACT: usize = 512;
/// Sub-buckets per power of two: relative error below 1/64.
const SUB_BITS: u32 = 6;

/// Durations for p50/p99/max. Exact for the first 512 samples, then a sparse
/// log-linear histogram (< 1.6 % error), so memory stays bounded however long
/// the log is.
#[derive(Debug, Default, Clone)]
pub struct Hist {
    exact: Vec<u64>,
    buckets: BTreeMap<u32, u64>,
    count: u64,
    total: u64,
    max: u64,
}

fn bucket(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = exp - SUB_BITS;
    let mant = (v >> shift) as u32 & ((1 << SUB_BITS) - 1);
    ((shift + 1) << SUB_BITS) | mant
}

fn bucket_value(b: u32) -> u64 {
    if b < (1 << SUB_BITS) {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) - 1;
    let mant = (b & ((1 << SUB_BITS) - 1)) as u64;
    // Upper edge of the bucket, so percentiles never under-report.
    (((1u64 << SUB_BITS) | mant) << shift) + (1u64 << shift) - 1
}

impl Hist {
    /// Adds one duration.
    pub fn add(&mut self, v: u64) {
        self.count += 1;
        self.total += v;
        self.max = self.max.max(v);
        if self.buckets.is_empty() && self.exact.len() < EXACT {
            self.exact.push(v);
            return;
        }
        for x in self.exact.drain(..) {
            *self.buckets.entry(bucket(x)).or_default() += 1;
        }
        *self.buckets.entry(bucket(v)).or_default() += 1;
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Sum of samples.
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }
    /// (upper edge, count) of each non-empty bucket, smallest first: the shape of the
    /// distribution for a histogram chart, in the same buckets the percentiles use.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        let mut m: BTreeMap<u32, u64> = self.buckets.clone();
        for &x in &self.exact {
            *m.entry(bucket(x)).or_default() += 1;
        }
        m.into_iter()
            .map(|(b, c)| (bucket_value(b).min(self.max), c))
            .collect()
    }
    /// Nearest-rank percentile `p` in 0..=100.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        if self.buckets.is_empty() {
            let mut v = self.exact.clone();
            v.sort_unstable();
            return v[(rank - 1) as usize];
        }
        let mut seen = 0;
        for (&b, &c) in &self.buckets {
            seen += c;
            if seen >= rank {
                return bucket_value(b).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut h = Hist::default();
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(
            (h.percentile(50.0), h.percentile(99.0), h.max()),
            (50, 99, 100)
        );
        let mut h = Hist::default();
        for v in 1..=100_000u64 {
            h.add(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 0.02, "{p50}");
        assert_eq!(h.max(), 100_000_000);
    }

    #[test]
    fn json_escape() {
        assert_eq!(json_str("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
