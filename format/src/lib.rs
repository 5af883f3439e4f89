//! Strict, streaming reader and validator of the Orca log files described in
//! docs/FORMAT.md (`PREFIX.orca`, `PREFIX.methods`, `PREFIX.classtable`).
//!
//! It was written from the format document alone, so that it checks the
//! agent's writer independently instead of sharing its assumptions.
//!
//! - [`reader::LineReader`] splits any `Read` into lines with bounded memory.
//! - [`parse_event_line`], [`parse_method_line`], [`parse_class_line`] turn one
//!   line into a typed, borrowed record or a [`SyntaxError`].
//! - [`validate_prefix`] checks every rule of the document and returns a
//!   [`ValidationReport`] of `file:line: what is wrong` [`Violation`]s.
//! - [`EventReader`] streams typed events for analyses (`orca report`).
//! - [`Metadata`] resolves frames to `Class.method(File.java:line)`.
//! - [`read_events`] loads a (small) log as owned [`OwnedEvent`]s for tests.
//! - [`spans::Pairer`] pairs the events into spans (holds, contentions, calls) once, for
//!   every reader that adds up time.
//! - [`hist`] is the bucket scheme of the `MonitorHolds`/`LockHolds` summary lines' histograms,
//!   shared by every reader.
//!
//! ```no_run
//! use orca_format::{validate_prefix, read_events, Metadata, Options, EventKind};
//! let report = validate_prefix("out/run".as_ref(), &Options::default()).unwrap();
//! assert!(report.is_valid(), "{:#?}", report.error_lines());
//! let md = Metadata::load("out/run".as_ref()).unwrap();
//! for e in read_events("out/run".as_ref()).unwrap().iter().filter(|e| e.kind == EventKind::ObjectWait) {
//!     println!("{:?} at {}", e.thread, md.frame_to_string(e.frames[0]));
//! }
//! ```

#![warn(missing_docs)]

pub mod chunks;
pub mod hist;
pub mod meta;
pub mod output;
pub mod parse;
pub mod reader;
pub mod spans;
pub mod validate;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use chunks::LogFile;
pub use meta::{java_class_name, ClassInfo, Metadata, MethodInfo};
pub use parse::{
    escape, line_for, parse_class_line, parse_event_line, parse_method_line, parse_stack, unescape,
    ClassRecord, ConditionOp, Durations, Event, EventKind, EventRecord, Frame, Hash, HashList,
    Histogram, LineTable, LockMode, LockOp, MethodId, MethodRecord, RecordingEnd, Settings,
    StackTrace, SyntaxError, Text, Timestamp, WaitCall, WakeCall, NATIVE_LOCATION,
};
pub use reader::{Line, LineReader};
pub use validate::{
    validate_prefix, validate_readers, FileKind, Options, Severity, ValidationReport, Validator,
    Violation, ViolationKind,
};

/// A fast hasher for [`Hash`], [`MethodId`] and other small integer keys:
/// one multiply (Fibonacci hashing) instead of SipHash. Identity hashes are
/// not chosen by an attacker, so DoS resistance is not needed, and per-event
/// map lookups dominate the analyses' cost.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0 ^ v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A `HashMap` using [`FastHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// Failure to read the files at all (as opposed to a violation inside them).
#[derive(Debug, thiserror::Error)]
pub enum OrcaError {
    /// A line of `.orca` that [`read_events`] could not parse.
    #[error("{path}:{line}: {error}")]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        error: LineError,
    },
    /// Opening or reading a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The three file names of a dump prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `PREFIX.orca`.
    pub orca: PathBuf,
    /// `PREFIX.methods`.
    pub methods: PathBuf,
    /// `PREFIX.classtable`.
    pub classtable: PathBuf,
}

/// `PREFIX` + `.orca` / `.methods` / `.classtable` (appended, never replacing
/// an extension: `out/run.v2` gives `out/run.v2.orca`).
///
/// A bounded recording (docs/FORMAT.md, "Chunks") is found too: `PREFIX` whose
/// `PREFIX.orca` is missing and `PREFIX.chunks` a folder, or that folder itself, gives the
/// folder as `orca` (read as one log: [`chunks::LogFile`]); one chunk, `PREFIX.chunks/000003`,
/// gives that chunk's file with `PREFIX.methods` and `PREFIX.classtable`.
pub fn paths(prefix: &Path) -> Paths {
    let with = |p: &Path, ext: &str| {
        let mut s = p.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    let text = prefix.to_string_lossy();
    let text = text.trim_end_matches('/');
    if let Some(stem) = text.strip_suffix(".chunks").filter(|_| prefix.is_dir()) {
        let stem = Path::new(stem);
        return Paths {
            orca: prefix.to_path_buf(),
            methods: with(stem, ".methods"),
            classtable: with(stem, ".classtable"),
        };
    }
    let orca = with(prefix, ".orca");
    let methods = with(prefix, ".methods");
    if !orca.exists() {
        let chunks = with(prefix, ".chunks");
        if chunks.is_dir() {
            return Paths {
                orca: chunks,
                methods,
                classtable: with(prefix, ".classtable"),
            };
        }
    }
    if !methods.exists() {
        let folder = prefix.parent().and_then(|d| {
            let t = d.to_string_lossy();
            t.strip_suffix(".chunks").map(PathBuf::from)
        });
        if let Some(stem) = folder {
            return Paths {
                orca,
                methods: with(&stem, ".methods"),
                classtable: with(&stem, ".classtable"),
            };
        }
    }
    Paths {
        orca,
        methods,
        classtable: with(prefix, ".classtable"),
    }
}

/// The three files a writer writes at `prefix`: `PREFIX.orca`, `.methods`, `.classtable`
/// (what [`paths`] gives when no chunk folder is there).
pub fn paths_as_written(prefix: &Path) -> Paths {
    let with = |ext: &str| {
        let mut s = prefix.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    Paths {
        orca: with(".orca"),
        methods: with(".methods"),
        classtable: with(".classtable"),
    }
}

/// Why a line of `.orca` yields no event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Malformed line.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// Last line without `\n` (writer killed); its content is not used.
    #[error("torn last line")]
    Torn,
    /// Line longer than the reader's limit.
    #[error("line too long")]
    TooLong,
}

/// Streams the typed events of a `.orca` file with their line numbers, for
/// analyses that should not stop at the first bad line.
pub struct EventReader<R> {
    lines: LineReader<R>,
}

impl EventReader<LogFile> {
    /// Opens `PREFIX.orca`, or a bounded recording's chunks as one log ([`paths`]).
    pub fn open(prefix: &Path) -> Result<Self, OrcaError> {
        let p = paths(prefix).orca;
        let f = LogFile::open(&p).map_err(|source| OrcaError::Io {
            path: p.display().to_string(),
            source,
        })?;
        Ok(EventReader::new(f))
    }
}

impl<R: Read> EventReader<R> {
    /// Reads events from any reader.
    pub fn new(r: R) -> Self {
        EventReader {
            lines: LineReader::new(r),
        }
    }

    /// Bytes consumed so far.
    pub fn bytes_read(&self) -> u64 {
        self.lines.bytes_read()
    }

    /// The next line's number and event (or why it has none); `None` at the end.
    #[allow(clippy::type_complexity)]
    pub fn next_event(
        &mut self,
    ) -> std::io::Result<Option<(u64, Result<EventRecord<'_>, LineError>)>> {
        Ok(self.lines.next_line()?.map(|(n, line)| {
            let r = match line {
                Line::Complete(b) => parse_event_line(b).map_err(LineError::from),
                Line::Torn(_) => Err(LineError::Torn),
                Line::TooLong => Err(LineError::TooLong),
            };
            (n, r)
        }))
    }
}

/// An event with its fields copied out of the line: convenient for tests that
/// compare whole per-thread sequences (use [`EventReader`] for big logs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedEvent {
    /// 1-based line in `.orca`.
    pub line: u64,
    /// When it happened.
    pub timestamp: Timestamp,
    /// Which event.
    pub kind: EventKind,
    /// The thread it happened on (`None` for `EventsDropped`).
    pub thread: Option<Hash>,
    /// Object, monitor, semaphore, or started/joined thread ([`Event::object`]).
    pub object: Option<Hash>,
    /// Owner thread of a `MonitorContendedEnter`.
    pub owner: Option<Hash>,
    /// Decoded thread name of a `ThreadStarted`.
    pub name: Option<String>,
    /// Count of an `EventsDropped`, `MonitorHolds`, `MonitorHoldsUntimed`, `LockHolds`,
    /// `LockHoldsUntimed`, `MonitorContentions`, `LockContentions` or `LockOrder`.
    pub count: Option<u64>,
    /// Stack frames, innermost first (empty when the event has no stack).
    pub frames: Vec<Frame>,
}

impl OwnedEvent {
    /// Copies a parsed record.
    pub fn new(line: u64, rec: &EventRecord<'_>) -> Self {
        let e = &rec.event;
        OwnedEvent {
            line,
            timestamp: rec.timestamp,
            kind: e.kind(),
            thread: e.thread(),
            object: e.object(),
            owner: match *e {
                Event::MonitorContendedEnter { owner, .. } => Some(owner),
                _ => None,
            },
            name: match e {
                Event::ThreadStarted { name, .. } => Some(name.decode().into_owned()),
                _ => None,
            },
            count: match *e {
                Event::EventsDropped { count }
                | Event::MonitorHoldsUntimed { count, .. }
                | Event::LockHoldsUntimed { count, .. }
                | Event::LockOrder { count, .. } => Some(count),
                _ => e.durations().map(|d| d.count),
            },
            frames: e.stack().map(|s| s.frames().collect()).unwrap_or_default(),
        }
    }
}

/// Reads every event of `PREFIX.orca` into memory, failing on the first
/// malformed line (a torn last line is skipped: [`validate_prefix`] reports it).
/// Meant for test logs; memory grows with the log.
pub fn read_events(prefix: &Path) -> Result<Vec<OwnedEvent>, OrcaError> {
    let path = paths(prefix).orca.display().to_string();
    let mut r = EventReader::open(prefix)?;
    let mut out = Vec::new();
    while let Some((n, rec)) = r.next_event().map_err(|source| OrcaError::Io {
        path: path.clone(),
        source,
    })? {
        match rec {
            Ok(rec) => out.push(OwnedEvent::new(n, &rec)),
            Err(LineError::Torn) => {}
            Err(error) => {
                return Err(OrcaError::Line {
                    path,
                    line: n,
                    error,
                })
            }
        }
    }
    Ok(out)
}
