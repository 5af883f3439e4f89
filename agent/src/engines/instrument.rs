//! Instrumentation mode's event source: the ClassFileLoadHook sends every class the JVM
//! loads after start-up through the Rust rewriter, which inserts the tracker calls; the
//! rewritten call sites are bound to their methods at ClassPrepare; what the tracker then
//! reports is [`super::tracker`]'s.
//!
//! The hook is pure native code: it reads bytes, calls the rewriter and hands back new bytes
//! allocated by JVMTI. No Java code runs and no class is loaded from inside it. For each
//! rewritten method it keeps the rewriter's map from new to original bytecode indexes, so
//! that stack traces and line tables report the original class file's locations.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use jni_sys::{jclass, jobject, JavaVM};
use orca_rewriter::{
    align, align_to_running, code_lengths, rewrite, Config, MethodHook, MethodMap, MethodNote,
    Outcome,
};

use super::methods::tracked;
use super::tracker::{self, TrackerSettings};
use super::{report, LOCAL_FRAME};
use crate::jvmti::{Capability, Event, EventCallbacks, Jni, Jvmti};
use crate::recorder::Recorder;

/// How many rewrite failures are printed one by one before only the count at exit.
const FAILURES_SHOWN: u64 = 5;
/// The package of the JDK's lock classes (internal-name prefix).
const LOCK_PACKAGE: &str = "java/util/concurrent/locks/";

/// Class bytes handed from one of Orca's class-load hooks to the next on the thread that
/// loads the class, by class name (a transformer may load classes of its own meanwhile, so
/// they stack up); at most this many are kept.
const HANDOFFS: usize = 32;

/// What Orca's last hook needs of what its rewriting hook made of a class.
struct Handoff {
    name: String,
    /// The defining loader's key.
    key: i64,
    /// The bytes Orca's rewriting hook handed on (its output, or its input if it changed
    /// nothing).
    bytes: Vec<u8>,
    /// The maps of those bytes to the original class file's, by method.
    methods: Vec<MethodMap>,
}

thread_local! {
    /// The class file as the first hook saw it, before any agent that runs after the
    /// retransformation-incapable ones changed it.
    static ORIGINALS: RefCell<Vec<(String, Vec<u8>)>> = const { RefCell::new(Vec::new()) };
    /// Orca's rewriting hook's result, for its last hook.
    static HANDED: RefCell<Vec<Handoff>> = const { RefCell::new(Vec::new()) };
}

/// Pushes `item` on a hand-off stack, dropping the oldest past [`HANDOFFS`].
fn push_bounded<T>(stack: &mut Vec<T>, item: T) {
    if stack.len() >= HANDOFFS {
        stack.remove(0);
    }
    stack.push(item);
}

/// A JVMTI environment of Orca's own with `caps` and only a class-load hook.
///
/// # Safety
/// `vm` is the running VM's `JavaVM*`.
unsafe fn make_env(
    vm: *mut JavaVM,
    callbacks: &EventCallbacks,
    caps: &[Capability],
) -> Option<Jvmti> {
    // SAFETY: as this function's.
    let env = unsafe { Jvmti::from_vm(vm) }.ok()?;
    env.add_capabilities(caps).ok()?;
    env.set_event_callbacks(callbacks).ok()?;
    env.set_event(true, Event::ClassFileLoadHook).ok()?;
    Some(env)
}

/// A JNI global reference, usable from any thread.
struct GlobalRef(jobject);
// SAFETY: JNI global references are valid on every thread.
unsafe impl Send for GlobalRef {}
unsafe impl Sync for GlobalRef {}

/// The call sites of one rewritten method, waiting for its class to be prepared.
struct PendingMethod {
    name: String,
    descriptor: String,
    sites: Vec<(u32, u32)>,
    exit_enters: Vec<(u32, u32)>,
}

/// The rewriter's configurations, fixed at VMInit (when the running JDK's natives are known).
struct Configs {
    /// Classes of the application's loaders: monitors, and call sites of tracked natives.
    app: Config,
    /// Classes of the JDK's loaders: with `jdk=yes` as `app` plus the hooks; otherwise the
    /// hooks only, and only for `hook_classes`.
    jdk: Config,
    /// With `jdk=no`, the JDK's other classes: only their j.u.c. lock calls name their site
    /// (`Config::lock_sites`), and nothing else of them changes. Why: a lock call whose site
    /// is not named costs the hooked lock method a walk of one frame (about 400 ns, in
    /// compiled code `vframe::sender` and scope decoding); the JDK's own socket and executor
    /// locks are most of the lock calls of a server (Jetty: 5 of its 10 per request; the walk
    /// was 8% of the server's samples). The lock classes themselves are left out: their calls to each other
    /// are nested in the call already under way, which needs no site.
    jdk_sites: Config,
    /// The classes that declare hooked methods.
    hook_classes: HashSet<String>,
}

/// The instrumentation engine.
pub struct Instrumentation {
    config: Config,
    configs: OnceLock<Configs>,
    /// Whether classes of the JDK's own loaders are rewritten too (option `jdk=yes`).
    jdk: bool,
    /// How the tracker records monitors, set when it is installed.
    settings: TrackerSettings,
    platform_loader: OnceLock<GlobalRef>,
    /// The application class loader: its classes are never unloaded.
    system_loader: OnceLock<GlobalRef>,
    /// The sites of rewritten classes not prepared yet, by (loader key, internal name; see
    /// [`Metadata::loader_key`](crate::recorder::metadata::Metadata::loader_key)): the
    /// class-load hook cannot bind them, since the methods have no `jmethodID` before then.
    /// A class loaded and never linked leaves its entry until its loader is collected.
    pending: Mutex<HashMap<(i64, String), Vec<PendingMethod>>>,
    changed: AtomicU64,
    failed: AtomicU64,
    methods_left: AtomicU64,
    /// Classes changed by another agent whose changes could not be followed (only the first
    /// few are named).
    untranslated: AtomicU64,
    /// The JVMTI environment whose class-load hook runs before every retransformation-capable
    /// agent's ([`Instrumentation::class_file_first`]) and the one whose hook runs after
    /// every agent loaded at start-up ([`Instrumentation::class_file_last`]). Why: other
    /// agents (APM, mocks, coverage) change classes before or after Orca; with the class as
    /// it was before them and as it is after them, Orca's maps lead from the code that runs
    /// to the original class file.
    first_env: OnceLock<Jvmti>,
    last_env: OnceLock<Jvmti>,
    /// Classes retransformed or redefined, by (loader key, name): the class and the code
    /// length of each method as Orca's last hook left it. An agent attached at run time has
    /// an environment younger than Orca's last, so its hook runs after it unseen: at exit a
    /// method whose code is not what Orca left shows it.
    redefinitions: Mutex<HashMap<(i64, String), Redefinition>>,
    /// A detach is restoring the classes: every hook declines, so that a retransformation
    /// gives each class back its original bytes.
    declining: AtomicBool,
    /// The classes this recording changed, by (loader key, internal name): what a detach
    /// restores.
    changed_classes: Mutex<HashSet<(i64, String)>>,
    /// While declining: each restored class's code length per method, as its original class
    /// file has it, to check after the retransformation that the JVM runs that code.
    originals: Mutex<HashMap<String, CodeLengths>>,
}

/// A class's code length per method: (name, descriptor, bytes).
type CodeLengths = Vec<(String, String, u32)>;

/// What a detach did to the classes, for its line on stderr.
#[derive(Clone, Copy, Debug, Default)]
pub struct Restored {
    /// Classes given back their original bytes.
    pub classes: usize,
    /// Of them, those whose running code still differs from the original class file's (a
    /// retransformation that failed, or another agent's hook).
    pub differing: usize,
}

/// A class as Orca's last hook left it in a retransformation or redefinition.
struct Redefinition {
    class: GlobalRef,
    lengths: Vec<(String, String, u32)>,
}

/// What the hook did, for the exit line.
#[derive(Clone, Copy, Debug, Default)]
pub struct HookTotals {
    pub changed: u64,
    pub failed: u64,
    pub methods_left: u64,
}

impl Instrumentation {
    /// All transformations on, the tracker excluded; site IDs drawn from the recorder's.
    pub fn new(
        jdk: bool,
        guards: bool,
        settings: TrackerSettings,
        rec: &Recorder,
    ) -> Instrumentation {
        let config = Config {
            tracker_class: tracker::CLASS_NAME.to_string(),
            sites: Some(rec.sites.counter.clone()),
            guards,
            // stack locking, the default before JDK 23, inflates a locked monitor to hash it
            hash_at_birth: rec.jvmti.jdk_release().is_some_and(|r| r <= 22),
            ..Config::default()
        };
        Instrumentation {
            config,
            configs: OnceLock::new(),
            jdk,
            settings,
            platform_loader: OnceLock::new(),
            system_loader: OnceLock::new(),
            pending: Mutex::new(HashMap::new()),
            changed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            methods_left: AtomicU64::new(0),
            untranslated: AtomicU64::new(0),
            first_env: OnceLock::new(),
            last_env: OnceLock::new(),
            redefinitions: Mutex::new(HashMap::new()),
            declining: AtomicBool::new(false),
            changed_classes: Mutex::new(HashSet::new()),
            originals: Mutex::new(HashMap::new()),
        }
    }

    /// VMInit: install the tracker, then switch on the class-load hook. Without the tracker
    /// nothing is switched on: recording goes on with monitor contention and threads only.
    pub fn start(&self, rec: &Recorder, jni: Jni, last: &EventCallbacks) {
        self.set_platform_loader(jni);
        let fields = &rec.buffers.fields;
        if let Err(e) = tracker::install(jni, &self.settings, fields, self.settings.session) {
            crate::say!("orca: {e}; recording without instrumentation (monitor contention and threads only)");
            return;
        }
        let loaded = self.make_configs(rec, jni);
        rec.meta.set_instrumenting();
        // Sites are bound to their methods when a class is prepared.
        report(rec.jvmti.set_event(true, Event::ClassPrepare));
        report(rec.jvmti.set_event(true, Event::ObjectFree));
        self.create_last_env(jni, last);
        report(rec.jvmti.set_event(true, Event::ClassFileLoadHook));
        // The tracked JDK classes loaded before now (Object and Thread always) go through the
        // hook again, from their original bytes.
        if !loaded.is_empty() {
            if let Err(e) = rec.jvmti.retransform_classes(&loaded) {
                crate::say!("orca: cannot instrument the tracked JDK methods of the classes loaded before start-up ({e}); their calls (Thread, Object) are not recorded");
            }
            for c in loaded {
                jni.delete_global_ref(c);
            }
        }
    }

    /// An attach: [`Instrumentation::start`], then the classes already loaded that the
    /// recording instruments (the application's; with `jdk=yes` the JDK's too) are
    /// retransformed, so that code called from now on is rewritten. A method already running
    /// goes on in its old code until it returns (JVMTI's retransformation changes only later
    /// calls): its monitors were taken without the tracker, and their exits are not seen
    /// either. The rewriter adds no method, field or attribute outside `Code`, which a
    /// retransformation forbids.
    pub fn start_attached(&self, rec: &Recorder, jni: Jni, last: &EventCallbacks) {
        self.start(rec, jni, last);
        if self.configs.get().is_none() {
            return; // the tracker could not be installed: said already
        }
        let jvmti = &rec.jvmti;
        let mut classes = Vec::new();
        jni.with_local_frame(LOCAL_FRAME, || {
            for c in jvmti.loaded_classes().unwrap_or_default() {
                if self.instruments_loaded(rec, jni, c) {
                    classes.push(jni.new_global_ref(c));
                }
                jni.delete_local_ref(c);
            }
        });
        let failed = retransform_each(jvmti, &classes);
        if !failed.is_empty() {
            let names: Vec<String> = failed
                .iter()
                .take(FAILURES_SHOWN as usize)
                .map(|(c, e)| {
                    let sig = jvmti.class_signature(*c).unwrap_or_default();
                    format!(
                        "{} ({e})",
                        sig.trim_start_matches('L')
                            .trim_end_matches(';')
                            .replace('/', ".")
                    )
                })
                .collect();
            crate::say!("orca: {} of {} loaded classes could not be instrumented, their monitors are not recorded: {}{}", failed.len(), classes.len(), names.join(", "), if failed.len() > names.len() { ", ..." } else { "" });
        }
        for c in classes {
            jni.delete_global_ref(c);
        }
    }

    /// Whether an attach retransforms loaded class `c`: a modifiable class of the
    /// application (or any with `jdk=yes`), not the tracker, not a tracked JDK class (those
    /// [`Instrumentation::start`] did).
    fn instruments_loaded(&self, rec: &Recorder, jni: Jni, c: jclass) -> bool {
        let jvmti = &rec.jvmti;
        if !jvmti.is_modifiable_class(c) {
            return false;
        }
        let Ok(sig) = jvmti.class_signature(c) else {
            return false;
        };
        let Some(name) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
            return false;
        };
        if name.starts_with(tracker::CLASS_NAME)
            || self
                .configs
                .get()
                .is_some_and(|k| k.hook_classes.contains(name))
        {
            return false;
        }
        if self.jdk {
            return true;
        }
        match jvmti.class_loader(c) {
            Ok(l) => {
                let jdk = self.is_jdk_loader(jni, l);
                if !l.is_null() {
                    jni.delete_local_ref(l);
                }
                !jdk
            }
            Err(_) => false,
        }
    }

    /// A detach: every class this recording changed is retransformed with the hooks
    /// declining, which gives it back its original bytes, and the hooks are switched off.
    /// Then the running code of each is compared with its original class file's (code
    /// lengths per method).
    pub fn detach(&self, rec: &Recorder, jni: Jni) -> Restored {
        let jvmti = &rec.jvmti;
        self.declining.store(true, Ordering::Release);
        let changed = std::mem::take(
            &mut *self
                .changed_classes
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        let mut classes = Vec::new();
        jni.with_local_frame(LOCAL_FRAME, || {
            for c in jvmti.loaded_classes().unwrap_or_default() {
                let name = jvmti.class_signature(c).ok().and_then(|s| {
                    s.strip_prefix('L')
                        .and_then(|s| s.strip_suffix(';'))
                        .map(str::to_string)
                });
                let key = rec.meta.class_loader_key(jvmti, jni, c);
                if let (Some(name), Some(key)) = (name, key) {
                    if changed.contains(&(key, name)) {
                        classes.push(jni.new_global_ref(c));
                    }
                }
                jni.delete_local_ref(c);
            }
        });
        let failed = retransform_each(jvmti, &classes).len();
        report(jvmti.set_event(false, Event::ClassFileLoadHook));
        if let Some(last) = self.last_env.get() {
            report(last.set_event(false, Event::ClassFileLoadHook));
        }
        let _ = jvmti.set_event(false, Event::ClassPrepare);
        let originals =
            std::mem::take(&mut *self.originals.lock().unwrap_or_else(|e| e.into_inner()));
        let mut differing = failed;
        for &c in &classes {
            let name = jvmti.class_signature(c).unwrap_or_default();
            let name = name
                .strip_prefix('L')
                .and_then(|s| s.strip_suffix(';'))
                .unwrap_or("");
            let Some(lengths) = originals.get(name) else {
                continue;
            };
            let differs = jvmti
                .class_methods(c)
                .unwrap_or_default()
                .into_iter()
                .any(|m| {
                    let (Ok((n, d)), Ok(code)) = (jvmti.method_name(m), jvmti.bytecodes(m)) else {
                        return false;
                    };
                    lengths
                        .iter()
                        .any(|(ln, ld, len)| *ln == n && *ld == d && *len as usize != code.len())
                });
            if differs {
                differing += 1;
            }
            jni.delete_global_ref(c);
        }
        Restored {
            classes: classes.len(),
            differing,
        }
    }

    /// Agent_OnLoad: the environment of the first hook, created now so that it is older than
    /// every agent of the command line after Orca (retransformation-incapable ones run in
    /// the order their environments were made).
    ///
    /// # Safety
    /// `vm` is the `JavaVM*` the JVM passed to `Agent_OnLoad`.
    pub unsafe fn create_first_env(&self, vm: *mut JavaVM, first: &EventCallbacks) {
        // SAFETY: as this function's.
        match unsafe { make_env(vm, first, &[]) } {
            Some(e) => {
                let _ = self.first_env.set(e);
                let before = agents_before_orca();
                if !before.is_empty() {
                    crate::say!("orca: {} loads before Orca: a class it changes at load without being able to retransform classes (no `Can-Retransform-Classes: true`) is reported with its code's bytecode indexes, not the original class file's; load Orca first to make them exact", before.join(", "));
                }
            }
            None => crate::say!("orca: cannot see classes before other agents change them (no second JVMTI environment); locations in classes another agent changes before Orca are that agent's"),
        }
    }

    /// VMInit: the environment of the last hook, younger than every agent of the command
    /// line, whose hooks therefore run before it. Without it Orca says once what it cannot
    /// translate.
    fn create_last_env(&self, jni: Jni, last: &EventCallbacks) {
        // SAFETY: the JavaVM* of the running VM.
        let env = jni
            .java_vm()
            .and_then(|vm| unsafe { make_env(vm, last, &[Capability::RetransformClasses]) });
        match env {
            Some(e) => {
                let _ = self.last_env.set(e);
            }
            None => crate::say!("orca: cannot see classes after other agents change them (no third JVMTI environment); locations in classes another agent changes after Orca are off by what it inserted"),
        }
    }

    /// The first hook (retransformation-incapable, so it runs before every capable
    /// agent's): keeps the class file as loaded, for [`Instrumentation::class_file`].
    pub fn class_file_first(&self, name: Option<&str>, bytes: &[u8]) {
        // Only while the rewriting hook runs (from VMInit), which takes each class kept: a
        // class kept before could be taken for another of the same name.
        let (Some(name), Some(_)) = (name, self.configs.get()) else {
            return;
        };
        // A thread whose locals are being torn down keeps nothing.
        let _ = ORIGINALS
            .try_with(|o| push_bounded(&mut o.borrow_mut(), (name.to_string(), bytes.to_vec())));
    }

    /// The last hook (younger than every agent of the command line): when an agent changed
    /// the class after Orca, maps its code to Orca's by an instruction diff and registers
    /// the composed maps, so that the code that runs maps to the original class file. For a
    /// retransformation or redefinition it also binds the new version's sites and hands the
    /// new maps to the methods already described.
    ///
    /// An agent that replaces the class outright (Byte Buddy's retransformation strategy
    /// returns the bytes it made, whatever it is given) removes Orca's code: then the class
    /// is rewritten again here, and its maps lead through the diff to the original.
    pub fn class_file_last(
        &self,
        rec: &Recorder,
        jni: Jni,
        redefined: jclass,
        loader: jobject,
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        let name = name?;
        if self.declining.load(Ordering::Acquire) {
            return None;
        }
        let handed = HANDED
            .try_with(|h| {
                let mut h = h.borrow_mut();
                let i = h.iter().rposition(|x| x.name == name)?;
                Some(h.remove(i))
            })
            .ok()
            .flatten();
        let mut out = None;
        if let Some(h) = handed {
            if h.bytes != bytes {
                match align(bytes, &h.bytes) {
                    Ok(after) => {
                        let methods = through(after, h.methods);
                        let ours_gone = contains(&h.bytes, tracker::CLASS_NAME.as_bytes())
                            && !contains(bytes, tracker::CLASS_NAME.as_bytes());
                        match self.configs.get() {
                            Some(configs) if ours_gone => {
                                out = self.rewrite_class(
                                    rec, jni, loader, name, bytes, configs, methods, false,
                                );
                            }
                            _ => rec.meta.register_rewritten(h.key, name, methods),
                        }
                    }
                    Err(e) => self.say_untranslated(name, &e.to_string()),
                }
            }
        }
        if !redefined.is_null() {
            self.redefined(rec, jni, redefined);
            self.remember(rec, jni, redefined, name, out.as_deref().unwrap_or(bytes));
        }
        out
    }

    /// Notes what a retransformed or redefined class's code is as Orca's last hook leaves it.
    fn remember(&self, rec: &Recorder, jni: Jni, class: jclass, name: &str, bytes: &[u8]) {
        // The boot loader's: the tracked JDK classes Orca retransforms itself at start-up.
        let Some(key) = rec
            .meta
            .class_loader_key(&rec.jvmti, jni, class)
            .filter(|&k| k != crate::recorder::metadata::BOOT_LOADER)
        else {
            return;
        };
        let Ok(lengths) = code_lengths(bytes) else {
            return;
        };
        let mut r = self.redefinitions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = r.get_mut(&(key, name.to_string())) {
            old.lengths = lengths;
            return;
        }
        let class = GlobalRef(jni.new_global_ref(class));
        r.insert((key, name.to_string()), Redefinition { class, lengths });
    }

    /// At exit: one line per retransformed class whose code an agent Orca did not see
    /// changed after it (the first few; then their count).
    fn check_redefinitions(&self, rec: &Recorder) {
        let r = self.redefinitions.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed: Vec<&str> = Vec::new();
        for ((_, name), d) in r.iter() {
            let methods = rec.jvmti.class_methods(d.class.0).unwrap_or_default();
            let differs = methods.into_iter().any(|m| {
                let (Ok((n, desc)), Ok(code)) = (rec.jvmti.method_name(m), rec.jvmti.bytecodes(m))
                else {
                    return false;
                };
                d.lengths
                    .iter()
                    .any(|(ln, ld, len)| *ln == n && *ld == desc && *len as usize != code.len())
            });
            if differs {
                changed.push(name);
            }
        }
        changed.sort_unstable();
        for name in changed.iter().take(FAILURES_SHOWN as usize) {
            crate::say!("orca: class {} was changed after Orca by an agent attached at run time (its class-load hook runs after Orca's): its events carry that agent's bytecode indexes, not the original class file's", name.replace('/', "."));
        }
        if changed.len() > FAILURES_SHOWN as usize {
            crate::say!(
                "orca: {} more classes were changed after Orca by agents attached at run time",
                changed.len() - FAILURES_SHOWN as usize
            );
        }
    }

    /// A class retransformed or redefined: no ClassPrepare comes, so its new sites are bound
    /// now (its methods keep their jmethodIDs), and described methods get their new maps.
    fn redefined(&self, rec: &Recorder, jni: Jni, class: jclass) {
        self.class_prepare(rec, jni, class);
        rec.meta.class_redefined(&rec.jvmti, jni, class);
    }

    /// One line per class whose changes by another agent could not be followed.
    fn say_untranslated(&self, name: &str, why: &str) {
        let n = self.untranslated.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= FAILURES_SHOWN {
            crate::say!("orca: class {name} as another agent changed it cannot be read ({why}); its locations are that agent's");
        }
    }

    /// Decides, for the running JVM, which tracked methods are hooked (those with bytecode)
    /// and which are redirected at their call sites (the natives), and sets the configurations.
    /// Returns the tracked classes already loaded (global references), to retransform.
    fn make_configs(&self, rec: &Recorder, jni: Jni) -> Vec<jclass> {
        let jvmti = &rec.jvmti;
        let mut natives: HashSet<(String, String, String)> = HashSet::new();
        let mut loaded = Vec::new();
        jni.with_local_frame(LOCAL_FRAME, || {
            for c in jvmti.loaded_classes().unwrap_or_default() {
                let sig = jvmti.class_signature(c).unwrap_or_default();
                let class = sig
                    .strip_prefix('L')
                    .and_then(|s| s.strip_suffix(';'))
                    .unwrap_or("");
                if tracked().any(|t| t.class == class) {
                    for m in jvmti.class_methods(c).unwrap_or_default() {
                        let Ok((name, desc)) = jvmti.method_name(m) else {
                            continue;
                        };
                        if tracked().any(|t| t.matches(class, &name, &desc))
                            && jvmti.is_method_native(m).unwrap_or(true)
                        {
                            natives.insert((class.to_string(), name, desc));
                        }
                    }
                    loaded.push(jni.new_global_ref(c));
                }
                jni.delete_local_ref(c);
            }
        });
        let hooks: Vec<MethodHook> = tracked()
            .map(|t| MethodHook {
                class: t.class.to_string(),
                name: t.name.to_string(),
                descriptor: t.descriptor.map(str::to_string),
                report: t.call.hook_report(),
                sync_field: t
                    .call
                    .sync_field()
                    .map(|(n, d)| (n.to_string(), d.to_string())),
            })
            .collect();
        // A call-site rule stays only for a native (or untracked) target.
        let skip_calls: Vec<(String, String)> = orca_rewriter::call_site_targets()
            .into_iter()
            .filter(|&(class, name, desc)| {
                tracked().any(|t| t.matches(class, name, desc))
                    && !natives.contains(&(class.to_string(), name.to_string(), desc.to_string()))
            })
            .map(|(_, name, desc)| (name.to_string(), desc.to_string()))
            .collect();
        // The natives' call sites are instrumented inline, without a wrapper frame.
        let inline_calls: Vec<(String, String, i32)> = orca_rewriter::call_site_targets()
            .into_iter()
            .filter_map(|(class, name, desc)| {
                let t = tracked().find(|t| t.matches(class, name, desc))?;
                natives
                    .contains(&(class.to_string(), name.to_string(), desc.to_string()))
                    .then(|| (name.to_string(), desc.to_string(), t.call.hook_report()))
            })
            .collect();
        let app = Config {
            skip_calls: skip_calls.clone(),
            inline_calls,
            // j.u.c. lock calls name their site when the lock methods are hooked
            lock_sites: hooks.iter().any(|h| h.sync_field.is_some()),
            ..self.config.clone()
        };
        let jdk = if self.jdk {
            Config {
                hooks: hooks.clone(),
                ..app.clone()
            }
        } else {
            Config {
                monitors: false,
                synchronized_methods: false,
                object_calls: false,
                thread_calls: false,
                semaphore_calls: false,
                hooks: hooks.clone(),
                ..self.config.clone()
            }
        };
        let jdk_sites = Config {
            monitors: false,
            synchronized_methods: false,
            object_calls: false,
            thread_calls: false,
            semaphore_calls: false,
            lock_sites: app.lock_sites,
            exclude: vec![LOCK_PACKAGE.to_string()],
            ..self.config.clone()
        };
        let hook_classes = hooks.iter().map(|h| h.class.clone()).collect();
        let _ = self.configs.set(Configs {
            app,
            jdk,
            jdk_sites,
            hook_classes,
        });
        loaded
    }

    /// VMDeath: every thread's buffer is drained, since their threads will not end on their
    /// own any more.
    pub fn stop(&self, rec: &Recorder, jni: Jni) {
        self.check_redefinitions(rec);
        rec.drain_all(jni);
        let _ = rec.jvmti.set_event(false, Event::ClassPrepare);
    }

    /// The class-load hook: the sites of a rewritten class, bound when it is prepared.
    fn register_sites(&self, loader: i64, class_name: &str, methods: &[MethodMap]) {
        let list: Vec<PendingMethod> = methods
            .iter()
            .filter(|m| !m.sites.is_empty())
            .map(|m| PendingMethod {
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                sites: m.sites.clone(),
                exit_enters: m.exit_enters.clone(),
            })
            .collect();
        if list.is_empty() {
            return;
        }
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.insert((loader, class_name.to_string()), list);
    }

    /// ObjectFree of a loader's tag: the sites of its classes never prepared go with it.
    pub fn loader_freed(&self, loader: i64) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.retain(|k, _| k.0 != loader);
    }

    /// Classes whose sites wait for their ClassPrepare (the redeployment test's figure).
    pub fn pending_classes(&self) -> usize {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// ClassPrepare: binds the sites of `class`, if it was rewritten; the pending entry is
    /// dropped then.
    pub fn class_prepare(&self, rec: &Recorder, jni: Jni, class: jclass) {
        let jvmti = &rec.jvmti;
        if self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            return;
        }
        let Ok(sig) = jvmti.class_signature(class) else {
            return;
        };
        let Some(internal) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
            return;
        };
        let Some(loader) = rec.meta.class_loader_key(jvmti, jni, class) else {
            return;
        };
        let Some(list) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(loader, internal.to_string()))
        else {
            return;
        };
        // A class of a loader that may be collected (a web application's, a bundle's) may be
        // unloaded before its threads' buffered records naming its sites are written, and
        // then JVMTI can no longer describe its methods: they are described now.
        let unloadable = match jvmti.class_loader(class) {
            Ok(l) if !l.is_null() => {
                let jdk = self.is_jdk_loader(jni, l)
                    || self
                        .system_loader
                        .get()
                        .is_some_and(|s| jni.is_same_object(l, s.0));
                jni.delete_local_ref(l);
                !jdk
            }
            _ => false,
        };
        for m in jvmti.class_methods(class).unwrap_or_default() {
            let Ok((name, descriptor)) = jvmti.method_name(m) else {
                continue;
            };
            if let Some(p) = list
                .iter()
                .find(|p| p.name == name && p.descriptor == descriptor)
            {
                for &(id, bci) in &p.sites {
                    rec.sites.bind(id, m, bci);
                }
                for &(exit, enter) in &p.exit_enters {
                    rec.sites.bind_enter(exit, enter);
                }
                if unloadable {
                    rec.meta.method_id(jvmti, jni, &rec.log, m);
                }
            }
        }
    }

    /// Remembers the platform class loader (at VMInit), whose classes count as the JDK's,
    /// and the application class loader.
    fn set_platform_loader(&self, jni: Jni) {
        let class = c"java/lang/ClassLoader";
        if let Some(loader) = jni.call_static_object_method(
            class,
            c"getSystemClassLoader",
            c"()Ljava/lang/ClassLoader;",
        ) {
            let _ = self
                .system_loader
                .set(GlobalRef(jni.new_global_ref(loader)));
            jni.delete_local_ref(loader);
        }
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

    /// ClassFileLoadHook: new class bytes, or `None` to keep the original.
    pub fn class_file(
        &self,
        rec: &Recorder,
        jni: Jni,
        redefined: jclass,
        loader: jobject,
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        // A class without a name (hidden classes, lambda forms) could not be found again to
        // translate its locations: leave it as it is.
        let name = name?;
        if self.declining.load(Ordering::Acquire) {
            // A detach restores the class: its original bytes stay, and are noted to check.
            if let Ok(lengths) = code_lengths(bytes) {
                self.originals
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.to_string(), lengths);
            }
            return None;
        }
        // The class file before the agents that ran before this hook (none when it was not
        // kept, as for a retransformation, which starts from the class file as loaded).
        let original = ORIGINALS
            .try_with(|o| {
                let mut o = o.borrow_mut();
                let i = o.iter().rposition(|x| x.0 == name)?;
                Some(o.remove(i).1)
            })
            .ok()
            .flatten();
        let configs = self.configs.get()?;
        let before = if !redefined.is_null() {
            // A retransformation starts from the class file as loaded, a redefinition from new
            // bytes, and agents before Orca may have changed either: what Orca gets is
            // compared with the version that runs, whose maps lead to the original.
            self.running_maps(rec, jni, redefined, name, bytes)
        } else {
            match original {
                Some(o) if o != bytes => match align(bytes, &o) {
                    Ok(maps) => maps,
                    Err(e) => {
                        self.say_untranslated(name, &e.to_string());
                        Vec::new()
                    }
                },
                _ => Vec::new(),
            }
        };
        let out = self.rewrite_class(rec, jni, loader, name, bytes, configs, before, true);
        // Without a last hook, this one is the last chance to bind a new version's sites.
        if !redefined.is_null() && self.last_env.get().is_none() {
            self.redefined(rec, jni, redefined);
        }
        out
    }

    /// For a class being retransformed or redefined: the maps from `bytes` (what Orca is
    /// given) to the original class file, through the version that runs now (its code and
    /// constant pool from JVMTI, its maps as registered).
    fn running_maps(
        &self,
        rec: &Recorder,
        jni: Jni,
        class: jclass,
        name: &str,
        bytes: &[u8],
    ) -> Vec<MethodMap> {
        let jvmti = &rec.jvmti;
        let mut running = rec.meta.class_maps(jvmti, jni, class);
        for m in running.iter_mut() {
            // its sites are bound already
            m.sites.clear();
        }
        let Ok((count, pool)) = jvmti.constant_pool(class) else {
            self.say_untranslated(name, "JVMTI cannot give its constant pool");
            return running;
        };
        let mut code = Vec::new();
        for m in jvmti.class_methods(class).unwrap_or_default() {
            let (Ok((n, d)), Ok(c)) = (jvmti.method_name(m), jvmti.bytecodes(m)) else {
                continue;
            };
            code.push((n, d, c));
        }
        let to_running = match align_to_running(bytes, count, &pool, &code) {
            Ok(maps) => maps,
            Err(e) => {
                self.say_untranslated(name, &e.to_string());
                return running;
            }
        };
        // Methods whose code is the same as the running version's keep its maps.
        through(to_running, running)
    }

    /// The rewriting step of [`Instrumentation::class_file`]; `before` maps `bytes` to the
    /// original class file where another agent changed it before Orca.
    #[allow(clippy::too_many_arguments)]
    fn rewrite_class(
        &self,
        rec: &Recorder,
        jni: Jni,
        loader: jobject,
        name: &str,
        bytes: &[u8],
        configs: &Configs,
        before: Vec<MethodMap>,
        first: bool,
    ) -> Option<Vec<u8>> {
        let Recorder { jvmti, meta, .. } = rec;
        // With `jdk=no`, a JDK class is rewritten only for its tracked methods and the sites
        // of its lock calls: not counted among the classes instrumented, which are the
        // program's.
        let mut counted = first;
        let config = if self.is_jdk_loader(jni, loader) {
            if self.jdk {
                &configs.jdk
            } else {
                counted = false;
                if configs.hook_classes.contains(name) {
                    &configs.jdk
                } else if configs.jdk_sites.lock_sites {
                    &configs.jdk_sites
                } else {
                    return None;
                }
            }
        } else {
            &configs.app
        };
        match rewrite(bytes, config) {
            Ok(Outcome::Changed {
                bytes,
                methods,
                notes,
            }) => {
                self.note_methods_left(name, &notes);
                // A loader that cannot be tagged could not be told from another: its
                // classes' locations could not be translated, so they stay as they are.
                let key = meta.loader_key(jvmti, loader)?;
                let methods = through(methods, before);
                self.register_sites(key, name, &methods);
                meta.register_rewritten(key, name, methods.clone());
                self.changed_classes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert((key, name.to_string()));
                if counted {
                    self.changed.fetch_add(1, Ordering::Relaxed);
                }
                if first {
                    self.hand_on(name, key, &bytes, methods);
                }
                Some(bytes)
            }
            Ok(Outcome::Unchanged { notes }) => {
                self.note_methods_left(name, &notes);
                if first {
                    self.unchanged(rec, loader, name, bytes, counted, before);
                }
                None
            }
            Ok(Outcome::Excluded) => {
                if first {
                    self.unchanged(rec, loader, name, bytes, counted, before);
                }
                None
            }
            Err(e) => {
                if first {
                    self.unchanged(rec, loader, name, bytes, counted, before);
                }
                let n = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
                if n <= FAILURES_SHOWN {
                    crate::say!("orca: class {name} is left uninstrumented: {e}");
                } else if n == FAILURES_SHOWN + 1 {
                    crate::say!(
                        "orca: more classes cannot be instrumented; the count is in the exit line"
                    );
                }
                None
            }
        }
    }

    /// A program's class Orca leaves as it is: its maps are those of the agents before Orca
    /// (if any), and the last hook gets it to compare with what runs.
    fn unchanged(
        &self,
        rec: &Recorder,
        loader: jobject,
        name: &str,
        bytes: &[u8],
        program: bool,
        before: Vec<MethodMap>,
    ) {
        if !program && before.is_empty() {
            return;
        }
        let Some(key) = rec.meta.loader_key(&rec.jvmti, loader) else {
            return;
        };
        if !before.is_empty() {
            rec.meta.register_rewritten(key, name, before.clone());
        }
        self.hand_on(name, key, bytes, before);
    }

    /// Hands what this hook made of a class to the last hook, if there is one.
    fn hand_on(&self, name: &str, key: i64, bytes: &[u8], methods: Vec<MethodMap>) {
        if self.last_env.get().is_none() {
            return;
        }
        let h = Handoff {
            name: name.to_string(),
            key,
            bytes: bytes.to_vec(),
            methods,
        };
        let _ = HANDED.try_with(|s| push_bounded(&mut s.borrow_mut(), h));
    }

    /// Counts the methods the rewriter left unchanged and names the first few on stderr, so
    /// that a gap in the events is never silent.
    fn note_methods_left(&self, class: &str, notes: &[MethodNote]) {
        for note in notes {
            let n = self.methods_left.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= FAILURES_SHOWN {
                crate::say!(
                    "orca: method {}.{}{} is left uninstrumented: {}",
                    class.replace('/', "."),
                    note.name,
                    note.descriptor,
                    note.reason
                );
            } else if n == FAILURES_SHOWN + 1 {
                crate::say!(
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

/// Retransforms `classes`, all at once (one safepoint), or one by one when that fails (a
/// class that cannot be retransformed fails the whole call); returns those that failed.
fn retransform_each(jvmti: &Jvmti, classes: &[jclass]) -> Vec<(jclass, crate::error::JvmtiError)> {
    if classes.is_empty() || jvmti.retransform_classes(classes).is_ok() {
        return Vec::new();
    }
    classes
        .iter()
        .filter_map(|&c| jvmti.retransform_classes(&[c]).err().map(|e| (c, e)))
        .collect()
}

/// Orca's maps (rewritten -> what Orca was given) followed by `before` (what Orca was given
/// -> the original class file), for every method either changed.
fn through(methods: Vec<MethodMap>, before: Vec<MethodMap>) -> Vec<MethodMap> {
    if before.is_empty() {
        return methods;
    }
    let mut out: Vec<MethodMap> = methods
        .iter()
        .map(|m| {
            match before
                .iter()
                .find(|b| b.name == m.name && b.descriptor == m.descriptor)
            {
                Some(b) => m.then(b),
                None => m.clone(),
            }
        })
        .collect();
    for b in before {
        if !out
            .iter()
            .any(|m| m.name == b.name && m.descriptor == b.descriptor)
        {
            out.push(b);
        }
    }
    out
}

/// Whether `needle` occurs in `hay` (a class file naming the tracker has it in a Utf8 entry).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The agents the command line (`/proc/self/cmdline`) loads before Orca's own `-agentpath`.
/// Why: a retransformation-incapable agent's hook runs in the order the environments were
/// made, so one loaded before Orca changes classes before Orca's first hook keeps them.
fn agents_before_orca() -> Vec<String> {
    let Ok(cmdline) = std::fs::read("/proc/self/cmdline") else {
        return Vec::new();
    };
    let own = own_library();
    let mut before = Vec::new();
    for arg in cmdline.split(|&b| b == 0) {
        let arg = String::from_utf8_lossy(arg);
        if let Some(rest) = arg.strip_prefix("-agentpath:") {
            let path = rest.split('=').next().unwrap_or("");
            let same = std::fs::canonicalize(path).ok();
            if same.is_some() && same == own {
                return before;
            }
        }
        if arg.starts_with("-javaagent:")
            || arg.starts_with("-agentpath:")
            || arg.starts_with("-agentlib:")
        {
            before.push(arg.split('=').next().unwrap_or("").to_string());
        }
    }
    // Orca's own argument not found (loaded another way): nothing can be said.
    Vec::new()
}

/// The file of this library (`liborca.so`), canonical.
fn own_library() -> Option<std::path::PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the address of a function of this library and fills `info`.
    let ok = unsafe { libc::dladdr(own_library as *const libc::c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr gives a NUL-terminated path.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    std::fs::canonicalize(name.to_str().ok()?).ok()
}
