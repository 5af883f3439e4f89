//! Small helpers shared by the subcommands: JSON string escaping, duration
//! formatting and a bounded-memory histogram for percentiles.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use orca_format::hist::{bucket, bucket_upper};

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

/// Whether a class (Java spelling, `java.util.HashMap`) is the JDK's own: its locks and
/// frames are folded away by default in the verdict, which is about the program.
pub fn is_jdk_class(name: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Whether a frame is in one of the JDK's own classes (unknown methods are not).
pub fn is_jdk_frame(md: &orca_format::Metadata, f: orca_format::Frame) -> bool {
    md.methods
        .get(&f.method)
        .and_then(|m| md.classes.get(&m.class))
        .is_some_and(|c| is_jdk_class(&orca_format::meta::java_class_name(&c.signature)))
}

/// `1 time`, `5 times`.
pub fn times(n: u64) -> String {
    if n == 1 {
        "1 time".into()
    } else {
        format!("{n} times")
    }
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

/// `total` of `timed` durations scaled to `timed + untimed` of them (the sample's mean times
/// the count; 0 with no sample).
pub fn estimate(total: u64, timed: u64, untimed: u64) -> u64 {
    if untimed == 0 || timed == 0 {
        return total;
    }
    (total as u128 * (timed + untimed) as u128 / timed as u128).min(u64::MAX as u128) as u64
}

/// Durations for p50/p99/max: a sparse log-linear histogram (the bucket scheme
/// of `MonitorHolds` lines, `orca_format::hist`: < 1.6 % error), so memory
/// stays bounded however long the log is, and holds computed from events and
/// from summary lines give the same percentiles.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hist {
    buckets: BTreeMap<u32, u64>,
    count: u64,
    total: u64,
    max: u64,
    /// Holds counted but not timed (`MonitorHoldsUntimed`, `holdtiming=sampled`): the timed
    /// ones are then a sample, and the total an estimate.
    untimed: u64,
    /// Holds seen in rows of a sample (`<sample>` above 1: guarded sites once the program
    /// passed the agent's exact budget), and the variance of their scaled count: the count is
    /// then an estimate, with an interval.
    sampled_seen: u64,
    sampled_scaled: u64,
    sampled_var: u128,
    /// What scaling added to `count` (the timed holds of rows of a sample, times k − 1).
    timed_scaled: u64,
    /// The estimated total of histograms merged ([`Hist::merge`]): the sum of their
    /// estimates, not the merged sample's mean times the merged count.
    estimated: Option<u64>,
}

impl Hist {
    /// Adds one duration.
    pub fn add(&mut self, v: u64) {
        self.count += 1;
        self.total += v;
        self.max = self.max.max(v);
        *self.buckets.entry(bucket(v)).or_default() += 1;
    }
    /// Adds an aggregate (one `MonitorHolds` line): `count` durations summing
    /// to `total`, the largest `max`, counted per bucket in `buckets`.
    pub fn add_summary(
        &mut self,
        count: u64,
        total: u64,
        max: u64,
        buckets: impl IntoIterator<Item = (u32, u64)>,
    ) {
        self.count += count;
        self.total += total;
        self.max = self.max.max(max);
        for (b, c) in buckets {
            *self.buckets.entry(b).or_default() += c;
        }
    }
    /// Adds `count` durations that were counted but not measured (`MonitorHoldsUntimed`).
    /// Adds the figures of one summary line.
    pub fn add_durations(&mut self, d: &orca_format::Durations) {
        self.add_durations_of(d, 1);
    }
    /// Adds the figures of one summary line of a sample of one hold in `sample`, scaled to
    /// the holds it stands for (as Go's profiles scale theirs).
    pub fn add_durations_of(&mut self, d: &orca_format::Durations, sample: u64) {
        let k = sample.max(1);
        self.seen(d.count, k);
        let buckets = d.histogram.buckets().map(|(b, c)| (b, c * k));
        self.add_summary(d.count * k, d.total * k, d.max, buckets);
        self.timed_scaled += d.count * (k - 1);
    }
    pub fn add_untimed(&mut self, count: u64) {
        self.add_untimed_of(count, 1);
    }
    /// [`Hist::add_untimed`] of a line of a sample of one hold in `sample`.
    pub fn add_untimed_of(&mut self, count: u64, sample: u64) {
        let k = sample.max(1);
        self.seen(count, k);
        self.untimed += count * k;
    }
    /// `n` holds seen in a row of one in `k`: each stands for `k`, and the variance of that
    /// count, taking every hold as drawn on its own with probability 1/k (the tracker draws
    /// per hold: OrcaSampler.gateTurn), is n·k·(k−1).
    fn seen(&mut self, n: u64, k: u64) {
        if k > 1 {
            self.sampled_seen += n;
            self.sampled_scaled += n * k;
            self.sampled_var += n as u128 * (k * (k - 1)) as u128;
        }
    }
    /// Caps an estimated total at `max` (an exclusive hold's at the recording's span); a
    /// measured total is left as it is.
    pub fn cap_total(&mut self, max: u64) {
        if self.is_estimate() && self.total() > max {
            self.estimated = Some(max);
        }
    }
    /// Holds seen in rows of a sample, when there were any: the count is then an estimate.
    pub fn sampled(&self) -> Option<u64> {
        (self.sampled_seen > 0).then_some(self.sampled_seen)
    }
    /// The 95% interval of the count when it is an estimate ([`Hist::sampled`]): the count
    /// less and plus 1.96 standard deviations, never below what was counted and seen.
    pub fn count_interval(&self) -> Option<(u64, u64)> {
        self.sampled()?;
        let half = 1.96 * (self.sampled_var as f64).sqrt();
        let c = self.count() as f64;
        let floor = (self.count() - self.sampled_scaled + self.sampled_seen) as f64;
        Some((
            (c - half).max(floor).round() as u64,
            (c + half).round() as u64,
        ))
    }
    /// Adds every sample of `o` (the holds of both modes of a j.u.c. lock, say); the total is
    /// the sum of both totals (the page's j.u.c. lock held the merged sample's mean times the
    /// merged count, not its modes' sum as the report has it).
    pub fn merge(&mut self, o: &Hist) {
        let total = self.total() + o.total();
        if self.untimed + o.untimed > 0 {
            self.estimated = Some(total);
        }
        self.untimed += o.untimed;
        self.sampled_seen += o.sampled_seen;
        self.sampled_scaled += o.sampled_scaled;
        self.sampled_var += o.sampled_var;
        self.timed_scaled += o.timed_scaled;
        self.count += o.count;
        self.total += o.total;
        self.max = self.max.max(o.max);
        for (&b, &c) in &o.buckets {
            *self.buckets.entry(b).or_default() += c;
        }
    }
    /// Number of durations, measured or only counted: exact either way, unless some rows
    /// were of a sample ([`Hist::sampled`]), whose holds are scaled to those they stand for.
    pub fn count(&self) -> u64 {
        self.count + self.untimed
    }
    /// Number of durations measured: the sample the total, percentiles and maximum come
    /// from (all of them unless [`Hist::is_estimate`]).
    pub fn timed(&self) -> u64 {
        self.count - self.timed_scaled
    }
    /// Whether some durations were counted but not measured: the total is then estimated
    /// from the sample, the percentiles are the sample's, and the maximum is the sample's.
    pub fn is_estimate(&self) -> bool {
        self.untimed > 0 || self.sampled_seen > 0
    }
    /// Sum of the durations; when [`Hist::is_estimate`], the sample's mean times the count
    /// (0 with no sample), or for merged histograms the sum of their estimates.
    pub fn total(&self) -> u64 {
        if let Some(t) = self.estimated {
            return t;
        }
        estimate(self.total, self.count, self.untimed)
    }
    /// Largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }
    /// (upper edge, count) of each non-empty bucket, smallest first: the shape of the
    /// distribution for a histogram chart, in the same buckets the percentiles use.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.buckets
            .iter()
            .map(|(&b, &c)| (bucket_upper(b).min(self.max), c))
            .collect()
    }
    /// Nearest-rank percentile `p` in 0..=100: the upper edge of the bucket
    /// holding that rank, capped at the maximum (exact below 128 ns).
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (&b, &c) in &self.buckets {
            seen += c;
            if seen >= rank {
                return bucket_upper(b).min(self.max);
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

    /// Rows of a sample (`<sample>` 16) stand for 16 times their holds, the count an estimate
    /// with the interval FORMAT.md gives; rows of every hold beside them count once.
    #[test]
    fn rows_of_a_sample_are_scaled_with_their_interval() {
        let line = "1.000000000,MonitorHolds,0000AAAA,00001111,100,1000,20,2;3:50;17:50,1;00000001;00000010,16";
        let rec = orca_format::parse_event_line(line.as_bytes()).unwrap();
        let orca_format::Event::MonitorHolds {
            durations, sample, ..
        } = rec.event
        else {
            panic!("{line}");
        };
        assert_eq!(sample, 16);
        let mut h = Hist::default();
        h.add_durations_of(&durations, sample);
        h.add_untimed_of(50, 16);
        h.add(7); // one hold of a row of every hold
        assert_eq!((h.count(), h.timed(), h.sampled()), (2401, 101, Some(150)));
        assert!(h.is_estimate());
        // 16 times the sample's 1000 ns, plus 7, then scaled by count / timed as ever
        assert_eq!(h.total(), (16_007u128 * 2401 / 1601) as u64);
        // 2401 ± 1.96·√(150·16·15) = ±372
        assert_eq!(h.count_interval(), Some((2029, 2773)));
        let mut exact = Hist::default();
        exact.add_durations_of(&durations, 1);
        assert_eq!((exact.sampled(), exact.count_interval()), (None, None));
        assert!(!exact.is_estimate());
    }

    /// An estimated total is capped (an exclusive hold's at the recording's span), a measured
    /// one never.
    #[test]
    fn only_estimates_are_capped() {
        let mut h = Hist::default();
        h.add(900);
        h.add_untimed(1);
        assert_eq!(h.total(), 1800);
        h.cap_total(1000);
        assert_eq!(h.total(), 1000);
        let mut m = Hist::default();
        m.add(900);
        m.add(900);
        m.cap_total(1000);
        assert_eq!(m.total(), 1800);
    }

    /// Untimed holds are counted exactly; the total is scaled from the timed sample.
    #[test]
    fn estimates_from_a_sample() {
        let mut h = Hist::default();
        h.add(100);
        h.add(300);
        assert!(!h.is_estimate());
        h.add_untimed(6);
        assert!(h.is_estimate());
        assert_eq!(
            (h.count(), h.timed(), h.total(), h.max()),
            (8, 2, 1600, 300)
        );
        assert_eq!(h.percentile(50.0), 100);
        let mut only = Hist::default();
        only.add_untimed(3);
        assert_eq!((only.count(), only.timed(), only.total()), (3, 0, 0));
        let mut m = Hist::default();
        m.merge(&h);
        assert_eq!((m.count(), m.total()), (8, 1600));
        // Merged, the totals add up (the merged sample's mean, 1400 / 3, times 10 would be
        // 4666): the page's j.u.c. lock holds both modes, and the report adds their totals.
        let mut k = Hist::default();
        k.add(1000);
        k.add_untimed(1);
        m.merge(&k);
        assert_eq!((m.count(), m.timed(), m.total()), (10, 3, 3600));
    }

    /// Summary lines of many intervals add up to the same histogram as the
    /// durations added one by one.
    #[test]
    fn summaries_sum_across_intervals() {
        let durations: Vec<u64> = (1..=3000u64).map(|i| i * i * 37 % 90_000_001).collect();
        let mut one_by_one = Hist::default();
        for &v in &durations {
            one_by_one.add(v);
        }
        let mut summed = Hist::default();
        for interval in durations.chunks(7) {
            let mut part = Hist::default();
            for &v in interval {
                part.add(v);
            }
            let buckets: Vec<(u32, u64)> = part.buckets.iter().map(|(b, c)| (*b, *c)).collect();
            summed.add_summary(part.count(), part.total(), part.max(), buckets);
        }
        assert_eq!(summed, one_by_one);
        for p in [0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(summed.percentile(p), one_by_one.percentile(p), "p{p}");
        }
        assert_eq!(summed.percentile(100.0), summed.max());
    }

    #[test]
    fn json_escape() {
        assert_eq!(json_str("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
