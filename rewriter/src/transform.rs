//! Which instructions get instrumented, and with what code.
//!
//! Why separate from `fixup`: this module only decides *what* to insert
//! (position-independent byte sequences); `fixup` decides *where* everything
//! ends up.

use crate::cp::PoolBuilder;
use crate::error::RewriteError;
use crate::fixup::{Guard, InsnEdit, MethodEdits, Tail, GUARD_EXIT};
use crate::frames::{self, Vt};
use crate::insn::*;
use crate::Config;

/// How a matched call site is handled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Action {
    /// replace the invoke by `invokestatic T.wrapper(wrapper_desc)`
    Redirect,
    /// `dup; invokestatic T.wrapper(Object)V` before the unchanged call
    HintBefore,
    /// `dup; dup; invokestatic T.wrapper(Object)V` before and
    /// `invokestatic T.after(Object)V` after the unchanged call
    HintAround(&'static str),
    /// only inline (`Config::inline_calls`), for a static call naming an owner other than the
    /// JDK class: `ldc Owner; report; invokestatic T.callEntryVia(Class, int)` before and
    /// `invokestatic T.callExit()` after the unchanged call (the tracker finds out at run time
    /// whether the call resolves to the JDK's method)
    ViaOwner,
    /// with [`Config::sites`] only: `dup; <site>; invokestatic T.wrapper(Object, int)V` before
    /// the unchanged call (`Config::lock_sites`); for a call with one `int` argument
    /// (`Semaphore.acquire(int)`), `swap; dup_x1; <site>; invokestatic ...`
    SiteHint,
}

/// Which configuration switch a rule belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Group {
    Object,
    Thread,
    Semaphore,
    /// `Lock` acquisitions (site hints only, [`Config::lock_sites`])
    Locks,
    /// `Semaphore` calls whose wrappers are switched off (`Config::skip_calls`: the agent
    /// hooks `Semaphore` itself): site hints only, as [`Group::Locks`], with
    /// `Config::semaphore_calls` too
    SemaphoreSites,
}

/// A call-site rule: owner (`None`: any owner), name, descriptor, whether the
/// call is static, action, tracker method name and descriptor.
pub(crate) struct Rule {
    pub(crate) group: Group,
    pub(crate) owner: Option<&'static str>,
    /// when set, the rule applies only to owners *other* than this class
    pub(crate) other_than: Option<&'static str>,
    pub(crate) name: &'static str,
    pub(crate) desc: &'static str,
    pub(crate) is_static: bool,
    pub(crate) action: Action,
    pub(crate) wrapper: &'static str,
    pub(crate) wrapper_desc: &'static str,
}

const OBJ: Option<&str> = None;
const THREAD: &str = "java/lang/Thread";
const SEM: &str = "java/util/concurrent/Semaphore";

macro_rules! r {
    ($g:ident, $owner:expr, $other:expr, $name:expr, $desc:expr, $st:expr, $act:expr, $w:expr, $wd:expr) => {
        Rule {
            group: Group::$g,
            owner: $owner,
            other_than: $other,
            name: $name,
            desc: $desc,
            is_static: $st,
            action: $act,
            wrapper: $w,
            wrapper_desc: $wd,
        }
    };
}

/// A [`Action::SiteHint`] rule of `group` for `name`/`desc` on `owner` (`OBJ`: any), of an
/// instance method unless `static` is given (`true`).
macro_rules! site_hint {
    ($group:ident, $owner:expr, $name:expr, $desc:expr) => {
        site_hint!($group, $owner, $name, $desc, false)
    };
    ($group:ident, $owner:expr, $name:expr, $desc:expr, $static:expr) => {
        r!(
            $group,
            $owner,
            None,
            $name,
            $desc,
            $static,
            Action::SiteHint,
            "lockSite",
            "(Ljava/lang/Object;I)V"
        )
    };
}

/// A [`Action::SiteHint`] rule for `name`/`desc` on any owner.
macro_rules! hint {
    ($name:expr, $desc:expr) => {
        site_hint!(Locks, OBJ, $name, $desc)
    };
}

/// A [`Action::SiteHint`] rule for `Semaphore`'s `name`/`desc` (the receiver on top of the
/// stack, or under one `int`).
macro_rules! sem_hint {
    ($name:expr, $desc:expr) => {
        site_hint!(SemaphoreSites, Some(SEM), $name, $desc)
    };
}

/// Every call site the rewriter instruments. The table is the single source
/// of truth for the tracker's Java API (see `java-tracker/`).
pub(crate) static RULES: &[Rule] = &[
    // j.u.c. lock calls name their site (Config::lock_sites): Lock's acquisitions, and
    // StampedLock's own argument-less ones (the receiver is on top of the stack). Their names
    // are in `interesting_name` too (a test checks).
    hint!("lock", "()V"),
    hint!("lockInterruptibly", "()V"),
    hint!("tryLock", "()Z"),
    hint!("writeLock", "()J"),
    hint!("writeLockInterruptibly", "()J"),
    hint!("tryWriteLock", "()J"),
    hint!("readLock", "()J"),
    hint!("readLockInterruptibly", "()J"),
    hint!("tryReadLock", "()J"),
    // Condition's wake-ups name their site too: the hooked `signal` counts a wake-up that can
    // have ended no long wait at its caller's site, which was a walk of one frame (Jetty's
    // thread pool signals its queue's condition about once every three requests).
    hint!("signal", "()V"),
    hint!("signalAll", "()V"),
    // And so does `LockSupport.unpark` (static: its thread, the hooked call's subject, is on
    // top of the stack): the JDK's SynchronousQueue unparks once every ten Jetty requests.
    site_hint!(
        Locks,
        Some("java/util/concurrent/locks/LockSupport"),
        "unpark",
        "(Ljava/lang/Thread;)V",
        true
    ),
    r!(
        Object,
        OBJ,
        None,
        "wait",
        "()V",
        false,
        Action::Redirect,
        "objectWait",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Object,
        OBJ,
        None,
        "wait",
        "(J)V",
        false,
        Action::Redirect,
        "objectWait",
        "(Ljava/lang/Object;J)V"
    ),
    r!(
        Object,
        OBJ,
        None,
        "wait",
        "(JI)V",
        false,
        Action::Redirect,
        "objectWait",
        "(Ljava/lang/Object;JI)V"
    ),
    r!(
        Object,
        OBJ,
        None,
        "notify",
        "()V",
        false,
        Action::Redirect,
        "objectNotify",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Object,
        OBJ,
        None,
        "notifyAll",
        "()V",
        false,
        Action::Redirect,
        "objectNotifyAll",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "start",
        "()V",
        false,
        Action::Redirect,
        "threadStart",
        "(Ljava/lang/Thread;)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "join",
        "()V",
        false,
        Action::Redirect,
        "threadJoin",
        "(Ljava/lang/Thread;)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "join",
        "(J)V",
        false,
        Action::Redirect,
        "threadJoin",
        "(Ljava/lang/Thread;J)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "join",
        "(JI)V",
        false,
        Action::Redirect,
        "threadJoin",
        "(Ljava/lang/Thread;JI)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "sleep",
        "(J)V",
        true,
        Action::Redirect,
        "threadSleep",
        "(J)V"
    ),
    r!(
        Thread,
        Some(THREAD),
        None,
        "sleep",
        "(JI)V",
        true,
        Action::Redirect,
        "threadSleep",
        "(JI)V"
    ),
    r!(
        Thread,
        None,
        Some(THREAD),
        "sleep",
        "(J)V",
        true,
        Action::ViaOwner,
        "callEntryVia",
        "(Ljava/lang/Class;I)V"
    ),
    r!(
        Thread,
        None,
        Some(THREAD),
        "start",
        "()V",
        false,
        Action::HintBefore,
        "threadStarting",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Thread,
        None,
        Some(THREAD),
        "join",
        "()V",
        false,
        Action::HintAround("threadJoined"),
        "threadJoining",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Thread,
        None,
        Some(THREAD),
        "join",
        "(J)V",
        false,
        Action::HintAround("threadJoined"),
        "threadJoining",
        "(Ljava/lang/Object;)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "acquire",
        "()V",
        false,
        Action::Redirect,
        "semaphoreAcquire",
        "(Ljava/util/concurrent/Semaphore;)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "acquire",
        "(I)V",
        false,
        Action::Redirect,
        "semaphoreAcquire",
        "(Ljava/util/concurrent/Semaphore;I)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "acquireUninterruptibly",
        "()V",
        false,
        Action::Redirect,
        "semaphoreAcquireUninterruptibly",
        "(Ljava/util/concurrent/Semaphore;)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "acquireUninterruptibly",
        "(I)V",
        false,
        Action::Redirect,
        "semaphoreAcquireUninterruptibly",
        "(Ljava/util/concurrent/Semaphore;I)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "tryAcquire",
        "()Z",
        false,
        Action::Redirect,
        "semaphoreTryAcquire",
        "(Ljava/util/concurrent/Semaphore;)Z"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "tryAcquire",
        "(I)Z",
        false,
        Action::Redirect,
        "semaphoreTryAcquire",
        "(Ljava/util/concurrent/Semaphore;I)Z"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "tryAcquire",
        "(JLjava/util/concurrent/TimeUnit;)Z",
        false,
        Action::Redirect,
        "semaphoreTryAcquire",
        "(Ljava/util/concurrent/Semaphore;JLjava/util/concurrent/TimeUnit;)Z"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "tryAcquire",
        "(IJLjava/util/concurrent/TimeUnit;)Z",
        false,
        Action::Redirect,
        "semaphoreTryAcquire",
        "(Ljava/util/concurrent/Semaphore;IJLjava/util/concurrent/TimeUnit;)Z"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "release",
        "()V",
        false,
        Action::Redirect,
        "semaphoreRelease",
        "(Ljava/util/concurrent/Semaphore;)V"
    ),
    r!(
        Semaphore,
        Some(SEM),
        None,
        "release",
        "(I)V",
        false,
        Action::Redirect,
        "semaphoreRelease",
        "(Ljava/util/concurrent/Semaphore;I)V"
    ),
    // With the wrappers above switched off (the agent hooks Semaphore), the calls name their
    // site, so that the tracker can count a call without asking the agent for it. The timed
    // tryAcquire's receiver is out of reach under its arguments: its site is walked.
    sem_hint!("acquire", "()V"),
    sem_hint!("acquire", "(I)V"),
    sem_hint!("acquireUninterruptibly", "()V"),
    sem_hint!("acquireUninterruptibly", "(I)V"),
    sem_hint!("tryAcquire", "()Z"),
    sem_hint!("tryAcquire", "(I)Z"),
    sem_hint!("release", "()V"),
    sem_hint!("release", "(I)V"),
];

/// Method names the call-site rules look at; the fast path looks for them
/// among the Utf8 constants before parsing anything else.
pub(crate) fn interesting_name(s: &[u8], cfg: &Config) -> bool {
    match s {
        b"wait" | b"notify" | b"notifyAll" => cfg.object_calls,
        b"start" | b"join" | b"sleep" => cfg.thread_calls,
        b"acquire" | b"acquireUninterruptibly" | b"tryAcquire" | b"release" => cfg.semaphore_calls,
        b"lock"
        | b"lockInterruptibly"
        | b"tryLock"
        | b"writeLock"
        | b"writeLockInterruptibly"
        | b"tryWriteLock"
        | b"readLock"
        | b"readLockInterruptibly"
        | b"tryReadLock"
        | b"signal"
        | b"signalAll"
        | b"unpark" => group_on(Group::Locks, cfg),
        _ => false,
    }
}

/// Whether a Utf8 constant is the descriptor of some enabled call-site rule
/// (the fast path pairs it with an interesting name in a NameAndType).
pub(crate) fn interesting_desc(s: &[u8], cfg: &Config) -> bool {
    RULES
        .iter()
        .any(|r| r.desc.as_bytes() == s && group_on(r.group, cfg))
}

/// The JDK class that declares the methods of a rule group.
pub(crate) fn target_class(g: Group) -> &'static str {
    match g {
        Group::Object => "java/lang/Object",
        Group::Thread => THREAD,
        Group::Semaphore => SEM,
        Group::Locks => "java/util/concurrent/locks/Lock",
        Group::SemaphoreSites => SEM,
    }
}

pub(crate) fn group_on(g: Group, cfg: &Config) -> bool {
    match g {
        Group::Object => cfg.object_calls,
        Group::Thread => cfg.thread_calls,
        Group::Semaphore => cfg.semaphore_calls,
        Group::Locks => cfg.lock_sites && cfg.sites.is_some(),
        Group::SemaphoreSites => cfg.semaphore_calls && cfg.lock_sites && cfg.sites.is_some(),
    }
}

/// Finds the rule for a call site.
pub(crate) fn find_rule(
    op: u8,
    owner: &[u8],
    name: &[u8],
    desc: &[u8],
    cfg: &Config,
) -> Option<&'static Rule> {
    let is_static = op == INVOKESTATIC;
    RULES.iter().find(|r| {
        r.is_static == is_static
            && r.name.as_bytes() == name
            && r.desc.as_bytes() == desc
            && group_on(r.group, cfg)
            // (a site hint leaves the call as it is: it is for the hooked method)
            && (r.action == Action::SiteHint
                || !cfg.skip_calls.iter().any(|(n, d)| n == r.name && d == r.desc))
            && r.owner.is_none_or(|o| o.as_bytes() == owner)
            && r.other_than.is_none_or(|o| o.as_bytes() != owner)
            // array owners ("[I") only for Object methods
            && (owner.first() != Some(&b'[') || r.group == Group::Object)
    })
}

fn invokestatic(idx: u16) -> [u8; 3] {
    let b = idx.to_be_bytes();
    [INVOKESTATIC, b[0], b[1]]
}

/// Code that pushes the monitor of a synchronized method.
pub(crate) enum MonitorLoad {
    This,
    /// ldc / ldc_w of the class
    Ldc(u16),
    /// ldc String + Class.forName (class files below 49)
    ForName(u16, u16),
}

impl MonitorLoad {
    fn emit(&self, v: &mut Vec<u8>) {
        match *self {
            MonitorLoad::This => v.push(0x2a), // aload_0
            MonitorLoad::Ldc(i) | MonitorLoad::ForName(i, _) => {
                if i <= 255 {
                    v.extend_from_slice(&[0x12, i as u8]);
                } else {
                    let b = i.to_be_bytes();
                    v.extend_from_slice(&[0x13, b[0], b[1]]);
                }
                if let MonitorLoad::ForName(_, m) = *self {
                    v.extend_from_slice(&invokestatic(m));
                }
            }
        }
    }
}

/// The tracker method a hooked method calls at its entry, and its descriptor.
pub(crate) const HOOK_ENTRY: &str = "methodEntry";
pub(crate) const HOOK_ENTRY_DESC: &str = "(Ljava/lang/Object;I)V";
/// The tracker method a hooked method calls at every exit (`()V`).
pub(crate) const HOOK_EXIT: &str = "methodExit";
/// The tracker methods an inline call site calls before (same descriptor as `HOOK_ENTRY`)
/// and after (`()V`) the call.
pub(crate) const CALL_ENTRY: &str = "callEntry";
pub(crate) const CALL_EXIT: &str = "callExit";
/// `CALL_ENTRY`'s descriptor with site IDs ([`crate::Config::sites`]): the call site's ID last.
pub(crate) const CALL_ENTRY_SITE_DESC: &str = "(Ljava/lang/Object;II)V";
/// The tracker methods a hooked j.u.c. lock method calls ([`crate::MethodHook::sync_field`]).
pub(crate) const LOCK_ENTRY: &str = "lockEntry";
pub(crate) const LOCK_ENTRY_DESC: &str = "(Ljava/lang/Object;Ljava/lang/Object;I)V";
pub(crate) const LOCK_EXIT: &str = "lockExit";
pub(crate) const LOCK_EXIT_Z: &str = "lockExitZ";
pub(crate) const LOCK_EXIT_J: &str = "lockExitJ";
pub(crate) const LOCK_THREW: &str = "lockThrew";

/// The descriptor of the monitor reports that carry a call-site ID.
pub(crate) const SITE_DESC: &str = "(Ljava/lang/Object;I)V";

/// The tracker's monitor reports. A `monitorenter` block's first report returns the thread's
/// record (an `Object`, which holds the monitor), kept on the operand stack across the
/// `monitorenter` (`swap`) for the second: one lookup of it per block, and the inserted code
/// as long as it was with the monitor passed to both. A `synchronized`
/// method's entry has a report of its own, which alone hashes a monitor already locked. Why:
/// each kind of site runs a short path of its own (see the tracker's monitor section).
pub(crate) const MONITOR_ENTER: &str = "monitorEnter";
pub(crate) const MONITOR_ENTERED: &str = "monitorEntered";
pub(crate) const SYNC_ENTERED: &str = "syncEntered";
pub(crate) const MONITOR_EXIT: &str = "monitorExit";
pub(crate) const ENTER_DESC: &str = "(Ljava/lang/Object;)Ljava/lang/Object;";
pub(crate) const ENTER_SITE_DESC: &str = "(Ljava/lang/Object;I)Ljava/lang/Object;";

/// Guarded monitor reports ([`crate::Config::guards`]): `guardEnter(o, site)` returns the
/// thread's record, or null for a hold the tracker leaves out; `guardEntered(rec, site)` and
/// `guardSyncEntered(o, site)` return what the exit gets (0 for a hold the tracker follows,
/// else the coarse clock's value at the enter), kept in the site's `int` local;
/// `guardExit(o, kept, site)` is every exit's.
pub(crate) const GUARD_ENTER: &str = "guardEnter";
pub(crate) const GUARD_ENTERED: &str = "guardEntered";
pub(crate) const GUARD_SYNC_ENTERED: &str = "guardSyncEntered";
pub(crate) const GUARDED_EXIT: &str = "guardExit";
pub(crate) const GUARD_ENTERED_DESC: &str = "(Ljava/lang/Object;I)I";
pub(crate) const GUARD_EXIT_DESC: &str = "(Ljava/lang/Object;II)V";

/// Code that pushes the `int` site ID (`sipush` up to 32,767, else `ldc_w` of an Integer).
fn push_site(pb: &mut PoolBuilder, v: &mut Vec<u8>, id: u32) -> Result<(), RewriteError> {
    if id <= 0x7FFF {
        let b = (id as u16).to_be_bytes();
        v.extend_from_slice(&[0x11, b[0], b[1]]);
    } else {
        let b = pb.integer(id as i32)?.to_be_bytes();
        v.extend_from_slice(&[0x13, b[0], b[1]]);
    }
    Ok(())
}

/// Every string the inserted code may need in the constant pool; the pool
/// builder looks them all up in one pass over the original pool.
pub(crate) fn wanted_strings(cfg: &Config) -> Vec<&str> {
    let mut v: Vec<&str> = vec![
        &cfg.tracker_class,
        MONITOR_ENTER,
        MONITOR_ENTERED,
        SYNC_ENTERED,
        MONITOR_EXIT,
        "(Ljava/lang/Object;)V",
        SITE_DESC,
        ENTER_DESC,
        ENTER_SITE_DESC,
        GUARD_ENTER,
        GUARD_ENTERED,
        GUARD_SYNC_ENTERED,
        GUARDED_EXIT,
        GUARD_ENTERED_DESC,
        GUARD_EXIT_DESC,
        "java/lang/Throwable",
        "StackMapTable",
        "java/lang/Class",
        "forName",
        "(Ljava/lang/String;)Ljava/lang/Class;",
        HOOK_ENTRY,
        HOOK_ENTRY_DESC,
        HOOK_EXIT,
        CALL_ENTRY,
        CALL_ENTRY_SITE_DESC,
        CALL_EXIT,
        "()V",
        LOCK_ENTRY,
        LOCK_ENTRY_DESC,
        LOCK_EXIT,
        LOCK_EXIT_Z,
        LOCK_EXIT_J,
        LOCK_THREW,
        "(Z)V",
        "(J)V",
        "sync",
    ];
    for r in RULES {
        v.push(r.wrapper);
        v.push(r.wrapper_desc);
        if let Action::HintAround(a) = r.action {
            v.push(a);
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Tracker method indices resolved lazily in the constant pool builder.
pub(crate) struct Tracker<'c> {
    pub(crate) class: &'c str,
}

impl Tracker<'_> {
    fn m(&self, pb: &mut PoolBuilder, name: &str, desc: &str) -> Result<u16, RewriteError> {
        pb.methodref(self.class, name, desc)
    }
}

/// What `plan` found in one method.
pub(crate) struct Plan {
    pub(crate) edits: MethodEdits,
    pub(crate) changed: bool,
    /// `(site ID, original offset)` of each monitor report (with [`Config::sites`]).
    pub(crate) sites: Vec<(u32, u32)>,
    /// `(exit site ID, enter site ID)` of each guarded exit (MethodMap::exit_enters).
    pub(crate) exit_enters: Vec<(u32, u32)>,
}

/// Information about the method being planned.
pub(crate) struct MethodInfo<'x> {
    pub(crate) is_static: bool,
    /// A static method whose first parameter is a reference: a hook's subject is that
    /// argument (`LockSupport.park(blocker)`, `unpark(thread)`).
    pub(crate) ref_arg0: bool,
    pub(crate) code: &'x [u8],
    pub(crate) insns: &'x [Insn],
    /// class file major version
    pub(crate) major: u16,
    /// the exception table, 8 bytes per entry
    pub(crate) exc: &'x [u8],
    /// the StackMapTable's body, when the class has frames (version 50 and later)
    pub(crate) smt: Option<&'x [u8]>,
    /// the Code attribute's max_locals
    pub(crate) max_locals: u16,
}

/// Whether the instruction at `off` is covered by a range that also covers its own handler,
/// from the handler on (`[s, end) -> h` with `s <= h <= off < end`): javac's pattern for the
/// `monitorexit` of a `synchronized` block's exception path, which retries the release if it
/// is interrupted. The range starts at the handler for a plain block (`[h, end) -> h`) and
/// before it when the block's body ends in a `finally` (`[body, end) -> h`, as in Derby's
/// `EmbedResultSet.movePosition`). A call placed there would also make C1 give up on the
/// method ("exception handler covers itself"): it treats `monitorexit` as not throwing, a call
/// as throwing.
fn in_own_handler(exc: &[u8], off: u32) -> bool {
    exc.chunks_exact(8).any(|e| {
        let start = u16::from_be_bytes([e[0], e[1]]) as u32;
        let end = u16::from_be_bytes([e[2], e[3]]) as u32;
        let handler = u16::from_be_bytes([e[4], e[5]]) as u32;
        start <= handler && handler <= off && off < end
    })
}

/// Where the exception path of a `synchronized` block reports its release: see
/// [`exception_path_head`].
struct PathHead {
    /// the instruction at the handler's head (the report is its prefix)
    insn: usize,
    /// the local the `monitorexit` loads its monitor from
    local: u16,
    /// the handler's stack item in its stack map frame (empty: the class has no frames)
    item: Vec<u8>,
}

/// The head of the handler whose own range covers the `monitorexit` at `insns[i]`, when the
/// report can be made there, before the release: the code from the head to the
/// `monitorexit` is straight (no branch, switch or handler enters it after the head, no
/// frame lies in it), made of `astore`s and `aload`s only, and ends with the `aload` of the
/// monitor from a local that it does not store to; the head has a frame with one stack item
/// (the exception). javac's `astore_2; aload_1; monitorexit` is this case. At the head the
/// report loads the monitor from that local, and its call is guarded ([`Guard`]): a failed
/// call (a StackOverflowError at the invocation) goes on with the handler, which stores that
/// error in place of the exception, releases and rethrows it, as a failed report after the
/// release would have.
fn exception_path_head(mi: &MethodInfo, i: usize) -> Option<PathHead> {
    let off = mi.insns[i].off;
    let head = mi.exc.chunks_exact(8).find_map(|e| {
        let start = u16::from_be_bytes([e[0], e[1]]) as u32;
        let end = u16::from_be_bytes([e[2], e[3]]) as u32;
        let handler = u16::from_be_bytes([e[4], e[5]]) as u32;
        (start == handler && start <= off && off < end).then_some(start)
    })?;
    let hi = mi.insns.binary_search_by_key(&head, |x| x.off).ok()?;
    if hi >= i {
        return None;
    }
    let local = |x: &Insn| ref_local(mi, x);
    let (monitor, store) = local(&mi.insns[i - 1])?;
    if store {
        return None;
    }
    for x in &mi.insns[hi..i - 1] {
        let (n, store) = local(x)?;
        if store && n == monitor {
            return None;
        }
    }
    // nothing enters the path after its head
    let inside = |t: i64| t > head as i64 && t <= off as i64;
    if mi
        .exc
        .chunks_exact(8)
        .any(|e| inside(u16::from_be_bytes([e[4], e[5]]) as i64))
    {
        return None;
    }
    for x in mi.insns {
        let o = x.off as usize;
        let c = mi.code;
        let targets: Vec<i64> = if is_short_branch(x.op) {
            let d = i16::from_be_bytes([*c.get(o + 1)?, *c.get(o + 2)?]);
            vec![x.off as i64 + d as i64]
        } else if x.op == GOTO_W || x.op == JSR_W {
            let d = i32::from_be_bytes([
                *c.get(o + 1)?,
                *c.get(o + 2)?,
                *c.get(o + 3)?,
                *c.get(o + 4)?,
            ]);
            vec![x.off as i64 + d as i64]
        } else if x.op == TABLESWITCH || x.op == LOOKUPSWITCH {
            crate::fixup::switch_targets(c, x)
                .into_iter()
                .map(|d| x.off as i64 + d as i64)
                .collect()
        } else {
            continue;
        };
        if targets.into_iter().any(inside) {
            return None;
        }
    }
    let item = match mi.smt {
        Some(smt) => crate::fixup::handler_stack_item(smt, head, off)?,
        None if mi.major >= 50 => return None,
        None => Vec::new(),
    };
    Some(PathHead {
        insn: hi,
        local: monitor,
        item,
    })
}

/// The local an `aload`/`astore` names, and whether it is a store.
fn ref_local(mi: &MethodInfo, x: &Insn) -> Option<(u16, bool)> {
    let o = x.off as usize;
    let c = mi.code;
    match x.op {
        0x2a..=0x2d => Some(((x.op - 0x2a) as u16, false)),
        0x4b..=0x4e => Some(((x.op - 0x4b) as u16, true)),
        0x19 | 0x3a => Some((*c.get(o + 1)? as u16, x.op == 0x3a)),
        WIDE => {
            let op = *c.get(o + 1)?;
            let n = u16::from_be_bytes([*c.get(o + 2)?, *c.get(o + 3)?]);
            match op {
                0x19 => Some((n, false)),
                0x3a => Some((n, true)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The local the object of the monitor instruction `insns[i]` is kept in: an `aload n` right
/// before it, or before a `monitorenter` javac's `dup; astore n`.
fn monitor_local(mi: &MethodInfo, i: usize) -> Option<u16> {
    let prev = mi.insns.get(i.checked_sub(1)?)?;
    match ref_local(mi, prev)? {
        (n, false) => Some(n),
        (n, true) if mi.insns[i].op == MONITORENTER && i >= 2 && mi.insns[i - 2].op == 0x59 => {
            Some(n)
        }
        _ => None,
    }
}

/// The `int` locals of a guarded method ([`Config::guards`]), from `first` (the method's
/// max_locals) on: one per local a monitor is kept in (a `monitorenter` and its
/// `monitorexit`s load the same local, so they share it; nested blocks keep their monitors
/// in different locals), then one for a `synchronized` method's monitor.
struct GuardSlots {
    first: u16,
    monitor_locals: Vec<u16>,
    sync: bool,
}

impl GuardSlots {
    fn of(mi: &MethodInfo, cfg: &Config, sync: bool) -> Option<GuardSlots> {
        if !cfg.guards || cfg.sites.is_none() {
            return None;
        }
        let mut monitor_locals = Vec::new();
        if cfg.monitors {
            for (i, ins) in mi.insns.iter().enumerate() {
                if ins.op == MONITORENTER || ins.op == MONITOREXIT {
                    // one monitor not known to be in a local: the method keeps every report
                    // unguarded (an enter and an exit must agree)
                    monitor_locals.push(monitor_local(mi, i)?);
                }
            }
        }
        monitor_locals.sort_unstable();
        monitor_locals.dedup();
        let g = GuardSlots {
            first: mi.max_locals,
            monitor_locals,
            sync,
        };
        let k = g.count();
        (k > 0 && mi.max_locals as u32 + k as u32 <= 0xFFFF).then_some(g)
    }

    /// The guard local of the monitor instruction `insns[i]`: found for every monitor
    /// instruction of a method [`GuardSlots::of`] guards.
    fn at(&self, mi: &MethodInfo, i: usize) -> u16 {
        monitor_local(mi, i)
            .and_then(|n| self.of_local(n))
            .expect("a guarded method's monitors are each kept in a local")
    }

    fn count(&self) -> u16 {
        self.monitor_locals.len() as u16 + self.sync as u16
    }

    /// The guard local of the monitor kept in local `n`.
    fn of_local(&self, n: u16) -> Option<u16> {
        let k = self.monitor_locals.binary_search(&n).ok()?;
        Some(self.first + k as u16)
    }

    fn of_sync(&self) -> u16 {
        self.first + self.monitor_locals.len() as u16
    }

    /// `iconst_0; istore` of every guard local: the method's first code, so that every
    /// frame may type them `int` (exception ranges that began at offset 0 begin after it).
    fn init(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for s in self.first..self.first + self.count() {
            v.push(0x03); // iconst_0
            push_local_op(&mut v, 0x36, 0x3b, s); // istore
        }
        v
    }
}

/// `op n` (`iload` 0x15 / `istore` 0x36) in its shortest form; `short0` is the opcode of
/// its `_0` form.
fn push_local_op(v: &mut Vec<u8>, op: u8, short0: u8, n: u16) {
    match n {
        0..=3 => v.push(short0 + n as u8),
        4..=255 => v.extend_from_slice(&[op, n as u8]),
        _ => {
            let b = n.to_be_bytes();
            v.extend_from_slice(&[WIDE, op, b[0], b[1]]);
        }
    }
}

fn push_iload(v: &mut Vec<u8>, n: u16) {
    push_local_op(v, 0x15, 0x1a, n);
}

/// `aload n` in its shortest form.
fn push_aload(v: &mut Vec<u8>, n: u16) {
    match n {
        0..=3 => v.push(0x2a + n as u8),
        4..=255 => v.extend_from_slice(&[0x19, n as u8]),
        _ => {
            let b = n.to_be_bytes();
            v.extend_from_slice(&[WIDE, 0x19, b[0], b[1]]);
        }
    }
}

/// Cheap check, before anything is allocated for the method: does it hold
/// anything a transformation applies to?
pub(crate) fn relevant(
    mi: &MethodInfo,
    cfg: &Config,
    candidate: &dyn Fn(u16) -> bool,
    sync: bool,
) -> bool {
    sync || mi.insns.iter().any(|ins| match ins.op {
        MONITORENTER | MONITOREXIT => cfg.monitors,
        INVOKEVIRTUAL | INVOKESTATIC | INVOKEINTERFACE => {
            let o = ins.off as usize;
            candidate(u16::from_be_bytes([mi.code[o + 1], mi.code[o + 2]]))
        }
        _ => false,
    })
}

/// Decides the edits of one method. `resolve(idx)` gives (owner, name, desc)
/// of a method reference. `sync_monitor` is `Some` when the synchronized-method
/// transformation applies (checks done by the caller).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(crate) fn plan<'b>(
    mi: &MethodInfo,
    cfg: &Config,
    pb: &mut PoolBuilder,
    resolve: &dyn Fn(u16) -> Option<(&'b [u8], &'b [u8], &'b [u8])>,
    candidate: &dyn Fn(u16) -> bool,
    sync_monitor: Option<&MonitorLoad>,
    hook: Option<&crate::MethodHook>,
    hash_this: bool,
    this_class: u16,
) -> Result<Plan, RewriteError> {
    let t = Tracker {
        class: &cfg.tracker_class,
    };
    let n = mi.insns.len();
    let mut per = vec![InsnEdit::default(); n];
    let mut extra: u16 = 0;
    let mut changed = false;
    let obj1 = "(Ljava/lang/Object;)V";
    // With site IDs, each monitor report pushes one more int.
    let counter = cfg.sites.as_ref();
    let mon_desc = if counter.is_some() { SITE_DESC } else { obj1 };
    let enter_desc = if counter.is_some() {
        ENTER_SITE_DESC
    } else {
        ENTER_DESC
    };
    let site_slot = counter.is_some() as u16;
    let mut sites = Vec::new();
    let mut new_site = |off: u32| -> Option<u32> {
        let id = counter?.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        sites.push((id, off));
        Some(id)
    };
    let guards = GuardSlots::of(mi, cfg, sync_monitor.is_some());
    // a guard local's latest enter site, in code order (javac's exits follow their enter,
    // and a local used again is a later block's), and each guarded exit's enter
    let mut guard_enter: std::collections::HashMap<u16, u32> = Default::default();
    let mut exit_enters = Vec::new();
    for (i, ins) in mi.insns.iter().enumerate() {
        match ins.op {
            MONITORENTER if cfg.monitors => {
                let site = new_site(ins.off);
                // a guarded method: the monitor's guard local, which gets what the enter keeps
                let g = guards.as_ref().map(|g| g.at(mi, i));
                let (a, b) = match g {
                    Some(_) => (
                        t.m(pb, GUARD_ENTER, ENTER_SITE_DESC)?,
                        t.m(pb, GUARD_ENTERED, GUARD_ENTERED_DESC)?,
                    ),
                    None => (
                        t.m(pb, MONITOR_ENTER, enter_desc)?,
                        t.m(pb, MONITOR_ENTERED, mon_desc)?,
                    ),
                };
                let e = &mut per[i];
                // [o] dup (site) enter -> [o, rec] swap -> [rec, o]; monitorenter; (site)
                // entered -> [] (guarded: -> [kept] istore g -> [])
                e.prefix.push(0x59); // dup
                if let Some(id) = site {
                    push_site(pb, &mut e.prefix, id)?;
                    push_site(pb, &mut e.suffix, id)?;
                }
                e.prefix.extend_from_slice(&invokestatic(a));
                e.prefix.push(0x5f); // swap
                e.suffix.extend_from_slice(&invokestatic(b));
                if let Some(g) = g {
                    push_local_op(&mut e.suffix, 0x36, 0x3b, g); // istore
                    if let Some(id) = site {
                        guard_enter.insert(g, id);
                    }
                }
                extra = extra.max(1 + site_slot);
                changed = true;
            }
            MONITOREXIT if cfg.monitors => {
                let site = new_site(ins.off);
                let g = guards.as_ref().map(|g| g.at(mi, i));
                if let (Some(g), Some(id)) = (g, site) {
                    if let Some(&enter) = guard_enter.get(&g) {
                        exit_enters.push((id, enter));
                    }
                }
                let a = match g {
                    Some(_) => t.m(pb, GUARDED_EXIT, GUARD_EXIT_DESC)?,
                    None => t.m(pb, MONITOR_EXIT, mon_desc)?,
                };
                // what the report takes after the monitor: (the guard local,) (the site)
                let args = |pb: &mut PoolBuilder, v: &mut Vec<u8>| -> Result<(), RewriteError> {
                    if let Some(g) = g {
                        push_iload(v, g);
                    }
                    if let Some(id) = site {
                        push_site(pb, v, id)?;
                    }
                    Ok(())
                };
                if in_own_handler(mi.exc, ins.off) {
                    // The exception path's release retries itself (its handler covers it):
                    // a report before it whose call fails would go back to the handler's head
                    // and fail again, forever. Where the path is javac's, the report is made
                    // at the handler's head, guarded so that a failed call goes on to the
                    // release (see `exception_path_head`); elsewhere it is made after the
                    // release (`dup; monitorexit; invokestatic`), outside the range (see
                    // fixup: a suffix belongs to what follows, for exception ranges), and may
                    // be stamped after the next owner's acquisition.
                    match exception_path_head(mi, i).filter(|h| per[h.insn].prefix.is_empty()) {
                        Some(h) => {
                            let e = &mut per[h.insn];
                            push_aload(&mut e.prefix, h.local);
                            args(pb, &mut e.prefix)?;
                            let from = e.prefix.len() as u32;
                            e.prefix.extend_from_slice(&invokestatic(a));
                            e.guard = Some(Guard {
                                range: (from, e.prefix.len() as u32),
                                item: h.item,
                            });
                            e.prefix.extend_from_slice(&GUARD_EXIT);
                        }
                        None => {
                            let e = &mut per[i];
                            e.prefix.push(0x59);
                            args(pb, &mut e.suffix)?;
                            e.suffix.extend_from_slice(&invokestatic(a));
                        }
                    }
                } else {
                    let e = &mut per[i];
                    e.prefix.push(0x59);
                    args(pb, &mut e.prefix)?;
                    e.prefix.extend_from_slice(&invokestatic(a));
                }
                extra = extra.max(1 + site_slot + g.is_some() as u16);
                changed = true;
            }
            INVOKEVIRTUAL | INVOKESTATIC | INVOKEINTERFACE => {
                let o = ins.off as usize;
                let idx = u16::from_be_bytes([mi.code[o + 1], mi.code[o + 2]]);
                if !candidate(idx) {
                    continue;
                }
                let Some((owner, name, desc)) = resolve(idx) else {
                    continue;
                };
                let Some(rule) = find_rule(ins.op, owner, name, desc, cfg) else {
                    continue;
                };
                let inline = cfg
                    .inline_calls
                    .iter()
                    .find(|(n, d, _)| n == rule.name && d == rule.desc);
                if rule.action == Action::ViaOwner {
                    // ldc of a class: version 49 and later
                    let Some(&(_, _, report)) = inline.filter(|_| mi.major >= 49) else {
                        continue;
                    };
                    let owner_class = pb.class(std::str::from_utf8(owner).unwrap_or(""))?;
                    let via = t.m(pb, rule.wrapper, rule.wrapper_desc)?;
                    let exit = t.m(pb, CALL_EXIT, "()V")?;
                    let e = &mut per[i];
                    let b = owner_class.to_be_bytes();
                    e.prefix.extend_from_slice(&[0x13, b[0], b[1]]); // ldc_w
                    push_int(pb, &mut e.prefix, report)?;
                    e.prefix.extend_from_slice(&invokestatic(via));
                    e.suffix.extend_from_slice(&invokestatic(exit));
                    extra = extra.max(2);
                    changed = true;
                    continue;
                }
                let inline = inline.filter(|_| rule.action == Action::Redirect);
                if let Some(&(_, _, report)) = inline {
                    // The subject (receiver, or null for a static call) for callEntry, under
                    // which the arguments stay as they were; the call itself unchanged.
                    let juggle: &[u8] = match (rule.is_static, rule.desc) {
                        (true, _) => &[0x01],                   // aconst_null
                        (false, "()V") => &[0x59],              // dup
                        (false, "(J)V") => &[0x5d, 0x58, 0x5b], // dup2_x1 pop2 dup_x2
                        _ => continue,
                    };
                    // With site IDs the call names its site, so that a call the agent only
                    // counts (a notify nobody waits for) needs no stack walk.
                    let site = new_site(ins.off);
                    let desc = if site.is_some() {
                        CALL_ENTRY_SITE_DESC
                    } else {
                        HOOK_ENTRY_DESC
                    };
                    let entry = t.m(pb, CALL_ENTRY, desc)?;
                    let exit = t.m(pb, CALL_EXIT, "()V")?;
                    let e = &mut per[i];
                    e.prefix.extend_from_slice(juggle);
                    push_int(pb, &mut e.prefix, report)?;
                    if let Some(id) = site {
                        push_site(pb, &mut e.prefix, id)?;
                    }
                    e.prefix.extend_from_slice(&invokestatic(entry));
                    e.suffix.extend_from_slice(&invokestatic(exit));
                    extra = extra.max(2 + site_slot);
                    changed = true;
                    continue;
                }
                if rule.action == Action::SiteHint {
                    let Some(id) = new_site(ins.off) else {
                        continue;
                    };
                    let w = t.m(pb, rule.wrapper, rule.wrapper_desc)?;
                    let e = &mut per[i];
                    match rule.desc {
                        // [r, i] swap -> [i, r] dup_x1 -> [r, i, r]
                        "(I)V" | "(I)Z" => e.prefix.extend_from_slice(&[0x5f, 0x5a]),
                        _ => e.prefix.push(0x59), // dup
                    }
                    push_site(pb, &mut e.prefix, id)?;
                    e.prefix.extend_from_slice(&invokestatic(w));
                    extra = extra.max(2);
                    changed = true;
                    continue;
                }
                let w = t.m(pb, rule.wrapper, rule.wrapper_desc)?;
                let e = &mut per[i];
                match rule.action {
                    Action::ViaOwner | Action::SiteHint => {}
                    Action::Redirect => e.replace = Some(invokestatic(w).to_vec()),
                    Action::HintBefore => {
                        e.prefix.push(0x59);
                        e.prefix.extend_from_slice(&invokestatic(w));
                        extra = extra.max(1);
                    }
                    Action::HintAround(after) => {
                        let a = t.m(pb, after, obj1)?;
                        if rule.desc == "(J)V" {
                            // [r, J] -> dup2_x1 pop2 dup_x2 -> [r, J, r]; dup; hint -> [r, J, r];
                            // dup_x2 pop -> [r, r, J]: the call leaves [r] for the after-hint
                            e.prefix.extend_from_slice(&[0x5d, 0x58, 0x5b, 0x59]);
                            e.prefix.extend_from_slice(&invokestatic(w));
                            e.prefix.extend_from_slice(&[0x5b, 0x57]);
                        } else {
                            e.prefix.extend_from_slice(&[0x59, 0x59]);
                            e.prefix.extend_from_slice(&invokestatic(w));
                        }
                        e.suffix.extend_from_slice(&invokestatic(a));
                        extra = extra.max(2);
                    }
                }
                changed = true;
            }
            _ => {}
        }
    }
    if hash_this {
        // A constructor's returns (`this` is initialized there: JVMS 4.10.1.9, `return`):
        // `aload_0; invokestatic System.identityHashCode; pop` (Config::hash_at_birth).
        let hash = pb
            .methodref(
                "java/lang/System",
                "identityHashCode",
                "(Ljava/lang/Object;)I",
            )?
            .to_be_bytes();
        for (i, ins) in mi.insns.iter().enumerate() {
            if ins.op == 0xb1 {
                let p = [0x2a, 0xb8, hash[0], hash[1], 0x57]; // aload_0 invokestatic pop
                per[i].prefix.splice(0..0, p);
                extra = extra.max(1);
                changed = true;
            }
        }
    }
    let mut head = Vec::new();
    let mut tail = None;
    let mut min_stack = 0;
    let mut covered_from = 0;
    if let Some(g) = &guards {
        head = g.init();
        covered_from = head.len() as u32;
    }
    // a synchronized method's guard local: loaded after the monitor by every exit report
    let sync_guard = guards.as_ref().filter(|g| g.sync).map(|g| g.of_sync());
    let (sync_entered, sync_exit) = if sync_guard.is_some() {
        (
            (GUARD_SYNC_ENTERED, GUARD_ENTERED_DESC),
            (GUARDED_EXIT, GUARD_EXIT_DESC),
        )
    } else {
        ((SYNC_ENTERED, mon_desc), (MONITOR_EXIT, mon_desc))
    };
    if let Some(ml) = sync_monitor {
        let entered = t.m(pb, sync_entered.0, sync_entered.1)?;
        let exit = t.m(pb, sync_exit.0, sync_exit.1)?;
        ml.emit(&mut head);
        let entry_site = new_site(0);
        if let Some(id) = entry_site {
            push_site(pb, &mut head, id)?;
        }
        head.extend_from_slice(&invokestatic(entered));
        if let Some(g) = sync_guard {
            push_local_op(&mut head, 0x36, 0x3b, g);
        }
        for (i, ins) in mi.insns.iter().enumerate() {
            if (0xac..=0xb1).contains(&ins.op) {
                let mut p = Vec::with_capacity(9);
                ml.emit(&mut p);
                if let Some(g) = sync_guard {
                    push_iload(&mut p, g);
                }
                if let Some(id) = new_site(ins.off) {
                    push_site(pb, &mut p, id)?;
                    if let (Some(_), Some(enter)) = (sync_guard, entry_site) {
                        exit_enters.push((id, enter));
                    }
                }
                p.extend_from_slice(&invokestatic(exit));
                // before any monitorExit of a monitorexit edit on the same insn
                p.extend_from_slice(&per[i].prefix);
                per[i].prefix = p;
            }
        }
        let mut code = Vec::new();
        ml.emit(&mut code);
        if let Some(g) = sync_guard {
            push_iload(&mut code, g);
        }
        let last = mi.insns.last().map_or(0, |i| i.off);
        if let Some(id) = new_site(last) {
            push_site(pb, &mut code, id)?;
            if let (Some(_), Some(enter)) = (sync_guard, entry_site) {
                exit_enters.push((id, enter));
            }
        }
        code.extend_from_slice(&invokestatic(exit));
        code.push(0xbf); // athrow
        let thr = pb.class("java/lang/Throwable")?;
        let this: &[Vt] = if mi.is_static {
            &[]
        } else {
            &[Vt(7, this_class)]
        };
        let locals = match &guards {
            // the guard locals too, which the handler loads
            Some(g) => frames::padded(this, mi.max_locals, g.count()).map_err(|_| {
                RewriteError::Malformed {
                    offset: 0,
                    reason: "max_locals below the method's parameters",
                }
            })?,
            None => this.to_vec(),
        };
        tail = Some(Tail {
            code,
            frame_body: frames::full_body(&locals, &[Vt(7, thr)]),
            after_head: false,
        });
        extra = extra.max(if sync_guard.is_some() {
            3
        } else {
            1 + site_slot
        });
        min_stack = if sync_guard.is_some() {
            4
        } else {
            2 + site_slot
        };
        changed = true;
    }
    if let Some(hook) = hook {
        // Nested inside the synchronized-method reports (the monitor is held before the
        // method's first instruction runs): entry `subject; report;
        // invokestatic T.methodEntry`, every return and the catch-all handler (which rethrows
        // what it caught) `invokestatic T.methodExit`. A lock method (`sync_field`):
        // `aload_0; dup; getfield sync; report; invokestatic T.lockEntry`, and exits that
        // say how the call ended.
        let lock = hook.sync_field.as_ref().filter(|_| !mi.is_static);
        let exit = invokestatic(t.m(pb, HOOK_EXIT, "()V")?);
        let (exit, exit_value, threw) = if lock.is_some() {
            (
                invokestatic(t.m(pb, LOCK_EXIT, "()V")?),
                Some((
                    invokestatic(t.m(pb, LOCK_EXIT_Z, "(Z)V")?),
                    invokestatic(t.m(pb, LOCK_EXIT_J, "(J)V")?),
                )),
                invokestatic(t.m(pb, LOCK_THREW, "()V")?),
            )
        } else {
            (exit, None, exit)
        };
        if let Some((name, desc)) = lock {
            let entry = t.m(pb, LOCK_ENTRY, LOCK_ENTRY_DESC)?;
            head.extend_from_slice(&[0x2a, 0x59]); // aload_0 dup
            if name != crate::MethodHook::THIS {
                let field = pb.fieldref(this_class, name, desc)?.to_be_bytes();
                head.extend_from_slice(&[0xb4, field[0], field[1]]); // getfield
            }
            push_int(pb, &mut head, hook.report)?;
            head.extend_from_slice(&invokestatic(entry));
            extra = extra.max(1);
        } else {
            let entry = t.m(pb, HOOK_ENTRY, HOOK_ENTRY_DESC)?;
            // aconst_null / aload_0 (`this`, or a static method's first reference argument)
            head.push(if mi.is_static && !mi.ref_arg0 {
                0x01
            } else {
                0x2a
            });
            push_int(pb, &mut head, hook.report)?;
            head.extend_from_slice(&invokestatic(entry));
        }
        for (i, ins) in mi.insns.iter().enumerate() {
            if (0xac..=0xb1).contains(&ins.op) {
                // nested inside the synchronized method's exit report (if any)
                match exit_value {
                    Some((z, _)) if ins.op == 0xac => {
                        let mut p = vec![0x59]; // dup: the boolean returned
                        p.extend_from_slice(&z);
                        per[i].prefix.splice(0..0, p);
                    }
                    Some((_, j)) if ins.op == 0xad => {
                        let mut p = vec![0x5c]; // dup2: the stamp returned
                        p.extend_from_slice(&j);
                        per[i].prefix.splice(0..0, p);
                    }
                    _ => {
                        per[i].prefix.splice(0..0, exit);
                    }
                }
            }
        }
        match &mut tail {
            Some(t) => {
                // before the synchronized method's `...; invokestatic T.monitorExit; athrow`
                t.code.splice(0..0, threw);
            }
            None => {
                let mut code = threw.to_vec();
                code.push(0xbf); // athrow
                let thr = pb.class("java/lang/Throwable")?.to_be_bytes();
                // No locals: the handler uses none, and every local is assignable to top.
                tail = Some(Tail {
                    code,
                    frame_body: vec![0, 0, 0, 1, 7, thr[0], thr[1]],
                    after_head: true,
                });
            }
        }
        min_stack = min_stack.max(if lock.is_some() { 3 } else { 2 });
        extra = extra.max(if lock.is_some() { 2 } else { 1 });
        changed = true;
    }
    Ok(Plan {
        edits: MethodEdits {
            head,
            per,
            tail,
            extra_stack: extra,
            min_stack,
            extra_locals: guards.as_ref().map_or(0, |g| g.count()),
            covered_from,
        },
        changed,
        sites,
        exit_enters,
    })
}

/// Code that pushes an `int` constant (`bipush`, `sipush`, else `ldc_w` of an Integer).
fn push_int(pb: &mut PoolBuilder, v: &mut Vec<u8>, n: i32) -> Result<(), RewriteError> {
    if let Ok(b) = i8::try_from(n) {
        v.extend_from_slice(&[0x10, b as u8]);
    } else if let Ok(s) = i16::try_from(n) {
        let b = s.to_be_bytes();
        v.extend_from_slice(&[0x11, b[0], b[1]]);
    } else {
        let b = pb.integer(n)?.to_be_bytes();
        v.extend_from_slice(&[0x13, b[0], b[1]]);
    }
    Ok(())
}

/// Whether the code stores into local 0 (or increments it).
pub(crate) fn stores_slot0(code: &[u8], insns: &[Insn]) -> bool {
    insns.iter().any(|ins| {
        let o = ins.off as usize;
        match ins.op {
            0x3b | 0x3f | 0x43 | 0x47 | 0x4b => true,
            0x36..=0x3a | 0x84 => code.get(o + 1) == Some(&0),
            WIDE => {
                let op2 = code.get(o + 1).copied().unwrap_or(0);
                ((0x36..=0x3a).contains(&op2) || op2 == 0x84)
                    && code.get(o + 2) == Some(&0)
                    && code.get(o + 3) == Some(&0)
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod rule_tests {
    use super::*;

    /// The class-load hook's fast path matches names with `interesting_name`, not by walking
    /// RULES: every rule's name must be interesting when its group is on, and no other name.
    #[test]
    fn interesting_names_are_the_rules_names() {
        let cfg = Config {
            sites: Some(std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1))),
            lock_sites: true,
            ..Config::default()
        };
        for r in RULES {
            assert!(interesting_name(r.name.as_bytes(), &cfg), "{}", r.name);
        }
        for other in ["lockSite", "unlock", "unlockWrite", "getState", "run"] {
            assert!(!interesting_name(other.as_bytes(), &cfg), "{other}");
        }
        let off = Config::default();
        assert!(!interesting_name(b"writeLock", &off));
    }
}
