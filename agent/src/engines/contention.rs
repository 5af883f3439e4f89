//! Monitor contention, in both modes: JVMTI MonitorContendedEnter/Entered.
//!
//! The JVM reports a thread blocking on a monitor and getting it at last, whoever's code
//! holds it (rewritten or not), so this source needs no instrumentation. The owner of a
//! contended monitor comes from the tracker's buffers when instrumented code holds it, else
//! from the JVM: at once when the contention is written at once, from the [`Asker`] once
//! it has lasted when its line is kept back (a short one, only counted, needs no owner).

use jni_sys::jobject;

use crate::engines::owners::{owner_now, Asker};
use crate::error::JvmtiError;
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::recorder::clock::now_nanos;
use crate::recorder::names;
use crate::recorder::threads::ThreadState;
use crate::recorder::writer::{EventRecord, Extra};
use crate::recorder::Recorder;
use orca_format::EventKind;

/// The contention engine: its events go straight to the recorder; it holds only the
/// questions about owners that are not due yet.
#[derive(Default)]
pub struct Contention {
    owners: Asker,
}

impl Contention {
    /// At `Agent_OnLoad`, so that contention before VMInit is seen too.
    pub fn start(&self, jvmti: &Jvmti) -> Result<(), JvmtiError> {
        jvmti.set_event(true, Event::MonitorContendedEnter)?;
        jvmti.set_event(true, Event::MonitorContendedEntered)
    }

    /// At VMDeath and at a detach, before the threads' last drain: the owners still asked
    /// about are answered first (a thread blocked at the end is written with its owner).
    pub fn stop(&self, jvmti: &Jvmti) {
        let _ = jvmti.set_event(false, Event::MonitorContendedEnter);
        let _ = jvmti.set_event(false, Event::MonitorContendedEntered);
        self.owners.stop();
    }

    /// MonitorContendedEnter: the thread blocks on `object`.
    pub fn enter(&self, rec: &Recorder, jni: Jni, thread: jthread, object: jobject) {
        let Some((nanos, state, monitor)) = arrival(rec, jni, thread, object) else {
            return;
        };
        // Instrumented code's holds are known without asking the JVM (whose answer is a
        // safepoint, and often comes after the owner has released the monitor).
        let tracked = rec.tracked_owner(jni, monitor, state.hash, nanos);
        let frames = rec.stack(jni, state, 0, true);
        state.contending = monitor;
        let line = EventRecord {
            nanos,
            kind: EventKind::MonitorContendedEnter,
            thread: state.hash,
            object: monitor,
            owner: tracked.unwrap_or(0),
            extra: Extra::None,
            frames,
        };
        // Kept back until the thread has the monitor: a short contention is only counted,
        // and its owner, if the JVM must name it, is asked for only if it lasts.
        let me = state.hash;
        let kept = rec.defer_contention(state, line, |line| {
            if tracked.is_some() {
                return None;
            }
            let q = self.owners.ask(
                rec.jvmti,
                jni,
                object,
                (nanos, me),
                rec.contention_threshold,
            );
            if q.is_none() {
                line.owner = owner_now(&rec.jvmti, jni, object); // nobody to ask later
            }
            q
        });
        if let Some(mut line) = kept {
            if tracked.is_none() {
                line.owner = owner_now(&rec.jvmti, jni, object);
            }
            // A contention inside a wait (a timed `wait` taking its monitor back): the
            // wait's entry line, kept back, comes first.
            rec.flush_wait(state);
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
        rec.flush_wait(state);
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
        // A wait under way has its entry line written first only if the contention's line
        // is written (a counted one writes none, and the wait may be counted still), but its
        // wake-up is written from now on, in case.
        rec.wait_may_be_written(state);
    }
    let monitor = rec.jvmti.object_hash(object).unwrap_or(0);
    names::name_object(rec, jni, object, monitor);
    Some((nanos, state, monitor))
}
