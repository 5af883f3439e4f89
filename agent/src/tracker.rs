//! The bundled `orca.OrcaProfilerTracker` class: embedded at build time, defined in the
//! bootstrap class loader at VMInit, its one native bound to the agent.
//!
//! Rewritten code calls the tracker's public static methods; they do the real work in Java
//! (so blocking happens in Java) and report through `event(int kind, Object subject)`,
//! whose kinds are the `K_*` constants of `java-tracker/orca/OrcaProfilerTracker.java`.

use std::ffi::c_void;
use std::sync::OnceLock;

use jni_sys::{jclass, jint, jobject, JNIEnv};

use crate::callbacks::guard;
use crate::jvmti::{Jni, Jvmti};
use crate::writer::Kind;

/// The tracker's class file, compiled from `java-tracker/` by `build.rs`.
pub static CLASS_BYTES: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/orca/OrcaProfilerTracker.class"));
/// Its per-thread buffer class, `OrcaProfilerTracker.Rec`.
pub static REC_BYTES: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/orca/OrcaProfilerTracker$Rec.class"
));

/// Field IDs of `OrcaProfilerTracker.Rec`, read by the agent when it drains a buffer.
pub struct RecFields {
    pub buf: jni_sys::jfieldID,
    pub pos: jni_sys::jfieldID,
    pub depth: jni_sys::jfieldID,
    pub held_hash: jni_sys::jfieldID,
}
// SAFETY: field IDs are valid on every thread for as long as the class is loaded (the
// tracker, in the boot loader, is never unloaded).
unsafe impl Send for RecFields {}
unsafe impl Sync for RecFields {}

static REC_FIELDS: OnceLock<RecFields> = OnceLock::new();

/// The `Rec` field IDs, once the tracker is installed.
pub fn rec_fields() -> Option<&'static RecFields> {
    REC_FIELDS.get()
}
/// Its internal name, also given to the rewriter.
pub const CLASS_NAME: &str = "orca/OrcaProfilerTracker";
/// How many frames the tracker puts above the instrumented code when its native runs:
/// `event` (native), `report`, and the public wrapper.
pub const TRACKER_FRAMES: i32 = 3;

/// What a tracker report means, decoded from the `K_*` constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// A monitor event (`MonitorEnter`, `MonitorEntered`, `MonitorExit`).
    Monitor(Kind),
    /// The start of a blocking call: the entry event, and the exit event to write later.
    Begin(Kind, Kind),
    /// The end of a blocking call.
    End,
    /// A call without an end event (`notify`, `start`, `release`).
    Point(Kind),
}

impl Report {
    /// Decodes a `K_*` constant; `None` for a number this agent does not know.
    pub fn decode(kind: i32) -> Option<Report> {
        Some(match kind {
            1 => Report::Monitor(Kind::MonitorEnter),
            2 => Report::Monitor(Kind::MonitorEntered),
            3 => Report::Monitor(Kind::MonitorExit),
            4 => Report::Begin(Kind::ObjectWait, Kind::ObjectWaited),
            5 | 10 | 12 | 14 | 15 => Report::End,
            6 => Report::Point(Kind::ObjectNotify),
            7 => Report::Point(Kind::ObjectNotifyAll),
            8 => Report::Point(Kind::ThreadStart),
            9 => Report::Begin(Kind::ThreadJoin, Kind::ThreadJoined),
            11 => Report::Begin(Kind::ThreadSleep, Kind::ThreadSlept),
            13 => Report::Begin(Kind::SemaphoreAcquire, Kind::SemaphoreAcquired),
            16 => Report::Point(Kind::SemaphoreRelease),
            _ => return None,
        })
    }
}

/// `OrcaProfilerTracker.event(int, Object)`: never throws, never blocks.
unsafe extern "system" fn event(env: *mut JNIEnv, _class: jclass, kind: jint, subject: jobject) {
    guard("OrcaProfilerTracker.event", (), || {
        if let Some(a) = crate::agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            a.tracker_event(unsafe { Jni::from_raw(env) }, kind, subject);
        }
    })
}

/// `OrcaProfilerTracker.register(Rec)`.
unsafe extern "system" fn register(env: *mut JNIEnv, _class: jclass, rec: jobject) {
    guard("OrcaProfilerTracker.register", (), || {
        if let Some(a) = crate::agent() {
            // SAFETY: the JVM passes the calling thread's JNIEnv to a native method.
            a.rec_register(unsafe { Jni::from_raw(env) }, rec);
        }
    })
}

/// `OrcaProfilerTracker.flush(Rec)`.
unsafe extern "system" fn flush(env: *mut JNIEnv, _class: jclass, _rec: jobject) {
    guard("OrcaProfilerTracker.flush", (), || {
        if let Some(a) = crate::agent() {
            // SAFETY: as above.
            a.rec_flush(unsafe { Jni::from_raw(env) });
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
    guard("OrcaProfilerTracker.stack", 0, || match crate::agent() {
        // SAFETY: as above.
        Some(a) => a.rec_stack(unsafe { Jni::from_raw(env) }, site as u32),
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
    nanos: jni_sys::jlong,
    end: jni_sys::jlong,
) {
    guard("OrcaProfilerTracker.longHold", (), || {
        if let Some(a) = crate::agent() {
            // SAFETY: as above.
            a.rec_long_hold(
                unsafe { Jni::from_raw(env) },
                site as u32,
                hash as u32,
                nanos.max(0) as u64,
                end.max(0) as u64,
            );
        }
    })
}

/// How the tracker records monitors: set in its static fields before it is switched on.
pub struct TrackerSettings {
    pub trace_all: bool,
    pub deep_stacks: bool,
    pub hold_threshold: Option<u64>,
}

/// Why the tracker could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    #[error("cannot define class {CLASS_NAME} in the bootstrap class loader")]
    Define,
    #[error("cannot bind the native methods of {CLASS_NAME}")]
    Bind,
    #[error("cannot find the fields of {CLASS_NAME} the agent sets")]
    Field,
}

/// Defines the tracker in the bootstrap loader and binds its native. When `jdk` classes are
/// to be instrumented, also makes every named module read the tracker's (unnamed) module, so
/// that rewritten JDK code may call it.
pub fn install(
    jvmti: &Jvmti,
    jni: Jni,
    jdk: bool,
    settings: &TrackerSettings,
) -> Result<(), TrackerError> {
    let name = c"orca/OrcaProfilerTracker";
    let class = jni
        .define_boot_class(name, CLASS_BYTES)
        .ok_or(TrackerError::Define)?;
    let rec = jni
        .define_boot_class(c"orca/OrcaProfilerTracker$Rec", REC_BYTES)
        .ok_or(TrackerError::Define)?;
    let rec_sig = c"(Lorca/OrcaProfilerTracker$Rec;)V";
    let natives: [(&std::ffi::CStr, &std::ffi::CStr, *mut c_void); 5] = [
        (c"event", c"(ILjava/lang/Object;)V", event as *mut c_void),
        (c"register", rec_sig, register as *mut c_void),
        (c"flush", rec_sig, flush as *mut c_void),
        (
            c"stack",
            c"(Lorca/OrcaProfilerTracker$Rec;I)I",
            stack as *mut c_void,
        ),
        (
            c"longHold",
            c"(Lorca/OrcaProfilerTracker$Rec;IIJJ)V",
            long_hold as *mut c_void,
        ),
    ];
    for (n, sig, f) in natives {
        if !jni.register_native(class, n, sig, f) {
            return Err(TrackerError::Bind);
        }
    }
    let field = |c, n: &std::ffi::CStr, s: &std::ffi::CStr, st| {
        jni.field_id(c, n, s, st).ok_or(TrackerError::Field)
    };
    let _ = REC_FIELDS.set(RecFields {
        buf: field(rec, c"buf", c"[J", false)?,
        pos: field(rec, c"pos", c"I", false)?,
        depth: field(rec, c"depth", c"I", false)?,
        held_hash: field(rec, c"heldHash", c"[I", false)?,
    });
    jni.set_static_boolean(
        class,
        field(class, c"traceAll", c"Z", true)?,
        settings.trace_all,
    );
    jni.set_static_boolean(
        class,
        field(class, c"deepStacks", c"Z", true)?,
        settings.deep_stacks,
    );
    jni.set_static_long(
        class,
        field(class, c"holdThreshold", c"J", true)?,
        settings
            .hold_threshold
            .map_or(-1, |t| t.min(i64::MAX as u64) as i64),
    );
    // Last: the tracker starts recording (a volatile write after the settings).
    jni.set_static_boolean(class, field(class, c"ready", c"Z", true)?, true);
    jni.delete_local_ref(rec);
    if jdk {
        let get_module = c"getModule";
        let sig = c"()Ljava/lang/Module;";
        match jni.call_object_method(class, get_module, sig) {
            Some(module) => {
                let failed = jni.with_local_frame(1024, || {
                    let mut failed = 0;
                    for m in jvmti.all_modules().unwrap_or_default() {
                        if jvmti.add_module_reads(m, module).is_err() {
                            failed += 1;
                        }
                        jni.delete_local_ref(m);
                    }
                    failed
                });
                if failed > 0 {
                    eprintln!("orca: {failed} modules cannot be made to read the tracker; their classes may fail to call it");
                }
            }
            None => eprintln!("orca: cannot find the tracker's module; JDK classes in named modules may fail to call it"),
        }
    }
    jni.delete_local_ref(class);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_class_is_the_tracker() {
        assert_eq!(&CLASS_BYTES[..4], &[0xCA, 0xFE, 0xBA, 0xBE]);
        let major = u16::from_be_bytes([CLASS_BYTES[6], CLASS_BYTES[7]]);
        assert_eq!(major, 52, "compiled for Java 8");
        let text = String::from_utf8_lossy(CLASS_BYTES);
        assert!(text.contains(CLASS_NAME));
    }

    #[test]
    fn every_tracker_constant_decodes() {
        let source = include_str!("../../java-tracker/orca/OrcaProfilerTracker.java");
        let mut seen = 0;
        for line in source.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("public static final int K_") {
                let value: i32 = rest
                    .split('=')
                    .nth(1)
                    .unwrap()
                    .trim()
                    .trim_end_matches(';')
                    .parse()
                    .unwrap();
                assert!(Report::decode(value).is_some(), "{line}");
                seen += 1;
            }
        }
        assert_eq!(seen, 16);
        assert_eq!(&REC_BYTES[..4], &[0xCA, 0xFE, 0xBA, 0xBE]);
        assert_eq!(Report::decode(99), None);
    }
}
