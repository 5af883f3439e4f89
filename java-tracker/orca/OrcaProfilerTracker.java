/*
 * OrcaProfilerTracker: the class that code rewritten by orca-rewriter calls.
 *
 * Source compatible with `javac --release 8`. It must be visible to every
 * class loader (the agent appends it to the boot class path) and is never
 * instrumented itself.
 *
 * NATIVE SURFACE (defined as java.lang.OrcaProfilerTracker in the boot loader):
 *
 *     private static native boolean bind();
 *
 * the one native the JVM finds by its JNI name (Java_java_lang_OrcaProfilerTracker_bind,
 * exported by the agent library). This class's static initializer calls it, and it binds
 * every other native with RegisterNatives: made from a native method of this class, the
 * call has this class as its caller, of the class's own (boot) loader, so the JVM prints
 * no warning for a class of java.base rebound from elsewhere. Among the others:
 *
 *     private static native void event(int kind, Object subject);
 *     JNI signature: "event", "(ILjava/lang/Object;)V"
 *
 * `kind` is one of the OrcaEvents.K_* constants; `subject` is the monitor, the
 * Object waited on / notified, the Thread started / joined, the Semaphore,
 * or null for Thread.sleep (the subject is then the calling thread). The
 * native runs on the thread the event happened on; it must not block, must
 * be reentrancy-safe, and may throw nothing (anything it throws is swallowed
 * here anyway). Were the natives not bound, every report would be silently
 * dropped (the UnsatisfiedLinkError is caught); the agent then says so and
 * switches no instrumentation on.
 *
 * CONTRACT with the application:
 *  - every wrapper performs the original operation itself, in Java, on the
 *    calling thread (so blocking happens in Java, never inside a native);
 *  - exceptions of the original operation propagate unchanged (reports are
 *    made in finally blocks where an "after" event is needed);
 *  - the tracker never throws an exception of its own into application code.
 *
 * The rewritten code calls exactly the public static methods below; their
 * names and descriptors are fixed by rewriter/src/transform.rs (RULES) and
 * checked by rewriter/tests/tracker.rs.
 *
 * The K_* and R_* codes are not written here: agent/build.rs generates
 * OrcaEvents.java from agent/src/events.rs, and it is compiled together with
 * this file (javac inlines the constants; OrcaEvents is never loaded at run
 * time).
 */
package orca;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import jdk.internal.vm.annotation.DontInline;
import jdk.internal.vm.annotation.Hidden;

public final class OrcaProfilerTracker {
    private OrcaProfilerTracker() {}

    /** Binds every other native of this class; true when all are (see NATIVE SURFACE). */
    private static native boolean bind();

    /** Whether the natives are bound: read by the agent when it installs the tracker. */
    static boolean bound;

    static {
        try {
            bound = bind();
        } catch (Throwable t) {
            // not bound: the agent reads `bound` and records without the tracker
        }
    }

    /**
     * Binds the natives again, for an agent attached to a running JVM: called by the agent
     * (JNI) once the JVM can find `bind` (see agent/src/engines/tracker.rs, bind_attached).
     * From Java, so that `bind`'s RegisterNatives has this class as its caller, as from the
     * static initializer: called from JNI directly it would have none, and the JVM would
     * print a warning on the program's output.
     */
    private static boolean rebind() {
        try {
            bound = bind();
        } catch (Throwable t) {
            bound = false;
        }
        return bound;
    }

    private static native void event(int kind, Object subject);

    @Hidden
    private static void report(int kind, Object subject) {
        try {
            event(kind, subject);
        } catch (Throwable t) {
            // never throw into application code (also: natives not bound yet)
        }
    }

    // ---- monitors (monitorenter/monitorexit and synchronized methods) ----
    //
    // The hot path. Rewritten code passes a static call-site ID (the agent knows its method
    // and original bytecode index), so nothing here walks the stack. Each thread keeps the
    // monitors it holds here, and appends fixed-size records to a buffer of its own (Rec.buf):
    // by default one per outermost hold (its site, monitor, start and end) and one per nested
    // acquisition (with the monitors held, for lock orders); with trace=all one per enter,
    // entered and exit. It crosses into the agent only when the buffer is full (and with
    // trace=all before an event the agent writes at once, so a thread's lines stay in order).
    // The agent turns the records into per-site hold summaries and lock-order edges, and, with
    // trace=all, into one event line each.

    /** Set by the agent at start-up (before any rewritten class loads); cleared at a detach. */
    static volatile boolean ready;
    /**
     * The recording under way, counted from 0 (set by the agent before `ready`). A Rec of an
     * earlier recording (an agent attached, detached, attached again) is not used: its held
     * monitors and buffer belong to a log that is closed.
     */
    static volatile int session;
    /** trace=all: MonitorEnter records too, with stacks. */
    static boolean traceAll;
    /** trace=all with stackdepth above 1: each block's stack is taken at its enter. */
    static boolean deepStacks;
    /** Holds at least this long (ns) are written as MonitorHold events with a stack; < 0: none. */
    static long holdThreshold = -1;
    /**
     * holdtiming=sampled: the address of the agent's coarse clock (nanoseconds as of its last
     * tick, advanced every millisecond by a thread of the agent; then its last TICKS ticks,
     * agent/src/recorder/clock.rs, Coarse), 0 with holdtiming=exact. Every hold is counted,
     * but only a sample reads System.nanoTime at both ends (Rec.begin); the others read this
     * clock, a plain load, so that a long one is still found. While the program takes no
     * locks the ticker stops and the clock reads STALE: a hold that begins then is timed, one
     * that ends then gets a precise end (holdNear), and the ticker ticks again (Rec.timed).
     */
    static long coarseClock;
    /** The ticks the coarse clock keeps after its current value (a power of two: the coarse
     * time's low bits are its tick's number modulo TICKS), and the ticker's period (ns). */
    private static final int TICKS = 1024;
    private static final long TICK = 1_000_000L;
    /** The coarse clock while the ticker does not tick (clock.rs, STALE): later than any time,
     * so it ends every sampling window (Rec.begin) and makes every hold not timed look long. */
    static final long STALE = Long.MAX_VALUE;
    /** The offset of the word the tracker sets when it uses the clock (clock.rs, Coarse.used):
     * after the clock's own word and its ring. */
    private static final long USED = 8L + 8L * TICKS;
    /** A hold not timed that the coarse clock says lasted this long (ns) gets a precise end,
     * to be compared with holdThreshold; without a threshold, a length only a STALE end gives
     * (one the clock cannot tell). */
    static long holdNear = -1;
    /** A hold not timed is written as a MonitorHold when its length from the first tick after
     * its coarse start reaches this (holdThreshold less one tick): the hold is then at least
     * that long, and every hold of holdThreshold is, when the ticker runs on time. */
    static long holdCaught = -1;
    /**
     * tracking=sampled (set only with coarseClock): an outermost hold (of a monitor or a
     * j.u.c. lock) not in the thread's sample (Rec.untracked) is left unidentified, with every
     * hold nested in it: its held entry has hash 0, it is counted at its site in the row of
     * other monitors (Rec.quietCount), and it neither names its monitor nor makes a lock-order
     * occurrence. Why: a program that locks a fresh object per row (Derby) spent most of its
     * tracker time on the identity hash, the name and the lock orders of holds nobody reads
     * one by one; the counts per site stay exact, and a long hold is still found (by the
     * coarse clock) and hashed at its end. See "Sampled tracking" in docs/MODES.md.
     */
    static boolean sampleTracking;

    private static final ThreadLocal<Rec> REC = new ThreadLocal<Rec>();

    /** Marks the held entry of a reentrant acquisition (in its site; site IDs are positive). */
    private static final int INNER = 0x80000000;

    private static Rec rec() {
        Rec r = mine();
        return r != null ? r : recSlow(true);
    }

    /** The thread's Rec of this recording, or null (none made yet, or an earlier one's; or
     * lost with its erased ThreadLocals while another thread holds its slot, until its next
     * rec(), which asks the agent: the JDK erases them between tasks, when no report is
     * under way). */
    private static Rec current() {
        Rec r = mine();
        return r != null ? r : recSlow(false);
    }

    /** The thread's Rec from its slot, or null (not there: REC may have it). */
    private static Rec mine() {
        long at = Rec.TID;
        if (at < 0) {
            return null;
        }
        Thread t = Thread.currentThread();
        Rec r = Rec.BY_THREAD[(int) Rec.U.getLong(t, at) & (Rec.SLOTS - 1)];
        return r != null && r.thread == t && r.session == session ? r : null;
    }

    /** rec() or current() of a thread whose Rec is not in its slot. Out of line. */
    @DontInline
    private static Rec recSlow(boolean make) {
        Rec r = REC.get();
        if (r != null && r.session == session) {
            claim(r, false);
            return r;
        }
        return make ? newRec() : null;
    }

    /** Puts `r` in its thread's slot if the slot is free (see Rec.BY_THREAD); `ended`: a slot of
     * a thread that ended is free too (Thread.isAlive, a native call on JDK 17: once per
     * thread). */
    private static void claim(Rec r, boolean ended) {
        long at = Rec.TID;
        if (at < 0) {
            return;
        }
        int k = (int) Rec.U.getLong(r.thread, at) & (Rec.SLOTS - 1);
        Rec o = Rec.BY_THREAD[k];
        if (o == null || o.session != r.session || o.thread == r.thread
                || ended && !o.thread.isAlive()) {
            Rec.BY_THREAD[k] = r;
        }
    }

    /**
     * The thread's first report of this recording, or its first since its ThreadLocals were
     * erased while another thread held its slot (out of line: rec() is inlined everywhere).
     * The agent keeps a thread's first Rec and hands it back here: a thread that made a
     * second one (the JDK's InnocuousThread erases its ThreadLocals between tasks: the
     * Common-Cleaner, the common pool's workers on JDK 19 and later) wrote its records where
     * the agent never read them, and lost every hold after its first task.
     */
    @DontInline
    private static Rec newRec() {
        if (!ready) {
            return null;
        }
        Rec r = new Rec(Thread.currentThread());
        r.session = session;
        try {
            Rec had = register(r);
            if (had != null && had.session == session && had.thread == r.thread) {
                r = had;
            }
        } catch (Throwable t) {
            // natives not bound: records are kept and dropped when the buffer is full
        }
        REC.set(r);
        claim(r, true);
        return r;
    }

    /** Registers `r` as the thread's Rec, unless the thread has one: the Rec the agent
     * drains for the thread (`r` or the thread's first), or null. */
    private static native Rec register(Rec r);
    /** Hands the buffered records to the agent; the agent sets r.pos back to 0. */
    static native void flush(Rec r);
    /** trace=all: the current stack (the block's frame at `site`), interned; its ID. */
    private static native int stack(Rec r, int site);
    /** A hold that reached the threshold: written with the current stack. */
    private static native void longHold(Rec r, int site, int hash, long nanos, long end, long start);
    /**
     * Writes the class of `o` (hashed `hash`) as an ObjectClass line, once per object per run
     * (the agent keeps which it named); false when the agent names no more objects.
     */
    static native boolean name(Object o, int hash);
    /** The agent names no more objects (its table is full): no thread asks it again. */
    static boolean namesFull;

    // The code at each site is kept small (issue 21): the reports with a site are never
    // inlined (@DontInline), so that a site is a call or two, as the rewritten code has them,
    // and the JIT compiles the tracker once, not into each of the program's methods (Derby's
    // C2 time doubled with them inlined; a `synchronized` block's machine code was 4 to 10
    // times its size without the agent, depending on which method the JIT compiled first).
    // In each report, everything rare (the first report of a thread, a nested or reentrant
    // acquisition, trace=all, a hold that may be long, a release out of order) is in a method
    // of its own, also out of line, so that the common path is short. Those methods call the
    // natives that take a stack (stack, longHold): always one frame below the report, as the
    // agent expects (agent/src/engines/tracker.rs, SITE_FRAMES).
    //
    // A `monitorenter` block: `monitorEnter(o, site)` before the lock returns the thread's Rec
    // (the monitor and its hash kept in it), which the rewritten code keeps on the operand
    // stack across the `monitorenter` (`dup; monitorEnter; swap; monitorenter`) and hands to
    // `monitorEntered(rec, site)`: one ThreadLocal lookup for both. A `synchronized` method has
    // an entry point of its own, `syncEntered(o, site)`: its monitor is held already, and only
    // it hashes after the lock.

    @Hidden
    public static Object monitorEnter(Object monitor) {
        return monitorEnter(monitor, 0);
    }

    @Hidden
    public static void monitorEntered(Object rec) {
        monitorEntered(rec, 0);
    }

    @Hidden
    public static void syncEntered(Object monitor) {
        syncEntered(monitor, 0);
    }

    @Hidden
    public static void monitorExit(Object monitor) {
        monitorExit(monitor, 0);
    }

    // Guarded sites (rewriter Config::guards, agent option guards=on): each `monitorenter`
    // keeps what guardEntered returns in an int local of its frame and hands it to guardExit
    // at the block's `monitorexit`s (a synchronized method: guardSyncEntered's, at its exits).
    // 0 says the tracker follows the hold; any other value will be the coarse clock at the
    // enter of a hold the tracker leaves out, which the exit compares with the clock, without
    // a call, to find it long (issue 45). These entry points are small so that the JIT
    // inlines them; today they follow every hold, as the unguarded reports do.

    @Hidden
    public static Object guardEnter(Object monitor, int site) {
        return monitorEnter(monitor, site);
    }

    @Hidden
    public static int guardEntered(Object rec, int site) {
        monitorEntered(rec, site);
        return 0;
    }

    @Hidden
    public static int guardSyncEntered(Object monitor, int site) {
        syncEntered(monitor, site);
        return 0;
    }

    @Hidden
    public static void guardExit(Object monitor, int kept, int site) {
        monitorExit(monitor, site);
    }

    /**
     * Before a `monitorenter` at `site`: what monitorEntered is handed, the thread's Rec, or
     * the monitor itself when this report was lost (no recording, or a StackOverflowError
     * here): monitorEntered then reports it as a synchronized method's. (No Rec is ever a
     * monitor of the program: the class is private to the tracker.)
     */
    @Hidden
    @DontInline
    public static Object monitorEnter(Object monitor, int site) {
        if (monitor == null) {
            return null; // monitorenter throws NullPointerException: nothing is entered
        }
        try {
            Rec r = rec();
            if (r == null) {
                return monitor;
            }
            if (sampleTracking && r.untracked()) {
                return quietEnter(r, monitor);
            }
            // Hashed before it is locked: hashing a locked object would inflate its lock.
            int h = r.hash(monitor);
            r.name(monitor, h);
            r.pendingObj = monitor;
            r.pendingHash = h;
            if (r.depth != 0 || traceAll) {
                enterRare(r, monitor, site, h);
            }
            return r;
        } catch (Throwable t) {
            // never throw into application code (StackOverflowError included)
            return monitor;
        }
    }

    /** monitorEnter of a hold left unidentified (tracking=sampled): no hash, name or order. */
    private static Object quietEnter(Rec r, Object monitor) {
        r.pendingObj = monitor;
        r.pendingHash = 0;
        if (r.depth != 0) {
            r.pendingInner = r.find(monitor) >= 0;
        }
        return r;
    }

    /**
     * monitorEnter's nested acquisition (its lock orders count when attempted: a deadlock's
     * never completes) and trace=all's MonitorEnter record. r.pendingInner is read only when
     * the thread holds a monitor, so only this sets it.
     */
    @DontInline
    private static void enterRare(Rec r, Object monitor, int site, int h) {
        r.pendingInner = r.depth > 0 && r.nested(monitor, site, h);
        if (traceAll) {
            // The block's section opens here: without the stack for all of it, it writes
            // nothing (see "Report sections" below).
            r.pendingUnwritten = true;
            if (!stackRoom()) {
                return;
            }
            r.pendingUnwritten = false;
            int st = deepStacks ? stack(r, site) : 0;
            long t = System.nanoTime();
            r.pendingStack = st;
            r.put(OrcaEvents.R_ENTER, site, h, t, st);
        }
    }

    /** After a `monitorenter` at `site`: `rec` is what monitorEnter returned. */
    @Hidden
    @DontInline
    public static void monitorEntered(Object rec, int site) {
        try {
            if (!(rec instanceof Rec) || traceAll) {
                enteredRare(rec, site);
                return;
            }
            Rec r = (Rec) rec;
            Object monitor = r.pendingObj;
            int h = r.pendingHash;
            if (r.depth != 0 && r.pendingInner) {
                // A reentrant acquisition starts no hold, and its entry is marked: its
                // release ends none.
                r.push(monitor, h, site | INNER, 0);
                return;
            }
            long c = coarseClock;
            r.push(monitor, h, site, c == 0 ? System.nanoTime() : h == 0 ? r.quietBegin(c)
                    : r.begin(c));
        } catch (Throwable t) {
        }
    }

    /**
     * monitorEntered with trace=all, or without its monitorEnter's report (`rec` is then the
     * monitor: the report was lost to a StackOverflowError, or made before the recording
     * began; the monitor is hashed now, locked, as a synchronized method's).
     */
    @DontInline
    private static void enteredRare(Object rec, int site) {
        Rec r = rec instanceof Rec ? (Rec) rec : rec();
        if (r == null) {
            return;
        }
        Object monitor;
        int h;
        int st = 0;
        boolean inner;
        boolean written;
        if (rec == r) {
            monitor = r.pendingObj;
            h = r.pendingHash;
            st = r.pendingStack;
            inner = r.depth > 0 && r.pendingInner;
            written = !r.pendingUnwritten;
        } else {
            // No enter report: the section opens here.
            written = !traceAll || stackRoom();
            monitor = rec;
            h = r.hashLocked(monitor);
            r.name(monitor, h);
            inner = r.depth > 0 && r.nested(monitor, site, h);
            if (traceAll && deepStacks && written) {
                st = stack(r, site);
            }
        }
        r.pendingStack = 0;
        r.pendingUnwritten = false;
        entered(r, monitor, site, h, inner, st, written);
    }

    /** The entry of a `synchronized` method at `site` (its monitor held already). */
    @Hidden
    @DontInline
    public static void syncEntered(Object monitor, int site) {
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            if (r.depth != 0 || traceAll) {
                syncEnteredRare(r, monitor, site);
                return;
            }
            if (sampleTracking && r.untracked()) {
                r.push(monitor, 0, site, r.quietBegin(coarseClock));
                return;
            }
            // named before the hold's clock is read, so that naming is not counted in the hold
            int h = r.hashLocked(monitor);
            r.name(monitor, h);
            long c = coarseClock;
            r.push(monitor, h, site, c != 0 ? r.begin(c) : System.nanoTime());
        } catch (Throwable t) {
        }
    }

    /** syncEntered with monitors held (nesting, reentrancy) or with trace=all. */
    @DontInline
    private static void syncEnteredRare(Rec r, Object monitor, int site) {
        if (sampleTracking && r.untracked()) {
            boolean inner = r.find(monitor) >= 0;
            r.push(monitor, 0, inner ? site | INNER : site, inner ? 0 : r.quietBegin(coarseClock));
            return;
        }
        // A reentrant acquisition (a synchronized method calling one of its own object's)
        // takes the hash its held entry has: the monitor is locked, and hashing it would be a
        // call into the VM (hash); it was named when it was first taken.
        int i = r.depth > 0 ? r.find(monitor) : -1;
        int h;
        boolean inner;
        if (i >= 0) {
            h = r.heldHash(i);
            inner = true;
        } else {
            h = r.hashLocked(monitor);
            r.name(monitor, h);
            inner = r.depth > 0 && r.nested(monitor, site, h);
        }
        // A synchronized method's section opens here (its monitor is held already).
        boolean written = !traceAll || stackRoom();
        int st = traceAll && deepStacks && written ? stack(r, site) : 0;
        entered(r, monitor, site, h, inner, st, written);
    }

    /**
     * The held entry of an acquisition (and trace=all's MonitorEntered record, unless the
     * section was found without the stack to end: `written` false, the entry marked
     * S_UNWRITTEN, and its release writes nothing either).
     */
    private static void entered(Rec r, Object monitor, int site, int h, boolean inner, int st,
            boolean written) {
        // trace=all reads the clock here, now that the monitor is held, whether or not the
        // acquisition blocked: HotSpot spins for a contended monitor before it posts
        // MonitorContendedEnter, so an acquisition without that event may still have waited
        // for the previous owner's exit, and its MonitorEntered must not be stamped before
        // that exit (docs/FORMAT.md, "Exclusion").
        long t = 0;
        if (traceAll) {
            t = System.nanoTime();
        } else if (!inner) {
            // (a reentrant acquisition starts no hold: its time is needed by trace=all only)
            long c = coarseClock;
            t = c != 0 ? r.begin(c) : System.nanoTime();
        }
        // A reentrant acquisition's entry is marked: its release ends no hold.
        int s = inner ? site | INNER : site;
        if (!written) {
            r.push(monitor, h, s | OrcaEvents.S_UNWRITTEN, t);
            return;
        }
        r.push(monitor, h, s, t);
        if (traceAll) {
            r.put(OrcaEvents.R_ENTERED, site, h, t, st);
        }
    }

    /**
     * A `monitorexit` or a synchronized method's return at `site`. The common case inline:
     * the release of the innermost monitor held, an outermost hold, without trace=all.
     */
    @Hidden
    @DontInline
    public static void monitorExit(Object monitor, int site) {
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            int d = r.depth - 1;
            long[] e;
            long w;
            if (d < 0 || r.heldObj[d] != monitor || (w = (e = r.held)[Rec.HW * d]) < 0
                    || traceAll) {
                exitRare(r, monitor, site);
                return;
            }
            int enterSite = (int) (w >> 32);
            int h = (int) w;
            long start = e[Rec.HW * d + 1];
            long paused = e[Rec.HW * d + 2];
            r.heldObj[d] = null;
            r.depth = d;
            long t;
            if (start >= 0) {
                t = System.nanoTime();
                r.released(h, start, t);
                // The long hold's line first: its hold record, put after it, is counted in a
                // summary line written after it (a put may write the summaries).
                long threshold = holdThreshold;
                if (threshold >= 0 && t - start - paused >= threshold) {
                    longHeld(r, enterSite, h, t - start - paused, t, start);
                }
            } else {
                // Not timed (Rec.begin): the coarse clock at both ends (see exitRare).
                long addr = coarseClock;
                t = r.coarse(addr);
                long near = holdNear;
                if (near >= 0 && t - ~start - paused >= near) {
                    nearEnd(r, monitor, addr, enterSite, h, ~start, paused);
                    return;
                }
                if (h == 0 && paused > 0) {
                    // Left unidentified (tracking=sampled), and it waited: hashed now, as the
                    // agent's pause of its wait names the monitor. The others are counted at
                    // their site in the row of other monitors.
                    h = lateHash(r, monitor);
                }
                if (h != 0) {
                    r.released(h, ~start, t);
                } else if (paused == 0 && r.quietCount(enterSite)) {
                    return;
                }
                if (paused == 0 && r.counted(OrcaEvents.R_HOLD, enterSite, h, t)) {
                    return;
                }
                start = -1;
            }
            // The outermost release: one record per hold is all a summary needs. The third
            // word: the start of a timed hold, -1 for one not timed.
            r.put(paused > 0 ? OrcaEvents.R_HOLD_WAITED : OrcaEvents.R_HOLD, enterSite, h, t,
                    start);
        } catch (Throwable t) {
        }
    }

    /**
     * The hash of a monitor held unidentified (tracking=sampled), named, at the end of a hold
     * that is written or that waited (a locked object's hash: hashLocked). Out of line: rare.
     */
    @DontInline
    private static int lateHash(Rec r, Object monitor) {
        int h = r.hashLocked(monitor);
        r.name(monitor, h);
        return h;
    }

    /** A timed hold that reached the threshold: its MonitorHold line. */
    @DontInline
    private static void longHeld(Rec r, int site, int h, long held, long t, long start) {
        longHold(r, site, h, held, t, start);
    }

    /**
     * The release of a hold not timed that the coarse clock says may have reached the
     * threshold: timed from the first tick after its coarse start `c0` to a precise end
     * (see exitRare).
     */
    @DontInline
    private static void nearEnd(Rec r, Object monitor, long addr, int site, int h, long c0,
            long paused) {
        long t = System.nanoTime();
        long start = r.startedBy(addr, c0, t);
        long held = t - start - paused;
        long threshold = holdCaught;
        boolean isLong = threshold >= 0 && held >= threshold;
        if (h == 0 && (isLong || paused > 0)) {
            // a hold left unidentified (tracking=sampled) that is written, or that waited
            h = lateHash(r, monitor);
        }
        if (h != 0) {
            r.released(h, start, t);
        }
        if (isLong) {
            longHold(r, site, h, held, t, start);
        }
        r.put(paused > 0 ? OrcaEvents.R_HOLD_WAITED : OrcaEvents.R_HOLD, site, h, t, -1);
    }

    /**
     * Every other release: reentrant, out of order (hand over hand), with trace=all, or of a
     * monitor whose enter was not seen.
     */
    @DontInline
    private static void exitRare(Rec r, Object monitor, int site) {
        int i = r.find(monitor);
        // A reentrant release ends no hold: it reads the clock for trace=all only.
        long t = 0;
        int h;
        if (i >= 0) {
            h = r.heldHash(i);
            long start = r.heldStart(i);
            long paused = r.heldPaused(i);
            int enterSite = r.heldSite(i);
            r.remove(i);
            if ((enterSite & OrcaEvents.S_UNWRITTEN) != 0) {
                return; // its section writes nothing (entered)
            }
            if (enterSite >= 0) {
                long threshold = holdThreshold;
                // The record's third word: the start of a timed hold, -1 for one not timed.
                long third = start;
                if (start >= 0) {
                    t = System.nanoTime();
                } else {
                    // Not timed (Rec.begin): the coarse clock at both ends, and the precise
                    // one at the end of a hold that may have reached the threshold, timed
                    // from the first tick after its coarse start (Rec.startedBy): never
                    // longer than the hold, shorter by at most a tick when the ticker ran
                    // on time.
                    start = ~start;
                    long addr = coarseClock;
                    t = r.coarse(addr);
                    long near = holdNear;
                    if (near >= 0 && t - start - paused >= near) {
                        t = System.nanoTime();
                        start = r.startedBy(addr, start, t);
                        threshold = holdCaught;
                    } else {
                        threshold = -1;
                    }
                    third = -1;
                }
                long held = t - start - paused;
                if (h == 0 && (paused > 0 || threshold >= 0 && held >= threshold)) {
                    // left unidentified (tracking=sampled): see nearEnd
                    h = lateHash(r, monitor);
                }
                if (h != 0) {
                    r.released(h, start, t);
                }
                // The long hold's line first: its hold record, put after it, is counted in
                // a summary line written after it (a put may write the summaries).
                if (threshold >= 0 && held >= threshold) {
                    longHold(r, enterSite, h, held, t, start);
                }
                // The outermost release: one record per hold is all a summary needs.
                if (!traceAll) {
                    r.put(paused > 0 ? OrcaEvents.R_HOLD_WAITED : OrcaEvents.R_HOLD,
                            enterSite, h, t, third);
                }
            }
        } else {
            // its enter was not seen (a report lost to a StackOverflowError)
            h = System.identityHashCode(monitor);
        }
        if (traceAll) {
            if (t == 0) {
                t = System.nanoTime();
            }
            r.put(OrcaEvents.R_EXIT, site, h, t, 0);
        }
    }

    // ---- JDK methods instrumented themselves (rewriter: Config::hooks) ----
    //
    // The hooked method calls methodEntry first and methodExit on every way out (returns, and
    // a catch-all handler that rethrows), so the agent sees every caller: subclasses, JDK
    // code, reflection, method handles. The agent keeps the nesting (Thread.join() runs
    // join(0)): only the outermost call is reported, as in JVMTI mode.

    private static native void hookEnter(int kind, Object subject);
    /** hookEnter from a call site with a static ID (`site`, a `lockSite` hint): a wake-up's
     * (`signal`, `signalAll`, `unpark`). */
    private static native void hookEnterAt(int kind, Object subject, int site);
    private static native void hookExit();

    @Hidden
    public static void methodEntry(Object subject, int kind) {
        try {
            Rec r = rec();
            if (r == null) {
                hookEnter(kind, subject);
                return;
            }
            int d = r.hookDepth++;
            // A wake-up's site, named by its rewritten call site (lockSite), taken at any
            // depth: a hint left behind by a nested call (AQS's unpark inside unlock) must
            // not name the site of a later call that was not rewritten.
            int wakeSite = 0;
            if (subject != null && r.hintObj == subject && (kind == OrcaEvents.H_SIGNAL
                    || kind == OrcaEvents.H_SIGNAL_ALL || kind == OrcaEvents.H_UNPARK)) {
                wakeSite = r.hintSite;
                r.hintObj = null;
            }
            if (r.inSem) {
                if (kind == OrcaEvents.K_SEMAPHORE_ACQUIRE || kind == OrcaEvents.K_SEMAPHORE_RELEASE) {
                    // No Semaphore call runs another: the last one's end was lost (a
                    // StackOverflowError as its exit report was called). It is over.
                    r.inSem = false;
                    r.semObj = null;
                    if (r.semWaiter) {
                        r.semWaiter = false;
                        hookExit(); // the agent has it open
                    }
                    d = 0;
                    r.hookDepth = 1;
                } else {
                    // Inside a Semaphore call the tracker keeps to itself: nothing in it is
                    // reported, but an acquisition that enters AQS's slow path may block, and
                    // the agent is told now (semStart).
                    if (kind == OrcaEvents.H_SLOW && r.semObj != null && !r.semWaiter) {
                        r.semWaiter = true;
                        semEnter(OrcaEvents.K_SEMAPHORE_ACQUIRE, r.semObj, r.semSite, r.semSince);
                    }
                    r.quiet(d, true);
                    return;
                }
            }
            if (kind == OrcaEvents.H_SLOW) {
                // AQS's slow path: contention on the lock call under way, if it is this one.
                if (r.inLock && d >= 1 && subject == r.lockSync && !r.lockContended) {
                    // written now, so that a thread blocked for good is seen blocked
                    r.lockContended = true;
                    lockBlocked(r.lockReport, subject, System.nanoTime());
                    r.lockTold = true;
                }
                r.quiet(d, true); // never an event of its own
                return;
            }
            if (r.inLock) {
                r.quiet(d, true); // inside a lock call the agent was not told of
                return;
            }
            r.quiet(d, false);
            if (d == 0) {
                r.lockOuter = null;
                if (semThreshold > 0 && (kind == OrcaEvents.K_SEMAPHORE_ACQUIRE
                        || kind == OrcaEvents.K_SEMAPHORE_RELEASE)) {
                    // the site the call site named, else the caller's (a walk of one frame;
                    // here, so that the agent finds the caller HOOK_FRAMES down)
                    int site = r.hintObj == subject ? r.hintSite : 0;
                    r.hintObj = null;
                    if (site == 0) {
                        site = hookCallerSite();
                    }
                    int how = semStart(r, subject, kind, site);
                    if (how == SEM_KEPT) {
                        r.quiet(d, true);
                        return;
                    }
                    if (how == SEM_TOLD) {
                        // a release with threads queued: reported as before, with its site
                        // (here, so that the agent finds the caller HOOK_FRAMES down)
                        semEnter(kind, subject, r.semSite, 0);
                        return;
                    }
                }
            }
            if (d == 0) {
                if (kind == OrcaEvents.K_OBJECT_WAIT) {
                    r.waitObj = subject;
                    r.waitSince = System.nanoTime();
                } else if (kind == OrcaEvents.H_AWAIT) {
                    r.awaitSince = System.nanoTime();
                } else if (wakeSite > 0) {
                    // the site the rewritten call site named: the agent counts a wake-up that
                    // can have ended no long wait there, without a walk
                    hookEnterAt(kind, subject, wakeSite);
                    return;
                }
            }
            hookEnter(kind, subject);
        } catch (Throwable t) {
            // never throw into application code (also: natives not bound yet)
        }
    }

    @Hidden
    public static void methodExit() {
        try {
            Rec r = current();
            if (r == null || r.hookDepth <= 0) {
                hookExit();
                return;
            }
            int d = --r.hookDepth;
            if (d == 0 && r.inSem) {
                r.inSem = false;
                Object s = r.semObj;
                if (s == null) {
                    return; // a release, counted at its start
                }
                r.semObj = null;
                long end = System.nanoTime();
                long waited = end - r.semSince;
                if (!r.semWaiter && waited < semThreshold) {
                    int h = r.hash(s);
                    r.name(s, h);
                    r.put(OrcaEvents.R_ACQUIRED, r.semSite, h, end, waited);
                    return;
                }
                // Told of it (it may have blocked), or long all the same (the thread was kept
                // off the processor): the agent ends it as any other (here, so that it finds
                // the Semaphore's frame above the caller's, as at a hook's exit).
                if (!r.semWaiter) {
                    semEnter(OrcaEvents.K_SEMAPHORE_ACQUIRE, s, r.semSite, r.semSince);
                }
                r.semWaiter = false;
                hookExit();
                return;
            }
            if (r.isQuiet(d)) {
                return;
            }
            if (d == 0) {
                if (r.waitObj != null) {
                    Object o = r.waitObj;
                    r.waitObj = null;
                    paused(o, System.nanoTime() - r.waitSince);
                } else if (r.awaitSince != 0) {
                    r.awaited(System.nanoTime() - r.awaitSince);
                    r.awaitSince = 0;
                }
            }
            hookExit();
        } catch (Throwable t) {
        }
    }

    // ---- java.util.concurrent.Semaphore, hooked: counted in the thread's buffer ----
    //
    // Every acquisition and release was two calls into the agent (hookEnter, hookExit), each
    // with the recording's lock, and the acquisition a walk of one frame for its site: a pool
    // of 4 permits shared by 8 threads ran at a tenth of its speed without the agent. Now a
    // call the agent would only count is counted here, at the site the rewritten call site
    // names (lockSite, else callerSite), with no call into the agent:
    //  - an acquisition (every overload, a tryAcquire that fails too) that lasted less than
    //    semThreshold and never entered AQS's slow path: an R_ACQUIRED record, which the
    //    agent adds to the thread's Waits row of call acquire at its next drain;
    //  - a release while no thread is queued on the semaphore (hasQueuedThreads, final in
    //    Semaphore: no code of the program runs): it can have ended no wait; an R_RELEASED
    //    record, added to the Notifies row of call release. A release with threads queued
    //    goes to the agent as before.
    // An acquisition that enters AQS's slow path may block: the agent is told then (semEnter,
    // with its start), before the thread is queued, so that a release that sees it queued
    // finds it in the agent's table of waiters; it then ends at its hookExit as before (written
    // in full if it lasted the threshold, with the release that ended it). One that did not
    // but lasted the threshold all the same is handed to the agent at its end, with its start.

    /** waitthreshold (ns) while the tracker counts semaphore calls itself; -1: it does not. */
    static long semThreshold = -1;

    /**
     * The hooked Semaphore call `kind` on `sem` at `site` begins, for the agent, at `since`
     * (System.nanoTime; 0: now), as hookEnter would report it from the call's own frame: an
     * acquisition the tracker kept to itself that may block, or that lasted the threshold; a
     * release with threads queued.
     */
    private static native void semEnter(int kind, Object sem, int site, long since);

    /** What semStart did: nothing (the agent is told as before, hookEnter), kept the call
     * (Rec.inSem), or found a release the agent is to be told of at its site (semEnter). */
    private static final int SEM_AGENT = 0, SEM_KEPT = 1, SEM_TOLD = 2;

    /**
     * The start of a hooked Semaphore call (kind K_SEMAPHORE_ACQUIRE or _RELEASE) at depth 0,
     * at `site` (see above): SEM_KEPT, SEM_TOLD (its site in Rec.semSite) or SEM_AGENT (no
     * site). Out of line.
     */
    @DontInline
    private static int semStart(Rec r, Object subject, int kind, int site) {
        if (!(subject instanceof Semaphore) || site <= 0) {
            return SEM_AGENT;
        }
        Semaphore s = (Semaphore) subject;
        boolean release = kind == OrcaEvents.K_SEMAPHORE_RELEASE;
        if (release && s.hasQueuedThreads()) {
            r.semSite = site;
            return SEM_TOLD;
        }
        r.inSem = true;
        if (release) {
            r.semObj = null;
            r.released(site);
        } else {
            r.semObj = s;
            r.semSite = site;
            r.semWaiter = false;
            r.semSince = System.nanoTime();
        }
        return SEM_KEPT;
    }

    // ---- java.util.concurrent locks: ReentrantLock and both views of a ReentrantReadWriteLock,
    // hooked as the JDK methods above, with their synchronizer and exact outcome (rewriter:
    // MethodHook::sync_field). By default the tracker keeps the thread's holds of them in its
    // held stack, with the monitors (one stack: lock orders across both kinds), and appends one
    // record per outermost hold; it crosses into the agent only for what is written in full:
    // contended, failed, interrupted or timed-out acquisitions, and long holds. With trace=all
    // every call is also handed to the agent, which writes every line.

    /** The site of the next lock call (rewritten call sites: `lockSite` before the call). */
    @Hidden
    public static void lockSite(Object lock, int site) {
        try {
            Rec r = rec();
            if (r != null) {
                r.hintObj = lock;
                r.hintSite = site;
            }
        } catch (Throwable t) {
        }
    }

    /** The caller's site (a call site that was not rewritten), by a walk of one frame: from
     * lockBegin (the agent's LOCK_ENTRY_FRAMES). */
    private static native int callerSite();

    /** The same from methodEntry itself (HOOK_FRAMES): a hooked Semaphore call's. */
    private static native int hookCallerSite();

    /** The coarse clock was found stale (Rec.timed): the agent's ticker ticks again. */
    private static native void wakeClock();
    /** The calling thread's CPU time in ns (the agent's clock_gettime): Rec.scaled. */
    private static native long threadCpu();
    /**
     * Whether the stack has room for a whole report section begun now (agent/src/engines/
     * stack_room.rs).
     *
     * Report sections. Under trace=all a `synchronized` block writes three records, from
     * three reports the rewriter inserted into the program's own method: MonitorEnter
     * (monitorEnter), MonitorEntered (monitorEntered) and MonitorExit (monitorExit); a
     * synchronized method writes the last two (syncEntered, monitorExit). The agent pairs
     * them into a hold, and `orca check` rejects a log that has one without the others.
     * A StackOverflowError is thrown only by the stack bang of a method's entry, which throws
     * when the page StackShadowPages below the new frame lies in the guard zones. All the
     * reports of one section are called from the same frame of the program's method (its
     * exception handler's too), a few operand-stack slots apart, and none goes deeper than a
     * few tracker frames below it. So the section's first report (enterRare, or enteredRare
     * and syncEnteredRare when no enter report came before them) asks stackRoom() before it writes
     * anything: with room, none of the section's reports can be stopped by a
     * StackOverflowError (their catch-all handlers then catch nothing of that kind), and the
     * log holds the whole section; without, the section's held entry is marked S_UNWRITTEN
     * and none of its reports writes a record. A report lost whole (the overflow at stackRoom()'s
     * own call, or at a report's call before it pushed its entry) has written nothing.
     * The other records come whole by construction: the records of one put (R_ORDER and the
     * held monitors after it) are published together by setPos, and the summary records are
     * one record per hold; the calls the natives report (callEnter/callExit0, hookEnter/
     * hookExit, the lock reports) are paired by the agent's own state of the thread, which
     * closes a call whose exit report never came as a call that threw (close_inline, the
     * thread's next report) rather than leaving it open.
     */
    private static native boolean stackRoom();
    /** The exclusive owner of the synchronizer of lock call `report` (its thread's hash; 0:
     * none, or a lock that names no owner). */
    private static native int lockOwner(int report, Object sync);
    /** A lock call written in full: its LockAcquire (at t0, owner as read) and its outcome
     * (at t, when the call returned: the hold's start). */
    private static native void lockContended(int report, Object sync, long t0, long t,
            int owner, int outcome);
    /** A lock call kept in Java turned out contended: its LockAcquire now (at t0), its exit
     * line at lockEnd. */
    private static native void lockBlocked(int report, Object sync, long t0);
    /** trace=all: a lock call on synchronizer `sync` begins (at t0, the tracker's clock: the
     * summaries' too). */
    private static native void lockEnter(int report, Object sync, long t0);
    /** trace=all: the lock call the agent was told of ended so, at t. */
    private static native void lockEnd(int outcome, long t);
    /** Lock call `report` of `sync` ended by an exception: whether it took (an acquisition) or
     * released (an unlock) the lock all the same, the thread holding it once more or once less
     * than the `holds` of its held stack before the call. */
    private static native boolean lockThrew(int report, Object sync, int holds);
    /** A j.u.c. hold that reached the threshold: written with the current stack. */
    private static native void lockLongHold(int site, int hash, long nanos, long end, long start);
    /** Unlock call `report` (at t) of `sync` ended a hold this thread's held stack does not
     * have: taken before a recording attached to a running JVM (the agent writes it only
     * then, once per outermost hold). Rare: no cost on the hot path. */
    private static native void lockHeldAtStart(int report, Object sync, int hash, boolean read, long t);

    /** Outcomes of a lock call: returned normally (void), true, false, threw. */
    private static final int RETURNED = 2, TRUE = 1, FALSE = 0, THREW = -1;

    // The reports of a lock call are split as the monitors' are (see above): the public ones
    // are small enough for the JIT to inline into the hooked method, and handle there the call
    // nested in the outermost one (AQS's release under ReentrantLock.unlock: one in each
    // unlock); the outermost call's report is out of line (lockBegin, lockDone), and what only
    // a rare call needs (a throw, a lost end, trace=all, contention) is further out of line,
    // so that the common path neither runs nor carries it.

    @Hidden
    public static void lockEntry(Object lock, Object sync, int report) {
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            int d = r.hookDepth;
            if (d > 0 && sync != null && r.lockOuter == sync && nests(r.lockReport)
                    && !nests(report)) {
                // the lock call its outer one runs on its synchronizer (AQS's release under
                // ReentrantLock.unlock): quiet, as lockBegin makes it, without a call
                r.hookDepth = d + 1;
                r.quiet(d, true);
                return;
            }
            lockBegin(r, lock, sync, report);
        } catch (Throwable t) {
        }
    }

    /** lockEntry of every call but the one its outer call runs: the outermost (a lock call
     * the hooked method is), or one inside another hooked call. */
    @Hidden
    @DontInline
    private static void lockBegin(Rec r, Object lock, Object sync, int report) {
        try {
            if (r.lockTold && r.lockOuter == null) {
                told(r);
            }
            int d = r.hookDepth;
            Object outer = r.lockOuter;
            if (d > 0 && outer != null && !(outer == sync && nests(r.lockReport) && !nests(report))) {
                // No lock call runs another one, but ReentrantLock's and a view's run their own
                // lock's (AQS's, StampedLock's), which run none: the outer call's end was lost (a
                // StackOverflowError as its exit report was called). It is over. (A call of the
                // outer one's kind on the same lock is the next call, not one inside it: its
                // unlock, after a lock() whose end was lost.)
                d = 0;
                r.inLock = false;
                lostEnd(r);
            }
            r.hookDepth = d + 1;
            if (d > 0 || sync == null) {
                r.quiet(d, true); // inside another tracked call: not reported, as in JVMTI mode
                return;
            }
            r.quiet(d, false);
            r.lockOuter = sync;
            int v = report - OrcaEvents.H_LOCK;
            boolean read = ((OrcaEvents.H_READ_CLASSES >> (v >> 3)) & 1) != 0;
            boolean release = (v & 7) >= 3;
            r.lockReport = report;
            r.lockSync = sync;
            r.lockRead = read;
            r.lockContended = false;
            if (!release) {
                int site = r.hintObj == lock ? r.hintSite : 0;
                if (site == 0) {
                    site = callerSite();
                }
                int flags = OrcaEvents.S_LOCK | (read ? OrcaEvents.S_READ : 0);
                r.lockSite = site;
                if (sampleTracking && r.untracked()) {
                    // left unidentified, as a monitor's hold (tracking=sampled)
                    r.lockHash = 0;
                    r.lockInner = r.depth > 0 && r.findLock(sync, flags) >= 0;
                } else {
                    int h = r.hash(sync);
                    r.name(sync, h);
                    r.lockHash = h;
                    r.lockInner = r.depth > 0 && r.nested(sync, site, h, flags);
                }
            }
            r.hintObj = null;
            r.inLock = !traceAll;
            // An unlock's hold ends now (as LockRelease's time; Rec.unlockTime). An
            // acquisition needs no time of its own unless it is written in full: it is then
            // taken where it turned out contended, or at its end (a tryLock that failed, an
            // interrupted call).
            long now = traceAll ? System.nanoTime()
                    : release ? r.unlockTime(sync, OrcaEvents.S_LOCK | (read ? OrcaEvents.S_READ : 0))
                    : 0;
            r.lockT0 = now;
            if (traceAll) {
                // (here, for the agent's frame count: LOCK_ENTRY_FRAMES)
                lockEnter(report, sync, now);
                r.lockTold = true;
            }
        } catch (Throwable t) {
        }
    }

    /** The agent was told of the last lock call but not of its end (its lockEnd itself
     * overflowed): that end now, as lockDone found it. */
    @DontInline
    private static void told(Rec r) {
        lockEnd(r.lockOwed, r.lockOwedT != 0 ? r.lockOwedT : System.nanoTime());
        r.lockTold = false;
    }

    /** Whether lock call `report` runs a lock call of its synchronizer's (H_NESTING_CLASSES). */
    private static boolean nests(int report) {
        return ((OrcaEvents.H_NESTING_CLASSES >> ((report - OrcaEvents.H_LOCK) >> 3)) & 1) != 0;
    }

    @Hidden
    public static void lockExit() {
        Rec r = ending();
        if (r != null) {
            lockDone(r, RETURNED);
        }
    }

    @Hidden
    public static void lockExitZ(boolean returned) {
        Rec r = ending();
        if (r != null) {
            lockDone(r, returned ? TRUE : FALSE);
        }
    }

    /** A StampedLock method returned a stamp (0: it failed). */
    @Hidden
    public static void lockExitJ(long stamp) {
        Rec r = ending();
        if (r != null) {
            lockDone(r, stamp != 0 ? TRUE : FALSE);
        }
    }

    @Hidden
    public static void lockThrew() {
        Rec r = ending();
        if (r != null) {
            lockDone(r, THREW);
        }
    }

    /**
     * The end of a hooked lock method, inline: one nested in another hooked call ends here
     * (null); the outermost is ended by lockDone, handed the thread's Rec. The outermost's
     * depth is left to lockDone, so that an end lost as lockDone is called (a
     * StackOverflowError) leaves the call under way, for lockBegin to find.
     */
    @Hidden
    private static Rec ending() {
        try {
            Rec r = current();
            if (r == null) {
                return null;
            }
            int d = r.hookDepth;
            if (d > 1) {
                r.hookDepth = d - 1; // nested: quiet, or inside another hooked call
                return null;
            }
            return d == 1 ? r : null;
        } catch (Throwable t) {
            return null;
        }
    }

    /** The end of the outermost hooked call, a lock method (three frames above its caller, for
     * the natives that take a stack: LOCK_EXIT_FRAMES). */
    @Hidden
    @DontInline
    private static void lockDone(Rec r, int outcome) {
        try {
            r.hookDepth = 0;
            if (r.isQuiet(0)) {
                return;
            }
            r.inLock = false;
            r.lockOuter = null;
            Object sync = r.lockSync;
            r.lockSync = null;
            if (r.lockTold) {
                // what the agent is owed if its lockEnd below overflows (lockBegin)
                r.lockOwed = outcome;
                r.lockOwedT = 0;
            }
            boolean read = r.lockRead;
            int flags = OrcaEvents.S_LOCK | (read ? OrcaEvents.S_READ : 0);
            int report = r.lockReport;
            if (outcome == THREW && !read) {
                outcome = threw(r, report, sync, flags);
            }
            if (((report - OrcaEvents.H_LOCK) & 7) >= 3) {
                // unlock: the hold ends when unlock was called (as LockRelease's time); a
                // tryUnlock that returned false released nothing (AQS's release returns false
                // for a release that left the lock held: one level less all the same). A
                // StampedLock converted to the other mode (tryConvertTo*, not followed) ends
                // the hold it has.
                boolean none = outcome == THREW
                        || outcome == FALSE && ((report - OrcaEvents.H_LOCK) & 7) == 4;
                int i = none ? -1 : r.findLock(sync, flags);
                if (i < 0 && !none) {
                    i = r.findLock(sync, flags ^ OrcaEvents.S_READ);
                }
                if (i >= 0) {
                    int h = r.heldHash(i);
                    long start = r.heldStart(i);
                    long paused = r.heldPaused(i);
                    int enterSite = r.heldSite(i);
                    r.remove(i);
                    if (enterSite >= 0) {
                        long end = r.lockT0;
                        long threshold = holdThreshold;
                        // The record's third word: the start of a timed hold, -1 for one not
                        // timed (Rec.begin), whose ends are the coarse clock's, or for one
                        // that may be long a precise end (Rec.unlockTime) and a start at the
                        // first tick after its coarse one (Rec.startedBy), as for monitors.
                        long third = start;
                        if (start < 0) {
                            start = ~start;
                            if (r.lockPrecise) {
                                start = r.startedBy(coarseClock, start, end);
                                threshold = holdCaught;
                            } else {
                                threshold = -1;
                            }
                            third = -1;
                        }
                        // The LockHold line first: the LockHolds line that counts it must come
                        // after it (FORMAT.md), and putting the record may write the summaries.
                        long held = end - start - paused;
                        if (h == 0 && (paused > 0 || threshold >= 0 && held >= threshold)) {
                            // left unidentified (tracking=sampled), and written or waited
                            h = hashNamed(r, sync);
                        }
                        if (threshold >= 0 && held >= threshold) {
                            lockLongHold(enterSite, h, held, end, start);
                        } else if (third < 0 && !r.lockPrecise && paused == 0
                                && (h == 0 && r.quietCount(enterSite)
                                        || r.counted(OrcaEvents.R_LOCK_HOLD, enterSite, h, end))) {
                            // counted in the record before it, as a monitor's (Rec.counted)
                            return;
                        }
                        r.put(OrcaEvents.R_LOCK_HOLD,
                                enterSite | (paused > 0 ? OrcaEvents.S_WAITED : 0), h, end, third);
                    }
                } else if (!none) {
                    // a hold this recording did not see begin: Rec.unlockTime read no clock
                    int h = hashNamed(r, sync);
                    lockHeldAtStart(report, sync, h, read,
                            r.lockT0 != 0 ? r.lockT0 : System.nanoTime());
                }
                if (traceAll) {
                    endTold(r, outcome, r.lockT0);
                }
                return;
            }
            boolean acquired = outcome == RETURNED || outcome == TRUE;
            // The hold's start: timed or only counted as for monitors (Rec.begin), the sample
            // drawn whether or not the call was contended; a reentrant acquisition starts no
            // hold, and its time is needed by trace=all only.
            long t;
            if (acquired && !traceAll && !r.lockInner) {
                long c = coarseClock;
                t = c == 0 ? System.nanoTime() : r.lockHash == 0 ? r.quietBegin(c) : r.begin(c);
            } else {
                t = traceAll || r.lockContended || !acquired ? System.nanoTime() : 0;
            }
            if (acquired) {
                int site = r.lockSite | flags;
                r.push(sync, r.lockHash, r.lockInner ? site | INNER : site, t);
            }
            if (traceAll || r.lockContended) {
                // written in full: its outcome's line at a precise time
                endTold(r, outcome, t > 0 ? t : System.nanoTime());
            } else if (!acquired) {
                lockContended(report, sync, t, t, lockOwner(report, sync), outcome);
            }
        } catch (Throwable t) {
        }
    }

    /**
     * Lock call `report` of `sync` (in the mode of `flags`, a write) ended by an exception:
     * its outcome as the lock says. An acquisition that took the lock all the same (a
     * StackOverflowError the JVM delays to the end of lock()'s @ReservedStackAccess section)
     * is a hold; an unlock that released it (delayed to the end of tryRelease's) is as if
     * unlock returned.
     */
    @DontInline
    private static int threw(Rec r, int report, Object sync, int flags) {
        if (!lockThrew(report, sync, r.holds(sync, flags))) {
            return THREW;
        }
        int outcome = ((report - OrcaEvents.H_LOCK) & 7) >= 3 ? RETURNED : TRUE;
        r.lockOwed = outcome;
        return outcome;
    }

    /** The end of the lock call the agent was told of (lockEnter, lockBlocked): `outcome` at
     * `t`, also kept as owed until lockEnd returns (see lockBegin). */
    @DontInline
    private static void endTold(Rec r, int outcome, long t) {
        r.lockOwedT = t;
        lockEnd(outcome, t);
        r.lockTold = false;
    }

    /** The hash of `sync`, named (lockDone's rare unlock of a hold begun before the
     * recording). */
    @DontInline
    private static int hashNamed(Rec r, Object sync) {
        int h = r.hash(sync);
        r.name(sync, h);
        return h;
    }

    /**
     * The outermost lock call whose end was lost (a StackOverflowError as its exit report was
     * called; lockEntry found it): it threw, and is ended as lockDone ends one that threw,
     * except that no line is written of a call the agent was not told of (the stack is no
     * longer the call's). An acquisition that took the lock all the same keeps its hold.
     */
    @DontInline
    private static void lostEnd(Rec r) {
        Object sync = r.lockSync;
        int report = r.lockReport;
        r.lockSync = null;
        boolean taken = ((report - OrcaEvents.H_LOCK) & 7) < 3 && !r.lockRead && sync != null
                && lockThrew(report, sync, r.holds(sync, OrcaEvents.S_LOCK));
        long t;
        if (taken && !traceAll && !r.lockInner) {
            long c = coarseClock;
            t = c == 0 ? System.nanoTime() : r.lockHash == 0 ? r.quietBegin(c) : r.begin(c);
        } else {
            t = traceAll || r.lockContended ? System.nanoTime() : 0;
        }
        if (taken) {
            int site = r.lockSite | OrcaEvents.S_LOCK;
            r.push(sync, r.lockHash, r.lockInner ? site | INNER : site, t);
        }
        if (traceAll || r.lockContended) {
            lockEnd(taken ? TRUE : THREW, t > 0 ? t : System.nanoTime());
        }
        r.lockTold = false;
    }

    // ---- call sites of tracked natives (JDK 17: Object.wait(long), Thread.sleep(long);
    // every JDK: notify, notifyAll), reported inline: the call stays where it was, between
    // callEntry and callExit, so no frame of the tracker is under it while it blocks. No
    // handler is added for an exception: the agent ends the call at the thread's next report.

    /** `site`: the call site's static ID (0: none, the agent walks a frame for it). */
    private static native void callEnter(int kind, Object subject, int site);
    private static native void callEnterVia(int kind, Class<?> owner);
    private static native void callExit0();

    /** `Owner.sleep(long)` with Owner not Thread: reported if it resolves to Thread.sleep. */
    @Hidden
    public static void callEntryVia(Class<?> owner, int kind) {
        try {
            reported();
            callEnterVia(kind, owner);
        } catch (Throwable t) {
        }
    }

    @Hidden
    public static void callEntry(Object subject, int kind) {
        try {
            reported();
            if (kind == OrcaEvents.K_OBJECT_WAIT) {
                inlineWait(subject);
            }
            callEnter(kind, subject, 0);
        } catch (Throwable t) {
        }
    }

    /**
     * The same from a call site with a static ID (the rewriter's site IDs): a call the agent
     * only counts (a notify that wakes nobody) is counted at its site without a stack walk.
     * (Not a call of the other: the agent counts the frames above the caller.)
     */
    @Hidden
    public static void callEntry(Object subject, int kind, int site) {
        try {
            if (kind == OrcaEvents.K_OBJECT_NOTIFY || kind == OrcaEvents.K_OBJECT_NOTIFY_ALL) {
                if (waiterSlots != 0 && notifiedNobody(subject, kind, site)) {
                    return;
                }
            } else if (kind == OrcaEvents.K_OBJECT_WAIT) {
                inlineWait(subject);
            }
            reported();
            callEnter(kind, subject, site);
        } catch (Throwable t) {
        }
    }

    /**
     * notifies=counted: the agent's table of waiters (agent/src/recorder/waiters.rs: a long
     * per slot, indexed by an object's hash and waiterMask; a slot with a bit of waiterBusy
     * set may have a thread waiting on one of its objects), or 0: every notify is reported to
     * the agent. Set by every recording.
     */
    static long waiterSlots;
    static int waiterMask;
    static long waiterBusy;

    /**
     * An inline call about to be reported to the agent: its callExit is to be reported too,
     * even if a counted notify's callExit was lost (a StackOverflowError as it was called)
     * and left Rec.exitSkipped set. (A ThreadLocal lookup, beside the JNI call it precedes.)
     */
    private static void reported() {
        if (waiterSlots != 0) {
            Rec r = current();
            if (r != null) {
                r.exitSkipped = false;
            }
        }
    }

    /**
     * A notify (notifyAll) at `site` on a monitor the thread holds as far as the tracker
     * knows (so the call cannot throw) that finds no thread waiting on it in the agent's
     * table: counted in the thread's buffer, with no call into the agent, at the call or at
     * its callExit. Why: the two calls cost 180 ns inside the program's critical section;
     * Derby notifies on every release of its page latches, whose holds last 140 ns. The table
     * is read under the monitor, and a waiter enters it under the monitor too, before its
     * wait lets the monitor go: a waiter on this object is always seen. Another object's
     * waiter in the same slot sends the call to the agent, which decides as before.
     */
    @DontInline
    private static boolean notifiedNobody(Object o, int kind, int site) {
        Rec r = current();
        if (r == null || site <= 0) {
            return false;
        }
        int i = r.find(o);
        if (i < 0) {
            return false;
        }
        int h = r.heldHash(i);
        if (h == 0) {
            // held unidentified (tracking=sampled): the table of waiters is by hash
            h = r.hashLocked(o);
        }
        if (!r.nobodyWaits(h)) {
            return false;
        }
        r.notified(site, h, kind == OrcaEvents.K_OBJECT_NOTIFY_ALL);
        r.exitSkipped = true;
        return true;
    }

    /** An inline Object.wait begins: its hold's pause is timed from here. Out of line. */
    @DontInline
    private static void inlineWait(Object subject) {
        Rec r = rec();
        if (r != null) {
            r.inlineWaitObj = subject;
            r.inlineWaitSince = System.nanoTime();
        }
    }

    @Hidden
    public static void callExit() {
        try {
            Rec r = current();
            if (r != null && r.exitSkipped) {
                // a notify counted by the tracker: the agent saw no call to end
                r.exitSkipped = false;
                return;
            }
            if (r != null && r.inlineWaitObj != null) {
                Object o = r.inlineWaitObj;
                r.inlineWaitObj = null;
                paused(o, System.nanoTime() - r.inlineWaitSince);
            }
            callExit0();
        } catch (Throwable t) {
        }
    }

    /**
     * Object.wait releases the monitor: its hold pauses (as `orca report` counts it), for the
     * long-hold threshold. (Summaries subtract the pause the agent measured between the wait's
     * own events, so that they add up to the complete trace's figures exactly.)
     */
    private static void paused(Object o, long nanos) {
        Rec r = current();
        if (r != null) {
            for (int i = r.depth - 1; i >= 0; i--) {
                if (r.heldObj[i] == o) {
                    r.held[Rec.HW * i + 2] += nanos;
                }
            }
        }
    }

    // ---- java.lang.Object (any call-site owner: these methods are final) ----

    @Hidden
    public static void objectWait(Object o) throws InterruptedException {
        report(OrcaEvents.K_OBJECT_WAIT, o);
        long since = System.nanoTime();
        try {
            o.wait();
        } finally {
            paused(o, System.nanoTime() - since);
            report(OrcaEvents.K_OBJECT_WAITED, o);
        }
    }

    @Hidden
    public static void objectWait(Object o, long millis) throws InterruptedException {
        report(OrcaEvents.K_OBJECT_WAIT, o);
        long since = System.nanoTime();
        try {
            o.wait(millis);
        } finally {
            paused(o, System.nanoTime() - since);
            report(OrcaEvents.K_OBJECT_WAITED, o);
        }
    }

    @Hidden
    public static void objectWait(Object o, long millis, int nanos) throws InterruptedException {
        report(OrcaEvents.K_OBJECT_WAIT, o);
        long since = System.nanoTime();
        try {
            o.wait(millis, nanos);
        } finally {
            paused(o, System.nanoTime() - since);
            report(OrcaEvents.K_OBJECT_WAITED, o);
        }
    }

    @Hidden
    public static void objectNotify(Object o) {
        report(OrcaEvents.K_OBJECT_NOTIFY, o);
        o.notify();
    }

    @Hidden
    public static void objectNotifyAll(Object o) {
        report(OrcaEvents.K_OBJECT_NOTIFY_ALL, o);
        o.notifyAll();
    }

    // ---- java.lang.Thread (call sites naming java/lang/Thread) ----

    @Hidden
    public static void threadStart(Thread t) {
        report(OrcaEvents.K_THREAD_START, t);
        t.start();
    }

    @Hidden
    public static void threadJoin(Thread t) throws InterruptedException {
        report(OrcaEvents.K_THREAD_JOIN, t);
        try {
            t.join();
        } finally {
            report(OrcaEvents.K_THREAD_JOINED, t);
        }
    }

    @Hidden
    public static void threadJoin(Thread t, long millis) throws InterruptedException {
        report(OrcaEvents.K_THREAD_JOIN, t);
        try {
            t.join(millis);
        } finally {
            report(OrcaEvents.K_THREAD_JOINED, t);
        }
    }

    @Hidden
    public static void threadJoin(Thread t, long millis, int nanos) throws InterruptedException {
        report(OrcaEvents.K_THREAD_JOIN, t);
        try {
            t.join(millis, nanos);
        } finally {
            report(OrcaEvents.K_THREAD_JOINED, t);
        }
    }

    @Hidden
    public static void threadSleep(long millis) throws InterruptedException {
        report(OrcaEvents.K_THREAD_SLEEP, null);
        try {
            Thread.sleep(millis);
        } finally {
            report(OrcaEvents.K_THREAD_SLEPT, null);
        }
    }

    @Hidden
    public static void threadSleep(long millis, int nanos) throws InterruptedException {
        report(OrcaEvents.K_THREAD_SLEEP, null);
        try {
            Thread.sleep(millis, nanos);
        } finally {
            report(OrcaEvents.K_THREAD_SLEPT, null);
        }
    }

    // ---- call sites naming another class (maybe a Thread subclass): the
    // original call stays in place; these only report, and only when the
    // receiver really is a Thread. ----

    @Hidden
    public static void threadStarting(Object t) {
        if (t instanceof Thread) {
            report(OrcaEvents.K_THREAD_START, t);
        }
    }

    @Hidden
    public static void threadJoining(Object t) {
        if (t instanceof Thread) {
            report(OrcaEvents.K_THREAD_JOIN, t);
        }
    }

    /** Reported after a normal return only (see rewriter/README.md). */
    @Hidden
    public static void threadJoined(Object t) {
        if (t instanceof Thread) {
            report(OrcaEvents.K_THREAD_JOINED, t);
        }
    }

    // ---- java.util.concurrent.Semaphore (call sites naming Semaphore) ----

    @Hidden
    public static void semaphoreAcquire(Semaphore s) throws InterruptedException {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquire();
            ok = true;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static void semaphoreAcquire(Semaphore s, int permits) throws InterruptedException {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquire(permits);
            ok = true;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static void semaphoreAcquireUninterruptibly(Semaphore s) {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquireUninterruptibly();
            ok = true;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static void semaphoreAcquireUninterruptibly(Semaphore s, int permits) {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquireUninterruptibly(permits);
            ok = true;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static boolean semaphoreTryAcquire(Semaphore s) {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire();
            return ok;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static boolean semaphoreTryAcquire(Semaphore s, int permits) {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(permits);
            return ok;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static boolean semaphoreTryAcquire(Semaphore s, long timeout, TimeUnit unit) throws InterruptedException {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(timeout, unit);
            return ok;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static boolean semaphoreTryAcquire(Semaphore s, int permits, long timeout, TimeUnit unit)
            throws InterruptedException {
        report(OrcaEvents.K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(permits, timeout, unit);
            return ok;
        } finally {
            report(ok ? OrcaEvents.K_SEMAPHORE_ACQUIRED : OrcaEvents.K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    @Hidden
    public static void semaphoreRelease(Semaphore s) {
        report(OrcaEvents.K_SEMAPHORE_RELEASE, s);
        s.release();
    }

    @Hidden
    public static void semaphoreRelease(Semaphore s, int permits) {
        report(OrcaEvents.K_SEMAPHORE_RELEASE, s);
        s.release(permits);
    }

    /**
     * One thread's buffer and held monitors. Only its own thread writes it; the agent reads
     * it on that thread (flush) and, at JVM exit, from the exiting thread.
     */
    static final class Rec {
        /**
         * Records of 3 longs: site << 32 | hash; nanos << KIND_BITS | kind; a third word whose meaning
         * depends on the kind (agent/src/events.rs, RecordKind).
         */
        long[] buf = new long[3 * 32];
        /** The recording it belongs to (OrcaProfilerTracker.session when made). */
        int session;
        /** Its thread (final: read by other threads in BY_THREAD). */
        final Thread thread;

        Rec(Thread thread) {
            this.thread = thread;
        }

        /** BY_THREAD's size (a power of two). */
        static final int SLOTS = 256;

        /** The offset of Thread's field `name` (JDK 17 and 25 have tid), or -1. */
        static long offset(String name) {
            try {
                return U != null ? U.objectFieldOffset(Thread.class, name) : -1;
            } catch (Throwable t) {
                return -1;
            }
        }
        /**
         * Longs of buf in use. The owner publishes it with a release store (setPos) after the
         * records below it: the agent's exit drain reads it from another thread, and must see
         * those records complete.
         */
        int pos;
        /** null where java.base's Unsafe is out of reach (a test's copy on the class path). */
        static final jdk.internal.misc.Unsafe U;
        private static final long POS;

        static {
            jdk.internal.misc.Unsafe u = null;
            long at = -1;
            try {
                u = jdk.internal.misc.Unsafe.getUnsafe();
                at = u.objectFieldOffset(Rec.class, "pos");
            } catch (Throwable t) {
                u = null;
            }
            U = u;
            POS = at;
        }

        /**
         * The threads' Recs by the low bits of their thread ID (Thread.tid, read with Unsafe: a
         * subclass may override getId), each slot the Rec of the first thread of this recording
         * that took it while it was free (empty, of an earlier recording, or of a thread that
         * ended). Why: every report looks up its thread's Rec, a monitor hold twice and a j.u.c.
         * lock/unlock pair five times, and ThreadLocal.get was 2 ns each (JDK 17), this 1 (a
         * thread ID, a slot, a compare). A thread whose slot another holds uses REC (recSlow).
         * Keeps at most SLOTS Recs of ended threads (and their buffers) reachable until another
         * thread takes their slot. A thread whose ThreadLocals were erased (the JDK's
         * InnocuousThread) keeps its Rec here; when another holds its slot, REC has lost it,
         * and newRec asks the agent for it. Here, not in the tracker: its static initializer
         * runs before Rec is defined when the agent attaches.
         */
        static final Rec[] BY_THREAD = new Rec[SLOTS];
        /** Thread.tid's offset, or -1 (Unsafe or the field out of reach: REC alone). */
        static final long TID = offset("tid");

        // ---- sampled hold timing (holdtiming=sampled): which holds read System.nanoTime ----
        //
        // A thread's holds are timed at random, about one in `stride`, with `stride` set per
        // window of WINDOW ns (coarse clock) so that a thread times at most about BUDGET holds
        // per window, 50,000 a second: at two clock reads of 20-50 ns each, under 0.5% of one
        // CPU, at any lock rate. A thread holding fewer than that has every hold timed (the
        // summaries are then exact: small programs, the tests). The choice is made at the
        // hold's start, before its length is known, so the timed holds are an unbiased sample.

        static final long WINDOW = 10_000_000L;
        static final int BUDGET = 500;
        static final int MAX_STRIDE = 1 << 20;
        /** This window's budget of timed holds: BUDGET scaled (see scaled). */
        int timeBudget = BUDGET;

        // ---- the budgets' scale: the thread's share of a core ----
        //
        // BUDGET and TRACK_BUDGET are what a thread that runs all the time may spend, about
        // 1% of its core. A server's request threads each run a few percent of the time (a
        // Jetty under load: 16 threads on 1.2 cores) and take a few hundred holds per window
        // each, so a budget per window of wall time timed and identified nearly all of them,
        // about a tenth of their CPU. Scaled by the share of a core the thread used in its
        // last window, the budgets stay about 1% of the thread's own CPU; MIN_BUDGET keeps a
        // thread that locks a little exact whatever its share. A thread's first GRACE ns of
        // locking keep the whole budget: a small program's threads (a demo's, the tests') mostly
        // wait, and would otherwise get estimates where they got exact figures, while for a
        // server's threads, which live for hours, half a second is nothing.

        static final int MIN_BUDGET = 32;
        static final long GRACE = 500_000_000L;
        /** A thread's first GRACE_HOLDS holds keep the whole budget too, however long they
         * take: GRACE is wall time, and on a loaded machine a starved demo's threads spent it
         * on their first few dozen holds, at a share of a core that scaled the budget to the
         * minimum, so that examples/PingPong.java's 400 holds read "held at least 390 times,
         * total ~1.416 s" (two busy loops beside it). */
        static final int GRACE_HOLDS = 5_000;
        /** The coarse clock at the thread's first measure (0: none yet). */
        long shareSince;
        /** Share of a core, in 1/SHARE_ONE, the thread used from shareStart to its last
         * window's end; SHARE_ONE until known. */
        static final int SHARE_ONE = 1024;
        int share = SHARE_ONE;
        /** The coarse clock and the thread's CPU time (-1: not read yet) when share was set. */
        long shareStart;
        long shareCpu = -1;

        /**
         * `budget` scaled by the thread's share of a core, measured at most once per WINDOW
         * (both windows' ends come here; the first to come after a WINDOW measures), over the
         * time since the last measure. A measure over more than a second (the thread was idle
         * or did not lock) or that makes no sense (no native, or CPU time that went back: a
         * virtual thread now on another carrier, whose clock is the carrier's) counts as a
         * whole core, as before the thread's first: the budget is then the whole. A virtual
         * thread that moved to a carrier whose clock is ahead gets a share that is the two
         * carriers' difference: a budget between the minimum and the whole, its sample as
         * unbiased as any, only its size off.
         */
        @DontInline
        int scaled(int budget, long c) {
            long wall = c - shareStart;
            if (wall >= WINDOW || wall < 0) {
                long cpu = -1;
                try {
                    cpu = threadCpu();
                } catch (Throwable e) {
                }
                long used = cpu - shareCpu;
                share = shareCpu < 0 || cpu < 0 || used < 0 || wall <= 0 || wall > 1_000_000_000L
                        ? SHARE_ONE
                        : (int) Math.min(SHARE_ONE, used * SHARE_ONE / wall);
                shareStart = c;
                shareCpu = cpu;
                if (shareSince == 0) {
                    shareSince = c;
                }
            }
            if (c - shareSince < GRACE && c >= shareSince || pushes >= 0 && pushes < GRACE_HOLDS) {
                return budget;
            }
            return Math.max(MIN_BUDGET, (int) ((long) budget * share / SHARE_ONE));
        }
        /** Holds until the next timed one (this one included). */
        int skip;
        int stride = 1;
        long winStart;
        /** Holds planned in the window so far (the skips drawn), and timed holds. */
        int winHolds;
        int winTimed;
        int seed = System.identityHashCode(this) | 1;

        /** Tells the ticker the coarse clock at `addr` is used, `mark` 1 by a window's start,
         * 2 by a hold that found it STALE: a store only when the word is below the mark (the
         * ticker clears it at most once a tick), so threads do not pass its line. True when it
         * stored: a 2 stored wakes the ticker (a 1 may have been stored after the ticker last
         * looked, before it parked). */
        private static boolean used(long addr, long mark) {
            if (U.getLongOpaque(null, addr + USED) < mark) {
                U.putLongOpaque(null, addr + USED, mark);
                return true;
            }
            return false;
        }

        /** The coarse clock at `addr` (see coarseClock); a plain load the JIT keeps in place. */
        long coarse(long addr) {
            jdk.internal.misc.Unsafe u = U;
            return u != null ? u.getLongOpaque(null, addr) : System.nanoTime();
        }

        /**
         * A hold not timed whose coarse start was `c0` ended at `t` (System.nanoTime): the
         * time of the tick after c0's (its number is c0's low bits), by which the hold had
         * surely begun, so that its length from there is never an overstatement, even when
         * the ticker ran late. A hold of more than TICKS ticks finds that tick overwritten (a
         * later round's, TICKS ticks or more after c0): its length is then taken from c0.
         * Out of line: only holds that may be long come here.
         */
        @DontInline
        long startedBy(long addr, long c0, long t) {
            int next = (int) (c0 + 1) & (TICKS - 1);
            long v = U.getLongOpaque(null, addr + 8L + 8L * next);
            return v > c0 && v - c0 < TICKS * TICK && v <= t ? v : c0;
        }

        /**
         * tracking=sampled: the monitor about to be held is left unidentified. Nested, when
         * the outermost entry was left so; outermost, unless it is its turn in a plan like
         * sampled timing's (Rec.timed): one outermost hold in `trackStride` at random is
         * identified, with everything nested in it, the stride set per window from the holds
         * the thread took in the last (all of them, nested too: `pushes`), so that it
         * identifies about TRACK_BUDGET holds per window, and every one while it takes fewer
         * (small programs and the tests stay exact). Why the holds and not the outermost ones:
         * Derby nests a statement's hundreds of holds in one (its connection's monitor).
         */
        boolean untracked() {
            int d = depth;
            if (d != 0) {
                return (int) held[0] == 0;
            }
            long addr = coarseClock;
            if (addr == 0 || U == null) {
                return false;
            }
            long c = U.getLongOpaque(null, addr);
            if (c == STALE) {
                // The ticker is idle: identified, as such a hold is timed (Rec.timed), and the
                // plan and the share's measure are left alone. A window started at STALE (later
                // than any time) made every later clock reading look earlier than the thread's
                // first measure, and the thread lost its GRACE: examples/PingPong.java's ping
                // had 30 of its 100 holds left unidentified, and its figures estimated.
                return false;
            }
            if (--trackSkip > 0 && c - trackStart < WINDOW && c >= trackStart) {
                return true;
            }
            trackTurn(c);
            return false;
        }

        /** untracked found it the turn of an outermost hold to be identified: the next draw
         * (and at a window's end, the next stride), out of line. */
        @DontInline
        private void trackTurn(long c) {
            if (c - trackStart >= WINDOW || c < trackStart) {
                int holds = pushes - trackPushes;
                int budget = scaled(TRACK_BUDGET, c);
                trackStride = holds <= budget ? 1 : Math.min(holds / budget + 1, MAX_STRIDE);
                trackStart = c;
                trackPushes = pushes;
            }
            trackSkip = draw(trackStride);
        }

        /** Holds until the next one drawn, 1 to 2 * stride - 1 (mean `stride`), from the
         * thread's xorshift. */
        private int draw(int stride) {
            if (stride <= 1) {
                return 1;
            }
            int x = seed;
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            seed = x;
            return 1 + (int) ((x & 0xFFFFFFFFL) % (2L * stride - 1));
        }

        /** Holds identified per WINDOW per thread, about (tracking=sampled), as sampled
         * timing's BUDGET. */
        static final int TRACK_BUDGET = 500;
        /** Outermost holds until the next identified one (this one included), the plan's
         * stride and window start, and `pushes` then (see untracked). */
        int trackSkip;
        int trackStride = 1;
        long trackStart;
        int trackPushes;
        /** Held entries pushed by this thread so far (wraps): its rate of holds, and its
         * GRACE_HOLDS. */
        int pushes;

        /**
         * Holds left unidentified (tracking=sampled) that ended without a wait or a precise
         * end, counted per site (a j.u.c. lock's with its mode's bits): QUIET pairs of (site,
         * count), the site's slot found by its hash and up to QUIET_PROBES probes. Read and
         * emptied by the agent at each drain of this thread (agent/src/recorder/buffers.rs,
         * fold_quiet). Why: a record per hold was most of what such a hold still cost Derby
         * (the agent's drain: Summary::row, records, untimed_hold), as consecutive holds at
         * one site, which share a record, are rare in a program that nests.
         */
        int[] quiet;
        static final int QUIET_BITS = 8;
        static final int QUIET = 1 << QUIET_BITS;
        static final int QUIET_PROBES = 4;
        /** A count the table takes at most: the agent drains it long before. */
        static final int QUIET_MAX = 1 << 30;

        /** Counts an unidentified hold at `site` in `quiet`; false when its slots are taken. */
        boolean quietCount(int site) {
            int[] q = quiet;
            if (q == null) {
                q = quiet = new int[2 * QUIET];
            }
            int k = ((site * 0x9E3779B1) >>> (32 - QUIET_BITS)) << 1;
            for (int p = 0; p < QUIET_PROBES; p++) {
                int s = q[k];
                if (s == site) {
                    int c = q[k + 1];
                    if (c >= QUIET_MAX) {
                        return false;
                    }
                    q[k + 1] = c + 1;
                    return true;
                }
                if (s == 0) {
                    q[k] = site;
                    q[k + 1] = 1;
                    return true;
                }
                k = (k + 2) & (2 * QUIET - 1);
            }
            return false;
        }

        /** The start of a hold left unidentified: the coarse clock inverted (never timed). */
        long quietBegin(long addr) {
            return ~coarse(addr);
        }

        /**
         * The start of an outermost hold: System.nanoTime() for a hold that is timed, or the
         * coarse clock's value inverted (negative) for one that is only counted.
         */
        long begin(long addr) {
            if (U == null) {
                return System.nanoTime();
            }
            long c = U.getLongOpaque(null, addr);
            if (--skip > 0 && c - winStart < WINDOW) {
                return ~c;
            }
            return timed(addr, c);
        }

        /**
         * A timed hold (its turn came, a window ended, or the clock is STALE): the next draw.
         * Out of line. A window's start and a STALE clock tell the ticker the clock is used
         * (clock.rs, Coarse.used): a thread that locks all the time starts a window at least
         * every other WINDOW, and the first hold after an idle time sets the ticker ticking.
         */
        @DontInline
        private long timed(long addr, long c) {
            if (c == STALE) {
                // The ticker does not tick: this hold is timed (the sample's plan goes on),
                // and the first to find it so wakes the ticker.
                if (used(addr, 2L)) {
                    try {
                        wakeClock();
                    } catch (Throwable e) {
                    }
                }
                return System.nanoTime();
            }
            if (c - winStart >= WINDOW || c < winStart) {
                used(addr, 1L);
                // The past window's rate sets the stride of the next.
                int holds = winHolds - Math.max(skip, 0);
                int budget = timeBudget = scaled(BUDGET, c);
                stride = holds <= budget ? 1 : Math.min(holds / budget + 1, MAX_STRIDE);
                winStart = c;
                winHolds = 0;
                winTimed = 0;
            } else if (++winTimed > timeBudget && stride < MAX_STRIDE) {
                // The rate rose within the window: the budget holds (a few more at most).
                stride *= 2;
            }
            int n = draw(stride);
            skip = n;
            winHolds += n;
            return System.nanoTime();
        }

        private void setPos(int p) {
            if (U != null) {
                U.putIntRelease(this, POS, p);
            } else {
                pos = p;
            }
        }
        /** Monitors held, innermost last. */
        Object[] heldObj = new Object[8];
        /**
         * Their entries, HW longs each: site << 32 | hash (negative for a reentrant entry, its
         * site marked INNER), the hold's start (Rec.begin), and the time it spent in
         * Object.wait (for the long-hold threshold). Read by the agent (`holds` in
         * agent/src/recorder/buffers.rs). Why one array: an entry was spread over five (this
         * and heldObj's), five cache lines a release read, and Derby's working set evicts
         * them between a thread's holds (its tracker cost ~100 ns per hold against ~9 in a
         * loop); now the innermost entries share a line or two.
         */
        long[] held = new long[HW * 8];
        static final int HW = OrcaEvents.HELD_WORDS;
        int depth;
        /** The inline call under way is a notify the tracker counted (notifiedNobody). */
        boolean exitSkipped;
        /** An inline Object.wait under way: its monitor and start. */
        Object inlineWaitObj;
        long inlineWaitSince;
        /** Hooked JDK methods under way; the outermost Object.wait's monitor and start. */
        int hookDepth;
        Object waitObj;
        long waitSince;
        /** Bit d: the hooked call at depth d told the agent nothing (so its exit does not). */
        long quietBits;
        /** The outermost Condition.await under way: its start (0: none). */
        long awaitSince;
        /** The site the next lock call was given (lockSite), and its lock. */
        Object hintObj;
        int hintSite;
        /** The outermost lock call under way, kept in Java (the agent not told). */
        boolean inLock;
        /** The synchronizer of the outermost hooked call when it is a lock call, else null. */
        Object lockOuter;
        int lockReport;
        Object lockSync;
        int lockHash;
        int lockSite;
        boolean lockRead;
        boolean lockInner;
        boolean lockContended;
        long lockT0;
        /** The agent was told of the outermost lock call (lockEnter, lockBlocked) and not yet
         * of its end: the outcome and time it is owed (lockDone; 0: no time yet). */
        boolean lockTold;
        int lockOwed;
        long lockOwedT;
        /**
         * The object this thread hashed last and its identity hash. A lock that has been
         * contended stays inflated, and the JIT's inlined identityHashCode reads the hash
         * only from an unlocked object's header: for an inflated (or held) one every call
         * goes into the VM (JVM_IHashCode, a thread-state transition), which was 29% of a
         * two-thread contended counter's time. A thread mostly locks the same objects again,
         * so one compare saves it. This keeps the last object a thread locked reachable until
         * it locks another or ends (after a detach, until it ends, as its Rec): one object per
         * thread.
         */
        Object hashedObj;
        int hashedHash;

        /**
         * The RECENT objects this thread hashed before the last, and their hashes (a ring,
         * recentPos its oldest). A `synchronized` method's monitor is hashed after the JVM
         * locked it (hashLocked), always a call into the VM on JDK 22 and earlier (the JIT's
         * hash reads only an unlocked header): Derby (JDK 17) locks a few objects in turn, so
         * the last one alone missed for 4 of 5 such hashes (0.4 M hits against 1.8 M misses in
         * 4 s), and 16 more found 3 of 4 of those (1.4 M; 0.5 M left to the VM).
         * Only those look here: for an object not locked the JIT's hash is as cheap as the
         * look (searching the ring at every hash cost more than it saved in a Derby profile).
         * A `synchronized` method called on 3 objects in turn, thread CPU per call (JDK 17,
         * loaded machine): 46.3 ns -> 33.1; on 12: 46.9 -> 37.6; on 40, a miss every time:
         * 50.0 -> 52.6. Keeps RECENT more objects per thread reachable, until it hashes others
         * or ends.
         */
        final Object[] recentObj = new Object[RECENT];
        final int[] recentHash = new int[RECENT];
        int recentPos;
        static final int RECENT = 16;

        /** The identity hash of `o`, from the one-entry cache when `o` was hashed last. */
        int hash(Object o) {
            if (o == hashedObj) {
                return hashedHash;
            }
            int h = System.identityHashCode(o);
            remember(o, h);
            return h;
        }

        /** hash() of a monitor this thread has just locked: the ring is looked at first. */
        int hashLocked(Object o) {
            if (o == hashedObj) {
                return hashedHash;
            }
            return hashRecent(o);
        }

        /** The last object hashed; the one before it goes to the ring. */
        private void remember(Object o, int h) {
            Object last = hashedObj;
            if (last != null) {
                int p = recentPos;
                recentObj[p] = last;
                recentHash[p] = hashedHash;
                recentPos = (p + 1) & (RECENT - 1);
            }
            hashedObj = o;
            hashedHash = h;
        }

        /** hashLocked() when `o` was not hashed last: from the ring, else the VM's. */
        @DontInline
        private int hashRecent(Object o) {
            Object[] ro = recentObj;
            for (int k = 0; k < RECENT; k++) {
                if (ro[k] == o) {
                    // the two swap: the ring keeps what the last held
                    int h = recentHash[k];
                    ro[k] = hashedObj;
                    recentHash[k] = hashedHash;
                    hashedObj = o;
                    hashedHash = h;
                    return h;
                }
            }
            int h = System.identityHashCode(o);
            remember(o, h);
            return h;
        }

        /**
         * The monitorenter under way (between monitorEnter and monitorEntered): its monitor,
         * hash, (trace=all) stack, and whether it is reentrant (set only when a monitor is
         * held). The monitor stays reachable until the thread's next block, as hashedObj.
         */
        Object pendingObj;
        int pendingHash;
        int pendingStack;
        boolean pendingInner;
        /** trace=all: the pending block's section writes nothing (enterRare found no room). */
        boolean pendingUnwritten;
        /**
         * The thread's last OrcaEvents.RELEASED monitor holds (hash, start, end), a ring read
         * by the agent when another thread blocks on a monitor nobody holds any more: its owner
         * was the thread that released it just then, known without asking the JVM (a
         * safepoint).
         */
        final int[] relHash = new int[OrcaEvents.RELEASED];
        final long[] relStart = new long[OrcaEvents.RELEASED];
        final long[] relEnd = new long[OrcaEvents.RELEASED];
        int relPos;

        /**
         * Identity hashes this thread had the agent name, by their low bits. A summary line
         * names monitors and locks by hash only, so their classes are written as they are
         * first locked; the common case (a lock this thread named already) costs one array
         * read per acquisition, a collision one call into the agent (which finds it named).
         * It starts small (a virtual thread that locks a few objects pays 512 bytes) and grows
         * eightfold, once, for a thread that keeps missing: a Jetty request thread takes the
         * monitors and locks of every connection in turn, more than 128, and each miss was a
         * JNI call (names::name: a probe of the agent's table and an IsSameObject), about
         * 1% of a request's CPU.
         */
        int[] named = new int[NAMED];
        /** Misses since `named` was made; it grows when they reach NAMED_GROW times its size. */
        int namedMisses;
        static final int NAMED = 128;
        static final int NAMED_MAX = 1024;
        static final int NAMED_GROW = 4;

        void name(Object o, int hash) {
            int[] n = named;
            int k = hash & (n.length - 1);
            if (n[k] != hash) {
                n[k] = hash;
                nameNew(this, o, hash);
            }
        }

        /** Never throws: a name lost (a StackOverflowError here) must not lose the hold. */
        @DontInline
        private static void nameNew(Rec r, Object o, int hash) {
            try {
                int[] n = r.named;
                if (n.length < NAMED_MAX && ++r.namedMisses >= NAMED_GROW * n.length) {
                    // (the hashes it had are asked about again as they come: the agent finds
                    // them named, as it does for any miss)
                    r.namedMisses = 0;
                    n = new int[NAMED_MAX];
                    n[hash & (NAMED_MAX - 1)] = hash;
                    r.named = n;
                }
                if (!namesFull && !OrcaProfilerTracker.name(o, hash)) {
                    namesFull = true;
                }
            } catch (Throwable t) {
            }
        }

        void released(int hash, long start, long end) {
            int k = relPos++ & (OrcaEvents.RELEASED - 1);
            relHash[k] = hash;
            relStart[k] = start;
            relEnd[k] = end;
        }

        /** Appends a record; where it is (for the counted records that later ones of the
         * same key add to), or -1 when there is no room. */
        int put(int kind, int site, int hash, long nanos, long third) {
            int p = room(1);
            if (p < 0) {
                return -1;
            }
            long[] b = buf; // room() may have flushed, and the agent may have given a bigger one
            b[p] = ((long) site << 32) | (hash & 0xFFFFFFFFL);
            b[p + 1] = (nanos << OrcaEvents.KIND_BITS) | kind;
            b[p + 2] = third;
            setPos(p + 3);
            return p;
        }

        /**
         * A hold not timed, of monitor `hash` taken at `site` (`kind` R_HOLD; R_LOCK_HOLD for
         * a j.u.c. lock's, `site` with its mode's bits), that did not wait, ended at coarse
         * time `t`: counted in the last record when that is one of the same kind, site,
         * monitor and end (third word: minus the holds it stands for). True when it was. Why:
         * a thread that takes one lock in a loop made one record per hold, and the agent's
         * work per record was most of such a hold's cost; at a high rate a record now stands
         * for the holds of a tick (1 ms), and at a low rate nothing changes (no two holds end
         * in the same tick). The record is already published: the agent drains it on this
         * thread, except at the JVM's exit, whose drain may miss a hold ended meanwhile, as it
         * may miss a record put meanwhile.
         */
        boolean counted(int kind, int site, int hash, long t) {
            int p = pos;
            if (p == 0) {
                return false;
            }
            long[] b = buf;
            long n = b[p - 1];
            if (n >= 0 || n == Long.MIN_VALUE || b[p - 2] != ((t << OrcaEvents.KIND_BITS) | kind)
                    || b[p - 3] != (((long) site << 32) | (hash & 0xFFFFFFFFL))) {
                return false;
            }
            b[p - 1] = n - 1;
            return true;
        }

        /** Whether no thread waits on an object hashed `hash` (notifiedNobody). */
        boolean nobodyWaits(int hash) {
            long addr = waiterSlots;
            return U != null && addr != 0
                    && (U.getLongOpaque(null, addr + 8L * (hash & waiterMask)) & waiterBusy) == 0;
        }

        /**
         * An R_NOTIFIED record: a notify (`all`: notifyAll) at `site` on the monitor hashed
         * `hash` that woke nobody. Consecutive ones of one site, monitor and call share one
         * record (its third word counts them twice over, plus 1 for notifyAll: never below 2,
         * unlike the held entries after an R_ORDER, which are also 0 in their second word).
         */
        void notified(int site, int hash, boolean all) {
            long w0 = ((long) site << 32) | (hash & 0xFFFFFFFFL);
            long one = all ? 3 : 2;
            long[] b = buf;
            // The thread's last R_NOTIFIED record, if still in the buffer (not drained: the
            // agent drains on this thread only, and sets pos back to 0): a notify inside a
            // synchronized block has the block's hold record after it. A record found there
            // after a drain is another unread one, to count in only if it is of this key.
            int q = lastNotified;
            if (q + 3 <= pos && b[q] == w0 && b[q + 1] == OrcaEvents.R_NOTIFIED && b[q + 2] >= 2
                    && (b[q + 2] & 1) == (one & 1)) {
                b[q + 2] += 2;
                return;
            }
            int p = put(OrcaEvents.R_NOTIFIED, site, hash, 0, one);
            if (p >= 0) {
                lastNotified = p;
            }
        }

        /** Where notified() put its last record (see there). */
        int lastNotified;

        /**
         * An R_RELEASED record: a Semaphore.release at `site` while nobody was queued on the
         * semaphore. Consecutive ones of one site share one record (its third word counts them),
         * as notified()'s do.
         */
        void released(int site) {
            long w0 = (long) site << 32;
            long[] b = buf;
            int q = lastReleased;
            if (q + 3 <= pos && b[q] == w0 && b[q + 1] == OrcaEvents.R_RELEASED && b[q + 2] >= 1) {
                b[q + 2]++;
                return;
            }
            int p = put(OrcaEvents.R_RELEASED, site, 0, 0, 1);
            if (p >= 0) {
                lastReleased = p;
            }
        }

        /** Where released() put its last record. */
        int lastReleased;

        /** A hooked Semaphore call under way that the tracker keeps to itself (semStart). */
        boolean inSem;
        /** ... an acquisition of this semaphore (null: a release), at semSite, begun at
         * semSince (System.nanoTime); semWaiter: the agent was told of it (semEnter). */
        Object semObj;
        int semSite;
        long semSince;
        boolean semWaiter;

        /** Where `n` records fit in the buffer (flushed first if needed), or -1. */
        int room(int n) {
            int p = pos;
            if (p + 3 * n > buf.length) {
                flush(this);
                p = pos;
                if (p + 3 * n > buf.length) {
                    return -1; // the agent could not take them (natives not bound, or too many)
                }
            }
            return p;
        }

        /**
         * `o` (hashed `hash`) is about to be taken at `site` while others are held. True when
         * the thread holds it already (reentrant: no new hold, no lock order); otherwise an
         * R_ORDER record and the held monitors (outermost entries, outermost first), written
         * together so that a flush never splits them. Out of line: the tracker is inlined into
         * every synchronized block of the program, and nesting is the rarer case.
         */
        @DontInline
        boolean nested(Object o, int site, int hash) {
            return nested(o, site, hash, 0);
        }

        /**
         * The same for a j.u.c. lock (`flags`: its mode's S_* bits, 0 for a monitor): held
         * already in that mode, it is reentrant. The held entries written are each distinct
         * lock once (a lock held in both modes is one), the acquired one left out.
         */
        @DontInline
        boolean nested(Object o, int site, int hash, int flags) {
            if (flags == 0 ? find(o) >= 0 : findLock(o, flags) >= 0) {
                return true;
            }
            int d = depth;
            int n = 0;
            int e0 = -1, e1 = -1, e2 = -1;
            for (int i = 0; i < d; i++) {
                if (counts(i, o)) {
                    if (n == 0) {
                        e0 = i;
                    } else if (n == 1) {
                        e1 = i;
                    } else if (n == 2) {
                        e2 = i;
                    }
                    n++;
                }
            }
            if (n > 0 && n <= OrcaEvents.ORD_HELD) {
                if (ordKeys == null) {
                    ordKeys = new int[OrcaEvents.ORD_SLOTS * OrcaEvents.ORD_KEY];
                    ordMask = OrcaEvents.ORD_SLOTS - 1;
                } else if (orderCounted(n, e0, e1, e2, site, hash)) {
                    return false;
                }
            }
            int p = room(n + 1);
            if (p < 0) {
                return false;
            }
            long[] b = buf;
            b[p] = ((long) site << 32) | (hash & 0xFFFFFFFFL);
            b[p + 1] = OrcaEvents.R_ORDER;
            b[p + 2] = n;
            p += 3;
            for (int i = 0; i < d; i++) {
                int s = heldSite(i);
                if (counts(i, o)) {
                    b[p] = ((long) (s & OrcaEvents.S_MASK) << 32) | (heldHash(i) & 0xFFFFFFFFL);
                    b[p + 1] = 0;
                    b[p + 2] = 0;
                    p += 3;
                }
            }
            setPos(p);
            return false;
        }

        /**
         * Lock-order slots, published by the agent (agent/src/recorder/buffers.rs, OrderSlots),
         * null until this thread first nests under one monitor. Why: a nested acquisition was
         * a record of two (the acquisition and the monitor held) that the agent looked up in
         * its tables, and a program that takes a fresh monitor under a long-held one (Derby:
         * 425 per transaction) spent an eighth of its time there. The agent tells the tracker,
         * per pair of sites (held, acquired), which (held, acquired) monitor pairs have a row
         * of their own and whether the rows are full, which stays so until it writes the
         * thread's summaries (and clears the slots); the tracker then counts here a nested acquisition
         * under at most ORD_HELD monitors whose every occurrence goes to such a row or to a
         * row of other monitors.
         * Slot of (heldSite, site): orderSlot & ordMask (ORD_SLOTS slots at first; the agent
         * gives a thread whose pairs of sites collide a larger table). ordKeys: ORD_KEY ints per
         * slot, the agent's and the counts together, so that the common case (rows full, the
         * acquired monitor in none: a fresh one) reads five ints, packed with the other slots'
         * (ORD_HOT): heldSite, site, state (0 empty, 1 rows not full, 2 full), a filter (bit
         * `hash & 31` of each row's acquired monitor), the occurrences counted in the other
         * monitors' row; then, apart, those counted in each of the 4 rows, and each row's
         * held, acquired and (up to two) guard hashes (0: none). ORD_* in OrcaEvents; the agent's OrderSlots (agent/src/recorder/summary.rs)
         * reads and writes the same.
         */
        int[] ordKeys;
        int ordMask;
        /** Occurrences counted in the slots since the agent last added them (it sets 0). */
        int ordPending;

        /** The slot of a pair of sites, before the mask (the agent's `order_slot` computes the same). */
        static int orderSlot(int heldSite, int site) {
            return ((heldSite * 0x9E3779B1) ^ site) * 0x85EBCA6B >>> 20;
        }

        /**
         * Counts monitor `hash` taken at `site` while the held entries e0, e1, e2 (the first
         * n, in hold order) count as held, in their slots, when the slots tell where the
         * agent would count every one of its n lock-order occurrences; else (false) it is a
         * record. Rows are only ever added until the agent clears the slots, so a slot
         * published earlier is never wrong about a row it names or about rows being full.
         */
        private boolean orderCounted(int n, int e0, int e1, int e2, int site, int hash) {
            int[] keys = ordKeys;
            int c0, c1 = -1, c2 = -1;
            if (n == 1) {
                c0 = edge(keys, e0, -1, -1, site, hash);
            } else if (n == 2) {
                c0 = edge(keys, e0, e1, -1, site, hash);
                c1 = edge(keys, e1, e0, -1, site, hash);
                if (c1 < 0) {
                    return false;
                }
            } else {
                c0 = edge(keys, e0, e1, e2, site, hash);
                c1 = edge(keys, e1, e0, e2, site, hash);
                c2 = edge(keys, e2, e0, e1, site, hash);
                if (c1 < 0 || c2 < 0) {
                    return false;
                }
            }
            if (c0 < 0) {
                return false;
            }
            keys[c0]++;
            if (c1 >= 0) {
                keys[c1]++;
            }
            if (c2 >= 0) {
                keys[c2]++;
            }
            ordPending += n;
            if (ordPending >= OrcaEvents.ORD_FLUSH) {
                try {
                    flush(this);
                } catch (Throwable t) {
                    // counted all the same: the acquisition goes on (a StackOverflowError here
                    // must not leave the caller's pendingInner unset)
                }
                ordPending = 0; // (the agent's drain did, unless it took nothing)
            }
            return true;
        }

        /**
         * Where the occurrence of held entry i (with the guards held entries ga, gb: -1 for
         * none) counts: the index in ordKeys of its row's count, of the other monitors' count
         * when its slot's rows are full, or -1 (no slot, or it may take a row: the agent
         * decides).
         */
        private int edge(int[] keys, int i, int ga, int gb, int site, int hash) {
            int hs = heldSite(i) & OrcaEvents.S_MASK;
            int mask = ordMask;
            int k = orderSlot(hs, site) & mask;
            int b = k * ORD_HOT;
            int state = keys[b + 2];
            if (state == 0 || keys[b] != hs || keys[b + 1] != site) {
                return -1;
            }
            if ((keys[b + 3] & (1 << (hash & 31))) != 0) {
                int held = heldHash(i);
                int g1 = ga < 0 ? 0 : heldHash(ga);
                int g2 = gb < 0 ? 0 : heldHash(gb);
                int c = (mask + 1) * ORD_HOT + k * (OrcaEvents.ORD_KEY - ORD_HOT);
                for (int j = 0, r = c + 4; j < 4; j++, r += 4) {
                    if (keys[r] == held && keys[r + 1] == hash && keys[r + 2] == g1
                            && keys[r + 3] == g2) {
                        return c + j;
                    }
                }
            }
            return state == 2 ? b + 4 : -1;
        }

        /**
         * Ints per slot in ordKeys' first part (held site, site, state, filter, the other
         * monitors' count: all the common case reads, so that a thread's busy slots share
         * cache lines); the rest of slot k (each row's count, then the rows) is at
         * (ordMask + 1) * ORD_HOT + k * (ORD_KEY - ORD_HOT). The agent's `tracker_index`
         * (agent/src/recorder/summary.rs) computes the same.
         */
        static final int ORD_HOT = OrcaEvents.ORD_HOT;

        void quiet(int d, boolean on) {
            if (d < 64) {
                quietBits = on ? quietBits | (1L << d) : quietBits & ~(1L << d);
            }
        }

        boolean isQuiet(int d) {
            return d < 64 && (quietBits & (1L << d)) != 0;
        }

        /**
         * A Condition.await returned: the thread's j.u.c. holds paused. (Which lock's, the
         * tracker does not know: the agent subtracts only the awaits on the hold's own lock.
         * Both modes: await releases the synchronizer's whole state, a read hold taken under
         * the write lock included.)
         */
        void awaited(long nanos) {
            for (int i = 0; i < depth; i++) {
                if ((heldSite(i) & OrcaEvents.S_LOCK) != 0) {
                    held[HW * i + 2] += nanos;
                }
            }
        }

        /** The unlock under way ends a hold not timed that may be long: its end is precise. */
        boolean lockPrecise;

        /**
         * When an unlock of `sync` (in the mode of `flags`, else the other, as lockDone finds
         * it), called now, ends its hold (sampled timing): System.nanoTime for a timed hold,
         * the coarse clock for one only counted, unless the coarse clock says it may have
         * reached the threshold (holdNear; lockPrecise is then set); 0 for a release that
         * ends no hold (reentrant, or of nothing held). The monitors' rule (monitorExit), read
         * before the unlock runs so that a hold ends when unlock was called.
         */
        long unlockTime(Object sync, int flags) {
            lockPrecise = false;
            long addr = coarseClock;
            if (addr == 0) {
                return System.nanoTime();
            }
            int i = findLock(sync, flags);
            if (i < 0) {
                i = findLock(sync, flags ^ OrcaEvents.S_READ);
            }
            if (i < 0 || heldSite(i) < 0) {
                return 0;
            }
            long start = heldStart(i);
            if (start >= 0) {
                return System.nanoTime();
            }
            long t = coarse(addr);
            long near = holdNear;
            if (near >= 0 && t - ~start - heldPaused(i) >= near) {
                lockPrecise = true;
                return System.nanoTime();
            }
            return t;
        }

        /** How many times this thread holds j.u.c. lock `sync` in the mode of `flags` (each
         * reentrant acquisition has its entry). */
        int holds(Object sync, int flags) {
            int mask = OrcaEvents.S_LOCK | OrcaEvents.S_READ;
            int n = 0;
            for (int i = depth - 1; i >= 0; i--) {
                if (heldObj[i] == sync && (heldSite(i) & mask) == flags) {
                    n++;
                }
            }
            return n;
        }

        /** The innermost hold of j.u.c. lock `sync` in the mode of `flags`, or -1. */
        int findLock(Object sync, int flags) {
            int mask = OrcaEvents.S_LOCK | OrcaEvents.S_READ;
            for (int i = depth - 1; i >= 0; i--) {
                if (heldObj[i] == sync && (heldSite(i) & mask) == flags) {
                    return i;
                }
            }
            return -1;
        }

        /** Whether held entry i is a lock-order edge's held end when o is acquired: an
         * outermost hold, not of o, and the first of its lock. */
        private boolean counts(int i, Object o) {
            Object h = heldObj[i];
            if (heldSite(i) < 0 || h == o || sampleTracking && heldHash(i) == 0) {
                return false;
            }
            for (int k = 0; k < i; k++) {
                if (heldObj[k] == h && heldSite(k) >= 0) {
                    return false;
                }
            }
            return true;
        }

        int heldHash(int i) {
            return (int) held[HW * i];
        }

        int heldSite(int i) {
            return (int) (held[HW * i] >> 32);
        }

        long heldStart(int i) {
            return held[HW * i + 1];
        }

        long heldPaused(int i) {
            return held[HW * i + 2];
        }

        void push(Object o, int hash, int site, long start) {
            int d = depth;
            if (d == heldObj.length) {
                grow();
            }
            heldObj[d] = o;
            long[] e = held;
            int x = HW * d;
            e[x] = ((long) site << 32) | (hash & 0xFFFFFFFFL);
            e[x + 1] = start;
            e[x + 2] = 0;
            depth = d + 1;
            pushes++;
        }

        @DontInline
        private void grow() {
            int d = heldObj.length;
            heldObj = java.util.Arrays.copyOf(heldObj, d * 2);
            held = java.util.Arrays.copyOf(held, HW * d * 2);
        }

        /** The innermost entry of o, or -1. */
        int find(Object o) {
            for (int i = depth - 1; i >= 0; i--) {
                if (heldObj[i] == o) {
                    return i;
                }
            }
            return -1;
        }

        /** Removes entry i (the innermost, unless locking is hand over hand). */
        void remove(int i) {
            int d = depth - 1;
            if (i != d) {
                close(i, d);
            }
            heldObj[d] = null;
            depth = d;
        }

        /** Entries i+1..d move down one. */
        @DontInline
        private void close(int i, int d) {
            for (int k = i; k < d; k++) {
                heldObj[k] = heldObj[k + 1];
            }
            System.arraycopy(held, HW * (i + 1), held, HW * i, HW * (d - i));
        }
    }
}
