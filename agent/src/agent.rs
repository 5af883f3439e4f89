//! The agent context — the only global state — and what it does with each JVM happening.
//!
//! Event sources (today the JVMTI callbacks) call these methods; they turn what happened into
//! log records and hand them to the one [`LogWriter`].

use std::path::PathBuf;

use jni_sys::{jclass, jmethodID, jobject};

use crate::clock::now_nanos;
use crate::jvmti::{jthread, location_to_u32, Event, Jni, Jvmti};
use crate::metadata::Metadata;
use crate::options::Options;
use crate::threads::{self, OpenCall, ThreadState};
use crate::tracked::{Call, TrackedMethods};
use crate::writer::{EventRecord, Frame, Kind, LogWriter};

/// Everything the agent holds for the life of the JVM.
pub struct Agent {
    pub jvmti: Jvmti,
    pub options: Options,
    pub paths: [PathBuf; 3],
    pub log: LogWriter,
    pub meta: Metadata,
    pub tracked: TrackedMethods,
}

impl Agent {
    fn push(&self, nanos: u64, kind: Kind, thread: u32, object: u32, frames: Vec<Frame>) {
        self.log.push(EventRecord {
            nanos,
            kind,
            thread,
            object,
            owner: 0,
            name: None,
            frames,
        });
    }

    fn state(&self, thread: jthread) -> Option<&mut ThreadState> {
        threads::current(&self.jvmti, thread, self.options.stack_depth)
    }

    /// The current thread's stack from `start_depth` down, as format frames.
    fn stack(&self, jni: Jni, state: &mut ThreadState, start_depth: i32) -> Vec<Frame> {
        let n = self
            .jvmti
            .stack_trace(start_depth, &mut state.scratch)
            .unwrap_or(0);
        state.scratch[..n]
            .iter()
            .map(|f| {
                // SAFETY: GetStackTrace initialised the first `n` entries.
                let f = unsafe { f.assume_init() };
                Frame {
                    method: self.meta.method_id(&self.jvmti, jni, &self.log, f.method),
                    location: location_to_u32(f.location),
                }
            })
            .collect()
    }

    /// The stack of a thread blocked on a monitor: like [`Agent::stack`] from the top frame,
    /// with the top location moved back onto its `monitorenter` (see [`crate::bytecode`]).
    fn monitor_stack(&self, jni: Jni, state: &mut ThreadState) -> Vec<Frame> {
        let mut frames = self.stack(jni, state, 0);
        if let Some(first) = frames.first_mut() {
            // SAFETY: `stack` just initialised at least this entry.
            let top = unsafe { state.scratch[0].assume_init() };
            if top.location > 0 {
                if let Ok(code) = self.jvmti.bytecodes(top.method) {
                    first.location = crate::bytecode::monitor_location(&code, first.location);
                }
            }
        }
        frames
    }

    fn thread_started(&self, jni: Jni, thread: jthread, hash: u32) {
        let name = self.jvmti.thread_name(jni, thread).unwrap_or_default();
        self.log.push(EventRecord {
            nanos: now_nanos(),
            kind: Kind::ThreadStarted,
            thread: hash,
            object: 0,
            owner: 0,
            name: Some(name.into()),
            frames: Vec::new(),
        });
    }

    /// VMInit: find the tracked methods of classes loaded before events could tell us, announce
    /// the threads that already run, then switch on the method events.
    pub fn vm_init(&self, jni: Jni) {
        // Enable ClassPrepare first, so no class falls between the scan and the event.
        report(self.jvmti.set_event(true, Event::ClassPrepare));
        if let Ok(classes) = self.jvmti.loaded_classes() {
            for c in classes {
                self.register_if_tracked(c);
                jni.delete_local_ref(c);
            }
        }
        if let Ok(all) = self.jvmti.all_threads() {
            for t in all {
                if let Some(hash) = threads::create_for(&self.jvmti, t, self.options.stack_depth) {
                    self.thread_started(jni, t, hash);
                }
                jni.delete_local_ref(t);
            }
        }
        report(self.jvmti.set_event(true, Event::MethodEntry));
        report(self.jvmti.set_event(true, Event::MethodExit));
    }

    /// VMDeath: stop the events, write everything out, print the summary line.
    pub fn vm_death(&self) {
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
        use std::sync::atomic::{AtomicBool, Ordering};
        static PRINTED: AtomicBool = AtomicBool::new(false);
        let t = self.log.finish();
        if !PRINTED.swap(true, Ordering::SeqCst) {
            let lost = if t.lost_to_io > 0 {
                format!(", {} lines lost to write errors", t.lost_to_io)
            } else {
                String::new()
            };
            eprintln!(
                "orca: {} events, {} dropped{lost}; wrote {}, {}, {}",
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

    pub fn thread_end(&self) {
        if let Some(hash) = threads::remove_current(&self.jvmti) {
            self.push(now_nanos(), Kind::ThreadEnded, hash, 0, Vec::new());
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
        let object = if call.has_receiver() {
            self.jvmti
                .local_instance(0)
                .ok()
                .filter(|o| !o.is_null())
                .and_then(|o| self.jvmti.object_hash(o).ok())
                .unwrap_or(0)
        } else {
            0
        };
        let frames = self.stack(jni, state, 1);
        if let Some(kind) = call.exit_kind() {
            state.open = Some(OpenCall {
                kind,
                object,
                frames: frames.clone(),
            });
        }
        self.push(nanos, call.entry_kind(), state.hash, object, frames);
    }

    /// MethodExit, also on exit by exception.
    pub fn method_exit(&self, thread: jthread, method: jmethodID) {
        if self.tracked.lookup(method).is_none() {
            return;
        }
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
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

    pub fn contended_enter(&self, jni: Jni, thread: jthread, object: jobject) {
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
        let monitor = self.jvmti.object_hash(object).unwrap_or(0);
        let owner = match self.jvmti.monitor_owner(object) {
            Ok(t) if !t.is_null() => {
                let h = self.jvmti.object_hash(t).unwrap_or(0);
                jni.delete_local_ref(t);
                h
            }
            // Released already, or JVMTI could not tell: "unknown" in the format.
            _ => 0,
        };
        let frames = self.monitor_stack(jni, state);
        self.log.push(EventRecord {
            nanos,
            kind: Kind::MonitorContendedEnter,
            thread: state.hash,
            object: monitor,
            owner,
            name: None,
            frames,
        });
    }

    pub fn contended_entered(&self, jni: Jni, thread: jthread, object: jobject) {
        let nanos = now_nanos();
        let Some(state) = self.state(thread) else {
            return;
        };
        let monitor = self.jvmti.object_hash(object).unwrap_or(0);
        let frames = self.monitor_stack(jni, state);
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
