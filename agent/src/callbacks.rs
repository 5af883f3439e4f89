//! JVMTI event callbacks: the `extern "C"` entry points JVMTI calls, each a thin shell that
//! catches panics and hands over to [`Agent`] methods in safe Rust.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use jni_sys::{jboolean, jclass, jint, jmethodID, jobject, jvalue, JNIEnv};
use jvmti_sys::jvmtiEnv;

use crate::jvmti::{jthread, jvmtiEventCallbacks, EventCallbacks, Jni};
use crate::{agent, Agent};

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
                eprintln!("orca: internal error in {name} ({}); that event is lost, the program keeps running", msg.unwrap_or_default());
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

unsafe extern "C" fn method_entry(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
) {
    with_agent("MethodEntry", jni, |a, jni| {
        a.method_entry(jni, thread, method)
    });
}

unsafe extern "C" fn method_exit(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    _by_exception: jboolean,
    _value: jvalue,
) {
    with_agent("MethodExit", jni, |a, _| a.method_exit(thread, method));
}

unsafe extern "C" fn contended_enter(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    with_agent("MonitorContendedEnter", jni, |a, jni| {
        a.contended_enter(jni, thread, object)
    });
}

unsafe extern "C" fn contended_entered(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    with_agent("MonitorContendedEntered", jni, |a, jni| {
        a.contended_entered(jni, thread, object)
    });
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    _: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    _class_being_redefined: jclass,
    loader: jobject,
    name: *const std::ffi::c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    new_len: *mut jint,
    new_data: *mut *mut u8,
) {
    with_agent("ClassFileLoadHook", jni, |a, jni| {
        if len < 0 || (data.is_null() && len > 0) || new_len.is_null() || new_data.is_null() {
            return;
        }
        // An empty class file (a loader may define one) goes to the rewriter too, which
        // reports it as unreadable like any other: the exit line counts every such class.
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
            unsafe { std::ffi::CStr::from_ptr(name) }.to_str().ok()
        };
        if let Some(out) = a.class_file(jni, loader, name, bytes) {
            if let Ok(mem) = a.jvmti.allocate_copy(&out) {
                // SAFETY: JVMTI's out-parameters; the memory was allocated with JVMTI Allocate.
                unsafe {
                    *new_len = out.len() as jint;
                    *new_data = mem;
                }
            }
        }
    });
}

/// The callback table (both modes; each enables the events it needs).
pub fn table() -> EventCallbacks {
    let base = jvmtiEventCallbacks {
        VMInit: Some(vm_init),
        VMDeath: Some(vm_death),
        ThreadStart: Some(thread_start),
        ThreadEnd: Some(thread_end),
        ClassPrepare: Some(class_prepare),
        MethodEntry: Some(method_entry),
        MethodExit: Some(method_exit),
        MonitorContendedEnter: Some(contended_enter),
        MonitorContendedEntered: Some(contended_entered),
        ClassFileLoadHook: Some(class_file_load_hook),
        ..Default::default()
    };
    EventCallbacks {
        base,
        virtual_thread_start: Some(thread_start),
        virtual_thread_end: Some(thread_end),
        ..Default::default()
    }
}
