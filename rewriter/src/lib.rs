//! `orca-rewriter`: the class-file rewriter of Orca's instrumentation mode.
//!
//! Why it exists: JVMTI cannot report monitor *releases*, so Orca inserts
//! calls to a tracker class (`orca/OrcaProfilerTracker` by default) around
//! `monitorenter`/`monitorexit`, at entry and exits of `synchronized`
//! methods, and around selected blocking calls. This crate reads a class
//! file, inserts those calls, fixes every offset that moves, and copies every
//! other byte unchanged. It needs no JVM.
//!
//! Entry point: [`rewrite`]. See `rewriter/README.md` for the design and the
//! decisions (call-site owner policy, offset attribution).

mod align;
mod cp;
mod error;
mod fixup;
mod frames;
mod insn;
mod reader;
mod refs;
mod stack;
mod transform;

pub use align::{align, align_to_running, code_lengths};
pub use error::RewriteError;

use cp::{Pool, PoolBuilder, UTF8};
use fixup::{CodeCtx, CodeView, NewCode};
use insn::Insn;
use reader::{be16, be32, Reader};
use transform::{MethodInfo, MonitorLoad};

/// What to instrument. Every transformation can be switched off; class-name
/// filters choose which classes are considered at all.
#[derive(Clone, Debug)]
pub struct Config {
    /// Internal name of the tracker class the inserted code calls; this class
    /// itself is never rewritten.
    pub tracker_class: String,
    /// `monitorenter` / `monitorexit` instructions.
    pub monitors: bool,
    /// `synchronized` methods (entry, every return, exceptional exit).
    pub synchronized_methods: bool,
    /// `Object.wait/notify/notifyAll` call sites.
    pub object_calls: bool,
    /// `Thread.start/join/sleep` call sites.
    pub thread_calls: bool,
    /// `java.util.concurrent.Semaphore` acquire/tryAcquire/release call sites.
    pub semaphore_calls: bool,
    /// Internal-name prefixes of classes to consider (empty: all classes).
    pub include: Vec<String>,
    /// Internal-name prefixes of classes never to rewrite (wins over include).
    pub exclude: Vec<String>,
    /// Call-site IDs for monitor reports. When set, every `monitorenter`, `monitorexit` and
    /// `synchronized` method entry/exit passes a static `int` site ID to the tracker
    /// (`monitorEnter(Object, int)`, ...), drawn from this counter, and each [`MethodMap`]
    /// lists its sites. Why: the agent then knows the reporting frame's method and original
    /// bytecode index without walking the stack. Unset: the one-argument reports.
    pub sites: Option<std::sync::Arc<std::sync::atomic::AtomicU32>>,
    /// Methods instrumented *themselves*, at their entry and every exit (see [`MethodHook`]).
    /// Why: a call site names whatever owner javac chose (a subclass, an interface) and is
    /// invisible when the caller is the JDK, reflection or a method handle; the method itself
    /// is run by every caller.
    pub hooks: Vec<MethodHook>,
    /// `(name, descriptor)` of call-site rules not to apply: methods the caller hooks instead
    /// (a call site redirected as well would report the call twice).
    pub skip_calls: Vec<(String, String)>,
    /// `(name, descriptor, report)` of call-site rules applied *inline* instead of by a
    /// wrapper: the call stays, `T.callEntry(subject, report)` before it and `T.callExit()`
    /// after a normal return. Why: a wrapper is a frame of the tracker under the call, which
    /// `Thread.getStackTrace` and thread dumps show while the call blocks (JDK 17 shows
    /// `@Hidden` frames there). For the natives the agent cannot hook.
    pub inline_calls: Vec<(String, String, i32)>,
    /// With [`Config::sites`]: every call `lock()V`, `lockInterruptibly()V` or `tryLock()Z`
    /// (any owner, virtual or interface), and of `StampedLock`'s argument-less acquisitions
    /// (`writeLock()J`, `readLock()J`, their `Interruptibly` and `try` forms), is preceded by
    /// `dup; <site>; T.lockSite(Object, int)`.
    /// Why: the hooked lock method then knows its caller's site without a stack walk (the
    /// tracker checks that the hint names the lock it runs on, so a call that reaches no
    /// hooked method leaves nothing wrong behind).
    pub lock_sites: bool,
    /// With [`Config::synchronized_methods`]: every constructor of a class that has a
    /// `synchronized` instance method ends with `aload_0; System.identityHashCode; pop` (at
    /// each `return`). Why: the tracker names a monitor by its identity hash, and a
    /// `synchronized` method's monitor is already locked when its first report runs. Where
    /// HotSpot stack-locks (JDK 22 and earlier by default), hashing a locked object that has
    /// no hash yet inflates its monitor (and the deflation thread later undoes it): on a
    /// program that calls `synchronized` methods of fresh objects (Derby: a row, a latch, a
    /// statement), that was 8% of its samples. An object hashed when it is made keeps its
    /// hash in the displaced header, where a later hash of it finds it. JDK 23's lightweight
    /// locking installs a hash without inflating: the agent asks for this only before that.
    pub hash_at_birth: bool,
    /// With [`Config::sites`]: guarded monitor reports (issue 45). Each `monitorenter`
    /// keeps what the tracker's `guardEntered` returns (0 for a hold the tracker follows,
    /// else the coarse clock's value at the enter) in an `int` local of its own, after the
    /// method's locals (one per local a monitor is kept in, one for a `synchronized`
    /// method), and each `monitorexit` passes it to `guardExit`. Why: the tracker can then
    /// leave a hold outside its sample without a call at either end (the guard methods are
    /// small enough for the JIT to inline, and pass the monitor nowhere on that path), and
    /// still find the hold long at its exit. Every stack map frame of such a method becomes
    /// a `full_frame` typing the new locals (src/frames.rs). A method whose monitors are not
    /// each loaded from a local (javac's `dup; astore n; monitorenter` ... `aload n;
    /// monitorexit`) keeps the unguarded reports.
    pub guards: bool,
}

/// One method instrumented at its entry and every exit: entry runs
/// `T.methodEntry(Object subject, int report)` (subject: `this`; for a static method its first
/// argument when that is a reference, else `null`), every `*return` and a catch-all handler (which rethrows) run `T.methodExit()V`.
/// Native and abstract methods have no code to hook and are left as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodHook {
    /// internal name of the declaring class, e.g. `java/lang/Thread`
    pub class: String,
    /// method name
    pub name: String,
    /// method descriptor; `None`: every method of that name
    pub descriptor: Option<String>,
    /// the number passed to `methodEntry` (the agent's report code)
    pub report: i32,
    /// A `java.util.concurrent` lock method: `(name, descriptor)` of the hooked class's own
    /// field holding the lock's synchronizer. The entry then runs
    /// `T.lockEntry(Object this, Object this.<field>, int report)`, and the exits say how the
    /// call ended: `T.lockExit()V` at a `return`, `dup; T.lockExitZ(Z)V` at an `ireturn`,
    /// `T.lockThrew()V` in the catch-all handler. Why: the tracker then keeps the thread's
    /// lock holds in Java, with the synchronizer as the lock's identity (both views of a
    /// read-write lock are one lock) and the exact outcome, and crosses into the agent only
    /// for what is written in full. The name [`MethodHook::THIS`]: the object is its own
    /// synchronizer (`StampedLock`), passed twice. A method returning `long` (a stamp) passes
    /// it at its `lreturn`: `dup2; T.lockExitJ(J)V`.
    pub sync_field: Option<(String, String)>,
}

impl MethodHook {
    /// [`MethodHook::sync_field`]'s name for "the receiver itself".
    pub const THIS: &'static str = "this";

    fn matches(&self, class: &[u8], name: &[u8], desc: &[u8]) -> bool {
        self.class.as_bytes() == class
            && self.name.as_bytes() == name
            && self
                .descriptor
                .as_ref()
                .is_none_or(|d| d.as_bytes() == desc)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tracker_class: "orca/OrcaProfilerTracker".to_string(),
            monitors: true,
            synchronized_methods: true,
            object_calls: true,
            thread_calls: true,
            semaphore_calls: true,
            include: Vec::new(),
            exclude: Vec::new(),
            sites: None,
            hooks: Vec::new(),
            skip_calls: Vec::new(),
            inline_calls: Vec::new(),
            lock_sites: false,
            hash_at_birth: false,
            guards: false,
        }
    }
}

impl Config {
    /// Whether a class (internal name) passes the filters; the tracker never does, nor do the
    /// classes beside it (its package's `Orca*`: its per-thread record and the record's
    /// parts, java-tracker/orca/).
    pub fn accepts(&self, name: &[u8]) -> bool {
        if name == self.tracker_class.as_bytes() {
            return false;
        }
        let tracker = self.tracker_class.as_bytes();
        let package = tracker
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(0, |i| i + 1);
        if name.starts_with(&tracker[..package])
            && name[package..].starts_with(b"Orca")
            && !name[package..].contains(&b'/')
        {
            return false;
        }
        if self.exclude.iter().any(|p| name.starts_with(p.as_bytes())) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|p| name.starts_with(p.as_bytes()))
    }

    fn any_call_rules(&self) -> bool {
        self.object_calls || self.thread_calls || self.semaphore_calls || self.lock_sites
    }
}

/// Every `(name, descriptor)` of a static method of the tracker class that
/// rewritten code may call. Why public: the tracker's Java source and the
/// agent's checks must match this list exactly (tested in `tests/tracker.rs`).
pub fn tracker_methods() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        (transform::MONITOR_ENTER, transform::ENTER_DESC),
        (transform::MONITOR_ENTERED, "(Ljava/lang/Object;)V"),
        (transform::SYNC_ENTERED, "(Ljava/lang/Object;)V"),
        (transform::MONITOR_EXIT, "(Ljava/lang/Object;)V"),
        (transform::MONITOR_ENTER, transform::ENTER_SITE_DESC),
        (transform::MONITOR_ENTERED, transform::SITE_DESC),
        (transform::SYNC_ENTERED, transform::SITE_DESC),
        (transform::MONITOR_EXIT, transform::SITE_DESC),
        (transform::HOOK_ENTRY, transform::HOOK_ENTRY_DESC),
        (transform::HOOK_EXIT, "()V"),
        (transform::CALL_ENTRY, transform::HOOK_ENTRY_DESC),
        (transform::CALL_ENTRY, transform::CALL_ENTRY_SITE_DESC),
        (transform::CALL_EXIT, "()V"),
        (transform::LOCK_ENTRY, transform::LOCK_ENTRY_DESC),
        (transform::LOCK_EXIT, "()V"),
        (transform::LOCK_EXIT_Z, "(Z)V"),
        (transform::LOCK_EXIT_J, "(J)V"),
        (transform::LOCK_THREW, "()V"),
        (transform::GUARD_ENTER, transform::ENTER_SITE_DESC),
        (transform::GUARD_ENTERED, transform::GUARD_ENTERED_DESC),
        (transform::GUARD_SYNC_ENTERED, transform::GUARD_ENTERED_DESC),
        (transform::GUARDED_EXIT, transform::GUARD_EXIT_DESC),
    ];
    for r in transform::RULES {
        v.push((r.wrapper, r.wrapper_desc));
        if let transform::Action::HintAround(after) = r.action {
            v.push((after, "(Ljava/lang/Object;)V"));
        }
    }
    v.sort();
    v.dedup();
    v
}

/// `(JDK class, name, descriptor)` of the method each call-site rule stands for. Why public:
/// the agent hooks the JDK methods that have code and keeps call sites only for the natives
/// ([`Config::skip_calls`] lists the others).
pub fn call_site_targets() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut v: Vec<_> = transform::RULES
        .iter()
        .filter(|r| {
            !matches!(
                r.group,
                transform::Group::Locks | transform::Group::SemaphoreSites
            )
        })
        .map(|r| (transform::target_class(r.group), r.name, r.desc))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Why a method that could have been instrumented was left unchanged.
/// The caller (CLI, agent log) shows these so that gaps are visible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodNote {
    /// method name
    pub name: String,
    /// method descriptor
    pub descriptor: String,
    /// human-readable reason
    pub reason: String,
}

/// Offset map of one rewritten method. The agent reports *original* bytecode
/// indices (so both modes agree on locations and line numbers); this is how
/// it translates the new ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodMap {
    /// method name
    pub name: String,
    /// method descriptor
    pub descriptor: String,
    /// `(new_offset, original_offset)` sorted by `new_offset`: every new
    /// offset from `new_offset` up to the next entry belongs to the original
    /// instruction at `original_offset` (inserted code belongs to the
    /// instruction it was inserted for; a synchronized method's entry code
    /// belongs to offset 0, its appended exit handler to the last
    /// instruction).
    pub entries: Vec<(u32, u32)>,
    /// code length of the rewritten method
    pub new_code_length: u32,
    /// code length of the original method
    pub original_code_length: u32,
    /// `(site ID, original bytecode index)` of every monitor report in the method, when
    /// [`Config::sites`] is set: a `monitorenter` or `monitorexit` instruction's own index,
    /// 0 for a `synchronized` method's entry, a return's index for its exit, and the last
    /// instruction's for the exit on an exception.
    pub sites: Vec<(u32, u32)>,
    /// `(exit site ID, enter site ID)` of every guarded exit ([`Config::guards`]): the
    /// acquisition its hold began at. Why: a hold outside the tracker's sample is known at its
    /// exit only, and its long-hold event names where it was taken.
    pub exit_enters: Vec<(u32, u32)>,
}

impl MethodMap {
    /// The original bytecode index of new bytecode index `bci` (None when out
    /// of range).
    pub fn original(&self, bci: u32) -> Option<u32> {
        if bci >= self.new_code_length {
            return None;
        }
        let i = self.entries.partition_point(|e| e.0 <= bci);
        if i == 0 {
            None
        } else {
            Some(self.entries[i - 1].1)
        }
    }
}

/// Result of [`rewrite`].
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Nothing to instrument: keep the original bytes. On the fast path
    /// `notes` is empty and nothing was allocated.
    Unchanged {
        /// methods that would have been instrumented but could not be, and why
        notes: Vec<MethodNote>,
    },
    /// The class is the tracker or is filtered out by the configuration.
    Excluded,
    /// The class was rewritten.
    Changed {
        /// the new class file
        bytes: Vec<u8>,
        /// one entry per changed method
        methods: Vec<MethodMap>,
        /// methods left unchanged, and why
        notes: Vec<MethodNote>,
    },
}

const ACC_STATIC: u16 = 0x0008;
const ACC_SYNCHRONIZED: u16 = 0x0020;
const ACC_NATIVE: u16 = 0x0100;
const ACC_ABSTRACT: u16 = 0x0400;

/// Rewrites one class file. Returns `Unchanged` (keep the input), `Excluded`,
/// or the new bytes with per-method offset maps; an error only for input that
/// is not a readable class file. Never panics on malformed input.
pub fn rewrite(bytes: &[u8], config: &Config) -> Result<Outcome, RewriteError> {
    let mut r = Reader::new(bytes, 0);
    let magic = r.u4("magic")?;
    if magic != 0xCAFE_BABE {
        return Err(RewriteError::BadMagic(magic));
    }
    let minor = r.u2("minor_version")?;
    let major = r.u2("major_version")?;
    if !(45..=69).contains(&major) {
        return Err(RewriteError::UnsupportedVersion { major, minor });
    }
    // fast path: walks over the constant pool, no allocation
    let mut code_idx = 0u16;
    let mut code_dups = false;
    let mut names = Small::new();
    let mut descs = Small::new();
    let want_calls = config.any_call_rules();
    let (cp_end, _count) = cp::walk(bytes, |i, off, tag| {
        if tag == UTF8 {
            let len = be16(bytes, off + 1).unwrap_or(0) as usize;
            if let Some(s) = bytes.get(off + 3..off + 3 + len) {
                if s == b"Code" {
                    code_dups |= code_idx != 0;
                    code_idx = i;
                } else if want_calls
                    && (4..=22).contains(&len)
                    && transform::interesting_name(s, config)
                {
                    names.push(i);
                } else if want_calls
                    && s.first() == Some(&b'(')
                    && transform::interesting_desc(s, config)
                {
                    descs.push(i);
                }
            }
        }
    })?;
    // is any interesting name the name of a method reference?
    let mut calls_hit = names.overflow || descs.overflow;
    if names.len > 0 && !calls_hit {
        let mut nats = Small::new();
        cp::walk(bytes, |i, off, tag| {
            if tag == cp::NAME_AND_TYPE
                && names.contains(be16(bytes, off + 1).unwrap_or(0))
                && descs.contains(be16(bytes, off + 3).unwrap_or(0))
            {
                nats.push(i);
            }
        })?;
        calls_hit = nats.overflow;
        if nats.len > 0 && !calls_hit {
            cp::walk(bytes, |_, off, tag| {
                if (tag == cp::METHODREF || tag == cp::IMETHODREF)
                    && nats.contains(be16(bytes, off + 3).unwrap_or(0))
                {
                    calls_hit = true;
                }
            })?;
        }
    }
    let names_hit = calls_hit;
    let mut r = Reader::new(bytes, cp_end);
    let _access = r.u2("access_flags")?;
    let this_class = r.u2("this_class")?;
    r.skip(2, "super_class")?;
    let ni = r.u2("interfaces_count")? as usize;
    r.skip(2 * ni, "interfaces")?;
    skip_members(&mut r, "fields")?;
    let methods_start = r.pos;
    let mut interesting = names_hit || code_dups;
    if !config.hooks.is_empty() && !interesting {
        if let Some(name) = class_name_fast(bytes, this_class)? {
            interesting = config.hooks.iter().any(|h| h.class.as_bytes() == name);
        }
    }
    let nm = r.u2("methods_count")?;
    for _ in 0..nm {
        let acc = r.u2("method access_flags")?;
        r.skip(4, "method name/descriptor")?;
        let na = r.u2("method attributes_count")?;
        for _ in 0..na {
            let name = r.u2("attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            let body = r.bytes(len, "method attribute")?;
            if name == code_idx && !interesting {
                if config.synchronized_methods && acc & ACC_SYNCHRONIZED != 0 {
                    interesting = true;
                } else if config.monitors {
                    let len = be32(body, 4).unwrap_or(0) as usize;
                    let code = body.get(8..8 + len).unwrap_or(&[]);
                    if insn::has_monitor_insn(code) {
                        interesting = true;
                    }
                }
            }
        }
    }
    let methods_end = r.pos;
    if !interesting || code_idx == 0 {
        return Ok(Outcome::Unchanged { notes: Vec::new() });
    }
    slow_path(
        bytes,
        config,
        major,
        cp_end,
        this_class,
        methods_start,
        methods_end,
    )
}

/// The name of class `this_class` by two walks over the constant pool (no allocation).
fn class_name_fast(bytes: &[u8], this_class: u16) -> Result<Option<&[u8]>, RewriteError> {
    let mut name_idx = 0;
    cp::walk(bytes, |i, off, tag| {
        if i == this_class && tag == cp::CLASS {
            name_idx = be16(bytes, off + 1).unwrap_or(0);
        }
    })?;
    let mut name = None;
    cp::walk(bytes, |i, off, tag| {
        if i == name_idx && tag == UTF8 {
            let len = be16(bytes, off + 1).unwrap_or(0) as usize;
            name = bytes.get(off + 3..off + 3 + len);
        }
    })?;
    Ok(name)
}

/// A small fixed-capacity set of constant pool indices (no allocation).
struct Small {
    v: [u16; 16],
    len: usize,
    overflow: bool,
}

impl Small {
    fn new() -> Self {
        Small {
            v: [0; 16],
            len: 0,
            overflow: false,
        }
    }
    fn push(&mut self, x: u16) {
        if self.len < 16 {
            self.v[self.len] = x;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }
    fn contains(&self, x: u16) -> bool {
        self.v[..self.len].contains(&x)
    }
}

/// Whether a method of the class at `methods_start` is `synchronized`, not static and has
/// code (see [`Config::hash_at_birth`]).
fn has_synchronized_instance_method(
    bytes: &[u8],
    methods_start: usize,
) -> Result<bool, RewriteError> {
    let mut r = Reader::new(bytes, methods_start);
    let nm = r.u2("methods_count")?;
    let mut found = false;
    for _ in 0..nm {
        let acc = r.u2("method access_flags")?;
        r.skip(4, "method name/descriptor")?;
        let na = r.u2("method attributes_count")?;
        for _ in 0..na {
            r.skip(2, "attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            r.skip(len, "method attribute")?;
        }
        found |=
            acc & (ACC_SYNCHRONIZED | ACC_STATIC | ACC_NATIVE | ACC_ABSTRACT) == ACC_SYNCHRONIZED;
    }
    Ok(found)
}

pub(crate) fn skip_members(r: &mut Reader, what: &'static str) -> Result<(), RewriteError> {
    let n = r.u2(what)?;
    for _ in 0..n {
        r.skip(6, what)?;
        let na = r.u2("attributes_count")?;
        for _ in 0..na {
            r.skip(2, "attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            r.skip(len, "attribute")?;
        }
    }
    Ok(())
}

/// Number of local-variable *entries* (not slots) of the parameters.
fn param_entries(desc: &[u8]) -> Option<usize> {
    let mut i = 1;
    let mut n = 0;
    if desc.first() != Some(&b'(') {
        return None;
    }
    while *desc.get(i)? != b')' {
        while *desc.get(i)? == b'[' {
            i += 1;
        }
        if *desc.get(i)? == b'L' {
            while *desc.get(i)? != b';' {
                i += 1;
            }
        }
        i += 1;
        n += 1;
    }
    Some(n)
}

struct Rewritten {
    /// method index, new method bytes
    idx: usize,
    bytes: Vec<u8>,
    map: MethodMap,
}

#[allow(clippy::too_many_arguments)]
fn slow_path(
    bytes: &[u8],
    config: &Config,
    major: u16,
    cp_end: usize,
    this_class: u16,
    methods_start: usize,
    methods_end: usize,
) -> Result<Outcome, RewriteError> {
    let (pool, _) = Pool::new(bytes)?;
    let this_name = pool.class_name(this_class)?;
    if !config.accepts(this_name) {
        return Ok(Outcome::Excluded);
    }
    // class attributes must end the file exactly
    {
        let mut r = Reader::new(bytes, methods_end);
        let na = r.u2("class attributes_count")?;
        for _ in 0..na {
            r.skip(2, "attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            r.skip(len, "class attribute")?;
        }
        if r.pos != bytes.len() {
            return Err(RewriteError::Malformed {
                offset: r.pos,
                reason: "extra bytes after the class attributes",
            });
        }
    }
    let wanted = transform::wanted_strings(config);
    // created when the first method needs constants
    let mut pb_slot: Option<PoolBuilder> = None;
    // method references whose name is one the call-site rules look at
    let mut cand = Vec::new();
    if config.any_call_rules() {
        cand = vec![false; pool.count()];
        for (i, c) in cand.iter_mut().enumerate() {
            let t = pool.tag(i as u16);
            if t == Some(cp::METHODREF) || t == Some(cp::IMETHODREF) {
                if let Ok((_, name, _, _)) = pool.member_ref(i as u16) {
                    *c = transform::interesting_name(name, config);
                }
            }
        }
    }
    let candidate = |i: u16| cand.get(i as usize).copied().unwrap_or(false);
    let born = config.hash_at_birth
        && config.synchronized_methods
        && has_synchronized_instance_method(bytes, methods_start)?;
    let mut notes = Vec::new();
    let mut done: Vec<Rewritten> = Vec::new();
    let names = |i: u16| pool.utf8(i).ok();
    let resolve = |i: u16| pool.member_ref(i).ok().map(|(o, n, d, _)| (o, n, d));
    let is_this = |i: u16| pool.class_name(i).ok() == Some(this_name);
    // the StackMapTable of a method's code, when the class has frames
    fn smt_in<'a>(
        cv: &CodeView<'a>,
        names: &dyn Fn(u16) -> Option<&'a [u8]>,
        major: u16,
    ) -> Option<&'a [u8]> {
        cv.attrs
            .iter()
            .find(|(n, _)| names(*n) == Some(&b"StackMapTable"[..]))
            .map(|(_, b)| *b)
            .filter(|_| major >= 50)
    }
    let mut insns: Vec<Insn> = Vec::new();

    let mut r = Reader::new(bytes, methods_start);
    let nm = r.u2("methods_count")?;
    for midx in 0..nm as usize {
        let mstart = r.pos;
        let acc = r.u2("access")?;
        let name_i = r.u2("name")?;
        let desc_i = r.u2("descriptor")?;
        let na = r.u2("attributes_count")?;
        let mut attrs: Vec<(u16, usize, &[u8])> = Vec::with_capacity(na as usize);
        let mut code_pos = None;
        for _ in 0..na {
            let an = r.u2("attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            let body = r.bytes(len, "attribute")?;
            if pool.utf8(an)? == b"Code" {
                if code_pos.is_some() {
                    return Err(RewriteError::Malformed {
                        offset: r.pos,
                        reason: "method has two Code attributes",
                    });
                }
                code_pos = Some(attrs.len());
            }
            attrs.push((an, r.pos - len, body));
        }
        let Some(ci) = code_pos else {
            if acc & ACC_SYNCHRONIZED != 0 && acc & ACC_NATIVE != 0 && config.synchronized_methods {
                notes.push(note(
                    &pool,
                    name_i,
                    desc_i,
                    "synchronized native method: no bytecode to instrument",
                ));
            }
            continue;
        };
        let mname = pool.utf8(name_i)?;
        let mdesc = pool.utf8(desc_i)?;
        let mut mnote = |reason: String| MethodNote {
            name: String::from_utf8_lossy(mname).into_owned(),
            descriptor: String::from_utf8_lossy(mdesc).into_owned(),
            reason,
        };
        if acc & ACC_ABSTRACT != 0 {
            continue;
        }
        let cv = match fixup::parse_code(attrs[ci].2) {
            Ok(cv) => cv,
            Err(e) => {
                notes.push(mnote(e.to_string()));
                continue;
            }
        };
        insns.clear();
        if let Err(e) = insn::decode(cv.code, &mut insns) {
            notes.push(mnote(e.to_string()));
            continue;
        }
        let is_static = acc & ACC_STATIC != 0;
        let ref_arg0 = is_static && (mdesc.starts_with(b"(L") || mdesc.starts_with(b"(["));
        let sync = config.synchronized_methods && acc & ACC_SYNCHRONIZED != 0;
        let hash_this = born && mname == b"<init>" && !transform::stores_slot0(cv.code, &insns);
        let hook = if mname != b"<init>" && mname != b"<clinit>" {
            config
                .hooks
                .iter()
                .find(|h| h.matches(this_name, mname, mdesc))
        } else {
            None
        };
        {
            let mi = MethodInfo {
                is_static,
                ref_arg0,
                code: cv.code,
                insns: &insns,
                major,
                exc: cv.exc,
                smt: smt_in(&cv, &names, major),
                max_locals: cv.max_locals,
            };
            if !transform::relevant(&mi, config, &candidate, sync || hook.is_some() || hash_this) {
                continue;
            }
        }
        let pb = pb_slot.get_or_insert_with(|| PoolBuilder::new(&pool, &wanted));
        // constant pool state to return to if this method ends up unchanged
        let mark = pb.mark();
        let mut sync_monitor = None;
        if sync {
            if !is_static && transform::stores_slot0(cv.code, &insns) {
                notes.push(mnote(
                    "synchronized method stores into local 0 (`this`): left unchanged".into(),
                ));
                continue;
            }
            if !is_static && major >= 50 {
                let smt = cv
                    .attrs
                    .iter()
                    .find(|(n, _)| names(*n) == Some(&b"StackMapTable"[..]));
                if let Some((_, b)) = smt {
                    let init = param_entries(mdesc).unwrap_or(0) + 1;
                    match fixup::frames_keep_this(b, init, &is_this) {
                        Ok(true) => {}
                        Ok(false) => {
                            notes.push(mnote("synchronized method has a stack map frame without `this` in local 0: left unchanged".into()));
                            continue;
                        }
                        Err(e) => {
                            notes.push(mnote(e.to_string()));
                            continue;
                        }
                    }
                }
            }
            sync_monitor = Some(if !is_static {
                MonitorLoad::This
            } else if major >= 49 {
                MonitorLoad::Ldc(this_class)
            } else {
                let dotted: String = String::from_utf8_lossy(this_name).replace('/', ".");
                let s = pb.string(&dotted)?;
                let m = pb.methodref(
                    "java/lang/Class",
                    "forName",
                    "(Ljava/lang/String;)Ljava/lang/Class;",
                )?;
                MonitorLoad::ForName(s, m)
            });
        }
        let mi = MethodInfo {
            is_static,
            ref_arg0,
            code: cv.code,
            insns: &insns,
            major,
            exc: cv.exc,
            smt: smt_in(&cv, &names, major),
            max_locals: cv.max_locals,
        };
        let plan = transform::plan(
            &mi,
            config,
            pb,
            &resolve,
            &candidate,
            sync_monitor.as_ref(),
            hook,
            hash_this,
            this_class,
        )?;
        if !plan.changed {
            pb.rollback(mark);
            continue;
        }
        // the raised max_stack must not let code that overflows the original one verify
        let smt = cv
            .attrs
            .iter()
            .find(|(n, _)| names(*n) == Some(&b"StackMapTable"[..]))
            .map(|(_, b)| *b)
            .filter(|_| major >= 50);
        if !stack::within_max_stack(cv.code, &insns, cv.exc, smt, cv.max_stack, &pool) {
            notes.push(mnote(stack::TOO_DEEP.into()));
            pb.rollback(mark);
            continue;
        }
        let has_smt = cv
            .attrs
            .iter()
            .any(|(n, _)| names(*n) == Some(&b"StackMapTable"[..]));
        let smt_name = if plan.edits.tail.is_some() && major >= 50 && !has_smt {
            Some(pb.utf8("StackMapTable")?)
        } else {
            None
        };
        let ctx = CodeCtx {
            names: &names,
            pool: &pool,
            major,
            smt_name,
        };
        // Guard locals: every frame typed in full with them (src/frames.rs).
        let mut framed = None;
        if let (Some(b), true) = (smt, plan.edits.extra_locals > 0) {
            let uninit_this = mname == b"<init>" && this_name != b"java/lang/Object";
            let initial = frames::initial_locals(mdesc, is_static, uninit_this, this_class, pb)?;
            match frames::with_int_locals(b, &initial, cv.max_locals, plan.edits.extra_locals) {
                Ok(f) => framed = Some(f),
                Err(e) => {
                    notes.push(mnote(e.to_string()));
                    pb.rollback(mark);
                    continue;
                }
            }
        }
        let cv_framed;
        let cv = match &framed {
            Some(f) => {
                cv_framed = CodeView {
                    max_stack: cv.max_stack,
                    max_locals: cv.max_locals,
                    code: cv.code,
                    exc: cv.exc,
                    attrs: cv
                        .attrs
                        .iter()
                        .map(|&(n, b)| {
                            if names(n) == Some(&b"StackMapTable"[..]) {
                                (n, &f[..])
                            } else {
                                (n, b)
                            }
                        })
                        .collect(),
                };
                &cv_framed
            }
            None => &cv,
        };
        let nc: NewCode = match fixup::rewrite_code(cv, &insns, &plan.edits, &ctx) {
            Ok(nc) => nc,
            Err(e) => {
                notes.push(mnote(e));
                pb.rollback(mark);
                continue;
            }
        };
        // new method bytes
        let mut mb = Vec::with_capacity(r.pos - mstart + nc.body.len());
        mb.extend_from_slice(&bytes[mstart..mstart + 8]);
        for (k, (an, pos, body)) in attrs.iter().enumerate() {
            if k == ci {
                mb.extend_from_slice(&an.to_be_bytes());
                mb.extend_from_slice(&(nc.body.len() as u32).to_be_bytes());
                mb.extend_from_slice(&nc.body);
            } else {
                mb.extend_from_slice(&bytes[pos - 6..pos + body.len()]);
            }
        }
        let _ = &mut mnote;
        done.push(Rewritten {
            idx: midx,
            bytes: mb,
            map: MethodMap {
                name: String::from_utf8_lossy(mname).into_owned(),
                descriptor: String::from_utf8_lossy(mdesc).into_owned(),
                entries: nc.map,
                new_code_length: nc.new_len,
                original_code_length: nc.old_len,
                sites: plan.sites,
                exit_enters: plan.exit_enters,
            },
        });
    }
    if done.is_empty() {
        return Ok(Outcome::Unchanged { notes });
    }
    // the added constants must not give a meaning to a reference past the end of the pool
    refs::check(bytes, &pool, cp_end)?;
    // assemble
    let extra_len: usize = done.iter().map(|d| d.bytes.len()).sum();
    let Some(pb) = pb_slot else {
        return Ok(Outcome::Unchanged { notes });
    };
    let mut out = Vec::with_capacity(bytes.len() + pb.extra.len() + extra_len);
    out.extend_from_slice(&bytes[..8]);
    out.extend_from_slice(&(pb.count() as u16).to_be_bytes());
    out.extend_from_slice(&bytes[10..cp_end]);
    out.extend_from_slice(&pb.extra);
    out.extend_from_slice(&bytes[cp_end..methods_start + 2]);
    let mut r = Reader::new(bytes, methods_start + 2);
    let mut di = 0;
    for midx in 0..nm as usize {
        let s = r.pos;
        r.skip(6, "method")?;
        let na = r.u2("attributes_count")?;
        for _ in 0..na {
            r.skip(2, "attribute_name_index")?;
            let len = r.u4("attribute_length")? as usize;
            r.skip(len, "attribute")?;
        }
        if di < done.len() && done[di].idx == midx {
            out.extend_from_slice(&done[di].bytes);
            di += 1;
        } else {
            out.extend_from_slice(&bytes[s..r.pos]);
        }
    }
    out.extend_from_slice(&bytes[methods_end..]);
    Ok(Outcome::Changed {
        bytes: out,
        methods: done.into_iter().map(|d| d.map).collect(),
        notes,
    })
}

fn note(pool: &Pool, name: u16, desc: u16, reason: &str) -> MethodNote {
    MethodNote {
        name: String::from_utf8_lossy(pool.utf8(name).unwrap_or(b"?")).into_owned(),
        descriptor: String::from_utf8_lossy(pool.utf8(desc).unwrap_or(b"?")).into_owned(),
        reason: reason.to_string(),
    }
}
