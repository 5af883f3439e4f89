//! Monitor contention, in both modes: JVMTI MonitorContendedEnter/Entered.
//!
//! The JVM reports a thread blocking on a monitor and getting it at last, whoever's code
//! holds it (rewritten or not), so this source needs no instrumentation. The owner of a
//! contended monitor comes from the tracker's buffers when instrumented code holds it.

use jni_sys::jobject;

use crate::error::JvmtiError;
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::ids;
use crate::recorder::names;
use crate::recorder::threads::ThreadState;
use crate::recorder::writer::{EventRecord, Extra};
use crate::recorder::Recorder;
use orca_format::EventKind;

/// The contention engine: it holds nothing; its events go straight to the recorder.
#[derive(Default)]
pub struct Contention;

impl Contention {
    /// At `Agent_OnLoad`, so that contention before VMInit is seen too.
    pub fn start(&self, jvmti: &Jvmti) -> Result<(), JvmtiError> {
        jvmti.set_event(true, Event::MonitorContendedEnter)?;
        jvmti.set_event(true, Event::MonitorContendedEntered)
    }

    /// At VMDeath.
    pub fn stop(&self, jvmti: &Jvmti) {
        let _ = jvmti.set_event(false, Event::MonitorContendedEnter);
        let _ = jvmti.set_event(false, Event::MonitorContendedEntered);
    }

    /// MonitorContendedEnter: the thread blocks on `object`.
    pub fn enter(&self, rec: &Recorder, jni: Jni, thread: jthread, object: jobject) {
        let Some((nanos, state, monitor)) = arrival(rec, jni, thread, object) else {
            return;
        };
        // Instrumented code's holds are known without asking the JVM (whose answer is a
        // safepoint, and often comes after the owner has released the monitor).
        let owner = match rec.tracked_owner(jni, monitor, state.hash, nanos) {
            Some(h) => h,
            None => match rec.jvmti.monitor_owner(object) {
                Ok(t) if !t.is_null() => {
                    let h = ids::thread_id(&rec.jvmti, t);
                    jni.delete_local_ref(t);
                    h
                }
                // Released already, or JVMTI could not tell: "unknown" in the format.
                _ => 0,
            },
        };
        let frames = rec.stack(jni, state, 0, true);
        state.contending = monitor;
        let line = EventRecord {
            nanos,
            kind: EventKind::MonitorContendedEnter,
            thread: state.hash,
            object: monitor,
            owner,
            extra: Extra::None,
            frames,
        };
        // Kept back until the thread has the monitor: a short contention is only counted.
        if let Some(line) = rec.defer_contention(state, line) {
            rec.log.push(line);
        }
    }

    /// MonitorContendedEntered: the thread got `object` after blocking.
    pub fn entered(&self, rec: &Recorder, jni: Jni, thread: jthread, object: jobject) {
        let Some((nanos, state, monitor)) = arrival(rec, jni, thread, object) else {
            return;
        };
        if std::mem::take(&mut state.contending) != monitor {
            return; // its MonitorContendedEnter came before the recording (an attach)
        }
        // The thread has not moved since its MonitorContendedEnter: that line's stack, when
        // it was kept back, is this one's too (one walk per contention, none for a counted one).
        let frames = match rec.contention_ended(state, monitor, nanos) {
            None => return, // counted
            Some(Some(frames)) => frames,
            Some(None) => rec.stack(jni, state, 0, true),
        };
        rec.push(
            nanos,
            EventKind::MonitorContendedEntered,
            state.hash,
            monitor,
            frames,
        );
    }
}

/// What both contention events begin with: the time, the thread's state with its buffered
/// records written first (so its lines stay in order), and the monitor's hash.
fn arrival(
    rec: &Recorder,
    jni: Jni,
    thread: jthread,
    object: jobject,
) -> Option<(u64, &mut ThreadState, u32)> {
    let nanos = now_nanos();
    let state = rec.state(thread)?;
    state.last_contention = nanos;
    // Inside an `unlock` its release line comes first, at the call's start (before the
    // tracker's records of what the call did since, drained next).
    rec.release_before_contention(state);
    if state.recording.is_some() {
        rec.before_event(jni, state, nanos);
        // A contention inside a wait (a timed `wait` taking its monitor back): the wait's
        // entry line, kept back, comes first.
        rec.flush_wait(state);
    }
    let monitor = rec.jvmti.object_hash(object).unwrap_or(0);
    names::name_object(rec, jni, object, monitor);
    Some((nanos, state, monitor))
}
