//! The bundled tracker class: compiled as `orca.OrcaProfilerTracker`, embedded at build time
//! as `java.lang.OrcaProfilerTracker` (see [`CLASS_NAME`]) with the classes of its per-thread
//! record ([`CLASSES`]), defined in the bootstrap class loader at VMInit; its static
//! initializer binds its natives, through the one the agent exports by its JNI name (`bind`,
//! in the entry module).
//!
//! Rewritten code calls the tracker's public static methods; they do the real work in Java
//! (so blocking happens in Java) and report through `event(int kind, Object subject)`, whose
//! kinds are the [`ReportCode`]s, or, for monitors, into a per-thread buffer the recorder
//! drains ([`crate::recorder::buffers`]). The natives themselves are `extern` functions of
//! the entry module, registered by `bind`; what they report lands here, in safe Rust.

use std::ffi::CStr;
use std::sync::OnceLock;

use jni_sys::{jclass, jobject};

use super::methods::{self, Call, Outcome};
use crate::events::ReportCode;
use crate::jvmti::Jni;
use crate::recorder::buffers::RecFields;
use crate::recorder::clock::{now_nanos, STALE, TICK_NANOS, TICK_RING, USED_OFFSET};
use crate::recorder::names;
use crate::recorder::threads::{OpenCall, OpenExtra, ThreadState};
use crate::recorder::waiters::WaiterTable;
use crate::recorder::writer::Frames;
use crate::recorder::{JucLine, Recorder};
use orca_format::EventKind;

/// The tracker's class file, compiled from `java-tracker/` by `build.rs`.
pub static CLASS_BYTES: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/java/lang/OrcaProfilerTracker.class"
));

/// Every class of the tracker (the tracker, its per-thread record `OrcaRec` and the classes
/// of that record's parts: java-tracker/orca/), in the order they are defined: each
/// superclass before its subclasses (the boot loader resolves a class's superclass when it is
/// defined, and finds no class of the tracker by itself), the tracker last. Listed by
/// build.rs, from every class javac made.
mod classes {
    include!(concat!(env!("OUT_DIR"), "/tracker_classes.rs"));
}
pub use classes::CLASSES;

/// The per-thread record's class, which the natives name and whose fields the agent reads.
const REC_NAME: &CStr = c"java/lang/OrcaRec";

/// Its internal name, also given to the rewriter. The source is in package `orca`; build.rs
/// moves the class files to `java.lang`, where every class of every loader and module can
/// reach it (OSGi bundles, module layers created at run time: see `PACKAGE` there).
pub const CLASS_NAME: &str = "java/lang/OrcaProfilerTracker";
/// How many frames the tracker puts above the instrumented code when its native runs:
/// `event` (native), `report`, and the public wrapper.
pub const TRACKER_FRAMES: i32 = 3;
/// Frames above the caller of a hooked JDK method when `hookEnter` runs: the native, the
/// tracker's `methodEntry`, the hooked method.
pub const HOOK_FRAMES: i32 = 3;
/// Frames above the caller of a hooked lock method when a native runs at its outermost call's
/// start (`lockEnter`, `callerSite`): the native, the tracker's `lockBegin` and `lockEntry`
/// (whose inline part handles a call nested in another), the hooked method.
pub const LOCK_ENTRY_FRAMES: i32 = 4;
/// Frames above the caller of a hooked lock method when a native runs at its end: the
/// native, the tracker's `lockDone` and `lockExit`/`lockExitZ`/`lockThrew`, the hooked method.
pub const LOCK_EXIT_FRAMES: i32 = 4;
/// Frames above the caller of a tracked native when `callEnter` runs: the native and the
/// tracker's `callEntry`.
pub const CALL_FRAMES: i32 = 2;
/// Frames the tracker puts above the rewritten method when one of its natives that take a
/// stack (`stack`, `longHold`) runs from a monitor report with a site: the native, the
/// report's out-of-line part that calls it (always one: the JIT inlines only the reports'
/// common paths into each site), and the report.
const SITE_FRAMES: i32 = 3;

/// What a tracker report means, decoded from the `K_*` constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// A monitor event (`MonitorEnter`, `MonitorEntered`, `MonitorExit`).
    Monitor(EventKind),
    /// The start of a blocking call: the entry event, and the exit event to write later.
    Begin(EventKind, EventKind),
    /// The end of a blocking call.
    End,
    /// A call without an end event (`notify`, `start`, `release`).
    Point(EventKind),
}

impl Report {
    /// Decodes a [`ReportCode`]; `None` for a number this agent does not know.
    pub fn decode(kind: i32) -> Option<Report> {
        use ReportCode as C;
        Some(match ReportCode::from_i32(kind)? {
            C::MonitorEnter => Report::Monitor(EventKind::MonitorEnter),
            C::MonitorEntered => Report::Monitor(EventKind::MonitorEntered),
            C::MonitorExit => Report::Monitor(EventKind::MonitorExit),
            C::ObjectWait => Report::Begin(EventKind::ObjectWait, EventKind::ObjectWaited),
            C::ObjectWaited
            | C::ThreadJoined
            | C::ThreadSlept
            | C::SemaphoreAcquired
            | C::SemaphoreAcquireFailed => Report::End,
            C::ObjectNotify => Report::Point(EventKind::ObjectNotify),
            C::ObjectNotifyAll => Report::Point(EventKind::ObjectNotifyAll),
            C::ThreadStart => Report::Point(EventKind::ThreadStart),
            C::ThreadJoin => Report::Begin(EventKind::ThreadJoin, EventKind::ThreadJoined),
            C::ThreadSleep => Report::Begin(EventKind::ThreadSleep, EventKind::ThreadSlept),
            C::SemaphoreAcquire => {
                Report::Begin(EventKind::SemaphoreAcquire, EventKind::SemaphoreAcquired)
            }
            C::SemaphoreRelease => Report::Point(EventKind::SemaphoreRelease),
        })
    }
}

/// How the tracker records monitors: set in its static fields before it is switched on.
pub struct TrackerSettings {
    pub trace_all: bool,
    pub deep_stacks: bool,
    pub hold_threshold: Option<u64>,
    /// `holdtiming=sampled`: the coarse clock's address ([`crate::recorder::clock::Ticker`]),
    /// or `None` to time every hold.
    pub coarse_clock: Option<u64>,
    /// `tracking=sampled`, in effect only with `coarse_clock` (its windows are the coarse
    /// clock's): holds outside the thread's sample are left unidentified (the tracker's
    /// `sampleTracking`).
    pub sample_tracking: bool,
    /// The recording's number in this JVM (0 at start-up, then one more per attach).
    pub session: i32,
    /// `notifies=counted` with stacks: the agent's table of waiters, which the tracker reads
    /// to count a `notify` that wakes nobody itself, without a call into the agent (two JNI
    /// calls inside the program's critical section: 180 ns, more than doubling Derby's
    /// hottest page latch). `None`: every notify is reported to the agent.
    pub waiters: Option<WaiterTable>,
    /// `waitthreshold` when the tracker counts a `Semaphore` acquisition that never takes
    /// AQS's slow path and a release while nobody is queued itself, in the thread's buffer
    /// ([`sem_enter`]; docs/FORMAT.md, `Waits`): counted waits and notifies (`waiters`), a
    /// threshold above 0, and AQS's slow path hooked (`juc=yes`), which tells the tracker
    /// that an acquisition may block. `None`: every call is reported to the agent.
    pub semaphores: Option<u64>,
}

/// The shortest `holdthreshold` sampled timing works with: below it every hold is timed.
/// Why: a hold not timed is found long by the coarse clock, which lags real time by up to a
/// tick ([`TICK_NANOS`]) plus however late its thread runs; a hold is read precisely once the
/// coarse clock says it has lasted half the threshold, so a tick of 1 ms leaves a margin of
/// at least 2 ms for the ticker's lateness.
pub const MIN_SAMPLED_THRESHOLD: u64 = 4 * TICK_NANOS;

/// The tracker's `holdNear` without a `holdthreshold`: no length a hold can have, but less than
/// [`STALE`] less any coarse start, so that a hold that ends while the clock is stale still
/// gets a precise end (and one that ends while it ticks does not).
const NEAR_STALE: i64 = (STALE / 2) as i64;

// The tracker finds `Coarse::used` after the clock's word and its ring
// (`OrcaEvents.CLOCK_USED`, generated from the same constant clock.rs checks).
const _: () = assert!(USED_OFFSET == 8 + 8 * TICK_RING);

impl TrackerSettings {
    /// Whether holds may go untimed with these options: `holdtiming=sampled`, not
    /// `trace=all` (a complete trace times every event), and a threshold the coarse clock
    /// can find ([`MIN_SAMPLED_THRESHOLD`], or none).
    pub fn sampling(sampled: bool, trace_all: bool, hold_threshold: Option<u64>) -> bool {
        sampled && !trace_all && hold_threshold.is_none_or(|t| t >= MIN_SAMPLED_THRESHOLD)
    }
}

/// Nanoseconds as a Java `long`, the largest one for a duration beyond it (a threshold the
/// user set to "never").
fn jlong(nanos: u64) -> i64 {
    nanos.min(i64::MAX as u64) as i64
}

/// Why the tracker could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    #[error("cannot define class {CLASS_NAME} in the bootstrap class loader")]
    Define,
    #[error("cannot find the fields of {CLASS_NAME} the agent sets")]
    Field,
    #[error("cannot bind the native methods of {CLASS_NAME} (liborca.so must export Java_java_lang_OrcaProfilerTracker_bind: is it stripped of its dynamic symbols?)")]
    Bind,
}

/// Defines the tracker in the bootstrap loader, initializes it (its static initializer binds
/// its natives: see `bind` in the entry module) and learns the fields of its buffers (into
/// `fields`). Being in `java.base`, it needs no module reads edges: every module reads
/// java.base, rewritten JDK code included.
///
/// `session` numbers the recording in this JVM (0 at start-up, then one per attach): the
/// tracker is defined once, and a later attach finds it defined and bound, and only sets
/// its fields; records of an earlier recording's threads are then left alone.
pub fn install(
    jni: Jni,
    settings: &TrackerSettings,
    fields: &OnceLock<RecFields>,
    session: i32,
) -> Result<(), TrackerError> {
    let class = define_classes(jni)?;
    let rec = jni.find_class(REC_NAME).ok_or(TrackerError::Define)?;
    let field = |c, n: &CStr, s: &CStr, st| jni.field_id(c, n, s, st).ok_or(TrackerError::Field);
    // The first static field looked up initializes the class: the natives are bound now.
    let bound = field(class, c"bound", c"Z", true)?;
    if !jni.get_static_boolean(class, bound) {
        return Err(TrackerError::Bind);
    }
    let _ = fields.set(RecFields {
        buf: field(rec, c"buf", c"[J", false)?,
        pos: field(rec, c"pos", c"I", false)?,
        depth: field(rec, c"depth", c"I", false)?,
        held: field(rec, c"held", c"[J", false)?,
        rel_hash: field(rec, c"relHash", c"[I", false)?,
        rel_start: field(rec, c"relStart", c"[J", false)?,
        rel_end: field(rec, c"relEnd", c"[J", false)?,
        ord_keys: field(rec, c"ordKeys", c"[I", false)?,
        ord_mask: field(rec, c"ordMask", c"I", false)?,
        ord_pending: field(rec, c"ordPending", c"I", false)?,
        quiet: field(rec, c"quiet", c"[I", false)?,
    });
    // The tracker's settings, its static fields (`field` fails with TrackerError::Field).
    let set_long = |n: &CStr, v: i64| {
        jni.set_static_long(class, field(class, n, c"J", true)?, v);
        Ok::<(), TrackerError>(())
    };
    let set_int = |n: &CStr, v: i32| {
        jni.set_static_int(class, field(class, n, c"I", true)?, v);
        Ok::<(), TrackerError>(())
    };
    let set_bool = |n: &CStr, v: bool| {
        jni.set_static_boolean(class, field(class, n, c"Z", true)?, v);
        Ok::<(), TrackerError>(())
    };
    set_bool(c"traceAll", settings.trace_all)?;
    set_bool(c"deepStacks", settings.deep_stacks)?;
    set_long(c"holdThreshold", settings.hold_threshold.map_or(-1, jlong))?;
    if settings.coarse_clock.is_some() {
        // A hold the coarse clock says lasted half the threshold gets a precise end; without
        // a threshold, one whose end the clock cannot tell (it was stale: clock::STALE).
        let near = settings
            .hold_threshold
            .map_or(NEAR_STALE, |t| jlong(t - t / 2));
        set_long(c"holdNear", near)?;
        let caught = settings
            .hold_threshold
            .map_or(-1, |t| jlong(t.saturating_sub(TICK_NANOS)));
        set_long(c"holdCaught", caught)?;
    }
    // A guarded hold outside the sample whose exit finds it this many KEPT_SHIFT units long
    // (half the threshold, as holdNear) is timed at its end, out of line.
    let guard_long = match (settings.coarse_clock, settings.hold_threshold) {
        (Some(_), Some(t)) => ((t - t / 2) >> crate::events::KEPT_SHIFT).min(i32::MAX as u64),
        _ => i32::MAX as u64,
    };
    set_int(c"guardLong", guard_long as i32)?;
    // Set by every recording, to 0 when every hold is timed: a recording after a detach
    // (another attach) finds the tracker as the last one left it.
    set_long(c"coarseClock", settings.coarse_clock.unwrap_or(0) as i64)?;
    set_bool(
        c"sampleTracking",
        settings.sample_tracking && settings.coarse_clock.is_some(),
    )?;
    // Set by every recording, as the coarse clock is (0: every notify is reported).
    let table = settings.waiters.unwrap_or(WaiterTable {
        slots: 0,
        mask: 0,
        busy: 0,
    });
    set_long(c"waiterSlots", table.slots as i64)?;
    set_int(c"waiterMask", table.mask as i32)?;
    set_long(c"waiterBusy", table.busy as i64)?;
    // Set by every recording, as the table of waiters is (-1: every call is reported).
    set_long(c"semThreshold", settings.semaphores.map_or(-1, jlong))?;
    set_int(c"session", session)?;
    // Last: the tracker starts recording (a volatile write after the settings).
    set_bool(c"ready", true)?;
    jni.delete_local_ref(rec);
    jni.delete_local_ref(class);
    Ok(())
}

/// An attach: defines the tracker (once per JVM) and binds its natives, retrying for up to
/// `wait`. Why: its static initializer's `bind` is found by its JNI name among the agent
/// libraries, and HotSpot lists a library loaded by an attach only once its
/// `Agent_OnAttach` has returned; this runs on a thread of the agent's after that, and
/// calls `bind` again (through the tracker's `rebind`) until the JVM finds it (a failed
/// lookup is not remembered). The natives are then registered from a native of the tracker
/// called by the tracker, as at start-up, so the JVM prints no warning on the program's
/// output.
pub fn bind_attached(jni: Jni, wait: std::time::Duration) -> Result<(), TrackerError> {
    let class = define_classes(jni)?;
    let bound_field = jni
        .field_id(class, c"bound", c"Z", true)
        .ok_or(TrackerError::Field)?;
    let start = std::time::Instant::now();
    let mut bound = jni.get_static_boolean(class, bound_field);
    while !bound {
        bound = jni.call_static_boolean(class, c"rebind") == Some(true);
        if !bound && start.elapsed() >= wait {
            break;
        } else {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    jni.delete_local_ref(class);
    if bound {
        Ok(())
    } else {
        Err(TrackerError::Bind)
    }
}

/// Defines every class of the tracker ([`CLASSES`]) in the bootstrap loader, in order, unless
/// defined already (an earlier recording's, or the attach's [`bind_attached`]); the tracker
/// class (a local reference), not yet initialized. All are defined before the tracker is
/// initialized (its first static field looked up, or `rebind` called), at start-up and at an
/// attach alike: the tracker's code names the others, which the boot loader cannot find by
/// itself (they are not on its path), and `-Xverify:all` verifies it against them.
fn define_classes(jni: Jni) -> Result<jclass, TrackerError> {
    let mut tracker = None;
    for &(name, bytes) in CLASSES {
        let class = jni
            .define_boot_class(name, bytes)
            .or_else(|| jni.find_class(name))
            .ok_or(TrackerError::Define)?;
        if name.to_bytes() == CLASS_NAME.as_bytes() {
            tracker = Some(class);
        } else {
            jni.delete_local_ref(class);
        }
    }
    tracker.ok_or(TrackerError::Define)
}

/// A detach: the tracker stops recording. Rewritten code still running (a method entered
/// before its class was restored) finds `ready` false and returns at once, and no thread
/// uses its record of this recording again.
pub fn uninstall(jni: Jni) {
    let Some(class) = jni.find_class(c"java/lang/OrcaProfilerTracker") else {
        return;
    };
    if let Some(ready) = jni.field_id(class, c"ready", c"Z", true) {
        jni.set_static_boolean(class, ready, false);
    }
    jni.delete_local_ref(class);
}

/// `OrcaProfilerTracker.event(kind, subject)`: one report from rewritten code.
pub fn event(rec: &Recorder, jni: Jni, kind: i32, subject: jobject) {
    let nanos = now_nanos();
    let Some(report) = Report::decode(kind) else {
        return;
    };
    let Some(state) = rec.current_state() else {
        return;
    };
    // With trace=all the thread's buffered monitor records come first in its lines.
    if state.recording.is_some() {
        rec.before_event(jni, state, nanos);
    }
    close_inline(rec, state, nanos);
    let hash = |o: jobject| {
        if o.is_null() {
            0
        } else {
            rec.jvmti.object_hash(o).unwrap_or(0)
        }
    };
    match report {
        // `synchronized (null)`: monitorenter throws NullPointerException, nothing is entered.
        Report::Monitor(EventKind::MonitorEnter) if subject.is_null() => {}
        Report::Monitor(EventKind::MonitorEnter) => {
            let monitor = hash(subject);
            let frames = rec.stack(jni, state, TRACKER_FRAMES, false);
            state.pending_enter = Some((monitor, frames.clone()));
            rec.push(nanos, EventKind::MonitorEnter, state.hash, monitor, frames);
        }
        Report::Monitor(EventKind::MonitorEntered) => {
            // Right after its MonitorEnter, at the same call site: reuse its hash (the
            // object is locked now, hashing it would inflate its monitor) and its stack.
            let (monitor, frames) = match state.pending_enter.take() {
                Some(pending) => pending,
                None => (hash(subject), rec.stack(jni, state, TRACKER_FRAMES, false)),
            };
            state.held.push((monitor, frames.clone()));
            rec.push(
                nanos,
                EventKind::MonitorEntered,
                state.hash,
                monitor,
                frames,
            );
        }
        Report::Monitor(kind) => {
            state.pending_enter = None;
            // The object was hashed before it was locked (or at its MonitorEntered), so
            // hashing it again reads the hash without inflating anything. It finds the
            // entry this exit closes even when an earlier report was lost (a
            // StackOverflowError inside the tracker): entries above it are exits that
            // were never reported, and are dropped.
            let monitor = hash(subject);
            let (monitor, frames) = match state.take_held(monitor) {
                Some(frames) => (
                    monitor,
                    moved_top(rec, jni, frames)
                        .unwrap_or_else(|| rec.stack(jni, state, TRACKER_FRAMES, false)),
                ),
                None => (monitor, rec.stack(jni, state, TRACKER_FRAMES, false)),
            };
            rec.push(nanos, kind, state.hash, monitor, frames);
        }
        Report::Begin(entry, exit) => {
            state.depth += 1;
            if state.depth > 1 {
                return;
            }
            let object = hash(subject);
            open_call(
                rec,
                jni,
                state,
                (entry, Some(exit)),
                object,
                nanos,
                (TRACKER_FRAMES, 0),
            );
        }
        Report::End => {
            if state.depth == 1 {
                // The wrapper's frame is still there, as at its begin report.
                rec.deepen_wait(jni, state, nanos, TRACKER_FRAMES);
                if let Some(open) = &state.open {
                    if let Some(key) = paused(open) {
                        rec.summary_wait(state, key, nanos, true);
                    }
                }
            }
            rec.end_call(nanos, state)
        }
        Report::Point(kind) => {
            if state.depth == 0 {
                let object = hash(subject);
                if rec.notify_counted(jni, state, (kind, object), TRACKER_FRAMES, 0) {
                    return;
                }
                let frames = rec.stack(jni, state, TRACKER_FRAMES, false);
                rec.push(nanos, kind, state.hash, object, frames);
            }
        }
    }
}

/// `OrcaProfilerTracker.hookEnter(kind, subject)`: a hooked JDK method begins. As JVMTI
/// mode's MethodEntry (`methods.rs`): every hooked call counts in the thread's nesting depth,
/// only the outermost is written, and its caller is the top frame (the native, the tracker's
/// `methodEntry` and the hooked method itself are skipped).
pub fn hook_enter(rec: &Recorder, jni: Jni, kind: i32, subject: jobject) {
    begin_call(rec, jni, (kind, subject), (HOOK_FRAMES, 0), false, None);
}

/// `OrcaProfilerTracker.hookEnterAt(kind, subject, site)`: [`hook_enter`] from a rewritten
/// call site that named itself (`site`, the rewriter's static ID): a `Condition.signal` that
/// is only counted needs no walk for its site.
pub fn hook_enter_at(rec: &Recorder, jni: Jni, (kind, subject): (i32, jobject), site: u32) {
    begin_call(rec, jni, (kind, subject), (HOOK_FRAMES, site), false, None);
}

/// `OrcaProfilerTracker.semEnter(kind, sem, site, since)`: a hooked `Semaphore` call at
/// `site` begins for the agent, at `since` (the tracker's clock, the same as the agent's; 0:
/// now), as [`hook_enter`] would have it, and ends at its `hookExit`. The tracker counts the
/// calls the agent would only count itself (docs/FORMAT.md, `Waits`): it tells the agent of
/// an acquisition only when it enters AQS's slow path (it may block), before its thread is
/// queued, so that a release that sees it queued finds it in the table of waiters, or when it
/// lasted the threshold all the same; and of a release only when threads are queued on the
/// semaphore. Why: a call into the agent at each acquisition's start and end, and at each
/// release, was most of what they cost.
pub fn sem_enter(rec: &Recorder, jni: Jni, (kind, sem): (i32, jobject), site: u32, since: u64) {
    let at = (since > 0).then_some(since);
    begin_call(rec, jni, (kind, sem), (HOOK_FRAMES, site), false, at);
}

/// `OrcaProfilerTracker.callEnter(kind, subject, site)`: a tracked native is called from an
/// inline call site; its caller is the top frame (the native and `callEntry` skipped), at
/// `site` when the rewriter gave the call site an ID (else 0).
pub fn call_enter(rec: &Recorder, jni: Jni, (kind, subject): (i32, jobject), site: u32) {
    begin_call(rec, jni, (kind, subject), (CALL_FRAMES, site), true, None);
}

/// `OrcaProfilerTracker.callEnterVia(kind, owner)`: `invokestatic Owner.sleep(J)V` with an
/// owner other than Thread (`Worker.sleep(1)`, `class Worker extends Thread`), whose target
/// the rewriter could not know: reported when that call resolves to `Thread.sleep(J)V`, that
/// is when `owner` is a subclass of Thread and no class from it up to Thread declares its own
/// `sleep(J)V`. A walk of a few classes per call, paid only by such call sites.
pub fn call_enter_via(rec: &Recorder, jni: Jni, kind: i32, owner: jclass) {
    let resolves = jni.with_local_frame(64, || {
        let Some(thread) = jni.find_class(c"java/lang/Thread") else {
            return false;
        };
        let mut c = owner;
        for _ in 0..64 {
            if jni.is_same_object(c, thread) {
                return true;
            }
            let own = rec
                .jvmti
                .class_methods(c)
                .unwrap_or_default()
                .iter()
                .any(|&m| {
                    rec.jvmti
                        .method_name(m)
                        .is_ok_and(|(n, d)| n == "sleep" && d == "(J)V")
                });
            if own {
                return false;
            }
            match jni.superclass(c) {
                Some(s) => c = s,
                None => return false,
            }
        }
        false
    });
    if resolves {
        begin_call(
            rec,
            jni,
            (kind, std::ptr::null_mut()),
            (CALL_FRAMES, 0),
            true,
            None,
        );
    }
}

/// `OrcaProfilerTracker.callExit()`: an inline native call returned normally. Only the call
/// its `callEnter` opened is ended (a `callEnterVia` that reported nothing opened none).
pub fn call_exit(rec: &Recorder, jni: Jni) {
    let Some(state) = rec.current_state() else {
        return;
    };
    if state.inline_open == 0 || state.inline_open != state.depth {
        return;
    }
    if state.depth > 1 || state.open.is_none() {
        // Nothing to write, time or count: a call nested in a tracked one, or a point call
        // (a notify, once per request on a Jetty server: the clock and the recording's lock
        // were a third of its exit's cost).
        state.inline_open = 0;
        return rec.end_call(0, state);
    }
    let nanos = now_nanos();
    if state.recording.is_some() {
        rec.before_event(jni, state, nanos);
    }
    state.inline_open = 0;
    if state.depth == 1 {
        rec.deepen_wait(jni, state, nanos, CALL_FRAMES);
        if let Some(open) = &state.open {
            if let Some(key) = paused(open) {
                rec.summary_wait(state, key, nanos, true);
            }
        }
    }
    rec.end_call(nanos, state)
}

/// Ends the inline native call still open on this thread (it threw: no `callExit` came):
/// the thread reports again, so the native has returned.
pub fn close_inline(rec: &Recorder, state: &mut ThreadState, nanos: u64) {
    if state.inline_open == 0 {
        return;
    }
    while state.depth >= state.inline_open && state.depth > 0 {
        rec.end_call(nanos, state);
    }
    state.inline_open = 0;
}

/// A tracked call begins: `skip` frames above its caller, at `site` (0: not known, walked),
/// now or at `at` (the tracker's clock, the same as the agent's).
fn begin_call(
    rec: &Recorder,
    jni: Jni,
    (kind, subject): (i32, jobject),
    (skip, site): (i32, u32),
    inline: bool,
    at: Option<u64>,
) {
    let nanos = at.unwrap_or_else(now_nanos);
    if let Some(call) = Call::from_hook_report(kind) {
        return juc_hook_enter(rec, jni, (call, nanos), subject, (skip, site));
    }
    let (entry, exit) = match Report::decode(kind) {
        Some(Report::Begin(entry, exit)) => (entry, Some(exit)),
        Some(Report::Point(entry)) => (entry, None),
        _ => return,
    };
    let Some(state) = rec.current_state() else {
        return;
    };
    if state.recording.is_some() {
        // Summaries due are written now (a call begun earlier is reported late: its thread's
        // lines must not go back in time before its records').
        let now = if at.is_some() { now_nanos() } else { nanos };
        rec.before_event(jni, state, now);
    }
    close_inline(rec, state, nanos);
    state.depth += 1;
    if inline {
        state.inline_open = state.depth;
    }
    if state.depth > 1 {
        return;
    }
    let object = if subject.is_null() {
        0
    } else if matches!(entry, EventKind::ThreadStart | EventKind::ThreadJoin) {
        crate::recorder::ids::thread_id(&rec.jvmti, subject)
    } else {
        rec.jvmti.object_hash(subject).unwrap_or(0)
    };
    if exit.is_none() && rec.notify_counted(jni, state, (entry, object), skip, site) {
        return;
    }
    names::name_object(rec, jni, subject, object);
    open_call(rec, jni, state, (entry, exit), object, nanos, (skip, site));
}

/// A call's entry line, `skip` frames above its caller at `site` (0: walked), and the call
/// left open for its exit line (`exit`), from either way in (`event`'s wrappers,
/// `begin_call`'s hooks). A call that is counted when short walks only its site now, the rest
/// of its stack at its end if it lasted long enough to be written (`call_exit`, `hook_exit`),
/// and its entry line is kept back until then.
fn open_call(
    rec: &Recorder,
    jni: Jni,
    state: &mut ThreadState,
    (entry, exit): (EventKind, Option<EventKind>),
    object: u32,
    nanos: u64,
    (skip, site): (i32, u32),
) {
    let frames = if shallow_start(rec, state, entry) {
        rec.site_frames(jni, state, skip, site)
    } else {
        rec.stack(jni, state, skip, false)
    };
    if let Some(kind) = exit {
        state.open = Some(OpenCall {
            kind,
            object,
            frames: frames.clone(),
            extra: Default::default(),
            stamp: None,
            lock_call: None,
        });
    }
    if matches!(entry, EventKind::ObjectWait | EventKind::SemaphoreAcquire) {
        // A semaphore's acquisition waits for a permit as `wait` does for a notify: one that
        // waits less than `waitthreshold` is counted (`Waits`), and a release that can have
        // ended only such waits too (`Notifies`).
        state.wait_epoch = rec.waiters.enter(object, nanos);
        if entry == EventKind::ObjectWait {
            rec.summary_wait(state, (object, false), nanos, false);
        }
    }
    if counts_short(entry)
        && rec.defer_wait(state, &wait_line(entry, nanos, state.hash, object), &frames)
    {
        return;
    }
    rec.push(nanos, entry, state.hash, object, frames);
}

/// A call that is counted when short, and is not `wait` (whose stack the hold summaries
/// use): only its site is walked when it begins, the rest of its stack at its end if it
/// lasted long enough to be written ([`Recorder::deepen_wait`]). Only on a thread whose entry
/// line can be kept back until then (the tracker has registered it: a thread that has not
/// taken a monitor yet writes its entry line at once, with its whole stack).
fn shallow_start(rec: &Recorder, state: &ThreadState, entry: EventKind) -> bool {
    counts_short(entry) && entry != EventKind::ObjectWait && rec.may_defer_wait(state)
}

/// The calls whose entry line is kept back, to be counted in `Waits` if the call is short:
/// the waits for a wake-up, and joins and sleeps (a program that joins a thread per task, or
/// polls with `sleep(1)`, wrote two stacks per call).
fn counts_short(entry: EventKind) -> bool {
    matches!(
        entry,
        EventKind::ObjectWait
            | EventKind::SemaphoreAcquire
            | EventKind::ThreadJoin
            | EventKind::ThreadSleep
    )
}

/// An `ObjectWait` or `SemaphoreAcquire` line, for [`Recorder::defer_wait`].
fn wait_line(kind: EventKind, nanos: u64, thread: u32, object: u32) -> JucLine {
    JucLine {
        nanos,
        kind,
        thread,
        object,
        owner: 0,
        extra: OpenExtra::None,
    }
}

/// A hooked j.u.c. method begins (`subject`: its receiver, or `park`'s blocker and
/// `unpark`'s thread): as JVMTI mode's, through [`methods::juc_entry`].
fn juc_hook_enter(
    rec: &Recorder,
    jni: Jni,
    call: (Call, u64),
    subject: jobject,
    (skip, site): (i32, u32),
) {
    let Some(state) = rec.current_state() else {
        return;
    };
    if state.recording.is_some() {
        rec.before_event(jni, state, call.1);
    }
    close_inline(rec, state, call.1);
    state.depth += 1;
    if state.depth > 1 {
        return;
    }
    methods::juc_entry(rec, jni, state, call, subject, Some((skip, site)));
    if let Some(key) = state.open.as_ref().and_then(paused) {
        rec.summary_wait(state, key, call.1, false);
    }
}

/// The hold an open call pauses, for the summaries: `Object.wait`'s monitor, or
/// `Condition.await`'s lock (`true`: a j.u.c. lock).
fn paused(open: &OpenCall) -> Option<(u32, bool)> {
    match (open.kind, open.extra) {
        (EventKind::ObjectWaited, _) => Some((open.object, false)),
        (EventKind::ConditionAwaited, OpenExtra::Lock(lock)) => Some((lock, true)),
        _ => None,
    }
}

/// `OrcaProfilerTracker.hookExit()`: a hooked JDK method returns or throws (also the end of
/// an inline native call, `callExit`).
pub fn hook_exit(rec: &Recorder, jni: Jni) {
    let nanos = now_nanos();
    let Some(state) = rec.current_state() else {
        return;
    };
    if state.recording.is_some() {
        rec.before_event(jni, state, nanos);
    }
    // An inline native call still open is inside the hooked call ending now (a native runs
    // no Java code, so it cannot contain one): it threw.
    close_inline(rec, state, nanos);
    if state.depth == 1 {
        // The hooked method's frame is still there: the frames below it are its entry's.
        rec.deepen_wait(jni, state, nanos, HOOK_FRAMES);
        if let Some(open) = &state.open {
            if let Some(key) = paused(open) {
                rec.summary_wait(state, key, nanos, true);
            }
        }
    }
    rec.end_call(nanos, state)
}

/// `OrcaProfilerTracker.lockEnter(report, lock, t0)` (`trace=all`): a hooked lock call
/// begins, at the tracker's time (the time of its hold records too, so that the lines and the
/// summaries agree to the nanosecond).
pub fn lock_enter(rec: &Recorder, jni: Jni, (report, lock): (i32, jobject), t0: u64) {
    if let Some(call) = Call::from_hook_report(report) {
        end_lost_unlock(rec, t0);
        juc_hook_enter(rec, jni, (call, t0), lock, (LOCK_ENTRY_FRAMES, 0));
    }
}

/// The tracker tells of its outermost lock calls only (one inside another hooked call is
/// quiet), so an `unlock` the agent still has open when it is told of the next one lost its
/// end: the tracker went on from it without telling the agent (a StackOverflowError in its
/// reports, `tests/java/JucOverflow.java`). It ends now with no line, as an `unlock` that
/// threw: written when the thread next wrote a line, its `LockRelease` was stamped at its
/// call's start, before lines the thread had written since (docs/FORMAT.md, "Ordering"). The
/// lines then keep its hold, as they do for an `unlock` whose end the tracker lost itself.
fn end_lost_unlock(rec: &Recorder, nanos: u64) {
    let Some(state) = rec.current_state() else {
        return;
    };
    let lost = state.depth == 1
        && state
            .open
            .as_ref()
            .and_then(|o| o.lock_call)
            .and_then(Call::from_u8)
            .is_some_and(|c| matches!(c, Call::Lock(_, k) if k.is_release()));
    if lost {
        rec.end_call_as(nanos, state, |_| None);
    }
}

/// `OrcaProfilerTracker.lockBlocked(report, sync, t0)`: by default, a lock call the tracker
/// kept to itself turned out contended (the synchronizer's slow path began): its
/// `LockAcquire` now, with the owner now and the stack from the lock method's caller, and the
/// call open until `lockEnd`, so that a thread blocked for good is seen blocked.
pub fn lock_blocked(rec: &Recorder, jni: Jni, (report, sync): (i32, jobject), t0: u64) {
    if let Some(call) = Call::from_hook_report(report) {
        // the native itself, then the tracker's methodEntry and AQS's frames
        let skip = rec.juc_caller_depth(jni, 1);
        juc_hook_enter(rec, jni, (call, t0), sync, (skip, 0));
    }
}

/// `OrcaProfilerTracker.lockEnd(outcome, t)`: the hooked lock call the agent was told of
/// (`trace=all`, or a contended one) ended so, at `nanos` (the tracker's time).
pub fn lock_end(rec: &Recorder, jni: Jni, outcome: i32, nanos: u64) {
    let Some(state) = rec.current_state() else {
        return;
    };
    if state.recording.is_some() {
        rec.before_event(jni, state, nanos);
    }
    close_inline(rec, state, nanos);
    methods::juc_lock_end(rec, state, nanos, Outcome::from_i32(outcome));
}

/// `OrcaProfilerTracker.lockContended(report, sync, t0, t, owner, outcome)`: a lock call
/// written in full (see [`methods::juc_contended`]).
pub fn lock_contended(
    rec: &Recorder,
    jni: Jni,
    (report, sync): (i32, jobject),
    times: (u64, u64),
    owner: u32,
    outcome: i32,
) {
    let outcome = Outcome::from_i32(outcome);
    methods::juc_contended(
        rec,
        jni,
        (report, sync),
        times,
        owner,
        outcome,
        LOCK_EXIT_FRAMES,
    );
}

/// `OrcaProfilerTracker.lockOwner(report, sync)`.
pub fn lock_owner(rec: &Recorder, jni: Jni, report: i32, sync: jobject) -> i32 {
    match Call::from_hook_report(report) {
        Some(Call::Lock(class, _)) => methods::lock_owner(rec, jni, class, sync) as i32,
        _ => 0,
    }
}

/// `OrcaProfilerTracker.lockThrew(report, sync, holds)`: whether lock call `report` of
/// `sync`, which ended by an exception, took or released the lock all the same
/// ([`methods::done_anyway`]); `holds`: how many times the thread held it before the call, by
/// the tracker's held stack.
pub fn lock_threw(rec: &Recorder, jni: Jni, (report, sync): (i32, jobject), holds: u32) -> bool {
    let Some(Call::Lock(class, k)) = Call::from_hook_report(report) else {
        return false;
    };
    let Some(me) = rec.current_state().map(|s| s.hash) else {
        return false;
    };
    methods::done_anyway(rec, jni, (class, k), sync, me, holds)
}

/// `OrcaProfilerTracker.callerSite()`: the site of the hooked lock method's caller, for a
/// call site that was not rewritten (a JDK class, a timed `tryLock`): one frame walked.
pub fn caller_site(rec: &Recorder, jni: Jni) -> i32 {
    rec.caller_site(jni, LOCK_ENTRY_FRAMES) as i32
}

/// `OrcaProfilerTracker.hookCallerSite()`: the same from the tracker's `methodEntry` (a hooked
/// `Semaphore` call's site), a frame less deep than a lock call's `lockBegin`.
pub fn hook_caller_site(rec: &Recorder, jni: Jni) -> i32 {
    rec.caller_site(jni, HOOK_FRAMES) as i32
}

/// `OrcaProfilerTracker.name(o, hash)`: a monitor or lock this thread locks for the first
/// time (as far as its small cache knows); its class is written once per run. False when the
/// agent names no more of them, so that the tracker stops asking.
pub fn name(rec: &Recorder, jni: Jni, obj: jobject, hash: u32) -> bool {
    names::name_tracked(rec, jni, obj, hash)
}

/// `OrcaProfilerTracker.lockLongHold(site, hash, nanos, end, start)`: a j.u.c. hold past the
/// threshold, written at its release with the release's stack.
pub fn lock_long_hold(
    rec: &Recorder,
    jni: Jni,
    site: u32,
    lock: u32,
    nanos: u64,
    span: (u64, u64),
) {
    rec.rec_long_hold(jni, (site, lock), nanos, span, LOCK_EXIT_FRAMES);
}

/// `OrcaProfilerTracker.lockHeldAtStart(report, sync, hash, read, t)`: an unlock ended a
/// hold the tracker never saw begin, so it began before the attach. Written once per
/// outermost hold: an unlock after which the thread still owns the lock exclusively ended
/// an inner level of a reentrant hold (a read hold names no owner: each of its unlocks
/// counts).
pub fn lock_held_at_start(
    rec: &Recorder,
    jni: Jni,
    (report, sync): (i32, jobject),
    (lock, read): (u32, bool),
    nanos: u64,
) {
    let mine = rec.current_state().map(|s| s.hash);
    let owner = lock_owner(rec, jni, report, sync) as u32;
    if owner != 0 && Some(owner) == mine {
        return;
    }
    rec.rec_lock_held_at_start(
        jni,
        (lock, if read { b'R' } else { b'W' }),
        nanos,
        LOCK_EXIT_FRAMES,
    );
}

/// The stack of a `MonitorExit` from the stack of its `MonitorEntered`: the same frames,
/// the top one now at the `monitorexit` (or the return). `None` when the top frame is not
/// the same method (locking that is not block-structured): then the whole stack is walked.
fn moved_top(rec: &Recorder, jni: Jni, mut frames: Frames) -> Option<Frames> {
    let Some(top) = frames.first_mut() else {
        return Some(frames);
    };
    let (method, location) = rec.jvmti.frame_location(TRACKER_FRAMES).ok()?;
    if location < 0 || rec.meta.method_id(&rec.jvmti, jni, &rec.log, method) != top.method {
        return None;
    }
    top.location = rec
        .meta
        .original_location(&rec.jvmti, jni, top.method, method, location as u32);
    Some(frames)
}

/// `OrcaProfilerTracker.register(Rec)`: the thread's first monitor report, or its first
/// since its ThreadLocals were erased; the thread's Rec (a local reference), or null.
pub fn register(rec: &Recorder, jni: Jni, buffer: jobject) -> jobject {
    rec.rec_register(jni, buffer)
}

/// `OrcaProfilerTracker.flush(Rec)`: the buffer is full.
pub fn flush(rec: &Recorder, jni: Jni) {
    rec.rec_flush(jni);
}

/// `OrcaProfilerTracker.stack(Rec, site)`: the interned stack of a monitor report.
pub fn stack(rec: &Recorder, jni: Jni, site: u32) -> i32 {
    rec.rec_stack(jni, site, SITE_FRAMES)
}

/// `OrcaProfilerTracker.reentered(monitor)`: whether the calling thread has entered
/// `monitor` more than once (JVMTI's entry count), asked by a guarded hold outside the sample
/// that is long and nested in another: a reentrant acquisition is no hold of its own. False
/// when the JVM cannot say (the hold is then written).
pub fn reentered(rec: &Recorder, monitor: jobject) -> bool {
    rec.jvmti.monitor_entry_count(monitor).is_ok_and(|n| n > 1)
}

/// `OrcaProfilerTracker.longHold(Rec, site, hash, nanos, end, start)`: a hold past the
/// threshold.
pub fn long_hold(rec: &Recorder, jni: Jni, site: u32, monitor: u32, nanos: u64, span: (u64, u64)) {
    rec.rec_long_hold(jni, (site, monitor), nanos, span, SITE_FRAMES);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::RecordKind;

    #[test]
    fn the_embedded_class_is_the_tracker() {
        assert_eq!(&CLASS_BYTES[..4], &[0xCA, 0xFE, 0xBA, 0xBE]);
        let major = u16::from_be_bytes([CLASS_BYTES[6], CLASS_BYTES[7]]);
        assert_eq!(major, 52, "compiled for Java 8");
        let text = String::from_utf8_lossy(CLASS_BYTES);
        assert!(text.contains(CLASS_NAME));
        // Moved to java.lang whole: no name of the source package is left.
        for &(name, bytes) in CLASSES {
            assert!(
                !String::from_utf8_lossy(bytes).contains("orca/Orca"),
                "{name:?}"
            );
            assert_eq!(&bytes[..4], &[0xCA, 0xFE, 0xBA, 0xBE]);
        }
    }

    #[test]
    fn every_class_of_the_tracker_is_defined_after_its_superclass() {
        let names: Vec<&str> = CLASSES.iter().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(names.last(), Some(&CLASS_NAME));
        assert!(names.contains(&REC_NAME.to_str().unwrap()));
        assert!(!names.iter().any(|n| n.contains("OrcaEvents")));
        // the record's chain of parts, each class extending the one before it
        let position = |n: &str| names.iter().position(|x| *x == format!("java/lang/{n}"));
        let chain = [
            "OrcaHeld",
            "OrcaHashCache",
            "OrcaSampler",
            "OrcaOrderSlots",
            "OrcaLockCalls",
            "OrcaRec",
        ];
        assert!(chain.iter().all(|c| position(c).is_some()), "{names:?}");
        for w in chain.windows(2) {
            assert!(position(w[0]) < position(w[1]), "{w:?}");
        }
    }

    #[test]
    fn every_report_code_decodes() {
        for &code in ReportCode::ALL {
            assert!(Report::decode(code as i32).is_some(), "{code:?}");
        }
        assert_eq!(ReportCode::ALL.len(), 16);
        assert_eq!(Report::decode(99), None);
    }

    #[test]
    fn the_tracker_never_loads_its_constants_class() {
        // javac inlined OrcaEvents' constants: no field of it is named in the tracker's
        // constant pool (javac keeps an unused Class entry for it, which is never resolved),
        // so the agent need not define that class.
        let codes = ReportCode::ALL.iter().map(|c| c.java_name());
        let records = RecordKind::ALL.iter().map(|r| r.java_name());
        for name in codes.chain(records) {
            for &(_, bytes) in CLASSES {
                assert!(!String::from_utf8_lossy(bytes).contains(name), "{name}");
            }
        }
    }
}
