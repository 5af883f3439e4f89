//! The one log writer behind every event source.
//!
//! Producers (event callbacks on application threads) only fill a record and push it onto a
//! lock-free bounded queue; a background thread formats the records and writes the three
//! files. When producers outrun the writer the queue fills: a producer waits a little for
//! space (a burst), and when the writer is stuck (a slow disk) further events are **dropped
//! and counted** rather than blocking application threads (which could be holding locks the
//! program needs): the count goes into the log as an `EventsDropped` line and onto stderr.
//! Metadata records (methods, classes) are rare and never dropped: they travel on an unbounded
//! queue, so every ID an event uses can always be resolved.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_queue::{ArrayQueue, SegQueue};

use crate::escape::{push_escaped, TextKind};
use crate::jvmti::LineEntry;
use crate::options::Ring;
use crate::recorder::chunks::ChunkRing;
use crate::recorder::clock::{now_nanos, push_dec, push_timestamp};
use orca_format::output::OutputError;
use orca_format::{EventKind, FastHasher, FastMap, WaitCall, WakeCall};

/// Events held in memory at most; a record holds up to [`INLINE_FRAMES`] frames inline (the
/// default stack depth) in at most 128 bytes, so the queue is bounded to about 8 MB (plus the
/// frames of deeper stacks, on the heap).
pub const EVENT_QUEUE_CAPACITY: usize = 1 << 16;
/// Events the writer formats per pass before it looks at the metadata queue again.
const PASS: usize = 4096;
/// Bytes of complete lines a file's buffer holds before they are written.
const BUFFER: usize = 1 << 20;
/// Longest time a complete line waits in memory before it reaches the file.
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);
/// Longest time JVM exit waits for the writer in all (for room for the exit drain's batches,
/// then for the final pass): a hung file system (a stalled network mount, a pipe nobody reads)
/// must not hang the program's exit.
const FINISH_TIMEOUT: Duration = Duration::from_secs(10);
/// Trace events queued in batches at most, beyond which a batch is dropped: 8 MB of
/// [`TraceLine`]s (their stacks are shared). Why not more: with a slow disk the queue stays
/// full, so its size is the agent's memory (`scripts/stress`: +51 MiB with four times this
/// bound, against about +9 MiB before) and what JVM exit waits to write (up to its 10 s limit).
/// A writer descheduled for 20 ms on a busy 2-core machine can make a thread of `PerEvent`
/// drop events at this bound; they are counted.
const MAX_TRACED: u64 = 4 * EVENT_QUEUE_CAPACITY as u64;
/// Longest time exit waits for producers in the middle of a push.
const PUSH_WAIT: Duration = Duration::from_millis(200);

/// One stack frame: the agent's method ID and the original bytecode index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub method: u32,
    pub location: u32,
}

impl Frame {
    pub const NONE: Frame = Frame {
        method: 0,
        location: 0,
    };
}

/// Frames a [`Frames`] holds without a heap allocation: the default stack depth.
pub const INLINE_FRAMES: usize = 8;

/// A stack trace: inline up to [`INLINE_FRAMES`] frames, on the heap beyond. At the default
/// depth the hot path allocates nothing per event (no `malloc` on the application thread, no
/// `free` on the writer's), and the copies kept for a later event (MonitorEntered's stack for
/// its MonitorExit) are plain copies.
#[derive(Clone, Debug)]
pub enum Frames {
    Inline(u8, [Frame; INLINE_FRAMES]),
    Heap(Vec<Frame>),
}

impl Frames {
    /// No frames.
    pub const fn new() -> Frames {
        Frames::Inline(0, [Frame::NONE; INLINE_FRAMES])
    }

    /// Room for `n` frames (inline when `n` fits).
    pub fn with_capacity(n: usize) -> Frames {
        if n <= INLINE_FRAMES {
            Frames::new()
        } else {
            Frames::Heap(Vec::with_capacity(n))
        }
    }

    pub fn push(&mut self, f: Frame) {
        match self {
            Frames::Inline(len, buf) if (*len as usize) < INLINE_FRAMES => {
                buf[*len as usize] = f;
                *len += 1;
            }
            Frames::Inline(len, buf) => {
                let mut v = buf[..*len as usize].to_vec();
                v.push(f);
                *self = Frames::Heap(v);
            }
            Frames::Heap(v) => v.push(f),
        }
    }
}

impl Default for Frames {
    fn default() -> Self {
        Frames::new()
    }
}

impl std::ops::Deref for Frames {
    type Target = [Frame];
    fn deref(&self) -> &[Frame] {
        match self {
            Frames::Inline(len, buf) => &buf[..*len as usize],
            Frames::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Frames {
    fn deref_mut(&mut self) -> &mut [Frame] {
        match self {
            Frames::Inline(len, buf) => &mut buf[..*len as usize],
            Frames::Heap(v) => v,
        }
    }
}

#[cfg(test)]
impl From<Vec<Frame>> for Frames {
    fn from(v: Vec<Frame>) -> Frames {
        let mut f = Frames::with_capacity(v.len());
        for x in v {
            f.push(x);
        }
        f
    }
}

/// The fields of the rarer line shapes, boxed so that every record stays small.
#[derive(Debug, Default)]
pub enum Extra {
    #[default]
    None,
    /// `ThreadStarted`: the thread name.
    Name(Box<str>),
    /// `MonitorHold`: the hold's length in nanoseconds.
    Nanos(u64),
    /// `MonitorHolds`, `LockHolds`.
    Holds(Box<HoldsLine>),
    /// `LockHold`.
    LockHold(Box<LockHoldLine>),
    /// `LockOrder`.
    Order(Box<OrderLine>),
    /// `Notifies`.
    Notifies(Box<NotifiesLine>),
    /// `Waits` (the object in `object`).
    Waits(Box<WaitsLine>),
    /// `ObjectClass`: the class signature of the object in `object` (the line has no thread).
    Class(Box<str>),
    /// j.u.c. lock lines: the `<mode>` letter (`R`, `W`); `LockAcquire`'s owner is in `owner`.
    Mode(u8),
    /// `Condition*` lines: the hash of the condition's lock.
    Lock(u32),
    /// A thread's summary lines of one interval, queued as one record: a database that locks
    /// a different object per row makes hundreds of thousands of them, which must neither be
    /// dropped nor crowd the queue so that other events are.
    Batch(Box<[EventRecord]>),
    /// `trace=all`: the events of one drain of a thread's buffer (up to 1,024 records), queued
    /// as one record. One push per event cost each of them two atomic read-modify-writes on
    /// lines every thread writes, and the queue's 65,536 slots filled with single events.
    Trace(Box<TraceBatch>),
}

/// `trace=all`: the lines of one drain, resolved (every ID a line names is known to the
/// writer) but not formatted. The program's thread only fills a 32-byte entry per line and
/// the writer copies each interned stack's text, formatted once: an [`EventRecord`] with its
/// frames per line, and the frames formatted per line, were most of the complete trace's
/// cost.
#[derive(Debug, Default)]
pub struct TraceBatch {
    pub thread: u32,
    pub lines: Vec<TraceLine>,
    /// The interned stacks the lines name (`TraceLine::stack` - 1).
    pub stacks: Vec<Arc<StackText>>,
}

/// One `MonitorEnter`, `MonitorEntered` or `MonitorExit` line of a [`TraceBatch`].
#[derive(Clone, Copy, Debug)]
pub struct TraceLine {
    pub nanos: u64,
    pub monitor: u32,
    /// The batch's stack (index + 1) below `top`; 0: `top` alone, or no frame.
    pub stack: u32,
    /// The top frame (an interned stack's own, or the release's site).
    pub top: Frame,
    pub kind: EventKind,
    /// Whether the line has `top` (stackdepth 0 and unknown sites have no frame).
    pub has_top: bool,
}

/// An interned stack (stackdepth above 1), formatted once: its frame count, its top frame
/// (which a release's line replaces with its own site), and the text of the frames below.
#[derive(Debug)]
pub struct StackText {
    pub frames: u32,
    pub top: Frame,
    /// `;<method>;<location>` of every frame but the top.
    pub below: Box<[u8]>,
}

impl StackText {
    pub fn new(frames: &[Frame]) -> StackText {
        let mut below = Vec::with_capacity(18 * frames.len().saturating_sub(1));
        for &f in frames.iter().skip(1) {
            push_frame(&mut below, f);
        }
        StackText {
            frames: frames.len() as u32,
            top: frames.first().copied().unwrap_or(Frame::NONE),
            below: below.into_boxed_slice(),
        }
    }
}

/// Formats the lines of a trace batch, each as [`format_event`] would the same event.
pub fn format_trace(out: &mut Vec<u8>, b: &TraceBatch) {
    let thread = hex(b.thread);
    for l in &b.lines {
        push_timestamp(out, l.nanos);
        out.push(b',');
        out.extend_from_slice(l.kind.name().as_bytes());
        out.push(b',');
        out.extend_from_slice(&thread);
        out.push(b',');
        push_hex(out, l.monitor);
        let stack = (l.stack as usize)
            .checked_sub(1)
            .and_then(|i| b.stacks.get(i));
        match stack {
            Some(st) if st.frames > 0 => {
                out.push(b',');
                push_dec(out, st.frames.into());
                push_frame(out, l.top);
                out.extend_from_slice(&st.below);
            }
            _ if l.has_top && l.stack == 0 => {
                out.extend_from_slice(b",1");
                push_frame(out, l.top);
            }
            _ => out.extend_from_slice(b",0"),
        }
        out.push(b'\n');
    }
}

/// Appends `;<method>;<location>`, one frame of a stack.
fn push_frame(out: &mut Vec<u8>, f: Frame) {
    let mut b = [b';'; 18];
    b[1..9].copy_from_slice(&hex(f.method));
    b[10..18].copy_from_slice(&hex(f.location));
    out.extend_from_slice(&b);
}

/// A frame that stands for a call site (`1;<method>;<location>` in the format).
pub type Site = Frame;

/// A hold row's `<sample>` (docs/FORMAT.md): written only for a row of a sample.
fn push_sample(out: &mut Vec<u8>, sample: u64) {
    if sample > 1 {
        out.push(b',');
        push_dec(out, sample);
    }
}

/// `MonitorHolds` fields after the monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldsLine {
    pub count: u64,
    pub total: u64,
    pub max: u64,
    /// `(bucket, count)`, buckets increasing (docs/FORMAT.md's log-linear scheme).
    pub histogram: Vec<(u32, u64)>,
    pub site: Site,
    /// `LockHolds`: the lock's `<mode>` (`R`, `W`) after the lock.
    pub mode: Option<u8>,
    /// The row is of a sample of one hold in this many (`<sample>`, written when above 1).
    pub sample: u64,
}

/// `LockHold` fields after the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHoldLine {
    pub mode: u8,
    pub nanos: u64,
    /// Where the hold was acquired (the stack is the release's).
    pub site: Site,
}

/// `LockOrder` fields after the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLine {
    pub held: u32,
    pub acquired: u32,
    pub count: u64,
    pub guards: Vec<u32>,
    pub held_site: Site,
    pub acquired_site: Site,
}

/// `Notifies` fields after the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifiesLine {
    pub call: WakeCall,
    pub count: u64,
    pub site: Site,
}

/// A `Waits` line's fields after `<object>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitsLine {
    pub call: WaitCall,
    pub count: u64,
    pub total: u64,
    pub max: u64,
    pub site: Site,
}

/// One `.orca` line, unformatted.
#[derive(Debug)]
pub struct EventRecord {
    pub nanos: u64,
    pub kind: EventKind,
    pub thread: u32,
    pub object: u32,
    /// Only `MonitorContendedEnter` and `LockAcquire`: the owner thread (0: unknown, none).
    pub owner: u32,
    pub extra: Extra,
    pub frames: Frames,
}

/// One `.methods` or `.classtable` line, unformatted.
#[derive(Debug)]
pub enum MetaRecord {
    Method {
        nanos: u64,
        id: u32,
        name: String,
        signature: String,
        class: u32,
        lines: Option<Vec<LineEntry>>,
    },
    Class {
        nanos: u64,
        id: u32,
        signature: String,
        source: Option<String>,
    },
}

/// What the writer did, for the exit line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub events: u64,
    pub dropped: u64,
    pub lost_to_io: u64,
    /// Events that other threads produced while the JVM was already exiting, after the final
    /// write: not recorded, but counted.
    pub late: u64,
    /// Events accepted but not surely written: the writer was still stuck at exit, or it
    /// had stopped ([`Totals::writer_stopped`]).
    pub abandoned: u64,
    /// Whether the writer thread stopped before the end (a panic, said when it happened):
    /// the log ends at its last flush, and every event since was dropped.
    pub writer_stopped: bool,
    /// CPU time of the writer thread (formatting and writing), for the exit line: the part
    /// of the agent's cost that is not on the program's threads.
    pub writer_cpu_nanos: u64,
    /// A bounded recording: the chunks left on disk (first and last number) and how many the
    /// ring removed.
    pub chunks: Option<(u64, u64, u64)>,
}

/// The three open output files.
pub struct Files {
    pub paths: [PathBuf; 3],
    files: [File; 3],
    /// A bounded recording: `paths[0]` is the chunk folder and `files[0]` its chunk 1.
    ring: Option<Ring>,
}

impl Files {
    /// Creates (empties) the three files, creating the folder if needed, so that a bad
    /// path stops the JVM at start rather than losing the run. Each is opened as every Orca
    /// output is ([`orca_format::output`]): a link, a FIFO, a device, a folder or another
    /// user's file at one of the paths is refused before any is touched.
    pub fn create(paths: [PathBuf; 3]) -> Result<Files, OutputError> {
        Self::create_bounded(paths, None)
    }

    /// [`Files::create`], for a bounded recording (`ring`) too: then `paths[0]` is the chunk
    /// folder, made if missing and emptied of an earlier run's chunks.
    pub fn create_bounded(paths: [PathBuf; 3], ring: Option<Ring>) -> Result<Files, OutputError> {
        fill_closed_std_fds();
        if ring.is_some() {
            for p in &paths[1..] {
                orca_format::output::may_create(p)?;
            }
            let (chunk, stale) =
                crate::recorder::chunks::create_folder(&paths[0]).map_err(|source| {
                    OutputError::Io {
                        path: paths[0].clone(),
                        source,
                    }
                })?;
            if stale > 0 {
                crate::say!(
                    "orca: removed {stale} chunks of an earlier recording from {}",
                    paths[0].display()
                );
            }
            let open = |p: &PathBuf| orca_format::output::create(p, true);
            let files = [chunk, open(&paths[1])?, open(&paths[2])?];
            return Ok(Files { paths, files, ring });
        }
        if let Some(dir) = paths[0].parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| OutputError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        for p in &paths {
            orca_format::output::may_create(p)?;
        }
        // Read access too: a file deleted during the run is copied back from its descriptor.
        let open = |p: &PathBuf| orca_format::output::create(p, true);
        let files = [open(&paths[0])?, open(&paths[1])?, open(&paths[2])?];
        Ok(Files {
            paths,
            files,
            ring: None,
        })
    }

    /// Files opened by a test itself (a FIFO, `/dev/full`), which [`Files::create`] refuses.
    #[cfg(test)]
    pub fn opened(paths: [PathBuf; 3], files: [File; 3]) -> Files {
        Files {
            paths,
            files,
            ring: None,
        }
    }
}

/// A program started with a standard stream closed (`2>&-`, `>&-`) would give the log files
/// the free descriptor 0, 1 or 2, and the agent's messages on stderr (or the program's own
/// `System.out`) would then be written into the log. So each closed one is opened on
/// `/dev/null` first, as daemons do: what was written nowhere still is.
fn fill_closed_std_fds() {
    let closed = |fd: i32| {
        // SAFETY: F_GETFD only queries the descriptor.
        let rc = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        rc == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
    };
    for fd in 0..=2 {
        if !closed(fd) {
            continue;
        }
        // SAFETY: a NUL-terminated path and plain flags.
        let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if null >= 0 && null != fd {
            if closed(fd) {
                // SAFETY: both descriptors are valid or free; `null` is ours to close.
                unsafe { libc::dup2(null, fd) };
            }
            // SAFETY: as above.
            unsafe { libc::close(null) };
        }
    }
}

thread_local! {
    /// The writer this thread closed at exit (its pushes to that one are taken), by address
    /// (a writer lives as long as the process: [`LogWriter::start`]); 0: none. An address, not
    /// a flag: the thread that closed one recording at a detach is a producer like any other
    /// in the next one, whose pushes are late once another thread has closed it.
    static CLOSER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The queues shared by producers and the writer thread.
pub struct LogWriter {
    events: ArrayQueue<EventRecord>,
    meta: SegQueue<MetaRecord>,
    accepted: AtomicU64,
    dropped: AtomicU64,
    late: AtomicU64,
    /// Events in the `.orca` file as of its last successful flush (for the exit accounting
    /// when the writer is stuck).
    flushed_events: AtomicU64,
    /// Producers between their look at `stop` and the end of their push: exit waits for
    /// them, so that an event pushed by a thread that saw the writer still running is
    /// written by its final pass, never left unseen in the queue.
    pushing: AtomicU64,
    /// Events queued in [`Extra::Trace`] batches and not yet taken by the writer: what bounds
    /// the queue's memory for them (a slot may hold 1,024 events).
    traced: AtomicU64,
    /// Set at exit: producers count their events as late from then on.
    stop: AtomicBool,
    /// Set at exit once no producer is mid-push: the writer's last pass starts.
    last_pass: AtomicBool,
    /// Set when the JVM posted VMDeath: the last line says whether it did (FORMAT.md,
    /// `RecordingEnded`).
    vm_death: AtomicBool,
    /// Whether the recording ended by a detach (the JVM runs on).
    detached: AtomicBool,
    /// Set when the writer thread has ended, after its last pass or by a panic: nothing
    /// queued from then on is ever written, so no push waits for room and none is queued.
    gone: AtomicBool,
    /// Set before `gone` when the writer thread ended by a panic.
    failed: AtomicBool,
    /// Longest time exit waits for the writer in all: [`FINISH_TIMEOUT`] (shorter in tests).
    exit_wait: Duration,
    /// When exit stops waiting for the writer. Set by the closing thread's first wait (a
    /// batch that finds no room, or `finish`) and shared by every later one: with a wait per
    /// batch, a program with many threads still running at exit (a batch or two each) and a
    /// stuck writer took minutes to exit.
    exit_deadline: OnceLock<Instant>,
    /// Test hook (`ORCA_TEST_WRITER_PANIC`): the writer thread panics before its first pass.
    panic_at_start: bool,
    done: Mutex<Option<Receiver<Totals>>>,
    finished: Mutex<Option<Totals>>,
    /// A dump's request ([`LogWriter::snapshot`]): the writer's next pass answers it.
    dump_asked: AtomicBool,
    /// A bounded recording: the number of the chunk being written (0: unbounded), which
    /// threads read to write their summaries at their first drain in a new chunk.
    chunk: AtomicU64,
    dump_reply: Mutex<Option<std::sync::mpsc::SyncSender<Snapshot>>>,
}

/// What a dump copies, as of one moment: the event files (chunks, oldest first, each with
/// the bytes to copy: `None` for all of a closed chunk) and the metadata files' bytes, all
/// complete lines flushed by the writer, so that every line copied resolves.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub events: Vec<(PathBuf, Option<u64>)>,
    pub methods: (PathBuf, u64),
    pub classtable: (PathBuf, u64),
    /// `now_nanos` when it was taken.
    pub at: u64,
    /// Whether the recording is bounded (else `events` is its one file).
    pub bounded: bool,
}

impl LogWriter {
    /// Makes the queues; [`LogWriter::start`] then starts the thread that empties them.
    pub fn new() -> LogWriter {
        LogWriter {
            events: ArrayQueue::new(EVENT_QUEUE_CAPACITY),
            meta: SegQueue::new(),
            accepted: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            late: AtomicU64::new(0),
            flushed_events: AtomicU64::new(0),
            pushing: AtomicU64::new(0),
            traced: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            last_pass: AtomicBool::new(false),
            vm_death: AtomicBool::new(false),
            detached: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            exit_wait: FINISH_TIMEOUT,
            exit_deadline: OnceLock::new(),
            panic_at_start: std::env::var_os("ORCA_TEST_WRITER_PANIC").is_some(),
            done: Mutex::new(None),
            finished: Mutex::new(None),
            dump_asked: AtomicBool::new(false),
            chunk: AtomicU64::new(0),
            dump_reply: Mutex::new(None),
        }
    }

    /// Starts the background writer. `self` must live as long as the process (the agent
    /// context is a `static`).
    ///
    /// `settings` (`key=value;...`) is written first, as the log's `RecordingStarted` line.
    pub fn start(&'static self, files: Files, settings: Option<String>) -> io::Result<()> {
        let (tx, rx) = sync_channel(1);
        std::thread::Builder::new()
            .name("orca-writer".into())
            .spawn(move || {
                // A panic here would stop the log silently: it is said once, and what the
                // program goes on producing is dropped (and counted) at once.
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.run(files, settings)
                }));
                match run {
                    Ok(totals) => {
                        self.gone.store(true, Ordering::SeqCst);
                        let _ = tx.send(totals);
                    }
                    Err(e) => {
                        self.failed.store(true, Ordering::SeqCst);
                        self.gone.store(true, Ordering::SeqCst);
                        // What is queued now is never written: counted in `finish`.
                        let msg = e
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| e.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        crate::say!("orca: internal error in the writer thread ({msg}); the log stops here, the program keeps running");
                    }
                }
            })?;
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
        Ok(())
    }

    /// A bounded recording's chunk being written (0 for an unbounded one).
    pub fn chunk(&self) -> u64 {
        self.chunk.load(Ordering::Relaxed)
    }

    /// What a dump of the last `last` nanoseconds (`None`: all on disk) copies, after the
    /// writer has flushed what it has: asked of the writer thread, waited for up to
    /// `timeout` by the caller (a thread of the agent's or the attach listener, never a
    /// program thread). `None` when the writer did not answer (stopped, or stuck).
    pub fn snapshot(&self, last: Option<u64>, timeout: Duration) -> Option<Snapshot> {
        if self.gone.load(Ordering::SeqCst) || self.last_pass.load(Ordering::SeqCst) {
            return None;
        }
        let (tx, rx) = sync_channel(1);
        *self.dump_reply.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        self.dump_asked.store(true, Ordering::SeqCst);
        let mut snap = rx.recv_timeout(timeout).ok()?;
        // Each closed chunk's entry is the time it was closed; the current one's its bytes.
        let since = last.map_or(0, |l| snap.at.saturating_sub(l));
        let n = snap.events.len();
        snap.events = std::mem::take(&mut snap.events)
            .into_iter()
            .enumerate()
            .filter_map(|(i, (path, v))| match v {
                _ if i + 1 == n => Some((path, v)),
                Some(closed_at) if closed_at < since => None,
                _ => Some((path, None)),
            })
            .collect();
        Some(snap)
    }

    /// Queues an event; never blocks or waits. A full queue drops the event and counts it:
    /// the producing thread may hold locks the program needs, so it must never wait for the
    /// writer (a slow disk would stall the program).
    pub fn push(&self, record: EventRecord) {
        // SeqCst on both sides (here and in `close_producers`): either exit sees this
        // producer in `pushing`, or this producer sees `stop`. Once stopped, producers keep
        // off `pushing`, so that exit's wait for it to reach zero ends.
        if self.stop.load(Ordering::Relaxed) && !self.is_closer() {
            self.late.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if self.refused_gone(1) {
            return;
        }
        self.pushing.fetch_add(1, Ordering::SeqCst);
        if self.stop.load(Ordering::SeqCst) && !self.is_closer() {
            self.late.fetch_add(1, Ordering::Relaxed);
        } else {
            match self.events.push(record) {
                Ok(()) => {
                    self.accepted.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.pushing.fetch_sub(1, Ordering::Release);
    }

    /// Queues the trace events of one drain as one record. A program thread never waits,
    /// as in [`LogWriter::push`]: past [`MAX_TRACED`] queued events, or with the queue full,
    /// they are dropped and counted. After [`LogWriter::close_producers`] only the closing
    /// thread's are taken, and it waits for room as in [`LogWriter::push_summaries`]: they
    /// are the exit drain's, the records of the threads still running. (They were counted
    /// late: a daemon thread's last `MonitorExit`, whose `MonitorEntered` an earlier drain
    /// had written, was lost, and `orca check` saw the monitor held to the end while another
    /// thread took it; the Common-Cleaner's in a `javac` run.) Its waits share exit's one
    /// budget ([`LogWriter::exit_wait_over`]).
    pub fn push_trace(&self, batch: TraceBatch) {
        let n = batch.lines.len() as u64;
        if n == 0 {
            return;
        }
        let closer = self.is_closer();
        let mut record = EventRecord {
            nanos: batch.lines[0].nanos,
            kind: batch.lines[0].kind,
            thread: batch.thread,
            object: 0,
            owner: 0,
            extra: Extra::Trace(Box::new(batch)),
            frames: Frames::new(),
        };
        loop {
            if self.stop.load(Ordering::Relaxed) && !closer {
                self.late.fetch_add(n, Ordering::Relaxed);
                return;
            }
            if self.refused_gone(n) {
                return;
            }
            if self.traced.load(Ordering::Relaxed) + n > MAX_TRACED {
                if !closer || self.exit_wait_over() {
                    self.dropped.fetch_add(n, Ordering::Relaxed);
                    return;
                }
                std::thread::yield_now();
                continue;
            }
            // The same protocol with `finish` as `push`.
            self.pushing.fetch_add(1, Ordering::SeqCst);
            if self.stop.load(Ordering::SeqCst) && !closer {
                self.late.fetch_add(n, Ordering::Relaxed);
                self.pushing.fetch_sub(1, Ordering::Release);
                return;
            }
            self.traced.fetch_add(n, Ordering::Relaxed);
            let pushed = self.events.push(record);
            if pushed.is_ok() {
                self.accepted.fetch_add(n, Ordering::Relaxed);
            } else {
                self.traced.fetch_sub(n, Ordering::Relaxed);
            }
            self.pushing.fetch_sub(1, Ordering::Release);
            match pushed {
                Ok(()) => return,
                Err(r) => record = r,
            }
            if !closer || self.exit_wait_over() {
                self.dropped.fetch_add(n, Ordering::Relaxed);
                return;
            }
            std::thread::yield_now();
        }
    }

    /// Queues a thread's summary lines as one record. A program thread never waits for
    /// room: its caller may hold the program's lock (the drain runs before the program's
    /// `monitorexit`), so when the queue is full the lines are dropped and counted, as any
    /// event is (the callers write summaries when the queue has room, so this is rare). Only
    /// the thread that closes the log at exit waits for the writer to make room, within exit's
    /// one budget ([`LogWriter::exit_wait_over`]): nothing runs after it.
    pub fn push_summaries(&self, lines: Vec<EventRecord>) {
        let n = lines.len() as u64;
        if n == 0 {
            return;
        }
        let mut record = EventRecord {
            nanos: lines[0].nanos,
            kind: lines[0].kind,
            thread: lines[0].thread,
            object: 0,
            owner: 0,
            extra: Extra::Batch(lines.into_boxed_slice()),
            frames: Frames::new(),
        };
        loop {
            if self.stop.load(Ordering::Relaxed) && !self.is_closer() {
                self.late.fetch_add(n, Ordering::Relaxed);
                return;
            }
            if self.refused_gone(n) {
                return;
            }
            self.pushing.fetch_add(1, Ordering::SeqCst);
            if self.stop.load(Ordering::SeqCst) && !self.is_closer() {
                self.late.fetch_add(n, Ordering::Relaxed);
                self.pushing.fetch_sub(1, Ordering::Release);
                return;
            }
            let pushed = self.events.push(record);
            if pushed.is_ok() {
                self.accepted.fetch_add(n, Ordering::Relaxed);
            }
            self.pushing.fetch_sub(1, Ordering::Release);
            match pushed {
                Ok(()) => return,
                Err(r) => record = r,
            }
            if !self.is_closer() || self.exit_wait_over() {
                self.dropped.fetch_add(n, Ordering::Relaxed);
                return;
            }
            std::thread::yield_now();
        }
    }

    /// When the writer thread has ended, counts `n` events as never written and says so:
    /// dropped when it stopped by a panic (as when the queue is full), late when it ended
    /// after its last pass (exit). Nothing waits for a writer that is gone, and nothing is
    /// queued for it (the queue's memory would be held for nothing).
    fn refused_gone(&self, n: u64) -> bool {
        if !self.gone.load(Ordering::Acquire) {
            return false;
        }
        if self.failed.load(Ordering::Relaxed) {
            self.dropped.fetch_add(n, Ordering::Relaxed);
        } else {
            self.late.fetch_add(n, Ordering::Relaxed);
        }
        true
    }

    /// Whether the closing thread is to stop waiting for the writer: it is gone, or exit's
    /// one budget is spent. The first call starts the budget.
    fn exit_wait_over(&self) -> bool {
        self.gone.load(Ordering::Acquire) || Instant::now() >= self.exit_deadline()
    }

    /// The end of exit's wait for the writer, [`LogWriter::exit_wait`] after the first look.
    fn exit_deadline(&self) -> Instant {
        *self
            .exit_deadline
            .get_or_init(|| Instant::now() + self.exit_wait)
    }

    /// Counts events produced after the final drain (the JVM was exiting).
    pub fn count_late(&self, n: u64) {
        self.late.fetch_add(n, Ordering::Relaxed);
    }

    /// Events counted late so far (they go on growing after the exit line is printed).
    pub fn late_now(&self) -> u64 {
        self.late.load(Ordering::SeqCst)
    }

    /// Whether the writer has stopped taking events (the JVM is exiting).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Queues a metadata line; never dropped while the writer runs (once it is gone nothing
    /// is written, and the unbounded queue would only grow).
    pub fn push_meta(&self, record: MetaRecord) {
        if !self.gone.load(Ordering::Acquire) {
            self.meta.push(record);
        }
    }

    /// Whether the calling thread closed this writer (its pushes are taken after the stop).
    fn is_closer(&self) -> bool {
        CLOSER.with(|c| c.get()) == self as *const Self as usize
    }

    /// The start of exit: from now on only the calling thread's events are taken (the exit
    /// drain's summaries and records), every other thread's are late. When it returns, every
    /// event taken from another thread is in the queue, so a line the caller writes now is
    /// later than all of them: a thread's lines never go back in time.
    pub fn close_producers(&self) {
        if self.stop.load(Ordering::SeqCst) {
            return;
        }
        CLOSER.with(|c| c.set(self as *const Self as usize));
        self.stop.store(true, Ordering::SeqCst);
        // A push never blocks, so this is a few nanoseconds, unless a producer was
        // descheduled mid-push: then its event is counted in `finish`, from the queue.
        let start = Instant::now();
        while self.pushing.load(Ordering::SeqCst) != 0 && start.elapsed() < PUSH_WAIT {
            std::thread::yield_now();
        }
    }

    /// [`LogWriter::finish`] at a detach: the log's last line says the recording was stopped
    /// in a JVM that runs on.
    pub fn finish_at_detach(&self) -> Totals {
        self.detached.store(true, Ordering::SeqCst);
        self.finish()
    }

    /// [`LogWriter::finish`] at VMDeath: the log's last line says the JVM ended that way.
    pub fn finish_at_vm_death(&self) -> Totals {
        self.vm_death.store(true, Ordering::SeqCst);
        self.finish()
    }

    /// Drains the queues, flushes and closes the files; returns the totals. Safe to call more
    /// than once (VMDeath, then Agent_OnUnload): later calls return the first result.
    pub fn finish(&self) -> Totals {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = *finished {
            return t;
        }
        self.close_producers();
        self.last_pass.store(true, Ordering::SeqCst);
        let rx = self.done.lock().unwrap_or_else(|e| e.into_inner()).take();
        // What is left of exit's budget: the exit drain's pushes may have spent some or all.
        let wait = self
            .exit_deadline()
            .saturating_duration_since(Instant::now());
        let received = rx.map(|rx| rx.recv_timeout(wait));
        // Only what reached the file before the last successful flush is surely there.
        let unwritten = || {
            let written = self.flushed_events.load(Ordering::SeqCst);
            let abandoned = self.accepted.load(Ordering::SeqCst).saturating_sub(written);
            (written, abandoned)
        };
        let mut totals = match received {
            Some(Ok(t)) => t,
            Some(Err(RecvTimeoutError::Timeout)) => {
                let (events, abandoned) = unwritten();
                crate::say!(
                    "orca: the log writer is still blocked on a write after {} s; giving up on {abandoned} events not yet written so the JVM can exit",
                    self.exit_wait.as_secs()
                );
                Totals {
                    events,
                    abandoned,
                    ..Totals::default()
                }
            }
            Some(Err(RecvTimeoutError::Disconnected)) => {
                // The writer thread panicked (it said so): nothing takes the queue any more.
                while self.events.pop().is_some() {}
                while self.meta.pop().is_some() {}
                let (events, abandoned) = unwritten();
                Totals {
                    events,
                    abandoned,
                    writer_stopped: true,
                    ..Totals::default()
                }
            }
            None => Totals::default(),
        };
        if totals.abandoned == 0 && !totals.writer_stopped {
            // Only a producer that outwaited PUSH_WAIT leaves anything here.
            while let Some(e) = self.events.pop() {
                let n = match &e.extra {
                    Extra::Batch(lines) => lines.len() as u64,
                    Extra::Trace(b) => b.lines.len() as u64,
                    _ => 1,
                };
                self.late.fetch_add(n, Ordering::SeqCst);
            }
        }
        totals.dropped = self.dropped.load(Ordering::SeqCst);
        totals.late = self.late.load(Ordering::SeqCst);
        *finished = Some(totals);
        totals
    }

    fn run(&self, files: Files, settings: Option<String>) -> Totals {
        if let Some(stall) = test_writer_stall() {
            std::thread::sleep(stall);
        }
        if self.panic_at_start {
            panic!("ORCA_TEST_WRITER_PANIC");
        }
        let mut out = Output::new(files);
        let mut classes = Classes::default();
        if out.ring.is_some() {
            classes.restate = Some(FastMap::default());
            self.chunk.store(1, Ordering::Relaxed);
        }
        let mut line = Vec::with_capacity(4096);
        if let Some(settings) = settings {
            // The first line: how the rest is to be read (FORMAT.md, "Agent events").
            let now = now_nanos();
            if let Some(ring) = out.ring.as_mut() {
                ring.settings = settings;
                ring.opened_at = now;
                let preamble = ring.preamble(now);
                ring.preamble = (preamble.len(), 1);
                out.write(ORCA, &preamble);
            } else {
                push_timestamp(&mut line, now);
                let _ = writeln!(line, ",RecordingStarted,{settings}");
                out.write(ORCA, &line);
            }
        }
        let mut reported_drops = 0u64;
        let mut last_flush = Instant::now();
        let mut idle_sleep = Duration::from_millis(1);
        loop {
            // A dump asked now gets every line pushed before: answered once a pass has
            // emptied the queue.
            let dump = self.dump_asked.swap(false, Ordering::SeqCst);
            // Read the flag before draining: everything pushed before it was set is then
            // written by this final pass.
            let stopping = self.last_pass.load(Ordering::SeqCst);
            let mut busy = false;
            let mut wrote_meta = false;
            while let Some(m) = self.meta.pop() {
                busy = true;
                wrote_meta = true;
                line.clear();
                let file = format_meta(&mut line, &m);
                out.write(file, &line);
            }
            // Metadata is rare and small: flushed at once, so that the two metadata files are
            // complete up to what the writer has seen even if the event file is stuck.
            if wrote_meta {
                out.flush_file(METHODS);
                out.flush_file(CLASSES);
            }
            // Lines, not records: a trace batch is up to 1,024 lines.
            let mut written = 0usize;
            while written < PASS {
                let Some(e) = self.events.pop() else { break };
                busy = true;
                let lines = match &e.extra {
                    Extra::Batch(lines) => &lines[..],
                    Extra::Trace(b) => {
                        if out.chunk_due(None) {
                            out.rotate(&mut classes);
                        }
                        let n = b.lines.len();
                        for l in &b.lines {
                            classes.named(l.monitor, &mut out, &mut line);
                        }
                        self.traced.fetch_sub(n as u64, Ordering::Relaxed);
                        out.write_with(ORCA, n as u64, |buf| format_trace(buf, b));
                        out.events += n as u64;
                        written += n;
                        continue;
                    }
                    _ => std::slice::from_ref(&e),
                };
                written += lines.len();
                for e in lines {
                    if out.chunk_due(None) {
                        out.rotate(&mut classes);
                    }
                    out.track_thread(e);
                    if classes.hold_back(e) {
                        continue;
                    }
                    for_each_object(e, |h| classes.named(h, &mut out, &mut line));
                    line.clear();
                    format_event(&mut line, e);
                    out.events += 1;
                    out.write(ORCA, &line);
                }
            }
            if let Some(ring) = out.ring.as_ref() {
                self.chunk.store(ring.number, Ordering::Relaxed);
            }
            if dump && written >= PASS {
                self.dump_asked.store(true, Ordering::SeqCst);
            } else if dump {
                out.flush();
                let snap = out.snapshot();
                if let Some(tx) = self
                    .dump_reply
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                {
                    let _ = tx.try_send(snap);
                }
            }
            // Lines a full disk took (a bounded recording) are said once there is room.
            let (disk, failing) = out
                .ring
                .as_ref()
                .map_or((0, false), |r| (r.dropped_lines, r.failing));
            let dropped = self.dropped.load(Ordering::Relaxed) + if failing { 0 } else { disk };
            if dropped > reported_drops {
                line.clear();
                push_timestamp(&mut line, now_nanos());
                let _ = writeln!(line, ",EventsDropped,{}", dropped - reported_drops);
                out.write(ORCA, &line);
                reported_drops = dropped;
            }
            if stopping && !busy {
                // The last line: a log without it was cut short (the JVM killed or crashed).
                line.clear();
                push_timestamp(&mut line, now_nanos());
                let how = if self.vm_death.load(Ordering::SeqCst) {
                    "vmdeath"
                } else if self.detached.load(Ordering::SeqCst) {
                    "detach"
                } else {
                    "unload"
                };
                let _ = writeln!(line, ",RecordingEnded,{how}");
                out.write(ORCA, &line);
                out.flush();
                out.restore_deleted();
                break;
            }
            // Under steady load too, no complete line waits more than about FLUSH_INTERVAL.
            if last_flush.elapsed() >= FLUSH_INTERVAL {
                out.flush();
                out.check_deleted();
                let now = now_nanos();
                if out.chunk_due(Some(now)) || out.ring.is_some() && out.deleted[ORCA] {
                    out.rotate(&mut classes);
                }
                if let Some(ring) = out.ring.as_mut() {
                    ring.enforce(out.committed_bytes[ORCA], Some(now));
                }
                self.flushed_events
                    .store(out.flushed_events, Ordering::SeqCst);
                last_flush = Instant::now();
            }
            // Wake up as often as the events need, no more: a writer that polls every 50 us
            // for a trickle of events cost a tenth of a core in system calls (a web server's
            // per-request notify). A full pass goes on at once; the queue holds 65,536 events,
            // far more than arrive in a pause.
            if written >= PASS {
                idle_sleep = Duration::from_millis(1);
            } else if written >= PASS / 16 {
                std::thread::sleep(Duration::from_micros(100));
            } else if busy {
                std::thread::sleep(Duration::from_millis(1));
                idle_sleep = Duration::from_millis(1);
            } else {
                std::thread::sleep(idle_sleep);
                idle_sleep = (idle_sleep * 2).min(Duration::from_millis(5));
            }
        }
        Totals {
            events: out.events,
            lost_to_io: out.lost,
            writer_cpu_nanos: crate::recorder::clock::thread_cpu_nanos(),
            chunks: out.ring.as_ref().map(|r| (r.first(), r.number, r.removed)),
            ..Totals::default()
        }
    }
}

/// The `ObjectClass` lines of objects no written line has named yet, kept back until one does
/// (docs/FORMAT.md, "Object classes"). The agent learns an object's class when it first sees
/// the object (a park's blocker, a fresh monitor), but most such objects are only ever
/// counted in a summary's row of other objects: an executor's `FutureTask`s, one per task,
/// were 90% of its log.
#[derive(Default)]
struct Classes {
    /// Class lines per object ID, in the order they came (two when two objects share it).
    pending: FastMap<u32, Vec<EventRecord>>,
    /// IDs some written line named: a class line that comes after (its naming thread pushed
    /// it after another thread's line) is written at once. Bounded: past
    /// [`Classes::NAMED_MAX`] every class line is written as it comes, as before.
    named: std::collections::HashSet<u32, std::hash::BuildHasherDefault<FastHasher>>,
    /// A bounded recording: the class lines written, by object ID, which a chunk restates
    /// before its first line that names the object (`named` is then the current chunk's).
    restate: Option<FastMap<u32, Vec<EventRecord>>>,
}

/// A copy of a class line.
fn class_line(e: &EventRecord) -> EventRecord {
    EventRecord {
        nanos: e.nanos,
        kind: e.kind,
        thread: e.thread,
        object: e.object,
        owner: e.owner,
        extra: match &e.extra {
            Extra::Class(sig) => Extra::Class(sig.clone()),
            _ => Extra::None,
        },
        frames: Frames::new(),
    }
}

impl Classes {
    const NAMED_MAX: usize = 1 << 20;

    /// Whether `e` is a class line kept back (else the caller writes it).
    fn hold_back(&mut self, e: &EventRecord) -> bool {
        if !matches!(e.extra, Extra::Class(_)) {
            return false;
        }
        if self.named.contains(&e.object) || self.named.len() >= Self::NAMED_MAX {
            // Written now: a later chunk restates it.
            if let Some(restate) = self.restate.as_mut() {
                if restate.len() < Self::NAMED_MAX {
                    restate.entry(e.object).or_default().push(class_line(e));
                }
            }
            return false;
        }
        self.pending
            .entry(e.object)
            .or_default()
            .push(class_line(e));
        true
    }

    /// A new chunk begins: objects are named again in it.
    fn new_chunk(&mut self) {
        if self.restate.is_some() {
            self.named.clear();
        }
    }

    /// A line about to be written names object `h`: its class lines first.
    fn named(&mut self, h: u32, out: &mut Output, line: &mut Vec<u8>) {
        // Past NAMED_MAX no new ID is remembered, but the lines kept back before are still
        // written when a line names their object.
        if h == 0 || self.named.len() < Self::NAMED_MAX && !self.named.insert(h) {
            return;
        }
        if let Some(lines) = self.restate.as_ref().and_then(|r| r.get(&h)) {
            // Restated in this chunk: not an event of the recording.
            for c in lines {
                line.clear();
                format_event(line, c);
                out.write(ORCA, line);
            }
        }
        if let Some(lines) = self.pending.remove(&h) {
            for c in &lines {
                line.clear();
                format_event(line, c);
                out.events += 1;
                out.write(ORCA, line);
            }
            if let Some(restate) = self.restate.as_mut() {
                if restate.len() < Self::NAMED_MAX {
                    restate.entry(h).or_default().extend(lines);
                }
            }
        }
    }
}

/// Calls `f` with every object ID `e` names (0 for none is passed too; threads are not
/// objects here, but a thread a `ThreadStart`, `ThreadJoin` or `ThreadUnpark` names is).
fn for_each_object(e: &EventRecord, mut f: impl FnMut(u32)) {
    match &e.extra {
        Extra::Class(_)
        | Extra::Name(_)
        | Extra::Notifies(_)
        | Extra::Batch(_)
        | Extra::Trace(_) => return,
        Extra::Order(o) => {
            f(o.held);
            f(o.acquired);
            o.guards.iter().for_each(|&g| f(g));
            return;
        }
        Extra::Lock(lock) => f(*lock),
        _ => {}
    }
    if e.kind.has_object() {
        f(e.object);
    }
}

impl Default for LogWriter {
    fn default() -> Self {
        Self::new()
    }
}

const ORCA: usize = 0;
const METHODS: usize = 1;
const CLASSES: usize = 2;

/// The buffered files, with the "say it once" I/O error handling.
///
/// After a write error (a full disk) a file is given up: it is cut back to its last complete
/// flush, so it never ends in a torn line, and its lines from then on are counted as lost. A
/// metadata file that fails takes the event file with it, so that no event written refers to
/// a method or class whose line is missing. A file deleted under the writer (its folder
/// removed) is noticed, said once, and written back at exit from the still-open descriptor.
struct Output {
    paths: [PathBuf; 3],
    /// Open files; `None` once given up.
    files: [Option<File>; 3],
    /// Complete lines not yet written, per file. Written whole when [`BUFFER`] bytes are
    /// waiting and at each flush, so the writer always knows which lines are surely in the file.
    buffers: [Vec<u8>; 3],
    /// Lines in each buffer (its bytes are the buffer's length).
    pending: [u64; 3],
    /// Lines and bytes surely in each file (as of its last successful flush).
    committed: [u64; 3],
    committed_bytes: [u64; 3],
    /// Whether each file's deletion has been reported.
    deleted: [bool; 3],
    events: u64,
    /// `events` as of the last successful flush of the `.orca` file.
    flushed_events: u64,
    lost: u64,
    /// A bounded recording's chunks: `paths[ORCA]` and `files[ORCA]` are the current chunk's.
    ring: Option<ChunkRing>,
}

impl Output {
    fn new(files: Files) -> Output {
        let [a, b, c] = files.files;
        let mut paths = files.paths;
        let ring = files.ring.map(|cfg| {
            let dir = std::mem::take(&mut paths[ORCA]);
            paths[ORCA] = crate::recorder::chunks::chunk_path(&dir, 1);
            ChunkRing::new(cfg, dir, now_nanos())
        });
        Output {
            ring,
            paths,
            files: [Some(a), Some(b), Some(c)],
            buffers: [
                Vec::with_capacity(BUFFER),
                Vec::with_capacity(BUFFER),
                Vec::with_capacity(BUFFER),
            ],
            pending: [0; 3],
            committed: [0; 3],
            committed_bytes: [0; 3],
            deleted: [false; 3],
            events: 0,
            flushed_events: 0,
            lost: 0,
        }
    }

    fn write(&mut self, file: usize, line: &[u8]) {
        if self.files[file].is_none() {
            self.lost += 1;
            return;
        }
        self.buffers[file].extend_from_slice(line);
        self.pending[file] += 1;
        if self.buffers[file].len() >= BUFFER {
            self.flush_file(file);
        }
    }

    /// Appends `lines` complete lines that `format` writes straight into the file's buffer
    /// (a trace batch's: no copy through a line buffer).
    fn write_with(&mut self, file: usize, lines: u64, format: impl FnOnce(&mut Vec<u8>)) {
        if self.files[file].is_none() {
            self.lost += lines;
            return;
        }
        format(&mut self.buffers[file]);
        self.pending[file] += lines;
        if self.buffers[file].len() >= BUFFER {
            self.flush_file(file);
        }
    }

    fn flush(&mut self) {
        for file in 0..3 {
            self.flush_file(file);
        }
    }

    fn flush_file(&mut self, file: usize) {
        if let Some(mut f) = self.files[file].as_ref() {
            if self.buffers[file].is_empty() {
                return;
            }
            match f.write_all(&self.buffers[file]) {
                Ok(()) => {
                    if let (ORCA, Some(rate)) = (file, test_writer_rate()) {
                        // a disk that takes `rate` bytes a second
                        std::thread::sleep(Duration::from_secs_f64(
                            self.buffers[file].len() as f64 / rate,
                        ));
                    }
                    self.committed_bytes[file] += self.buffers[file].len() as u64;
                    self.buffers[file].clear();
                    self.committed[file] += std::mem::take(&mut self.pending[file]);
                    if file == ORCA {
                        self.flushed_events = self.events;
                        let current = self.committed_bytes[ORCA];
                        if let Some(ring) = self.ring.as_mut() {
                            ring.failing = false;
                            ring.enforce(current, None);
                        }
                    }
                }
                Err(e) if self.ring.is_some() => self.full(file, e),
                Err(e) => self.fail(file, e),
            }
        }
    }

    /// A bounded recording's write error (a full disk): the file is cut back to its last
    /// complete write, and the oldest chunks are removed, one at a time, until the write fits.
    /// With no chunk left to remove the lines are dropped (said once) and the file stays open:
    /// the next flush tries again. A metadata file that still cannot be written is given up as
    /// in an unbounded recording.
    fn full(&mut self, file: usize, mut e: io::Error) {
        use std::io::{Seek, SeekFrom};
        if !matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
            return self.fail(file, e);
        }
        loop {
            let Some(f) = self.files[file].as_ref() else {
                return;
            };
            let mut f: &File = f;
            let at = self.committed_bytes[file];
            let cut = f.set_len(at).and_then(|()| f.seek(SeekFrom::Start(at)));
            let ring = self.ring.as_mut().expect("bounded");
            if cut.is_err() || !ring.remove_oldest() {
                break;
            }
            match f.write_all(&self.buffers[file]) {
                Ok(()) => {
                    self.committed_bytes[file] += self.buffers[file].len() as u64;
                    self.buffers[file].clear();
                    self.committed[file] += std::mem::take(&mut self.pending[file]);
                    if file == ORCA {
                        self.flushed_events = self.events;
                    }
                    return;
                }
                Err(again) => e = again,
            }
        }
        if file != ORCA {
            return self.fail(file, e);
        }
        let ring = self.ring.as_mut().expect("bounded");
        if !ring.said_full {
            ring.said_full = true;
            crate::say!(
                "orca: cannot write {} ({e}) and no older chunk is left to remove; events are dropped until there is room (counted in the exit line), the program keeps running",
                self.paths[ORCA].display()
            );
        }
        ring.failing = true;
        // A chunk none of which is on disk keeps its preamble: its first line must be its
        // RecordingStarted (and the next flush may find room).
        let (keep, kept) = if self.committed_bytes[ORCA] == 0 {
            ring.preamble
        } else {
            (0, 0)
        };
        let dropped = self.pending[ORCA].saturating_sub(kept);
        ring.dropped_lines += dropped;
        self.lost += dropped;
        self.pending[ORCA] = kept;
        self.buffers[ORCA].truncate(keep);
        self.flushed_events = self.events;
    }

    /// What a dump copies now (after a flush): see [`Snapshot`]. A closed chunk's entry
    /// carries the time it was closed (for `--last`), the current one its bytes.
    fn snapshot(&self) -> Snapshot {
        let current = (self.paths[ORCA].clone(), Some(self.committed_bytes[ORCA]));
        let (events, bounded) = match &self.ring {
            Some(ring) => {
                let mut e: Vec<(PathBuf, Option<u64>)> = ring
                    .closed_chunks()
                    .map(|(path, closed_at)| (path, Some(closed_at)))
                    .collect();
                e.push(current);
                (e, true)
            }
            None => (vec![current], false),
        };
        Snapshot {
            events,
            methods: (self.paths[METHODS].clone(), self.committed_bytes[METHODS]),
            classtable: (self.paths[CLASSES].clone(), self.committed_bytes[CLASSES]),
            at: now_nanos(),
            bounded,
        }
    }

    /// Whether the current chunk of a bounded recording is due to be closed (`now`: also by
    /// its age).
    fn chunk_due(&self, now: Option<u64>) -> bool {
        self.ring.as_ref().is_some_and(|r| {
            let bytes = self.committed_bytes[ORCA] + self.buffers[ORCA].len() as u64;
            r.due(bytes, now)
        })
    }

    /// Closes the current chunk and opens the next, with its preamble; `classes` restates
    /// object classes from then on. A chunk that cannot be opened is said once, and the
    /// current one goes on (tried again at the next line due).
    fn rotate(&mut self, classes: &mut Classes) {
        let now = now_nanos();
        let mut end = Vec::with_capacity(40);
        push_timestamp(&mut end, now);
        end.extend_from_slice(b",RecordingEnded,chunk\n");
        let Some(ring) = self.ring.as_mut() else {
            return;
        };
        match ring.open_next() {
            Ok((file, path)) => {
                use std::os::unix::fs::MetadataExt;
                let gone = self.files[ORCA]
                    .as_ref()
                    .and_then(|f| f.metadata().ok())
                    .is_some_and(|m| m.nlink() == 0);
                if gone {
                    crate::say!(
                        "orca: the current chunk {} was deleted; its lines are lost, the recording goes on in the next chunk",
                        self.paths[ORCA].display()
                    );
                }
                // The closed chunk's last line says that the recording goes on.
                self.write(ORCA, &end);
                self.flush_file(ORCA);
                let bytes = self.committed_bytes[ORCA];
                let ring = self.ring.as_mut().expect("bounded");
                ring.close_current(bytes, now);
                self.files[ORCA] = Some(file);
                self.paths[ORCA] = path;
                self.committed[ORCA] = 0;
                self.committed_bytes[ORCA] = 0;
                self.deleted[ORCA] = false;
                let ring = self.ring.as_mut().expect("bounded");
                let preamble = ring.preamble(now);
                let lines = 1 + ring.threads.len() as u64;
                ring.preamble = (preamble.len(), lines);
                self.buffers[ORCA].clear();
                self.pending[ORCA] = 0;
                self.buffers[ORCA].extend_from_slice(&preamble);
                self.pending[ORCA] += lines;
                classes.new_chunk();
                self.flush_file(ORCA);
                let ring = self.ring.as_mut().expect("bounded");
                ring.enforce(self.committed_bytes[ORCA], Some(now));
            }
            Err(e) => {
                // Tried again once the chunk is due by age, or after another chunk's size.
                ring.opened_at = now;
                if !ring.said_open {
                    ring.said_open = true;
                    crate::say!(
                        "orca: cannot open the next chunk in {} ({e}); the current chunk {} goes on, the program keeps running",
                        ring.dir.display(),
                        self.paths[ORCA].display()
                    );
                }
            }
        }
    }

    /// A line about to be written: a bounded recording follows the threads alive.
    fn track_thread(&mut self, e: &EventRecord) {
        let Some(ring) = self.ring.as_mut() else {
            return;
        };
        match (e.kind, &e.extra) {
            (EventKind::ThreadStarted, Extra::Name(name)) => {
                ring.threads.insert(e.thread, name.clone());
            }
            (EventKind::ThreadStarted, _) => {
                ring.threads.insert(e.thread, "".into());
            }
            (EventKind::ThreadEnded, _) => {
                ring.threads.remove(&e.thread);
            }
            _ => {}
        }
    }

    fn fail(&mut self, file: usize, e: io::Error) {
        if file == ORCA || self.files[ORCA].is_none() {
            crate::say!("orca: cannot write {} ({e}); its lines from now on are lost, the program keeps running", self.paths[file].display());
        } else {
            crate::say!("orca: cannot write {} ({e}); the events file {} stops there too (no event may name a missing method), events from now on are lost, the program keeps running", self.paths[file].display(), self.paths[ORCA].display());
        }
        self.give_up(file);
        if file != ORCA {
            self.give_up(ORCA);
        }
    }

    /// Stops writing `file`: what was not flushed is counted as lost and cut off the file.
    fn give_up(&mut self, file: usize) {
        let Some(f) = self.files[file].take() else {
            return;
        };
        self.lost += std::mem::take(&mut self.pending[file]);
        self.buffers[file] = Vec::new();
        // A partly written buffer would leave a torn last line; cutting back to the last flush
        // keeps the file readable (and frees the space on a full disk). A pipe cannot be cut.
        if f.metadata().is_ok_and(|m| m.is_file()) {
            let _ = f.set_len(self.committed_bytes[file]);
        }
    }

    /// Says once per file when a file has been deleted under the writer.
    fn check_deleted(&mut self) {
        use std::os::unix::fs::MetadataExt;
        for file in 0..3 {
            let Some(f) = self.files[file].as_ref() else {
                continue;
            };
            if !self.deleted[file] && f.metadata().is_ok_and(|m| m.is_file() && m.nlink() == 0) {
                self.deleted[file] = true;
                if file == ORCA && self.ring.is_some() {
                    // A chunk removed by hand: the next chunk begins at once (its lines
                    // so far are lost with it); [`Output::rotate`] says so.
                    continue;
                }
                crate::say!(
                    "orca: {} was deleted during the run (its folder removed?); recording goes on and the file will be written back at exit",
                    self.paths[file].display()
                );
            }
        }
    }

    /// At exit, after the last flush: writes every deleted file back at its path from the
    /// open descriptor; when that is impossible says what is lost and counts it.
    fn restore_deleted(&mut self) {
        self.check_deleted();
        for file in 0..3 {
            if !self.deleted[file] || (file == ORCA && self.ring.is_some()) {
                continue;
            }
            let Some(f) = self.files[file].as_ref() else {
                continue;
            };
            let path = &self.paths[file];
            match restore(f, path) {
                Ok(()) => crate::say!(
                    "orca: wrote {} back ({} lines; it was deleted during the run)",
                    path.display(),
                    self.committed[file]
                ),
                Err(e) => {
                    crate::say!(
                        "orca: {} was deleted during the run and cannot be written back ({e}); its {} lines are lost",
                        path.display(),
                        self.committed[file]
                    );
                    self.lost += self.committed[file];
                }
            }
        }
    }
}

/// Copies the whole content of `from` (open, but unlinked) to a new file at `path`, creating
/// its folder again. Never overwrites a file someone else has put there since.
fn restore(mut from: &File, path: &std::path::Path) -> io::Result<()> {
    use std::io::{Seek, SeekFrom};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    from.seek(SeekFrom::Start(0))?;
    io::copy(&mut from, &mut to)?;
    to.sync_all()
}

/// A test hook: `ORCA_TEST_WRITER_STALL_MS` makes the writer sleep that long before its first
/// pass, as a stuck disk would, so that a test can fill the queue and time the program's
/// threads (tests/e2e/invariants.rs).
fn test_writer_stall() -> Option<Duration> {
    std::env::var("ORCA_TEST_WRITER_STALL_MS")
        .ok()?
        .parse()
        .ok()
        .map(Duration::from_millis)
}

/// A test hook: `ORCA_TEST_WRITER_KBPS` makes the writer take that many KiB a second of the
/// event file at most, as a slow disk would (scripts/stress: the agent writes into no FIFO).
fn test_writer_rate() -> Option<f64> {
    static RATE: OnceLock<Option<f64>> = OnceLock::new();
    *RATE.get_or_init(|| {
        std::env::var("ORCA_TEST_WRITER_KBPS")
            .ok()?
            .parse::<f64>()
            .ok()
            .filter(|r| *r > 0.0)
            .map(|r| r * 1024.0)
    })
}

/// Appends `v` as 8 upper-case hex digits, in one copy (a push per digit checked the
/// capacity eight times).
pub fn push_hex(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&hex(v));
}

fn hex(v: u32) -> [u8; 8] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut b = [0u8; 8];
    for (i, d) in b.iter_mut().enumerate() {
        *d = HEX[((v >> (28 - 4 * i)) & 15) as usize];
    }
    b
}

/// The `<histogram>`'s items after `<n>`, in the steps form (docs/FORMAT.md): each bucket as
/// its distance from the one before, and its count after a `:` only when above 1. A busy
/// key's histogram has hundreds of sparse buckets of a few holds each, and this form writes
/// them in about half the bytes of `bucket;count` pairs (issue 21's log budget).
fn push_histogram_steps(out: &mut Vec<u8>, buckets: &[(u32, u64)]) {
    let mut prev = 0;
    for &(b, c) in buckets {
        out.push(b';');
        push_dec(out, b.saturating_sub(prev).into());
        prev = b;
        if c != 1 {
            out.push(b':');
            push_dec(out, c);
        }
    }
}

fn push_site(out: &mut Vec<u8>, s: &Site) {
    out.extend_from_slice(b"1;");
    push_hex(out, s.method);
    out.push(b';');
    push_hex(out, s.location);
}

/// Formats one `.orca` line (with its newline) as docs/FORMAT.md says.
pub fn format_event(out: &mut Vec<u8>, e: &EventRecord) {
    if let Extra::Class(sig) = &e.extra {
        // `<timestamp>,ObjectClass,<object>,<classSignature>`: no thread.
        push_timestamp(out, e.nanos);
        out.extend_from_slice(b",ObjectClass,");
        push_hex(out, e.object);
        out.push(b',');
        push_escaped(out, sig, TextKind::JvmName);
        out.push(b'\n');
        return;
    }
    push_timestamp(out, e.nanos);
    out.push(b',');
    out.extend_from_slice(e.kind.name().as_bytes());
    out.push(b',');
    push_hex(out, e.thread);
    match &e.extra {
        Extra::Name(name) => {
            out.push(b',');
            push_escaped(out, name, TextKind::Free);
        }
        Extra::None if e.kind == EventKind::ThreadStarted => out.push(b','),
        Extra::Holds(h)
            if matches!(
                e.kind,
                EventKind::MonitorHoldsUntimed | EventKind::LockHoldsUntimed
            ) =>
        {
            out.push(b',');
            push_hex(out, e.object);
            if let Some(m) = h.mode {
                out.push(b',');
                out.push(m);
            }
            out.push(b',');
            push_dec(out, h.count);
            out.push(b',');
            push_site(out, &h.site);
            push_sample(out, h.sample);
            out.push(b'\n');
            return;
        }
        Extra::Holds(h) => {
            out.push(b',');
            push_hex(out, e.object);
            if let Some(m) = h.mode {
                out.push(b',');
                out.push(m);
            }
            for v in [h.count, h.total, h.max, h.histogram.len() as u64] {
                out.push(b',');
                push_dec(out, v);
            }
            push_histogram_steps(out, &h.histogram);
            out.push(b',');
            push_site(out, &h.site);
            // A contentions line's stack (only theirs have frames here).
            if !e.frames.is_empty() {
                push_stack(out, &e.frames);
            }
            push_sample(out, h.sample);
            out.push(b'\n');
            return;
        }
        Extra::LockHold(l) => {
            out.push(b',');
            push_hex(out, e.object);
            out.push(b',');
            out.push(l.mode);
            out.push(b',');
            push_dec(out, l.nanos);
            out.push(b',');
            push_site(out, &l.site);
            push_stack(out, &e.frames);
            out.push(b'\n');
            return;
        }
        Extra::Notifies(n) => {
            out.push(b',');
            out.extend_from_slice(n.call.name().as_bytes());
            out.push(b',');
            push_dec(out, n.count);
            out.push(b',');
            push_site(out, &n.site);
            out.push(b'\n');
            return;
        }
        Extra::Waits(w) => {
            out.push(b',');
            out.extend_from_slice(w.call.name().as_bytes());
            out.push(b',');
            push_hex(out, e.object);
            out.push(b',');
            push_dec(out, w.count);
            out.push(b',');
            push_dec(out, w.total);
            out.push(b',');
            push_dec(out, w.max);
            out.push(b',');
            push_site(out, &w.site);
            if !e.frames.is_empty() {
                push_stack(out, &e.frames);
            }
            out.push(b'\n');
            return;
        }
        Extra::Order(o) => {
            out.push(b',');
            push_hex(out, o.held);
            out.push(b',');
            push_hex(out, o.acquired);
            out.push(b',');
            push_dec(out, o.count);
            out.push(b',');
            push_dec(out, o.guards.len() as u64);
            for g in &o.guards {
                out.push(b';');
                push_hex(out, *g);
            }
            out.push(b',');
            push_site(out, &o.held_site);
            out.push(b',');
            push_site(out, &o.acquired_site);
            out.push(b'\n');
            return;
        }
        _ => {}
    }
    if e.kind.has_object() {
        out.push(b',');
        push_hex(out, e.object);
    }
    match e.extra {
        Extra::Mode(m) if e.kind.has_mode() => {
            out.push(b',');
            out.push(m);
        }
        Extra::Lock(lock) if e.kind.has_condition_lock() => {
            out.push(b',');
            push_hex(out, lock);
        }
        _ => {}
    }
    if matches!(
        e.kind,
        EventKind::MonitorContendedEnter | EventKind::LockAcquire
    ) {
        out.push(b',');
        push_hex(out, e.owner);
    }
    if let Extra::Nanos(n) = e.extra {
        out.push(b',');
        push_dec(out, n);
    }
    if e.kind.has_stack() {
        push_stack(out, &e.frames);
    }
    out.push(b'\n');
}

/// `,<n>;<method>;<location>...`: a line's stack trace.
fn push_stack(out: &mut Vec<u8>, frames: &Frames) {
    out.push(b',');
    push_dec(out, frames.len() as u64);
    for &f in frames.iter() {
        push_frame(out, f);
    }
}

/// Formats one metadata line; returns which file it belongs to.
fn format_meta(out: &mut Vec<u8>, m: &MetaRecord) -> usize {
    match m {
        MetaRecord::Method {
            nanos,
            id,
            name,
            signature,
            class,
            lines,
        } => {
            push_timestamp(out, *nanos);
            out.push(b',');
            push_hex(out, *id);
            out.push(b',');
            push_escaped(out, name, TextKind::JvmName);
            out.push(b',');
            push_escaped(out, signature, TextKind::JvmName);
            out.push(b',');
            push_hex(out, *class);
            out.push(b',');
            match lines {
                None => out.extend_from_slice(b"-1"),
                Some(entries) => {
                    push_dec(out, entries.len() as u64);
                    for l in entries {
                        out.push(b';');
                        push_hex(out, l.start_location as u32);
                        out.push(b';');
                        push_hex(out, l.line_number as u32);
                    }
                }
            }
            out.push(b'\n');
            METHODS
        }
        MetaRecord::Class {
            nanos,
            id,
            signature,
            source,
        } => {
            push_timestamp(out, *nanos);
            out.push(b',');
            push_hex(out, *id);
            out.push(b',');
            push_escaped(out, signature, TextKind::JvmName);
            out.push(b',');
            push_escaped(out, source.as_deref().unwrap_or(""), TextKind::Free);
            out.push(b'\n');
            CLASSES
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &EventRecord) -> String {
        let mut v = Vec::new();
        format_event(&mut v, e);
        String::from_utf8(v).unwrap()
    }

    fn ev(kind: EventKind, frames: Vec<Frame>) -> EventRecord {
        EventRecord {
            nanos: 12_000_000_345,
            kind,
            thread: 0xAB,
            object: 0x1234_5678,
            owner: 0xFFFF_0001,
            extra: Extra::None,
            frames: frames.into(),
        }
    }

    /// Producers racing the exit: every event pushed is either written, dropped or counted
    /// late, none silently lost in the queue after the writer's final pass.
    #[test]
    fn every_event_pushed_during_exit_is_written_or_counted() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("orca-writer-exit-{}", std::process::id()));
        for round in 0..30 {
            let paths = ["orca", "methods", "classes"].map(|e| dir.join(format!("r{round}.{e}")));
            let files = Files::create(paths.clone()).unwrap();
            let log: &'static LogWriter = Box::leak(Box::new(LogWriter::new()));
            log.start(files, None).unwrap();
            let go = Arc::new(AtomicBool::new(true));
            let producers: Vec<_> = (0..3)
                .map(|_| {
                    let go = go.clone();
                    std::thread::spawn(move || {
                        let mut n = 0u64;
                        while go.load(Ordering::Relaxed) {
                            log.push(ev(EventKind::ObjectNotify, vec![]));
                            n += 1;
                        }
                        n
                    })
                })
                .collect();
            std::thread::sleep(Duration::from_millis(2));
            let totals = log.finish();
            std::thread::sleep(Duration::from_millis(1));
            go.store(false, Ordering::Relaxed);
            let pushed: u64 = producers.into_iter().map(|p| p.join().unwrap()).sum();
            let late_now = log.late_now();
            let text = std::fs::read_to_string(&paths[0]).unwrap();
            let lines = text
                .lines()
                .filter(|l| !l.contains(",EventsDropped,") && !l.contains(",RecordingEnded,"));
            assert_eq!(totals.events, lines.count() as u64);
            assert!(text.ends_with(",RecordingEnded,unload\n"), "round {round}");
            assert_eq!(
                pushed,
                totals.events + totals.dropped + late_now,
                "round {round}: {totals:?}, {late_now} late"
            );
            for p in &paths {
                let _ = std::fs::remove_file(p);
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A `trace=all` batch of `n` `MonitorExit` lines of `thread`.
    fn trace_batch(thread: u32, n: usize) -> TraceBatch {
        TraceBatch {
            thread,
            stacks: Vec::new(),
            lines: vec![
                TraceLine {
                    nanos: 12_000_000_345,
                    monitor: 7,
                    stack: 0,
                    top: Frame::NONE,
                    kind: EventKind::MonitorExit,
                    has_top: false,
                };
                n
            ],
        }
    }

    /// A summary batch of `n` lines.
    fn summaries(n: usize) -> Vec<EventRecord> {
        (0..n)
            .map(|_| ev(EventKind::ObjectNotify, vec![]))
            .collect()
    }

    /// A writer for a test, living as long as the process as the agent's does, whose exit
    /// waits `exit_wait` in all.
    fn test_log(exit_wait: Duration, panic_at_start: bool) -> &'static LogWriter {
        let mut log = LogWriter::new();
        log.exit_wait = exit_wait;
        log.panic_at_start = panic_at_start;
        Box::leak(Box::new(log))
    }

    /// The three paths of a test's log in a folder of its own.
    fn test_paths(name: &str) -> [PathBuf; 3] {
        let dir = std::env::temp_dir().join(format!("orca-writer-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ["orca", "methods", "classes"].map(|e| dir.join(format!("run.{e}")))
    }

    /// The files at `paths` opened as the agent opened them before it refused special files
    /// (a FIFO, `/dev/full`: how these tests make a writer block or fail).
    fn special_files(paths: &[PathBuf; 3]) -> Files {
        let open = |p: &PathBuf| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(p)
                .unwrap()
        };
        Files::opened(
            paths.clone(),
            [open(&paths[0]), open(&paths[1]), open(&paths[2])],
        )
    }

    /// The thread that closed one recording's writer (a detach) is a producer like any other
    /// in the next recording: once another thread closes that one, its pushes are late, as
    /// every other thread's (a flag per thread, set at the first close, had them taken).
    #[test]
    fn closing_one_writer_makes_no_thread_the_closer_of_the_next() {
        let (first, next) = (
            test_log(Duration::ZERO, false),
            test_log(Duration::ZERO, false),
        );
        first.close_producers();
        first.push(ev(EventKind::ObjectNotify, vec![]));
        assert_eq!((first.late_now(), first.events.len()), (0, 1));
        std::thread::spawn(|| next.close_producers())
            .join()
            .unwrap();
        next.push(ev(EventKind::ObjectNotify, vec![]));
        assert_eq!((next.late_now(), next.events.len()), (1, 0));
    }

    /// The closing thread at exit: closes the log, pushes a summary batch (3 lines) and a
    /// trace batch (2 lines) for each of `threads` threads still running, as the exit drain
    /// does, and finishes. How long that took, and the totals.
    fn exit_drain(log: &'static LogWriter, threads: u32) -> (Duration, Totals) {
        std::thread::spawn(move || {
            log.close_producers();
            let start = Instant::now();
            for t in 0..threads {
                log.push_summaries(summaries(3));
                log.push_trace(trace_batch(t, 2));
            }
            let totals = log.finish();
            (start.elapsed(), totals)
        })
        .join()
        .unwrap()
    }

    /// A writer stuck in a write (its event file a FIFO nobody reads) at exit, with the queue
    /// full: the exit drain's batches, two per thread still running, and `finish` wait one
    /// budget in all, not one per batch (16 batches waited 16 budgets before); what could not
    /// be queued is dropped and counted, what was queued is counted as abandoned.
    #[test]
    fn exit_waits_one_budget_in_all_for_a_stuck_writer() {
        use std::io::Read;
        use std::os::unix::ffi::OsStrExt;
        const WAIT: Duration = Duration::from_millis(400);
        const THREADS: u32 = 8;
        let paths = test_paths("stuck");
        let _ = std::fs::remove_file(&paths[0]);
        let fifo = std::ffi::CString::new(paths[0].as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let log = test_log(WAIT, false);
        log.start(special_files(&paths), None).unwrap();
        // Fill the queue until it stays full: the writer takes at least a pass (4,096 lines,
        // 190 KiB) before it flushes, and the FIFO holds 64 KiB, so its write blocks.
        let start = Instant::now();
        let mut full_since: Option<Instant> = None;
        loop {
            while !log.events.is_full() {
                log.push(ev(EventKind::ObjectNotify, vec![]));
            }
            let since = *full_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_millis(300) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the writer never got stuck"
            );
            std::thread::sleep(Duration::from_millis(10));
            if !log.events.is_full() {
                full_since = None;
            }
        }
        let dropped_before = log.dropped.load(Ordering::SeqCst);
        let (spent, totals) = exit_drain(log, THREADS);
        assert!(
            (WAIT..WAIT * 3).contains(&spent),
            "{THREADS} threads' batches and finish took {spent:?} with a budget of {WAIT:?}"
        );
        assert_eq!(totals.dropped, dropped_before + 5 * THREADS as u64);
        assert!(totals.abandoned > 0 && !totals.writer_stopped, "{totals:?}");
        // The writer, unblocked, ends with its last pass: a reader gets everything up to it.
        let mut text = Vec::new();
        File::open(&paths[0])
            .unwrap()
            .read_to_end(&mut text)
            .unwrap();
        assert!(text.ends_with(b",RecordingEnded,unload\n"));
        let _ = std::fs::remove_dir_all(paths[0].parent().unwrap());
    }

    /// A writer thread that has stopped (it panicked; here by the test hook): no push waits
    /// or queues anything, the exit drain's included; each is dropped and counted at once,
    /// and `finish` says the writer stopped without waiting for it.
    #[test]
    fn pushes_never_wait_for_a_writer_that_is_gone() {
        const WAIT: Duration = Duration::from_secs(5);
        let paths = test_paths("gone");
        let log = test_log(WAIT, true);
        log.start(Files::create(paths.clone()).unwrap(), None)
            .unwrap();
        let start = Instant::now();
        while !log.gone.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(60), "no panic");
            std::thread::sleep(Duration::from_millis(1));
        }
        // More than the queue holds: queued, they would fill it, and the exit drain would
        // wait for room that never comes.
        let n = EVENT_QUEUE_CAPACITY as u64 + 10;
        for _ in 0..n {
            log.push(ev(EventKind::ObjectNotify, vec![]));
        }
        log.push_meta(MetaRecord::Class {
            nanos: 1,
            id: 1,
            signature: "LA;".into(),
            source: None,
        });
        assert!(log.events.is_empty() && log.meta.is_empty());
        let (spent, totals) = exit_drain(log, 8);
        assert!(spent < WAIT / 4, "the exit drain took {spent:?}");
        assert_eq!(
            totals,
            Totals {
                dropped: n + 5 * 8,
                writer_stopped: true,
                ..Totals::default()
            }
        );
        let _ = std::fs::remove_dir_all(paths[0].parent().unwrap());
    }

    /// A write error (the event file is `/dev/full`): the writer says so once and goes on
    /// taking events, counted as lost to I/O, so the queue never stays full and no thread
    /// drops or waits because of the disk.
    #[test]
    fn the_writer_keeps_draining_after_a_write_error() {
        let mut paths = test_paths("full");
        paths[0] = PathBuf::from("/dev/full");
        let log = test_log(FINISH_TIMEOUT, false);
        log.start(special_files(&paths), None).unwrap();
        // Four times half the queue, each after the writer took the last.
        let round = EVENT_QUEUE_CAPACITY as u64 / 2;
        for r in 0..4 {
            for _ in 0..round {
                log.push(ev(EventKind::ObjectNotify, vec![]));
            }
            let start = Instant::now();
            while !log.events.is_empty() {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "round {r}: the writer stopped taking events"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let totals = log.finish();
        assert_eq!(
            (totals.events, totals.dropped),
            (4 * round, 0),
            "{totals:?}"
        );
        // Every event line and the RecordingEnded line.
        assert_eq!(totals.lost_to_io, 4 * round + 1, "{totals:?}");
        let _ = std::fs::remove_dir_all(paths[1].parent().unwrap());
    }

    /// Once exit began, the closing thread's `trace=all` batches (the exit drain's, which
    /// has the records of the threads still running) are written, another thread's counted
    /// late.
    #[test]
    fn the_exit_drain_writes_its_trace_batches() {
        let dir = std::env::temp_dir().join(format!("orca-writer-trace-{}", std::process::id()));
        let paths = ["orca", "methods", "classes"].map(|e| dir.join(format!("t.{e}")));
        let log: &'static LogWriter = Box::leak(Box::new(LogWriter::new()));
        let settings = "mode=instrument;trace=all;stackdepth=8";
        log.start(Files::create(paths.clone()).unwrap(), Some(settings.into()))
            .unwrap();
        let batch = |thread: u32| trace_batch(thread, 2);
        let totals = std::thread::spawn(move || {
            log.close_producers();
            log.push_trace(batch(0xC1));
            std::thread::spawn(move || log.push_trace(batch(0xD2)))
                .join()
                .unwrap();
            log.finish()
        })
        .join()
        .unwrap();
        let text = std::fs::read_to_string(&paths[0]).unwrap();
        // The settings first: a reader knows how to read the rest before it does.
        let first = text.lines().next().unwrap();
        assert!(
            first.ends_with(&format!(",RecordingStarted,{settings}")),
            "{text}"
        );
        assert_eq!(text.matches(",RecordingStarted,").count(), 1, "{text}");
        assert_eq!(text.matches(",MonitorExit,000000C1,").count(), 2, "{text}");
        assert!(!text.contains("000000D2"), "{text}");
        assert_eq!((totals.events, totals.late), (2, 2), "{totals:?}");
        let _ = std::fs::remove_dir_all(paths[0].parent().unwrap());
    }

    #[test]
    fn formats_each_shape() {
        let f = vec![
            Frame {
                method: 1,
                location: 0x2A,
            },
            Frame {
                method: 0x10,
                location: u32::MAX,
            },
        ];
        assert_eq!(
            line(&ev(EventKind::ObjectWait, f.clone())),
            "12.000000345,ObjectWait,000000AB,12345678,2;00000001;0000002A;00000010;FFFFFFFF\n"
        );
        assert_eq!(
            line(&ev(EventKind::ThreadSleep, vec![])),
            "12.000000345,ThreadSleep,000000AB,0\n"
        );
        assert_eq!(
            line(&ev(EventKind::MonitorContendedEnter, vec![])),
            "12.000000345,MonitorContendedEnter,000000AB,12345678,FFFF0001,0\n"
        );
        assert_eq!(
            line(&ev(EventKind::ThreadEnded, f)),
            "12.000000345,ThreadEnded,000000AB\n"
        );
        // ObjectClass: no thread; the signature keeps its `;` and escapes `,` and `%`.
        let mut c = ev(EventKind::ObjectClass, vec![]);
        c.object = 0x6404CC3C;
        c.extra = Extra::Class("Lcom/x/A,b%c;".into());
        assert_eq!(
            line(&c),
            "12.000000345,ObjectClass,6404CC3C,Lcom/x/A%2Cb%25c;\n"
        );
        let mut s = ev(EventKind::ThreadStarted, vec![]);
        s.extra = Extra::Name("a,b\nc".into());
        assert_eq!(line(&s), "12.000000345,ThreadStarted,000000AB,a%2Cb%0Ac\n");
        let site = |m, l| Frame {
            method: m,
            location: l,
        };
        let mut h = ev(EventKind::MonitorHolds, vec![]);
        h.extra = Extra::Holds(Box::new(HoldsLine {
            count: 3,
            total: 300,
            max: 200,
            histogram: vec![(40, 1), (100, 2)],
            site: site(1, 0x2A),
            mode: None,
            sample: 1,
        }));
        assert_eq!(
            line(&h),
            "12.000000345,MonitorHolds,000000AB,12345678,3,300,200,2;40;60:2,1;00000001;0000002A\n"
        );
        let mut u = ev(EventKind::MonitorHoldsUntimed, vec![]);
        u.extra = Extra::Holds(Box::new(HoldsLine {
            count: 7,
            total: 0,
            max: 0,
            histogram: Vec::new(),
            site: site(1, 0x2A),
            mode: None,
            sample: 1,
        }));
        assert_eq!(
            line(&u),
            "12.000000345,MonitorHoldsUntimed,000000AB,12345678,7,1;00000001;0000002A\n"
        );
        let mut lu = ev(EventKind::LockHoldsUntimed, vec![]);
        lu.extra = Extra::Holds(Box::new(HoldsLine {
            count: 9,
            total: 0,
            max: 0,
            histogram: Vec::new(),
            site: site(1, 0x2A),
            mode: Some(b'R'),
            sample: 1,
        }));
        assert_eq!(
            line(&lu),
            "12.000000345,LockHoldsUntimed,000000AB,12345678,R,9,1;00000001;0000002A\n"
        );
        let mut o = ev(EventKind::LockOrder, vec![]);
        o.extra = Extra::Order(Box::new(OrderLine {
            held: 1,
            acquired: 2,
            count: 5,
            guards: vec![3],
            held_site: site(1, 1),
            acquired_site: site(2, 2),
        }));
        assert_eq!(
            line(&o),
            "12.000000345,LockOrder,000000AB,00000001,00000002,5,1;00000003,1;00000001;00000001,1;00000002;00000002\n"
        );
        let mut a = ev(EventKind::LockAcquire, vec![]);
        a.extra = Extra::Mode(b'R');
        assert_eq!(
            line(&a),
            "12.000000345,LockAcquire,000000AB,12345678,R,FFFF0001,0\n"
        );
        let mut r = ev(EventKind::LockRelease, vec![]);
        r.extra = Extra::Mode(b'W');
        assert_eq!(line(&r), "12.000000345,LockRelease,000000AB,12345678,W,0\n");
        let mut h = ev(EventKind::LockHeldAtStart, vec![]);
        h.extra = Extra::Mode(b'W');
        assert_eq!(
            line(&h),
            "12.000000345,LockHeldAtStart,000000AB,12345678,W,0\n"
        );
        let mut c = ev(EventKind::ConditionAwait, vec![]);
        c.extra = Extra::Lock(0xC0FFEE);
        assert_eq!(
            line(&c),
            "12.000000345,ConditionAwait,000000AB,12345678,00C0FFEE,0\n"
        );
        assert_eq!(
            line(&ev(EventKind::ThreadUnpark, vec![])),
            "12.000000345,ThreadUnpark,000000AB,12345678,0\n"
        );
        let mut m = ev(EventKind::MonitorHold, vec![]);
        m.extra = Extra::Nanos(12_000_000);
        assert_eq!(
            line(&m),
            "12.000000345,MonitorHold,000000AB,12345678,12000000,0\n"
        );
    }

    /// A trace batch's lines are those of the same events as records.
    #[test]
    fn trace_lines_are_event_lines() {
        let f = |m: u32, l: u32| Frame {
            method: m,
            location: l,
        };
        let stack = vec![f(1, 0x2A), f(2, 7), f(0xABC, u32::MAX)];
        let exit_site = f(1, 0x30);
        let batch = TraceBatch {
            thread: 0xAB,
            stacks: vec![
                Arc::new(StackText::new(&stack)),
                Arc::new(StackText::new(&[])),
            ],
            lines: vec![
                (EventKind::MonitorEnter, 1, stack[0], true),
                (EventKind::MonitorExit, 1, exit_site, true),
                (EventKind::MonitorEntered, 0, exit_site, true),
                (EventKind::MonitorExit, 0, exit_site, false),
                (EventKind::MonitorExit, 2, exit_site, true),
            ]
            .into_iter()
            .map(|(kind, stack, top, has_top)| TraceLine {
                nanos: 12_000_000_345,
                monitor: 0x1234_5678,
                stack,
                top,
                kind,
                has_top,
            })
            .collect(),
        };
        let mut exit = stack.clone();
        exit[0] = exit_site;
        let want = [
            ev(EventKind::MonitorEnter, stack),
            ev(EventKind::MonitorExit, exit),
            ev(EventKind::MonitorEntered, vec![exit_site]),
            ev(EventKind::MonitorExit, vec![]),
            ev(EventKind::MonitorExit, vec![]),
        ]
        .iter()
        .map(line)
        .collect::<String>();
        let mut out = Vec::new();
        format_trace(&mut out, &batch);
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn frames_spill_to_the_heap_past_the_inline_ones() {
        let f = |i: u32| Frame {
            method: i,
            location: i * 10,
        };
        let mut fr = Frames::with_capacity(2);
        for i in 0..INLINE_FRAMES as u32 {
            fr.push(f(i));
        }
        assert!(matches!(fr, Frames::Inline(..)));
        fr.push(f(99));
        assert!(matches!(fr, Frames::Heap(_)));
        let want: Vec<Frame> = (0..INLINE_FRAMES as u32).map(f).chain([f(99)]).collect();
        assert_eq!(&fr[..], &want[..]);
        let copy = fr.clone();
        fr[0].location = 7;
        assert_eq!(copy[0].location, 0);
        assert!(Frames::new().is_empty());
        assert_eq!(&Frames::from(vec![f(1), f(2)])[..], &[f(1), f(2)]);
        // The queue's memory bound (EVENT_QUEUE_CAPACITY records) rests on this, and
        // MAX_TRACED's on the second.
        assert!(std::mem::size_of::<EventRecord>() <= 128);
        assert!(std::mem::size_of::<TraceLine>() <= 32);
    }

    #[test]
    fn formats_metadata() {
        let mut v = Vec::new();
        let m = MetaRecord::Method {
            nanos: 5,
            id: 3,
            name: "main".into(),
            signature: "([Ljava/lang/String;)V".into(),
            class: 0x15DB9742,
            lines: Some(vec![LineEntry {
                start_location: 0,
                line_number: 70,
            }]),
        };
        assert_eq!(format_meta(&mut v, &m), METHODS);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "0.000000005,00000003,main,([Ljava/lang/String;)V,15DB9742,1;00000000;00000046\n"
        );
        let mut v = Vec::new();
        let c = MetaRecord::Class {
            nanos: 1_500_000_000,
            id: 7,
            signature: "LPing;".into(),
            source: None,
        };
        assert_eq!(format_meta(&mut v, &c), CLASSES);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "1.500000000,00000007,LPing;,\n"
        );
    }
}
