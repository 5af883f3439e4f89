//! Typed records of the three Orca files and their strict, zero-copy parsers.
//!
//! Every parser here checks its line against the exact syntax of docs/FORMAT.md
//! and borrows free text and stack traces from the line instead of copying
//! them, so that parsing a multi-gigabyte `.orca` file allocates nothing per
//! line.

use std::borrow::Cow;
use std::fmt;

use thiserror::Error;

/// What is wrong with one line, independently of any other line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SyntaxError {
    /// FORMAT.md: "There are no empty lines."
    #[error("empty line")]
    EmptyLine,
    /// A line of `.orca` whose second field names no known event.
    #[error("unknown event kind `{0}`")]
    UnknownEvent(String),
    /// Too few or too many `,`-separated fields for the record.
    #[error("{record}: expected {expected} fields, found {found}")]
    FieldCount {
        /// The record (event kind or file) being parsed.
        record: String,
        /// Fields its syntax has.
        expected: usize,
        /// Fields the line has.
        found: usize,
    },
    /// One field does not match its syntax.
    #[error("field {index} ({field}) `{value}`: {problem}")]
    Field {
        /// 1-based position of the field in the line.
        index: usize,
        /// Its name in FORMAT.md, e.g. `timestamp`.
        field: &'static str,
        /// The offending text (lossily decoded, cut to 80 bytes).
        value: String,
        /// What is wrong with it.
        problem: String,
    },
}

fn field_err(
    index: usize,
    field: &'static str,
    value: &[u8],
    problem: impl Into<String>,
) -> SyntaxError {
    let cut = &value[..value.len().min(80)];
    SyntaxError::Field {
        index,
        field,
        value: String::from_utf8_lossy(cut).into_owned(),
        problem: problem.into(),
    }
}

/// A point on the monotonic clock, in nanoseconds (`<seconds>.<9 digits>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Nanoseconds since the clock's origin.
    pub fn nanos(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

/// An identity hash (thread, object, monitor, class IDs): 8 uppercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash(pub u32);

impl Hash {
    /// `00000000`, which FORMAT.md uses for "unknown" (owner thread only).
    pub const UNKNOWN: Hash = Hash(0);
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08X}", self.0)
    }
}

/// A method ID assigned by the agent, resolved through `PREFIX.methods`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MethodId(pub u32);

impl fmt::Display for MethodId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08X}", self.0)
    }
}

/// Bytecode index used for frames of native methods (`FFFFFFFF`).
pub const NATIVE_LOCATION: u32 = 0xFFFF_FFFF;

/// One stack frame: a method and a bytecode index in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The method, to look up in `PREFIX.methods`.
    pub method: MethodId,
    /// Bytecode index, or [`NATIVE_LOCATION`].
    pub location: u32,
}

impl Frame {
    /// Whether this is a native method's frame (no bytecode index).
    pub fn is_native(&self) -> bool {
        self.location == NATIVE_LOCATION
    }
}

/// A validated stack trace, borrowed from its line: frames are decoded on
/// demand by [`StackTrace::frames`], so events whose stacks are not looked at
/// cost nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackTrace<'a> {
    depth: u32,
    /// `<m>;<l>;<m>;<l>...` without the depth, already checked.
    pairs: &'a [u8],
    raw: &'a [u8],
}

impl<'a> StackTrace<'a> {
    /// Number of frames.
    pub fn depth(&self) -> u32 {
        self.depth
    }
    /// No stack: a field the line leaves out (a `MonitorContentions` line of an older agent).
    pub const NONE: StackTrace<'static> = StackTrace {
        depth: 0,
        pairs: b"",
        raw: b"",
    };

    /// This stack, or `site` when it is [`StackTrace::NONE`] (a contentions line's stack,
    /// which an older agent's log leaves out).
    pub fn or_site(self, site: StackTrace<'a>) -> StackTrace<'a> {
        if self.is_empty() {
            site
        } else {
            self
        }
    }

    /// Whether the trace is `0` (empty or missing).
    pub fn is_empty(&self) -> bool {
        self.depth == 0
    }
    /// The field as written, e.g. `1;00000001;00000004`.
    pub fn raw(&self) -> &'a str {
        // Checked to be ASCII when parsed; converted only when asked for.
        std::str::from_utf8(self.raw).unwrap_or_default()
    }
    /// Frames, innermost (the caller of the tracked method) first.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = Frame> + 'a {
        let pairs = self.pairs;
        (0..self.depth as usize).map(move |i| {
            let p = &pairs[i * 18..];
            Frame {
                method: MethodId(hex8_unchecked(&p[1..9])),
                location: hex8_unchecked(&p[10..18]),
            }
        })
    }
    /// The innermost frame, if any.
    pub fn top(&self) -> Option<Frame> {
        self.frames().next()
    }
}

/// Escaped text (thread name, source file, JVM name) borrowed from its line.
/// It was checked at parse time, so [`Text::decode`] cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text<'a>(&'a str);

impl<'a> Text<'a> {
    /// The text as written in the file (escaped).
    pub fn raw(&self) -> &'a str {
        self.0
    }
    /// The text with every `%XX` replaced by its byte; borrowed when nothing was escaped.
    pub fn decode(&self) -> Cow<'a, str> {
        unescape(self.0)
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.decode())
    }
}

/// Replaces each `%XX` by byte 0xXX. Only meaningful on text that passed the
/// parser's checks (every escape then stands for an ASCII byte, so the result
/// is valid UTF-8); malformed escapes are left as they are.
pub fn unescape(s: &str) -> Cow<'_, str> {
    if !s.as_bytes().contains(&b'%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hexval(c)),
                b.get(i + 2).and_then(|&c| hexval(c)),
            ) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// Escapes `s` as FORMAT.md says (free text when `free`, JVM name otherwise):
/// the inverse of [`unescape`], for writing fixtures and tests.
pub fn escape(s: &str, free: bool) -> String {
    let mut bytes = Vec::with_capacity(s.len());
    for &c in s.as_bytes() {
        if needs_escape(c, free) {
            bytes.extend_from_slice(format!("%{c:02X}").as_bytes());
        } else {
            bytes.push(c);
        }
    }
    String::from_utf8(bytes).expect("escaping keeps UTF-8")
}

fn needs_escape(c: u8, free: bool) -> bool {
    c == b'%' || c == b',' || c < 0x20 || c == 0x7F || (free && c == b';')
}

fn hexval(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Value of each byte as an uppercase hex digit, 0xFF when it is not one.
/// A table lookup per digit, without branches, is what keeps stack parsing fast.
const HEX: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

fn hex8_unchecked(b: &[u8]) -> u32 {
    let mut v = 0u32;
    for &c in &b[..8] {
        v = (v << 4) | (HEX[c as usize] & 0x0F) as u32;
    }
    v
}

/// Parses exactly 8 uppercase hex digits.
fn hex8(b: &[u8]) -> Option<u32> {
    let b: &[u8; 8] = b.try_into().ok()?;
    let mut v = 0u32;
    let mut bad = 0u8;
    for &c in b {
        let d = HEX[c as usize];
        bad |= d;
        v = (v << 4) | (d & 0x0F) as u32;
    }
    // Valid digits are < 16, so bit 7 is set only by an invalid byte.
    (bad & 0x80 == 0).then_some(v)
}

/// Parses a decimal `0|[1-9][0-9]*` that fits in u64.
fn decimal_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty()
        || (b[0] == b'0' && b.len() > 1)
        || b.len() > 19
        || !b.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    Some(b.iter().fold(0u64, |v, &c| v * 10 + (c - b'0') as u64))
}

/// Parses a decimal `0|[1-9][0-9]*` that fits in u32.
fn decimal(b: &[u8]) -> Option<u32> {
    if b.is_empty() || (b[0] == b'0' && b.len() > 1) || b.len() > 10 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    u32::try_from(v).ok()
}

fn parse_timestamp(b: &[u8], index: usize) -> Result<Timestamp, SyntaxError> {
    let err = |p: &str| field_err(index, "timestamp", b, p);
    let dot = match memchr::memchr(b'.', b) {
        Some(d) => d,
        None => return Err(err("no `.`; expected <seconds>.<9 digits>")),
    };
    let (secs, frac) = (&b[..dot], &b[dot + 1..]);
    if secs.is_empty() || !secs.iter().all(u8::is_ascii_digit) {
        return Err(err("seconds must be decimal digits"));
    }
    if secs.len() > 1 && secs[0] == b'0' {
        return Err(err("seconds have a leading zero"));
    }
    if frac.len() != 9 || !frac.iter().all(u8::is_ascii_digit) {
        return Err(err("expected exactly 9 fraction digits"));
    }
    if secs.len() > 11 {
        return Err(err("seconds out of range"));
    }
    let mut s = 0u64;
    for &c in secs {
        s = s * 10 + (c - b'0') as u64;
    }
    let mut n = 0u64;
    for &c in frac {
        n = n * 10 + (c - b'0') as u64;
    }
    s.checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(n))
        .map(Timestamp)
        .ok_or_else(|| err("seconds out of range"))
}

fn parse_hash(
    b: &[u8],
    index: usize,
    field: &'static str,
    allow_zero: bool,
) -> Result<Hash, SyntaxError> {
    match hex8(b) {
        Some(0) if !allow_zero => Err(field_err(
            index,
            field,
            b,
            "00000000 (unknown) is not allowed here",
        )),
        Some(v) => Ok(Hash(v)),
        None => Err(field_err(
            index,
            field,
            b,
            "expected 8 uppercase hex digits",
        )),
    }
}

/// Parses a `<stackTrace>` field (`index` is its 1-based position, for errors).
pub fn parse_stack(b: &[u8], index: usize) -> Result<StackTrace<'_>, SyntaxError> {
    let err = |p: String| field_err(index, "stackTrace", b, p);
    let semi = memchr::memchr(b';', b).unwrap_or(b.len());
    let depth = decimal(&b[..semi])
        .ok_or_else(|| err("depth must be a decimal number without leading zeros".into()))?;
    let pairs = &b[semi..];
    let expected = depth as u64 * 18;
    if pairs.len() as u64 != expected {
        let found = if pairs.is_empty() {
            0
        } else {
            pairs.split(|&c| c == b';').count() - 1
        };
        if found % 2 == 1 {
            return Err(err(format!(
                "depth {depth} but an odd number ({found}) of items follow"
            )));
        }
        return Err(err(format!(
            "depth {depth} but {} (methodID;jlocation) pairs follow, or they are not 8 hex digits each",
            found / 2
        )));
    }
    for i in 0..depth as usize {
        let p = &pairs[i * 18..i * 18 + 18];
        if p[0] != b';' || p[9] != b';' {
            return Err(err(format!("frame {}: expected `;` separators", i + 1)));
        }
        let m = hex8(&p[1..9]).ok_or_else(|| {
            err(format!(
                "frame {}: methodID must be 8 uppercase hex digits",
                i + 1
            ))
        })?;
        if m == 0 {
            return Err(err(format!(
                "frame {}: methodID 00000000 is never assigned",
                i + 1
            )));
        }
        hex8(&p[10..18]).ok_or_else(|| {
            err(format!(
                "frame {}: jlocation must be 8 uppercase hex digits",
                i + 1
            ))
        })?;
    }
    // Everything checked is ASCII.
    Ok(StackTrace {
        depth,
        pairs,
        raw: b,
    })
}

/// A site of a summary line: a stack trace of exactly one frame.
fn parse_site<'a>(
    b: &'a [u8],
    index: usize,
    field: &'static str,
) -> Result<StackTrace<'a>, SyntaxError> {
    let st = parse_stack(b, index).map_err(|e| match e {
        SyntaxError::Field {
            index,
            value,
            problem,
            ..
        } => SyntaxError::Field {
            index,
            field,
            value,
            problem,
        },
        e => e,
    })?;
    if st.depth() != 1 {
        return Err(field_err(
            index,
            field,
            b,
            format!(
                "a site is exactly one frame (1;<methodID>;<location>), found depth {}",
                st.depth()
            ),
        ));
    }
    Ok(st)
}

/// A decimal count that must be at least 1.
fn parse_count(b: &[u8], index: usize, field: &'static str) -> Result<u64, SyntaxError> {
    match decimal_u64(b) {
        Some(0) => Err(field_err(index, field, b, "must be >= 1")),
        Some(v) => Ok(v),
        None => Err(field_err(
            index,
            field,
            b,
            "expected a decimal number without leading zeros",
        )),
    }
}

/// A hold row's optional `<sample>`: its holds are a sample of one in this many (at least 2;
/// absent, 1: every hold).
fn parse_sample(b: Option<&[u8]>, index: usize) -> Result<u64, SyntaxError> {
    let Some(b) = b else {
        return Ok(1);
    };
    match decimal_u64(b) {
        Some(v) if v >= 2 => Ok(v),
        _ => Err(field_err(
            index,
            "sample",
            b,
            "expected a decimal number of at least 2 (the row's holds are one in that many)",
        )),
    }
}

/// A decimal number of nanoseconds.
fn parse_nanos(b: &[u8], index: usize, field: &'static str) -> Result<u64, SyntaxError> {
    decimal_u64(b).ok_or_else(|| {
        field_err(
            index,
            field,
            b,
            "expected a decimal number without leading zeros",
        )
    })
}

/// `<n>;<item1>;...;<itemK>` with exactly `K = n * per` items: the count `n`
/// and the items (without allocating: summary lines are parsed like events).
fn counted_items<'a>(
    b: &'a [u8],
    index: usize,
    field: &'static str,
    per: usize,
) -> Result<(u32, impl Iterator<Item = &'a [u8]> + Clone), SyntaxError> {
    let mut it = b.split(|&c| c == b';');
    let nb = it.next().unwrap_or_default();
    let n = decimal(nb).ok_or_else(|| {
        field_err(
            index,
            field,
            b,
            "the count must be a decimal number without leading zeros",
        )
    })?;
    let found = memchr::memchr_iter(b';', b).count() as u64;
    let expected = n as u64 * per as u64;
    if found != expected {
        return Err(field_err(
            index,
            field,
            b,
            format!("count {n} but {found} items follow (expected {expected})"),
        ));
    }
    Ok((n, it))
}

/// Parses a `<histogram>`: returns it, the sum of its counts and its last bucket.
///
/// Two forms (docs/FORMAT.md): the steps form the agent writes, `<n>;<item1>;...;<itemN>`,
/// and the pairs form of older logs, `<n>;<bucket1>;<count1>;...`. The number of items after
/// `<n>` tells them apart (`n` against `2n`, and `n >= 1`), so an old log stays readable.
fn parse_histogram(b: &[u8], index: usize) -> Result<(Histogram<'_>, u64, u32), SyntaxError> {
    let field = "histogram";
    let items = memchr::memchr_iter(b';', b).count() as u64;
    let n = decimal(b.split(|&c| c == b';').next().unwrap_or_default());
    if n.is_some_and(|n| n > 0 && items == 2 * n as u64) {
        return parse_histogram_pairs(b, index);
    }
    let err = |msg: String| field_err(index, field, b, msg);
    if let Some(n) = n.filter(|&n| items != n as u64) {
        return Err(err(format!(
            "count {n} but {items} items follow (expected {n}, or {} in the pairs form of older logs)",
            2 * n as u64
        )));
    }
    let (n, mut items) = counted_items(b, index, field, 1)?;
    let max = crate::hist::MAX_BUCKET;
    let mut sum = 0u64;
    let mut prev: Option<u32> = None;
    for i in 1..=n {
        let item = items.next().unwrap_or_default();
        let (step, count) = match memchr::memchr(b':', item) {
            Some(at) => (&item[..at], Some(&item[at + 1..])),
            None => (item, None),
        };
        let step = decimal(step).ok_or_else(|| {
            err(format!(
                "item {i}: expected <step> or <step>:<count>, decimal numbers without leading zeros"
            ))
        })?;
        let bucket = match prev {
            None => step,
            Some(_) if step == 0 => {
                return Err(err(format!(
                    "item {i}: step 0 (buckets must be strictly increasing)"
                )))
            }
            Some(p) => p.saturating_add(step),
        };
        if bucket > max {
            return Err(err(format!(
                "item {i}: bucket {bucket} is above the largest bucket, {max}"
            )));
        }
        prev = Some(bucket);
        let c = match count.map(decimal_u64) {
            None => 1,
            Some(Some(c)) if c >= 2 => c,
            Some(_) => {
                return Err(err(format!(
                    "item {i}: a count after `:` must be a decimal number above 1 without leading zeros (a count of 1 is written as the step alone)"
                )))
            }
        };
        sum = sum
            .checked_add(c)
            .ok_or_else(|| err("the counts' sum is out of range".into()))?;
    }
    let h = Histogram {
        n,
        raw: b,
        steps: true,
    };
    Ok((h, sum, prev.unwrap_or(0)))
}

/// The pairs form of [`parse_histogram`], written by agents before 2026-11-27.
fn parse_histogram_pairs(b: &[u8], index: usize) -> Result<(Histogram<'_>, u64, u32), SyntaxError> {
    let field = "histogram";
    let (n, mut items) = counted_items(b, index, field, 2)?;
    let mut sum = 0u64;
    let mut prev: Option<u32> = None;
    for i in 1..=n {
        let pair = [
            items.next().unwrap_or_default(),
            items.next().unwrap_or_default(),
        ];
        let bucket = decimal(pair[0])
            .filter(|&v| v <= crate::hist::MAX_BUCKET)
            .ok_or_else(|| {
                field_err(
                    index,
                    field,
                    b,
                    format!(
                        "pair {i}: the bucket must be a decimal number from 0 to {}",
                        crate::hist::MAX_BUCKET
                    ),
                )
            })?;
        if let Some(p) = prev {
            if bucket <= p {
                return Err(field_err(
                    index,
                    field,
                    b,
                    format!("pair {i}: bucket {bucket} is not above the previous bucket {p} (buckets must be strictly increasing)"),
                ));
            }
        }
        prev = Some(bucket);
        let c = match decimal_u64(pair[1]) {
            Some(0) => {
                return Err(field_err(
                    index,
                    field,
                    b,
                    format!("pair {i}: count must be > 0"),
                ))
            }
            Some(c) => c,
            None => {
                return Err(field_err(
                    index,
                    field,
                    b,
                    format!("pair {i}: count must be a decimal number without leading zeros"),
                ))
            }
        };
        sum = sum
            .checked_add(c)
            .ok_or_else(|| field_err(index, field, b, "the counts' sum is out of range"))?;
    }
    let h = Histogram {
        n,
        raw: b,
        steps: false,
    };
    Ok((h, sum, prev.unwrap_or(0)))
}

/// The `<count>,<totalNanos>,<maxNanos>,<histogram>` of a `MonitorHolds`, `LockHolds`,
/// `MonitorContentions` or `LockContentions` line, `first` being the index of `<count>`:
/// every rule of FORMAT.md checked.
fn parse_durations(
    [c, tot, mx, h]: [&[u8]; 4],
    first: usize,
) -> Result<Durations<'_>, SyntaxError> {
    let count = parse_count(c, first, "count")?;
    let total = parse_nanos(tot, first + 1, "totalNanos")?;
    let max = parse_nanos(mx, first + 2, "maxNanos")?;
    if max > total {
        return Err(field_err(
            first + 2,
            "maxNanos",
            mx,
            format!("greater than totalNanos {total}"),
        ));
    }
    let mean = total.div_ceil(count);
    if max < mean {
        return Err(field_err(
            first + 2,
            "maxNanos",
            mx,
            format!("below the mean hold, ceil(totalNanos / count) = {mean}"),
        ));
    }
    let (histogram, sum, last) = parse_histogram(h, first + 3)?;
    if sum != count {
        return Err(field_err(
            first + 3,
            "histogram",
            h,
            format!("counts sum to {sum}, but count is {count}"),
        ));
    }
    if last != crate::hist::bucket(max) {
        return Err(field_err(
            first + 3,
            "histogram",
            h,
            format!(
                "the last bucket is {last}, but maxNanos {max} is in bucket {}",
                crate::hist::bucket(max)
            ),
        ));
    }
    Ok(Durations {
        count,
        total,
        max,
        histogram,
    })
}

/// The figures of a summary line of timed holds or contentions (`MonitorHolds`, `LockHolds`,
/// `MonitorContentions`, `LockContentions`): one type, so that a consumer sums a monitor's
/// and a lock's, or holds and contentions, with the same code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Durations<'a> {
    /// How many holds (contended acquisitions).
    pub count: u64,
    /// Their durations (waits) summed, ns.
    pub total: u64,
    /// The longest, ns.
    pub max: u64,
    /// Every one in its bucket ([`crate::hist`]).
    pub histogram: Histogram<'a>,
}

/// Parses `<guards>`: distinct monitors, neither `held` nor `acquired`.
fn parse_guards(
    b: &[u8],
    index: usize,
    held: Hash,
    acquired: Hash,
) -> Result<HashList<'_>, SyntaxError> {
    let field = "guards";
    let (n, items) = counted_items(b, index, field, 1)?;
    for (i, item) in items.clone().enumerate() {
        let i = i + 1;
        let h = match hex8(item) {
            Some(v) if v != 0 => Hash(v),
            _ => {
                return Err(field_err(
                    index,
                    field,
                    b,
                    format!("guard {i}: expected 8 uppercase hex digits, not 00000000"),
                ))
            }
        };
        let problem = if h == held {
            Some("is the heldMonitor")
        } else if h == acquired {
            Some("is the acquiredMonitor")
        } else if items.clone().take(i - 1).any(|g| g == item) {
            Some("is listed twice")
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(field_err(index, field, b, format!("guard {i} ({h}) {p}")));
        }
    }
    Ok(HashList { n, raw: b })
}

/// The `<histogram>` of a `MonitorHolds` line, borrowed from it and already
/// checked: its buckets strictly increasing with their counts (see [`crate::hist`]), in
/// either form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Histogram<'a> {
    n: u32,
    raw: &'a [u8],
    /// The steps form; else the pairs form of older logs.
    steps: bool,
}

impl<'a> Histogram<'a> {
    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.n as usize
    }
    /// Whether it has no pairs.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// The field as written.
    pub fn raw(&self) -> &'a str {
        std::str::from_utf8(self.raw).unwrap_or_default()
    }
    /// `(bucket, count)` pairs, buckets increasing.
    pub fn buckets(&self) -> impl Iterator<Item = (u32, u64)> + 'a {
        let mut it = self.raw.split(|&c| c == b';').skip(1);
        let steps = self.steps;
        let mut bucket = None::<u32>;
        std::iter::from_fn(move || {
            if !steps {
                let b = it.next()?;
                let c = it.next()?;
                return Some((decimal(b)?, decimal_u64(c)?));
            }
            let item = it.next()?;
            let (step, count) = match memchr::memchr(b':', item) {
                Some(at) => (decimal(&item[..at])?, decimal_u64(&item[at + 1..])?),
                None => (decimal(item)?, 1),
            };
            let b = bucket.map_or(step, |p| p + step);
            bucket = Some(b);
            Some((b, count))
        })
    }
}

/// The `<guards>` of a `LockOrder` line, borrowed from it and already checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HashList<'a> {
    n: u32,
    raw: &'a [u8],
}

impl<'a> HashList<'a> {
    /// Number of hashes.
    pub fn len(&self) -> usize {
        self.n as usize
    }
    /// Whether it is `0`.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// The field as written.
    pub fn raw(&self) -> &'a str {
        std::str::from_utf8(self.raw).unwrap_or_default()
    }
    /// The hashes, in the order written (hold order).
    pub fn iter(&self) -> impl Iterator<Item = Hash> + 'a {
        self.raw
            .split(|&c| c == b';')
            .skip(1)
            .map(|h| Hash(hex8_unchecked(h)))
    }
}

/// Checks escaped text: valid UTF-8, no raw byte that must be escaped, every
/// `%` followed by two uppercase hex digits naming a byte that must be escaped.
fn parse_text<'a>(
    b: &'a [u8],
    index: usize,
    field: &'static str,
    free: bool,
) -> Result<Text<'a>, SyntaxError> {
    let s = std::str::from_utf8(b).map_err(|_| field_err(index, field, b, "not valid UTF-8"))?;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            let v = match (
                b.get(i + 1).and_then(|&c| hexval(c)),
                b.get(i + 2).and_then(|&c| hexval(c)),
            ) {
                (Some(h), Some(l)) => h * 16 + l,
                _ => {
                    return Err(field_err(
                        index,
                        field,
                        b,
                        format!(
                            "byte {}: `%` must be followed by two uppercase hex digits",
                            i + 1
                        ),
                    ))
                }
            };
            if !needs_escape(v, free) {
                return Err(field_err(
                    index,
                    field,
                    b,
                    format!(
                        "byte {}: %{v:02X} escapes a byte that must be written as it is",
                        i + 1
                    ),
                ));
            }
            i += 3;
            continue;
        }
        if needs_escape(c, free) {
            return Err(field_err(
                index,
                field,
                b,
                format!("byte {}: 0x{c:02X} must be escaped", i + 1),
            ));
        }
        i += 1;
    }
    Ok(Text(s))
}

/// Splits a line into at most `N` fields, or reports the field count.
/// `N` fields and an optional one after them.
type Fields<'a, const N: usize> = ([&'a [u8]; N], Option<&'a [u8]>);

/// [`split`] for a record whose `N` fields may be followed by one more, optional.
fn split_opt<'a, const N: usize>(
    line: &'a [u8],
    record: &str,
) -> Result<Fields<'a, N>, SyntaxError> {
    let err = match split::<N>(line, record) {
        Ok(f) => return Ok((f, None)),
        Err(e) => e,
    };
    let Some(p) = memchr::memrchr(b',', line) else {
        return Err(err);
    };
    match split::<N>(&line[..p], record) {
        Ok(f) => Ok((f, Some(&line[p + 1..]))),
        Err(_) => Err(err),
    }
}

fn split<'a, const N: usize>(line: &'a [u8], record: &str) -> Result<[&'a [u8]; N], SyntaxError> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut rest = line;
    for (i, slot) in out.iter_mut().enumerate() {
        if i + 1 == N {
            if memchr::memchr(b',', rest).is_some() {
                return Err(SyntaxError::FieldCount {
                    record: record.to_string(),
                    expected: N,
                    found: line.split(|&c| c == b',').count(),
                });
            }
            *slot = rest;
        } else {
            match memchr::memchr(b',', rest) {
                Some(p) => {
                    *slot = &rest[..p];
                    rest = &rest[p + 1..];
                }
                None => {
                    return Err(SyntaxError::FieldCount {
                        record: record.to_string(),
                        expected: N,
                        found: line.split(|&c| c == b',').count(),
                    })
                }
            }
        }
    }
    Ok(out)
}

/// One line of `PREFIX.classtable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassRecord<'a> {
    /// When the agent wrote it.
    pub timestamp: Timestamp,
    /// Identity hash of the `java.lang.Class`.
    pub class: Hash,
    /// JVM type signature, e.g. `Ljava/lang/Object;` (escaped as a JVM name).
    pub signature: Text<'a>,
    /// `SourceFile` attribute, empty when the class has none (escaped free text).
    pub source_file: Text<'a>,
}

/// Parses one line (without `\n`) of `PREFIX.classtable`.
pub fn parse_class_line(line: &[u8]) -> Result<ClassRecord<'_>, SyntaxError> {
    if line.is_empty() {
        return Err(SyntaxError::EmptyLine);
    }
    let [ts, id, sig, src] = split::<4>(line, "classtable line")?;
    let signature = parse_text(sig, 3, "classSignature", false)?;
    if sig.is_empty() {
        return Err(field_err(3, "classSignature", sig, "empty class signature"));
    }
    Ok(ClassRecord {
        timestamp: parse_timestamp(ts, 1)?,
        class: parse_hash(id, 2, "classID", false)?,
        signature,
        source_file: parse_text(src, 4, "sourceFileName", true)?,
    })
}

/// A method's `LineNumberTable`, borrowed from its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTable<'a> {
    /// `None` for `-1` (no table), else the number of entries.
    count: Option<u32>,
    pairs: &'a [u8],
}

impl<'a> LineTable<'a> {
    /// Whether the method has a table at all (`-1` means it has none).
    pub fn is_present(&self) -> bool {
        self.count.is_some()
    }
    /// Entries `(start_location, line_number)` in the JVM's order.
    pub fn entries(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let pairs = self.pairs;
        (0..self.count.unwrap_or(0) as usize).map(move |i| {
            let p = &pairs[i * 18..];
            (hex8_unchecked(&p[1..9]), hex8_unchecked(&p[10..18]))
        })
    }
}

/// Source line of bytecode index `location` in a line table: the entry with the
/// greatest start location not above it (FORMAT.md / JVMS 4.7.12).
pub fn line_for(entries: &[(u32, u32)], location: u32) -> Option<u32> {
    entries
        .iter()
        .filter(|(start, _)| *start <= location)
        .max_by_key(|(start, _)| *start)
        .map(|&(_, line)| line)
}

/// One line of `PREFIX.methods`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodRecord<'a> {
    /// When the agent wrote it.
    pub timestamp: Timestamp,
    /// The ID events use.
    pub method: MethodId,
    /// e.g. `main`, `<init>` (escaped as a JVM name).
    pub name: Text<'a>,
    /// Descriptor, e.g. `([Ljava/lang/String;)V` (escaped as a JVM name).
    pub signature: Text<'a>,
    /// Declaring class, in `PREFIX.classtable`.
    pub class: Hash,
    /// The line table.
    pub line_table: LineTable<'a>,
}

/// Parses one line (without `\n`) of `PREFIX.methods`.
pub fn parse_method_line(line: &[u8]) -> Result<MethodRecord<'_>, SyntaxError> {
    if line.is_empty() {
        return Err(SyntaxError::EmptyLine);
    }
    let [ts, id, name, sig, class, table] = split::<6>(line, "methods line")?;
    let timestamp = parse_timestamp(ts, 1)?;
    let method = match hex8(id) {
        Some(0) => return Err(field_err(2, "methodID", id, "00000000 is never assigned")),
        Some(v) => MethodId(v),
        None => {
            return Err(field_err(
                2,
                "methodID",
                id,
                "expected 8 uppercase hex digits",
            ))
        }
    };
    let name_t = parse_text(name, 3, "methodName", false)?;
    if name.is_empty() {
        return Err(field_err(3, "methodName", name, "empty method name"));
    }
    let sig_t = parse_text(sig, 4, "methodSignature", false)?;
    if sig.is_empty() {
        return Err(field_err(
            4,
            "methodSignature",
            sig,
            "empty method signature",
        ));
    }
    let class = parse_hash(class, 5, "classID", false)?;
    let line_table = parse_line_table(table)?;
    Ok(MethodRecord {
        timestamp,
        method,
        name: name_t,
        signature: sig_t,
        class,
        line_table,
    })
}

fn parse_line_table(b: &[u8]) -> Result<LineTable<'_>, SyntaxError> {
    let err = |p: String| field_err(6, "lineTable", b, p);
    if b == b"-1" {
        return Ok(LineTable {
            count: None,
            pairs: &[],
        });
    }
    let semi = memchr::memchr(b';', b).unwrap_or(b.len());
    let count = decimal(&b[..semi])
        .ok_or_else(|| err("count must be -1 or a decimal number without leading zeros".into()))?;
    let pairs = &b[semi..];
    if pairs.len() as u64 != count as u64 * 18 {
        let items = if pairs.is_empty() {
            0
        } else {
            pairs.split(|&c| c == b';').count() - 1
        };
        return Err(err(format!(
            "count {count} but {items} items follow (expected {} pairs of 8 hex digits)",
            count
        )));
    }
    for i in 0..count as usize {
        let p = &pairs[i * 18..i * 18 + 18];
        if p[0] != b';' || p[9] != b';' || hex8(&p[1..9]).is_none() || hex8(&p[10..18]).is_none() {
            return Err(err(format!(
                "entry {}: expected ;<startLocation>;<lineNumber>, 8 uppercase hex digits each",
                i + 1
            )));
        }
    }
    Ok(LineTable {
        count: Some(count),
        pairs,
    })
}

/// The kind of an event line (its second field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum EventKind {
    ThreadStarted,
    ThreadEnded,
    ObjectWait,
    ObjectWaited,
    ObjectNotify,
    ObjectNotifyAll,
    ThreadStart,
    ThreadJoin,
    ThreadJoined,
    ThreadSleep,
    ThreadSlept,
    SemaphoreAcquire,
    SemaphoreAcquired,
    SemaphoreRelease,
    MonitorContendedEnter,
    MonitorContendedEntered,
    MonitorEnter,
    MonitorEntered,
    MonitorExit,
    MonitorHolds,
    MonitorHoldsUntimed,
    LockOrder,
    MonitorHold,
    LockHolds,
    LockHoldsUntimed,
    LockHold,
    Notifies,
    Waits,
    MonitorContentions,
    LockContentions,
    LockAcquire,
    LockAcquired,
    LockFailed,
    LockTimedOut,
    LockInterrupted,
    LockRelease,
    LockHeldAtStart,
    ConditionAwait,
    ConditionAwaited,
    ConditionSignal,
    ConditionSignalAll,
    ThreadPark,
    ThreadParked,
    ThreadUnpark,
    EventsDropped,
    ObjectClass,
    RecordingStarted,
    RecordingEnded,
}

impl EventKind {
    /// Every kind, in FORMAT.md's order.
    pub const ALL: [EventKind; 48] = [
        EventKind::ThreadStarted,
        EventKind::ThreadEnded,
        EventKind::ObjectWait,
        EventKind::ObjectWaited,
        EventKind::ObjectNotify,
        EventKind::ObjectNotifyAll,
        EventKind::ThreadStart,
        EventKind::ThreadJoin,
        EventKind::ThreadJoined,
        EventKind::ThreadSleep,
        EventKind::ThreadSlept,
        EventKind::SemaphoreAcquire,
        EventKind::SemaphoreAcquired,
        EventKind::SemaphoreRelease,
        EventKind::MonitorContendedEnter,
        EventKind::MonitorContendedEntered,
        EventKind::MonitorEnter,
        EventKind::MonitorEntered,
        EventKind::MonitorExit,
        EventKind::MonitorHolds,
        EventKind::MonitorHoldsUntimed,
        EventKind::LockOrder,
        EventKind::MonitorHold,
        EventKind::LockHolds,
        EventKind::LockHoldsUntimed,
        EventKind::LockHold,
        EventKind::Notifies,
        EventKind::Waits,
        EventKind::MonitorContentions,
        EventKind::LockContentions,
        EventKind::LockAcquire,
        EventKind::LockAcquired,
        EventKind::LockFailed,
        EventKind::LockTimedOut,
        EventKind::LockInterrupted,
        EventKind::LockRelease,
        EventKind::LockHeldAtStart,
        EventKind::ConditionAwait,
        EventKind::ConditionAwaited,
        EventKind::ConditionSignal,
        EventKind::ConditionSignalAll,
        EventKind::ThreadPark,
        EventKind::ThreadParked,
        EventKind::ThreadUnpark,
        EventKind::EventsDropped,
        EventKind::ObjectClass,
        EventKind::RecordingStarted,
        EventKind::RecordingEnded,
    ];

    /// The name as written in the file.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::ThreadStarted => "ThreadStarted",
            EventKind::ThreadEnded => "ThreadEnded",
            EventKind::ObjectWait => "ObjectWait",
            EventKind::ObjectWaited => "ObjectWaited",
            EventKind::ObjectNotify => "ObjectNotify",
            EventKind::ObjectNotifyAll => "ObjectNotifyAll",
            EventKind::ThreadStart => "ThreadStart",
            EventKind::ThreadJoin => "ThreadJoin",
            EventKind::ThreadJoined => "ThreadJoined",
            EventKind::ThreadSleep => "ThreadSleep",
            EventKind::ThreadSlept => "ThreadSlept",
            EventKind::SemaphoreAcquire => "SemaphoreAcquire",
            EventKind::SemaphoreAcquired => "SemaphoreAcquired",
            EventKind::SemaphoreRelease => "SemaphoreRelease",
            EventKind::MonitorContendedEnter => "MonitorContendedEnter",
            EventKind::MonitorContendedEntered => "MonitorContendedEntered",
            EventKind::MonitorEnter => "MonitorEnter",
            EventKind::MonitorEntered => "MonitorEntered",
            EventKind::MonitorExit => "MonitorExit",
            EventKind::MonitorHolds => "MonitorHolds",
            EventKind::MonitorHoldsUntimed => "MonitorHoldsUntimed",
            EventKind::LockOrder => "LockOrder",
            EventKind::MonitorHold => "MonitorHold",
            EventKind::LockHolds => "LockHolds",
            EventKind::LockHoldsUntimed => "LockHoldsUntimed",
            EventKind::LockHold => "LockHold",
            EventKind::Notifies => "Notifies",
            EventKind::Waits => "Waits",
            EventKind::MonitorContentions => "MonitorContentions",
            EventKind::LockContentions => "LockContentions",
            EventKind::LockAcquire => "LockAcquire",
            EventKind::LockAcquired => "LockAcquired",
            EventKind::LockFailed => "LockFailed",
            EventKind::LockTimedOut => "LockTimedOut",
            EventKind::LockInterrupted => "LockInterrupted",
            EventKind::LockRelease => "LockRelease",
            EventKind::LockHeldAtStart => "LockHeldAtStart",
            EventKind::ConditionAwait => "ConditionAwait",
            EventKind::ConditionAwaited => "ConditionAwaited",
            EventKind::ConditionSignal => "ConditionSignal",
            EventKind::ConditionSignalAll => "ConditionSignalAll",
            EventKind::ThreadPark => "ThreadPark",
            EventKind::ThreadParked => "ThreadParked",
            EventKind::ThreadUnpark => "ThreadUnpark",
            EventKind::EventsDropped => "EventsDropped",
            EventKind::ObjectClass => "ObjectClass",
            EventKind::RecordingStarted => "RecordingStarted",
            EventKind::RecordingEnded => "RecordingEnded",
        }
    }

    /// Whether this is a summary line (`MonitorHolds`, `MonitorHoldsUntimed`, `LockHolds`,
    /// `LockHoldsUntimed`, `LockOrder`, `Notifies`, `Waits`): an aggregate over an interval, not one event (FORMAT.md,
    /// "Summary lines").
    pub fn is_summary(self) -> bool {
        matches!(
            self,
            EventKind::MonitorHolds
                | EventKind::MonitorHoldsUntimed
                | EventKind::LockHolds
                | EventKind::LockHoldsUntimed
                | EventKind::LockOrder
                | EventKind::Notifies
                | EventKind::Waits
                | EventKind::MonitorContentions
                | EventKind::LockContentions
        )
    }

    /// Whether the line has an `<object>` field after the thread.
    pub fn has_object(self) -> bool {
        !matches!(
            self,
            EventKind::ThreadStarted
                | EventKind::ThreadEnded
                | EventKind::ThreadSleep
                | EventKind::ThreadSlept
                | EventKind::EventsDropped
                | EventKind::RecordingStarted
                | EventKind::RecordingEnded
        )
    }

    /// Whether the line has a `<mode>` field after the lock (the j.u.c. lock lines).
    pub fn has_mode(self) -> bool {
        matches!(
            self,
            EventKind::LockAcquire
                | EventKind::LockAcquired
                | EventKind::LockFailed
                | EventKind::LockTimedOut
                | EventKind::LockInterrupted
                | EventKind::LockRelease
                | EventKind::LockHeldAtStart
        )
    }

    /// Whether the line has a `<lock>` field after the condition (the `Condition*` lines).
    pub fn has_condition_lock(self) -> bool {
        matches!(
            self,
            EventKind::ConditionAwait
                | EventKind::ConditionAwaited
                | EventKind::ConditionSignal
                | EventKind::ConditionSignalAll
        )
    }

    /// Whether the line ends with a stack trace.
    pub fn has_stack(self) -> bool {
        !matches!(
            self,
            EventKind::ThreadStarted
                | EventKind::ThreadEnded
                | EventKind::ObjectClass
                | EventKind::EventsDropped
                | EventKind::RecordingStarted
                | EventKind::RecordingEnded
        )
    }

    /// Whether this is a long-hold event (`MonitorHold`, `LockHold`): one hold that is
    /// also counted in a summary line, so readers do not add it to hold statistics again.
    pub fn is_long_hold(self) -> bool {
        matches!(self, EventKind::MonitorHold | EventKind::LockHold)
    }

    /// Looks a kind up by its name in the file.
    pub fn from_name(b: &[u8]) -> Option<EventKind> {
        // A `match` on the bytes dispatches on length and compares once,
        // instead of scanning `ALL` on every line.
        Some(match b {
            b"ThreadStarted" => EventKind::ThreadStarted,
            b"ThreadEnded" => EventKind::ThreadEnded,
            b"ObjectWait" => EventKind::ObjectWait,
            b"ObjectWaited" => EventKind::ObjectWaited,
            b"ObjectNotify" => EventKind::ObjectNotify,
            b"ObjectNotifyAll" => EventKind::ObjectNotifyAll,
            b"ThreadStart" => EventKind::ThreadStart,
            b"ThreadJoin" => EventKind::ThreadJoin,
            b"ThreadJoined" => EventKind::ThreadJoined,
            b"ThreadSleep" => EventKind::ThreadSleep,
            b"ThreadSlept" => EventKind::ThreadSlept,
            b"SemaphoreAcquire" => EventKind::SemaphoreAcquire,
            b"SemaphoreAcquired" => EventKind::SemaphoreAcquired,
            b"SemaphoreRelease" => EventKind::SemaphoreRelease,
            b"MonitorContendedEnter" => EventKind::MonitorContendedEnter,
            b"MonitorContendedEntered" => EventKind::MonitorContendedEntered,
            b"MonitorEnter" => EventKind::MonitorEnter,
            b"MonitorEntered" => EventKind::MonitorEntered,
            b"MonitorExit" => EventKind::MonitorExit,
            b"MonitorHolds" => EventKind::MonitorHolds,
            b"MonitorHoldsUntimed" => EventKind::MonitorHoldsUntimed,
            b"LockOrder" => EventKind::LockOrder,
            b"MonitorHold" => EventKind::MonitorHold,
            b"LockHolds" => EventKind::LockHolds,
            b"LockHoldsUntimed" => EventKind::LockHoldsUntimed,
            b"LockHold" => EventKind::LockHold,
            b"Notifies" => EventKind::Notifies,
            b"Waits" => EventKind::Waits,
            b"MonitorContentions" => EventKind::MonitorContentions,
            b"LockContentions" => EventKind::LockContentions,
            b"LockAcquire" => EventKind::LockAcquire,
            b"LockAcquired" => EventKind::LockAcquired,
            b"LockFailed" => EventKind::LockFailed,
            b"LockTimedOut" => EventKind::LockTimedOut,
            b"LockInterrupted" => EventKind::LockInterrupted,
            b"LockRelease" => EventKind::LockRelease,
            b"LockHeldAtStart" => EventKind::LockHeldAtStart,
            b"ConditionAwait" => EventKind::ConditionAwait,
            b"ConditionAwaited" => EventKind::ConditionAwaited,
            b"ConditionSignal" => EventKind::ConditionSignal,
            b"ConditionSignalAll" => EventKind::ConditionSignalAll,
            b"ThreadPark" => EventKind::ThreadPark,
            b"ThreadParked" => EventKind::ThreadParked,
            b"ThreadUnpark" => EventKind::ThreadUnpark,
            b"EventsDropped" => EventKind::EventsDropped,
            b"ObjectClass" => EventKind::ObjectClass,
            b"RecordingStarted" => EventKind::RecordingStarted,
            b"RecordingEnded" => EventKind::RecordingEnded,
            _ => return None,
        })
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The call of a `Notifies` line (`<call>`): one that wakes waiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WakeCall {
    /// `Object.notify`.
    Notify,
    /// `Object.notifyAll`.
    NotifyAll,
    /// `Condition.signal`.
    Signal,
    /// `Condition.signalAll`.
    SignalAll,
    /// `LockSupport.unpark`.
    Unpark,
    /// `Semaphore.release` (instrumentation mode's summaries).
    Release,
    /// `Thread.start` (instrumentation mode's summaries): it wakes nobody, and is counted so
    /// that a program that starts a thread per task does not write a stack per start.
    Start,
}

impl WakeCall {
    /// The name written in the log.
    pub fn name(self) -> &'static str {
        match self {
            WakeCall::Notify => "notify",
            WakeCall::NotifyAll => "notifyAll",
            WakeCall::Signal => "signal",
            WakeCall::SignalAll => "signalAll",
            WakeCall::Unpark => "unpark",
            WakeCall::Release => "release",
            WakeCall::Start => "start",
        }
    }

    /// The call named `b` in a `Notifies` line.
    pub fn from_name(b: &[u8]) -> Option<WakeCall> {
        [
            WakeCall::Notify,
            WakeCall::NotifyAll,
            WakeCall::Signal,
            WakeCall::SignalAll,
            WakeCall::Unpark,
            WakeCall::Release,
            WakeCall::Start,
        ]
        .into_iter()
        .find(|c| c.name().as_bytes() == b)
    }

    /// The call of an event kind that wakes waiters.
    pub fn of(kind: EventKind) -> Option<WakeCall> {
        Some(match kind {
            EventKind::ObjectNotify => WakeCall::Notify,
            EventKind::ObjectNotifyAll => WakeCall::NotifyAll,
            EventKind::ConditionSignal => WakeCall::Signal,
            EventKind::ConditionSignalAll => WakeCall::SignalAll,
            EventKind::ThreadUnpark => WakeCall::Unpark,
            EventKind::SemaphoreRelease => WakeCall::Release,
            EventKind::ThreadStart => WakeCall::Start,
            _ => return None,
        })
    }
}

/// The call of a `Waits` line (`<call>`): one that waits to be woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WaitCall {
    /// `Object.wait` (`ObjectWait`/`ObjectWaited`).
    Wait,
    /// `Condition.await*` (`ConditionAwait`/`ConditionAwaited`).
    Await,
    /// `LockSupport.park*` (`ThreadPark`/`ThreadParked`).
    Park,
    /// `Semaphore.acquire*`, `tryAcquire` (`SemaphoreAcquire`/`SemaphoreAcquired`).
    Acquire,
    /// `Thread.join*` (`ThreadJoin`/`ThreadJoined`), `<object>` the joined thread.
    Join,
    /// `Thread.sleep*` (`ThreadSleep`/`ThreadSlept`), `<object>` `00000000`.
    Sleep,
}

impl WaitCall {
    /// The name written in the log.
    pub fn name(self) -> &'static str {
        match self {
            WaitCall::Wait => "wait",
            WaitCall::Await => "await",
            WaitCall::Park => "park",
            WaitCall::Acquire => "acquire",
            WaitCall::Join => "join",
            WaitCall::Sleep => "sleep",
        }
    }

    /// The call named `b` in a `Waits` line.
    pub fn from_name(b: &[u8]) -> Option<WaitCall> {
        [
            WaitCall::Wait,
            WaitCall::Await,
            WaitCall::Park,
            WaitCall::Acquire,
            WaitCall::Join,
            WaitCall::Sleep,
        ]
        .into_iter()
        .find(|c| c.name().as_bytes() == b)
    }

    /// The call of a wait's exit event kind.
    pub fn of_exit(kind: EventKind) -> Option<WaitCall> {
        Some(match kind {
            EventKind::ObjectWaited => WaitCall::Wait,
            EventKind::ConditionAwaited => WaitCall::Await,
            EventKind::ThreadParked => WaitCall::Park,
            EventKind::SemaphoreAcquired => WaitCall::Acquire,
            EventKind::ThreadJoined => WaitCall::Join,
            EventKind::ThreadSlept => WaitCall::Sleep,
            _ => return None,
        })
    }
}

/// How a `java.util.concurrent` lock is taken (`<mode>`): `W` exclusive, `R` shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// `R`: a read view.
    Read,
    /// `W`: `ReentrantLock`, a write view.
    Write,
}

impl LockMode {
    /// The letter written in the log.
    pub fn letter(self) -> char {
        match self {
            LockMode::Read => 'R',
            LockMode::Write => 'W',
        }
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

fn parse_mode(b: &[u8], index: usize) -> Result<LockMode, SyntaxError> {
    match b {
        b"R" => Ok(LockMode::Read),
        b"W" => Ok(LockMode::Write),
        _ => Err(field_err(index, "mode", b, "expected `R` or `W`")),
    }
}

/// Which of the `Lock*` lines after `LockAcquire` an [`Event::Lock`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockOp {
    /// `LockAcquired`: the thread holds the lock.
    Acquired,
    /// `LockFailed`: `tryLock()` returned false.
    Failed,
    /// `LockTimedOut`: the timed `tryLock` returned false.
    TimedOut,
    /// `LockInterrupted`: the acquisition ended by an exception.
    Interrupted,
    /// `LockRelease`: `unlock` returned normally.
    Release,
}

impl LockOp {
    /// The kind of line that writes it.
    pub fn kind(self) -> EventKind {
        match self {
            LockOp::Acquired => EventKind::LockAcquired,
            LockOp::Failed => EventKind::LockFailed,
            LockOp::TimedOut => EventKind::LockTimedOut,
            LockOp::Interrupted => EventKind::LockInterrupted,
            LockOp::Release => EventKind::LockRelease,
        }
    }
}

/// Which `Condition*` line an [`Event::Condition`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConditionOp {
    /// `ConditionAwait`.
    Await,
    /// `ConditionAwaited`.
    Awaited,
    /// `ConditionSignal`.
    Signal,
    /// `ConditionSignalAll`.
    SignalAll,
}

/// One event of `PREFIX.orca` (without its timestamp, see [`EventRecord`]).
/// Fields borrow from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Event<'a> {
    ThreadStarted {
        thread: Hash,
        name: Text<'a>,
    },
    ThreadEnded {
        thread: Hash,
    },
    ObjectWait {
        thread: Hash,
        object: Hash,
        stack: StackTrace<'a>,
    },
    ObjectWaited {
        thread: Hash,
        object: Hash,
        stack: StackTrace<'a>,
    },
    ObjectNotify {
        thread: Hash,
        object: Hash,
        stack: StackTrace<'a>,
    },
    ObjectNotifyAll {
        thread: Hash,
        object: Hash,
        stack: StackTrace<'a>,
    },
    ThreadStart {
        thread: Hash,
        started: Hash,
        stack: StackTrace<'a>,
    },
    ThreadJoin {
        thread: Hash,
        joined: Hash,
        stack: StackTrace<'a>,
    },
    ThreadJoined {
        thread: Hash,
        joined: Hash,
        stack: StackTrace<'a>,
    },
    ThreadSleep {
        thread: Hash,
        stack: StackTrace<'a>,
    },
    ThreadSlept {
        thread: Hash,
        stack: StackTrace<'a>,
    },
    SemaphoreAcquire {
        thread: Hash,
        semaphore: Hash,
        stack: StackTrace<'a>,
    },
    SemaphoreAcquired {
        thread: Hash,
        semaphore: Hash,
        stack: StackTrace<'a>,
    },
    SemaphoreRelease {
        thread: Hash,
        semaphore: Hash,
        stack: StackTrace<'a>,
    },
    /// `owner` is [`Hash::UNKNOWN`] when the owner had already released it.
    MonitorContendedEnter {
        thread: Hash,
        monitor: Hash,
        owner: Hash,
        stack: StackTrace<'a>,
    },
    MonitorContendedEntered {
        thread: Hash,
        monitor: Hash,
        stack: StackTrace<'a>,
    },
    MonitorEnter {
        thread: Hash,
        monitor: Hash,
        stack: StackTrace<'a>,
    },
    MonitorEntered {
        thread: Hash,
        monitor: Hash,
        stack: StackTrace<'a>,
    },
    MonitorExit {
        thread: Hash,
        monitor: Hash,
        stack: StackTrace<'a>,
    },
    /// Summary: `durations.count` outermost holds of `monitor` acquired at `site` (one
    /// frame), their lengths in `durations`.
    MonitorHolds {
        thread: Hash,
        monitor: Hash,
        durations: Durations<'a>,
        site: StackTrace<'a>,
        /// The row's holds are a sample of one hold in `sample` (1: every hold; guarded
        /// sites once the program passed the agent's exact budget, FORMAT.md).
        sample: u64,
    },
    /// Summary (`holdtiming=sampled`): `count` further outermost holds of `monitor` acquired
    /// at `site` (one frame) that were counted but not timed; the key's `MonitorHolds` lines
    /// are the timed ones, a sample of all.
    MonitorHoldsUntimed {
        thread: Hash,
        monitor: Hash,
        count: u64,
        site: StackTrace<'a>,
        /// As [`Event::MonitorHolds`]'s.
        sample: u64,
    },
    /// Summary: `acquired` taken `count` times at `acquired_site` while holding
    /// `held` (taken at `held_site`) and the `guards`; sites are one frame.
    LockOrder {
        thread: Hash,
        held: Hash,
        acquired: Hash,
        count: u64,
        guards: HashList<'a>,
        held_site: StackTrace<'a>,
        acquired_site: StackTrace<'a>,
    },
    /// One hold of `monitor` that lasted `nanos`, ending at the line's timestamp.
    MonitorHold {
        thread: Hash,
        monitor: Hash,
        nanos: u64,
        stack: StackTrace<'a>,
    },
    /// Summary: `durations.count` outermost holds of j.u.c. lock `lock` in `mode` acquired
    /// at `site` (one frame), as [`Event::MonitorHolds`].
    LockHolds {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        durations: Durations<'a>,
        site: StackTrace<'a>,
    },
    /// Summary: `durations.count` contended entries of `monitor` at `site` (one frame) that
    /// were counted instead of written (shorter than the agent's `contentionthreshold`, or
    /// long beyond their site's budget), their waits in `durations`, all with `stack` (its
    /// top frame is `site`; [`StackTrace::NONE`] in an older agent's log, or for the site's
    /// contentions beyond the stacks it keeps apart).
    MonitorContentions {
        thread: Hash,
        monitor: Hash,
        durations: Durations<'a>,
        site: StackTrace<'a>,
        stack: StackTrace<'a>,
    },
    /// Summary: the same for contended acquisitions of j.u.c. lock `lock` in `mode`.
    LockContentions {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        durations: Durations<'a>,
        site: StackTrace<'a>,
        stack: StackTrace<'a>,
    },
    /// Summary (`holdtiming=sampled`): `count` further outermost holds of j.u.c. lock `lock`
    /// in `mode` acquired at `site` (one frame) that were counted but not timed, as
    /// [`Event::MonitorHoldsUntimed`].
    LockHoldsUntimed {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        count: u64,
        site: StackTrace<'a>,
    },
    /// One hold of j.u.c. lock `lock` in `mode` that lasted `nanos`, ending at the
    /// line's timestamp (its `LockRelease`); acquired at `site` (one frame), released
    /// at `stack` (the `unlock` call).
    LockHold {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        nanos: u64,
        site: StackTrace<'a>,
        stack: StackTrace<'a>,
    },
    /// A recording started in a running JVM saw `unlock` end a hold of `lock` in `mode`
    /// whose acquisition it did not see: the hold began before the recording (`stack`: the
    /// `unlock` call).
    LockHeldAtStart {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        stack: StackTrace<'a>,
    },
    /// Summary: `count` calls of `call` at `site` (one frame) that woke no wait of the
    /// agent's wait threshold (no thread waiting on their object, condition or thread, or
    /// only threads that had waited less).
    Notifies {
        thread: Hash,
        call: WakeCall,
        count: u64,
        site: StackTrace<'a>,
    },
    /// Summary: `count` waits (`call`) on `object` (a monitor, a condition's lock, a park's
    /// blocker; [`Hash::UNKNOWN`]: other objects, or a park without a blocker) at `site` (one frame), each shorter than the agent's wait
    /// threshold, `total` and `max` nanoseconds long; not written as events; all with `stack`
    /// (its top frame is `site`; [`StackTrace::NONE`] in an older agent's log).
    Waits {
        thread: Hash,
        call: WaitCall,
        object: Hash,
        count: u64,
        total: u64,
        max: u64,
        site: StackTrace<'a>,
        stack: StackTrace<'a>,
    },
    /// A j.u.c. lock acquisition begins; `owner` is the synchronizer's exclusive
    /// owner then ([`Hash::UNKNOWN`]: none).
    LockAcquire {
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        owner: Hash,
        stack: StackTrace<'a>,
    },
    /// The end of a j.u.c. acquisition, or a release.
    Lock {
        op: LockOp,
        thread: Hash,
        lock: Hash,
        mode: LockMode,
        stack: StackTrace<'a>,
    },
    /// A `Condition` call on `condition`, created by `lock`'s synchronizer.
    Condition {
        op: ConditionOp,
        thread: Hash,
        condition: Hash,
        lock: Hash,
        stack: StackTrace<'a>,
    },
    /// `blocker` is [`Hash::UNKNOWN`] when the park has none.
    ThreadPark {
        thread: Hash,
        blocker: Hash,
        stack: StackTrace<'a>,
    },
    ThreadParked {
        thread: Hash,
        blocker: Hash,
        stack: StackTrace<'a>,
    },
    /// `unparked` is [`Hash::UNKNOWN`] for `unpark(null)`.
    ThreadUnpark {
        thread: Hash,
        unparked: Hash,
        stack: StackTrace<'a>,
    },
    EventsDropped {
        count: u64,
    },
    /// The class of an object other lines name (no thread).
    ObjectClass {
        object: Hash,
        /// JVM type signature, escaped as a JVM name.
        class: Text<'a>,
    },
    /// The agent's first line: the settings that decide how the other lines are read
    /// (FORMAT.md, "Agent events").
    RecordingStarted {
        settings: Settings<'a>,
    },
    /// The agent's last line: the recording ended in order (FORMAT.md, "Agent events").
    RecordingEnded {
        how: RecordingEnd,
    },
}

/// The settings of a `RecordingStarted` line: `key=value` items separated by `;`, each key
/// once. Keys a reader does not know are allowed (a later agent may say more); the values of
/// the keys it knows are checked, so that a reader can trust what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings<'a>(&'a str);

impl<'a> Settings<'a> {
    /// The keys this version knows, with the values each may have (empty: a decimal).
    const KNOWN: [(&'static str, &'static [&'static str]); 7] = [
        ("mode", &["instrument", "jvmti"]),
        ("trace", &["summary", "all"]),
        ("holdtiming", &["sampled", "exact"]),
        ("tracking", &["sampled", "full"]),
        ("stackdepth", &[]),
        ("chunk", &[]),
        ("threads", &[]),
    ];

    /// The settings of `s` (a `RecordingStarted` line's field), checked as the line is;
    /// readers that kept the text (`orca report`, `orca check`) read it back with this.
    pub fn parse_str(s: &'a str) -> Result<Settings<'a>, String> {
        Self::parse(s.as_bytes())
    }

    fn parse(b: &'a [u8]) -> Result<Settings<'a>, String> {
        let s = std::str::from_utf8(b).map_err(|_| "not ASCII".to_string())?;
        let this = Settings(s);
        let mut seen: Vec<&str> = Vec::new();
        for item in s.split(';') {
            let Some((k, v)) = item.split_once('=') else {
                return Err(format!("`{item}` is not key=value"));
            };
            if k.is_empty() || !k.bytes().all(|c| c.is_ascii_lowercase()) {
                return Err(format!("key `{k}`: expected lowercase letters"));
            }
            let value_ok = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-');
            if v.is_empty() || !v.bytes().all(value_ok) {
                return Err(format!(
                    "value of `{k}`: expected letters, digits, `.`, `_` or `-`"
                ));
            }
            if seen.contains(&k) {
                return Err(format!("key `{k}` given twice"));
            }
            seen.push(k);
            if let Some((_, allowed)) = Self::KNOWN.iter().find(|(key, _)| *key == k) {
                let ok = if allowed.is_empty() {
                    decimal_u64(v.as_bytes()).is_some()
                } else {
                    allowed.contains(&v)
                };
                if !ok {
                    let expected = if allowed.is_empty() {
                        "a decimal".to_string()
                    } else {
                        allowed.join(" or ")
                    };
                    return Err(format!("`{k}={v}`: expected {expected}"));
                }
            }
        }
        Ok(this)
    }

    /// The value of `key`, if the line gives it.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Every (key, value), in the line's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.0.split(';').filter_map(|i| i.split_once('='))
    }

    /// The line's text, `key=value;...`.
    pub fn raw(&self) -> &'a str {
        self.0
    }

    /// A bounded recording's chunk (docs/FORMAT.md, "Chunks"): its number, and how many
    /// restated `ThreadStarted` lines follow the `RecordingStarted` line.
    pub fn chunk(&self) -> Option<(u64, u64)> {
        let n = self.get("chunk")?.parse().ok()?;
        Some((n, self.get("threads")?.parse().ok()?))
    }

    /// Whether the recording identified only a sample of the holds (`tracking=sampled`): its
    /// lock orders, and so its potential deadlocks, come from that sample.
    pub fn sampled_tracking(&self) -> bool {
        self.get("tracking") == Some("sampled")
    }
}

/// How a recording ended, as its `RecordingEnded` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordingEnd {
    /// `vmdeath`: the JVM posted VMDeath (the program ended, `System.exit`, `Runtime.halt`,
    /// an uncaught exception or error, or a signal the JVM handles such as SIGTERM).
    VmDeath,
    /// `unload`: the agent was unloaded without VMDeath.
    Unload,
    /// `detach`: an attached agent stopped recording (`orca detach`); the JVM runs on.
    Detach,
    /// `dump`: a dump of a recording that goes on (`orca dump`, docs/FORMAT.md "Chunks").
    Dump,
    /// `chunk`: a bounded recording's chunk, closed; the recording went on in the next.
    Chunk,
}

impl RecordingEnd {
    /// The word written in the log.
    pub fn word(self) -> &'static str {
        match self {
            RecordingEnd::VmDeath => "vmdeath",
            RecordingEnd::Unload => "unload",
            RecordingEnd::Detach => "detach",
            RecordingEnd::Dump => "dump",
            RecordingEnd::Chunk => "chunk",
        }
    }

    /// How a log with this ending (`None`: without a `RecordingEnded` line) ended, in
    /// words, for `orca check` and `orca report`.
    pub fn describe(ended: Option<RecordingEnd>) -> &'static str {
        match ended {
            Some(RecordingEnd::VmDeath) => "the JVM ended in order (VMDeath: the program returned or called System.exit or Runtime.halt, an exception or error such as OutOfMemoryError ended it, or a signal the JVM handles such as SIGTERM)",
            Some(RecordingEnd::Unload) => "the agent was unloaded without VMDeath; the recording is complete",
            Some(RecordingEnd::Detach) => "the recording of a running JVM was stopped (orca detach); the recording is complete and the JVM ran on",
            Some(RecordingEnd::Dump) => "a dump of a recording that went on (orca dump): complete up to the dump",
            Some(RecordingEnd::Chunk) => "a chunk of a bounded recording, closed in order; the recording went on in the next chunk",
            None => "no RecordingEnded line: the JVM was killed (SIGKILL) or crashed (a fatal error); the log holds what was written up to its last complete line (the writer flushes at least every 100 ms)",
        }
    }
}

impl<'a> Event<'a> {
    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::ThreadStarted { .. } => EventKind::ThreadStarted,
            Event::ThreadEnded { .. } => EventKind::ThreadEnded,
            Event::ObjectWait { .. } => EventKind::ObjectWait,
            Event::ObjectWaited { .. } => EventKind::ObjectWaited,
            Event::ObjectNotify { .. } => EventKind::ObjectNotify,
            Event::ObjectNotifyAll { .. } => EventKind::ObjectNotifyAll,
            Event::ThreadStart { .. } => EventKind::ThreadStart,
            Event::ThreadJoin { .. } => EventKind::ThreadJoin,
            Event::ThreadJoined { .. } => EventKind::ThreadJoined,
            Event::ThreadSleep { .. } => EventKind::ThreadSleep,
            Event::ThreadSlept { .. } => EventKind::ThreadSlept,
            Event::SemaphoreAcquire { .. } => EventKind::SemaphoreAcquire,
            Event::SemaphoreAcquired { .. } => EventKind::SemaphoreAcquired,
            Event::SemaphoreRelease { .. } => EventKind::SemaphoreRelease,
            Event::MonitorContendedEnter { .. } => EventKind::MonitorContendedEnter,
            Event::MonitorContendedEntered { .. } => EventKind::MonitorContendedEntered,
            Event::MonitorEnter { .. } => EventKind::MonitorEnter,
            Event::MonitorEntered { .. } => EventKind::MonitorEntered,
            Event::MonitorExit { .. } => EventKind::MonitorExit,
            Event::MonitorHolds { .. } => EventKind::MonitorHolds,
            Event::MonitorHoldsUntimed { .. } => EventKind::MonitorHoldsUntimed,
            Event::LockOrder { .. } => EventKind::LockOrder,
            Event::MonitorHold { .. } => EventKind::MonitorHold,
            Event::LockHolds { .. } => EventKind::LockHolds,
            Event::LockHoldsUntimed { .. } => EventKind::LockHoldsUntimed,
            Event::LockHold { .. } => EventKind::LockHold,
            Event::LockHeldAtStart { .. } => EventKind::LockHeldAtStart,
            Event::Notifies { .. } => EventKind::Notifies,
            Event::Waits { .. } => EventKind::Waits,
            Event::MonitorContentions { .. } => EventKind::MonitorContentions,
            Event::LockContentions { .. } => EventKind::LockContentions,
            Event::LockAcquire { .. } => EventKind::LockAcquire,
            Event::Lock { op, .. } => op.kind(),
            Event::Condition { op, .. } => match op {
                ConditionOp::Await => EventKind::ConditionAwait,
                ConditionOp::Awaited => EventKind::ConditionAwaited,
                ConditionOp::Signal => EventKind::ConditionSignal,
                ConditionOp::SignalAll => EventKind::ConditionSignalAll,
            },
            Event::ThreadPark { .. } => EventKind::ThreadPark,
            Event::ThreadParked { .. } => EventKind::ThreadParked,
            Event::ThreadUnpark { .. } => EventKind::ThreadUnpark,
            Event::EventsDropped { .. } => EventKind::EventsDropped,
            Event::ObjectClass { .. } => EventKind::ObjectClass,
            Event::RecordingStarted { .. } => EventKind::RecordingStarted,
            Event::RecordingEnded { .. } => EventKind::RecordingEnded,
        }
    }

    /// The thread the event happened on (`None` for `EventsDropped`).
    pub fn thread(&self) -> Option<Hash> {
        match *self {
            Event::ThreadStarted { thread, .. }
            | Event::ThreadEnded { thread }
            | Event::ObjectWait { thread, .. }
            | Event::ObjectWaited { thread, .. }
            | Event::ObjectNotify { thread, .. }
            | Event::ObjectNotifyAll { thread, .. }
            | Event::ThreadStart { thread, .. }
            | Event::ThreadJoin { thread, .. }
            | Event::ThreadJoined { thread, .. }
            | Event::ThreadSleep { thread, .. }
            | Event::ThreadSlept { thread, .. }
            | Event::SemaphoreAcquire { thread, .. }
            | Event::SemaphoreAcquired { thread, .. }
            | Event::SemaphoreRelease { thread, .. }
            | Event::MonitorContendedEnter { thread, .. }
            | Event::MonitorContendedEntered { thread, .. }
            | Event::MonitorEnter { thread, .. }
            | Event::MonitorEntered { thread, .. }
            | Event::MonitorExit { thread, .. }
            | Event::MonitorHolds { thread, .. }
            | Event::MonitorHoldsUntimed { thread, .. }
            | Event::LockOrder { thread, .. }
            | Event::MonitorHold { thread, .. }
            | Event::LockHolds { thread, .. }
            | Event::LockHoldsUntimed { thread, .. }
            | Event::LockHold { thread, .. }
            | Event::LockHeldAtStart { thread, .. }
            | Event::Notifies { thread, .. }
            | Event::Waits { thread, .. }
            | Event::MonitorContentions { thread, .. }
            | Event::LockContentions { thread, .. }
            | Event::LockAcquire { thread, .. }
            | Event::Lock { thread, .. }
            | Event::Condition { thread, .. }
            | Event::ThreadPark { thread, .. }
            | Event::ThreadParked { thread, .. }
            | Event::ThreadUnpark { thread, .. } => Some(thread),
            Event::EventsDropped { .. }
            | Event::ObjectClass { .. }
            | Event::RecordingStarted { .. }
            | Event::RecordingEnded { .. } => None,
        }
    }

    /// The object the event is about: the object, monitor, semaphore, or
    /// started/joined thread (`None` for thread lifecycle, sleep and drops);
    /// for `LockOrder`, the acquired monitor; for j.u.c. lock events the lock's
    /// synchronizer, for conditions the condition, for parks the blocker
    /// (possibly [`Hash::UNKNOWN`]), for `ThreadUnpark` the unparked thread.
    pub fn object(&self) -> Option<Hash> {
        match *self {
            Event::ObjectWait { object, .. }
            | Event::ObjectWaited { object, .. }
            | Event::ObjectNotify { object, .. }
            | Event::ObjectNotifyAll { object, .. } => Some(object),
            Event::ThreadStart { started, .. } => Some(started),
            Event::ThreadJoin { joined, .. } | Event::ThreadJoined { joined, .. } => Some(joined),
            Event::SemaphoreAcquire { semaphore, .. }
            | Event::SemaphoreAcquired { semaphore, .. }
            | Event::SemaphoreRelease { semaphore, .. } => Some(semaphore),
            Event::MonitorContendedEnter { monitor, .. }
            | Event::MonitorContendedEntered { monitor, .. }
            | Event::MonitorEnter { monitor, .. }
            | Event::MonitorEntered { monitor, .. }
            | Event::MonitorExit { monitor, .. }
            | Event::MonitorHolds { monitor, .. }
            | Event::MonitorHoldsUntimed { monitor, .. }
            | Event::MonitorContentions { monitor, .. }
            | Event::MonitorHold { monitor, .. } => Some(monitor),
            Event::LockOrder { acquired, .. } => Some(acquired),
            Event::LockAcquire { lock, .. }
            | Event::Lock { lock, .. }
            | Event::LockHolds { lock, .. }
            | Event::LockHoldsUntimed { lock, .. }
            | Event::LockContentions { lock, .. }
            | Event::LockHold { lock, .. }
            | Event::LockHeldAtStart { lock, .. } => Some(lock),
            Event::Condition { condition, .. } => Some(condition),
            Event::ThreadPark { blocker, .. } | Event::ThreadParked { blocker, .. } => {
                Some(blocker)
            }
            Event::ThreadUnpark { unparked, .. } => Some(unparked),
            _ => None,
        }
    }

    /// The `<mode>` of a j.u.c. lock line (`LockAcquire`, `Lock*`, `LockHolds`,
    /// `LockHoldsUntimed`, `LockHold`).
    pub fn mode(&self) -> Option<LockMode> {
        match *self {
            Event::LockAcquire { mode, .. }
            | Event::Lock { mode, .. }
            | Event::LockHolds { mode, .. }
            | Event::LockHoldsUntimed { mode, .. }
            | Event::LockContentions { mode, .. }
            | Event::LockHold { mode, .. }
            | Event::LockHeldAtStart { mode, .. } => Some(mode),
            _ => None,
        }
    }

    /// The event's stack trace, if it has one: for `MonitorHolds` and `LockHolds` its
    /// site, for `LockOrder` its acquired site, for `LockHold` the stack of its `unlock`
    /// (see [`Event::stacks`] for every stack of a line).
    pub fn stack(&self) -> Option<&StackTrace<'a>> {
        match self {
            Event::ObjectWait { stack, .. }
            | Event::ObjectWaited { stack, .. }
            | Event::ObjectNotify { stack, .. }
            | Event::ObjectNotifyAll { stack, .. }
            | Event::ThreadStart { stack, .. }
            | Event::ThreadJoin { stack, .. }
            | Event::ThreadJoined { stack, .. }
            | Event::ThreadSleep { stack, .. }
            | Event::ThreadSlept { stack, .. }
            | Event::SemaphoreAcquire { stack, .. }
            | Event::SemaphoreAcquired { stack, .. }
            | Event::SemaphoreRelease { stack, .. }
            | Event::MonitorContendedEnter { stack, .. }
            | Event::MonitorContendedEntered { stack, .. }
            | Event::MonitorEnter { stack, .. }
            | Event::MonitorEntered { stack, .. }
            | Event::MonitorExit { stack, .. }
            | Event::MonitorHold { stack, .. }
            | Event::LockHold { stack, .. }
            | Event::LockHeldAtStart { stack, .. }
            | Event::LockAcquire { stack, .. }
            | Event::Lock { stack, .. }
            | Event::Condition { stack, .. }
            | Event::ThreadPark { stack, .. }
            | Event::ThreadParked { stack, .. }
            | Event::ThreadUnpark { stack, .. }
            | Event::MonitorHolds { site: stack, .. }
            | Event::MonitorHoldsUntimed { site: stack, .. }
            | Event::LockHolds { site: stack, .. }
            | Event::LockHoldsUntimed { site: stack, .. }
            | Event::Notifies { site: stack, .. }
            | Event::Waits { site: stack, .. }
            | Event::MonitorContentions { site: stack, .. }
            | Event::LockContentions { site: stack, .. }
            | Event::LockOrder {
                acquired_site: stack,
                ..
            } => Some(stack),
            _ => None,
        }
    }

    /// The figures of a `MonitorHolds`, `LockHolds`, `MonitorContentions` or
    /// `LockContentions` line.
    pub fn durations(&self) -> Option<Durations<'a>> {
        match *self {
            Event::MonitorHolds { durations, .. }
            | Event::LockHolds { durations, .. }
            | Event::MonitorContentions { durations, .. }
            | Event::LockContentions { durations, .. } => Some(durations),
            _ => None,
        }
    }

    /// Every stack trace of the line: [`Event::stack`], the held site of a `LockOrder`
    /// and the site of a `LockHold`.
    pub fn stacks(&self) -> impl Iterator<Item = &StackTrace<'a>> {
        let held = match self {
            Event::LockOrder { held_site, .. } => Some(held_site),
            Event::LockHold { site, .. } => Some(site),
            Event::MonitorContentions { stack, .. }
            | Event::LockContentions { stack, .. }
            | Event::Waits { stack, .. } => Some(stack),
            _ => None,
        };
        held.into_iter().chain(self.stack())
    }
}

/// One line of `PREFIX.orca`: a timestamp and an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRecord<'a> {
    /// When it happened.
    pub timestamp: Timestamp,
    /// What happened.
    pub event: Event<'a>,
}

/// Parses one line (without `\n`) of `PREFIX.orca`.
pub fn parse_event_line(line: &[u8]) -> Result<EventRecord<'_>, SyntaxError> {
    if line.is_empty() {
        return Err(SyntaxError::EmptyLine);
    }
    let c1 = memchr::memchr(b',', line).ok_or(SyntaxError::FieldCount {
        record: "event line".into(),
        expected: 3,
        found: 1,
    })?;
    let rest = &line[c1 + 1..];
    let c2 = memchr::memchr(b',', rest).unwrap_or(rest.len());
    let kind_b = &rest[..c2];
    let kind = EventKind::from_name(kind_b).ok_or_else(|| {
        SyntaxError::UnknownEvent(
            String::from_utf8_lossy(&kind_b[..kind_b.len().min(80)]).into_owned(),
        )
    })?;
    let name = kind.name();
    use EventKind as K;
    let event = match kind {
        K::ThreadStarted => {
            let [ts, _, t, n] = split::<4>(line, name)?;
            let _ = ts;
            Event::ThreadStarted {
                thread: parse_hash(t, 3, "thread", false)?,
                name: parse_text(n, 4, "threadName", true)?,
            }
        }
        K::ThreadEnded => {
            let [_, _, t] = split::<3>(line, name)?;
            Event::ThreadEnded {
                thread: parse_hash(t, 3, "thread", false)?,
            }
        }
        K::ObjectClass => {
            let [_, _, o, c] = split::<4>(line, name)?;
            let shape = match c.first() {
                Some(b'[') => c.len() > 1,
                Some(b'L') => c.len() > 2 && c.ends_with(b";"),
                _ => false,
            };
            if !shape {
                return Err(field_err(
                    4,
                    "classSignature",
                    c,
                    "expected an object's class signature: `Lpkg/Name;` or an array's `[...`",
                ));
            }
            Event::ObjectClass {
                object: parse_hash(o, 3, "object", false)?,
                class: parse_text(c, 4, "classSignature", false)?,
            }
        }
        K::RecordingStarted => {
            let [_, _, s] = split::<3>(line, name)?;
            Event::RecordingStarted {
                settings: Settings::parse(s).map_err(|p| field_err(3, "settings", s, p))?,
            }
        }
        K::RecordingEnded => {
            let [_, _, h] = split::<3>(line, name)?;
            let how = match h {
                b"vmdeath" => RecordingEnd::VmDeath,
                b"unload" => RecordingEnd::Unload,
                b"detach" => RecordingEnd::Detach,
                b"dump" => RecordingEnd::Dump,
                b"chunk" => RecordingEnd::Chunk,
                _ => {
                    return Err(field_err(
                        3,
                        "how",
                        h,
                        "expected vmdeath, unload, detach, dump or chunk",
                    ))
                }
            };
            Event::RecordingEnded { how }
        }
        K::EventsDropped => {
            let [_, _, c] = split::<3>(line, name)?;
            let count = match decimal_u64(c) {
                Some(0) => return Err(field_err(3, "count", c, "must be > 0")),
                Some(v) => v,
                None => {
                    return Err(field_err(
                        3,
                        "count",
                        c,
                        "expected a decimal number without leading zeros",
                    ))
                }
            };
            Event::EventsDropped { count }
        }
        K::ThreadSleep | K::ThreadSlept => {
            let [_, _, t, s] = split::<4>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            let stack = parse_stack(s, 4)?;
            if kind == K::ThreadSleep {
                Event::ThreadSleep { thread, stack }
            } else {
                Event::ThreadSlept { thread, stack }
            }
        }
        K::MonitorContendedEnter => {
            let [_, _, t, m, o, s] = split::<6>(line, name)?;
            Event::MonitorContendedEnter {
                thread: parse_hash(t, 3, "thread", false)?,
                monitor: parse_hash(m, 4, "monitor", false)?,
                owner: parse_hash(o, 5, "ownerThread", true)?,
                stack: parse_stack(s, 6)?,
            }
        }
        K::MonitorHolds | K::MonitorContentions => {
            let ([_, _, t, m, c, tot, mx, h, site], last) = split_opt::<9>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            // 0: the holds (contentions) of other monitors at this site (FORMAT.md).
            let monitor = parse_hash(m, 4, "monitor", true)?;
            let durations = parse_durations([c, tot, mx, h], 5)?;
            let site = parse_site(site, 9, "site")?;
            if kind == K::MonitorHolds {
                Event::MonitorHolds {
                    thread,
                    monitor,
                    durations,
                    site,
                    sample: parse_sample(last, 10)?,
                }
            } else {
                Event::MonitorContentions {
                    thread,
                    monitor,
                    durations,
                    site,
                    stack: last.map_or(Ok(StackTrace::NONE), |s| parse_stack(s, 10))?,
                }
            }
        }
        K::MonitorHoldsUntimed => {
            let ([_, _, t, m, c, site], last) = split_opt::<6>(line, name)?;
            Event::MonitorHoldsUntimed {
                thread: parse_hash(t, 3, "thread", false)?,
                // 0: the holds of other monitors at this site, as in MonitorHolds.
                monitor: parse_hash(m, 4, "monitor", true)?,
                count: parse_count(c, 5, "count")?,
                site: parse_site(site, 6, "site")?,
                sample: parse_sample(last, 7)?,
            }
        }
        K::LockHolds | K::LockContentions => {
            let ([_, _, t, l, m, c, tot, mx, h, site], stack) = if kind == K::LockHolds {
                (split::<10>(line, name)?, None)
            } else {
                split_opt::<10>(line, name)?
            };
            let thread = parse_hash(t, 3, "thread", false)?;
            // 0: the holds (contentions) of other locks in this mode at this site (FORMAT.md).
            let lock = parse_hash(l, 4, "lock", true)?;
            let mode = parse_mode(m, 5)?;
            let durations = parse_durations([c, tot, mx, h], 6)?;
            let site = parse_site(site, 10, "site")?;
            if kind == K::LockHolds {
                Event::LockHolds {
                    thread,
                    lock,
                    mode,
                    durations,
                    site,
                }
            } else {
                Event::LockContentions {
                    thread,
                    lock,
                    mode,
                    durations,
                    site,
                    stack: stack.map_or(Ok(StackTrace::NONE), |s| parse_stack(s, 11))?,
                }
            }
        }
        K::LockHoldsUntimed => {
            let [_, _, t, l, m, c, site] = split::<7>(line, name)?;
            Event::LockHoldsUntimed {
                thread: parse_hash(t, 3, "thread", false)?,
                // 0: the holds of other locks in this mode at this site, as in LockHolds.
                lock: parse_hash(l, 4, "lock", true)?,
                mode: parse_mode(m, 5)?,
                count: parse_count(c, 6, "count")?,
                site: parse_site(site, 7, "site")?,
            }
        }
        K::Notifies => {
            let [_, _, t, call, c, site] = split::<6>(line, name)?;
            let call = WakeCall::from_name(call).ok_or_else(|| {
                field_err(
                    4,
                    "call",
                    call,
                    "expected `notify`, `notifyAll`, `signal`, `signalAll`, `unpark`, `release` or `start`",
                )
            })?;
            Event::Notifies {
                thread: parse_hash(t, 3, "thread", false)?,
                call,
                count: parse_count(c, 5, "count")?,
                site: parse_site(site, 6, "site")?,
            }
        }
        K::Waits => {
            let ([_, _, t, call, o, c, tot, mx, site], stack) = split_opt::<9>(line, name)?;
            let call = WaitCall::from_name(call).ok_or_else(|| {
                field_err(
                    4,
                    "call",
                    call,
                    "expected `wait`, `await`, `park`, `acquire`, `join` or `sleep`",
                )
            })?;
            let count = parse_count(c, 6, "count")?;
            let total = parse_nanos(tot, 7, "totalNanos")?;
            let max = parse_nanos(mx, 8, "maxNanos")?;
            if max > total {
                return Err(field_err(
                    8,
                    "maxNanos",
                    mx,
                    format!("greater than totalNanos {total}"),
                ));
            }
            let mean = total.div_ceil(count);
            if max < mean {
                return Err(field_err(
                    8,
                    "maxNanos",
                    mx,
                    format!("below the mean wait, ceil(totalNanos / count) = {mean}"),
                ));
            }
            Event::Waits {
                thread: parse_hash(t, 3, "thread", false)?,
                call,
                object: parse_hash(o, 5, "object", true)?,
                count,
                total,
                max,
                site: parse_site(site, 9, "site")?,
                stack: stack.map_or(Ok(StackTrace::NONE), |s| parse_stack(s, 10))?,
            }
        }
        K::LockOrder => {
            let [_, _, t, hm, am, c, g, hs, asite] = split::<9>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            // 0 and 0: the occurrences between other monitors at these sites (FORMAT.md).
            let held = parse_hash(hm, 4, "heldMonitor", true)?;
            let acquired = parse_hash(am, 5, "acquiredMonitor", true)?;
            if (held == Hash(0)) != (acquired == Hash(0)) {
                return Err(field_err(
                    5,
                    "acquiredMonitor",
                    am,
                    "0 with a heldMonitor other than 0, or the reverse (0 names other monitors on both ends or neither)",
                ));
            }
            if acquired == held && held != Hash(0) {
                return Err(field_err(
                    5,
                    "acquiredMonitor",
                    am,
                    "the same as heldMonitor (a reentrant acquisition is no lock order)",
                ));
            }
            let count = parse_count(c, 6, "count")?;
            let guards = parse_guards(g, 7, held, acquired)?;
            if held == Hash(0) && !guards.is_empty() {
                return Err(field_err(
                    7,
                    "guards",
                    g,
                    "guards on a line of other monitors (heldMonitor 0): it has none",
                ));
            }
            Event::LockOrder {
                thread,
                held,
                acquired,
                count,
                guards,
                held_site: parse_site(hs, 8, "heldSite")?,
                acquired_site: parse_site(asite, 9, "acquiredSite")?,
            }
        }
        K::LockAcquire => {
            let [_, _, t, l, m, o, s] = split::<7>(line, name)?;
            Event::LockAcquire {
                thread: parse_hash(t, 3, "thread", false)?,
                lock: parse_hash(l, 4, "lock", false)?,
                mode: parse_mode(m, 5)?,
                owner: parse_hash(o, 6, "ownerThread", true)?,
                stack: parse_stack(s, 7)?,
            }
        }
        K::LockAcquired | K::LockFailed | K::LockTimedOut | K::LockInterrupted | K::LockRelease => {
            let [_, _, t, l, m, s] = split::<6>(line, name)?;
            let op = match kind {
                K::LockAcquired => LockOp::Acquired,
                K::LockFailed => LockOp::Failed,
                K::LockTimedOut => LockOp::TimedOut,
                K::LockInterrupted => LockOp::Interrupted,
                _ => LockOp::Release,
            };
            Event::Lock {
                op,
                thread: parse_hash(t, 3, "thread", false)?,
                lock: parse_hash(l, 4, "lock", false)?,
                mode: parse_mode(m, 5)?,
                stack: parse_stack(s, 6)?,
            }
        }
        K::LockHeldAtStart => {
            let [_, _, t, l, m, s] = split::<6>(line, name)?;
            Event::LockHeldAtStart {
                thread: parse_hash(t, 3, "thread", false)?,
                lock: parse_hash(l, 4, "lock", false)?,
                mode: parse_mode(m, 5)?,
                stack: parse_stack(s, 6)?,
            }
        }
        K::ConditionAwait | K::ConditionAwaited | K::ConditionSignal | K::ConditionSignalAll => {
            let [_, _, t, c, l, s] = split::<6>(line, name)?;
            let op = match kind {
                K::ConditionAwait => ConditionOp::Await,
                K::ConditionAwaited => ConditionOp::Awaited,
                K::ConditionSignal => ConditionOp::Signal,
                _ => ConditionOp::SignalAll,
            };
            Event::Condition {
                op,
                thread: parse_hash(t, 3, "thread", false)?,
                condition: parse_hash(c, 4, "condition", false)?,
                lock: parse_hash(l, 5, "lock", false)?,
                stack: parse_stack(s, 6)?,
            }
        }
        K::ThreadPark | K::ThreadParked | K::ThreadUnpark => {
            let [_, _, t, o, s] = split::<5>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            let stack = parse_stack(s, 5)?;
            if kind == K::ThreadUnpark {
                let unparked = parse_hash(o, 4, "unparkedThread", true)?;
                Event::ThreadUnpark {
                    thread,
                    unparked,
                    stack,
                }
            } else {
                let blocker = parse_hash(o, 4, "blocker", true)?;
                if kind == K::ThreadPark {
                    Event::ThreadPark {
                        thread,
                        blocker,
                        stack,
                    }
                } else {
                    Event::ThreadParked {
                        thread,
                        blocker,
                        stack,
                    }
                }
            }
        }
        K::MonitorHold => {
            let [ts, _, t, m, ns, s] = split::<6>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            let monitor = parse_hash(m, 4, "monitor", false)?;
            let nanos = parse_nanos(ns, 5, "nanos")?;
            if nanos > parse_timestamp(ts, 1)?.nanos() {
                return Err(field_err(
                    5,
                    "nanos",
                    ns,
                    "longer than the timestamp: the hold would begin before the clock's origin",
                ));
            }
            Event::MonitorHold {
                thread,
                monitor,
                nanos,
                stack: parse_stack(s, 6)?,
            }
        }
        K::LockHold => {
            let [ts, _, t, l, m, ns, site, s] = split::<8>(line, name)?;
            let thread = parse_hash(t, 3, "thread", false)?;
            let lock = parse_hash(l, 4, "lock", false)?;
            let mode = parse_mode(m, 5)?;
            let nanos = parse_nanos(ns, 6, "nanos")?;
            if nanos > parse_timestamp(ts, 1)?.nanos() {
                return Err(field_err(
                    6,
                    "nanos",
                    ns,
                    "longer than the timestamp: the hold would begin before the clock's origin",
                ));
            }
            Event::LockHold {
                thread,
                lock,
                mode,
                nanos,
                site: parse_site(site, 7, "site")?,
                stack: parse_stack(s, 8)?,
            }
        }
        _ => {
            let [_, _, t, o, s] = split::<5>(line, name)?;
            let ofield = match kind {
                K::ThreadStart => "startedThread",
                K::ThreadJoin | K::ThreadJoined => "joinedThread",
                K::SemaphoreAcquire | K::SemaphoreAcquired | K::SemaphoreRelease => "semaphore",
                K::ObjectWait | K::ObjectWaited | K::ObjectNotify | K::ObjectNotifyAll => "object",
                _ => "monitor",
            };
            let thread = parse_hash(t, 3, "thread", false)?;
            let o = parse_hash(o, 4, ofield, false)?;
            let stack = parse_stack(s, 5)?;
            match kind {
                K::ObjectWait => Event::ObjectWait {
                    thread,
                    object: o,
                    stack,
                },
                K::ObjectWaited => Event::ObjectWaited {
                    thread,
                    object: o,
                    stack,
                },
                K::ObjectNotify => Event::ObjectNotify {
                    thread,
                    object: o,
                    stack,
                },
                K::ObjectNotifyAll => Event::ObjectNotifyAll {
                    thread,
                    object: o,
                    stack,
                },
                K::ThreadStart => Event::ThreadStart {
                    thread,
                    started: o,
                    stack,
                },
                K::ThreadJoin => Event::ThreadJoin {
                    thread,
                    joined: o,
                    stack,
                },
                K::ThreadJoined => Event::ThreadJoined {
                    thread,
                    joined: o,
                    stack,
                },
                K::SemaphoreAcquire => Event::SemaphoreAcquire {
                    thread,
                    semaphore: o,
                    stack,
                },
                K::SemaphoreAcquired => Event::SemaphoreAcquired {
                    thread,
                    semaphore: o,
                    stack,
                },
                K::SemaphoreRelease => Event::SemaphoreRelease {
                    thread,
                    semaphore: o,
                    stack,
                },
                K::MonitorContendedEntered => Event::MonitorContendedEntered {
                    thread,
                    monitor: o,
                    stack,
                },
                K::MonitorEnter => Event::MonitorEnter {
                    thread,
                    monitor: o,
                    stack,
                },
                K::MonitorEntered => Event::MonitorEntered {
                    thread,
                    monitor: o,
                    stack,
                },
                K::MonitorExit => Event::MonitorExit {
                    thread,
                    monitor: o,
                    stack,
                },
                _ => unreachable!("handled above"),
            }
        }
    };
    let timestamp = parse_timestamp(&line[..c1], 1)?;
    Ok(EventRecord { timestamp, event })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_shape() {
        let e = parse_event_line(b"5087.102938475,ThreadStarted,15DB9742,main%2C1").unwrap();
        assert_eq!(e.timestamp, Timestamp(5_087_102_938_475));
        match e.event {
            Event::ThreadStarted { thread, name } => {
                assert_eq!(thread, Hash(0x15DB9742));
                assert_eq!(name.decode(), "main,1");
            }
            _ => panic!(),
        }
        let e = parse_event_line(b"0.000000001,MonitorContendedEnter,00000001,00000002,00000000,2;00000001;00000004;00000002;FFFFFFFF").unwrap();
        let st = e.event.stack().unwrap();
        let f: Vec<_> = st.frames().collect();
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0],
            Frame {
                method: MethodId(1),
                location: 4
            }
        );
        assert!(f[1].is_native());
        assert!(parse_event_line(b"1.000000000,ThreadSleep,00000001,0").is_ok());
        assert!(parse_event_line(b"1.000000000,EventsDropped,12").is_ok());
        assert!(parse_event_line(b"1.000000000,ObjectClass,6404CC3C,Ljava/util/HashMap;").is_ok());
        assert!(parse_event_line(b"1.000000000,ObjectClass,6404CC3C,[Ljava/lang/Object;").is_ok());
        for bad in [
            &b"1.000000000,ObjectClass,6404CC3C,"[..],
            b"1.000000000,ObjectClass,6404CC3C,I",
            b"1.000000000,ObjectClass,6404CC3C,java.util.HashMap",
            b"1.000000000,ObjectClass,00000000,Ljava/util/HashMap;",
            b"1.000000000,ObjectClass,6404CC3C",
        ] {
            assert!(
                parse_event_line(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse_event_line(b"1.000000000,RecordingEnded,vmdeath").is_ok());
        let started = parse_event_line(
            b"1.000000000,RecordingStarted,mode=instrument;trace=summary;holdtiming=sampled;tracking=sampled;stackdepth=8;future=x.1",
        )
        .unwrap();
        let Event::RecordingStarted { settings } = started.event else {
            panic!("{started:?}")
        };
        assert!(settings.sampled_tracking());
        assert_eq!(settings.get("stackdepth"), Some("8"));
        assert_eq!(settings.get("future"), Some("x.1"));
        assert_eq!(settings.get("juc"), None);
        assert_eq!(settings.iter().count(), 6);
        assert!(parse_event_line(b"1.000000000,RecordingEnded,unload").is_ok());
        assert!(parse_event_line(b"1.000000000,MonitorExit,00000001,0000000A,0").is_ok());
    }

    #[test]
    fn rejects_bad_fields() {
        let bad: &[&[u8]] = &[
            b"1.00000000,ThreadEnded,00000001",    // 8 fraction digits
            b"01.000000000,ThreadEnded,00000001",  // leading zero
            b"1.000000000,ThreadEnded,0000000a",   // lowercase hex
            b"1.000000000,ThreadEnded,000000001",  // 9 digits
            b"1.000000000,ThreadEnded,00000000",   // zero thread
            b"1.000000000,ThreadEnded,00000001,x", // extra field
            b"1.000000000,ThreadSleep,00000001,1", // missing frame
            b"1.000000000,ThreadSleep,00000001,1;00000001", // half frame
            b"1.000000000,ThreadSleep,00000001,0;", // trailing
            b"1.000000000,ThreadSleep,00000001,01", // leading zero depth
            b"1.000000000,ThreadStarted,00000001,a;b", // raw ;
            b"1.000000000,ThreadStarted,00000001,a%41", // needless escape
            b"1.000000000,ThreadStarted,00000001,a%2c", // lowercase escape
            b"1.000000000,ThreadStarted,00000001,a\rb", // raw control
            b"1.000000000,Bogus,00000001",
            b"1.000000000,EventsDropped,0",
            b"1.000000000,RecordingEnded,exit",
            b"1.000000000,RecordingEnded",
            b"1.000000000,RecordingStarted",
            b"1.000000000,RecordingStarted,",
            b"1.000000000,RecordingStarted,mode=instrument;",
            b"1.000000000,RecordingStarted,mode=instrument;mode=jvmti",
            b"1.000000000,RecordingStarted,tracking=some",
            b"1.000000000,RecordingStarted,stackdepth=eight",
            b"1.000000000,RecordingStarted,Mode=jvmti",
            b"1.000000000,RecordingStarted,mode",
            b"1.000000000,RecordingStarted,mode=a b",
            b"1.000000000,RecordingStarted,mode=jvmti,x",
            b"",
        ];
        for b in bad {
            assert!(
                parse_event_line(b).is_err(),
                "{}",
                String::from_utf8_lossy(b)
            );
        }
    }

    #[test]
    fn methods_and_classes() {
        let m = parse_method_line(
            b"5087.102937000,00000001,main,([Ljava/lang/String;)V,15DB9742,3;00000000;00000046;00000008;00000047;00000010;00000049",
        )
        .unwrap();
        let t: Vec<_> = m.line_table.entries().collect();
        assert_eq!(t, vec![(0, 0x46), (8, 0x47), (0x10, 0x49)]);
        assert_eq!(line_for(&t, 9), Some(0x47));
        assert!(parse_method_line(b"1.000000000,00000002,n,()V,15DB9742,-1").is_ok());
        assert!(parse_method_line(b"1.000000000,00000002,n,()V,15DB9742,0").is_ok());
        assert!(
            parse_method_line(b"1.000000000,00000002,n,()V,15DB9742,2;00000000;00000001").is_err()
        );
        assert!(parse_method_line(b"1.000000000,00000002,n,()V,15DB9742,-2").is_err());
        let c = parse_class_line(b"5087.102938475,15DB9742,LPingPong;,PingPong.java").unwrap();
        assert_eq!(c.signature.raw(), "LPingPong;");
        assert!(parse_class_line(b"5087.102938475,15DB9742,LPingPong;,").is_ok());
        assert!(parse_class_line(b"5087.102938475,15DB9742,LPingPong;,a;b").is_err());
    }

    #[test]
    fn waits_lines_and_unpark_notifies() {
        let ok = parse_event_line(
            b"5087.300000000,Waits,0000AAAA,await,00003333,3,900,500,1;00000031;00000015",
        )
        .unwrap();
        match ok.event {
            Event::Waits {
                call,
                object,
                count,
                total,
                max,
                ..
            } => assert_eq!(
                (call, object, count, total, max),
                (WaitCall::Await, Hash(0x3333), 3, 900, 500)
            ),
            e => panic!("{e:?}"),
        }
        assert!(ok.event.kind().is_summary());
        // other objects, and parks without a blocker
        assert!(parse_event_line(
            b"1.000000000,Waits,0000AAAA,park,00000000,1,7,7,1;00000031;00000015"
        )
        .is_ok());
        for bad in [
            &b"1.000000000,Waits,0000AAAA,nap,00003333,1,7,7,1;00000031;00000015"[..],
            b"1.000000000,Waits,0000AAAA,wait,00003333,0,0,0,1;00000031;00000015",
            b"1.000000000,Waits,0000AAAA,wait,00003333,2,10,11,1;00000031;00000015",
            b"1.000000000,Waits,0000AAAA,wait,00003333,2,10,4,1;00000031;00000015",
            b"1.000000000,Waits,0000AAAA,wait,00003333,1,7,7,2;00000031;00000015;00000031;00000015",
            b"1.000000000,Waits,0000AAAA,wait,00003333,1,7,7",
        ] {
            assert!(
                parse_event_line(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let n = parse_event_line(b"1.000000000,Notifies,0000AAAA,unpark,4,1;00000031;00000015")
            .unwrap();
        assert!(matches!(
            n.event,
            Event::Notifies {
                call: WakeCall::Unpark,
                count: 4,
                ..
            }
        ));
    }

    #[test]
    fn escape_round_trip() {
        let s = "a,b;c%d\ne\u{7f}é日";
        let e = escape(s, true);
        assert_eq!(e, "a%2Cb%3Bc%25d%0Ae%7Fé日");
        assert!(parse_text(e.as_bytes(), 1, "x", true).is_ok());
        assert_eq!(unescape(&e), s);
        assert_eq!(escape("Ljava/lang/String;", false), "Ljava/lang/String;");
    }
}
