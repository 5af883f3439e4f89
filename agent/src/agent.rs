//! The agent context — the only global state — and its life cycle: start-up (options,
//! capabilities, files), VMInit, threads starting and ending, VMDeath and the exit line.
//!
//! It owns the recorder and the engines of the mode; the entry points reach both through it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use jni_sys::{jclass, JavaVM};

use crate::engines::contention::Contention;
use crate::engines::instrument::Instrumentation;
use crate::engines::methods::Methods;
use crate::engines::tracker::TrackerSettings;
use crate::engines::LOCAL_FRAME;
use crate::error::StartError;
use crate::jvmti::{jthread, Capability, Event, EventCallbacks, FastWalker, Jni, Jvmti};
use crate::options::{Mode, Options};
use crate::recorder::clock::now_nanos;
use crate::recorder::clock::Ticker;
use crate::recorder::threads;
use crate::recorder::writer::{EventRecord, Extra, Files, Frames};
use crate::recorder::Recorder;
use orca_format::EventKind;

/// Everything the agent holds for the life of the JVM.
pub struct Agent {
    pub options: Options,
    pub paths: [PathBuf; 3],
    pub rec: Recorder,
    /// JVMTI event mode's method events; `None` in instrumentation mode.
    pub methods: Option<Methods>,
    /// Instrumentation mode's class-load hook and tracker; `None` in JVMTI event mode.
    pub instrument: Option<Instrumentation>,
    pub contention: Contention,
    /// Whether the exit line was printed (VMDeath, or Agent_OnUnload when VMDeath never came).
    pub exit_printed: AtomicBool,
    /// The recording's number in this JVM: 0 for an agent loaded at start-up, 1 and up for
    /// each attach (`Agent_OnAttach`), which a detach ends.
    pub session: i32,
    /// An attach's instrumentation: 0 under way, 1 in place, 2 failed (said on stderr).
    pub attach_done: std::sync::atomic::AtomicU8,
    /// The settings in effect that decide how the log is read (`key=value` pairs, as the
    /// options spell them): the start-up line says them, and so does the log's first line
    /// (`RecordingStarted`), so that a reader knows, for example, that lock orders come
    /// from a sample.
    pub settings: Vec<(&'static str, String)>,
    /// When the agent was made ([`now_nanos`]), before any of its events was switched on:
    /// the time of the `ThreadStarted` of each thread already running at VMInit or at an
    /// attach. Why: an event of such a thread whose callback read the clock before the
    /// announcement, and wrote its line after (a contention kept back until the monitor is
    /// entered), would come after its own thread's first line with an earlier time (an
    /// attached Jetty's log, on a busy machine: 11 ms earlier, which `orca check` rejects).
    pub created: u64,
}

/// What [`Agent::create`] made that [`Agent::start`] puts to work once the agent has its
/// `'static` home.
pub struct Pending {
    files: Files,
    /// JDK 21+: virtual threads get start and end events of their own.
    virtual_threads: bool,
}

/// The JVMTI capabilities a mode cannot work without.
fn required_capabilities(mode: Mode) -> Vec<Capability> {
    let mut caps = vec![
        Capability::GenerateMonitorEvents,
        Capability::GetMonitorInfo,
        Capability::GetLineNumbers,
        Capability::GetSourceFileName,
        Capability::GetBytecodes,
        // Classes and threads carry their unique IDs in their tags (recorder::ids).
        Capability::TagObjects,
    ];
    match mode {
        Mode::Jvmti => caps.extend([
            Capability::GenerateMethodEntryEvents,
            Capability::GenerateMethodExitEvents,
            Capability::AccessLocalVariables,
            Capability::GetOwnedMonitorStackDepthInfo,
        ]),
        Mode::Instrument => caps.extend([
            Capability::GenerateAllClassHookEvents,
            // Class loaders are tagged too, so that the offset maps of their classes are
            // found by loader, not by a hash that two loaders may share, and freed when
            // the loader is collected (its classes are unloaded with it).
            Capability::GenerateObjectFreeEvents,
            Capability::RetransformClasses,
            Capability::GetConstantPool,
        ]),
    }
    caps
}

fn capability_names(caps: &[Capability]) -> String {
    caps.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
}

/// Why an attach cannot record, as one line for stderr, or `None` when it can (options that
/// do not parse are left to [`Agent::create`]). The running JVM is asked which capabilities
/// the mode needs that it no longer offers, so that the user learns the real obstacle:
/// HotSpot grants MethodEntry/MethodExit events, local variable access and owned-monitor
/// information only in the OnLoad phase, so JVMTI mode cannot attach.
///
/// # Safety
/// `vm` is the `JavaVM*` the JVM passed to `Agent_OnAttach`.
pub unsafe fn refuse_attach(vm: *mut JavaVM, options: Option<&str>) -> Option<String> {
    const HOW: &str = "attach in mode=instrument (the default), or start the JVM with -agentpath:liborca.so=PREFIX,mode=jvmti";
    let options = Options::parse(options).ok()?;
    // SAFETY: `vm` is the JavaVM* the JVM passed to Agent_OnAttach.
    let jvmti = match unsafe { Jvmti::from_vm(vm) } {
        Ok(j) => j,
        Err(e) => return Some(format!("cannot record a running JVM ({e})")),
    };
    let missing = jvmti.missing_capabilities(&required_capabilities(options.mode));
    jvmti.dispose();
    match missing {
        Ok(m) if !m.is_empty() => Some(format!(
            "mode={} cannot record a running JVM: it needs JVMTI capabilities HotSpot offers only to an agent loaded at start-up ({}); {HOW}",
            options.mode.name(),
            capability_names(&m)
        )),
        _ => None,
    }
}

impl Agent {
    /// `Agent_OnLoad`'s first half: the options checked, the capabilities added, the files
    /// created. Nothing runs yet.
    ///
    /// # Safety
    /// `vm` is the `JavaVM*` the JVM passed to `Agent_OnLoad`.
    pub unsafe fn create(
        vm: *mut JavaVM,
        options: Option<&str>,
        session: i32,
    ) -> Result<(Agent, Pending), StartError> {
        let created = now_nanos();
        let options = Options::parse(options)?;
        if session > 0 && options.mode != Mode::Instrument {
            return Err(StartError::JvmtiOnAttach);
        }
        if options.jdk && options.mode != Mode::Instrument {
            return Err(StartError::NeedsInstrument { key: "jdk" });
        }
        if options.trace_all && options.mode != Mode::Instrument {
            return Err(StartError::NeedsInstrument { key: "trace" });
        }
        // Before any capability is taken: a refused path leaves the JVM as it was.
        let paths = options.paths();
        let files = Files::create_bounded(paths.clone(), options.ring()).map_err(|e| match e {
            orca_format::output::OutputError::Io { path, source } => StartError::Output {
                prefix: options.prefix.clone(),
                path: path.display().to_string(),
                source,
            },
            e => StartError::Refused(e),
        })?;
        // SAFETY: `vm` is the JavaVM* the JVM passed to Agent_OnLoad.
        let jvmti = unsafe { Jvmti::from_vm(vm) }?;
        let mut caps = required_capabilities(options.mode);
        // JDK 21+ only: virtual threads get start and end events of their own.
        let vthreads = Capability::SupportVirtualThreads;
        let mut missing = jvmti.missing_capabilities(&[caps.as_slice(), &[vthreads]].concat())?;
        let virtual_threads = !missing.contains(&vthreads);
        missing.retain(|&c| c != vthreads);
        if !missing.is_empty() {
            return Err(StartError::MissingCapabilities {
                mode: options.mode.name(),
                missing: capability_names(&missing),
            });
        }
        if virtual_threads {
            caps.push(vthreads);
        }
        jvmti.add_capabilities(&caps)?;
        let walker = if options.fast_walk {
            FastWalker::find()
        } else {
            None
        };
        let mut rec = Recorder::new(jvmti, options.stack_depth, options.trace_all, walker);
        rec.count_notifies = options.count_notifies && !options.trace_all;
        // Counting short waits needs the summaries of instrumentation mode; the complete
        // trace writes every wait.
        if options.mode == Mode::Instrument && !options.trace_all {
            rec.wait_threshold = options.wait_threshold;
            rec.contention_threshold = options.contention_threshold;
        }
        rec.waiters = crate::recorder::waiters::Waiters::new(rec.wait_threshold);
        crate::engines::methods::set_juc(options.juc);
        let mut recorded: Vec<(&'static str, String)> = vec![("mode", options.mode.name().into())];
        let (methods, instrument) = match options.mode {
            Mode::Jvmti => (Some(Methods::default()), None),
            Mode::Instrument => {
                let settings = TrackerSettings {
                    trace_all: options.trace_all,
                    deep_stacks: options.stack_depth > 1,
                    hold_threshold: options.hold_threshold,
                    coarse_clock: TrackerSettings::sampling(
                        options.sampled_holds,
                        options.trace_all,
                        options.hold_threshold,
                    )
                    // Guarded sites are sampled only with sampled tracking
                    // (tracking=full follows every hold).
                    .then(|| Ticker::start(options.guards && options.sampled_tracking))
                    .flatten(),
                    sample_tracking: options.sampled_tracking,
                    session,
                    // A counted notify needs its site's frame (stackdepth above 0).
                    waiters: (rec.count_notifies && options.stack_depth > 0)
                        .then(|| rec.waiters.table()),
                    // The tracker learns that an acquisition may block from AQS's slow path,
                    // hooked with the j.u.c. methods.
                    semaphores: (rec.count_notifies
                        && options.stack_depth > 0
                        && options.juc
                        && rec.wait_threshold > 0)
                        .then_some(rec.wait_threshold),
                };
                if options.tracking_asked
                    && settings.sample_tracking
                    && settings.coarse_clock.is_none()
                {
                    crate::say!(
                        "orca: tracking=sampled needs sampled hold timing (holdtiming=sampled, \
                         no trace=all, holdthreshold off or at least 4ms): every hold is \
                         identified"
                    );
                }
                // What is in effect: sampled timing needs the ticker, which may not start.
                let word = |b: bool, yes: &str, no: &str| if b { yes } else { no }.to_string();
                recorded.push(("trace", word(options.trace_all, "all", "summary")));
                if !options.trace_all {
                    let sampled = settings.coarse_clock.is_some();
                    recorded.push(("holdtiming", word(sampled, "sampled", "exact")));
                    if sampled {
                        let tracking = settings.sample_tracking;
                        recorded.push(("tracking", word(tracking, "sampled", "full")));
                    }
                }
                if options.guards {
                    recorded.push(("guards", "on".to_string()));
                }
                (
                    None,
                    Some(Instrumentation::new(
                        options.jdk,
                        options.guards,
                        settings,
                        &rec,
                    )),
                )
            }
        };
        recorded.push(("stackdepth", options.stack_depth.to_string()));
        let agent = Agent {
            options,
            paths,
            rec,
            methods,
            instrument,
            contention: Contention::default(),
            exit_printed: AtomicBool::new(false),
            session,
            attach_done: std::sync::atomic::AtomicU8::new(0),
            settings: recorded,
            created,
        };
        Ok((
            agent,
            Pending {
                files,
                virtual_threads,
            },
        ))
    }

    /// `Agent_OnLoad`'s second half: the writer started, `callbacks` installed, the events
    /// every mode needs switched on.
    pub fn start(
        &'static self,
        pending: Pending,
        callbacks: &EventCallbacks,
    ) -> Result<(), StartError> {
        let jvmti = &self.rec.jvmti;
        self.rec
            .log
            .start(pending.files, Some(self.settings_text(";")))
            .map_err(StartError::WriterThread)?;
        jvmti.set_event_callbacks(callbacks)?;
        for e in [
            Event::VmInit,
            Event::VmDeath,
            Event::ThreadStart,
            Event::ThreadEnd,
        ] {
            jvmti.set_event(true, e)?;
        }
        self.contention.start(jvmti)?;
        if self.rec.walker.is_some() {
            jvmti.set_event(true, Event::ClassLoad)?;
        }
        // JDK 21+: virtual threads have start and end events of their own, so that each gets a
        // ThreadStarted/ThreadEnded and its per-thread state is freed when it ends.
        if pending.virtual_threads {
            jvmti.set_event(true, Event::VirtualThreadStart)?;
            jvmti.set_event(true, Event::VirtualThreadEnd)?;
        }
        crate::say!(
            "orca: {}recording ({}) to {}, {}, {}",
            if self.session > 0 { "attached: " } else { "" },
            self.settings_text(", "),
            self.paths[0].display(),
            self.paths[1].display(),
            self.paths[2].display()
        );
        Ok(())
    }

    /// [`Agent::settings`] as `key=value` items joined by `sep`.
    fn settings_text(&self, sep: &str) -> String {
        let items: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        items.join(sep)
    }

    fn thread_started(&self, jni: Jni, thread: jthread, hash: u32, nanos: u64) {
        let name = self.rec.jvmti.thread_name(jni, thread).unwrap_or_default();
        self.rec.log.push(EventRecord {
            nanos,
            kind: EventKind::ThreadStarted,
            thread: hash,
            object: 0,
            owner: 0,
            extra: Extra::Name(name.into()),
            frames: Frames::new(),
        });
    }

    /// VMInit: announce the threads already running, then start the mode's engine.
    pub fn vm_init(&self, jni: Jni) {
        self.vm_init_threads(jni);
        if let Some(m) = &self.methods {
            m.start(&self.rec, jni);
        }
        if let Some(ins) = &self.instrument {
            ins.start(&self.rec, jni, &crate::entry::last_hook_table());
        }
    }

    /// Announces the threads already running.
    fn vm_init_threads(&self, jni: Jni) {
        let jvmti = &self.rec.jvmti;
        jni.with_local_frame(LOCAL_FRAME, || {
            if let Ok(all) = jvmti.all_threads() {
                for t in all {
                    if let Some(hash) = threads::create_for(jvmti, t, self.options.stack_depth) {
                        self.thread_started(jni, t, hash, self.created);
                    }
                    jni.delete_local_ref(t);
                }
            }
        });
    }

    /// `Agent_OnAttach`, once started: what VMInit does at start-up, now, on the attaching
    /// thread: the threads running are announced, and the classes loaded are instrumented.
    pub fn attach_start(&self, jni: Jni) {
        self.vm_init_threads(jni);
        if let Some(ins) = &self.instrument {
            self.rec.agent_paused(false);
            ins.start_attached(&self.rec, jni, &crate::entry::last_hook_table());
            self.rec.agent_paused(true);
        }
    }

    /// A detach (`orca detach`): the classes get their original bytes back, the tracker and
    /// every event are switched off, every thread's records are drained, the files are
    /// flushed and closed (`RecordingEnded,detach`), and the exit line is printed. The JVM
    /// runs on as before the attach; the library stays loaded, its hooks returning at once.
    pub fn detach(&self, jni: Jni) {
        let restored = self
            .instrument
            .as_ref()
            .map(|ins| ins.detach(&self.rec, jni))
            .unwrap_or_default();
        crate::engines::tracker::uninstall(jni);
        crate::recorder::clock::Ticker::pause();
        let jvmti = &self.rec.jvmti;
        for e in [
            Event::VmInit,
            Event::VmDeath,
            Event::ThreadStart,
            Event::ThreadEnd,
            Event::ClassLoad,
            Event::ObjectFree,
            Event::VirtualThreadStart,
            Event::VirtualThreadEnd,
        ] {
            let _ = jvmti.set_event(false, e);
        }
        self.contention.stop(jvmti);
        self.rec.log.close_producers();
        if self.instrument.is_some() {
            self.rec.drain_all(jni);
        }
        self.rec.log.finish_at_detach();
        if self.instrument.is_some() {
            self.rec.count_buffered_late(jni);
        }
        self.finish();
        crate::say!(
            "orca: detached: {} classes given back their original bytes{}; the program runs as before the attach",
            restored.classes,
            if restored.differing > 0 {
                format!(" ({} of them still run other code: another agent's, or a retransformation failed)", restored.differing)
            } else {
                String::new()
            }
        );
    }

    /// ClassPrepare: JVMTI mode fills its method-ID cache, instrumentation mode binds sites.
    pub fn class_prepare(&self, jni: Jni, class: jclass) {
        if let Some(ins) = &self.instrument {
            ins.class_prepare(&self.rec, jni, class);
        } else if let Some(m) = &self.methods {
            m.register_if_tracked(&self.rec.jvmti, class);
        }
    }

    /// ObjectFree: a class loader that defined rewritten classes is gone, and its classes.
    pub fn loader_freed(&self, tag: i64) {
        if crate::recorder::ids::is_id_tag(tag) {
            return; // a class or a thread, whose ID stays taken
        }
        self.rec.meta.loader_freed(tag);
        if let Some(ins) = &self.instrument {
            ins.loader_freed(tag);
        }
    }

    /// VMDeath: stop the events, write everything out, print the summary line.
    pub fn vm_death(&self, jni: Jni) {
        // Other threads' events are late from here; this thread's exit lines are later
        // than any taken.
        self.rec.log.close_producers();
        if std::env::var_os("ORCA_TEST_TABLES").is_some() {
            // A test hook (tests/e2e/deploy.rs): what the offset-map tables hold at exit.
            let (loaders, classes, methods) = self.rec.meta.table_sizes();
            let pending = self.instrument.as_ref().map_or(0, |i| i.pending_classes());
            crate::say!("orca-test: tables: {loaders} loaders, {classes} classes, {methods} method maps, {pending} classes pending");
        }
        // (first: the owners of contentions under way are asked before the last drain)
        self.contention.stop(&self.rec.jvmti);
        if let Some(ins) = &self.instrument {
            ins.stop(&self.rec, jni);
        }
        if let Some(m) = &self.methods {
            m.stop(&self.rec.jvmti);
        }
        self.rec.log.finish_at_vm_death();
        if let Some(ms) = std::env::var("ORCA_TEST_EXIT_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            // A test hook (tests/e2e/deploy.rs): threads still running get time to produce
            // events after the last write, however busy the machine.
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        if self.instrument.is_some() {
            self.rec.count_buffered_late(jni);
        }
        self.finish();
    }

    /// Flushes the log and prints the exit line (once).
    pub fn finish(&self) {
        let mut t = self.rec.log.finish();
        // Events keep arriving late until the exit line is printed: count them all.
        t.late = self.rec.log.late_now();
        if !self.exit_printed.swap(true, Ordering::SeqCst) {
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
            if self.rec.walker.is_some() {
                let fast = self.rec.fast_walks.load(Ordering::Relaxed);
                let slow = self.rec.jvmti_walks.load(Ordering::Relaxed);
                extra.push_str(&format!(", {fast} of {} stacks walked fast", fast + slow));
            }
            let in_tracker = self.rec.orders_in_tracker.load(Ordering::Relaxed);
            let recorded = self.rec.orders_recorded.load(Ordering::Relaxed);
            if in_tracker + recorded > 0 {
                extra.push_str(&format!(
                    ", {in_tracker} of {} lock orders counted in the tracker",
                    in_tracker + recorded
                ));
            }
            let stretched = self.rec.long_holds_stretched.load(Ordering::Relaxed);
            if stretched > 0 {
                extra.push_str(&format!(
                    ", {stretched} long holds left out (stretched by the attach's instrumentation of the loaded classes)"
                ));
            }
            if let Some((first, last, removed)) = t.chunks {
                extra.push_str(&format!(
                    ", chunks {first:06} to {last:06} kept ({removed} older removed by the ring)"
                ));
            }
            if t.lost_to_io > 0 {
                extra.push_str(&format!(", {} lines lost to write errors", t.lost_to_io));
            }
            if t.writer_stopped {
                extra.push_str(&format!(
                    ", the writer thread stopped: {} events taken but never written, later ones counted as dropped",
                    t.abandoned
                ));
            } else if t.abandoned > 0 {
                extra.push_str(&format!(
                    ", {} events abandoned (the writer was stuck at exit)",
                    t.abandoned
                ));
            }
            if t.late > 0 {
                extra.push_str(&format!(
                    ", {} events from threads still running during {} not recorded",
                    t.late,
                    if self.session > 0 {
                        "the detach"
                    } else {
                        "JVM exit"
                    }
                ));
            }
            if t.abandoned == 0 && !t.writer_stopped {
                extra.push_str(&format!(
                    ", writer CPU {:.3} s",
                    t.writer_cpu_nanos as f64 / 1e9
                ));
            }
            crate::say!(
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
        if crate::engines::owners::is_own_thread() {
            return; // the agent's asker attaching: not a thread of the program
        }
        if let Some((state, true)) =
            threads::current_or_new(&self.rec.jvmti, thread, self.options.stack_depth)
        {
            let hash = state.hash;
            self.thread_started(jni, thread, hash, now_nanos());
        }
    }

    /// ThreadEnd: the thread's last records and summaries, then its `ThreadEnded`.
    pub fn thread_end(&self, jni: Jni) {
        if crate::engines::owners::is_own_thread() {
            return;
        }
        if let Some(state) = self.rec.current_state() {
            self.rec.recording_end(jni, state);
            crate::engines::tracker::close_inline(&self.rec, state, now_nanos());
        }
        if let Some(hash) = threads::remove_current(&self.rec.jvmti) {
            self.rec
                .push(now_nanos(), EventKind::ThreadEnded, hash, 0, Frames::new());
        }
    }
}
