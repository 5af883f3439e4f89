//! Instrumentation mode's monitor records: what the tracker's per-thread buffers become, and
//! the stacks interned for them.
//!
//! The tracker (java-tracker/) appends three `long`s per monitor report to a buffer of its
//! thread (`OrcaRec`) and calls in here only when the buffer is full, so a
//! `synchronized` block costs no JNI call, no stack walk and no shared queue. Here, on the same
//! thread, the records become per-site summaries ([`Summary`]) and, with `trace=all`, event
//! lines. With `trace=all`, before any event the agent writes at once on a thread (a wait, a
//! contention, a long hold) the thread's buffer is drained first, so its lines stay in the
//! order it made them; summaries need no such order, so without it the buffer waits until it
//! is full or its summaries are due ([`Recorder::before_event`]).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use jni_sys::jobject;

use crate::events::{RecordKind, SiteBits, Sizes, HELD_WORDS};
use crate::jvmti::Jni;
use crate::recorder::budget;
use crate::recorder::clock::{self, now_nanos};
use crate::recorder::owners::OwnerQuery;
use crate::recorder::summary::{self, FastHasher, FastMap, OrderSlots, Summary};
use crate::recorder::threads::{OpenCall, OpenExtra, ThreadState};
use crate::recorder::waiters::{Found, Left};
use crate::recorder::writer::{
    EventRecord, Extra, Frame, Frames, HoldsLine, LockHoldLine, NotifiesLine, OrderLine, StackText,
    TraceBatch, TraceLine, WaitsLine,
};
use crate::recorder::JucLine;
use crate::recorder::Recorder;
use orca_format::{EventKind, WaitCall, WakeCall};

/// Longs per record.
const RECORD: usize = 3;
/// The tracker's buffer grows (doubling from 32 records) up to this many longs: a thread
/// that reports often crosses into the agent once per 1,024 reports, a thread that reports
/// rarely (or one of 10,000 virtual threads) keeps a small buffer.
const MAX_BUFFER: usize = RECORD * 1024;
/// Summaries are written at most this often per thread (and at its end, and at exit)...
/// Why 10 s: a busy server's thread touches the same hundred sites every second, so its lines
/// grow with the sites times the intervals; at 1 s embedded Jetty wrote 54,000 `MonitorHolds`
/// lines in 35 s (about 600 KB/s), at 10 s a tenth. The cost: a `kill -9` loses up to this
/// much of a thread's summaries (a thread's end, `System.exit` and SIGTERM lose nothing).
const SUMMARY_INTERVAL: u64 = 10_000_000_000;
/// ... or sooner when a thread's tables reach this many lines: a program that locks a new
/// object per row (Derby) makes a key per acquisition, and the tables of one second took
/// 170 MB.
const MAX_PENDING_LINES: usize = 8192;
/// Frames (interned stacks) a thread keeps before its table starts over.
const MAX_STACKS: usize = 4096;

/// Sites a thread keeps resolved to frames (direct-mapped): a trace line names one or two,
/// and the look-up through the method table was a tenth of the program thread's time.
const SITE_CACHE: usize = 256;

/// `trace=all`: a monitor entered and not yet exited, as its events need it.
struct TraceHeld {
    monitor: u32,
    /// The interned stack of its entry (its exit's stack too).
    stack: u32,
    site: u32,
    since: u64,
}

/// Adds a stack to the thread's table; its ID.
fn intern_stack(r: &mut Recording, stack: Arc<StackText>) -> u32 {
    r.stacks.push(stack);
    // Not in any batch yet: drains only count up.
    r.stack_in_batch.push((u64::MAX, 0));
    r.stack_base.wrapping_add(r.stacks.len() as u32)
}

/// Starts the thread's stack table over (after a drain: no buffered record names an old
/// ID). IDs go on counting up, and the stacks still referred to, by monitors held and an
/// acquisition under way, move to the new table under new IDs: an old ID names nothing.
fn restart_stacks(r: &mut Recording) {
    let old = std::mem::take(&mut r.stacks);
    let old_base = r.stack_base;
    r.stack_base = old_base.wrapping_add(old.len() as u32);
    r.stack_in_batch.clear();
    r.stack_ids.clear();
    let moved = |r: &mut Recording, id: u32| -> u32 {
        let i = id.wrapping_sub(old_base).wrapping_sub(1) as usize;
        match old.get(i) {
            Some(st) if id != 0 => intern_stack(r, st.clone()),
            _ => 0,
        }
    };
    for i in 0..r.trace_held.len() {
        let id = moved(r, r.trace_held[i].stack);
        r.trace_held[i].stack = id;
    }
    if let Some((m, st, s)) = r.trace_entering {
        let id = moved(r, st);
        r.trace_entering = Some((m, id, s));
    }
}

/// A JNI global reference to the thread's `Rec`.
pub struct RecRef(jobject);
// SAFETY: a JNI global reference is valid on every thread.
unsafe impl Send for RecRef {}
// SAFETY: as above; the agent only passes it to JNI calls, which may be made from any
// thread at once (the object behind it is read with JNI, never through the pointer).
unsafe impl Sync for RecRef {}

/// What the agent keeps of one thread's tracker buffer: shared with the exit drain.
pub struct Recording {
    rec: RecRef,
    /// The thread's hash (`<thread>` of its lines).
    hash: u32,
    summary: Summary,
    /// The lock-order rows told to the tracker, which counts the occurrences they decide.
    slots: OrderSlots,
    /// `trace=all`: interned stacks, ID = `stack_base` + index + 1, formatted once each.
    stacks: Vec<Arc<StackText>>,
    /// The IDs given before the table last started over: an ID is never given twice, so
    /// one still held somewhere when the table starts over can never name another stack.
    stack_base: u32,
    /// Per interned stack: the drain that last put it in its batch, and where.
    stack_in_batch: Vec<(u64, u32)>,
    /// Drains so far (the batch a `stack_in_batch` entry is of).
    drains: u64,
    /// `trace=all`: site -> frame, direct-mapped (site 0: empty slot).
    site_frames: Box<[(u32, Frame)]>,
    /// Hash of a walked stack's raw frames -> its ID.
    stack_ids: FastMap<u64, u32>,
    /// `trace=all`: each monitor entered and not yet exited.
    trace_held: Vec<TraceHeld>,
    /// `trace=all`: the lines of the drain under way, queued as one record at its end.
    trace_batch: TraceBatch,
    /// `trace=all`: the last enter with no entered after it yet (monitor, stack, site).
    trace_entering: Option<(u32, u32, u32)>,
    /// Reused copy of the tracker's buffer.
    scratch: Vec<i64>,
    /// fold_quiet's (site, count) pairs, kept for the next drain.
    quiet_scratch: Vec<(u32, u64)>,
    /// Drained at JVM exit: from then on the thread's records are late.
    closed: bool,
    /// How much of the buffer (in `long`s) the exit drain read from another thread: it
    /// leaves the buffer's position alone (the owner may be writing the next record), so
    /// the owner's next drain knows these were taken.
    exit_taken: usize,
    /// The timestamp of the last record drained: a periodic summary is written at it, not at
    /// "now", because the record that filled the buffer (taken before) is written after it.
    last_nanos: u64,
    /// The time of the thread's last event written at once: its summaries are not dated
    /// before it (a thread's lines never go back in time).
    last_event: u64,
    /// A bounded recording: the chunk the thread's summaries were last written in
    /// ([`LogWriter::chunk`]); a thread writes them at its first drain in a new chunk, so that
    /// its rows fall in the chunk whose holds they count (docs/FORMAT.md, "Chunks").
    chunk: u64,
    /// The entry line (`ObjectWait`, `ConditionAwait`, `ThreadPark`) of the thread's wait
    /// under way, not written yet: a wait shorter than `waitthreshold` is only counted
    /// ([`Recorder::wait_ended`]). Here rather than in the thread's state so that the exit
    /// drain can write it before the summaries of a thread still waiting.
    deferred: Option<EventRecord>,
    /// The `MonitorContendedEnter` line of the thread's contention under way, not written
    /// yet: a contention shorter than `contentionthreshold` is only counted
    /// ([`Recorder::contention_ended`]); here for the same reason as `deferred`.
    deferred_contention: Option<KeptContention>,
}

/// A kept-back contention line, and the question its owner waits on when no instrumented
/// code held the monitor ([`OwnerQuery`]).
struct KeptContention {
    line: EventRecord,
    owner: Option<Arc<OwnerQuery>>,
}

impl KeptContention {
    /// The line to write now, with the owner the asker found by now (0 if none yet).
    fn line(self) -> EventRecord {
        let mut line = self.line;
        if let Some(q) = self.owner {
            line.owner = q.owner();
        }
        line
    }
}

/// Every thread's recording, by the address of its `Arc` (removal at thread end is O(1):
/// there may be thousands of virtual threads).
pub type Registry = Mutex<HashMap<usize, Arc<Mutex<Recording>>>>;

/// Field IDs of the tracker's `OrcaRec` (some declared by its superclasses, which JNI finds
/// on it), read by the agent when it drains a buffer.
pub struct RecFields {
    pub buf: jni_sys::jfieldID,
    pub pos: jni_sys::jfieldID,
    pub depth: jni_sys::jfieldID,
    /// `Rec.held`: the held entries, [`HELD_WORDS`] longs each.
    pub held: jni_sys::jfieldID,
    /// The ring of the thread's last monitor releases: hashes, starts and ends.
    pub rel_hash: jni_sys::jfieldID,
    pub rel_start: jni_sys::jfieldID,
    pub rel_end: jni_sys::jfieldID,
    /// The lock-order slots the agent publishes, with the counts the tracker keeps in them
    /// ([`OrderSlots`]), their mask, and the occurrences counted since last added.
    pub ord_keys: jni_sys::jfieldID,
    pub ord_mask: jni_sys::jfieldID,
    pub ord_pending: jni_sys::jfieldID,
    /// `Rec.quiet`: holds left unidentified (`tracking=sampled`), counted per site.
    pub quiet: jni_sys::jfieldID,
}
// SAFETY: field IDs are valid on every thread for as long as the class is loaded (the
// tracker, in the boot loader, is never unloaded).
unsafe impl Send for RecFields {}
unsafe impl Sync for RecFields {}

/// The tracker's buffers: every thread's recording, and how to read a `Rec` (known once the
/// tracker is installed).
#[derive(Default)]
pub struct Buffers {
    pub registry: Registry,
    /// Every registered thread's hash and `Rec`, by the same key as `registry`, for reading
    /// its holds from another thread ([`Recorder::tracked_owner`]). Apart from the
    /// recordings so that a thread busy writing out its buffer (its recording locked) can
    /// still be named the owner of the monitor another thread blocks on. An entry leaves
    /// before its global reference is deleted. A read-write lock: contenders looking for an
    /// owner read it together and never wait for one another; only a thread's first
    /// monitor report and its end write it.
    pub holders: RwLock<HashMap<usize, (u32, RecRef)>>,
    pub fields: OnceLock<RecFields>,
}

/// The summary line of a hold key's site: `MonitorHolds`, or `LockHolds` with the lock's mode.
fn lock_mode(site: u32) -> (EventKind, Option<u8>) {
    if site & SiteBits::Lock as u32 == 0 {
        (EventKind::MonitorHolds, None)
    } else if site & SiteBits::Read as u32 != 0 {
        (EventKind::LockHolds, Some(b'R'))
    } else {
        (EventKind::LockHolds, Some(b'W'))
    }
}

fn lock(r: &Mutex<Recording>) -> MutexGuard<'_, Recording> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

impl Recorder {
    /// `OrcaProfilerTracker.register(Rec)`: the thread's first monitor report, or its first
    /// since its ThreadLocals were erased (the JDK's `InnocuousThread`: the Common-Cleaner,
    /// the common pool's workers), which lost the tracker its Rec. Returns the Rec to use (a
    /// local reference), null when there is none: a thread keeps its first, the only one
    /// drained, with the monitors it holds.
    pub fn rec_register(&self, jni: Jni, rec: jobject) -> jobject {
        let Some(state) = self.current_state() else {
            return std::ptr::null_mut();
        };
        if let Some(r) = &state.recording {
            let had = lock(r).rec.0;
            return if had.is_null() {
                had
            } else {
                jni.new_local_ref(had)
            };
        }
        if rec.is_null() {
            return std::ptr::null_mut();
        }
        let global = jni.new_global_ref(rec);
        if global.is_null() {
            return std::ptr::null_mut();
        }
        let r = Arc::new(Mutex::new(Recording {
            rec: RecRef(global),
            hash: state.hash,
            summary: Summary::starting(now_nanos()),
            slots: OrderSlots::default(),
            stacks: Vec::new(),
            stack_base: 0,
            stack_in_batch: Vec::new(),
            drains: 0,
            site_frames: Box::default(),
            stack_ids: Default::default(),
            trace_held: Vec::new(),
            trace_batch: TraceBatch::default(),
            trace_entering: None,
            scratch: Vec::new(),
            quiet_scratch: Vec::new(),
            closed: false,
            exit_taken: 0,
            last_nanos: 0,
            last_event: 0,
            chunk: self.log.chunk(),
            deferred: None,
            deferred_contention: None,
        }));
        let key = Arc::as_ptr(&r) as usize;
        self.buffers
            .holders
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (state.hash, RecRef(global)));
        self.buffers
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, r.clone());
        state.recording = Some(r);
        rec
    }

    /// `OrcaProfilerTracker.flush(Rec)`: the buffer is full.
    pub fn rec_flush(&self, jni: Jni) {
        if let Some(state) = self.current_state() {
            self.drain_thread(jni, state, None);
        }
    }

    /// Before an event written at once on the current thread (a call, a contention, a long
    /// hold). With `trace=all` the thread's buffered records are earlier lines of it, so they
    /// are drained first. Summaries need no such order (a hold's waits are matched to it by
    /// time), so then the buffer is drained only when its summaries are due: a server thread
    /// that notifies once per request (Jetty) crossed into its buffer, and touched its tables
    /// cold, once per request.
    pub fn before_event(&self, jni: Jni, state: &mut ThreadState, nanos: u64) {
        let Some(recording) = state.recording.as_ref() else {
            return;
        };
        if !self.trace_all {
            let mut r = lock(recording);
            r.last_event = r.last_event.max(nanos);
            if nanos.saturating_sub(r.summary.last_written) < SUMMARY_INTERVAL
                && r.chunk == self.log.chunk()
            {
                return;
            }
        }
        self.drain_thread(jni, state, Some(nanos));
    }

    /// Drains the current thread's buffer (when it is full, or before an event written at
    /// once), and writes the thread's summaries when they are due. Every drain may write
    /// them: a thread whose buffer is always drained by its waits and notifies (Derby's) would
    /// otherwise keep its tables until it ends (150 MB). `event`: the time of the event about
    /// to be written, the summaries' time then (a thread's lines never go back in time: its
    /// last line may be that of a call, later than its last record).
    fn drain_thread(&self, jni: Jni, state: &mut ThreadState, event: Option<u64>) {
        let Some(recording) = state.recording.clone() else {
            return;
        };
        let mut r = lock(&recording);
        self.drain(jni, &mut r);
        let now = now_nanos();
        let chunk = self.log.chunk();
        if now.saturating_sub(r.summary.last_written) >= SUMMARY_INTERVAL
            || r.summary.pending_lines() >= MAX_PENDING_LINES
            || r.chunk != chunk
        {
            r.chunk = chunk;
            let at = event
                .unwrap_or_else(|| r.last_nanos.max(r.summary.last_written))
                .max(r.last_event);
            self.write_summaries(jni, &mut r, at);
            r.summary.last_written = now;
            if let Some(f) = self.buffers.fields.get() {
                self.publish_slots(jni, f, &mut r);
            }
        }
    }

    /// Reads the current thread's buffer and turns its records into summaries (and trace
    /// events); once the JVM exits they are only counted, as late.
    fn drain(&self, jni: Jni, r: &mut Recording) {
        let Some(f) = self.buffers.fields.get() else {
            return;
        };
        let rec = r.rec.0;
        let live = !r.closed && !self.log.stopped();
        if live {
            self.fold_slots(jni, f, r, true);
            self.fold_quiet(jni, f, r, true);
        }
        let pos = jni.int_field(rec, f.pos).max(0) as usize;
        if pos == 0 {
            return;
        }
        let buf = jni.object_field(rec, f.buf);
        if buf.is_null() {
            return;
        }
        let len = jni.array_length(buf);
        let n = pos.min(len) / RECORD * RECORD;
        let mut scratch = std::mem::take(&mut r.scratch);
        scratch.resize(n, 0);
        let ok = jni.long_array_region(buf, &mut scratch);
        jni.set_int_field(rec, f.pos, 0);
        // A busy thread gets a bigger buffer: fewer crossings into the agent.
        if len < MAX_BUFFER && pos + RECORD > len {
            if let Some(bigger) = jni.new_long_array((len * 2).min(MAX_BUFFER)) {
                jni.set_object_field(rec, f.buf, bigger);
                jni.delete_local_ref(bigger);
            }
        }
        jni.delete_local_ref(buf);
        if ok {
            if r.closed || self.log.stopped() {
                let taken = std::mem::take(&mut r.exit_taken);
                self.log
                    .count_late((n.saturating_sub(taken) / RECORD) as u64);
            } else {
                self.records(jni, r, &scratch[..n]);
                self.publish_slots(jni, f, r);
            }
        }
        r.scratch = scratch;
    }

    /// Adds the lock-order occurrences the tracker counted in its slots to the summaries
    /// ([`OrderSlots`]), before the drain's records (the order does not matter: the slots
    /// only count occurrences whose row is settled). `owner`: on the thread itself, which
    /// then starts its counts over; the exit drain only reads them (the thread is closed
    /// after it: what it counts later is lost, as the records it puts later are late).
    fn fold_slots(&self, jni: Jni, f: &RecFields, r: &mut Recording, owner: bool) {
        if !r.slots.active() || jni.int_field(r.rec.0, f.ord_pending) == 0 {
            return;
        }
        let keys = jni.object_field(r.rec.0, f.ord_keys);
        if keys.is_null() {
            return;
        }
        let (slots, summary) = (&mut r.slots, &mut r.summary);
        jni.with_int_array(keys, |k| {
            slots.fold(summary, k, owner);
        });
        jni.delete_local_ref(keys);
        if owner {
            jni.set_int_field(r.rec.0, f.ord_pending, 0);
        }
    }

    /// Adds the holds the tracker left unidentified and counted per site (`Rec.quiet`,
    /// `tracking=sampled`) to the summaries' rows of other monitors. `owner`: on the thread
    /// itself, which then starts its table over; the exit drain only reads it (as
    /// [`fold_slots`](Self::fold_slots)).
    fn fold_quiet(&self, jni: Jni, f: &RecFields, r: &mut Recording, owner: bool) {
        let quiet = jni.object_field(r.rec.0, f.quiet);
        if quiet.is_null() {
            return;
        }
        let mut counts = std::mem::take(&mut r.quiet_scratch);
        counts.clear();
        jni.with_int_array(quiet, |q| {
            for pair in q.chunks_exact_mut(2) {
                if pair[0] != 0 && pair[1] > 0 {
                    counts.push((pair[0] as u32, pair[1] as u64));
                }
                if owner {
                    pair.fill(0);
                }
            }
        });
        jni.delete_local_ref(quiet);
        let end = r.last_nanos;
        for &(site, n) in &counts {
            let key = self.summary_site(jni, site);
            r.summary.untimed_hold(0, key, end, false, n);
        }
        r.quiet_scratch = counts;
    }

    /// Writes the slots that changed to the tracker (on the thread itself only, after its
    /// counts were added), in a larger table when its pairs of sites crowd them.
    fn publish_slots(&self, jni: Jni, f: &RecFields, r: &mut Recording) {
        if r.slots.crowded() {
            let slots = r.slots.grow();
            if let Some(keys) = jni.new_int_array(slots * Sizes::OrderKey as usize) {
                // Both set while the tracker waits for this call to return.
                jni.set_object_field(r.rec.0, f.ord_keys, keys);
                jni.set_int_field(r.rec.0, f.ord_mask, slots as i32 - 1);
                jni.delete_local_ref(keys);
            } else {
                // The tracker keeps its table, emptied: it counts nothing until told.
                let keys = jni.object_field(r.rec.0, f.ord_keys);
                if !keys.is_null() {
                    jni.with_int_array(keys, |k| k.fill(0));
                    jni.delete_local_ref(keys);
                }
                let (in_tracker, recorded) = (r.slots.in_tracker, r.slots.recorded);
                r.slots = OrderSlots::default();
                (r.slots.in_tracker, r.slots.recorded) = (in_tracker, recorded);
                jni.set_int_field(r.rec.0, f.ord_mask, Sizes::OrderSlots as i32 - 1);
            }
            return;
        }
        if !r.slots.dirty() {
            return;
        }
        let keys = jni.object_field(r.rec.0, f.ord_keys);
        if keys.is_null() {
            return; // the tracker made none: it counts nothing
        }
        let slots = &mut r.slots;
        jni.with_int_array(keys, |k| slots.write_keys(k));
        jni.delete_local_ref(keys);
    }

    /// The records of one drain; with `trace=all` their events go to the writer together.
    fn records(&self, jni: Jni, r: &mut Recording, recs: &[i64]) {
        if self.trace_all {
            r.drains += 1;
            r.trace_batch.thread = r.hash;
            r.trace_batch.lines.reserve(recs.len() / RECORD);
        }
        let mut i = 0;
        while i + RECORD <= recs.len() {
            i += self.record(jni, r, &recs[i..]);
        }
        if !r.trace_batch.lines.is_empty() {
            self.log.push_trace(std::mem::take(&mut r.trace_batch));
        }
    }

    /// The tracker record at the start of `recs` (more records may follow); how many longs it
    /// took.
    fn record(&self, jni: Jni, r: &mut Recording, recs: &[i64]) -> usize {
        let (w0, w1, w2) = (recs[0], recs[1], recs[2]);
        let site = (w0 as u64 >> 32) as u32;
        let summed = |site: u32| self.summary_site(jni, site);
        let monitor = w0 as u32;
        let nanos = (w1 as u64) >> Sizes::KindBits as u32;
        let kind = w1 & ((1 << Sizes::KindBits as u32) - 1);
        let stack = w2 as u32;
        let trace = self.trace_all;
        r.last_nanos = r.last_nanos.max(nanos);
        match RecordKind::from_i32(kind as i32) {
            Some(RecordKind::Hold) | Some(RecordKind::HoldWaited) => {
                let waited = kind == RecordKind::HoldWaited as i64;
                // (S_SAMPLED stays in the key: the sample's rows are apart)
                let site = summed(site);
                if w2 < 0 {
                    // minus the holds the record stands for (RecordKind::Hold)
                    r.summary
                        .untimed_hold(monitor, site, nanos, waited, w2.unsigned_abs());
                } else {
                    r.summary.hold(monitor, site, w2 as u64, nanos, waited);
                }
            }
            Some(RecordKind::LockHold) => {
                let waited = site & SiteBits::Waited as u32 != 0;
                let key = summed(site & !(SiteBits::Waited as u32));
                if w2 < 0 {
                    r.summary
                        .untimed_hold(monitor, key, nanos, waited, w2.unsigned_abs());
                } else {
                    r.summary.hold(monitor, key, w2 as u64, nanos, waited);
                }
            }
            Some(RecordKind::Notified) => {
                // Counted by the tracker at the rewriter's site (a site is always known).
                let call = if w2 & 1 != 0 {
                    WakeCall::NotifyAll
                } else {
                    WakeCall::Notify
                };
                match self.site_frame(jni, site) {
                    Some(frame) if w2 >= 2 => r.summary.notified(call, frame, (w2 >> 1) as u64),
                    _ => {}
                }
            }
            Some(RecordKind::Acquired) => {
                // A semaphore's acquisition the tracker counted (it never took AQS's slow
                // path, and was short): the Waits row the agent counts its own in.
                if let Some(frame) = self.site_frame(jni, site) {
                    let waited = w2.max(0) as u64;
                    r.summary
                        .waited_short(WaitCall::Acquire, monitor, &[frame], waited);
                }
            }
            Some(RecordKind::Released) => {
                // Releases while nobody was queued on the semaphore: they ended no wait.
                match self.site_frame(jni, site) {
                    Some(frame) if w2 >= 1 => {
                        r.summary.notified(WakeCall::Release, frame, w2 as u64)
                    }
                    _ => {}
                }
            }
            Some(RecordKind::Order) => {
                // The held monitors follow, one record each.
                let n = (w2.max(0) as usize).min(recs.len() / RECORD - 1);
                let held = recs[RECORD..RECORD * (n + 1)]
                    .chunks_exact(RECORD)
                    .map(|h| (h[0] as u32, summed((h[0] as u64 >> 32) as u32)));
                let acquired = summed(site);
                r.summary.order(monitor, acquired, held);
                r.slots.recorded += n as u64;
                if n <= Sizes::OrderHeld as usize {
                    // The tracker counts these pairs of sites' next occurrences it can.
                    for h in recs[RECORD..RECORD * (n + 1)].chunks_exact(RECORD) {
                        let held_site = (h[0] as u64 >> 32) as u32;
                        let canon = (summed(held_site), acquired);
                        r.slots.publish(&r.summary, held_site, site, canon);
                    }
                }
                return RECORD * (n + 1);
            }
            Some(RecordKind::Enter) if trace => {
                if let Some((m, st, s)) = r.trace_entering.take() {
                    // The last acquisition's entered record was lost (a StackOverflowError
                    // as the tracker was called after its monitorenter) and this one is
                    // nested in it or follows it: the tracker never throws out of the report
                    // that wrote its enter record, so its monitorenter ran, before now.
                    r.trace_held.push(TraceHeld {
                        monitor: m,
                        stack: st,
                        site: s,
                        since: nanos,
                    });
                    self.trace_line(jni, r, (nanos, EventKind::MonitorEntered, m), st, s, false);
                }
                r.trace_entering = Some((monitor, stack, site));
                self.trace_line(
                    jni,
                    r,
                    (nanos, EventKind::MonitorEnter, monitor),
                    stack,
                    site,
                    false,
                );
            }
            Some(RecordKind::Entered) if trace => {
                r.trace_entering = None;
                r.trace_held.push(TraceHeld {
                    monitor,
                    stack,
                    site,
                    since: nanos,
                });
                let line = (nanos, EventKind::MonitorEntered, monitor);
                self.trace_line(jni, r, line, stack, site, false);
            }
            Some(RecordKind::Exit) if trace => {
                if let Some((m, st, s)) = r.trace_entering.take() {
                    if m == monitor {
                        // Its entered record was lost (a StackOverflowError as the tracker was
                        // called, right after monitorenter): the tracker's enter record is
                        // its last act before monitorenter, so the release proves the
                        // acquisition.
                        r.trace_held.push(TraceHeld {
                            monitor,
                            stack: st,
                            site: s,
                            since: nanos,
                        });
                        let line = (nanos, EventKind::MonitorEntered, monitor);
                        self.trace_line(jni, r, line, st, s, false);
                    }
                }
                // The entry's stack, its top frame moved to the release.
                let entry = r
                    .trace_held
                    .iter()
                    .rposition(|e| e.monitor == monitor)
                    .map(|i| r.trace_held.remove(i));
                let Some(e) = entry else {
                    // Neither its enter nor its entered record was written (a
                    // StackOverflowError as the tracker was called, both times): the lines
                    // cannot pair this release, which is left out, as its hold is.
                    return RECORD;
                };
                if !r.trace_held.iter().any(|h| h.monitor == monitor) {
                    // Keyed as every hold summary is, by the first site ID of its place: a
                    // long hold's line noted under that key ([`Recorder::rec_long_hold`]) is
                    // then this hold's, and not counted again at a detach (a class rewritten
                    // again by a later attach has other IDs for the same places).
                    r.summary
                        .hold(monitor, summed(e.site), e.since, nanos, true);
                }
                self.trace_line(
                    jni,
                    r,
                    (nanos, EventKind::MonitorExit, monitor),
                    e.stack,
                    site,
                    true,
                );
            }
            // A torn record (read at exit while its thread was writing it), or a trace record
            // without trace=all (none is written).
            _ => {}
        }
        RECORD
    }

    /// Adds a trace line to the drain's batch. Its frames: the interned stack `stack` when
    /// there is one (its top frame moved to `site` for a release, `at_site`), else the site
    /// alone (stackdepth 1) or nothing (stackdepth 0).
    fn trace_line(
        &self,
        jni: Jni,
        r: &mut Recording,
        (nanos, kind, monitor): (u64, EventKind, u32),
        stack: u32,
        site: u32,
        at_site: bool,
    ) {
        let mut line = TraceLine {
            nanos,
            monitor,
            stack: 0,
            top: Frame::NONE,
            kind,
            has_top: false,
        };
        let i = if stack == 0 {
            usize::MAX
        } else {
            stack.wrapping_sub(r.stack_base).wrapping_sub(1) as usize
        };
        if let Some(st) = r.stacks.get(i) {
            let (drain, at) = r.stack_in_batch[i];
            line.stack = if drain == r.drains {
                at
            } else {
                r.trace_batch.stacks.push(st.clone());
                let at = r.trace_batch.stacks.len() as u32;
                r.stack_in_batch[i] = (r.drains, at);
                at
            };
            line.top = st.top;
            line.has_top = true;
            if at_site {
                if let Some(f) = self.cached_site_frame(jni, r, site) {
                    line.top = f;
                }
            }
        } else if self.stack_depth > 0 {
            if let Some(f) = self.cached_site_frame(jni, r, site) {
                line.top = f;
                line.has_top = true;
            }
        }
        r.trace_batch.lines.push(line);
    }

    /// [`Recorder::site_frame`] through the thread's cache.
    fn cached_site_frame(&self, jni: Jni, r: &mut Recording, site: u32) -> Option<Frame> {
        if r.site_frames.is_empty() {
            r.site_frames = vec![(0, Frame::NONE); SITE_CACHE].into();
        }
        let slot = &mut r.site_frames[site as usize % SITE_CACHE];
        if slot.0 == site && site != 0 {
            return Some(slot.1);
        }
        let f = self.site_frame(jni, site)?;
        *slot = (site, f);
        Some(f)
    }

    /// Writes the thread's summaries of the interval ending `now`; the tables start over.
    /// (The caller notes when: only a periodic write needs it.)
    fn write_summaries(&self, jni: Jni, r: &mut Recording, now: u64) {
        // A wait under way (a thread still waiting at exit, or summaries due as a wait
        // ends): its entry line comes first, and the wait is written in full.
        if let Some(line) = r.deferred.take() {
            self.log.push(line);
        }
        // Likewise a contention under way (a thread blocked at exit): written in full.
        if let Some(kept) = r.deferred_contention.take() {
            self.log.push(kept.line());
        }
        let (holds, edges) = r.summary.take();
        // The rows the tracker was told of are gone (the caller on the thread itself tells it).
        r.slots.clear();
        let counted = std::mem::take(&mut r.slots.in_tracker);
        let recorded = std::mem::take(&mut r.slots.recorded);
        if counted > 0 {
            self.orders_in_tracker.fetch_add(counted, Ordering::Relaxed);
        }
        if recorded > 0 {
            self.orders_recorded.fetch_add(recorded, Ordering::Relaxed);
        }
        let notifies = r.summary.take_notifies();
        let waits = r.summary.take_waits();
        let contentions = r.summary.take_contentions();
        let mut lines = Vec::with_capacity(
            holds.len() + edges.len() + notifies.len() + waits.len() + contentions.len(),
        );
        for ((mode, site, stack, object), c) in contentions {
            lines.push(EventRecord {
                nanos: now,
                kind: match mode {
                    None => EventKind::MonitorContentions,
                    Some(_) => EventKind::LockContentions,
                },
                thread: r.hash,
                object,
                owner: 0,
                extra: Extra::Holds(Box::new(HoldsLine {
                    count: c.count,
                    total: c.total,
                    max: c.max,
                    histogram: c.histogram(),
                    site,
                    mode,
                    sample: 1,
                })),
                // The contentions' stack, after the site (docs/FORMAT.md).
                frames: stack,
            });
        }
        for ((call, site, stack, object), w) in waits {
            lines.push(EventRecord {
                nanos: now,
                kind: EventKind::Waits,
                thread: r.hash,
                object,
                owner: 0,
                extra: Extra::Waits(Box::new(WaitsLine {
                    call,
                    count: w.count,
                    total: w.total,
                    max: w.max,
                    site,
                })),
                // The waits' stack, after the site (docs/FORMAT.md).
                frames: stack,
            });
        }
        for ((call, site), count) in notifies {
            lines.push(EventRecord {
                nanos: now,
                kind: EventKind::Notifies,
                thread: r.hash,
                object: 0,
                owner: 0,
                extra: Extra::Notifies(Box::new(NotifiesLine { call, count, site })),
                frames: Frames::new(),
            });
        }
        // One line per key: site IDs of one place are summed (see `summary::by_place`).
        let holds = summary::by_place(holds, |s| self.site_frame(jni, s));
        for ((monitor, site, frame), h) in holds {
            let (kind, mode) = lock_mode(site);
            // the sample's rows say of how many holds they are one
            let sample = if site & SiteBits::Sampled as u32 != 0 {
                clock::GATE_PERIOD as u64
            } else {
                1
            };
            let site = frame;
            if h.count > 0 {
                lines.push(EventRecord {
                    nanos: now,
                    kind,
                    thread: r.hash,
                    object: monitor,
                    owner: 0,
                    extra: Extra::Holds(Box::new(HoldsLine {
                        count: h.count,
                        total: h.total,
                        max: h.max,
                        histogram: h.histogram(),
                        site,
                        mode,
                        sample,
                    })),
                    frames: Frames::new(),
                });
            }
            if h.untimed > 0 {
                lines.push(EventRecord {
                    nanos: now,
                    kind: match mode {
                        None => EventKind::MonitorHoldsUntimed,
                        Some(_) => EventKind::LockHoldsUntimed,
                    },
                    thread: r.hash,
                    object: monitor,
                    owner: 0,
                    extra: Extra::Holds(Box::new(HoldsLine {
                        count: h.untimed,
                        total: 0,
                        max: 0,
                        histogram: Vec::new(),
                        site,
                        mode,
                        sample,
                    })),
                    frames: Frames::new(),
                });
            }
        }
        for (k, held_site, acquired_site, count) in
            summary::edges_by_place(edges, |s| self.site_frame(jni, s))
        {
            lines.push(EventRecord {
                nanos: now,
                kind: EventKind::LockOrder,
                thread: r.hash,
                object: 0,
                owner: 0,
                extra: Extra::Order(Box::new(OrderLine {
                    held: k.held,
                    acquired: k.acquired,
                    count,
                    guards: k.guards.as_slice().to_vec(),
                    held_site,
                    acquired_site,
                })),
                frames: Frames::new(),
            });
        }
        self.log.push_summaries(lines);
    }

    /// `OrcaProfilerTracker.stack(Rec, site)` (`trace=all`, stackdepth above 1): the current
    /// stack from the reporting frame down (below the `skip` frames of the tracker), interned;
    /// its ID (0: none).
    pub fn rec_stack(&self, jni: Jni, site: u32, skip: i32) -> i32 {
        let Some(state) = self.current_state() else {
            return 0;
        };
        let Some(recording) = state.recording.as_ref() else {
            return 0;
        };
        // The top frame is the block's own, which its site names: the walk starts below it.
        // The walk is most of a block's cost at the default depth.
        let top = match state.scratch.len() {
            0 | 1 => None,
            _ => self.site_frame(jni, site),
        };
        let (start, room) = match top {
            Some(_) => (skip + 1, state.scratch.len() - 1),
            None => (skip, state.scratch.len()),
        };
        let n = self.walk(jni, start, &mut state.scratch[..room]);
        let mut h = FastHasher::default();
        top.map(|f| (f.method, f.location)).hash(&mut h);
        for f in &state.scratch[..n] {
            // SAFETY: the walk initialised the first `n` entries.
            let f = unsafe { f.assume_init() };
            (f.method as usize, f.location).hash(&mut h);
        }
        let key = h.finish();
        // Locked only after the walk, the long part.
        let mut r = lock(recording);
        if let Some(&id) = r.stack_ids.get(&key) {
            return id as i32;
        }
        if r.stacks.len() >= MAX_STACKS {
            // Records in the buffer may name the old IDs: drain them first.
            self.drain(jni, &mut r);
            restart_stacks(&mut r);
        }
        let below = self.frames_from_scratch(jni, state, n, false);
        let frames = match top {
            Some(top) => {
                let mut frames = Frames::with_capacity(n + 1);
                frames.push(top);
                for &f in below.iter() {
                    frames.push(f);
                }
                frames
            }
            None => below,
        };
        let id = intern_stack(&mut r, Arc::new(StackText::new(&frames)));
        r.stack_ids.insert(key, id);
        id as i32
    }

    /// `site` (with its mode bits) as the summaries count it: under the first site ID of its
    /// place ([`Sites::canonical`](crate::recorder::sites::Sites::canonical)).
    fn summary_site(&self, jni: Jni, site: u32) -> u32 {
        let mask = SiteBits::Mask as u32;
        let id = self.sites.canonical(site & mask, |id| {
            self.site_frame(jni, id).map(|f| (f.method, f.location))
        });
        id | (site & !mask)
    }

    /// `OrcaProfilerTracker.longHold(Rec, site, hash, nanos, end, start)` and
    /// `lockLongHold(site, hash, nanos, end, start)`: a hold of at least `holdthreshold`,
    /// written with the current stack (below the `skip` frames of the tracker). A monitor's
    /// (`MonitorHold`) has its top frame moved to the acquisition; a j.u.c. lock's (`LockHold`,
    /// `site` with the lock's mode bits) keeps the release's stack and names the acquisition's
    /// site. The tracker measured `nanos` less its own measure of the hold's waits; the line
    /// says what the summaries (and the complete trace's events) count: the span less the
    /// waits as the agent's wait events measured them, a few microseconds apart.
    pub fn rec_long_hold(
        &self,
        jni: Jni,
        (site, object): (u32, u32),
        mut nanos: u64,
        (start, end): (u64, u64),
        skip: i32,
    ) {
        if self.stretched_by_agent(start, end) {
            // Orca's own pause made it long: its hold record counts it, as a hold
            self.long_holds_stretched.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // A guarded hold outside the sample: no hold record follows, none to count it in.
        let unsampled = site & SiteBits::Unsampled as u32 != 0;
        // reported through a guard entry point: one more frame of the tracker to skip
        let skip = skip + (site & SiteBits::Deeper as u32 != 0) as i32;
        let site = site & !(SiteBits::Unsampled as u32 | SiteBits::Deeper as u32);
        // its exit's site: written at its enter's (the rewriter's pairs)
        let site = if unsampled {
            self.sites.enter_of(site).unwrap_or(site)
        } else {
            site
        };
        // keyed as its hold record will be
        let site = self.summary_site(jni, site);
        let Some(state) = self.current_state() else {
            return;
        };
        self.before_event(jni, state, end);
        // A wait whose entry line is kept back (under way, or ended without the report that
        // decides it) comes first, as for a contention: the thread's lines stay in order (a
        // Derby soak wrote a long hold before an `ObjectWait` stamped 92 ms earlier).
        self.flush_wait(state);
        if let Some(r) = &state.recording {
            let mut r = lock(r);
            // The agent's measure of its pauses, whether the tracker saw them or not (a j.u.c.
            // await in JDK code that a recording attached later did not rewrite is seen by the
            // agent's events only).
            let span = end.saturating_sub(start);
            nanos = span.saturating_sub(r.summary.paused(object, site, start, end));
            if !unsampled {
                r.summary.long_hold(object, site, end, nanos);
            }
        }
        let Some(acquired) = self.site_frame(jni, site & SiteBits::Mask as u32) else {
            return;
        };
        let mut frames = self.stack(jni, state, skip, false);
        let (kind, extra) = match lock_mode(site).1 {
            None => {
                if let Some(top) = frames.first_mut() {
                    *top = acquired;
                }
                (EventKind::MonitorHold, Extra::Nanos(nanos))
            }
            Some(mode) => {
                let line = LockHoldLine {
                    mode,
                    nanos,
                    site: acquired,
                };
                (EventKind::LockHold, Extra::LockHold(Box::new(line)))
            }
        };
        self.log.push(EventRecord {
            nanos: end,
            kind,
            thread: state.hash,
            object,
            owner: 0,
            extra,
            frames,
        });
    }

    /// `LockHeldAtStart`: an unlock, at `nanos`, whose caller is `skip` frames down, ended a
    /// hold of `lock` in `mode` that began before the recording (no record of it: there is
    /// no start to time it from).
    pub fn rec_lock_held_at_start(&self, jni: Jni, (lock, mode): (u32, u8), nanos: u64, skip: i32) {
        let Some(state) = self.current_state() else {
            return;
        };
        self.before_event(jni, state, nanos);
        let frames = self.stack(jni, state, skip, false);
        self.log.push(EventRecord {
            nanos,
            kind: EventKind::LockHeldAtStart,
            thread: state.hash,
            object: lock,
            owner: 0,
            extra: Extra::Mode(mode),
            frames,
        });
    }

    /// A `notify`, `notifyAll` (on `object`), `signal`, `signalAll` (on condition `object`)
    /// or `unpark` (of thread `object`) (`kind`) by instrumented code, whose caller is `skip`
    /// frames down: counted per site in the thread's summaries when it can have woken no wait
    /// of `waitthreshold` ([`Waiters`](crate::recorder::waiters::Waiters)); `false` when it is
    /// to be written as an event (it may end a long wait, the complete trace, stackdepth 0, or
    /// a thread the tracker has not registered). Its site is `site`'s frame (the rewriter's
    /// static ID of the call site), found without a walk; without one (0, or unknown) a walk
    /// of one frame.
    pub fn notify_counted(
        &self,
        jni: Jni,
        state: &mut ThreadState,
        (kind, object): (EventKind, u32),
        skip: i32,
        site: u32,
    ) -> bool {
        let Some(call) = WakeCall::of(kind) else {
            return false;
        };
        if !self.count_notifies || state.scratch.is_empty() {
            return false;
        }
        let found = match call {
            WakeCall::Unpark => self.waiters.unpark(object, now_nanos()),
            WakeCall::Notify | WakeCall::Signal => self.waiters.wake(object, now_nanos(), false),
            // A release of several permits may let several acquisitions through.
            WakeCall::NotifyAll | WakeCall::SignalAll | WakeCall::Release => {
                self.waiters.wake(object, now_nanos(), true)
            }
            // A start wakes no wait: the new thread's own lines tell of it
            // (`ThreadStarted`); a thread per task writes no stack per start.
            WakeCall::Start => Found::Nobody,
        };
        if found == Found::Long {
            return false;
        }
        let Some(recording) = state.recording.clone() else {
            return false;
        };
        let frame = match (site != 0).then(|| self.site_frame(jni, site)).flatten() {
            Some(frame) => frame,
            None => {
                let n = self.walk(jni, skip, &mut state.scratch[..1]);
                let frames = self.frames_from_scratch(jni, state, n, false);
                let Some(&frame) = frames.first() else {
                    return false;
                };
                frame
            }
        };
        lock(&recording).summary.notified(call, frame, 1);
        true
    }

    /// The entry line of an outermost wait (`ObjectWait`, `ConditionAwait`, `ThreadPark`):
    /// kept back when the wait may be counted instead (`waitthreshold` above 0, a thread the
    /// tracker has registered, a stack to take the site from), else `false`: write it now.
    pub fn defer_wait(&self, state: &ThreadState, line: &JucLine, frames: &Frames) -> bool {
        if self.wait_threshold == 0 || frames.is_empty() {
            return false;
        }
        let Some(recording) = &state.recording else {
            return false;
        };
        let mut r = lock(recording);
        if r.closed {
            return false;
        }
        r.deferred = Some(line.record(frames.clone()));
        true
    }

    /// Whether [`Recorder::defer_wait`] can keep a wait's entry line back on this thread (given
    /// a stack): the threshold is above 0 and the tracker has registered the thread for a
    /// recording still open.
    pub fn may_defer_wait(&self, state: &ThreadState) -> bool {
        self.wait_threshold > 0 && state.recording.as_ref().is_some_and(|r| !lock(r).closed)
    }

    /// The one frame a wait that may be counted needs at its start, its site: the frame of
    /// the rewriter's static `site` ID, else a walk of one frame from `skip`. A semaphore's
    /// acquisition that does not wait for a permit is counted, and walking its whole stack
    /// (8 frames by default) was most of what it cost; one that waits the threshold gets the
    /// rest of its stack at its end ([`Recorder::deepen_wait`]).
    pub fn site_frames(&self, jni: Jni, state: &mut ThreadState, skip: i32, site: u32) -> Frames {
        if let Some(frame) = (site != 0).then(|| self.site_frame(jni, site)).flatten() {
            let mut frames = Frames::new();
            frames.push(frame);
            return frames;
        }
        let n = self.walk(jni, skip, &mut state.scratch[..1]);
        self.frames_from_scratch(jni, state, n, false)
    }

    /// The end of an outermost wait begun with [`Recorder::site_frames`], at `nanos`, its
    /// caller `skip` frames down: when the wait may be written (it lasted the threshold), its
    /// kept-back entry line and its exit get the stack below the site, walked now (the
    /// caller's frames are those it had when the wait began; the site stays the call's).
    /// A wait whose entry line was written early (the thread wrote another line meanwhile)
    /// keeps the one frame, in both of its lines.
    pub fn deepen_wait(&self, jni: Jni, state: &mut ThreadState, nanos: u64, skip: i32) {
        if self.stack_depth <= 1 || self.wait_threshold == 0 {
            return;
        }
        match &state.open {
            Some(open) if open.frames.len() == 1 && WaitCall::of_exit(open.kind).is_some() => {}
            _ => return,
        }
        let Some(recording) = state.recording.clone() else {
            return;
        };
        let long = lock(&recording).deferred.as_ref().is_some_and(|entry| {
            entry.frames.len() == 1 && nanos.saturating_sub(entry.nanos) >= self.wait_threshold
        });
        if !long {
            return;
        }
        let below = self.stack(jni, state, skip, false);
        let Some(open) = state.open.as_mut() else {
            return;
        };
        let mut frames = Frames::with_capacity(below.len().max(1));
        frames.push(open.frames[0]);
        below.iter().skip(1).for_each(|&f| frames.push(f));
        if let Some(entry) = lock(&recording).deferred.as_mut() {
            entry.frames = frames.clone();
        }
        open.frames = frames;
    }

    /// A `MonitorContendedEnter` line (with its stack): kept back until the thread has the
    /// monitor, when the contention may be counted instead (`contentionthreshold` above 0, a
    /// thread the tracker has registered, a stack to take the site from); else given back:
    /// write it now. `ask`: called only when the line is kept back, the question its owner
    /// will be answered by ([`OwnerQuery`]; `None`: the line's owner stands, as `ask` left
    /// it).
    pub fn defer_contention(
        &self,
        state: &ThreadState,
        mut line: EventRecord,
        ask: impl FnOnce(&mut EventRecord) -> Option<Arc<OwnerQuery>>,
    ) -> Option<EventRecord> {
        if self.contention_threshold == 0 || line.frames.is_empty() {
            return Some(line);
        }
        let Some(recording) = &state.recording else {
            return Some(line);
        };
        let mut r = lock(recording);
        if r.closed {
            return Some(line);
        }
        let owner = ask(&mut line);
        // One under way already (its Entered never came: an attach, a lost event) is
        // written as it was.
        if let Some(old) = r
            .deferred_contention
            .replace(KeptContention { line, owner })
        {
            drop(r);
            self.flush_wait(state);
            self.log.push(old.line());
        }
        None
    }

    /// Writes the thread's kept-back contention entry line now, if any (the contention is
    /// then written in full): the thread writes a line of the same call, which must come
    /// after it.
    pub fn flush_contention(&self, state: &ThreadState) {
        if let Some(recording) = &state.recording {
            if let Some(kept) = lock(recording).deferred_contention.take() {
                self.log.push(kept.line());
            }
        }
    }

    /// MonitorContendedEntered of `monitor` at `nanos`: the contention's kept-back
    /// `MonitorContendedEnter`, if any, is counted (`None`) when it waited less than
    /// `contentionthreshold` or its site's budget of written ones is spent
    /// ([`budget::take`]); else it is written now and its stack given for the
    /// `MonitorContendedEntered` line (`Some(Some(frames))`). `Some(None)`: nothing was kept
    /// back (its line is written already): the caller walks the stack.
    pub fn contention_ended(
        &self,
        state: &ThreadState,
        monitor: u32,
        nanos: u64,
    ) -> Option<Option<Frames>> {
        let Some(recording) = &state.recording else {
            return Some(None);
        };
        let mut r = lock(recording);
        // (the owner's question closed: an asker that has not asked yet will not)
        let Some(enter) = r.deferred_contention.take().map(KeptContention::line) else {
            return Some(None);
        };
        let waited = nanos.saturating_sub(enter.nanos);
        match enter.frames.first() {
            Some(&site)
                if enter.object == monitor
                    && enter.kind == EventKind::MonitorContendedEnter
                    && !r.closed
                    && (waited < self.contention_threshold || !budget::take(site, nanos)) =>
            {
                r.summary.contended(None, monitor, &enter.frames, waited);
                None
            }
            _ => {
                drop(r);
                let same =
                    enter.object == monitor && enter.kind == EventKind::MonitorContendedEnter;
                let frames = enter.frames.clone();
                // A wait under way (a timed `wait` taking its monitor back): its entry first.
                self.flush_wait(state);
                self.log.push(enter);
                Some(same.then_some(frames))
            }
        }
    }

    /// The end of a j.u.c. lock call whose `LockAcquire` may have been kept back
    /// ([`Recorder::defer_contention`]) at `nanos`: `true` when it is counted instead
    /// (`acquired`: it ended holding the lock; shorter than `contentionthreshold`, or beyond
    /// its site's budget), its lines not written; else the kept-back line, if any, is
    /// written now and the caller writes the exit line.
    pub fn lock_contention_ended(
        &self,
        state: &ThreadState,
        (lock_hash, mode): (u32, u8),
        nanos: u64,
        acquired: bool,
    ) -> bool {
        let Some(recording) = &state.recording else {
            return false;
        };
        let mut r = lock(recording);
        // (the owner's question closed: an asker that has not asked yet will not)
        let Some(enter) = r.deferred_contention.take().map(KeptContention::line) else {
            return false;
        };
        let waited = nanos.saturating_sub(enter.nanos);
        match enter.frames.first() {
            Some(&site)
                if acquired
                    && enter.kind == EventKind::LockAcquire
                    && enter.object == lock_hash
                    && !r.closed
                    && (waited < self.contention_threshold || !budget::take(site, nanos)) =>
            {
                r.summary
                    .contended(Some(mode), lock_hash, &enter.frames, waited);
                true
            }
            _ => {
                drop(r);
                self.log.push(enter);
                false
            }
        }
    }

    /// A contended j.u.c. acquisition of `lock` in `mode` at `stack` (its first frame is the
    /// site) that took the lock after waiting `waited` ns: `true` when it is counted (shorter
    /// than `contentionthreshold`, or long beyond its site's budget), its lines not written.
    pub fn juc_contention_counted(
        &self,
        state: &ThreadState,
        (lock_hash, mode): (u32, u8),
        stack: &[Frame],
        (waited, nanos): (u64, u64),
    ) -> bool {
        let Some(&site) = stack.first() else {
            return false;
        };
        if self.contention_threshold == 0 {
            return false;
        }
        let Some(recording) = &state.recording else {
            return false;
        };
        let mut r = lock(recording);
        if r.closed || (waited >= self.contention_threshold && budget::take(site, nanos)) {
            return false;
        }
        r.summary.contended(Some(mode), lock_hash, stack, waited);
        true
    }

    /// Writes the thread's kept-back wait entry now (its wait is then written in full): the
    /// thread writes another line during the wait (a contention as `wait` takes the monitor
    /// back), and its lines must stay in time order.
    /// The wait is then an old waiter in the table of waiters ([`Waiters::written_early`]),
    /// so that the call that wakes it is written too: a wait written in full has its waker.
    ///
    /// [`Waiters::written_early`]: crate::recorder::waiters::Waiters::written_early
    pub fn flush_wait(&self, state: &ThreadState) {
        if let Some(recording) = &state.recording {
            if let Some(line) = lock(recording).deferred.take() {
                if matches!(
                    line.kind,
                    EventKind::ObjectWait | EventKind::ConditionAwait | EventKind::SemaphoreAcquire
                ) {
                    self.waiters.written_early(line.object, state.wait_epoch);
                }
                self.log.push(line);
            }
        }
    }

    /// The thread begins something during its wait whose line may be written before the wait
    /// ends (a contention, whose line is kept back until it is known to have lasted): the
    /// wait counts as an old waiter from now on ([`Waiters::written_early`]), so that a call
    /// that wakes it meanwhile is written, and the wait, if its entry line has to be written
    /// early, has its waker in the log. (Marking it only when its line is written was too
    /// late: ProdCons's first awaits, blocked on a class initialisation, were signalled by a
    /// counted call meanwhile, and written with no waker.)
    ///
    /// [`Waiters::written_early`]: crate::recorder::waiters::Waiters::written_early
    pub fn wait_may_be_written(&self, state: &ThreadState) {
        if let Some(recording) = &state.recording {
            if let Some(line) = lock(recording).deferred.as_ref() {
                if matches!(
                    line.kind,
                    EventKind::ObjectWait | EventKind::ConditionAwait | EventKind::SemaphoreAcquire
                ) {
                    self.waiters.written_early(line.object, state.wait_epoch);
                }
            }
        }
    }

    /// The outermost wait `call` whose exit line is `open`'s ended at `nanos`, having left the
    /// table of waiters as `left`: `true` when it is counted (no line): it was shorter than
    /// `waitthreshold`, or long and woken by a call the agent counted (over its object's
    /// budget, or one that found only shorter waits: the wait became long as it took its
    /// monitor or lock back), or long, woken by no call the agent wrote and over the budget
    /// ([`WRITTEN_PER_SECOND`](crate::recorder::waiters::WRITTEN_PER_SECOND)). Else its
    /// kept-back entry line, if any, is written and the caller writes the exit line.
    pub fn wait_ended(
        &self,
        state: &ThreadState,
        call: WaitCall,
        open: &OpenCall,
        (nanos, left): (u64, Left),
    ) -> bool {
        let Some(recording) = &state.recording else {
            return false;
        };
        let mut r = lock(recording);
        let Some(entry) = r.deferred.take() else {
            return false;
        };
        let waited = nanos.saturating_sub(entry.nanos);
        // An await's row is its lock's (the synchronizer, as the report and the lock-order
        // graph know locks), not its condition's.
        let object = match (call, open.extra) {
            (WaitCall::Await, OpenExtra::Lock(lock)) => lock,
            _ => open.object,
        };
        let counted = waited < self.wait_threshold
            || match left {
                Left::Woken => false,
                Left::Counted => true,
                Left::Other => !self.waiters.take_budget(open.object, nanos),
            };
        match open.frames.first() {
            Some(_) if counted && !r.closed => {
                r.summary.waited_short(call, object, &open.frames, waited);
                true
            }
            _ => {
                drop(r);
                self.log.push(entry);
                false
            }
        }
    }

    /// Object.wait on a monitor the thread holds pauses its hold (as the report counts it);
    /// so does Condition.await on a j.u.c. lock (`juc`, `object` the lock).
    pub fn summary_wait(
        &self,
        state: &ThreadState,
        (object, juc): (u32, bool),
        nanos: u64,
        waited: bool,
    ) {
        if let Some(r) = &state.recording {
            let mut r = lock(r);
            if !juc && self.trace_all && !r.trace_held.iter().any(|h| h.monitor == object) {
                return; // not held: the wait throws, it pauses no hold
            }
            if waited {
                r.summary.waited(object, juc, nanos);
            } else {
                r.summary.wait(object, juc, nanos);
            }
        }
    }

    /// ThreadEnd: the thread's last records and summaries, before its `ThreadEnded`.
    pub fn recording_end(&self, jni: Jni, state: &mut ThreadState) {
        let Some(recording) = state.recording.take() else {
            return;
        };
        self.buffers
            .holders
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(Arc::as_ptr(&recording) as usize));
        {
            let mut r = lock(&recording);
            // After the exit drain, this only counts the records since as late.
            self.drain(jni, &mut r);
            if !r.closed {
                self.write_summaries(jni, &mut r, now_nanos());
                r.closed = true;
            }
            jni.delete_global_ref(r.rec.0);
            r.rec = RecRef(std::ptr::null_mut());
        }
        self.buffers
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(Arc::as_ptr(&recording) as usize));
    }

    /// VMDeath: every thread still running is drained from here, its summaries written last.
    pub fn drain_all(&self, jni: Jni) {
        let all: Vec<_> = self
            .buffers
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for recording in all {
            let mut r = lock(&recording);
            if r.closed || r.rec.0.is_null() {
                continue;
            }
            self.drain_at_exit(jni, &mut r);
            r.summary.count_written_long_holds();
            // The thread may have recorded past `now` before it was drained.
            let at = now_nanos().max(r.last_nanos);
            self.write_summaries(jni, &mut r, at);
            r.closed = true;
        }
    }

    /// The exit drain of a thread that may still be running and writing its buffer: the
    /// records below the position it has published are complete, the one it may be
    /// writing is above it. Neither the position nor the array is touched (the owner
    /// writes the position back from its own copy, and would write into a replaced array):
    /// `exit_taken` tells its next drain what was read here.
    fn drain_at_exit(&self, jni: Jni, r: &mut Recording) {
        let Some(f) = self.buffers.fields.get() else {
            return;
        };
        let rec = r.rec.0;
        self.fold_slots(jni, f, r, false);
        self.fold_quiet(jni, f, r, false);
        let pos = jni.int_field(rec, f.pos).max(0) as usize;
        // Paired with the owner's release store of `pos` (the tracker's setPos): the records
        // below it are read complete.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let buf = jni.object_field(rec, f.buf);
        if pos == 0 || buf.is_null() {
            return;
        }
        let n = pos.min(jni.array_length(buf)) / RECORD * RECORD;
        let mut scratch = std::mem::take(&mut r.scratch);
        scratch.resize(n, 0);
        let ok = jni.long_array_region(buf, &mut scratch);
        jni.delete_local_ref(buf);
        if ok {
            r.exit_taken = n;
            self.records(jni, r, &scratch[..n]);
        }
        r.scratch = scratch;
    }

    /// At exit, after the last write: counts as late the records threads still running
    /// have put in their buffers since the exit drain, so that the exit line's count has
    /// them (those put after it is printed cannot be).
    pub fn count_buffered_late(&self, jni: Jni) {
        let Some(f) = self.buffers.fields.get() else {
            return;
        };
        let all: Vec<_> = self
            .buffers
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for recording in all {
            // A thread draining right now counts its own.
            let Ok(r) = recording.try_lock() else {
                continue;
            };
            if !r.closed || r.rec.0.is_null() {
                continue;
            }
            let pos = jni.int_field(r.rec.0, f.pos).max(0) as usize;
            let n = pos.saturating_sub(r.exit_taken) / RECORD;
            self.log.count_late(n as u64);
        }
    }

    /// The thread that holds `monitor` as another thread blocks on it at `now`, from the
    /// tracker's own record of holds (exact, and no safepoint): the thread whose held stack
    /// has it, or else the thread whose hold of it ended last, provided that hold began by
    /// `now` and ended at most [`RELEASED_WINDOW`] before it. Why the second: the owner
    /// usually releases within microseconds of the JVM seeing the contention, before this
    /// callback runs; the JVM, asked then (a safepoint that stops every thread), answered
    /// "nobody" for most contentions of a busy server. `None` when no instrumented code held
    /// it then: the caller asks the JVM.
    pub fn tracked_owner(&self, jni: Jni, monitor: u32, me: u32, now: u64) -> Option<u32> {
        let f: &RecFields = self.buffers.fields.get()?;
        let all = self
            .buffers
            .holders
            .read()
            .unwrap_or_else(|e| e.into_inner());
        // (whether the hold surely began first, its end; its thread)
        let mut last: Option<((bool, u64), u32)> = None;
        for &(thread, RecRef(rec)) in all.values() {
            if thread == me || rec.is_null() {
                continue;
            }
            if holds(jni, f, rec, monitor) {
                return Some(thread);
            }
            if let Some(key) = released(jni, f, rec, monitor, now) {
                if last.is_none_or(|(k, _)| key > k) {
                    last = Some((key, thread));
                }
            }
        }
        last.map(|(_, thread)| thread)
    }
}

/// How long before a contention was seen a release of the monitor by instrumented code may
/// have ended for its thread to count as the owner. The contending thread reads the clock when
/// its JVMTI callback runs, after the JVM gave up spinning; on a loaded machine it may be
/// preempted in between, and a release a few milliseconds old is still the one it waited for
/// far more often than a hold by code that was not instrumented.
const RELEASED_WINDOW: u64 = 10_000_000;

/// How long after a contention was seen the hold it waited for may have been stamped as
/// begun (the tracker reads the clock after `monitorenter`; the contending thread's callback
/// may read it first).
const STARTED_SLACK: u64 = 1_000_000;

/// Whether the tracker's held stack of `rec` has `monitor` (the low half of each entry's
/// first word in `Rec.held`).
fn holds(jni: Jni, f: &RecFields, rec: jobject, monitor: u32) -> bool {
    const WORDS: usize = HELD_WORDS;
    let depth = jni.int_field(rec, f.depth).clamp(0, 64) as usize;
    if depth == 0 {
        return false;
    }
    let arr = jni.object_field(rec, f.held);
    if arr.is_null() {
        return false;
    }
    let mut held = [0i64; 64 * WORDS];
    let n = (depth * WORDS).min(jni.array_length(arr));
    let found = jni.long_array_region(arr, &mut held[..n])
        && held[..n]
            .iter()
            .step_by(WORDS)
            .any(|&w| w as u32 == monitor);
    jni.delete_local_ref(arr);
    found
}

/// The last hold of `monitor` that `rec`'s thread released and that could be the one a
/// thread blocking at `now` waited for (see [`Recorder::tracked_owner`]): whether it surely
/// began before `now`, and its end.
fn released(jni: Jni, f: &RecFields, rec: jobject, monitor: u32, now: u64) -> Option<(bool, u64)> {
    const RING: usize = Sizes::Released as usize;
    let mut hashes = [0i32; RING];
    let mut starts = [0i64; RING];
    let mut ends = [0i64; RING];
    let read = |field, fill: &mut dyn FnMut(jobject) -> bool| {
        let arr = jni.object_field(rec, field);
        if arr.is_null() {
            return false;
        }
        let ok = fill(arr);
        jni.delete_local_ref(arr);
        ok
    };
    // The hashes first: a contention with thousands of (virtual) threads reads the times of
    // only those that released this monitor lately.
    let mentioned = read(f.rel_hash, &mut |a| {
        jni.int_array_length(a) >= RING && jni.int_array_region(a, &mut hashes)
    }) && hashes.iter().any(|&h| h as u32 == monitor);
    if !mentioned {
        return None;
    }
    let ok = read(f.rel_start, &mut |a| {
        jni.array_length(a) >= RING && jni.long_array_region(a, &mut starts)
    }) && read(f.rel_end, &mut |a| {
        jni.array_length(a) >= RING && jni.long_array_region(a, &mut ends)
    });
    if !ok {
        return None;
    }
    // A hold's start is read after the monitor was taken: one that the contending thread
    // waited for may have started a little after that thread read its clock. Holds that
    // surely began before are preferred.
    (0..RING)
        .filter(|&k| hashes[k] as u32 == monitor && starts[k] > 0)
        .map(|k| (starts[k] as u64, ends[k] as u64))
        .filter(|&(start, end)| {
            start <= now + STARTED_SLACK && end.saturating_add(RELEASED_WINDOW) >= now
        })
        .map(|(start, end)| (start <= now, end))
        .max()
}
