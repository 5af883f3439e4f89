//! The agent context — the only global state — and what it does with each JVM happening.
//!
//! Event sources (today the JVMTI callbacks) call these methods; they turn what happened into
//! log records and hand them to the one [`LogWriter`].

use std::path::PathBuf;

use jni_sys::{jclass, jmethodID, jobject};

use crate::clock::now_nanos;
use crate::instrument::Instrumentation;
use crate::jvmti::{jthread, Event, Jni, Jvmti};
use crate::metadata::Metadata;
use crate::options::Options;
use crate::threads::{self, OpenCall, ThreadState};
use crate::tracked::{Call, TrackedMethods};
use crate::tracker::{Report, TRACKER_FRAMES};
use crate::writer::{EventRecord, Frame, Frames, Kind, LogWriter};

/// Room for the local references of a VMInit scan (all loaded classes, all threads): a few
/// hundred at start-up; HotSpot's limit is 65,536.
const LOCAL_FRAME: i32 = 8192;

/// Everything the agent holds for the life of the JVM.
pub struct Agent {
    pub jvmti: Jvmti,
    pub options: Options,
    pub paths: [PathBuf; 3],
    pub log: LogWriter,
    pub meta: Metadata,
    /// JVMTI event mode's method-ID cache.
    pub tracked: TrackedMethods,
    /// Instrumentation mode's class-load hook; `None` in JVMTI event mode.
    pub instrument: Option<Instrumentation>,
    /// Instrumentation mode: the call sites of monitor reports.
    pub sites: crate::sites::Sites,
    /// Instrumentation mode: every thread's tracker buffer, for the drain at exit and the
    /// owner of a contended monitor.
    pub recordings: crate::monitors::Registry,
    /// Whether the exit line was printed (VMDeath, or Agent_OnUnload when VMDeath never came).
    pub exit_printed: std::sync::atomic::AtomicBool,
}

impl Agent {
    fn push(&self, nanos: u64, kind: Kind, thread: u32, object: u32, frames: Frames) {
        self.log.push(EventRecord {
            nanos,
            kind,
            thread,
            object,
            owner: 0,
            extra: crate::writer::Extra::None,
            frames,
        });
    }

    /// The current thread's state (for the tracker's natives, which have no jthread).
    pub fn current_state(&self) -> Option<&mut ThreadState> {
        threads::current(&self.jvmti, std::ptr::null_mut(), self.options.stack_depth)
    }

    fn state(&self, thread: jthread) -> Option<&mut ThreadState> {
        threads::current(&self.jvmti, thread, self.options.stack_depth)
    }

    /// The current thread's stack from `start_depth` down, as format frames, with every
    /// location in the original class file's terms (see [`Metadata::original_location`]).
    /// `monitor_top`: the top frame is blocked on a monitor, so its location is moved back
    /// onto its `monitorenter` (see [`crate::bytecode`]).
    pub(crate) fn stack(
        &self,
        jni: Jni,
        state: &mut ThreadState,
        start_depth: i32,
        monitor_top: bool,
    ) -> Frames {
        let n = self
            .jvmti
            .stack_trace(start_depth, &mut state.scratch)
            .unwrap_or(0);
        self.frames_from_scratch(jni, state, n, monitor_top)
    }

    /// The first `n` frames of the thread's last stack walk, translated.
    pub(crate) fn frames_from_scratch(
        &self,
        jni: Jni,
        state: &ThreadState,
        n: usize,
        monitor_top: bool,
    ) -> Frames {
        let mut frames = Frames::with_capacity(n);
        for (i, f) in state.scratch[..n].iter().enumerate() {
            // SAFETY: GetStackTrace initialised the first `n` entries.
            let f = unsafe { f.assume_init() };
            let method = self.meta.method_id(&self.jvmti, jni, &self.log, f.method);
            let location = if f.location < 0 {
                u32::MAX
            } else {
                let mut bci = f.location as u32;
                if i == 0 && monitor_top && bci > 0 {
                    if let Ok(code) = self.jvmti.bytecodes(f.method) {
                        bci = crate::bytecode::monitor_location(&code, bci);
                    }
                }
                self.meta.original_location(method, bci)
            };
            frames.push(Frame { method, location });
        }
        frames
    }

    /// The stack of a `MonitorExit` from the stack of its `MonitorEntered`: the same frames,
    /// the top one now at the `monitorexit` (or the return). `None` when the top frame is not
    /// the same method (locking that is not block-structured): then the whole stack is walked.
    fn moved_top(&self, jni: Jni, mut frames: Frames) -> Option<Frames> {
        let Some(top) = frames.first_mut() else {
            return Some(frames);
        };
        let (method, location) = self.jvmti.frame_location(TRACKER_FRAMES).ok()?;
        if location < 0 || self.meta.method_id(&self.jvmti, jni, &self.log, method) != top.method {
            return None;
        }
        top.location = self.meta.original_location(top.method, location as u32);
        Some(frames)
    }

    fn thread_started(&self, jni: Jni, thread: jthread, hash: u32) {
        let name = self.jvmti.thread_name(jni, thread).unwrap_or_default();
        self.log.push(EventRecord {
            nanos: now_nanos(),
            kind: Kind::ThreadStarted,
            thread: hash,
            object: 0,
            owner: 0,
            extra: crate::writer::Extra::Name(name.into()),
            frames: Frames::new(),
        });
    }

    /// VMInit. JVMTI event mode: find the tracked methods of classes loaded before events
    /// could tell us, then switch on the method events. Instrumentation mode: install the
    /// tracker, then switch on the class-load hook. Both: announce the threads already running.
    pub fn vm_init(&self, jni: Jni) {
        jni.with_local_frame(LOCAL_FRAME, || {
            if let Ok(all) = self.jvmti.all_threads() {
                for t in all {
                    if let Some(hash) =
                        threads::create_for(&self.jvmti, t, self.options.stack_depth)
                    {
                        self.thread_started(jni, t, hash);
                    }
                    jni.delete_local_ref(t);
                }
            }
        });
        match &self.instrument {
            None => {
                // Enable ClassPrepare first, so no class falls between the scan and the event.
                report(self.jvmti.set_event(true, Event::ClassPrepare));
                jni.with_local_frame(LOCAL_FRAME, || {
                    if let Ok(classes) = self.jvmti.loaded_classes() {
                        for c in classes {
                            self.register_if_tracked(c);
                            jni.delete_local_ref(c);
                        }
                    }
                });
                report(self.jvmti.set_event(true, Event::MethodEntry));
                report(self.jvmti.set_event(true, Event::MethodExit));
            }
            Some(ins) => {
                ins.set_platform_loader(jni);
                let settings = crate::tracker::TrackerSettings {
                    trace_all: self.options.trace_all,
                    deep_stacks: self.options.stack_depth > 1,
                    hold_threshold: self.options.hold_threshold,
                };
                if let Err(e) =
                    crate::tracker::install(&self.jvmti, jni, self.options.jdk, &settings)
                {
                    eprintln!("orca: {e}; recording without instrumentation (monitor contention and threads only)");
                    return;
                }
                self.meta.set_instrumenting();
                // Sites are bound to their methods when a class is prepared.
                report(self.jvmti.set_event(true, Event::ClassPrepare));
                report(self.jvmti.set_event(true, Event::ClassFileLoadHook));
            }
        }
    }

    /// ClassFileLoadHook: new bytes for a class, or `None` to keep it.
    pub fn class_file(
        &self,
        jni: Jni,
        loader: jobject,
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        self.instrument.as_ref()?.transform(
            &self.jvmti,
            jni,
            &self.meta,
            &self.sites,
            loader,
            name,
            bytes,
        )
    }

    /// `OrcaProfilerTracker.event(kind, subject)`: one report from rewritten code.
    pub fn tracker_event(&self, jni: Jni, kind: i32, subject: jobject) {
        let nanos = now_nanos();
        let Some(report) = Report::decode(kind) else {
            return;
        };
        let Some(state) =
            threads::current(&self.jvmti, std::ptr::null_mut(), self.options.stack_depth)
        else {
            return;
        };
        // The thread's buffered monitor records come first in its lines.
        if state.recording.is_some() {
            self.drain_thread(jni, state, false);
        }
        let hash = |o: jobject| {
            if o.is_null() {
                0
            } else {
                self.jvmti.object_hash(o).unwrap_or(0)
            }
        };
        match report {
            // `synchronized (null)`: monitorenter throws NullPointerException, nothing is entered.
            Report::Monitor(Kind::MonitorEnter) if subject.is_null() => {}
            Report::Monitor(Kind::MonitorEnter) => {
                let monitor = hash(subject);
                let frames = self.stack(jni, state, TRACKER_FRAMES, false);
                state.pending_enter = Some((monitor, frames.clone()));
                self.push(nanos, Kind::MonitorEnter, state.hash, monitor, frames);
            }
            Report::Monitor(Kind::MonitorEntered) => {
                // Right after its MonitorEnter, at the same call site: reuse its hash (the
                // object is locked now, hashing it would inflate its monitor) and its stack.
                let (monitor, frames) = match state.pending_enter.take() {
                    Some(pending) => pending,
                    None => (hash(subject), self.stack(jni, state, TRACKER_FRAMES, false)),
                };
                state.held.push((monitor, frames.clone()));
                self.push(nanos, Kind::MonitorEntered, state.hash, monitor, frames);
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
                        self.moved_top(jni, frames)
                            .unwrap_or_else(|| self.stack(jni, state, TRACKER_FRAMES, false)),
                    ),
                    None => (monitor, self.stack(jni, state, TRACKER_FRAMES, false)),
                };
                self.push(nanos, kind, state.hash, monitor, frames);
            }
            Report::Begin(entry, exit) => {
                state.depth += 1;
                if state.depth > 1 {
                    return;
                }
                let object = hash(subject);
                let frames = self.stack(jni, state, TRACKER_FRAMES, false);
                state.open = Some(OpenCall {
                    kind: exit,
                    object,
                    frames: frames.clone(),
                });
                if entry == Kind::ObjectWait {
                    self.summary_wait(state, object, nanos, false);
                }
                self.push(nanos, entry, state.hash, object, frames);
            }
            Report::End => {
                if state.depth == 1 {
                    if let Some(open) = &state.open {
                        if open.kind == Kind::ObjectWaited {
                            self.summary_wait(state, open.object, nanos, true);
                        }
                    }
                }
                self.end_call(nanos, state)
            }
            Report::Point(kind) => {
                if state.depth == 0 {
                    let object = hash(subject);
                    let frames = self.stack(jni, state, TRACKER_FRAMES, false);
                    self.push(nanos, kind, state.hash, object, frames);
                }
            }
        }
    }

    /// The end of a tracked call, in either mode: the exit event once the outermost call ends.
    fn end_call(&self, nanos: u64, state: &mut ThreadState) {
        // Depth 0: the call began before the agent could see it (a thread already waiting at
        // VMInit); there is no entry event to pair with.
        if state.depth == 0 {
            return;
        }
        state.depth -= 1;
        if state.depth == 0 {
            if let Some(open) = state.open.take() {
                self.push(nanos, open.kind, state.hash, open.object, open.frames);
            }
        }
    }

    /// VMDeath: stop the events, write everything out, print the summary line.
    pub fn vm_death(&self, jni: Jni) {
        self.drain_all(jni);
        for e in [
            Event::MethodEntry,
            Event::MethodExit,
            Event::ClassPrepare,
            Event::MonitorContendedEnter,
            Event::MonitorContendedEntered,
        ] {
            let _ = self.jvmti.set_event(false, e);
        }
        self.finish();
    }

    /// Flushes the log and prints the exit line (once).
    pub fn finish(&self) {
        let t = self.log.finish();
        if !self
            .exit_printed
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let mut extra = String::new();
            if let Some(ins) = &self.instrument {
                let h = ins.totals();
                extra.push_str(&format!(", {} classes instrumented", h.changed));
                if h.failed > 0 {
                    extra.push_str(&format!(
                        ", {} classes left uninstrumented (unreadable)",
                        h.failed
                    ));
                }
                if h.methods_left > 0 {
                    extra.push_str(&format!(
                        ", {} methods left uninstrumented (see orca-rewrite -v)",
                        h.methods_left
                    ));
                }
            }
            if t.lost_to_io > 0 {
                extra.push_str(&format!(", {} lines lost to write errors", t.lost_to_io));
            }
            if t.abandoned > 0 {
                extra.push_str(&format!(
                    ", {} events abandoned (the writer was stuck at exit)",
                    t.abandoned
                ));
            }
            if t.late > 0 {
                extra.push_str(&format!(
                    ", {} events from threads still running during JVM exit not recorded",
                    t.late
                ));
            }
            if t.abandoned == 0 {
                extra.push_str(&format!(
                    ", writer CPU {:.3} s",
                    t.writer_cpu_nanos as f64 / 1e9
                ));
            }
            eprintln!(
                "orca: {} events, {} dropped{extra}; wrote {}, {}, {}",
                t.events,
                t.dropped,
                self.paths[0].display(),
                self.paths[1].display(),
                self.paths[2].display()
            );
        }
    }

    /// ThreadStart. A thread already announced at VMInit (the main thread) is not announced
    /// twice.
    pub fn thread_start(&self, jni: Jni, thread: jthread) {
        if let Some((state, true)) =
            threads::current_or_new(&self.jvmti, thread, self.options.stack_depth)
        {
            let hash = state.hash;
            self.thread_started(jni, thread, hash);
        }
    }

    pub fn thread_end(&self, jni: Jni) {
        if let Some(state) = self.current_state() {
            self.recording_end(jni, state);
        }
        if let Some(hash) = threads::remove_current(&self.jvmti) {
            self.push(now_nanos(), Kind::ThreadEnded, hash, 0, Frames::new());
        }
    }

    /// ClassPrepare: JVMTI mode fills its method-ID cache, instrumentation mode binds sites.
    pub fn class_prepare(&self, jni: Jni, class: jclass) {
        if self.instrument.is_some() {
            self.sites.prepared(&self.jvmti, jni, class);
        } else {
            self.register_if_tracked(class);
        }
    }

    /// ClassPrepare (and the VMInit scan): fill the method-ID cache from the tracked classes.
    pub fn register_if_tracked(&self, class: jclass) {
        let Ok(sig) = self.jvmti.class_signature(class) else {
            return;
        };
        if !Call::is_tracked_class(&sig) {
            return;
        }
        for m in self.jvmti.class_methods(class).unwrap_or_default() {
            if let Ok((name, _)) = self.jvmti.method_name(m) {
                if let Some(call) = Call::classify(&sig, &name) {
                    self.tracked.insert(m, call);
                }
            }
        }
    }

    /// MethodEntry: the hot path. Untracked methods cost one table lookup.
    pub fn method_entry(&self, jni: Jni, thread: jthread, method: jmethodID) {
        let Some(call) = self.tracked.lookup(method) else {
            return;
        };
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
        state.depth += 1;
        if state.depth > 1 {
            return;
        }
        let object = self.receiver(jni, call);
        let frames = self.stack(jni, state, 1, false);
        if let Some(kind) = call.exit_kind() {
            state.open = Some(OpenCall {
                kind,
                object,
                frames: frames.clone(),
            });
        }
        self.push(nanos, call.entry_kind(), state.hash, object, frames);
    }

    /// The identity hash of the tracked call's receiver (0 for `Thread.sleep`).
    ///
    /// `GetLocalInstance` is exact but HotSpot runs it as a VM operation: a safepoint per call,
    /// measured at about 40 µs, which would stop every thread at every `notify`. The receiver
    /// of `wait`/`notify`/`notifyAll` is a monitor the thread owns, and the list of owned
    /// monitors is cheap to read for the current thread (no safepoint), so when the thread
    /// owns exactly one monitor that is the receiver. Otherwise (nested `synchronized`, or no
    /// monitor: the call is about to throw IllegalMonitorStateException) and for `Thread` and
    /// `Semaphore` calls, the agent pays for `GetLocalInstance`.
    fn receiver(&self, jni: Jni, call: Call) -> u32 {
        if !call.has_receiver() {
            return 0;
        }
        if call.is_monitor_call() {
            if let Ok(owned) = self.jvmti.owned_monitors() {
                let only = if owned.len() == 1 {
                    self.jvmti.object_hash(owned[0].0).ok()
                } else {
                    None
                };
                for (m, _) in owned {
                    jni.delete_local_ref(m);
                }
                if let Some(hash) = only {
                    return hash;
                }
            }
        }
        match self.jvmti.local_instance(0) {
            Ok(o) if !o.is_null() => {
                let hash = self.jvmti.object_hash(o).unwrap_or(0);
                jni.delete_local_ref(o);
                hash
            }
            _ => 0,
        }
    }

    /// MethodExit, also on exit by exception.
    pub fn method_exit(&self, thread: jthread, method: jmethodID) {
        if self.tracked.lookup(method).is_none() {
            return;
        }
        let nanos = now_nanos();
        if let Some(state) = self.state(thread) {
            self.end_call(nanos, state);
        }
    }

    pub fn contended_enter(&self, jni: Jni, thread: jthread, object: jobject) {
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
        if state.recording.is_some() {
            self.drain_thread(jni, state, false);
        }
        let monitor = self.jvmti.object_hash(object).unwrap_or(0);
        // Instrumented code's holds are known without asking the JVM (whose answer is a
        // safepoint, and often comes after the owner has released the monitor).
        let owner = match self.tracked_owner(jni, monitor, state.hash) {
            Some(h) => h,
            None => match self.jvmti.monitor_owner(object) {
                Ok(t) if !t.is_null() => {
                    let h = self.jvmti.object_hash(t).unwrap_or(0);
                    jni.delete_local_ref(t);
                    h
                }
                // Released already, or JVMTI could not tell: "unknown" in the format.
                _ => 0,
            },
        };
        let frames = self.stack(jni, state, 0, true);
        self.log.push(EventRecord {
            nanos,
            kind: Kind::MonitorContendedEnter,
            thread: state.hash,
            object: monitor,
            owner,
            extra: crate::writer::Extra::None,
            frames,
        });
    }

    pub fn contended_entered(&self, jni: Jni, thread: jthread, object: jobject) {
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
        if state.recording.is_some() {
            self.drain_thread(jni, state, false);
        }
        let monitor = self.jvmti.object_hash(object).unwrap_or(0);
        let frames = self.stack(jni, state, 0, true);
        self.push(
            nanos,
            Kind::MonitorContendedEntered,
            state.hash,
            monitor,
            frames,
        );
    }
}

/// Reports a failed JVMTI call once per kind of failure; recording goes on without it.
fn report(r: Result<(), crate::error::JvmtiError>) {
    if let Err(e) = r {
        eprintln!("orca: {e}; some events will be missing");
    }
}
