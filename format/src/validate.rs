//! The validator: every rule of docs/FORMAT.md, checked in one streaming pass
//! over each file, with memory bounded by the number of threads, methods and
//! classes (never by the number of events).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::parse::{
    parse_class_line, parse_event_line, parse_method_line, Durations, Event, EventKind, Frame,
    Hash, LockMode, RecordingEnd, Timestamp,
};
use crate::reader::{Line, LineReader};
use crate::spans::{Held, Pairer, Span, SpanKind, Unpaired};
use crate::{paths, OrcaError};

/// Which of the three files a violation is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// `PREFIX.orca`, the events.
    Orca,
    /// `PREFIX.methods`.
    Methods,
    /// `PREFIX.classtable`.
    Classtable,
}

/// How bad a violation is. Only [`Severity::Error`] makes a log invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The log breaks FORMAT.md.
    Error,
    /// Allowed, but only after `kill -9` (torn last line, unresolved IDs then).
    Warning,
    /// Allowed: e.g. a pair still open when the run ended.
    Note,
}

/// The rule a violation breaks, so tests can match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// A line does not match its syntax (see the message for the field).
    Syntax,
    /// The last line has no final `\n` (writer killed); it is ignored.
    Torn,
    /// A line exceeds the reader's length limit.
    LineTooLong,
    /// A class or method ID listed twice.
    DuplicateId,
    /// A method ID used in `.orca` is not in `.methods`.
    UnresolvedMethod,
    /// A class ID used in `.methods` is not in `.classtable`.
    UnresolvedClass,
    /// A thread's timestamp went backwards.
    TimestampOrder,
    /// Entry/exit or enter/entered pairing broken on a thread.
    Pairing,
    /// A pair or a held monitor still open at the end of the log (a note).
    OpenAtEnd,
    /// ThreadStarted not first, or an event after ThreadEnded.
    ThreadLifecycle,
    /// Stack deeper than the configured `stackdepth`.
    StackDepth,
    /// A `ThreadStart` later than the started thread's `ThreadStarted`
    /// (FORMAT.md, Ordering: timestamps preserve causality).
    Causality,
    /// Two threads hold one monitor, or one j.u.c. lock in mode `W`, at the same time
    /// (FORMAT.md, "Exclusion").
    Exclusion,
    /// One ID names two things: a thread ID started again after its `ThreadEnded`, or two
    /// method IDs for one method of one class (FORMAT.md, "One ID, one thing").
    IdReuse,
    /// A line after the `RecordingEnded` line, which must be the last.
    AfterEnd,
    /// A `RecordingStarted` line that is not the first line of the log, or a second one.
    NotFirst,
}

/// One broken (or noteworthy) rule at one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// File name as given to the validator (e.g. `out/run.orca`).
    pub file: String,
    /// Which file that is.
    pub file_kind: FileKind,
    /// 1-based line number.
    pub line: u64,
    /// Error, warning or note.
    pub severity: Severity,
    /// The rule.
    pub kind: ViolationKind,
    /// What is wrong, for humans.
    pub message: String,
}

impl fmt::Display for Violation {
    /// `file:line: message`, with `warning: ` or `note: ` before the message
    /// when it is not an error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
            Severity::Note => "note: ",
        };
        write!(f, "{}:{}: {}{}", self.file, self.line, tag, self.message)
    }
}

/// Knobs of the validator.
#[derive(Debug, Clone)]
pub struct Options {
    /// The agent's `stackdepth` if known: deeper stacks are errors.
    pub max_stack_depth: Option<u32>,
    /// Violations kept in the report; the rest are only counted, so that a
    /// garbage file cannot make the validator's memory grow without bound.
    pub max_violations: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_stack_depth: None,
            max_violations: 10_000,
        }
    }
}

/// Result of validating one log.
#[derive(Debug, Clone, Default)]
pub struct ValidationReport {
    /// Violations in the order found (classtable, methods, then orca lines;
    /// end-of-log notes last), at most `Options::max_violations`.
    pub violations: Vec<Violation>,
    /// Violations found beyond `max_violations`.
    pub suppressed: u64,
    /// Errors in total (kept and suppressed).
    pub errors: u64,
    /// Well-formed event lines in `.orca`.
    pub events: u64,
    /// Well-formed lines in `.methods`.
    pub methods: u64,
    /// Well-formed lines in `.classtable`.
    pub classes: u64,
    /// Distinct thread IDs seen in `.orca`.
    pub threads: u64,
    /// Sum of the `EventsDropped` counts.
    pub dropped: u64,
    /// Gaps in a chunk folder read as one (a chunk deleted by hand): each resumes the log.
    pub gaps: u64,
    /// Whether any of the three files has a torn last line.
    pub torn: bool,
    /// How the recording ended, from its `RecordingEnded` line; `None` when the log has
    /// none: the JVM was killed (SIGKILL) or crashed (a fatal error), and the log holds what
    /// the writer had flushed (at least every 100 ms) up to its last complete line.
    pub ended: Option<RecordingEnd>,
    /// The settings of the log's `RecordingStarted` line (`key=value;...`); `None` for a log
    /// without one (an agent older than commit d251e2d, or another writer).
    pub settings: Option<String>,
}

impl ValidationReport {
    /// How the JVM ended, in words, for `orca check` and `orca report`.
    pub fn ending(&self) -> &'static str {
        RecordingEnd::describe(self.ended)
    }
}
impl ValidationReport {
    /// True when the log has no error (warnings and notes are allowed).
    pub fn is_valid(&self) -> bool {
        self.errors == 0
    }
    /// Every kept error as `file:line: what is wrong`, for test assertions
    /// (`assert!(r.is_valid(), "{:#?}", r.error_lines())`).
    pub fn error_lines(&self) -> Vec<String> {
        self.errors().map(|v| v.to_string()).collect()
    }
    /// Kept violations of severity [`Severity::Error`].
    pub fn errors(&self) -> impl Iterator<Item = &Violation> {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
    }
}

/// Validates `PREFIX.classtable`, `PREFIX.methods` and `PREFIX.orca`.
///
/// Returns `Err` only when a file cannot be opened or read; everything wrong
/// inside the files is in the report.
pub fn validate_prefix(prefix: &Path, opts: &Options) -> Result<ValidationReport, OrcaError> {
    let p = paths(prefix);
    let open = |path: &Path| {
        crate::LogFile::open(path).map_err(|source| OrcaError::Io {
            path: path.display().to_string(),
            source,
        })
    };
    let c = open(&p.classtable)?;
    let m = open(&p.methods)?;
    let o = open(&p.orca)?;
    validate_readers(
        (&p.classtable.display().to_string(), c),
        (&p.methods.display().to_string(), m),
        (&p.orca.display().to_string(), o),
        opts,
    )
}

/// Validates three files given as `(name, reader)`: the name is what
/// violations print before `:line:`. Handy for in-memory tests.
pub fn validate_readers<C: Read, M: Read, O: Read>(
    classtable: (&str, C),
    methods: (&str, M),
    orca: (&str, O),
    opts: &Options,
) -> Result<ValidationReport, OrcaError> {
    let mut v = Validator::new(opts.clone());
    v.classtable(classtable.0, classtable.1)?;
    v.methods(methods.0, methods.1)?;
    v.orca(orca.0, orca.1)?;
    Ok(v.finish())
}

/// A `LockHold` line not yet counted in a summary line (`ThreadState::long_holds`).
type LongHold = (Hash, LockMode, Frame, u64, u64, Option<Unfit>);

/// A `LockHold` that a `LockHolds` line could not count: the flush's timestamp, that line, and
/// what to say there if no `LockHoldsUntimed` line of the flush counts it.
type Unfit = (Timestamp, u64, String);

#[derive(Default)]
struct ThreadState {
    first_line: u64,
    last_ts: Timestamp,
    last_line: u64,
    ended: Option<u64>,
    /// `LockHold` lines not yet counted in a `LockHolds` (or `LockHoldsUntimed`) line of
    /// their key: (lock, mode, site, nanos, line, unfit). `unfit`: a `LockHolds` line of the
    /// key could not count it, and a `LockHoldsUntimed` line of that flush must.
    long_holds: Vec<LongHold>,
    /// The timestamp of the thread's latest hold summaries and their keys (kind, monitor or
    /// lock, mode, site) with their lines: a flush writes one line per key (FORMAT.md).
    summary_keys: Option<(Timestamp, SummaryKeys)>,
}

/// The keys of one flush of a thread's hold summaries, with their lines.
/// (A contentions line's key has its stack too: a hash of it.)
type SummaryKeys = crate::FastMap<(EventKind, Hash, Option<LockMode>, Frame, u64), u64>;

/// What a thread can own exclusively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Owned {
    Monitor(Hash),
    Lock(Hash),
}

impl Owned {
    /// What a hold owns exclusively, if anything: a monitor, a j.u.c. lock in mode `W` when
    /// the log has `LockRelease` lines (`lock_releases`).
    fn of(held: Held, lock_releases: bool) -> Option<Owned> {
        match held {
            Held::Monitor(m) => Some(Owned::Monitor(m)),
            Held::Lock(l, LockMode::Write) if lock_releases => Some(Owned::Lock(l)),
            Held::Lock(..) => None,
        }
    }
}

/// The message for a line that pairs with nothing: `kind` is the line's, `ev` the line.
fn unpaired(u: Unpaired, kind: EventKind, thread: Hash, ev: &Event<'_>) -> String {
    match u {
        Unpaired::Contention { monitor, line } => format!("{kind} on thread {thread} while its MonitorContendedEnter of {monitor} at line {line} has no MonitorContendedEntered"),
        Unpaired::Uncontended { monitor } => format!("MonitorContendedEntered of {monitor} on thread {thread} without a MonitorContendedEnter"),
        Unpaired::Entering { monitor, line } => format!("{kind} on thread {thread} while its MonitorEnter of {monitor} at line {line} has no MonitorEntered"),
        Unpaired::Unbalanced(Held::Monitor(m)) => format!("unbalanced MonitorExit: thread {thread} does not hold monitor {m} (no matching MonitorEntered)"),
        Unpaired::Unbalanced(Held::Lock(lock, mode)) => format!("unbalanced LockRelease: thread {thread} does not hold lock {lock} in mode {mode} (no matching LockAcquired)"),
        Unpaired::Nested { open, line } => format!("{kind} on thread {thread} inside its open {open} of line {line} (tracked calls never nest)"),
        Unpaired::Unbegun { expected } => format!("{kind} on thread {thread} without its {expected}"),
        Unpaired::OtherCall { open, line, expected } => format!("{kind} on thread {thread} closes a {open} (line {line}), expected {expected}"),
        Unpaired::OtherObject { open, line, was } => format!(
            "{kind} of {} on thread {thread} but its {open} at line {line} was of {}",
            ev.object().map(|h| h.to_string()).unwrap_or_default(),
            was.map(|h| h.to_string()).unwrap_or_default()
        ),
        Unpaired::OtherMode { open, line } => format!("{kind} on thread {thread}: mode differs from its {open} at line {line}"),
        Unpaired::OtherSite { open, line } => format!("{kind} on thread {thread}: call site differs from its {open} at line {line}"),
        Unpaired::EndedInCall { open, line } => format!("thread {thread} ended inside its {open} of line {line}"),
        Unpaired::EndedBlocked { monitor, line } => format!("thread {thread} ended while blocked on {monitor} (MonitorContendedEnter at line {line})"),
    }
}

impl fmt::Display for Owned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owned::Monitor(h) => write!(f, "monitor {h}"),
            Owned::Lock(h) => write!(f, "lock {h} (mode W)"),
        }
    }
}

/// The closed stretches of ownership of one monitor or lock, by (start, line): disjoint in
/// a valid log, so a new one is checked against its two neighbours only.
#[derive(Default)]
struct Ownerships {
    by_start: BTreeMap<(Timestamp, u64), (Timestamp, Hash, u64)>,
}

/// How far (seconds) a thread's lines may lag behind other threads' in the file (the
/// writer's batching delay is far less): stretches that ended this long before every live
/// thread's latest line are forgotten, which bounds the validator's memory.
const OWNERSHIP_SLACK_NANOS: u64 = 10_000_000_000;

/// Events between two prunings of [`Ownerships`].
const PRUNE_EVERY: u64 = 1 << 16;

/// Dense set of method IDs (the agent counts up from 1), with a fallback.
#[derive(Default)]
struct MethodSet {
    dense: Vec<u64>,
    sparse: HashSet<u32>,
}

const DENSE_LIMIT: u32 = 1 << 24;

impl MethodSet {
    fn insert(&mut self, id: u32) -> bool {
        if id < DENSE_LIMIT {
            let w = (id / 64) as usize;
            if w >= self.dense.len() {
                self.dense.resize(w + 1, 0);
            }
            let bit = 1u64 << (id % 64);
            let new = self.dense[w] & bit == 0;
            self.dense[w] |= bit;
            new
        } else {
            self.sparse.insert(id)
        }
    }
    fn contains(&self, id: u32) -> bool {
        if id < DENSE_LIMIT {
            self.dense
                .get((id / 64) as usize)
                .is_some_and(|w| w & (1u64 << (id % 64)) != 0)
        } else {
            self.sparse.contains(&id)
        }
    }
}

/// Incremental validator: feed `.classtable`, then `.methods`, then `.orca`,
/// then call [`Validator::finish`]. [`validate_prefix`] does all of this.
pub struct Validator {
    opts: Options,
    report: ValidationReport,
    classes: HashMap<Hash, u64>,
    methods: MethodSet,
    method_lines: HashMap<u32, u64>,
    missing_methods: HashSet<u32>,
    threads: crate::FastMap<Hash, ThreadState>,
    orca_name: String,
    last_orca_line: u64,
    /// `ThreadStart` events by started thread: (timestamp, line).
    start_calls: crate::FastMap<Hash, (Timestamp, u64)>,
    /// `ThreadStarted` events by thread: (timestamp, line).
    started: crate::FastMap<Hash, (Timestamp, u64)>,
    /// The pairing of the events (spans.rs), whose lines that pair with nothing are errors.
    pairer: Pairer,
    /// The stretches of ownership one line ended (kept for its allocation).
    stretches: Vec<Span>,
    /// Notes on j.u.c. locks held at a `ThreadEnded`: (line, message). Kept until
    /// [`Validator::finish`], which drops them if the log is summarised for j.u.c.
    /// locks (`LockHolds`/`LockHold` lines and no `LockRelease`: the releases of the
    /// `LockAcquired` written were not).
    juc_notes: Vec<(u64, String)>,
    /// Closed stretches of exclusive ownership, per monitor or lock.
    ownerships: crate::FastMap<Owned, Ownerships>,
    /// Method lines by (class, name, signature): (method ID, line).
    method_keys: HashMap<(Hash, String, String), (u32, u64)>,
    /// Events seen with a thread, to prune [`Validator::ownerships`] now and then.
    seen_events: u64,
    /// `ObjectClass` lines by object: the line that named it, and the second line's when
    /// another object with the same ID was named.
    object_classes: crate::FastMap<Hash, (u64, Option<u64>)>,
    /// A chunk of a bounded recording after its first (docs/FORMAT.md, "Chunks"): a line that
    /// ends what began before it (a wait, a hold, a contention) pairs with nothing in it, a
    /// note rather than an error.
    continuation: bool,
    /// Restated `ThreadStarted` lines of the chunk's preamble still to come: stamped at the
    /// chunk's start, they are not in their thread's time order.
    restated: u64,
    /// The time of a chunk's `RecordingStarted` after a gap: the restated `ThreadStarted` lines
    /// kept after it have it.
    restated_at: Option<Timestamp>,
}

impl Validator {
    /// A validator with no file read yet.
    pub fn new(opts: Options) -> Self {
        Validator {
            opts,
            report: ValidationReport::default(),
            classes: HashMap::new(),
            methods: MethodSet::default(),
            method_lines: HashMap::new(),
            missing_methods: HashSet::new(),
            threads: Default::default(),
            orca_name: String::new(),
            last_orca_line: 0,
            start_calls: Default::default(),
            started: Default::default(),
            pairer: Pairer::new().with_stretches(),
            stretches: Vec::new(),
            juc_notes: Vec::new(),
            ownerships: Default::default(),
            method_keys: HashMap::new(),
            seen_events: 0,
            object_classes: Default::default(),
            continuation: false,
            restated: 0,
            restated_at: None,
        }
    }

    fn push(
        &mut self,
        file: &str,
        fk: FileKind,
        line: u64,
        sev: Severity,
        kind: ViolationKind,
        message: String,
    ) {
        if sev == Severity::Error {
            self.report.errors += 1;
        }
        if self.report.violations.len() >= self.opts.max_violations {
            self.report.suppressed += 1;
            return;
        }
        self.report.violations.push(Violation {
            file: file.to_string(),
            file_kind: fk,
            line,
            severity: sev,
            kind,
            message,
        });
    }

    fn line_problem(&mut self, file: &str, fk: FileKind, n: u64, line: &Line<'_>) -> bool {
        match line {
            Line::Complete(_) => false,
            Line::Torn(_) => {
                self.report.torn = true;
                self.push(
                    file,
                    fk,
                    n,
                    Severity::Warning,
                    ViolationKind::Torn,
                    "torn last line (no final newline: the writer was killed); ignored".into(),
                );
                true
            }
            Line::TooLong => {
                self.push(
                    file,
                    fk,
                    n,
                    Severity::Error,
                    ViolationKind::LineTooLong,
                    "line too long".into(),
                );
                true
            }
        }
    }

    /// Reads `PREFIX.classtable`.
    pub fn classtable<R: Read>(&mut self, name: &str, r: R) -> Result<(), OrcaError> {
        let fk = FileKind::Classtable;
        let mut lines = LineReader::new(r);
        while let Some((n, line)) = lines.next_line().map_err(|e| io_err(name, e))? {
            if self.line_problem(name, fk, n, &line) {
                continue;
            }
            let Line::Complete(b) = line else { continue };
            match parse_class_line(b) {
                Ok(c) => {
                    self.report.classes += 1;
                    if let Some(first) = self.classes.get(&c.class) {
                        let msg =
                            format!("class ID {} listed again (first at line {first})", c.class);
                        self.push(
                            name,
                            fk,
                            n,
                            Severity::Error,
                            ViolationKind::DuplicateId,
                            msg,
                        );
                    } else {
                        self.classes.insert(c.class, n);
                    }
                }
                Err(e) => self.push(
                    name,
                    fk,
                    n,
                    Severity::Error,
                    ViolationKind::Syntax,
                    e.to_string(),
                ),
            }
        }
        Ok(())
    }

    /// Reads `PREFIX.methods` (after the class table).
    pub fn methods<R: Read>(&mut self, name: &str, r: R) -> Result<(), OrcaError> {
        let fk = FileKind::Methods;
        let mut lines = LineReader::new(r);
        while let Some((n, line)) = lines.next_line().map_err(|e| io_err(name, e))? {
            if self.line_problem(name, fk, n, &line) {
                continue;
            }
            let Line::Complete(b) = line else { continue };
            match parse_method_line(b) {
                Ok(m) => {
                    self.report.methods += 1;
                    if !self.methods.insert(m.method.0) {
                        let first = self.method_lines.get(&m.method.0).copied().unwrap_or(0);
                        let msg = format!(
                            "method ID {} listed again (first at line {first})",
                            m.method
                        );
                        self.push(
                            name,
                            fk,
                            n,
                            Severity::Error,
                            ViolationKind::DuplicateId,
                            msg,
                        );
                    } else {
                        self.method_lines.insert(m.method.0, n);
                    }
                    // A class declares one method per name and descriptor: a second method
                    // ID for it means some frame names the wrong class (class 00000000,
                    // "unknown", is exempt: it stands for many classes).
                    if m.class != Hash(0) {
                        let key = (
                            m.class,
                            m.name.raw().to_owned(),
                            m.signature.raw().to_owned(),
                        );
                        match self.method_keys.get(&key) {
                            Some(&(other, at)) if other != m.method.0 => {
                                let msg = format!(
                                    "method {} ({}{} of class {}) is already method {:08X} at line {at}: one of them is not declared by that class",
                                    m.method,
                                    m.name.raw(),
                                    m.signature.raw(),
                                    m.class,
                                    other
                                );
                                self.push(
                                    name,
                                    fk,
                                    n,
                                    Severity::Error,
                                    ViolationKind::IdReuse,
                                    msg,
                                );
                            }
                            Some(_) => {}
                            None => {
                                self.method_keys.insert(key, (m.method.0, n));
                            }
                        }
                    }
                    if !self.classes.contains_key(&m.class) {
                        let msg = format!(
                            "class ID {} of method {} is not in the class table",
                            m.class, m.method
                        );
                        self.push(
                            name,
                            fk,
                            n,
                            Severity::Error,
                            ViolationKind::UnresolvedClass,
                            msg,
                        );
                    }
                }
                Err(e) => self.push(
                    name,
                    fk,
                    n,
                    Severity::Error,
                    ViolationKind::Syntax,
                    e.to_string(),
                ),
            }
        }
        Ok(())
    }

    /// Reads `PREFIX.orca` (after the methods).
    pub fn orca<R: Read>(&mut self, name: &str, r: R) -> Result<(), OrcaError> {
        self.orca_name = name.to_string();
        let mut lines = LineReader::new(r);
        while let Some((n, line)) = lines.next_line().map_err(|e| io_err(name, e))? {
            self.last_orca_line = n;
            if self.line_problem(name, FileKind::Orca, n, &line) {
                continue;
            }
            let Line::Complete(b) = line else { continue };
            if self.report.ended.is_some() {
                let msg = "a line after the RecordingEnded line, which must be the last".into();
                self.err(name, n, ViolationKind::AfterEnd, msg);
            }
            match parse_event_line(b) {
                Ok(rec) => {
                    if let Event::RecordingEnded { how } = rec.event {
                        self.report.ended = Some(how);
                        continue;
                    }
                    if let Event::RecordingStarted { settings } = rec.event {
                        if n != 1 && settings.chunk().is_some() && self.report.settings.is_some() {
                            // A chunk folder read as one, after a gap (a chunk deleted by
                            // hand, docs/FORMAT.md "Chunks"): what was open before it pairs
                            // with nothing after it.
                            self.pairer = Pairer::new().with_stretches();
                            self.continuation = true;
                            self.restated = 0;
                            self.restated_at = Some(rec.timestamp);
                            self.report.gaps += 1;
                            continue;
                        }
                        if n != 1 {
                            let msg = "a RecordingStarted line that is not the first line".into();
                            self.err(name, n, ViolationKind::NotFirst, msg);
                        }
                        self.report.settings = Some(settings.raw().to_string());
                        if let Some((chunk, threads)) = settings.chunk() {
                            self.continuation = chunk > 1;
                            self.restated = threads;
                        }
                        continue;
                    }
                    if let Event::ThreadStarted { thread, .. } = rec.event {
                        let at_gap = self.restated_at == Some(rec.timestamp);
                        if self.restated > 0 || at_gap {
                            // Restated: not an event of the chunk, and it does not order its
                            // thread's lines.
                            self.restated = self.restated.saturating_sub(1);
                            self.event(name, n, rec.timestamp, &rec.event);
                            if let Some(st) = self.threads.get_mut(&thread) {
                                st.last_ts = Timestamp(0);
                            }
                            continue;
                        }
                    }
                    self.restated = 0;
                    self.restated_at = None;
                    self.report.events += 1;
                    self.event(name, n, rec.timestamp, &rec.event);
                }
                Err(e) => self.push(
                    name,
                    FileKind::Orca,
                    n,
                    Severity::Error,
                    ViolationKind::Syntax,
                    e.to_string(),
                ),
            }
        }
        Ok(())
    }

    fn err(&mut self, file: &str, n: u64, kind: ViolationKind, msg: String) {
        self.push(file, FileKind::Orca, n, Severity::Error, kind, msg);
    }

    fn event(&mut self, file: &str, n: u64, ts: Timestamp, ev: &Event<'_>) {
        use EventKind as K;
        // Every stack of the line: a LockOrder has two sites.
        for st in ev.stacks() {
            if let Some(max) = self.opts.max_stack_depth {
                if st.depth() > max {
                    let msg = format!("stack depth {} exceeds stackdepth {max}", st.depth());
                    self.err(file, n, ViolationKind::StackDepth, msg);
                }
            }
            for f in st.frames() {
                if !self.methods.contains(f.method.0) && self.missing_methods.insert(f.method.0) {
                    let msg = format!(
                        "method ID {} is not in the methods file (first use)",
                        f.method
                    );
                    self.err(file, n, ViolationKind::UnresolvedMethod, msg);
                }
            }
        }
        let kind = ev.kind();
        // Causality across threads: Thread.start happens before the thread's start.
        match *ev {
            // A second `start()` of a thread (it throws IllegalThreadStateException) is a
            // call too, and started nothing: only the first is ordered before the start.
            Event::ThreadStart { started, .. } if self.start_calls.contains_key(&started) => {}
            Event::ThreadStart { started, .. } => {
                if let Some(&(sts, sl)) = self.started.get(&started) {
                    if sts < ts {
                        let msg = format!("ThreadStart of thread {started} at {ts} is later than its ThreadStarted at {sts} (line {sl})");
                        self.err(file, n, ViolationKind::Causality, msg);
                    }
                }
                self.start_calls.insert(started, (ts, n));
            }
            Event::ThreadStarted { thread, .. } => {
                if let Some(&(cts, cl)) = self.start_calls.get(&thread) {
                    if ts < cts {
                        let msg = format!("ThreadStarted of thread {thread} at {ts} is earlier than the ThreadStart that started it at {cts} (line {cl})");
                        self.err(file, n, ViolationKind::Causality, msg);
                    }
                }
                self.started.insert(thread, (ts, n));
            }
            _ => {}
        }
        let Some(thread) = ev.thread() else {
            match ev {
                Event::EventsDropped { count } => self.report.dropped += *count,
                Event::ObjectClass { object, .. } => {
                    // A second line says that two objects share the ID; the agent writes
                    // no third.
                    match self.object_classes.get_mut(object) {
                        None => {
                            self.object_classes.insert(*object, (n, None));
                        }
                        Some((_, second @ None)) => *second = Some(n),
                        Some((first, Some(second))) => {
                            let msg = format!(
                                "ObjectClass of object {object} a third time (before at lines {first} and {second}): an object is named once, and once more when another object shares its ID"
                            );
                            self.err(file, n, ViolationKind::DuplicateId, msg);
                        }
                    }
                }
                _ => {}
            }
            return;
        };
        let mut msgs: Vec<(ViolationKind, String)> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let st = self.threads.entry(thread).or_insert_with(|| ThreadState {
            first_line: n,
            last_ts: ts,
            last_line: n,
            ..Default::default()
        });
        // Lifecycle.
        if let Some(end) = st.ended {
            if kind == K::ThreadStarted {
                msgs.push((
                    ViolationKind::IdReuse,
                    format!("thread ID {thread} started again after its ThreadEnded at line {end}: one ID names two threads"),
                ));
                *st = ThreadState {
                    first_line: n,
                    last_ts: ts,
                    last_line: n,
                    ..Default::default()
                };
            } else {
                msgs.push((
                    ViolationKind::ThreadLifecycle,
                    format!("{kind} of thread {thread} after its ThreadEnded at line {end}"),
                ));
            }
        } else if kind == K::ThreadStarted && st.first_line != n {
            msgs.push((
                ViolationKind::ThreadLifecycle,
                format!(
                    "ThreadStarted of thread {thread} is not its first event (first at line {})",
                    st.first_line
                ),
            ));
        }
        // Per-thread timestamp order.
        if ts < st.last_ts {
            msgs.push((
                ViolationKind::TimestampOrder,
                format!(
                    "timestamp {ts} of thread {thread} is before its previous event's {} (line {})",
                    st.last_ts, st.last_line
                ),
            ));
        } else {
            st.last_ts = ts;
        }
        st.last_line = n;
        // Pairing (spans.rs): what pairs with nothing is an error of this line; the holds'
        // stretches of exclusive ownership that this line ends are checked below.
        let mut stretches = std::mem::take(&mut self.stretches);
        let mut contention_lost = false;
        let continuation = self.continuation;
        self.pairer.feed_checked(
            n,
            ts.nanos(),
            ev,
            &mut |s| {
                if matches!(s.kind, SpanKind::Stretch { .. }) {
                    stretches.push(s)
                }
            },
            &mut |u| {
                contention_lost |=
                    matches!(u, Unpaired::Contention { .. }) && kind == K::MonitorContendedEntered;
                let begun_before = matches!(
                    u,
                    Unpaired::Unbegun { .. }
                        | Unpaired::Unbalanced(_)
                        | Unpaired::Uncontended { .. }
                );
                if continuation && begun_before {
                    notes.push(format!(
                        "{} (begun in an earlier chunk?)",
                        unpaired(u, kind, thread, ev)
                    ));
                } else {
                    msgs.push((ViolationKind::Pairing, unpaired(u, kind, thread, ev)));
                }
            },
        );
        if contention_lost {
            // Another monitor's Entered: already reported.
            return self.flush(file, n, msgs);
        }
        // One line per key in a flush of the summaries (one timestamp).
        // A contentions (waits) line's stack begins at its site (docs/FORMAT.md).
        if let Event::MonitorContentions { site, stack, .. }
        | Event::LockContentions { site, stack, .. }
        | Event::Waits { site, stack, .. } = ev
        {
            if !stack.is_empty() && stack.top() != site.top() {
                let msg = format!(
                    "{kind} of thread {thread}: its stack {} does not begin at its site {}",
                    stack.raw(),
                    site.raw()
                );
                msgs.push((ViolationKind::Pairing, msg));
            }
        }
        let summary_key = match *ev {
            Event::MonitorHolds { monitor, site, .. }
            | Event::MonitorHoldsUntimed { monitor, site, .. }
            | Event::MonitorContentions { monitor, site, .. } => {
                site.top().map(|f| (monitor, None, f))
            }
            Event::LockHolds {
                lock, mode, site, ..
            }
            | Event::LockHoldsUntimed {
                lock, mode, site, ..
            }
            | Event::LockContentions {
                lock, mode, site, ..
            } => site.top().map(|f| (lock, Some(mode), f)),
            _ => None,
        };
        // A LockHold that its flush's LockHolds line could not count must be counted by a
        // LockHoldsUntimed line of that flush (a hold that was not timed): once the flush is
        // over, it is an error.
        let in_flush = |at: Timestamp| ts == at && kind.is_summary();
        let mut late: Vec<(u64, String)> = Vec::new();
        let mut i = 0;
        while i < st.long_holds.len() {
            match &st.long_holds[i].5 {
                Some((at, ..)) if !in_flush(*at) => {
                    let (.., unfit) = st.long_holds.swap_remove(i);
                    let (_, line, msg) = unfit.expect("matched");
                    late.push((line, msg));
                }
                _ => i += 1,
            }
        }
        if let Some((object, mode, f)) = summary_key {
            let keys = match &mut st.summary_keys {
                Some((at, keys)) if *at == ts => keys,
                slot => &mut slot.insert((ts, Default::default())).1,
            };
            let stack = match ev {
                Event::MonitorContentions { stack, .. } | Event::LockContentions { stack, .. } => {
                    use std::hash::{Hash as _, Hasher as _};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    stack.raw().hash(&mut h);
                    h.finish()
                }
                // a row of the sample is a key of its own
                Event::MonitorHolds { sample, .. } | Event::MonitorHoldsUntimed { sample, .. } => {
                    *sample
                }
                _ => 0,
            };
            if let Some(first) = keys.insert((kind, object, mode, f, stack), n) {
                msgs.push((
                    ViolationKind::Pairing,
                    format!("{kind} of thread {thread} for {object}{} at {}:{} a second time in one flush of its summaries (first at line {first}): a key has one line per interval", mode.map(|m| format!(" in mode {m}")).unwrap_or_default(), f.method, f.location),
                ));
            }
        }
        match *ev {
            Event::LockHold {
                lock,
                mode,
                nanos,
                site,
                ..
            } => {
                if let Some(f) = site.top() {
                    st.long_holds.push((lock, mode, f, nanos, n, None));
                }
            }
            Event::LockHolds {
                lock,
                mode,
                durations: Durations { max, histogram, .. },
                site,
                ..
            } => {
                // Every `LockHold` of the key since its previous `LockHolds` is counted here:
                // each within maxNanos, and no bucket with fewer holds than LockHold lines;
                // with sampled timing, those it cannot count by a LockHoldsUntimed line of
                // the same flush (next).
                let f = site.top();
                let mut per_bucket: Vec<(u32, u64)> = Vec::new();
                let mut i = 0;
                while i < st.long_holds.len() {
                    let (l, m, s, ns, at, _) = st.long_holds[i];
                    // Lock 0 is the site's row of other locks: it counts the long holds of
                    // the locks without a row of their own (those rows come before it).
                    if (l != lock && lock != Hash(0)) || m != mode || Some(s) != f {
                        i += 1;
                        continue;
                    }
                    let b = crate::hist::bucket(ns);
                    let seen = match per_bucket.iter_mut().find(|x| x.0 == b) {
                        Some(x) => {
                            x.1 += 1;
                            x.1
                        }
                        None => {
                            per_bucket.push((b, 1));
                            1
                        }
                    };
                    let in_bucket = histogram
                        .buckets()
                        .find(|(hb, _)| *hb == b)
                        .map_or(0, |x| x.1);
                    if ns > max || seen > in_bucket {
                        // not counted here: its place in the bucket is free
                        per_bucket.iter_mut().for_each(|x| x.1 -= (x.0 == b) as u64);
                        let msg = format!("LockHolds of thread {thread}, lock {lock}, mode {mode} does not count the {ns} ns LockHold of line {at} (maxNanos {max}, histogram {}), nor does a LockHoldsUntimed line of its flush", histogram.raw());
                        st.long_holds[i].5 = Some((ts, n, msg));
                        i += 1;
                    } else {
                        st.long_holds.swap_remove(i);
                    }
                }
            }
            Event::LockHoldsUntimed {
                lock,
                mode,
                count,
                site,
                ..
            } => {
                // Up to `count` LockHold lines of the key still uncounted are holds that were
                // not timed: those its LockHolds line could not count first.
                let f = site.top();
                let mut left = count;
                for unfit_first in [true, false] {
                    let mut i = 0;
                    while i < st.long_holds.len() && left > 0 {
                        let (l, m, s, ..) = st.long_holds[i];
                        let ok = (l == lock || lock == Hash(0)) && m == mode && Some(s) == f;
                        if ok && st.long_holds[i].5.is_some() == unfit_first {
                            st.long_holds.swap_remove(i);
                            left -= 1;
                        } else {
                            i += 1;
                        }
                    }
                }
            }
            _ => {}
        }
        if kind == K::ThreadEnded {
            // Not an error: a thread that calls System.exit ends inside the JDK's own
            // `synchronized` shutdown code (java.lang.Shutdown), whose exits never run.
            for h in self.pairer.holds(thread) {
                let (c, l) = (h.count, h.begin.line);
                match h.held {
                    Held::Monitor(m) => notes.push(format!("thread {thread} ended holding monitor {m} ({c} MonitorEntered without MonitorExit, first at line {l}): normal only for a thread inside System.exit")),
                    // A j.u.c. lock stays locked when its thread ends: legal Java, worth a
                    // note (decided at the end: not in a log summarised for j.u.c. locks).
                    Held::Lock(lock, mode) => self.juc_notes.push((n, format!("thread {thread} ended holding lock {lock} in mode {mode} ({c} LockAcquired without LockRelease, first at line {l})"))),
                }
            }
            for (lock, mode, _, ns, l, _) in st.long_holds.drain(..) {
                msgs.push((
                    ViolationKind::Pairing,
                    format!("thread {thread} ended with its {ns} ns LockHold of lock {lock} in mode {mode} at line {l} counted in no LockHolds line"),
                ));
            }
            st.ended = Some(n);
        }
        // Stretches of exclusive ownership (FORMAT.md, "Exclusion"): a monitor, or a j.u.c.
        // lock in mode W, from its outermost acquisition (or the return of the wait that
        // released it) to its release (or that wait). A log summarised for j.u.c. locks writes
        // no `LockRelease` (nor uncontended acquisitions): its stretches of a lock are not
        // known.
        let lock_releases = self.pairer.shape().lock_releases;
        for s in stretches.drain(..) {
            let (SpanKind::Stretch { held, .. }, Some(end)) = (s.kind, &s.end) else {
                continue;
            };
            let Some(what) = Owned::of(held, lock_releases) else {
                continue;
            };
            let (since, from) = (Timestamp(s.begin.ts), s.begin.line);
            if let Some(m) = self.owned(what, thread, since, from, Timestamp(end.ts), end.line) {
                msgs.push((ViolationKind::Exclusion, m));
            }
        }
        self.stretches = stretches;
        self.seen_events += 1;
        if self.seen_events.is_multiple_of(PRUNE_EVERY) {
            self.prune_ownerships();
        }
        for msg in notes {
            let name = self.orca_name.clone();
            self.push(
                &name,
                FileKind::Orca,
                n,
                Severity::Note,
                ViolationKind::OpenAtEnd,
                msg,
            );
        }
        for (line, msg) in late {
            self.err(file, line, ViolationKind::Pairing, msg);
        }
        self.flush(file, n, msgs)
    }

    /// Records that `thread` owned `what` from `since` (line `from`) to `until` (line `to`);
    /// the violation if another thread owned it during that time.
    fn owned(
        &mut self,
        what: Owned,
        thread: Hash,
        since: Timestamp,
        from: u64,
        until: Timestamp,
        to: u64,
    ) -> Option<String> {
        let o = self.ownerships.entry(what).or_default();
        let before = o.by_start.range(..(since, from)).next_back();
        let after = o.by_start.range((since, from)..).next();
        let clash = [before, after]
            .into_iter()
            .flatten()
            .find(|(&(s, _), &(e, t, _))| t != thread && s < until && since < e);
        let msg = clash.map(|(&(s, sl), &(e, t, el))| {
            format!("thread {thread} owns {what} from {since} (line {from}) to {until}, while thread {t} owns it from {s} (line {sl}) to {e} (line {el})")
        });
        o.by_start.insert((since, from), (until, thread, to));
        msg
    }

    /// Forgets the stretches of ownership that ended long before every live thread's
    /// latest line (see [`OWNERSHIP_SLACK_NANOS`]): no later line can overlap them.
    fn prune_ownerships(&mut self) {
        let Some(low) = self
            .threads
            .values()
            .filter(|t| t.ended.is_none())
            .map(|t| t.last_ts.0)
            .min()
        else {
            return;
        };
        let Some(cut) = low.checked_sub(OWNERSHIP_SLACK_NANOS) else {
            return;
        };
        self.ownerships.retain(|_, o| {
            o.by_start.retain(|_, v| v.0 .0 >= cut);
            !o.by_start.is_empty()
        });
    }

    fn flush(&mut self, file: &str, n: u64, msgs: Vec<(ViolationKind, String)>) {
        for (k, m) in msgs {
            self.err(file, n, k, m);
        }
    }

    /// Ends the pass: adds end-of-log notes for open pairs, and downgrades
    /// unresolved IDs to warnings when a file is torn (after `kill -9` the
    /// files may each lack their last lines).
    pub fn finish(mut self) -> ValidationReport {
        let file = self.orca_name.clone();
        let end = self.last_orca_line;
        // A log summarised for j.u.c. locks (FORMAT.md: `LockHolds`/`LockHold` lines and no
        // `LockRelease`) writes the `LockAcquired` of contended acquisitions only, never
        // their release: its j.u.c. holds cannot be followed, so they get no notes.
        let juc_summarised = self.pairer.shape().juc_summarised();
        let lock_releases = self.pairer.shape().lock_releases;
        if !juc_summarised {
            for (n, msg) in std::mem::take(&mut self.juc_notes) {
                self.push(
                    &file,
                    FileKind::Orca,
                    n,
                    Severity::Note,
                    ViolationKind::OpenAtEnd,
                    msg,
                );
            }
        }
        // A stretch still open at the end runs to the end: no other thread may own the same
        // thing after it began. Not at the cut of a chunk (closed, or still being written, or
        // the last one after a kill): the release may be in lines the next chunk has (or the
        // writer has not written yet) while other threads' later lines are in this one.
        let pairer = &self.pairer;
        let chunked = self
            .report
            .settings
            .as_deref()
            .is_some_and(|s| crate::Settings::parse_str(s).is_ok_and(|s| s.chunk().is_some()));
        let cut = chunked && matches!(self.report.ended, Some(crate::RecordingEnd::Chunk) | None);
        let mut open: Vec<(Hash, Owned, Timestamp, u64)> = self
            .threads
            .iter()
            .filter(|(_, s)| s.ended.is_none() && !cut)
            .flat_map(|(t, _)| {
                pairer.holds(*t).filter_map(move |h| {
                    let (since, l) = h.running?;
                    Some((*t, Owned::of(h.held, lock_releases)?, Timestamp(since), l))
                })
            })
            .collect();
        open.sort_by_key(|o| o.3);
        for (thread, what, since, from) in open {
            let Some(o) = self.ownerships.get(&what) else {
                continue;
            };
            let before = o.by_start.range(..(since, from)).next_back();
            let after = o.by_start.range((since, from)..);
            let clash = before
                .into_iter()
                .chain(after)
                .find(|(_, &(e, t, _))| t != thread && since < e);
            if let Some((&(s, sl), &(e, t, el))) = clash {
                let msg = format!("thread {thread} owns {what} from {since} (line {from}) to the end of the log, while thread {t} owns it from {s} (line {sl}) to {e} (line {el})");
                self.push(
                    &file,
                    FileKind::Orca,
                    end,
                    Severity::Error,
                    ViolationKind::Exclusion,
                    msg,
                );
            }
        }
        // The last flush of a thread still alive: a LockHold it could not count.
        let mut unfit: Vec<(u64, String)> = Vec::new();
        for s in self.threads.values_mut() {
            s.long_holds.retain_mut(|h| match h.5.take() {
                Some((_, line, msg)) => {
                    unfit.push((line, msg));
                    false
                }
                None => true,
            });
        }
        unfit.sort();
        for (line, msg) in unfit {
            self.err(&file, line, ViolationKind::Pairing, msg);
        }
        let mut notes = Vec::new();
        let mut threads: Vec<_> = self.threads.iter().collect();
        threads.sort_by_key(|(_, s)| s.first_line);
        for (t, s) in threads {
            if s.ended.is_some() {
                continue;
            }
            let p = &self.pairer;
            if let Some(c) = p.open_call(*t) {
                let (k, l) = (c.begin_kind, c.begin.line);
                notes.push(format!(
                    "thread {t}: {k} of line {l} still open at the end of the log"
                ));
            }
            if let Some((m, _, b)) = p.contended(*t) {
                let l = b.line;
                notes.push(format!("thread {t}: still blocked on monitor {m} at the end of the log (MonitorContendedEnter at line {l})"));
            }
            if let Some((m, b)) = p.entering(*t) {
                let l = b.line;
                notes.push(format!("thread {t}: MonitorEnter of {m} at line {l} not yet entered at the end of the log"));
            }
            for h in p.holds(*t).filter(|_| !juc_summarised) {
                let (c, l) = (h.count, h.begin.line);
                if let Held::Lock(lock, mode) = h.held {
                    notes.push(format!("thread {t}: still holds lock {lock} in mode {mode} at the end of the log ({c} open LockAcquired, first at line {l})"));
                }
            }
            for (lock, mode, _, ns, l, _) in &s.long_holds {
                notes.push(format!("thread {t}: its {ns} ns LockHold of lock {lock} in mode {mode} at line {l} is counted in no LockHolds line by the end of the log"));
            }
            for h in p.holds(*t) {
                let (c, l) = (h.count, h.begin.line);
                if let Held::Monitor(m) = h.held {
                    notes.push(format!("thread {t}: still holds monitor {m} at the end of the log ({c} open MonitorEntered, first at line {l})"));
                }
            }
        }
        for msg in notes {
            self.push(
                &file,
                FileKind::Orca,
                end,
                Severity::Note,
                ViolationKind::OpenAtEnd,
                msg,
            );
        }
        self.report.threads = self.threads.len() as u64;
        if self.report.dropped > 0 {
            // Lost events break pairs and lifecycles on whatever thread lost them.
            for v in &mut self.report.violations {
                if matches!(
                    v.kind,
                    ViolationKind::Pairing
                        | ViolationKind::ThreadLifecycle
                        | ViolationKind::Exclusion
                ) && v.severity == Severity::Error
                {
                    v.severity = Severity::Warning;
                    v.message.push_str(" (expected: the agent dropped events)");
                    self.report.errors -= 1;
                }
            }
        }
        if self.report.torn {
            for v in &mut self.report.violations {
                if matches!(
                    v.kind,
                    ViolationKind::UnresolvedMethod | ViolationKind::UnresolvedClass
                ) && v.severity == Severity::Error
                {
                    v.severity = Severity::Warning;
                    v.message
                        .push_str(" (expected after kill -9: files are torn)");
                    self.report.errors -= 1;
                }
            }
        }
        self.report
    }
}

fn io_err(name: &str, source: std::io::Error) -> OrcaError {
    OrcaError::Io {
        path: name.to_string(),
        source,
    }
}
