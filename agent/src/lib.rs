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
pub mod options;
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

fn start(vm: *mut JavaVM, options: Option<&str>) -> Result<(), StartError> {
    if AGENT.get().is_some() {
        return Err(StartError::AlreadyLoaded);
    }
    let options = Options::parse(options)?;
    if options.jdk && options.mode != Mode::Instrument {
        return Err(StartError::NeedsInstrument { key: "jdk" });
    }
    // SAFETY: `vm` is the JavaVM* the JVM passed to Agent_OnLoad.
    let jvmti = unsafe { Jvmti::from_vm(vm) }?;
    let mut caps = vec![
        Capability::GenerateMonitorEvents,
        Capability::GetMonitorInfo,
        Capability::GetLineNumbers,
        Capability::GetSourceFileName,
        Capability::GetBytecodes,
    ];
    match options.mode {
        Mode::Jvmti => caps.extend([
            Capability::GenerateMethodEntryEvents,
            Capability::GenerateMethodExitEvents,
            Capability::AccessLocalVariables,
            Capability::GetOwnedMonitorStackDepthInfo,
        ]),
        Mode::Instrument => caps.push(Capability::GenerateAllClassHookEvents),
    }
    let granted = jvmti
        .add_capabilities(&caps, &[Capability::SupportVirtualThreads])
        .map_err(StartError::Capability)?;
    let paths = options.paths();
    let files = Files::create(paths.clone()).map_err(|(path, source)| StartError::Output {
        prefix: options.prefix.clone(),
        path: path.display().to_string(),
        source,
    })?;
    let instrument =
        (options.mode == Mode::Instrument).then(|| instrument::Instrumentation::new(options.jdk));
    let agent = Agent {
        jvmti,
        options,
        paths,
        log: LogWriter::new(),
        meta: Default::default(),
        tracked: Default::default(),
        instrument,
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
    if granted.contains(&Capability::SupportVirtualThreads) {
        jvmti.set_event(true, Event::VirtualThreadStart)?;
        jvmti.set_event(true, Event::VirtualThreadEnd)?;
    }
    eprintln!(
        "orca: recording (mode={}, stackdepth={}) to {}, {}, {}",
        agent.options.mode.name(),
        agent.options.stack_depth,
        agent.paths[0].display(),
        agent.paths[1].display(),
        agent.paths[2].display()
    );
    Ok(())
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
        let text = if options.is_null() {
            None
        } else {
            Some(CStr::from_ptr(options).to_string_lossy().into_owned())
        };
        match start(vm, text.as_deref()) {
            Ok(()) => JNI_OK,
            Err(e) => {
                eprintln!("orca: {e}");
                JNI_ERR
            }
        }
    })
}

/// Called for a late attach (`jcmd PID JVMTI.agent_load`): not supported, because the events
/// of threads and calls already under way would be missing and MethodEntry events need the
/// capabilities only a start-up agent gets.
///
/// # Safety
/// Called by the JVM.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnAttach(
    _vm: *mut JavaVM,
    _options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    callbacks::guard("Agent_OnAttach", JNI_ERR, || {
        eprintln!("orca: loading into a running JVM is not supported; start the JVM with -agentpath:liborca.so=...");
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
