//! Every way into the agent from the JVM, in one place: `Agent_OnLoad`, `Agent_OnAttach`,
//! `Agent_OnUnload`, the JVMTI event callbacks and the tracker's native methods.
//!
//! Each is a thin `extern` shell: it catches panics ([`guard`]: none may unwind into the
//! JVM), finds the agent and hands over to safe Rust in [`crate::agent`] or an engine. The
//! global [`AGENT`] lives here, so nothing else reaches for global state; the tracker's natives
//! are bound from here (see [`bind`]), and the engines never import this module.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Mutex;

use jni_sys::{
    jboolean, jclass, jint, jlong, jmethodID, jobject, jvalue, JNIEnv, JavaVM, JNI_FALSE, JNI_TRUE,
};
use jvmti_sys::jvmtiEnv;

use crate::agent::{refuse_attach, Agent};
use crate::engines::tracker;
use crate::error::StartError;
use crate::jvmti::{jthread, jvmtiEventCallbacks, EventCallbacks, Jni};

const JNI_OK: jint = 0;
const JNI_ERR: jint = -1;

/// The agent context of the recording under way: the process's only global state, set in
/// `Agent_OnLoad`, or by each attach (`Agent_OnAttach`) and cleared by its detach. A context
/// is never freed (a callback may still hold it when its recording ends): a detached one
/// only keeps its tables, with every event switched off.
static AGENT: AtomicPtr<Agent> = AtomicPtr::new(std::ptr::null_mut());

/// Serialises attaches and detaches, and keeps the last recording's context (null: none),
/// whose numbers the next one continues.
static SESSIONS: Mutex<Option<&'static Agent>> = Mutex::new(None);

/// The agent of the recording under way, if any.
pub fn agent() -> Option<&'static Agent> {
    let p = AGENT.load(Ordering::Acquire);
    // SAFETY: a non-null pointer comes from Box::leak and is never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// What `Agent_OnAttach` returns besides 0 (`JNI_OK`), for `orca attach` to say why: the
/// JVM passes it back to the attaching tool as `return code: N` (cli/src/attach/hotspot.rs
/// has the same numbers).
mod attach_code {
    use jni_sys::jint;
    /// A recording is under way already (attached, or loaded at start-up).
    pub const ALREADY_RECORDING: jint = 101;
    /// `stop` with no attached recording under way.
    pub const NOT_RECORDING: jint = 102;
    /// The options were refused (the line is on the JVM's standard error).
    pub const BAD_OPTIONS: jint = 103;
    /// `mode=jvmti` cannot work in a running JVM.
    pub const JVMTI_MODE: jint = 104;
    /// The recording could not start (the line is on the JVM's standard error).
    pub const CANNOT_START: jint = 105;
    /// `dump=`: the dump could not be written (the line is on the JVM's standard error).
    pub const DUMP_FAILED: jint = 106;
}

/// `dump=PREFIX[,last=NANOS]` (`orca dump`): writes the last NANOS (all on disk without it)
/// of the recording under way to `PREFIX.orca`, `.methods`, `.classtable`, while it goes on.
/// The writer thread flushes and says what to copy ([`crate::recorder::writer::Snapshot`]);
/// the copy is made here, on the attach listener's thread: no program thread waits for it.
fn dump(text: &str) -> jint {
    let mut prefix = None;
    let mut last = None;
    for (i, item) in text.split(',').enumerate() {
        match item.split_once('=') {
            Some(("dump", p)) if i == 0 && !p.is_empty() => prefix = Some(p),
            Some(("last", n)) if i > 0 && last.is_none() => match n.parse::<u64>() {
                Ok(n) => last = Some(n),
                Err(_) => {
                    crate::say!("orca: dump: bad last={n}: expected nanoseconds");
                    return attach_code::BAD_OPTIONS;
                }
            },
            _ => {
                crate::say!("orca: dump: bad option '{item}'; expected dump=PREFIX[,last=NANOS]");
                return attach_code::BAD_OPTIONS;
            }
        }
    }
    let Some(prefix) = prefix else {
        return attach_code::BAD_OPTIONS;
    };
    let Some(a) = agent() else {
        crate::say!("orca: dump: no recording is under way in this JVM");
        return attach_code::NOT_RECORDING;
    };
    let Some(snap) = a.rec.log.snapshot(last, std::time::Duration::from_secs(10)) else {
        crate::say!("orca: dump: the log writer did not answer within 10 s (stopped, or stuck on a write); no dump written");
        return attach_code::DUMP_FAILED;
    };
    let chunks = snap.events.len();
    match orca_format::chunks::write_dump(
        snap.events,
        (&snap.methods.0, snap.methods.1),
        (&snap.classtable.0, snap.classtable.1),
        snap.at,
        std::path::Path::new(prefix),
    ) {
        Ok(bytes) => {
            crate::say!(
                "orca: dumped {} ({bytes} bytes of events from {chunks} {}) to {prefix}.orca, .methods, .classtable; the recording goes on",
                match last {
                    Some(n) => format!("the last {:.0} s", n as f64 / 1e9),
                    None => "all on disk".to_string(),
                },
                if snap.bounded { "chunks" } else { "event file" }
            );
            JNI_OK
        }
        Err(e) => {
            crate::say!("orca: dump: cannot write it ({e}); the recording goes on");
            attach_code::DUMP_FAILED
        }
    }
}

/// Whether an internal error was reported. The one global besides the agent context: a
/// panic can happen in `Agent_OnLoad` before the context exists, and must still be said once.
static PANIC_REPORTED: AtomicBool = AtomicBool::new(false);

/// Runs `f` for callback `name`; a panic is reported once on stderr and never crosses into
/// the JVM.
pub fn guard<R>(name: &str, default: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            if !PANIC_REPORTED.swap(true, Ordering::Relaxed) {
                let msg = e
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| e.downcast_ref::<String>().cloned());
                crate::say!("orca: internal error in {name} ({}); that event is lost, the program keeps running", msg.unwrap_or_default());
            }
            default
        }
    }
}

fn with_agent(name: &str, jni: *mut JNIEnv, f: impl FnOnce(&'static Agent, Jni)) {
    guard(name, (), || {
        if let Some(a) = agent() {
            // SAFETY: JVMTI passes the calling thread's JNIEnv to every callback.
            f(a, unsafe { Jni::from_raw(jni) })
        }
    })
}

unsafe extern "C" fn vm_init(_: *mut jvmtiEnv, jni: *mut JNIEnv, _thread: jthread) {
    with_agent("VMInit", jni, |a, jni| a.vm_init(jni));
}

unsafe extern "C" fn vm_death(_: *mut jvmtiEnv, jni: *mut JNIEnv) {
    with_agent("VMDeath", jni, |a, jni| a.vm_death(jni));
}

unsafe extern "C" fn thread_start(_: *mut jvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    with_agent("ThreadStart", jni, |a, jni| a.thread_start(jni, thread));
}

unsafe extern "C" fn thread_end(_: *mut jvmtiEnv, jni: *mut JNIEnv, _thread: jthread) {
    with_agent("ThreadEnd", jni, |a, jni| a.thread_end(jni));
}

unsafe extern "C" fn class_prepare(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    _thread: jthread,
    class: jclass,
) {
    with_agent("ClassPrepare", jni, |a, jni| a.class_prepare(jni, class));
}

/// ClassLoad: on only because the fast stack walker needs it (see
/// [`FastWalker`](crate::jvmti::FastWalker)); nothing to do.
unsafe extern "C" fn class_load(
    _: *mut jvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jthread,
    _class: jclass,
) {
}

/// ObjectFree: a tagged class loader was collected. No JNI here (the JVM forbids it).
unsafe extern "C" fn object_free(_: *mut jvmtiEnv, tag: jlong) {
    guard("ObjectFree", (), || {
        if let Some(a) = agent() {
            a.loader_freed(tag);
        }
    })
}

unsafe extern "C" fn method_entry(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
) {
    with_agent("MethodEntry", jni, |a, jni| {
        if let Some(m) = &a.methods {
            m.entry(&a.rec, jni, thread, method);
        }
    });
}

unsafe extern "C" fn method_exit(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    by_exception: jboolean,
    value: jvalue,
) {
    let thrown = by_exception != 0;
    // SAFETY: every jvalue is 8 bytes passed by value; the call decides which of them mean
    // something (a boolean's low byte, a stamp's eight).
    let bits = unsafe { value.j } as u64;
    with_agent("MethodExit", jni, |a, jni| {
        if let Some(m) = &a.methods {
            m.exit(&a.rec, jni, thread, method, thrown, bits);
        }
    });
}

unsafe extern "C" fn contended_enter(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    with_agent("MonitorContendedEnter", jni, |a, jni| {
        a.contention.enter(&a.rec, jni, thread, object)
    });
}

unsafe extern "C" fn contended_entered(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    with_agent("MonitorContendedEntered", jni, |a, jni| {
        a.contention.entered(&a.rec, jni, thread, object)
    });
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    class_being_redefined: jclass,
    loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    new_len: *mut jint,
    new_data: *mut *mut u8,
) {
    with_agent("ClassFileLoadHook", jni, |a, jni| {
        if new_len.is_null() || new_data.is_null() {
            return;
        }
        // SAFETY: JVMTI's class-load hook arguments.
        let Some((name, bytes)) = (unsafe { hook_args(name, len, data) }) else {
            return;
        };
        let Some(ins) = &a.instrument else {
            return;
        };
        if let Some(out) = ins.class_file(&a.rec, jni, class_being_redefined, loader, name, bytes) {
            if let Ok(mem) = a.rec.jvmti.allocate_copy(&out) {
                // SAFETY: JVMTI's out-parameters; the memory was allocated with JVMTI Allocate.
                unsafe {
                    *new_len = out.len() as jint;
                    *new_data = mem;
                }
            }
        }
    });
}

/// The name and bytes of a class-load hook's class (`None` for a bad length or pointer).
/// An empty class file (a loader may define one) goes to the rewriter too, which reports it
/// as unreadable like any other: the exit line counts every such class.
///
/// # Safety
/// `name` is null or NUL-terminated; `data` holds `len` bytes.
unsafe fn hook_args<'a>(
    name: *const c_char,
    len: jint,
    data: *const u8,
) -> Option<(Option<&'a str>, &'a [u8])> {
    if len < 0 || (data.is_null() && len > 0) {
        return None;
    }
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: JVMTI passes `len` bytes of class file at `data`.
        unsafe { std::slice::from_raw_parts(data, len as usize) }
    };
    // SAFETY: JVMTI passes a NUL-terminated name or null.
    let name = if name.is_null() {
        None
    } else {
        unsafe { CStr::from_ptr(name) }.to_str().ok()
    };
    Some((name, bytes))
}

/// The class-load hook of the environment that runs before every other agent able to
/// retransform: keeps the class file as it was loaded. Changes nothing.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn first_class_file_load_hook(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    _class_being_redefined: jclass,
    _loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    _new_len: *mut jint,
    _new_data: *mut *mut u8,
) {
    with_agent("ClassFileLoadHook", jni, |a, _| {
        // SAFETY: JVMTI's class-load hook arguments.
        let Some((name, bytes)) = (unsafe { hook_args(name, len, data) }) else {
            return;
        };
        if let Some(ins) = &a.instrument {
            ins.class_file_first(name, bytes);
        }
    });
}

/// The class-load hook of the environment that runs after every agent of the command line:
/// sees the class as it will run, and instruments it again if an agent replaced Orca's code.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn last_class_file_load_hook(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    class_being_redefined: jclass,
    loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    new_len: *mut jint,
    new_data: *mut *mut u8,
) {
    with_agent("ClassFileLoadHook", jni, |a, jni| {
        if new_len.is_null() || new_data.is_null() {
            return;
        }
        // SAFETY: JVMTI's class-load hook arguments.
        let Some((name, bytes)) = (unsafe { hook_args(name, len, data) }) else {
            return;
        };
        let Some(ins) = &a.instrument else {
            return;
        };
        if let Some(out) =
            ins.class_file_last(&a.rec, jni, class_being_redefined, loader, name, bytes)
        {
            if let Ok(mem) = a.rec.jvmti.allocate_copy(&out) {
                // SAFETY: JVMTI's out-parameters; the memory was allocated with JVMTI Allocate.
                unsafe {
                    *new_len = out.len() as jint;
                    *new_data = mem;
                }
            }
        }
    });
}

/// The callbacks of the first hook's environment (instrumentation mode).
pub fn first_hook_table() -> EventCallbacks {
    EventCallbacks {
        base: jvmtiEventCallbacks {
            ClassFileLoadHook: Some(first_class_file_load_hook),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The callbacks of the last hook's environment (instrumentation mode).
pub fn last_hook_table() -> EventCallbacks {
    EventCallbacks {
        base: jvmtiEventCallbacks {
            ClassFileLoadHook: Some(last_class_file_load_hook),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The callback table (both modes; each enables the events it needs).
pub fn table() -> EventCallbacks {
    let base = jvmtiEventCallbacks {
        VMInit: Some(vm_init),
        VMDeath: Some(vm_death),
        ThreadStart: Some(thread_start),
        ThreadEnd: Some(thread_end),
        ClassPrepare: Some(class_prepare),
        ClassLoad: Some(class_load),
        MethodEntry: Some(method_entry),
        MethodExit: Some(method_exit),
        MonitorContendedEnter: Some(contended_enter),
        MonitorContendedEntered: Some(contended_entered),
        ClassFileLoadHook: Some(class_file_load_hook),
        ObjectFree: Some(object_free),
        ..Default::default()
    };
    EventCallbacks {
        base,
        virtual_thread_start: Some(thread_start),
        virtual_thread_end: Some(thread_end),
        ..Default::default()
    }
}

/// `OrcaProfilerTracker.bind()`, called by the tracker's static initializer: binds every
/// other native of the tracker ([`tracker_natives`]) with `RegisterNatives`; true when all
/// are bound (the tracker keeps it in `bound`, which [`tracker::install`] reads).
///
/// The only tracker native the JVM finds by its JNI name (HotSpot looks names up in agent
/// libraries too), so the only one the library exports. The others are registered from here
/// because HotSpot prints a warning on the program's output when `RegisterNatives` rebinds a
/// class of a named module of the boot loader (`java.base`) and the caller's loader is
/// another, or there is no caller (a JVMTI callback has none): made from a native of the
/// tracker, the call's caller is the tracker's static initializer, of the boot loader.
#[export_name = "Java_java_lang_OrcaProfilerTracker_bind"]
unsafe extern "system" fn bind(env: *mut JNIEnv, class: jclass) -> jboolean {
    guard("OrcaProfilerTracker.bind", 0, || {
        // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
        let jni = unsafe { Jni::from_raw(env) };
        jboolean::from(jni.register_natives(class, &tracker_natives()))
    })
}

/// The tracker's natives but `bind`: name, JNI signature (the class files moved to
/// `java.lang` by build.rs) and function. Each function is a guarded shell like every other
/// way into the agent.
fn tracker_natives() -> [(&'static CStr, &'static CStr, *mut c_void); 27] {
    [
        (c"event", c"(ILjava/lang/Object;)V", event as *mut c_void),
        (
            c"register",
            c"(Ljava/lang/OrcaRec;)Ljava/lang/OrcaRec;",
            register as *mut c_void,
        ),
        (c"flush", c"(Ljava/lang/OrcaRec;)V", flush as *mut c_void),
        (c"stack", c"(Ljava/lang/OrcaRec;I)I", stack as *mut c_void),
        (
            c"longHold",
            c"(Ljava/lang/OrcaRec;IIJJJ)V",
            long_hold as *mut c_void,
        ),
        (
            c"hookEnter",
            c"(ILjava/lang/Object;)V",
            hook_enter as *mut c_void,
        ),
        (
            c"hookEnterAt",
            c"(ILjava/lang/Object;I)V",
            hook_enter_at as *mut c_void,
        ),
        (c"hookExit", c"()V", hook_exit as *mut c_void),
        (c"callerSite", c"()I", caller_site as *mut c_void),
        (c"hookCallerSite", c"()I", hook_caller_site as *mut c_void),
        (
            c"semEnter",
            c"(ILjava/lang/Object;IJ)V",
            sem_enter as *mut c_void,
        ),
        (
            c"lockOwner",
            c"(ILjava/lang/Object;)I",
            lock_owner as *mut c_void,
        ),
        (
            c"reentered",
            c"(Ljava/lang/Object;)Z",
            reentered as *mut c_void,
        ),
        (
            c"lockContended",
            c"(ILjava/lang/Object;JJII)V",
            lock_contended as *mut c_void,
        ),
        (
            c"lockBlocked",
            c"(ILjava/lang/Object;J)V",
            lock_blocked as *mut c_void,
        ),
        (
            c"lockEnter",
            c"(ILjava/lang/Object;J)V",
            lock_enter as *mut c_void,
        ),
        (c"lockEnd", c"(IJ)V", lock_end as *mut c_void),
        (
            c"lockThrew",
            c"(ILjava/lang/Object;I)Z",
            lock_threw as *mut c_void,
        ),
        (c"lockLongHold", c"(IIJJJ)V", lock_long_hold as *mut c_void),
        (
            c"lockHeldAtStart",
            c"(ILjava/lang/Object;IZJ)V",
            lock_held_at_start as *mut c_void,
        ),
        (
            c"name",
            c"(Ljava/lang/Object;I)Z",
            name_object as *mut c_void,
        ),
        (
            c"callEnter",
            c"(ILjava/lang/Object;I)V",
            call_enter as *mut c_void,
        ),
        (
            c"callEnterVia",
            c"(ILjava/lang/Class;)V",
            call_enter_via as *mut c_void,
        ),
        (c"callExit0", c"()V", call_exit as *mut c_void),
        (c"wakeClock", c"()V", wake_clock as *mut c_void),
        (c"threadCpu", c"()J", thread_cpu as *mut c_void),
        (c"stackRoom", c"()Z", stack_room as *mut c_void),
    ]
}

/// `OrcaProfilerTracker.stackRoom()`: whether a report section begun now can end without a
/// StackOverflowError (engines/stack_room.rs). No JNI, no lock: a compare after the thread's
/// first call.
unsafe extern "system" fn stack_room(_env: *mut JNIEnv, _class: jclass) -> jboolean {
    guard("OrcaProfilerTracker.stackRoom", JNI_FALSE, || {
        if crate::engines::stack_room::has_room() {
            JNI_TRUE
        } else {
            JNI_FALSE
        }
    })
}

/// `OrcaProfilerTracker.threadCpu()`: the calling thread's CPU time in nanoseconds, read at
/// most once per sampling window (10 ms) by a thread that locks. A system call, no JNI.
unsafe extern "system" fn thread_cpu(_env: *mut JNIEnv, _class: jclass) -> jlong {
    guard("OrcaProfilerTracker.threadCpu", -1, || {
        crate::recorder::clock::thread_cpu_nanos() as jlong
    })
}

/// `OrcaProfilerTracker.wakeClock()`: a hold found the coarse clock stale (the program was
/// idle), so the ticker ticks again. Never blocks (an unpark).
unsafe extern "system" fn wake_clock(_env: *mut JNIEnv, _class: jclass) {
    guard(
        "OrcaProfilerTracker.wakeClock",
        (),
        crate::recorder::clock::Ticker::wake,
    )
}

/// `OrcaProfilerTracker.event(int, Object)`: never throws, never blocks.
unsafe extern "system" fn event(env: *mut JNIEnv, _class: jclass, kind: jint, subject: jobject) {
    guard("OrcaProfilerTracker.event", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            tracker::event(&a.rec, unsafe { Jni::from_raw(env) }, kind, subject);
        }
    })
}

/// `OrcaProfilerTracker.hookEnter(int, Object)`: a hooked JDK method begins.
unsafe extern "system" fn hook_enter(
    env: *mut JNIEnv,
    _class: jclass,
    kind: jint,
    subject: jobject,
) {
    guard("OrcaProfilerTracker.hookEnter", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            tracker::hook_enter(&a.rec, unsafe { Jni::from_raw(env) }, kind, subject);
        }
    })
}

/// `OrcaProfilerTracker.hookEnterAt(int, Object, int)`: a hooked JDK method begins at a
/// call site with a static ID.
unsafe extern "system" fn hook_enter_at(
    env: *mut JNIEnv,
    _class: jclass,
    kind: jint,
    subject: jobject,
    site: jint,
) {
    guard("OrcaProfilerTracker.hookEnterAt", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            let jni = unsafe { Jni::from_raw(env) };
            tracker::hook_enter_at(&a.rec, jni, (kind, subject), site.max(0) as u32);
        }
    })
}

/// `OrcaProfilerTracker.callEnter(int, Object, int)`: a tracked native is called (inline
/// call site, with its site ID or 0).
unsafe extern "system" fn call_enter(
    env: *mut JNIEnv,
    _class: jclass,
    kind: jint,
    subject: jobject,
    site: jint,
) {
    guard("OrcaProfilerTracker.callEnter", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            let jni = unsafe { Jni::from_raw(env) };
            tracker::call_enter(&a.rec, jni, (kind, subject), site as u32);
        }
    })
}

/// `OrcaProfilerTracker.callEnterVia(int, Class)`: `Owner.sleep(J)V` called, Owner not Thread.
unsafe extern "system" fn call_enter_via(
    env: *mut JNIEnv,
    _class: jclass,
    kind: jint,
    owner: jclass,
) {
    guard("OrcaProfilerTracker.callEnterVia", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            tracker::call_enter_via(&a.rec, unsafe { Jni::from_raw(env) }, kind, owner);
        }
    })
}

/// `OrcaProfilerTracker.callExit0()`: an inline native call returned.
unsafe extern "system" fn call_exit(env: *mut JNIEnv, _class: jclass) {
    guard("OrcaProfilerTracker.callExit0", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::call_exit(&a.rec, unsafe { Jni::from_raw(env) });
        }
    })
}

/// `OrcaProfilerTracker.hookExit()`: a hooked JDK method returns or throws.
unsafe extern "system" fn hook_exit(env: *mut JNIEnv, _class: jclass) {
    guard("OrcaProfilerTracker.hookExit", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::hook_exit(&a.rec, unsafe { Jni::from_raw(env) });
        }
    })
}

/// `OrcaProfilerTracker.register(Rec)`: the Rec the agent drains for the thread, or null.
unsafe extern "system" fn register(env: *mut JNIEnv, _class: jclass, rec: jobject) -> jobject {
    guard("OrcaProfilerTracker.register", std::ptr::null_mut(), || {
        let Some(a) = agent() else {
            return std::ptr::null_mut();
        };
        // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
        tracker::register(&a.rec, unsafe { Jni::from_raw(env) }, rec)
    })
}

/// `OrcaProfilerTracker.flush(Rec)`.
unsafe extern "system" fn flush(env: *mut JNIEnv, _class: jclass, _rec: jobject) {
    guard("OrcaProfilerTracker.flush", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::flush(&a.rec, unsafe { Jni::from_raw(env) });
        }
    })
}

/// `OrcaProfilerTracker.stack(Rec, int)`.
unsafe extern "system" fn stack(
    env: *mut JNIEnv,
    _class: jclass,
    _rec: jobject,
    site: jint,
) -> jint {
    guard("OrcaProfilerTracker.stack", 0, || match agent() {
        // SAFETY: as above.
        Some(a) => tracker::stack(&a.rec, unsafe { Jni::from_raw(env) }, site as u32),
        None => 0,
    })
}

/// `OrcaProfilerTracker.longHold(Rec, int, int, long, long)`.
unsafe extern "system" fn long_hold(
    env: *mut JNIEnv,
    _class: jclass,
    _rec: jobject,
    site: jint,
    hash: jint,
    nanos: jlong,
    end: jlong,
    start: jlong,
) {
    guard("OrcaProfilerTracker.longHold", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::long_hold(
                &a.rec,
                unsafe { Jni::from_raw(env) },
                site as u32,
                hash as u32,
                nanos.max(0) as u64,
                (start.max(0) as u64, end.max(0) as u64),
            );
        }
    })
}

/// `OrcaProfilerTracker.callerSite()`.
unsafe extern "system" fn caller_site(env: *mut JNIEnv, _class: jclass) -> jint {
    guard("OrcaProfilerTracker.callerSite", 0, || match agent() {
        // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
        Some(a) => tracker::caller_site(&a.rec, unsafe { Jni::from_raw(env) }),
        None => 0,
    })
}

/// `OrcaProfilerTracker.hookCallerSite()`.
unsafe extern "system" fn hook_caller_site(env: *mut JNIEnv, _class: jclass) -> jint {
    guard("OrcaProfilerTracker.hookCallerSite", 0, || match agent() {
        // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
        Some(a) => tracker::hook_caller_site(&a.rec, unsafe { Jni::from_raw(env) }),
        None => 0,
    })
}

/// `OrcaProfilerTracker.semEnter(int, Object, int, long)`.
unsafe extern "system" fn sem_enter(
    env: *mut JNIEnv,
    _class: jclass,
    kind: jint,
    sem: jobject,
    site: jint,
    since: jlong,
) {
    guard("OrcaProfilerTracker.semEnter", (), || {
        if let Some(a) = agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            tracker::sem_enter(
                &a.rec,
                unsafe { Jni::from_raw(env) },
                (kind, sem),
                site as u32,
                since.max(0) as u64,
            );
        }
    })
}

/// `OrcaProfilerTracker.lockOwner(Object)`.
unsafe extern "system" fn lock_owner(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    sync: jobject,
) -> jint {
    guard("OrcaProfilerTracker.lockOwner", 0, || match agent() {
        // SAFETY: as above.
        Some(a) => tracker::lock_owner(&a.rec, unsafe { Jni::from_raw(env) }, report, sync),
        None => 0,
    })
}

/// `OrcaProfilerTracker.reentered(Object)`.
unsafe extern "system" fn reentered(
    env: *mut JNIEnv,
    _class: jclass,
    monitor: jobject,
) -> jboolean {
    let _ = env;
    guard("OrcaProfilerTracker.reentered", 0, || match agent() {
        Some(a) => tracker::reentered(&a.rec, monitor) as jboolean,
        None => 0,
    })
}

/// `OrcaProfilerTracker.lockContended(int, Object, long, long, int, int)`.
unsafe extern "system" fn lock_contended(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    sync: jobject,
    t0: jlong,
    t: jlong,
    owner: jint,
    outcome: jint,
) {
    guard("OrcaProfilerTracker.lockContended", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::lock_contended(
                &a.rec,
                unsafe { Jni::from_raw(env) },
                (report, sync),
                (t0.max(0) as u64, t.max(0) as u64),
                owner as u32,
                outcome,
            );
        }
    })
}

/// `OrcaProfilerTracker.lockEnter(int, Object, long)`.
unsafe extern "system" fn lock_enter(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    lock: jobject,
    t0: jlong,
) {
    guard("OrcaProfilerTracker.lockEnter", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            let jni = unsafe { Jni::from_raw(env) };
            tracker::lock_enter(&a.rec, jni, (report, lock), t0.max(0) as u64);
        }
    })
}

/// `OrcaProfilerTracker.lockBlocked(int, Object, long)`.
unsafe extern "system" fn lock_blocked(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    sync: jobject,
    t0: jlong,
) {
    guard("OrcaProfilerTracker.lockBlocked", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            let jni = unsafe { Jni::from_raw(env) };
            tracker::lock_blocked(&a.rec, jni, (report, sync), t0.max(0) as u64);
        }
    })
}

/// `OrcaProfilerTracker.lockEnd(int, long)`.
unsafe extern "system" fn lock_end(env: *mut JNIEnv, _class: jclass, outcome: jint, t: jlong) {
    guard("OrcaProfilerTracker.lockEnd", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            let jni = unsafe { Jni::from_raw(env) };
            tracker::lock_end(&a.rec, jni, outcome, t.max(0) as u64);
        }
    })
}

/// `OrcaProfilerTracker.lockThrew(int, Object, int)`.
unsafe extern "system" fn lock_threw(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    sync: jobject,
    holds: jint,
) -> jboolean {
    guard("OrcaProfilerTracker.lockThrew", 0, || match agent() {
        Some(a) => {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            let jni = unsafe { Jni::from_raw(env) };
            let holds = holds.max(0) as u32;
            jboolean::from(tracker::lock_threw(&a.rec, jni, (report, sync), holds))
        }
        None => 0,
    })
}

/// `OrcaProfilerTracker.name(Object, int)`.
unsafe extern "system" fn name_object(
    env: *mut JNIEnv,
    _class: jclass,
    obj: jobject,
    hash: jint,
) -> jboolean {
    guard("OrcaProfilerTracker.name", 1, || match agent() {
        Some(a) => {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            let jni = unsafe { Jni::from_raw(env) };
            jboolean::from(tracker::name(&a.rec, jni, obj, hash as u32))
        }
        None => 0,
    })
}

/// `OrcaProfilerTracker.lockLongHold(int, int, long, long)`.
unsafe extern "system" fn lock_long_hold(
    env: *mut JNIEnv,
    _class: jclass,
    site: jint,
    hash: jint,
    nanos: jlong,
    end: jlong,
    start: jlong,
) {
    guard("OrcaProfilerTracker.lockLongHold", (), || {
        if let Some(a) = agent() {
            // SAFETY: as above.
            tracker::lock_long_hold(
                &a.rec,
                unsafe { Jni::from_raw(env) },
                site as u32,
                hash as u32,
                nanos.max(0) as u64,
                (start.max(0) as u64, end.max(0) as u64),
            );
            if test_long_hold_pause() {
                // The tracker puts the hold's record when this returns: a detach now finds the
                // line written and the record not (cli/tests/attach.rs).
                crate::say!("orca-test: LockHold written; waiting for the detach");
                let t = std::time::Instant::now();
                while agent().is_some_and(|b| std::ptr::eq(a, b))
                    && t.elapsed() < std::time::Duration::from_secs(30)
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    })
}

/// A test hook: with `ORCA_TEST_LONG_HOLD_PAUSE` set, a thread that has written a `LockHold`
/// line waits, before its hold record is put, until the recording is detached, so that a
/// test can detach in that window every time.
fn test_long_hold_pause() -> bool {
    static PAUSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| std::env::var_os("ORCA_TEST_LONG_HOLD_PAUSE").is_some())
}

/// `OrcaProfilerTracker.lockHeldAtStart(int, Object, int, boolean, long)`: written only by a
/// recording an attach started (a recording from start-up saw every acquisition; what it
/// did not see is not a hold from before it).
unsafe extern "system" fn lock_held_at_start(
    env: *mut JNIEnv,
    _class: jclass,
    report: jint,
    sync: jobject,
    hash: jint,
    read: jboolean,
    t: jlong,
) {
    guard("OrcaProfilerTracker.lockHeldAtStart", (), || {
        if let Some(a) = agent().filter(|a| a.session > 0) {
            // SAFETY: as above.
            tracker::lock_held_at_start(
                &a.rec,
                unsafe { Jni::from_raw(env) },
                (report, sync),
                (hash as u32, read != 0),
                t.max(0) as u64,
            );
        }
    })
}

/// # Safety
/// `vm` is the `JavaVM*` the JVM passed to `Agent_OnLoad`.
unsafe fn start(vm: *mut JavaVM, options: Option<&str>) -> Result<(), StartError> {
    let mut last = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    if last.is_some() {
        return Err(StartError::AlreadyLoaded);
    }
    // SAFETY: as this function's.
    let (agent, pending) = unsafe { Agent::create(vm, options, 0) }?;
    let agent: &'static Agent = Box::leak(Box::new(agent));
    *last = Some(agent);
    AGENT.store(agent as *const Agent as *mut Agent, Ordering::Release);
    if let Some(ins) = &agent.instrument {
        // SAFETY: as this function's.
        unsafe { ins.create_first_env(vm, &first_hook_table()) };
    }
    agent.start(pending, &table())
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
    guard("Agent_OnLoad", JNI_ERR, || {
        let text = option_text(options);
        match start(vm, text.as_deref()) {
            Ok(()) => JNI_OK,
            Err(e @ StartError::Refused(_)) => {
                crate::say!("orca: {e}");
                JNI_OK
            }
            Err(e) => {
                crate::say!("orca: {e}");
                JNI_ERR
            }
        }
    })
}

/// Called for each load into a running JVM (`orca attach`, or `jcmd PID JVMTI.agent_load`;
/// the library is loaded once and stays): with the options of `-agentpath`, starts a
/// recording (instrumentation mode only); with `stop`, ends the recording an attach started
/// (`orca detach`). Every problem is one line on the JVM's standard error and a return code
/// the attaching tool gets ([`attach_code`]); the program runs on.
///
/// # Safety
/// Called by the JVM with its own `JavaVM*` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "C" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    guard("Agent_OnAttach", JNI_ERR, || {
        let text = option_text(options);
        if text.as_deref().map(str::trim) == Some("started") {
            return attach_started();
        }
        let mut last = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = text
            .as_deref()
            .map(str::trim)
            .filter(|t| t.starts_with("dump="))
        {
            // Under the lock: a dump and a detach (or another dump) take turns.
            return dump(t);
        }
        // SAFETY: the JavaVM* of the running VM; the attach listener is a Java thread.
        let Some(jni) = (unsafe { Jni::from_vm(vm) }) else {
            crate::say!("orca: cannot attach: the attaching thread has no JNI environment");
            return attach_code::CANNOT_START;
        };
        if text.as_deref().map(str::trim) == Some("stop") {
            return match agent() {
                Some(a) if a.session > 0 => {
                    a.detach(jni);
                    AGENT.store(std::ptr::null_mut(), Ordering::Release);
                    JNI_OK
                }
                _ => {
                    crate::say!(
                        "orca: stop: no recording started by an attach is under way in this JVM"
                    );
                    attach_code::NOT_RECORDING
                }
            };
        }
        if agent().is_some() {
            crate::say!("orca: this JVM is already being recorded by Orca; stop that recording first (orca detach PID)");
            return attach_code::ALREADY_RECORDING;
        }
        if let Some(line) = refuse_attach(vm, text.as_deref()) {
            crate::say!("orca: {line}");
            return attach_code::JVMTI_MODE;
        }
        let session = last.map_or(1, |a| a.session + 1);
        // SAFETY: as this function's.
        let (agent, pending) = match unsafe { Agent::create(vm, text.as_deref(), session) } {
            Ok(x) => x,
            Err(e) => {
                crate::say!("orca: {e}");
                return match e {
                    StartError::Output { .. }
                    | StartError::Refused(_)
                    | StartError::Jvmti(_)
                    | StartError::WriterThread(_) => attach_code::CANNOT_START,
                    _ => attach_code::BAD_OPTIONS,
                };
            }
        };
        let agent: &'static Agent = Box::leak(Box::new(agent));
        *last = Some(agent);
        if let Err(e) = agent.start(pending, &table()) {
            crate::say!("orca: {e}");
            return attach_code::CANNOT_START;
        }
        AGENT.store(agent as *const Agent as *mut Agent, Ordering::Release);
        let vm_addr = vm as usize;
        let spawned = std::thread::Builder::new()
            .name("orca-attach".into())
            .spawn(move || {
                guard("orca-attach", (), || {
                    // SAFETY: the running VM's JavaVM*, which outlives the process's threads.
                    unsafe { attach_thread(vm_addr as *mut JavaVM, agent) }
                })
            });
        if let Err(e) = spawned {
            crate::say!("orca: cannot start the thread that instruments the classes ({e}); recording monitor contention and threads only");
        }
        JNI_OK
    })
}

/// `started`: waits (up to 10 s) until the recording an attach started has its classes
/// instrumented, so that `orca attach` returns when code that runs from then on is
/// recorded. The instrumentation runs on the agent's own thread (see [`attach_thread`]),
/// which this does not hold up: it takes no lock.
fn attach_started() -> jint {
    let start = std::time::Instant::now();
    loop {
        let Some(a) = agent().filter(|a| a.session > 0) else {
            return attach_code::NOT_RECORDING;
        };
        match a.attach_done.load(Ordering::Acquire) {
            1 => return JNI_OK,
            2 => return attach_code::CANNOT_START,
            _ if start.elapsed() > std::time::Duration::from_secs(10) => {
                return attach_code::CANNOT_START
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
}

/// The rest of an attach, on a thread of the agent's attached to the VM once
/// `Agent_OnAttach` has returned (the tracker's natives can be bound only then: see
/// [`tracker::bind_attached`]): the tracker bound, the classes instrumented. Skipped when a
/// detach came first.
///
/// # Safety
/// `vm` is the running VM's `JavaVM*`.
unsafe fn attach_thread(vm: *mut JavaVM, ours: &'static Agent) {
    // SAFETY: as this function's; the thread detaches below.
    let Some(jni) = (unsafe { Jni::attach_current_thread(vm, c"orca-attach") }) else {
        crate::say!("orca: cannot attach a thread to the JVM to instrument the classes; recording monitor contention and threads only");
        return;
    };
    let bound = tracker::bind_attached(jni, std::time::Duration::from_secs(10));
    {
        let _serial = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
        let current = agent().is_some_and(|a| std::ptr::eq(a, ours));
        let ok = match bound {
            Ok(()) if current => {
                ours.attach_start(jni);
                true
            }
            Err(e) if current => {
                crate::say!("orca: {e}; recording without instrumentation (monitor contention and threads only)");
                false
            }
            _ => false,
        };
        ours.attach_done
            .store(if ok { 1 } else { 2 }, Ordering::Release);
    }
    // SAFETY: as this function's; no reference of this thread is used after.
    unsafe { Jni::detach_current_thread(vm) };
}

/// Called when the JVM unloads the agent: a last chance to flush if VMDeath never came.
///
/// # Safety
/// Called by the JVM.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnUnload(_vm: *mut JavaVM) {
    guard("Agent_OnUnload", (), || {
        if let Some(a) = agent() {
            a.finish();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every native the tracker declares is registered by `bind` with its exact signature, and
    /// nothing else is: `RegisterNatives` binds all or none, and a native left out would throw
    /// UnsatisfiedLinkError, which the tracker swallows (its events silently lost).
    #[test]
    fn bind_registers_every_native_of_the_tracker() {
        let class = cafebabe::parse_class(tracker::CLASS_BYTES).expect("the embedded tracker");
        let mut declared: Vec<String> = class
            .methods
            .iter()
            .filter(|m| m.access_flags.contains(cafebabe::MethodAccessFlags::NATIVE))
            .map(|m| format!("{}{}", m.name, m.descriptor))
            .filter(|m| m != "bind()Z")
            .collect();
        let mut registered: Vec<String> = tracker_natives()
            .iter()
            .map(|(name, signature, _)| {
                format!("{}{}", name.to_str().unwrap(), signature.to_str().unwrap())
            })
            .collect();
        declared.sort();
        registered.sort();
        assert_eq!(registered, declared);
    }
}
