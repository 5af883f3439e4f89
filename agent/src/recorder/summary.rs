//! One thread's monitor summaries: per (monitor, site) hold counts, times and histograms, and
//! lock-order edges, built from the tracker's records on the thread itself.
//!
//! Why: a complete trace costs an event line per `monitorenter` and `monitorexit`, millions a
//! second on a server. What a user reads from them (hold times per site, lock orders) is an
//! aggregate, so the agent aggregates at the source and writes a few lines per interval
//! (`MonitorHolds`, `LockOrder` in docs/FORMAT.md). The rules are those `orca report` and
//! `orca deadlocks` apply to a complete trace, so both give the same figures.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for the tables' small integer keys: SipHash (std's default,
/// resistant to chosen keys, which identity hashes are not) was a tenth of the agent's time.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Sub-buckets per power of two of the hold-time histogram (docs/FORMAT.md; the CLI's own
/// copy is in orca-format: writer and reader are kept apart on purpose).
const SUB_BITS: u32 = 6;

/// The histogram bucket of a duration in nanoseconds.
pub fn bucket(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros();
    let shift = exp - SUB_BITS;
    let mant = (v >> shift) as u32 & ((1 << SUB_BITS) - 1);
    ((shift + 1) << SUB_BITS) | mant
}

/// Octaves of the histogram: bucket `b` is in octave `b >> SUB_BITS`, the largest bucket is
/// `bucket(u64::MAX)`.
const OCTAVES: usize = 59;

/// Buckets a [`HoldStat`] keeps inline before it moves to octave arrays.
const INLINE_BUCKETS: usize = 4;

/// Holds of one monitor at one site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HoldStat {
    pub count: u64,
    pub total: u64,
    pub max: u64,
    histogram: Histogram,
}

/// Counts per bucket. Most keys are short-lived objects (a request's, a connection's) held a
/// few times: their few buckets stay inline, with no allocation. A key held often gets one
/// array of `2^SUB_BITS` counts per octave it uses, so adding a hold is two indexings (a
/// sorted list searched per hold was the agent's largest cost).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Histogram {
    Inline(u8, [(u32, u64); INLINE_BUCKETS]),
    Octaves(Vec<Option<Box<[u64; 1 << SUB_BITS]>>>),
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::Inline(0, [(0, 0); INLINE_BUCKETS])
    }
}

impl HoldStat {
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total += ns;
        self.max = self.max.max(ns);
        let b = bucket(ns);
        if let Histogram::Inline(n, entries) = &mut self.histogram {
            if let Some(e) = entries[..*n as usize].iter_mut().find(|e| e.0 == b) {
                e.1 += 1;
                return;
            }
            if (*n as usize) < INLINE_BUCKETS {
                entries[*n as usize] = (b, 1);
                *n += 1;
                return;
            }
            let mut octaves = vec![None; OCTAVES];
            for &(b, c) in entries.iter() {
                octave(&mut octaves, b)[b as usize & ((1 << SUB_BITS) - 1)] += c;
            }
            self.histogram = Histogram::Octaves(octaves);
        }
        if let Histogram::Octaves(octaves) = &mut self.histogram {
            octave(octaves, b)[b as usize & ((1 << SUB_BITS) - 1)] += 1;
        }
    }

    /// `(bucket, count)` of every bucket with holds, increasing.
    pub fn histogram(&self) -> Vec<(u32, u64)> {
        match &self.histogram {
            Histogram::Inline(n, entries) => {
                let mut v = entries[..*n as usize].to_vec();
                v.sort_unstable();
                v
            }
            Histogram::Octaves(octaves) => {
                let mut v = Vec::new();
                for (o, counts) in octaves.iter().enumerate() {
                    for (m, &c) in counts.iter().flat_map(|c| c.iter()).enumerate() {
                        if c > 0 {
                            v.push((((o << SUB_BITS) | m) as u32, c));
                        }
                    }
                }
                v
            }
        }
    }
}

/// The counts of the octave of bucket `b`, made on first use.
fn octave(octaves: &mut [Option<Box<[u64; 1 << SUB_BITS]>>], b: u32) -> &mut [u64; 1 << SUB_BITS] {
    octaves[b as usize >> SUB_BITS].get_or_insert_with(|| Box::new([0; 1 << SUB_BITS]))
}

/// A lock-order edge: `acquired` taken at `acquired_site` while `held` (taken at `held_site`)
/// was held, with the other monitors held then (`guards`, in hold order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeKey {
    pub held: u32,
    pub acquired: u32,
    pub held_site: u32,
    pub acquired_site: u32,
    pub guards: Vec<u32>,
}

/// A monitor the thread holds: how often (reentrancy), since when, from which site, and the
/// time already counted before an `Object.wait` paused the hold.
#[derive(Clone, Debug)]
struct Held {
    monitor: u32,
    count: u32,
    since: u64,
    site: u32,
    counted: u64,
}

/// One thread's aggregation state.
#[derive(Debug, Default)]
pub struct Summary {
    held: Vec<Held>,
    holds: FastMap<(u32, u32), HoldStat>,
    edges: FastMap<EdgeKey, u64>,
    /// The monitor of the last `enter`, whose orders are counted already.
    entering: Option<u32>,
    /// When the tables were last written (the interval's start).
    pub last_written: u64,
}

impl Summary {
    /// Empty tables; the first interval starts at `nanos`.
    pub fn starting(nanos: u64) -> Summary {
        Summary {
            last_written: nanos,
            ..Summary::default()
        }
    }

    /// The thread is about to take `monitor` at `site`: a lock-order occurrence for every
    /// monitor it holds, counted when attempted (so that an acquisition that blocks forever,
    /// a real deadlock, is in the thread's summary at exit).
    pub fn enter(&mut self, monitor: u32, site: u32) {
        self.entering = Some(monitor);
        if !self.held.iter().any(|h| h.monitor == monitor) {
            self.add_orders(monitor, site);
        }
    }

    fn add_orders(&mut self, monitor: u32, site: u32) {
        for (i, h) in self.held.iter().enumerate() {
            let guards = self
                .held
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, g)| g.monitor)
                .collect();
            *self
                .edges
                .entry(EdgeKey {
                    held: h.monitor,
                    acquired: monitor,
                    held_site: h.site,
                    acquired_site: site,
                    guards,
                })
                .or_default() += 1;
        }
    }

    /// The thread now holds `monitor`, taken at `site`.
    pub fn entered(&mut self, monitor: u32, site: u32, nanos: u64) {
        let entering = self.entering.take();
        if let Some(h) = self.held.iter_mut().find(|h| h.monitor == monitor) {
            h.count += 1; // reentrant: neither a new hold nor a new order
            return;
        }
        if entering != Some(monitor) {
            // a synchronized method: no enter before it
            self.add_orders(monitor, site);
        }
        self.held.push(Held {
            monitor,
            count: 1,
            since: nanos,
            site,
            counted: 0,
        });
    }

    /// The thread releases `monitor` once; an outermost release ends a hold.
    pub fn exited(&mut self, monitor: u32, nanos: u64) {
        let Some(i) = self.held.iter().position(|h| h.monitor == monitor) else {
            return; // its enter was not seen
        };
        self.held[i].count -= 1;
        if self.held[i].count == 0 {
            let h = self.held.remove(i);
            let ns = h.counted + nanos.saturating_sub(h.since);
            self.holds.entry((monitor, h.site)).or_default().add(ns);
        }
    }

    /// `Object.wait` on `object` released it: its hold pauses.
    pub fn wait(&mut self, object: u32, nanos: u64) {
        if let Some(h) = self.held.iter_mut().find(|h| h.monitor == object) {
            h.counted += nanos.saturating_sub(h.since);
            h.since = nanos;
        }
    }

    /// The wait returned: the monitor is held again.
    pub fn waited(&mut self, object: u32, nanos: u64) {
        if let Some(h) = self.held.iter_mut().find(|h| h.monitor == object) {
            h.since = nanos;
        }
    }

    /// Lines the next [`Summary::take`] would give.
    pub fn pending_lines(&self) -> usize {
        self.holds.len() + self.edges.len()
    }

    /// The interval's holds and edges, sorted (deterministic output); the tables start over.
    #[allow(clippy::type_complexity)]
    pub fn take(&mut self) -> (Vec<((u32, u32), HoldStat)>, Vec<(EdgeKey, u64)>) {
        let mut holds: Vec<_> = self.holds.drain().collect();
        holds.sort_by_key(|(k, _)| *k);
        let mut edges: Vec<_> = self.edges.drain().collect();
        edges.sort_by(|a, b| {
            (
                a.0.held,
                a.0.acquired,
                a.0.held_site,
                a.0.acquired_site,
                &a.0.guards,
            )
                .cmp(&(
                    b.0.held,
                    b.0.acquired,
                    b.0.held_site,
                    b.0.acquired_site,
                    &b.0.guards,
                ))
        });
        (holds, edges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_the_formats() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(63), 63);
        assert_eq!(bucket(64), 64);
        assert_eq!(bucket(127), 127);
        assert_eq!(bucket(128), 128);
        assert_eq!(bucket(129), 128);
        assert_eq!(bucket(130), 129);
        // monotonic
        let mut last = 0;
        for v in (0..1_000_000u64).step_by(7) {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
        }
    }

    #[test]
    fn outermost_holds_and_orders_as_the_report_counts_them() {
        let mut s = Summary::default();
        s.entered(1, 10, 100);
        s.entered(1, 11, 110); // reentrant
        s.entered(2, 20, 120); // edge 1 -> 2
        s.exited(2, 150);
        s.exited(1, 160);
        s.wait(1, 170);
        s.waited(1, 370);
        s.exited(1, 400); // 70 before the wait, 30 after
        let (holds, edges) = s.take();
        assert_eq!(holds.len(), 2);
        assert_eq!(holds[0].0, (1, 10));
        assert_eq!(holds[0].1.count, 1);
        assert_eq!(holds[0].1.total, 100);
        assert_eq!(holds[1].0, (2, 20));
        assert_eq!(holds[1].1.total, 30);
        assert_eq!(edges.len(), 1);
        assert_eq!(
            edges[0],
            (
                EdgeKey {
                    held: 1,
                    acquired: 2,
                    held_site: 10,
                    acquired_site: 20,
                    guards: vec![]
                },
                1
            )
        );
        assert_eq!(s.pending_lines(), 0);
    }

    #[test]
    fn guards_are_the_other_monitors_held() {
        let mut s = Summary::default();
        s.entered(1, 10, 0);
        s.enter(2, 20);
        s.entered(2, 20, 0);
        s.enter(3, 30);
        s.entered(3, 30, 0);
        let (_, edges) = s.take();
        let e: Vec<_> = edges
            .iter()
            .map(|(k, _)| (k.held, k.acquired, k.guards.clone()))
            .collect();
        assert_eq!(e, vec![(1, 2, vec![]), (1, 3, vec![2]), (2, 3, vec![1])]);
    }

    #[test]
    fn an_acquisition_that_never_completes_is_an_order() {
        let mut s = Summary::default();
        s.entered(1, 10, 0);
        s.enter(2, 20); // blocks forever
        let (_, edges) = s.take();
        assert_eq!(edges.len(), 1);
        assert_eq!((edges[0].0.held, edges[0].0.acquired), (1, 2));
    }

    #[test]
    fn histogram_sums_to_count() {
        let mut h = HoldStat::default();
        for v in [5, 5, 1000, 70, 1_000_000] {
            h.add(v);
        }
        let hist = h.histogram();
        assert_eq!(hist.iter().map(|e| e.1).sum::<u64>(), 5);
        assert!(hist.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(hist[0], (5, 2));
        assert_eq!(hist.last().unwrap().0, bucket(1_000_000));
        assert_eq!(h.max, 1_000_000);
        let mut top = HoldStat::default();
        top.add(u64::MAX);
        assert_eq!(top.histogram(), vec![(bucket(u64::MAX), 1)]);
        // Past the inline buckets: the same counts from the octave arrays.
        let mut many = HoldStat::default();
        let values: Vec<u64> = (0..200).map(|i| 100 + i * 997).collect();
        for &v in values.iter().chain(&values) {
            many.add(v);
        }
        let mut want: Vec<(u32, u64)> = Vec::new();
        for &v in &values {
            match want.iter_mut().find(|e| e.0 == bucket(v)) {
                Some(e) => e.1 += 2,
                None => want.push((bucket(v), 2)),
            }
        }
        want.sort_unstable();
        assert_eq!(many.histogram(), want);
    }
}
