//! Instrumentation mode's ClassFileLoadHook: every class the JVM loads after start-up goes
//! through the Rust rewriter, which inserts the tracker calls.
//!
//! The hook is pure native code: it reads bytes, calls the rewriter and hands back new bytes
//! allocated by JVMTI. No Java code runs and no class is loaded from inside it. For each
//! rewritten method it keeps the rewriter's map from new to original bytecode indexes, so
//! that stack traces and line tables report the original class file's locations.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use jni_sys::jobject;
use orca_rewriter::{rewrite, Config, MethodNote, Outcome};

use crate::jvmti::{Jni, Jvmti};
use crate::metadata::Metadata;

/// How many rewrite failures are printed one by one before only the count at exit.
const FAILURES_SHOWN: u64 = 5;

/// A JNI global reference, usable from any thread.
struct GlobalRef(jobject);
// SAFETY: JNI global references are valid on every thread.
unsafe impl Send for GlobalRef {}
unsafe impl Sync for GlobalRef {}

/// Instrumentation-mode state.
pub struct Instrumentation {
    config: Config,
    /// Whether classes of the JDK's own loaders are rewritten too (option `jdk=yes`).
    jdk: bool,
    platform_loader: OnceLock<GlobalRef>,
    changed: AtomicU64,
    failed: AtomicU64,
    methods_left: AtomicU64,
}

/// What the hook did, for the exit line.
#[derive(Clone, Copy, Debug, Default)]
pub struct HookTotals {
    pub changed: u64,
    pub failed: u64,
    pub methods_left: u64,
}

impl Instrumentation {
    /// All transformations on, the tracker excluded.
    pub fn new(jdk: bool, sites: std::sync::Arc<std::sync::atomic::AtomicU32>) -> Instrumentation {
        let config = Config {
            tracker_class: crate::tracker::CLASS_NAME.to_string(),
            sites: Some(sites),
            ..Config::default()
        };
        Instrumentation {
            config,
            jdk,
            platform_loader: OnceLock::new(),
            changed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            methods_left: AtomicU64::new(0),
        }
    }

    /// Remembers the platform class loader (at VMInit), whose classes count as the JDK's.
    pub fn set_platform_loader(&self, jni: Jni) {
        let class = c"java/lang/ClassLoader";
        if let Some(loader) = jni.call_static_object_method(
            class,
            c"getPlatformClassLoader",
            c"()Ljava/lang/ClassLoader;",
        ) {
            let _ = self
                .platform_loader
                .set(GlobalRef(jni.new_global_ref(loader)));
            jni.delete_local_ref(loader);
        }
    }

    fn is_jdk_loader(&self, jni: Jni, loader: jobject) -> bool {
        loader.is_null()
            || self
                .platform_loader
                .get()
                .is_some_and(|p| jni.is_same_object(loader, p.0))
    }

    /// The hook's work: new class bytes, or `None` to keep the original.
    pub fn transform(
        &self,
        jvmti: &Jvmti,
        jni: Jni,
        meta: &Metadata,
        sites: &crate::sites::Sites,
        loader: jobject,
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        // A class without a name (hidden classes, lambda forms) could not be found again to
        // translate its locations: leave it as it is.
        let name = name?;
        if !self.jdk && self.is_jdk_loader(jni, loader) {
            return None;
        }
        match rewrite(bytes, &self.config) {
            Ok(Outcome::Changed {
                bytes,
                methods,
                notes,
            }) => {
                self.note_methods_left(name, &notes);
                let loader_hash = if loader.is_null() {
                    0
                } else {
                    jvmti.object_hash(loader).unwrap_or(0)
                };
                sites.register(loader_hash, name, &methods);
                meta.register_rewritten(loader_hash, name, methods);
                self.changed.fetch_add(1, Ordering::Relaxed);
                Some(bytes)
            }
            Ok(Outcome::Unchanged { notes }) => {
                self.note_methods_left(name, &notes);
                None
            }
            Ok(Outcome::Excluded) => None,
            Err(e) => {
                let n = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
                if n <= FAILURES_SHOWN {
                    eprintln!("orca: class {name} is left uninstrumented: {e}");
                } else if n == FAILURES_SHOWN + 1 {
                    eprintln!(
                        "orca: more classes cannot be instrumented; the count is in the exit line"
                    );
                }
                None
            }
        }
    }

    /// Counts the methods the rewriter left unchanged and names the first few on stderr, so
    /// that a gap in the events is never silent.
    fn note_methods_left(&self, class: &str, notes: &[MethodNote]) {
        for note in notes {
            let n = self.methods_left.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= FAILURES_SHOWN {
                eprintln!(
                    "orca: method {}.{}{} is left uninstrumented: {}",
                    class.replace('/', "."),
                    note.name,
                    note.descriptor,
                    note.reason
                );
            } else if n == FAILURES_SHOWN + 1 {
                eprintln!(
                    "orca: more methods are left uninstrumented; the count is in the exit line"
                );
            }
        }
    }

    /// The counts for the exit line.
    pub fn totals(&self) -> HookTotals {
        HookTotals {
            changed: self.changed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            methods_left: self.methods_left.load(Ordering::Relaxed),
        }
    }
}
