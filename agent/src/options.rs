//! The agent's option string: `-agentpath:liborca.so=[PREFIX,]key=value,...`.
//!
//! Parsing is strict on purpose: a typo must stop the JVM with a message rather than
//! silently record with defaults the user did not ask for.

use std::path::PathBuf;

use crate::error::StartError;

/// Which event source feeds the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// JVMTI MethodEntry/MethodExit filtered by a method-ID cache (the original Orca design).
    Jvmti,
    /// Bytecode instrumentation: classes are rewritten to call the bundled tracker. The
    /// default: it sees monitor exits (hold times), costs far less than MethodEntry events, and
    /// reports the same calls at the same lines (tests/e2e/instrument.rs).
    Instrument,
}

impl Mode {
    /// The name used in options and messages.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Jvmti => "jvmti",
            Mode::Instrument => "instrument",
        }
    }
}

/// Default frames per stack trace. Measured with `benches` (see docs/MODES.md, "Stack depth"):
/// the cost of a JVMTI stack walk grows with depth, and 8 frames reach from a lock call
/// into the application's own code in the programs we looked at.
pub const DEFAULT_STACK_DEPTH: usize = 8;
/// Upper bound for `stackdepth`: beyond it a trace costs more than any report uses.
pub const MAX_STACK_DEPTH: usize = 1024;
/// Default `holdthreshold`: 10 ms, as JFR's `profile` settings for monitor events. Holds
/// that long are what a user looks for, and rare enough in servers and databases that
/// writing each with a stack costs nothing measurable (docs/MODES.md, "Summaries and the complete trace").
pub const DEFAULT_HOLD_THRESHOLD: u64 = 10_000_000;
/// Default `waitthreshold`: 10 ms, JFR's threshold for `JavaMonitorWait` and `ThreadPark` in
/// its `profile` settings. A server's idle pool threads and a database's latch waits wait
/// and are woken thousands of times a second for a few microseconds each: written as events
/// with their stacks they were two thirds of the log (benches/SOAK.md: 485 KB/s); a wait of
/// 10 ms or more is what a user looks for.
pub const DEFAULT_WAIT_THRESHOLD: u64 = 10_000_000;
/// Default `contentionthreshold`: 1 ms. A database's or a server's threads contend for their
/// shared monitors and locks tens of thousands of times a second for microseconds each:
/// written as two events with stacks they were most of the log (issue 21: Jetty on JDK 25 at
/// 498 KB/s, Derby at 40 bytes per transaction). They are counted per site with their
/// lengths; a contention of a millisecond or more is one a user looks at, with its stack and
/// owner. (JFR's `profile` settings write `JavaMonitorEnter` from 10 ms.)
pub const DEFAULT_CONTENTION_THRESHOLD: u64 = 1_000_000;
/// Default dump prefix, in the working directory.
pub const DEFAULT_PREFIX: &str = "orca";

/// The parsed options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub prefix: String,
    pub mode: Mode,
    pub stack_depth: usize,
    /// Instrumentation mode: also rewrite JDK classes (boot and platform loaders) loaded after
    /// start-up, not only the application's.
    pub jdk: bool,
    /// Instrumentation mode, `trace=all`: every MonitorEnter/Entered/Exit as an event line
    /// (the complete trace), besides the summaries. Default `trace=summary`.
    pub trace_all: bool,
    /// Instrumentation mode: holds at least this long are written as `MonitorHold` events
    /// with their stack; `None` (`holdthreshold=off`): none.
    pub hold_threshold: Option<u64>,
    /// Both modes, `juc=yes` (the default): `java.util.concurrent` locks, conditions and parks
    /// are recorded; instrumentation mode summarises lock holds per site as it does monitors'.
    pub juc: bool,
    /// `stackwalk=fast` (the default): stacks are walked with HotSpot's `AsyncGetCallTrace`
    /// where it can, JVMTI `GetStackTrace` otherwise ([`crate::jvmti::FastWalker`]);
    /// `stackwalk=jvmti`: always JVMTI, for a JVM where the fast walker misbehaves.
    pub fast_walk: bool,
    /// Instrumentation mode, `notifies=counted` (the default): a `notify`/`notifyAll` that
    /// finds no thread waiting is counted per site (`Notifies` lines) instead of written as an
    /// event with its stack; `notifies=events`: every call an event (as `trace=all` does).
    pub count_notifies: bool,
    /// Instrumentation mode, `holdtiming=sampled` (the default): every hold is counted, but
    /// only a bounded random sample of them reads the precise clock at both ends
    /// ([`crate::recorder::clock::Ticker`]); `holdtiming=exact`: every hold is timed (as
    /// `trace=all` implies).
    pub sampled_holds: bool,
    /// Instrumentation mode, `tracking=sampled` (the default): an outermost hold outside the
    /// thread's sample (about 500 holds per 10 ms of a thread that runs all the time are in
    /// it) is left unidentified, with every hold nested in it (no identity hash, name or
    /// lock-order occurrence: counted at its site in the row of other monitors), because
    /// identifying every hold was most of what a database that locks a fresh object per row
    /// paid; `tracking=full`: every hold is identified. Needs sampled timing.
    pub sampled_tracking: bool,
    /// `tracking=` was given: only then is a user told that it has no effect (with exact
    /// timing), since the default's silent fallback to full tracking loses nothing.
    pub tracking_asked: bool,
    /// Instrumentation mode: `Object.wait`, `Condition.await*` and `LockSupport.park*` calls
    /// shorter than this are counted per site (`Waits` lines) instead of written as events,
    /// and a wake-up that finds only such waiters is counted (`Notifies`); 0: every wait and
    /// every wake-up of a waiter an event (as `trace=all` implies).
    pub wait_threshold: u64,
    /// Instrumentation mode: contended monitor entries and contended j.u.c. acquisitions
    /// that waited less than this are counted per site (`MonitorContentions`,
    /// `LockContentions` lines) instead of written as events; 0: every contention two
    /// events (as `trace=all` implies).
    pub contention_threshold: u64,
    /// Instrumentation mode, `guards=on`: guarded monitor reports (the rewriter's
    /// `Config::guards`): each monitor site keeps a value of its enter in a local of its
    /// frame for its exit, the groundwork of holds that pay no tracker call (issue 45); the
    /// tracker still follows every hold. `off` (the default): the unguarded reports.
    pub guards: bool,
    /// `maxsize=SIZE`: the events are kept as a ring of chunk files whose total stays within
    /// this many bytes ([`Ring`]); `None`: one event file, unbounded.
    pub max_size: Option<u64>,
    /// `maxage=D`: chunks whose last line is older than this are removed ([`Ring`]).
    pub max_age: Option<u64>,
}

/// Smallest `maxsize`: 8 chunks of [`MIN_CHUNK_BYTES`].
pub const MIN_MAX_SIZE: u64 = 8 * MIN_CHUNK_BYTES;
/// Smallest chunk by size: each chunk begins with a line per live thread (its restated
/// `ThreadStarted`), so a smaller one would be mostly that.
pub const MIN_CHUNK_BYTES: u64 = 16 << 10;
/// Smallest `maxage`.
pub const MIN_MAX_AGE: u64 = 2_000_000_000;
/// Shortest chunk by time: rotating more often than once a second gains nothing a reader sees.
pub const MIN_CHUNK_NANOS: u64 = 1_000_000_000;

/// How a bounded recording (`maxsize`, `maxage`) cuts its events into chunks (docs/FORMAT.md,
/// "Chunks").
///
/// A chunk is closed once it has `maxsize / 8` bytes, or once it is `maxage / 8` old (at least
/// [`MIN_CHUNK_NANOS`]), whichever comes first. Why an eighth: the ring removes whole chunks,
/// oldest first, so what is on disk is between 7/8 of the bound and all of it (a dump of
/// "everything" loses at most an eighth of the history to the granularity), while each chunk
/// stays large next to its preamble (a line per live thread) and the folder holds about ten
/// files, not thousands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    /// Total bytes of the chunks at most (`maxsize`).
    pub max_size: Option<u64>,
    /// Nanoseconds a closed chunk is kept after its last line (`maxage`).
    pub max_age: Option<u64>,
    /// A chunk is closed at this size.
    pub chunk_bytes: Option<u64>,
    /// ... or at this age.
    pub chunk_nanos: Option<u64>,
}

impl Ring {
    /// The ring of `maxsize`/`maxage`; `None` when neither is given.
    pub fn of(max_size: Option<u64>, max_age: Option<u64>) -> Option<Ring> {
        if max_size.is_none() && max_age.is_none() {
            return None;
        }
        Some(Ring {
            max_size,
            max_age,
            chunk_bytes: max_size.map(|s| (s / 8).max(MIN_CHUNK_BYTES)),
            chunk_nanos: max_age.map(|a| (a / 8).max(MIN_CHUNK_NANOS)),
        })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefix: DEFAULT_PREFIX.to_string(),
            mode: Mode::Instrument,
            stack_depth: DEFAULT_STACK_DEPTH,
            jdk: false,
            trace_all: false,
            hold_threshold: Some(DEFAULT_HOLD_THRESHOLD),
            juc: true,
            fast_walk: true,
            count_notifies: true,
            sampled_holds: true,
            sampled_tracking: true,
            tracking_asked: false,
            wait_threshold: DEFAULT_WAIT_THRESHOLD,
            contention_threshold: DEFAULT_CONTENTION_THRESHOLD,
            guards: false,
            max_size: None,
            max_age: None,
        }
    }
}

const PREFIX_EXPECTED: &str = "expected a file prefix such as out/run";
const MODE_EXPECTED: &str = "valid values: jvmti, instrument";
const DEPTH_EXPECTED: &str = "expected a whole number of frames from 0 to 1024";
const JDK_EXPECTED: &str = "valid values: yes, no";
const TRACE_EXPECTED: &str = "valid values: summary, all";
const WALK_EXPECTED: &str = "valid values: fast, jvmti";
const NOTIFIES_EXPECTED: &str = "valid values: counted, events";
const TIMING_EXPECTED: &str = "valid values: sampled, exact";
const TRACKING_EXPECTED: &str = "valid values: full, sampled";
const GUARDS_EXPECTED: &str = "valid values: on, off";
const SIZE_EXPECTED: &str =
    "expected a size of at least 128KB such as 512KB, 200MB or 2GB (KB, MB, GB: 1024, 1024², 1024³ bytes)";
const AGE_EXPECTED: &str = "expected a duration of at least 2s such as 30s, 10m, 1h or 2d";

/// `maxsize`: `512KB`, `200MB`, `2GB` (powers of 1024), at least [`MIN_MAX_SIZE`].
fn parse_size(v: &str) -> Option<u64> {
    let split = v.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok().filter(|_| !num.is_empty())?;
    let scale: u64 = match unit {
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale).filter(|b| *b >= MIN_MAX_SIZE)
}

/// `maxage`: `30s`, `10m`, `1h`, `2d`, at least [`MIN_MAX_AGE`]; nanoseconds.
fn parse_age(v: &str) -> Option<u64> {
    let split = v.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok().filter(|_| !num.is_empty())?;
    let scale: u64 = match unit {
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale).filter(|a| *a >= MIN_MAX_AGE)
}

/// A `maxsize`/`maxage` value by `parse`.
fn bound(
    key: &str,
    value: &str,
    parse: fn(&str) -> Option<u64>,
    expected: &'static str,
) -> Result<u64, StartError> {
    if value.is_empty() {
        return Err(StartError::Empty {
            key: key.into(),
            expected,
        });
    }
    parse(value).ok_or_else(|| StartError::BadValue {
        key: key.into(),
        value: value.into(),
        expected,
    })
}
const THRESHOLD_EXPECTED: &str =
    "expected a duration such as 10ms, 500us, 2s, 0 (every hold), or off";
const WAIT_THRESHOLD_EXPECTED: &str =
    "expected a duration such as 10ms, 500us, 2s, or 0 (every wait an event)";
const CONTENTION_THRESHOLD_EXPECTED: &str =
    "expected a duration such as 1ms, 500us, 2s, or 0 (every contention an event)";

/// A duration option without `off`.
fn duration(key: &str, value: &str, expected: &'static str) -> Result<u64, StartError> {
    match parse_duration(value) {
        Some(Some(n)) => Ok(n),
        _ if value.is_empty() => Err(StartError::Empty {
            key: key.into(),
            expected,
        }),
        _ => Err(StartError::BadValue {
            key: key.into(),
            value: value.into(),
            expected,
        }),
    }
}

/// An option with two values: true for `values[0]`, false for `values[1]`.
fn two_way(
    key: &str,
    value: &str,
    values: [&str; 2],
    expected: &'static str,
) -> Result<bool, StartError> {
    match value {
        "" => Err(StartError::Empty {
            key: key.into(),
            expected,
        }),
        v if v == values[0] => Ok(true),
        v if v == values[1] => Ok(false),
        _ => Err(StartError::BadValue {
            key: key.into(),
            value: value.into(),
            expected,
        }),
    }
}

/// `10ms`, `500us`, `250ns`, `2s`, `0`, or `off` (None).
fn parse_duration(v: &str) -> Option<Option<u64>> {
    if v == "off" {
        return Some(None);
    }
    if v == "0" {
        return Some(Some(0));
    }
    let split = v.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = v.split_at(split);
    if num.is_empty() {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let scale = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale).map(Some)
}

impl Options {
    /// Parses the text after `=` in `-agentpath:...=`; `None` or empty gives the defaults.
    pub fn parse(text: Option<&str>) -> Result<Options, StartError> {
        let mut opts = Options::default();
        let text = match text {
            Some(t) if !t.is_empty() => t,
            _ => return Ok(opts),
        };
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for (i, item) in text.split(',').enumerate() {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k, v),
                None if i == 0 => ("file", item),
                None => {
                    return Err(StartError::BareWord {
                        word: item.to_string(),
                    })
                }
            };
            if key.is_empty() {
                return Err(StartError::BareWord {
                    word: item.to_string(),
                });
            }
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                return Err(StartError::Duplicate {
                    key: key.to_string(),
                    first: first.to_string(),
                    second: value.to_string(),
                });
            }
            seen.push((key, value));
            match key {
                "file" => {
                    if value.is_empty() {
                        return Err(StartError::Empty {
                            key: key.into(),
                            expected: PREFIX_EXPECTED,
                        });
                    }
                    opts.prefix = value.to_string();
                }
                "mode" => {
                    opts.mode = match value {
                        "jvmti" => Mode::Jvmti,
                        "instrument" => Mode::Instrument,
                        "" => {
                            return Err(StartError::Empty {
                                key: key.into(),
                                expected: MODE_EXPECTED,
                            })
                        }
                        _ => {
                            return Err(StartError::BadValue {
                                key: key.into(),
                                value: value.into(),
                                expected: MODE_EXPECTED,
                            })
                        }
                    }
                }
                "stackdepth" => {
                    if value.is_empty() {
                        return Err(StartError::Empty {
                            key: key.into(),
                            expected: DEPTH_EXPECTED,
                        });
                    }
                    opts.stack_depth = value
                        .parse::<usize>()
                        .ok()
                        .filter(|d| {
                            *d <= MAX_STACK_DEPTH && value.bytes().all(|b| b.is_ascii_digit())
                        })
                        .ok_or_else(|| StartError::BadValue {
                            key: key.into(),
                            value: value.into(),
                            expected: DEPTH_EXPECTED,
                        })?;
                }
                "jdk" => opts.jdk = two_way(key, value, ["yes", "no"], JDK_EXPECTED)?,
                "juc" => opts.juc = two_way(key, value, ["yes", "no"], JDK_EXPECTED)?,
                "trace" => {
                    opts.trace_all = two_way(key, value, ["all", "summary"], TRACE_EXPECTED)?
                }
                "stackwalk" => {
                    opts.fast_walk = two_way(key, value, ["fast", "jvmti"], WALK_EXPECTED)?
                }
                "notifies" => {
                    opts.count_notifies =
                        two_way(key, value, ["counted", "events"], NOTIFIES_EXPECTED)?
                }
                "holdtiming" => {
                    opts.sampled_holds = two_way(key, value, ["sampled", "exact"], TIMING_EXPECTED)?
                }
                "guards" => opts.guards = two_way(key, value, ["on", "off"], GUARDS_EXPECTED)?,
                "tracking" => {
                    opts.sampled_tracking =
                        !two_way(key, value, ["full", "sampled"], TRACKING_EXPECTED)?;
                    opts.tracking_asked = true;
                }
                "holdthreshold" => {
                    if value.is_empty() {
                        return Err(StartError::Empty {
                            key: key.into(),
                            expected: THRESHOLD_EXPECTED,
                        });
                    }
                    opts.hold_threshold =
                        parse_duration(value).ok_or_else(|| StartError::BadValue {
                            key: key.into(),
                            value: value.into(),
                            expected: THRESHOLD_EXPECTED,
                        })?;
                }
                "waitthreshold" => {
                    opts.wait_threshold = duration(key, value, WAIT_THRESHOLD_EXPECTED)?
                }
                "contentionthreshold" => {
                    opts.contention_threshold = duration(key, value, CONTENTION_THRESHOLD_EXPECTED)?
                }
                "maxsize" => opts.max_size = Some(bound(key, value, parse_size, SIZE_EXPECTED)?),
                "maxage" => opts.max_age = Some(bound(key, value, parse_age, AGE_EXPECTED)?),
                _ => {
                    return Err(StartError::UnknownOption {
                        key: key.to_string(),
                    })
                }
            }
        }
        Ok(opts)
    }

    /// The three output paths: `.orca` (for a bounded recording, the chunk folder
    /// `.chunks`), `.methods`, `.classtable`.
    pub fn paths(&self) -> [PathBuf; 3] {
        let events = if self.ring().is_some() {
            "chunks"
        } else {
            "orca"
        };
        [events, "methods", "classtable"]
            .map(|ext| PathBuf::from(format!("{}.{}", self.prefix, ext)))
    }

    /// The chunk ring of `maxsize`/`maxage`, if either is given.
    pub fn ring(&self) -> Option<Ring> {
        Ring::of(self.max_size, self.max_age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bare_prefix() {
        assert_eq!(Options::parse(None).unwrap(), Options::default());
        assert_eq!(Options::default().mode, Mode::Instrument);
        assert_eq!(Options::parse(Some("")).unwrap(), Options::default());
        let o = Options::parse(Some("out/run,stackdepth=3,mode=jvmti")).unwrap();
        assert_eq!(
            (o.prefix.as_str(), o.stack_depth, o.mode),
            ("out/run", 3, Mode::Jvmti)
        );
        assert_eq!(Options::parse(Some("file=x")).unwrap().prefix, "x");
    }

    #[test]
    fn rejects_every_malformed_form() {
        for bad in [
            "stackdepth=",
            "jdk=maybe",
            "jdk=",
            "juc=",
            "juc=1",
            "stackdepth=-1",
            "stackdepth=1025",
            "stackdepth=+3",
            "stackdepth=abc",
            "mode=fast",
            "mode=",
            "file=",
            "colour=red",
            "a,b",
            "x,file=y",
            "stackdepth=1,stackdepth=2",
            "=x",
            "a,,b",
            "out,",
            "trace=",
            "trace=some",
            "holdthreshold=",
            "holdthreshold=10",
            "holdthreshold=ms",
            "holdthreshold=5min",
            "holdthreshold=-1ms",
            "stackwalk=",
            "stackwalk=asgct",
        ] {
            assert!(Options::parse(Some(bad)).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn trace_and_threshold() {
        let o = Options::parse(Some("trace=all,holdthreshold=500us")).unwrap();
        assert!(o.trace_all);
        assert_eq!(o.hold_threshold, Some(500_000));
        let o = Options::parse(Some("holdthreshold=off")).unwrap();
        assert_eq!(o.hold_threshold, None);
        assert_eq!(
            Options::parse(Some("holdthreshold=0"))
                .unwrap()
                .hold_threshold,
            Some(0)
        );
        assert_eq!(
            Options::parse(Some("holdthreshold=2s"))
                .unwrap()
                .hold_threshold,
            Some(2_000_000_000)
        );
        assert!(!Options::default().trace_all);
    }

    #[test]
    fn stack_walker() {
        assert!(Options::default().fast_walk);
        assert!(Options::parse(Some("stackwalk=fast")).unwrap().fast_walk);
        assert!(!Options::parse(Some("stackwalk=jvmti")).unwrap().fast_walk);
        assert!(Options::default().count_notifies);
        assert!(
            !Options::parse(Some("notifies=events"))
                .unwrap()
                .count_notifies
        );
        assert!(Options::parse(Some("notifies=bell")).is_err());
        assert_eq!(Options::default().wait_threshold, 10_000_000);
        let o = Options::parse(Some("waitthreshold=0")).unwrap();
        assert_eq!(o.wait_threshold, 0);
        let o = Options::parse(Some("waitthreshold=250us")).unwrap();
        assert_eq!(o.wait_threshold, 250_000);
        assert_eq!(Options::default().contention_threshold, 1_000_000);
        let o = Options::parse(Some("contentionthreshold=0")).unwrap();
        assert_eq!(o.contention_threshold, 0);
        let o = Options::parse(Some("contentionthreshold=5ms")).unwrap();
        assert_eq!(o.contention_threshold, 5_000_000);
        assert!(Options::parse(Some("contentionthreshold=off")).is_err());
        for bad in ["waitthreshold=", "waitthreshold=off", "waitthreshold=10"] {
            assert!(Options::parse(Some(bad)).is_err(), "{bad}");
        }
        assert!(Options::default().sampled_holds);
        assert!(
            !Options::parse(Some("holdtiming=exact"))
                .unwrap()
                .sampled_holds
        );
        assert!(Options::parse(Some("holdtiming=")).is_err());
        assert!(Options::parse(Some("holdtiming=rough")).is_err());
        assert!(Options::default().sampled_tracking);
        assert!(!Options::default().tracking_asked);
        let sampled = Options::parse(Some("tracking=sampled")).unwrap();
        assert!(sampled.sampled_tracking && sampled.tracking_asked);
        assert!(
            !Options::parse(Some("tracking=full"))
                .unwrap()
                .sampled_tracking
        );
        assert!(Options::parse(Some("tracking=")).is_err());
        assert!(Options::parse(Some("tracking=some")).is_err());
        assert!(!Options::default().guards);
        assert!(Options::parse(Some("guards=on")).unwrap().guards);
        assert!(!Options::parse(Some("guards=off")).unwrap().guards);
        for bad in ["guards=", "guards=yes", "guards=on,guards=off"] {
            assert!(Options::parse(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn bounds() {
        let o = Options::parse(Some("out/x,maxsize=200MB,maxage=1h")).unwrap();
        assert_eq!(o.max_size, Some(200 << 20));
        assert_eq!(o.max_age, Some(3_600_000_000_000));
        let r = o.ring().unwrap();
        assert_eq!(r.chunk_bytes, Some(25 << 20));
        assert_eq!(r.chunk_nanos, Some(450_000_000_000));
        assert_eq!(o.paths()[0], PathBuf::from("out/x.chunks"));
        assert_eq!(Options::default().ring(), None);
        assert_eq!(Options::default().paths()[0], PathBuf::from("orca.orca"));
        let r = Options::parse(Some("maxage=2s")).unwrap().ring().unwrap();
        assert_eq!(
            (r.chunk_bytes, r.chunk_nanos),
            (None, Some(MIN_CHUNK_NANOS))
        );
        let r = Options::parse(Some("maxsize=128KB"))
            .unwrap()
            .ring()
            .unwrap();
        assert_eq!((r.chunk_bytes, r.chunk_nanos), (Some(16 << 10), None));
        assert_eq!(
            Options::parse(Some("maxage=10m")).unwrap().max_age,
            Some(600_000_000_000)
        );
        assert_eq!(
            Options::parse(Some("maxsize=1GB")).unwrap().max_size,
            Some(1 << 30)
        );
        for bad in [
            "maxsize=",
            "maxsize=200",
            "maxsize=200mb",
            "maxsize=64KB",
            "maxsize=MB",
            "maxsize=-1MB",
            "maxsize=99999999999999GB",
            "maxage=",
            "maxage=1",
            "maxage=1s",
            "maxage=10ms",
            "maxage=h",
            "maxage=1w",
            "maxsize=1MB,maxsize=2MB",
        ] {
            assert!(Options::parse(Some(bad)).is_err(), "accepted {bad:?}");
        }
        let e = Options::parse(Some("maxsize=12")).unwrap_err().to_string();
        assert!(e.contains("'maxsize'") && e.contains("200MB"), "{e}");
        let e = Options::parse(Some("maxage=1y")).unwrap_err().to_string();
        assert!(e.contains("'maxage'") && e.contains("1h"), "{e}");
    }

    #[test]
    fn messages_name_the_option_and_the_choices() {
        let e = Options::parse(Some("mode=fast")).unwrap_err().to_string();
        assert!(
            e.contains("'mode'") && e.contains("jvmti, instrument"),
            "{e}"
        );
        let e = Options::parse(Some("colour=red")).unwrap_err().to_string();
        assert!(e.contains("'colour'") && e.contains("stackdepth=N"), "{e}");
    }
}
