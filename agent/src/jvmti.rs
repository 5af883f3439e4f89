//! The one place where the agent touches raw JVMTI and JNI pointers.
//!
//! Every other module works with the safe [`Jvmti`] handle and the plain Rust values it
//! returns, the way jni-rs wraps JNI. Function pointers are read from the interface table that
//! `jvmti-sys` lays out, but called with our own signatures that return the raw error number:
//! `jvmti-sys` types the result as a Rust enum, and a JVM that returns a code the enum does not
//! list (newer JDKs add codes) would make that undefined behaviour.

// JNI references (`jobject`, `jclass`, `jthread`) and `jmethodID`s are opaque handles that
// only ever come from the JVM (callback arguments or earlier results of this module) and are
// only passed back to it; this module never dereferences them.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_void, CStr};
use std::mem::{offset_of, MaybeUninit};
use std::ptr;

use jni_sys::{jclass, jint, jlong, jmethodID, jobject, JNIEnv, JavaVM};
pub use jvmti_sys::{jthread, jvmtiCapabilities, jvmtiEventCallbacks, jvmtiFrameInfo};
use jvmti_sys::{
    jvmtiEnv, jvmtiInterface_1, jvmtiLineNumberEntry, jvmtiMonitorStackDepthInfo,
    jvmtiMonitorUsage, jvmtiThreadInfo,
};

use crate::error::JvmtiError;

/// Held (written) while a thread of the agent's attaches to the JVM or detaches from it, and
/// (read, only if free) while `GetObjectMonitorUsage` runs. Why: JDK 25's
/// `GetObjectMonitorUsage` walks every thread at its safepoint and reads each one's
/// `java.lang.Thread`, which a thread still attaching through JNI does not have yet: the VM
/// thread crashed in `Threads::get_pending_threads` (SIGSEGV at address 8) twice in the
/// attached-Jetty test, each time with the agent's `orca-owners` thread half attached (an
/// "Unknown thread" in the crash report), while a server thread asked a contended monitor's
/// owner. A thread that finds the lock taken does not ask: that owner is written as not
/// known. Threads the program attaches through JNI are outside the agent's reach.
static THREADS_CHANGING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// [`JvmtiError::code`] of a call the agent did not make ([`THREADS_CHANGING`]).
pub const NOT_ASKED: u32 = u32::MAX;

/// JVMTI 1.2 (JDK 7+): every function the agent calls exists in it.
const JVMTI_VERSION_1_2: jint = 0x3001_0200;
const JNI_OK: jint = 0;

/// JVMTI error codes the agent reacts to; all others are reported by number.
pub mod code {
    pub const NONE: u32 = 0;
    pub const ABSENT_INFORMATION: u32 = 101;
    pub const NATIVE_METHOD: u32 = 104;
    pub const WRONG_PHASE: u32 = 112;
}

/// JVMTI event numbers (`jvmtiEvent`) the agent enables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    VmInit = 50,
    VmDeath = 51,
    ThreadStart = 52,
    ThreadEnd = 53,
    ClassFileLoadHook = 54,
    /// Needed on only for [`FastWalker`] (HotSpot's `AsyncGetCallTrace` refuses to walk
    /// without it); its callback does nothing.
    ClassLoad = 55,
    ClassPrepare = 56,
    MethodEntry = 65,
    MethodExit = 66,
    MonitorContendedEnter = 75,
    MonitorContendedEntered = 76,
    /// A tagged object was collected (a class loader, for the offset maps of its classes).
    ObjectFree = 83,
    /// JDK 21+ (with [`Capability::SupportVirtualThreads`]).
    VirtualThreadStart = 87,
    /// JDK 21+ (with [`Capability::SupportVirtualThreads`]).
    VirtualThreadEnd = 88,
}

/// The capabilities the agent can ask for, by bit index in `jvmtiCapabilities`
/// (C bit-fields, allocated from the least significant bit on x86-64 and aarch64 Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Capability {
    TagObjects = 0,
    GetBytecodes = 3,
    GetMonitorInfo = 7,
    GetSourceFileName = 11,
    GetLineNumbers = 12,
    AccessLocalVariables = 14,
    GenerateMethodEntryEvents = 24,
    GenerateMethodExitEvents = 25,
    GenerateMonitorEvents = 28,
    GetOwnedMonitorStackDepthInfo = 34,
    GenerateAllClassHookEvents = 26,
    GenerateObjectFreeEvents = 32,
    /// Instrumentation mode: a class another agent retransforms or redefines is compared
    /// with the version that runs.
    GetConstantPool = 35,
    /// Instrumentation mode: the tracked JDK methods of classes loaded before VMInit.
    RetransformClasses = 37,
    /// JDK 21+: virtual threads get their own start and end events.
    SupportVirtualThreads = 44,
}

impl Capability {
    /// The name the JVMTI specification uses, for error messages.
    pub fn name(self) -> &'static str {
        match self {
            Capability::TagObjects => "can_tag_objects",
            Capability::GetBytecodes => "can_get_bytecodes",
            Capability::GetMonitorInfo => "can_get_monitor_info",
            Capability::GetSourceFileName => "can_get_source_file_name",
            Capability::GetLineNumbers => "can_get_line_numbers",
            Capability::AccessLocalVariables => "can_access_local_variables",
            Capability::GenerateMethodEntryEvents => "can_generate_method_entry_events",
            Capability::GenerateMethodExitEvents => "can_generate_method_exit_events",
            Capability::GenerateMonitorEvents => "can_generate_monitor_events",
            Capability::GetOwnedMonitorStackDepthInfo => "can_get_owned_monitor_stack_depth_info",
            Capability::GenerateAllClassHookEvents => "can_generate_all_class_hook_events",
            Capability::GenerateObjectFreeEvents => "can_generate_object_free_events",
            Capability::GetConstantPool => "can_get_constant_pool",
            Capability::RetransformClasses => "can_retransform_classes",
            Capability::SupportVirtualThreads => "can_support_virtual_threads",
        }
    }

    fn set(self, caps: &mut jvmtiCapabilities) {
        let bit = self as u32;
        let word = match bit / 32 {
            0 => &mut caps._bindgen_bitfield_1_,
            1 => &mut caps._bindgen_bitfield_2_,
            2 => &mut caps._bindgen_bitfield_3_,
            _ => &mut caps._bindgen_bitfield_4_,
        };
        *word |= 1 << (bit % 32);
    }

    fn is_set(self, caps: &jvmtiCapabilities) -> bool {
        let bit = self as u32;
        let word = match bit / 32 {
            0 => caps._bindgen_bitfield_1_,
            1 => caps._bindgen_bitfield_2_,
            2 => caps._bindgen_bitfield_3_,
            _ => caps._bindgen_bitfield_4_,
        };
        word & (1 << (bit % 32)) != 0
    }
}

/// A thread event callback (`VirtualThreadStart`/`End` have the signature of `ThreadStart`).
pub type ThreadCallback = Option<unsafe extern "C" fn(*mut jvmtiEnv, *mut JNIEnv, jthread)>;

/// `jvmtiEventCallbacks` as JDK 21 lays it out: `jvmti-sys` stops at event 84
/// (VMObjectAlloc); events 85 to 88 follow in this order.
#[repr(C)]
#[derive(Default)]
pub struct EventCallbacks {
    pub base: jvmtiEventCallbacks,
    pub reserved85: Option<unsafe extern "C" fn()>,
    pub sampled_object_alloc: Option<unsafe extern "C" fn()>,
    pub virtual_thread_start: ThreadCallback,
    pub virtual_thread_end: ThreadCallback,
}

/// Calls the JVMTI function `$name` with our own signature (`-> u32`).
macro_rules! call {
    ($self:expr, $name:ident, fn()) => {{
        let env: *mut jvmtiEnv = $self.raw;
        // SAFETY: as below, for a JVMTI function whose only parameter is the environment.
        unsafe {
            let table = *env as *const u8;
            let slot = table.add(offset_of!(jvmtiInterface_1, $name)) as *const *const c_void;
            let f: unsafe extern "C" fn(*mut jvmtiEnv) -> u32 = std::mem::transmute(*slot);
            f(env)
        }
    }};
    ($self:expr, $name:ident, fn($($t:ty),*), $($arg:expr),*) => {{
        let env: *mut jvmtiEnv = $self.raw;
        // SAFETY: `env` is a live jvmtiEnv* from GetEnv; the slot at this offset is the
        // function `$name` of JVMTI 1.2, whose C signature is the one spelled here.
        unsafe {
            let table = *env as *const u8;
            let slot = table.add(offset_of!(jvmtiInterface_1, $name)) as *const *const c_void;
            let f: unsafe extern "C" fn(*mut jvmtiEnv $(, $t)*) -> u32 = std::mem::transmute(*slot);
            f(env $(, $arg)*)
        }
    }};
}

fn check(function: &'static str, code: u32) -> Result<(), JvmtiError> {
    if code == code::NONE {
        Ok(())
    } else {
        Err(JvmtiError { function, code })
    }
}

/// A JVMTI environment. JVMTI environments may be used from any thread, so the handle is
/// `Send + Sync`; it stays valid until the VM is gone.
#[derive(Clone, Copy, Debug)]
pub struct Jvmti {
    raw: *mut jvmtiEnv,
}

// SAFETY: JVMTI functions are callable from any thread (JVMTI spec, "Function Execution").
unsafe impl Send for Jvmti {}
unsafe impl Sync for Jvmti {}

/// A JNI environment of the current thread, as handed to an event callback.
#[derive(Clone, Copy)]
pub struct Jni {
    raw: *mut JNIEnv,
}

/// `ASGCT_CallFrame` of HotSpot's `AsyncGetCallTrace`: a bytecode index (negative for a
/// native method) and a method, null when its `jmethodID` was never made.
#[repr(C)]
#[derive(Clone, Copy)]
struct AsgctFrame {
    bci: jint,
    method: jmethodID,
}

/// `ASGCT_CallTrace`: the thread (by its `JNIEnv*`), the frames' count (negative: why the
/// walk failed) and where they go.
#[repr(C)]
struct AsgctTrace {
    env: *mut JNIEnv,
    num_frames: jint,
    frames: *mut AsgctFrame,
}

/// HotSpot's `AsyncGetCallTrace`, the stack walker profilers call from signal handlers
/// (async-profiler, honest-profiler), called here on the current thread from native code.
/// Why: it walks with HotSpot's `vframeStream`, while JVMTI `GetStackTrace` builds a `vframe`
/// object per frame (in a profile of a Jetty server the walks fell from 6.8% to 2.0% of its
/// samples; a producer/consumer whose every `notifyAll` is an event with its stack ran 15%
/// faster). It is not a supported interface,
/// so every walk it cannot do (a frame whose method has no `jmethodID` yet, a thread in a
/// state it does not walk) falls back to JVMTI, and `stackwalk=jvmti` never uses it.
pub struct FastWalker {
    walk: unsafe extern "C" fn(*mut AsgctTrace, jint, *mut c_void),
}

impl FastWalker {
    /// Most frames one walk asks for: the buffer lives on the stack.
    const MAX: usize = 64;

    /// The running JVM's `AsyncGetCallTrace`, if it exports one (HotSpot 17 and 25 do).
    pub fn find() -> Option<FastWalker> {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"AsyncGetCallTrace".as_ptr()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: HotSpot's AsyncGetCallTrace has this signature
        // (`void AsyncGetCallTrace(ASGCT_CallTrace*, jint depth, void* ucontext)`).
        let walk = unsafe {
            std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(*mut AsgctTrace, jint, *mut c_void),
            >(p)
        };
        Some(FastWalker { walk })
    }

    /// The current thread's frames from `start_depth` down into `frames`, as
    /// [`Jvmti::stack_trace`] gives them; `None` when this walker cannot tell (the caller then
    /// asks JVMTI).
    pub fn stack_trace(
        &self,
        jni: Jni,
        start_depth: i32,
        frames: &mut [MaybeUninit<jvmtiFrameInfo>],
    ) -> Option<usize> {
        let skip = start_depth.max(0) as usize;
        let want = skip + frames.len();
        if want > Self::MAX {
            return None;
        }
        let mut buf = [AsgctFrame {
            bci: 0,
            method: ptr::null_mut(),
        }; Self::MAX];
        let mut trace = AsgctTrace {
            env: jni.raw,
            num_frames: 0,
            frames: buf.as_mut_ptr(),
        };
        // SAFETY: `trace` names the current thread's JNIEnv and a buffer of `want` frames or
        // more; without a ucontext the walk starts at the thread's last Java frame, which a
        // thread in native code (a JNI native, a JVMTI callback) always has.
        unsafe { (self.walk)(&mut trace, want as jint, ptr::null_mut()) };
        if trace.num_frames < 0 {
            return None;
        }
        let n = (trace.num_frames as usize).min(want);
        let walked = buf.get(skip..n).unwrap_or(&[]);
        if walked.iter().any(|f| f.method.is_null()) {
            return None;
        }
        for (out, f) in frames.iter_mut().zip(walked) {
            *out = MaybeUninit::new(jvmtiFrameInfo {
                method: f.method,
                location: if f.bci < 0 { -1 } else { jlong::from(f.bci) },
            });
        }
        Some(walked.len())
    }
}

impl Jni {
    /// The calling thread's JNI environment, from the VM (`Agent_OnAttach` gets none):
    /// `None` when the thread is not attached to the VM.
    ///
    /// # Safety
    /// `vm` is the running VM's `JavaVM*`.
    pub unsafe fn from_vm(vm: *mut JavaVM) -> Option<Self> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: as this function's; `env` is a valid out-parameter.
        let rc = unsafe { ((**vm).GetEnv?)(vm, &mut env, jni_sys::JNI_VERSION_1_8) };
        (rc == 0 && !env.is_null()).then_some(Jni {
            raw: env as *mut JNIEnv,
        })
    }

    /// Wraps the `JNIEnv*` of a callback.
    ///
    /// # Safety
    /// `raw` must be the JNI environment of the calling thread.
    pub unsafe fn from_raw(raw: *mut JNIEnv) -> Self {
        Jni { raw }
    }

    /// Returns and clears a pending Java exception, so that the agent never leaves one behind
    /// in the program's thread.
    pub fn take_exception(&self) -> bool {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            let pending = (**self.raw)
                .ExceptionCheck
                .map(|f| f(self.raw) != 0)
                .unwrap_or(false);
            if pending {
                if let Some(f) = (**self.raw).ExceptionClear {
                    f(self.raw);
                }
            }
            pending
        }
    }

    /// Whether a Java exception is pending (left as it is): JNI allows only a few calls then,
    /// no field reads.
    pub fn exception_pending(&self) -> bool {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            (**self.raw)
                .ExceptionCheck
                .map(|f| f(self.raw) != 0)
                .unwrap_or(false)
        }
    }

    /// Defines a class in the bootstrap class loader (`loader` null), so every class loader
    /// that delegates to its parents finds it.
    pub fn define_boot_class(&self, name: &CStr, bytes: &[u8]) -> Option<jclass> {
        // SAFETY: `raw` is this thread's JNIEnv; the buffer outlives the call.
        let class = unsafe {
            let f = (**self.raw).DefineClass?;
            f(
                self.raw,
                name.as_ptr(),
                ptr::null_mut(),
                bytes.as_ptr() as *const jni_sys::jbyte,
                bytes.len() as jint,
            )
        };
        if self.take_exception() || class.is_null() {
            None
        } else {
            Some(class)
        }
    }

    /// Binds native methods of `class`, each `(name, signature, function)`, in one
    /// `RegisterNatives` call: all of them, or (false) none.
    pub fn register_natives(&self, class: jclass, natives: &[(&CStr, &CStr, *mut c_void)]) -> bool {
        let methods: Vec<jni_sys::JNINativeMethod> = natives
            .iter()
            .map(|(name, signature, function)| jni_sys::JNINativeMethod {
                name: name.as_ptr() as *mut c_char,
                signature: signature.as_ptr() as *mut c_char,
                fnPtr: *function,
            })
            .collect();
        let Ok(count) = jint::try_from(methods.len()) else {
            return false;
        };
        // SAFETY: `raw` is this thread's JNIEnv; `methods` points at NUL-terminated strings
        // that outlive the call.
        let rc = unsafe {
            match (**self.raw).RegisterNatives {
                Some(f) => f(self.raw, class, methods.as_ptr(), count),
                None => -1,
            }
        };
        !self.take_exception() && rc == 0
    }

    /// Calls an instance method `()L...;` by name; `None` if it threw or does not exist.
    pub fn call_object_method(
        &self,
        obj: jobject,
        name: &CStr,
        signature: &CStr,
    ) -> Option<jobject> {
        // SAFETY: `raw` is this thread's JNIEnv and `obj` a live reference.
        unsafe {
            let class = (**self.raw).GetObjectClass?(self.raw, obj);
            let id = (**self.raw).GetMethodID?(self.raw, class, name.as_ptr(), signature.as_ptr());
            self.delete_local_ref(class);
            if self.take_exception() || id.is_null() {
                return None;
            }
            let r = (**self.raw).CallObjectMethodA?(self.raw, obj, id, ptr::null());
            if self.take_exception() {
                None
            } else {
                Some(r)
            }
        }
    }

    /// Calls a static method `()Z` of `class` (private ones too); `None` if it threw or
    /// cannot be found (the exception cleared).
    pub fn call_static_boolean(&self, class: jclass, name: &CStr) -> Option<bool> {
        // SAFETY: `raw` is this thread's JNIEnv; `class` a live reference.
        unsafe {
            let id =
                (**self.raw).GetStaticMethodID?(self.raw, class, name.as_ptr(), c"()Z".as_ptr());
            if self.take_exception() || id.is_null() {
                return None;
            }
            let r = (**self.raw).CallStaticBooleanMethodA?(self.raw, class, id, ptr::null());
            if self.take_exception() {
                None
            } else {
                Some(r != 0)
            }
        }
    }

    /// Attaches the calling native thread to the VM as a daemon named `name` (a thread of
    /// the agent's own that calls into Java); `None` if the VM refuses.
    ///
    /// # Safety
    /// `vm` is the running VM's `JavaVM*`; the thread detaches before it ends
    /// ([`Jni::detach_current_thread`]).
    pub unsafe fn attach_current_thread(vm: *mut JavaVM, name: &CStr) -> Option<Self> {
        let _changing = THREADS_CHANGING.write().unwrap_or_else(|e| e.into_inner());
        let mut env: *mut c_void = ptr::null_mut();
        let mut args = jni_sys::JavaVMAttachArgs {
            version: jni_sys::JNI_VERSION_1_8,
            name: name.as_ptr() as *mut c_char,
            group: ptr::null_mut(),
        };
        // SAFETY: as this function's; the out-parameter and arguments are valid.
        let rc = unsafe {
            ((**vm).AttachCurrentThreadAsDaemon?)(vm, &mut env, &mut args as *mut _ as *mut c_void)
        };
        (rc == 0 && !env.is_null()).then_some(Jni {
            raw: env as *mut JNIEnv,
        })
    }

    /// Detaches the calling thread, attached by [`Jni::attach_current_thread`].
    ///
    /// # Safety
    /// `vm` is the running VM's `JavaVM*`; no JNI reference of this thread is used after.
    pub unsafe fn detach_current_thread(vm: *mut JavaVM) {
        let _changing = THREADS_CHANGING.write().unwrap_or_else(|e| e.into_inner());
        // SAFETY: as this function's.
        unsafe {
            if let Some(f) = (**vm).DetachCurrentThread {
                f(vm);
            }
        }
    }

    /// Calls a static method `()L...;` of the named class; `None` if anything failed.
    pub fn call_static_object_method(
        &self,
        class: &CStr,
        name: &CStr,
        signature: &CStr,
    ) -> Option<jobject> {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            let cls = (**self.raw).FindClass?(self.raw, class.as_ptr());
            if self.take_exception() || cls.is_null() {
                return None;
            }
            let id =
                (**self.raw).GetStaticMethodID?(self.raw, cls, name.as_ptr(), signature.as_ptr());
            if self.take_exception() || id.is_null() {
                return None;
            }
            let r = (**self.raw).CallStaticObjectMethodA?(self.raw, cls, id, ptr::null());
            self.delete_local_ref(cls);
            if self.take_exception() {
                None
            } else {
                Some(r)
            }
        }
    }

    /// A global reference, valid on every thread until the VM ends.
    pub fn new_global_ref(&self, obj: jobject) -> jobject {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            (**self.raw)
                .NewGlobalRef
                .map(|f| f(self.raw, obj))
                .unwrap_or(ptr::null_mut())
        }
    }

    /// A local reference (JNI `NewLocalRef`) to what `obj` names, for a native method to
    /// return; null when `obj` names nothing or the JVM could not make one.
    pub fn new_local_ref(&self, obj: jobject) -> jobject {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            (**self.raw)
                .NewLocalRef
                .map(|f| f(self.raw, obj))
                .unwrap_or(ptr::null_mut())
        }
    }

    /// A weak global reference (JNI `NewWeakGlobalRef`): names the object on every thread
    /// without keeping it alive; null when the JVM could not make one.
    pub fn new_weak_global_ref(&self, obj: jobject) -> jobject {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            (**self.raw)
                .NewWeakGlobalRef
                .map(|f| f(self.raw, obj))
                .unwrap_or(ptr::null_mut())
        }
    }

    /// The `JavaVM*` of this thread's JNI environment (JNI `GetJavaVM`), for a JVMTI
    /// environment of its own.
    pub fn java_vm(&self) -> Option<*mut JavaVM> {
        let mut vm: *mut JavaVM = ptr::null_mut();
        // SAFETY: `raw` is this thread's JNIEnv; `vm` is a valid out-parameter.
        let rc = unsafe { (**self.raw).GetJavaVM.map(|f| f(self.raw, &mut vm)) };
        (rc == Some(0) && !vm.is_null()).then_some(vm)
    }

    /// JNI `IsSameObject`.
    pub fn is_same_object(&self, a: jobject, b: jobject) -> bool {
        // SAFETY: `raw` is this thread's JNIEnv.
        unsafe {
            (**self.raw)
                .IsSameObject
                .map(|f| f(self.raw, a, b) != 0)
                .unwrap_or(false)
        }
    }

    /// Runs `f` in a new JNI local frame with room for `capacity` references, freed after:
    /// JVMTI functions that return arrays of references (all loaded classes, all modules)
    /// would otherwise exceed the callback's frame (`-Xcheck:jni` warns about it).
    pub fn with_local_frame<R>(&self, capacity: i32, f: impl FnOnce() -> R) -> R {
        // SAFETY: `raw` is this thread's JNIEnv; the frame is popped below on every path.
        let pushed = unsafe {
            (**self.raw)
                .PushLocalFrame
                .map(|p| p(self.raw, capacity) == 0)
                .unwrap_or(false)
        };
        let r = f();
        if pushed {
            // SAFETY: pops the frame pushed above; nothing is carried out of it.
            unsafe {
                if let Some(pop) = (**self.raw).PopLocalFrame {
                    pop(self.raw, ptr::null_mut());
                }
            }
        }
        r
    }

    /// The superclass of a class (a local reference); `None` for Object and interfaces.
    pub fn superclass(&self, class: jclass) -> Option<jclass> {
        // SAFETY: `raw` is this thread's JNIEnv; `class` a live reference.
        let c = unsafe { (**self.raw).GetSuperclass?(self.raw, class) };
        (!c.is_null()).then_some(c)
    }

    /// Finds a class by its internal name (`java/lang/OrcaRec`); `None` if absent.
    pub fn find_class(&self, name: &CStr) -> Option<jclass> {
        // SAFETY: `raw` is this thread's JNIEnv.
        let c = unsafe { (**self.raw).FindClass?(self.raw, name.as_ptr()) };
        (!self.take_exception() && !c.is_null()).then_some(c)
    }

    /// An instance field's ID (`static_field`: a static one's); `None` if absent.
    pub fn field_id(
        &self,
        class: jclass,
        name: &CStr,
        signature: &CStr,
        static_field: bool,
    ) -> Option<jni_sys::jfieldID> {
        // SAFETY: `raw` is this thread's JNIEnv and `class` a live reference.
        let id = unsafe {
            if static_field {
                (**self.raw).GetStaticFieldID?(self.raw, class, name.as_ptr(), signature.as_ptr())
            } else {
                (**self.raw).GetFieldID?(self.raw, class, name.as_ptr(), signature.as_ptr())
            }
        };
        (!self.take_exception() && !id.is_null()).then_some(id)
    }

    /// Reads a static `boolean` field.
    pub fn get_static_boolean(&self, class: jclass, field: jni_sys::jfieldID) -> bool {
        // SAFETY: `field` is a static boolean field of `class`.
        unsafe {
            match (**self.raw).GetStaticBooleanField {
                Some(f) => f(self.raw, class, field) != 0,
                None => false,
            }
        }
    }

    /// Sets a static `boolean` field.
    pub fn set_static_boolean(&self, class: jclass, field: jni_sys::jfieldID, v: bool) {
        // SAFETY: `field` is a static boolean field of `class`.
        unsafe {
            if let Some(f) = (**self.raw).SetStaticBooleanField {
                f(self.raw, class, field, v as jni_sys::jboolean);
            }
        }
    }

    /// Sets a static `int` field.
    pub fn set_static_int(&self, class: jclass, field: jni_sys::jfieldID, v: i32) {
        // SAFETY: `field` is a static int field of `class`.
        unsafe {
            if let Some(f) = (**self.raw).SetStaticIntField {
                f(self.raw, class, field, v);
            }
        }
    }

    /// Reads a static `int` field.
    pub fn get_static_int(&self, class: jclass, field: jni_sys::jfieldID) -> i32 {
        // SAFETY: `field` is a static int field of `class`.
        unsafe {
            match (**self.raw).GetStaticIntField {
                Some(f) => f(self.raw, class, field),
                None => 0,
            }
        }
    }

    /// Sets a static `long` field.
    pub fn set_static_long(&self, class: jclass, field: jni_sys::jfieldID, v: i64) {
        // SAFETY: `field` is a static long field of `class`.
        unsafe {
            if let Some(f) = (**self.raw).SetStaticLongField {
                f(self.raw, class, field, v);
            }
        }
    }

    /// Reads an `int` field.
    pub fn int_field(&self, obj: jobject, field: jni_sys::jfieldID) -> i32 {
        // SAFETY: `field` is an int field of `obj`'s class.
        unsafe {
            (**self.raw)
                .GetIntField
                .map(|f| f(self.raw, obj, field))
                .unwrap_or(0)
        }
    }

    /// Reads a `long` field.
    pub fn long_field(&self, obj: jobject, field: jni_sys::jfieldID) -> i64 {
        // SAFETY: `field` is a long field of `obj`'s class.
        unsafe {
            (**self.raw)
                .GetLongField
                .map(|f| f(self.raw, obj, field))
                .unwrap_or(0)
        }
    }

    /// Writes an `int` field.
    pub fn set_int_field(&self, obj: jobject, field: jni_sys::jfieldID, v: i32) {
        // SAFETY: `field` is an int field of `obj`'s class.
        unsafe {
            if let Some(f) = (**self.raw).SetIntField {
                f(self.raw, obj, field, v);
            }
        }
    }

    /// The class of `obj` (a new local reference).
    pub fn object_class(&self, obj: jobject) -> jclass {
        // SAFETY: `obj` is a live, non-null reference.
        unsafe {
            (**self.raw)
                .GetObjectClass
                .map(|f| f(self.raw, obj))
                .unwrap_or(ptr::null_mut())
        }
    }

    /// Reads an object field (a new local reference, or null).
    pub fn object_field(&self, obj: jobject, field: jni_sys::jfieldID) -> jobject {
        // SAFETY: `field` is a reference field of `obj`'s class.
        unsafe {
            (**self.raw)
                .GetObjectField
                .map(|f| f(self.raw, obj, field))
                .unwrap_or(ptr::null_mut())
        }
    }

    /// Writes an object field.
    pub fn set_object_field(&self, obj: jobject, field: jni_sys::jfieldID, v: jobject) {
        // SAFETY: `field` is a reference field of `obj`'s class whose type `v` has.
        unsafe {
            if let Some(f) = (**self.raw).SetObjectField {
                f(self.raw, obj, field, v);
            }
        }
    }

    /// The length of a Java array.
    pub fn array_length(&self, array: jobject) -> usize {
        // SAFETY: `array` is a live array reference.
        unsafe {
            (**self.raw)
                .GetArrayLength
                .map(|f| f(self.raw, array).max(0) as usize)
                .unwrap_or(0)
        }
    }

    /// Copies the first `out.len()` elements of a `long[]` into `out`; false if it threw.
    pub fn long_array_region(&self, array: jobject, out: &mut [i64]) -> bool {
        // SAFETY: `array` is a live long[] of at least `out.len()` elements (the caller read
        // its length); JNI writes exactly that many.
        unsafe {
            if let Some(f) = (**self.raw).GetLongArrayRegion {
                f(self.raw, array, 0, out.len() as jint, out.as_mut_ptr());
            }
        }
        !self.take_exception()
    }

    /// The length of an `int[]` (as [`Jni::array_length`]).
    pub fn int_array_length(&self, array: jobject) -> usize {
        self.array_length(array)
    }

    /// Copies the first `out.len()` elements of an `int[]` into `out`; false if it threw.
    pub fn int_array_region(&self, array: jobject, out: &mut [i32]) -> bool {
        // SAFETY: `array` is a live int[] of at least `out.len()` elements.
        unsafe {
            if let Some(f) = (**self.raw).GetIntArrayRegion {
                f(self.raw, array, 0, out.len() as jint, out.as_mut_ptr());
            }
        }
        !self.take_exception()
    }

    /// Writes `values` over the first `values.len()` elements of an `int[]`; false if it threw.
    pub fn set_int_array_region(&self, array: jobject, values: &[i32]) -> bool {
        // SAFETY: `array` is a live int[] of at least `values.len()` elements.
        unsafe {
            if let Some(f) = (**self.raw).SetIntArrayRegion {
                f(self.raw, array, 0, values.len() as jint, values.as_ptr());
            }
        }
        !self.take_exception()
    }

    /// Runs `f` on the elements of an `int[]` in place (JNI's critical access: no copy of
    /// a large array of which `f` touches a few elements). `f` must be short and make no JNI
    /// call. False if the JVM gave no access (`f` did not run).
    pub fn with_int_array(&self, array: jobject, f: impl FnOnce(&mut [i32])) -> bool {
        let len = self.array_length(array);
        // SAFETY: `array` is a live int[] of `len` elements; between Get and Release the
        // pointer is valid and no JNI call is made (`f` makes none, by contract).
        unsafe {
            let (Some(get), Some(release)) = (
                (**self.raw).GetPrimitiveArrayCritical,
                (**self.raw).ReleasePrimitiveArrayCritical,
            ) else {
                return false;
            };
            let p = get(self.raw, array, ptr::null_mut()) as *mut i32;
            if p.is_null() {
                self.take_exception();
                return false;
            }
            f(std::slice::from_raw_parts_mut(p, len));
            release(self.raw, array, p as *mut std::ffi::c_void, 0);
        }
        true
    }

    /// A new `int[]` of `len` zeros.
    pub fn new_int_array(&self, len: usize) -> Option<jobject> {
        // SAFETY: `raw` is this thread's JNIEnv.
        let a = unsafe { (**self.raw).NewIntArray?(self.raw, len as jint) };
        (!self.take_exception() && !a.is_null()).then_some(a)
    }

    /// A new `long[]` of `len` zeros.
    pub fn new_long_array(&self, len: usize) -> Option<jobject> {
        // SAFETY: `raw` is this thread's JNIEnv.
        let a = unsafe { (**self.raw).NewLongArray?(self.raw, len as jint) };
        (!self.take_exception() && !a.is_null()).then_some(a)
    }

    /// Frees a global reference.
    pub fn delete_global_ref(&self, obj: jobject) {
        if obj.is_null() || self.raw.is_null() {
            return;
        }
        // SAFETY: `obj` is a global reference made by `new_global_ref`.
        unsafe {
            if let Some(f) = (**self.raw).DeleteGlobalRef {
                f(self.raw, obj);
            }
        }
    }

    /// Frees a local reference early: loops over many classes would otherwise fill the frame.
    pub fn delete_local_ref(&self, obj: jobject) {
        if obj.is_null() || self.raw.is_null() {
            return;
        }
        // SAFETY: `raw` is this thread's JNIEnv and `obj` a local reference made on it.
        unsafe {
            if let Some(f) = (**self.raw).DeleteLocalRef {
                f(self.raw, obj);
            }
        }
    }
}

/// One entry of a method's line number table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineEntry {
    pub start_location: i64,
    pub line_number: i32,
}

impl Jvmti {
    /// Gets a JVMTI 1.2 environment from the VM.
    ///
    /// # Safety
    /// `vm` must be the `JavaVM*` handed to `Agent_OnLoad`.
    pub unsafe fn from_vm(vm: *mut JavaVM) -> Result<Jvmti, JvmtiError> {
        let mut env: *mut c_void = ptr::null_mut();
        let get_env = (**vm).GetEnv.ok_or(JvmtiError {
            function: "GetEnv",
            code: u32::MAX,
        })?;
        let rc = get_env(vm, &mut env, JVMTI_VERSION_1_2);
        if rc != JNI_OK || env.is_null() {
            return Err(JvmtiError {
                function: "GetEnv",
                code: rc as u32,
            });
        }
        Ok(Jvmti {
            raw: env as *mut jvmtiEnv,
        })
    }

    /// The capabilities of `wanted` this JVM cannot give, in order: at start-up HotSpot offers
    /// them all; once running (a late attach) it no longer offers MethodEntry events, local
    /// variable access or owned-monitor information.
    pub fn missing_capabilities(
        &self,
        wanted: &[Capability],
    ) -> Result<Vec<Capability>, JvmtiError> {
        let potential = self.potential_capabilities()?;
        Ok(wanted
            .iter()
            .copied()
            .filter(|c| !c.is_set(&potential))
            .collect())
    }

    fn potential_capabilities(&self) -> Result<jvmtiCapabilities, JvmtiError> {
        let mut potential = jvmtiCapabilities::default();
        let rc = call!(
            self,
            GetPotentialCapabilities,
            fn(*mut jvmtiCapabilities),
            &mut potential
        );
        check("GetPotentialCapabilities", rc)?;
        Ok(potential)
    }

    /// Adds `caps`; the caller checked with [`Jvmti::missing_capabilities`] that the JVM
    /// offers them.
    pub fn add_capabilities(&self, caps: &[Capability]) -> Result<(), JvmtiError> {
        let mut set = jvmtiCapabilities::default();
        for &c in caps {
            c.set(&mut set);
        }
        let rc = call!(self, AddCapabilities, fn(*const jvmtiCapabilities), &set);
        check("AddCapabilities", rc)
    }

    /// Gives the environment back to the JVM (after a refused late attach).
    pub fn dispose(&self) {
        let _ = call!(self, DisposeEnvironment, fn());
    }

    /// Installs the event callbacks.
    pub fn set_event_callbacks(&self, callbacks: &EventCallbacks) -> Result<(), JvmtiError> {
        // A JVM that knows fewer events (JDK 17 has none past 86) copies only the part it knows.
        let size = std::mem::size_of::<EventCallbacks>() as jint;
        let rc = call!(
            self,
            SetEventCallbacks,
            fn(*const EventCallbacks, jint),
            callbacks,
            size
        );
        check("SetEventCallbacks", rc)
    }

    /// Enables or disables an event for all threads.
    pub fn set_event(&self, enable: bool, event: Event) -> Result<(), JvmtiError> {
        let mode: u32 = if enable { 1 } else { 0 };
        // SAFETY: as in `call!`, but the C function is variadic, so it is called as one.
        let rc = unsafe {
            let table = *self.raw as *const u8;
            let slot = table.add(offset_of!(jvmtiInterface_1, SetEventNotificationMode))
                as *const *const c_void;
            let f: unsafe extern "C" fn(*mut jvmtiEnv, u32, u32, jthread, ...) -> u32 =
                std::mem::transmute(*slot);
            f(self.raw, mode, event as u32, ptr::null_mut())
        };
        check("SetEventNotificationMode", rc)
    }

    /// The agent's tag on an object (0: none).
    pub fn tag(&self, obj: jobject) -> Result<i64, JvmtiError> {
        let mut tag: jlong = 0;
        let rc = call!(self, GetTag, fn(jobject, *mut jlong), obj, &mut tag);
        check("GetTag", rc)?;
        Ok(tag)
    }

    /// Tags an object: ObjectFree reports the tag when the object is collected.
    pub fn set_tag(&self, obj: jobject, tag: i64) -> Result<(), JvmtiError> {
        let rc = call!(self, SetTag, fn(jobject, jlong), obj, tag);
        check("SetTag", rc)
    }

    /// The identity hash code (`System.identityHashCode`) of an object.
    pub fn object_hash(&self, obj: jobject) -> Result<u32, JvmtiError> {
        let mut hash: jint = 0;
        let rc = call!(
            self,
            GetObjectHashCode,
            fn(jobject, *mut jint),
            obj,
            &mut hash
        );
        check("GetObjectHashCode", rc)?;
        Ok(hash as u32)
    }

    /// Fills `frames` with the current thread's stack from `start_depth` down; returns the count.
    pub fn stack_trace(
        &self,
        start_depth: i32,
        frames: &mut [MaybeUninit<jvmtiFrameInfo>],
    ) -> Result<usize, JvmtiError> {
        if frames.is_empty() {
            return Ok(0);
        }
        let mut count: jint = 0;
        let rc = call!(
            self,
            GetStackTrace,
            fn(jthread, jint, jint, *mut jvmtiFrameInfo, *mut jint),
            ptr::null_mut(),
            start_depth,
            frames.len() as jint,
            frames.as_mut_ptr() as *mut jvmtiFrameInfo,
            &mut count
        );
        check("GetStackTrace", rc)?;
        Ok((count.max(0) as usize).min(frames.len()))
    }

    /// The method and bytecode index of the current thread's frame at `depth`: one frame, not
    /// a whole stack.
    pub fn frame_location(&self, depth: i32) -> Result<(jmethodID, jlong), JvmtiError> {
        let mut method: jmethodID = ptr::null_mut();
        let mut location: jlong = 0;
        let rc = call!(
            self,
            GetFrameLocation,
            fn(jthread, jint, *mut jmethodID, *mut jlong),
            ptr::null_mut(),
            depth,
            &mut method,
            &mut location
        );
        check("GetFrameLocation", rc)?;
        Ok((method, location))
    }

    /// Whether a method is obsolete: a version a frame still runs after its class was
    /// retransformed or redefined (false when JVMTI cannot say).
    pub fn is_method_obsolete(&self, method: jmethodID) -> bool {
        let mut yes: jni_sys::jboolean = 0;
        let rc = call!(
            self,
            IsMethodObsolete,
            fn(jmethodID, *mut jni_sys::jboolean),
            method,
            &mut yes
        );
        check("IsMethodObsolete", rc).is_ok() && yes != 0
    }

    /// Whether a method is native (no bytecode: it cannot be instrumented itself).
    pub fn is_method_native(&self, method: jmethodID) -> Result<bool, JvmtiError> {
        let mut native: jni_sys::jboolean = 0;
        let rc = call!(
            self,
            IsMethodNative,
            fn(jmethodID, *mut jni_sys::jboolean),
            method,
            &mut native
        );
        check("IsMethodNative", rc)?;
        Ok(native != 0)
    }

    /// Whether a loaded class can be retransformed: not a primitive, array or hidden class,
    /// and linked (`JVMTI_CLASS_STATUS_PREPARED`) without error. Why: HotSpot links a class
    /// it retransforms, so retransforming one not linked yet would link it before the
    /// program does, and one whose linking fails (a class of an optional library that is
    /// absent, as Jetty's Slf4jLog without slf4j) fails the whole RetransformClasses call.
    pub fn is_modifiable_class(&self, class: jclass) -> bool {
        const PREPARED: jint = 2;
        const ERROR: jint = 8;
        let mut status: jint = 0;
        let rc = call!(
            self,
            GetClassStatus,
            fn(jclass, *mut jint),
            class,
            &mut status
        );
        if check("GetClassStatus", rc).is_err() || status & PREPARED == 0 || status & ERROR != 0 {
            return false;
        }
        let mut yes: jni_sys::jboolean = 0;
        let rc = call!(
            self,
            IsModifiableClass,
            fn(jclass, *mut jni_sys::jboolean),
            class,
            &mut yes
        );
        check("IsModifiableClass", rc).is_ok() && yes != 0
    }

    /// Sends already loaded classes through the ClassFileLoadHook again, from their original
    /// bytes.
    pub fn retransform_classes(&self, classes: &[jclass]) -> Result<(), JvmtiError> {
        let rc = call!(
            self,
            RetransformClasses,
            fn(jint, *const jclass),
            classes.len() as jint,
            classes.as_ptr()
        );
        check("RetransformClasses", rc)
    }

    /// The `this` object of the frame at `depth` (native frames included) of the current thread.
    pub fn local_instance(&self, depth: i32) -> Result<jobject, JvmtiError> {
        let mut obj: jobject = ptr::null_mut();
        let rc = call!(
            self,
            GetLocalInstance,
            fn(jthread, jint, *mut jobject),
            ptr::null_mut(),
            depth,
            &mut obj
        );
        check("GetLocalInstance", rc)?;
        Ok(obj)
    }

    /// The local variable `slot` (a reference) of the frame at `depth` of the current thread:
    /// at a MethodEntry, slot 0 of a static method is its first argument. A VM operation in
    /// HotSpot, like [`Jvmti::local_instance`].
    pub fn local_object(&self, depth: i32, slot: i32) -> Result<jobject, JvmtiError> {
        let mut obj: jobject = ptr::null_mut();
        let rc = call!(
            self,
            GetLocalObject,
            fn(jthread, jint, jint, *mut jobject),
            ptr::null_mut(),
            depth,
            slot,
            &mut obj
        );
        check("GetLocalObject", rc)?;
        Ok(obj)
    }

    /// The monitors the current thread owns, with the stack depth of the frame that entered
    /// each (-1: entered by JNI). Local references. Cheap for the current thread: HotSpot
    /// walks its own stack without a safepoint.
    pub fn owned_monitors(&self) -> Result<Vec<(jobject, i32)>, JvmtiError> {
        let mut count: jint = 0;
        let mut info: *mut jvmtiMonitorStackDepthInfo = ptr::null_mut();
        let rc = call!(
            self,
            GetOwnedMonitorStackDepthInfo,
            fn(jthread, *mut jint, *mut *mut jvmtiMonitorStackDepthInfo),
            ptr::null_mut(),
            &mut count,
            &mut info
        );
        check("GetOwnedMonitorStackDepthInfo", rc)?;
        Ok(self
            .take_array(info, count)
            .into_iter()
            .map(|i| (i.monitor, i.stack_depth))
            .collect())
    }

    /// The thread that owns `obj`'s monitor now, or null when nobody does; an error, without
    /// asking, while a thread of the agent's attaches or detaches ([`THREADS_CHANGING`]).
    pub fn monitor_owner(&self, obj: jobject) -> Result<jthread, JvmtiError> {
        self.monitor_usage(obj).map(|(owner, _)| owner)
    }

    /// How many times `obj`'s owner has entered its monitor (`entry_count`: 2 inside a
    /// reentrant acquisition), as [`Jvmti::monitor_owner`] asks.
    pub fn monitor_entry_count(&self, obj: jobject) -> Result<i32, JvmtiError> {
        self.monitor_usage(obj).map(|(_, count)| count)
    }

    /// `GetObjectMonitorUsage` of `obj`: its owner (or null) and the owner's entry count.
    fn monitor_usage(&self, obj: jobject) -> Result<(jthread, i32), JvmtiError> {
        let Ok(_steady) = THREADS_CHANGING.try_read() else {
            return Err(JvmtiError {
                function:
                    "GetObjectMonitorUsage (not asked: a thread of the agent's was attaching)",
                code: NOT_ASKED,
            });
        };
        let mut usage = MaybeUninit::<jvmtiMonitorUsage>::zeroed();
        let rc = call!(
            self,
            GetObjectMonitorUsage,
            fn(jobject, *mut jvmtiMonitorUsage),
            obj,
            usage.as_mut_ptr()
        );
        check("GetObjectMonitorUsage", rc)?;
        // SAFETY: filled in by the successful call above.
        let usage = unsafe { usage.assume_init() };
        self.deallocate(usage.waiters as *mut c_void);
        self.deallocate(usage.notify_waiters as *mut c_void);
        Ok((usage.owner, usage.entry_count))
    }

    /// A thread's name, from `GetThreadInfo`, in UTF-8.
    pub fn thread_name(&self, jni: Jni, thread: jthread) -> Result<String, JvmtiError> {
        let mut info = MaybeUninit::<jvmtiThreadInfo>::zeroed();
        let rc = call!(
            self,
            GetThreadInfo,
            fn(jthread, *mut jvmtiThreadInfo),
            thread,
            info.as_mut_ptr()
        );
        check("GetThreadInfo", rc)?;
        // SAFETY: filled in by the successful call above.
        let info = unsafe { info.assume_init() };
        let name = self.take_string(info.name);
        jni.delete_local_ref(info.thread_group);
        jni.delete_local_ref(info.context_class_loader);
        Ok(name)
    }

    /// Every thread alive now (local references).
    pub fn all_threads(&self) -> Result<Vec<jthread>, JvmtiError> {
        let mut count: jint = 0;
        let mut threads: *mut jthread = ptr::null_mut();
        let rc = call!(
            self,
            GetAllThreads,
            fn(*mut jint, *mut *mut jthread),
            &mut count,
            &mut threads
        );
        check("GetAllThreads", rc)?;
        Ok(self.take_array(threads, count))
    }

    /// Every class loaded now (local references).
    /// The JDK's feature release (17, 25, ...), from the JVMTI version number, whose minor
    /// field is the release since JDK 9 (`JVMTI_VERSION_9` is `0x30090000`); `None` before.
    pub fn jdk_release(&self) -> Option<u32> {
        let mut v: jint = 0;
        let rc = call!(self, GetVersionNumber, fn(*mut jint), &mut v);
        check("GetVersionNumber", rc).ok()?;
        let minor = ((v as u32) >> 16) & 0xFF;
        (minor >= 9).then_some(minor)
    }

    pub fn loaded_classes(&self) -> Result<Vec<jclass>, JvmtiError> {
        let mut count: jint = 0;
        let mut classes: *mut jclass = ptr::null_mut();
        let rc = call!(
            self,
            GetLoadedClasses,
            fn(*mut jint, *mut *mut jclass),
            &mut count,
            &mut classes
        );
        check("GetLoadedClasses", rc)?;
        Ok(self.take_array(classes, count))
    }

    /// The methods a (prepared) class declares.
    pub fn class_methods(&self, class: jclass) -> Result<Vec<jmethodID>, JvmtiError> {
        let mut count: jint = 0;
        let mut methods: *mut jmethodID = ptr::null_mut();
        let rc = call!(
            self,
            GetClassMethods,
            fn(jclass, *mut jint, *mut *mut jmethodID),
            class,
            &mut count,
            &mut methods
        );
        check("GetClassMethods", rc)?;
        Ok(self.take_array(methods, count))
    }

    /// A class's JVM type signature, e.g. `Ljava/lang/Object;`.
    pub fn class_signature(&self, class: jclass) -> Result<String, JvmtiError> {
        let mut sig: *mut c_char = ptr::null_mut();
        let rc = call!(
            self,
            GetClassSignature,
            fn(jclass, *mut *mut c_char, *mut *mut c_char),
            class,
            &mut sig,
            ptr::null_mut()
        );
        check("GetClassSignature", rc)?;
        Ok(self.take_string(sig))
    }

    /// The class's `SourceFile` attribute; `None` when it has none.
    pub fn source_file_name(&self, class: jclass) -> Result<Option<String>, JvmtiError> {
        let mut name: *mut c_char = ptr::null_mut();
        let rc = call!(
            self,
            GetSourceFileName,
            fn(jclass, *mut *mut c_char),
            class,
            &mut name
        );
        if rc == code::ABSENT_INFORMATION {
            return Ok(None);
        }
        check("GetSourceFileName", rc)?;
        Ok(Some(self.take_string(name)))
    }

    /// A method's name and descriptor.
    pub fn method_name(&self, method: jmethodID) -> Result<(String, String), JvmtiError> {
        let mut name: *mut c_char = ptr::null_mut();
        let mut sig: *mut c_char = ptr::null_mut();
        let rc = call!(
            self,
            GetMethodName,
            fn(jmethodID, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char),
            method,
            &mut name,
            &mut sig,
            ptr::null_mut()
        );
        check("GetMethodName", rc)?;
        Ok((self.take_string(name), self.take_string(sig)))
    }

    /// The class that declares `method` (a local reference).
    pub fn method_declaring_class(&self, method: jmethodID) -> Result<jclass, JvmtiError> {
        let mut class: jclass = ptr::null_mut();
        let rc = call!(
            self,
            GetMethodDeclaringClass,
            fn(jmethodID, *mut jclass),
            method,
            &mut class
        );
        check("GetMethodDeclaringClass", rc)?;
        Ok(class)
    }

    /// The method's line number table; `None` when it has none (native, abstract, no `-g`).
    pub fn line_number_table(
        &self,
        method: jmethodID,
    ) -> Result<Option<Vec<LineEntry>>, JvmtiError> {
        let mut count: jint = 0;
        let mut table: *mut jvmtiLineNumberEntry = ptr::null_mut();
        let rc = call!(
            self,
            GetLineNumberTable,
            fn(jmethodID, *mut jint, *mut *mut jvmtiLineNumberEntry),
            method,
            &mut count,
            &mut table
        );
        if rc == code::ABSENT_INFORMATION || rc == code::NATIVE_METHOD {
            return Ok(None);
        }
        check("GetLineNumberTable", rc)?;
        let entries = self
            .take_array(table, count)
            .into_iter()
            .map(|e| LineEntry {
                start_location: e.start_location,
                line_number: e.line_number,
            })
            .collect();
        Ok(Some(entries))
    }

    /// A method's bytecode (a copy).
    pub fn bytecodes(&self, method: jmethodID) -> Result<Vec<u8>, JvmtiError> {
        let mut count: jint = 0;
        let mut code: *mut u8 = ptr::null_mut();
        let rc = call!(
            self,
            GetBytecodes,
            fn(jmethodID, *mut jint, *mut *mut u8),
            method,
            &mut count,
            &mut code
        );
        check("GetBytecodes", rc)?;
        Ok(self.take_array(code, count))
    }

    /// A class's constant pool as the class file has it: the entry count and the entries'
    /// bytes (JVMTI `GetConstantPool`).
    pub fn constant_pool(&self, class: jclass) -> Result<(u16, Vec<u8>), JvmtiError> {
        let mut count: jint = 0;
        let mut len: jint = 0;
        let mut bytes: *mut u8 = ptr::null_mut();
        let rc = call!(
            self,
            GetConstantPool,
            fn(jclass, *mut jint, *mut jint, *mut *mut u8),
            class,
            &mut count,
            &mut len,
            &mut bytes
        );
        check("GetConstantPool", rc)?;
        Ok((count as u16, self.take_array(bytes, len)))
    }

    /// The current thread (a local reference).
    pub fn current_thread(&self) -> Result<jthread, JvmtiError> {
        let mut t: jthread = ptr::null_mut();
        let rc = call!(self, GetCurrentThread, fn(*mut jthread), &mut t);
        check("GetCurrentThread", rc)?;
        Ok(t)
    }

    /// The class loader of a class (null: the bootstrap loader).
    pub fn class_loader(&self, class: jclass) -> Result<jobject, JvmtiError> {
        let mut l: jobject = ptr::null_mut();
        let rc = call!(
            self,
            GetClassLoader,
            fn(jclass, *mut jobject),
            class,
            &mut l
        );
        check("GetClassLoader", rc)?;
        Ok(l)
    }

    /// Copies `bytes` into memory allocated by JVMTI, which the JVM frees (ClassFileLoadHook's
    /// new class data must be allocated this way).
    pub fn allocate_copy(&self, bytes: &[u8]) -> Result<*mut u8, JvmtiError> {
        let mut mem: *mut u8 = ptr::null_mut();
        let rc = call!(
            self,
            Allocate,
            fn(jlong, *mut *mut u8),
            bytes.len() as jlong,
            &mut mem
        );
        check("Allocate", rc)?;
        // SAFETY: JVMTI allocated `bytes.len()` bytes at `mem`.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), mem, bytes.len()) };
        Ok(mem)
    }

    /// Every module of the VM (JVMTI 9 `GetAllModules`, function 3).
    pub fn all_modules(&self) -> Result<Vec<jobject>, JvmtiError> {
        let mut count: jint = 0;
        let mut modules: *mut jobject = ptr::null_mut();
        let rc = call!(
            self,
            reserved3,
            fn(*mut jint, *mut *mut jobject),
            &mut count,
            &mut modules
        );
        check("GetAllModules", rc)?;
        Ok(self.take_array(modules, count))
    }

    /// Makes `module` read `to_module` (JVMTI 9 `AddModuleReads`, function 94).
    pub fn add_module_reads(&self, module: jobject, to_module: jobject) -> Result<(), JvmtiError> {
        let rc = call!(self, reserved94, fn(jobject, jobject), module, to_module);
        check("AddModuleReads", rc)
    }

    /// The agent's per-thread pointer for the current thread.
    pub fn thread_local(&self) -> *mut c_void {
        let mut data: *mut c_void = ptr::null_mut();
        let rc = call!(
            self,
            GetThreadLocalStorage,
            fn(jthread, *mut *mut c_void),
            ptr::null_mut(),
            &mut data
        );
        if rc == code::NONE {
            data
        } else {
            ptr::null_mut()
        }
    }

    /// Sets the agent's per-thread pointer of `thread` (null: the current thread).
    pub fn set_thread_local(&self, thread: jthread, data: *mut c_void) -> Result<(), JvmtiError> {
        let rc = call!(
            self,
            SetThreadLocalStorage,
            fn(jthread, *const c_void),
            thread,
            data
        );
        check("SetThreadLocalStorage", rc)
    }

    /// The agent's per-thread pointer of another thread.
    pub fn thread_local_of(&self, thread: jthread) -> *mut c_void {
        let mut data: *mut c_void = ptr::null_mut();
        let rc = call!(
            self,
            GetThreadLocalStorage,
            fn(jthread, *mut *mut c_void),
            thread,
            &mut data
        );
        if rc == code::NONE {
            data
        } else {
            ptr::null_mut()
        }
    }

    fn deallocate(&self, mem: *mut c_void) {
        if !mem.is_null() {
            call!(self, Deallocate, fn(*mut c_void), mem);
        }
    }

    /// Copies a JVMTI-allocated modified-UTF-8 string and frees it.
    fn take_string(&self, s: *mut c_char) -> String {
        if s.is_null() {
            return String::new();
        }
        // SAFETY: JVMTI returns NUL-terminated strings.
        let out = crate::escape::modified_utf8_to_string(unsafe { CStr::from_ptr(s) }.to_bytes());
        self.deallocate(s as *mut c_void);
        out
    }

    /// Copies a JVMTI-allocated array and frees it.
    fn take_array<T: Copy>(&self, p: *mut T, count: jint) -> Vec<T> {
        if p.is_null() {
            return Vec::new();
        }
        // SAFETY: JVMTI returned `count` initialised elements at `p`.
        let v = unsafe { std::slice::from_raw_parts(p, count.max(0) as usize) }.to_vec();
        self.deallocate(p as *mut c_void);
        v
    }
}

/// A `jlong` location as the format writes it: `u32::MAX` (`FFFFFFFF`) for native frames.
pub fn location_to_u32(loc: jlong) -> u32 {
    if loc < 0 {
        u32::MAX
    } else {
        loc as u32
    }
}
