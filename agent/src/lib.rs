//! `liborca.so`, the Orca JVMTI agent.
//!
//! Loaded with `java -agentpath:liborca.so=out/run Main`, it records what every thread does
//! with locks and threads into the three Orca files (docs/FORMAT.md). One file per concern:
//! [`options`] (the option string), [`jvmti`] (the only raw FFI), [`callbacks`] (JVMTI entry
//! points), [`agent`] (the context and event handling), [`tracked`] (the method-ID cache),
//! [`metadata`] (method and class IDs), [`threads`] (per-thread state), [`writer`] (the log
//! writer), [`clock`] and [`escape`] (the format's timestamps and text).

pub mod agent;
pub mod bytecode;
pub mod callbacks;
pub mod clock;
pub mod error;
pub mod escape;
pub mod instrument;
pub mod jvmti;
pub mod metadata;
pub mod monitors;
pub mod options;
pub mod sites;
pub mod summary;
pub mod threads;
pub mod tracked;
pub mod tracker;
pub mod writer;

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use jni_sys::{jint, JavaVM};

pub use agent::Agent;
use error::StartError;
use jvmti::{Capability, Event, Jvmti};
use options::{Mode, Options};
use writer::{Files, LogWriter};

const JNI_OK: jint = 0;
const JNI_ERR: jint = -1;

/// The agent context: the process's only global state, set once in `Agent_OnLoad`.
static AGENT: OnceLock<Agent> = OnceLock::new();

/// The agent, once `Agent_OnLoad` succeeded.
pub fn agent() -> Option<&'static Agent> {
    AGENT.get()
}

/// The JVMTI capabilities a mode cannot work without.
fn required_capabilities(mode: Mode) -> Vec<Capability> {
    let mut caps = vec![
        Capability::GenerateMonitorEvents,
        Capability::GetMonitorInfo,
        Capability::GetLineNumbers,
        Capability::GetSourceFileName,
        Capability::GetBytecodes,
    ];
    match mode {
        Mode::Jvmti => caps.extend([
            Capability::GenerateMethodEntryEvents,
            Capability::GenerateMethodExitEvents,
            Capability::AccessLocalVariables,
            Capability::GetOwnedMonitorStackDepthInfo,
        ]),
        Mode::Instrument => caps.push(Capability::GenerateAllClassHookEvents),
    }
    caps
}

fn capability_names(caps: &[Capability]) -> String {
    caps.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
}

fn start(vm: *mut JavaVM, options: Option<&str>) -> Result<(), StartError> {
    if AGENT.get().is_some() {
        return Err(StartError::AlreadyLoaded);
    }
    let options = Options::parse(options)?;
    if options.jdk && options.mode != Mode::Instrument {
        return Err(StartError::NeedsInstrument { key: "jdk" });
    }
    if options.trace_all && options.mode != Mode::Instrument {
        return Err(StartError::NeedsInstrument { key: "trace" });
    }
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
    let paths = options.paths();
    let files = Files::create(paths.clone()).map_err(|(path, source)| StartError::Output {
        prefix: options.prefix.clone(),
        path: path.display().to_string(),
        source,
    })?;
    let sites = sites::Sites::default();
    let instrument = (options.mode == Mode::Instrument)
        .then(|| instrument::Instrumentation::new(options.jdk, sites.counter.clone()));
    let agent = Agent {
        jvmti,
        options,
        paths,
        log: LogWriter::new(),
        meta: Default::default(),
        tracked: Default::default(),
        instrument,
        sites,
        recordings: Default::default(),
        exit_printed: Default::default(),
    };
    if AGENT.set(agent).is_err() {
        return Err(StartError::AlreadyLoaded);
    }
    let agent = AGENT.get().expect("just set");
    agent.log.start(files).map_err(StartError::WriterThread)?;
    jvmti.set_event_callbacks(&callbacks::table())?;
    for e in [
        Event::VmInit,
        Event::VmDeath,
        Event::ThreadStart,
        Event::ThreadEnd,
        Event::MonitorContendedEnter,
        Event::MonitorContendedEntered,
    ] {
        jvmti.set_event(true, e)?;
    }
    // JDK 21+: virtual threads have start and end events of their own, so that each gets a
    // ThreadStarted/ThreadEnded and its per-thread state is freed when it ends.
    if virtual_threads {
        jvmti.set_event(true, Event::VirtualThreadStart)?;
        jvmti.set_event(true, Event::VirtualThreadEnd)?;
    }
    eprintln!(
        "orca: recording (mode={}{}, stackdepth={}) to {}, {}, {}",
        agent.options.mode.name(),
        match (agent.options.mode, agent.options.trace_all) {
            (Mode::Jvmti, _) => "",
            (_, true) => ", trace=all",
            (_, false) => ", trace=summary",
        },
        agent.options.stack_depth,
        agent.paths[0].display(),
        agent.paths[1].display(),
        agent.paths[2].display()
    );
    Ok(())
}

/// The option string the JVM passed (`-agentpath:liborca.so=OPTIONS`), if any.
///
/// # Safety
/// `options` is null or a NUL-terminated string.
unsafe fn option_text(options: *mut c_char) -> Option<String> {
    if options.is_null() {
        None
    } else {
        Some(CStr::from_ptr(options).to_string_lossy().into_owned())
    }
}

/// Called by the JVM for `-agentpath:liborca.so[=OPTIONS]`. Any problem is one line on stderr
/// and a failed start: the JVM then refuses to run, so a typo never records silently wrong.
///
/// # Safety
/// Called by the JVM with its own `JavaVM*` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "C" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    callbacks::guard("Agent_OnLoad", JNI_ERR, || {
        let text = option_text(options);
        match start(vm, text.as_deref()) {
            Ok(()) => JNI_OK,
            Err(e) => {
                eprintln!("orca: {e}");
                JNI_ERR
            }
        }
    })
}

/// Why a late attach is refused, as one line for stderr. The options are checked as at
/// start-up, and the running JVM is asked which capabilities the mode needs that it no
/// longer offers, so the user learns the real obstacle.
fn refuse_attach(vm: *mut JavaVM, options: Option<&str>) -> String {
    const HOW: &str = "start the JVM with -agentpath:liborca.so=PREFIX instead";
    let options = match Options::parse(options) {
        Ok(o) => o,
        Err(e) => return format!("{e}"),
    };
    // SAFETY: `vm` is the JavaVM* the JVM passed to Agent_OnAttach.
    let jvmti = match unsafe { Jvmti::from_vm(vm) } {
        Ok(j) => j,
        Err(e) => return format!("loading into a running JVM is not supported ({e}); {HOW}"),
    };
    let missing = jvmti.missing_capabilities(&required_capabilities(options.mode));
    jvmti.dispose();
    match missing {
        Ok(m) if !m.is_empty() => format!(
            "loading into a running JVM is not supported: mode={} needs JVMTI capabilities this JVM offers only at start-up ({}); {HOW}",
            options.mode.name(),
            capability_names(&m)
        ),
        _ => format!(
            "loading into a running JVM is not supported: classes already loaded would not be instrumented and monitors already held would have no enter; {HOW}"
        ),
    }
}

/// Called for a late attach (`jcmd PID JVMTI.agent_load`): refused with the reason, because
/// the events of threads, classes and monitors already under way would be missing and
/// JVMTI mode needs capabilities only a start-up agent gets. The program runs on.
///
/// # Safety
/// Called by the JVM with its own `JavaVM*` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "C" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    callbacks::guard("Agent_OnAttach", JNI_ERR, || {
        let text = option_text(options);
        eprintln!("orca: {}", refuse_attach(vm, text.as_deref()));
        JNI_ERR
    })
}

/// Called when the JVM unloads the agent: a last chance to flush if VMDeath never came.
///
/// # Safety
/// Called by the JVM.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnUnload(_vm: *mut JavaVM) {
    callbacks::guard("Agent_OnUnload", (), || {
        if let Some(a) = agent() {
            a.finish();
        }
    })
}
