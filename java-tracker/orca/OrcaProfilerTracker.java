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
 * time). So are the numbers and layouts the two sides share: the coarse
 * clock's (CLOCK_*), the lock-order slots' hash (ORD_MUL_HELD, ORD_MUL,
 * ORD_SHIFT), the lock calls' numbers (L_*) and outcomes (O_*).
 *
 * FILES. This class keeps the entry points the rewritten code calls, the
 * natives and the settings the agent sets; each thread's state is an OrcaRec,
 * whose concerns are its superclasses, a file each (one object: see OrcaRec):
 *   OrcaRec         the per-thread record: its buffer and records, its reports
 *                   under way, where each thread finds its own;
 *   OrcaHeld        the held stack and the last releases;
 *   OrcaHashCache   the identity hashes and the names asked for;
 *   OrcaSampler     which holds are timed and identified, the coarse clock;
 *   OrcaOrderSlots  the lock-order slots the agent publishes;
 *   OrcaLockCalls   the j.u.c. calls under way, and the out-of-line parts of
 *                   the lock and Semaphore reports.
 * agent/build.rs compiles every file here and the agent defines every class,
 * each superclass first and this class last (agent/src/engines/tracker.rs).
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
    // monitors it holds here, and appends fixed-size records to a buffer of its own (OrcaRec.buf):
    // by default one per outermost hold (its site, monitor, start and end) and one per nested
    // acquisition (with the monitors held, for lock orders); with trace=all one per enter,
    // entered and exit. It crosses into the agent only when the buffer is full (and with
    // trace=all before an event the agent writes at once, so a thread's lines stay in order).
    // The agent turns the records into per-site hold summaries and lock-order edges, and, with
    // trace=all, into one event line each.

    /** Set by the agent at start-up (before any rewritten class loads); cleared at a detach. */
    static volatile boolean ready;
    /**
     * The recording under way, counted from 0 (set by the agent before `ready`). A OrcaRec of an
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
     * but only a sample reads System.nanoTime at both ends (OrcaSampler.begin); the others read this
     * clock, a plain load, so that a long one is still found. While the program takes no
     * locks the ticker stops and the clock reads STALE: a hold that begins then is timed, one
     * that ends then gets a precise end (holdNear), and the ticker ticks again (OrcaSampler.timed).
     */
    static long coarseClock;
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
     * j.u.c. lock) not in the thread's sample (OrcaSampler.untracked) is left unidentified, with every
     * hold nested in it: its held entry has hash 0, it is counted at its site in the row of
     * other monitors (OrcaSampler.quietCount), and it neither names its monitor nor makes a lock-order
     * occurrence. Why: a program that locks a fresh object per row (Derby) spent most of its
     * tracker time on the identity hash, the name and the lock orders of holds nobody reads
     * one by one; the counts per site stay exact, and a long hold is still found (by the
     * coarse clock) and hashed at its end. See "Sampled tracking" in docs/MODES.md.
     */
    static boolean sampleTracking;

    /** A hold's reentrant entry (OrcaHeld.INNER). */
    private static final int INNER = OrcaHeld.INNER;

    private static OrcaRec rec() {
        OrcaRec r = OrcaRec.mine();
        return r != null ? r : OrcaRec.recSlow(true);
    }

    /** The thread's OrcaRec of this recording, or null (none made yet, or an earlier one's; or
     * lost with its erased ThreadLocals while another thread holds its slot, until its next
     * rec(), which asks the agent: the JDK erases them between tasks, when no report is
     * under way). */
    private static OrcaRec current() {
        OrcaRec r = OrcaRec.mine();
        return r != null ? r : OrcaRec.recSlow(false);
    }

    /** Registers `r` as the thread's OrcaRec, unless the thread has one: the OrcaRec the agent
     * drains for the thread (`r` or the thread's first), or null. */
    static native OrcaRec register(OrcaRec r);
    /** Hands the buffered records to the agent; the agent sets r.pos back to 0. */
    static native void flush(OrcaRec r);
    /** trace=all: the current stack (the block's frame at `site`), interned; its ID. */
    private static native int stack(OrcaRec r, int site);
    /** A hold that reached the threshold: written with the current stack. */
    private static native void longHold(OrcaRec r, int site, int hash, long nanos, long end, long start);
    /** Whether the thread has entered `monitor` more than once (a reentrant acquisition):
     * JVMTI's entry count, for a long guarded hold outside the sample nested in another. */
    private static native boolean reentered(Object monitor);
    /**
     * Writes the class of `o` (hashed `hash`) as an ObjectClass line, once per object per run
     * (the agent keeps which it named); false when the agent names no more objects.
     */
    static native boolean name(Object o, int hash);

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
    // A `monitorenter` block: `monitorEnter(o, site)` before the lock returns the thread's OrcaRec
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
    // 0 says the tracker follows the hold; any other value is the coarse clock at the enter
    // of a hold outside the sample (in KEPT_SHIFT units, odd), which the exit compares with
    // the clock, without a call, to find it possibly long. Which holds are in the sample:
    // of the thread's outermost holds one in a stride at random (OrcaSampler.gateTurn):
    // 1 (every hold) until the program passes the exact budget (agent/src/recorder/clock.rs,
    // SAMPLE_AFTER_HOLDS), then GATE_PERIOD; and every hold nested in one, followed or left
    // out with it (OrcaSampler.gateNest). Per hold, not per time window: a hold the tracker follows costs tens of
    // nanoseconds more than one it does not, so a busy thread takes fewer holds while it is
    // followed, and a window's count would understate the others (by half, in a tight loop).
    // A hold outside the sample passes its monitor nowhere (C2 may still elide or coarsen
    // the lock), and costs the thread's record's lookup, a count and a branch at each end,
    // and the coarse clock's load. These entry points are small so that the
    // JIT inlines them.

    private static final int KEPT = OrcaEvents.KEPT_SHIFT;
    /** A guarded hold outside the sample this many KEPT units long at its exit may have
     * reached holdthreshold: it is timed at its end, out of line (set by the agent). */
    static int guardLong = Integer.MAX_VALUE;

    /** What a guarded site keeps for a hold outside the sample: the coarse clock, odd. */
    private static int kept() {
        long a = coarseClock;
        if (a == 0) {
            return 0;
        }
        long c = OrcaSampler.U.getLongOpaque(null, a);
        // A stale clock (the ticker idle) is no time: the precise clock's, whose base the
        // coarse one shares; rare, as the next hold in the sample wakes the ticker.
        return (int) ((c == OrcaSampler.STALE ? System.nanoTime() : c) >>> KEPT) | 1;
    }

    /**
     * The thread's OrcaRec for a guard entry point when its slot has another's (or it has none
     * yet: made now), out of line. Why not follow the hold without one: after the budget a
     * hold that is followed counts for GATE_PERIOD holds, so every guarded hold must take the
     * draw, a thread's first and a thread whose slot is taken (a server's 257th) too.
     */
    @DontInline
    private static OrcaRec guardRec() {
        try {
            return rec();
        } catch (Throwable t) {
            return null;
        }
    }

    /** guardRec for guardExit's count (OrcaRec.mineAnySession): none is made. */
    @DontInline
    private static OrcaRec guardRecAny() {
        try {
            return current();
        } catch (Throwable t) {
            return null;
        }
    }

    @Hidden
    public static Object guardEnter(Object monitor, int site) {
        OrcaRec r = OrcaRec.mine();
        if (r == null) {
            r = guardRec();
        }
        if (r != null && r.depth == 0 && r.gateOut()) {
            return null; // outside the sample: guardEntered keeps the clock
        }
        return monitorEnter(monitor, site);
    }

    @Hidden
    public static int guardEntered(Object rec, int site) {
        if (rec == null) {
            return kept();
        }
        monitorEntered(rec, site);
        return 0;
    }

    @Hidden
    public static int guardSyncEntered(Object monitor, int site) {
        OrcaRec r = OrcaRec.mine();
        if (r == null) {
            r = guardRec();
        }
        if (r != null && r.depth == 0 && r.gateOut()) {
            int k = kept();
            if (k != 0) {
                return k;
            }
        }
        syncEntered(monitor, site);
        return 0;
    }

    @Hidden
    public static void guardExit(Object monitor, int kept, int site) {
        if (kept != 0) {
            OrcaRec r = OrcaRec.mineAnySession();
            if (r == null) {
                r = guardRecAny();
            }
            if (r != null && r.gateNest > 0) {
                r.gateNest--;
            }
            long a = coarseClock;
            if (a != 0) {
                long c = OrcaSampler.U.getLongOpaque(null, a);
                if (c == OrcaSampler.STALE || (int) (c >>> KEPT) - kept > guardLong) {
                    guardLongHold(monitor, kept, site);
                }
            }
            return;
        }
        exit(monitor, site, true);
    }

    /**
     * The end of a guarded hold outside the sample that the coarse clock says may be long:
     * timed from an upper bound of its start (the first tick after the coarse start its
     * kept value names, from the clock's ring, as OrcaSampler.startedBy does), less the waits
     * on its monitor since (OrcaRec.unheldWaited), and written as a MonitorHold when it
     * reached holdthreshold: never longer than the hold. No hold record follows it (it is
     * outside the sample the summaries count), which the agent is told by S_UNSAMPLED.
     */
    @DontInline
    private static void guardLongHold(Object monitor, int kept, int site) {
        try {
            long threshold = holdCaught;
            long addr = coarseClock;
            if (threshold < 0 || addr == 0 || !ready) {
                return;
            }
            long t = System.nanoTime();
            long units = t >>> KEPT;
            // the enter's KEPT units, the kept value's 32 bits made whole (wraps after 3 days)
            long enter = units - ((int) units - kept);
            // the coarse start was below (enter + 1) << KEPT (kept is odd): the first tick
            // after it is the first in the ring past that
            long after = (enter + 1) << KEPT;
            long start = after;
            long best = Long.MAX_VALUE;
            for (int i = 0; i < OrcaSampler.TICKS; i++) {
                long v = OrcaSampler.U.getLongOpaque(null, addr + OrcaSampler.RING + 8L * i);
                if (v > after && v <= t && v < best) {
                    best = v;
                }
            }
            // (a tick long after it is not the next: the ring is a second's, a hold may be older)
            if (best != Long.MAX_VALUE && best - after < 64 * OrcaSampler.TICK) {
                start = best;
            }
            OrcaRec r = rec();
            if (r == null) {
                return;
            }
            long held = t - start - r.unheldWaited(monitor);
            if (held < threshold || r.gateNest > 0 && reentered(monitor)) {
                // (a hold nested in another left out may be a reentrant acquisition of the
                // same monitor, no hold of its own: the JVM's entry count says)
                return;
            }
            int h = r.hashLocked(monitor);
            r.name(monitor, h);
            longHold(r, site | OrcaEvents.S_UNSAMPLED, h, held, t, start);
        } catch (Throwable e) {
        }
    }

    /**
     * Before a `monitorenter` at `site`: what monitorEntered is handed, the thread's OrcaRec, or
     * the monitor itself when this report was lost (no recording, or a StackOverflowError
     * here): monitorEntered then reports it as a synchronized method's. (No OrcaRec is ever a
     * monitor of the program: the class is private to the tracker.)
     */
    @Hidden
    @DontInline
    public static Object monitorEnter(Object monitor, int site) {
        if (monitor == null) {
            return null; // monitorenter throws NullPointerException: nothing is entered
        }
        try {
            OrcaRec r = rec();
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
    private static Object quietEnter(OrcaRec r, Object monitor) {
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
    private static void enterRare(OrcaRec r, Object monitor, int site, int h) {
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
            if (!(rec instanceof OrcaRec) || traceAll) {
                enteredRare(rec, site);
                return;
            }
            OrcaRec r = (OrcaRec) rec;
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
        OrcaRec r = rec instanceof OrcaRec ? (OrcaRec) rec : rec();
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
            OrcaRec r = rec();
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
    private static void syncEnteredRare(OrcaRec r, Object monitor, int site) {
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
    private static void entered(OrcaRec r, Object monitor, int site, int h, boolean inner, int st,
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
        exit(monitor, site, false);
    }

    /**
     * A hold's record's site: a guarded site's hold (`guarded`) that ended at `t` after the
     * sample began is one of the sample (S_SAMPLED: the agent's summaries tell its
     * rows from those of the holds counted whole).
     */
    private static int sampled(int site, boolean guarded, long t) {
        long a;
        return guarded && (a = coarseClock) != 0
                && t >= OrcaSampler.U.getLongOpaque(null, a + OrcaSampler.SAMPLING)
                ? site | OrcaEvents.S_SAMPLED : site;
    }

    /** A long hold's site for longHold from exit's paths: exit lies between the report
     * (monitorExit, guardExit) and the part that calls the native, one more frame of the
     * tracker above the site's than SITE_FRAMES (S_DEEPER). */
    private static int deeper(int site) {
        return site | OrcaEvents.S_DEEPER;
    }

    /** monitorExit, or guardExit's of a hold in the sample (`guarded`). */
    @Hidden
    @DontInline
    private static void exit(Object monitor, int site, boolean guarded) {
        try {
            OrcaRec r = rec();
            if (r == null) {
                return;
            }
            int d = r.depth - 1;
            long[] e;
            long w;
            if (d < 0 || r.heldObj[d] != monitor || (w = (e = r.held)[OrcaRec.HW * d]) < 0
                    || traceAll) {
                exitRare(r, monitor, site, guarded);
                return;
            }
            int enterSite = (int) (w >> 32);
            int h = (int) w;
            long start = e[OrcaRec.HW * d + 1];
            long paused = e[OrcaRec.HW * d + 2];
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
                    longHeld(r, deeper(enterSite), h, t - start - paused, t, start);
                }
                enterSite = sampled(enterSite, guarded, t);
            } else {
                // Not timed (OrcaSampler.begin): the coarse clock at both ends (see exitRare).
                long addr = coarseClock;
                t = r.coarse(addr);
                long near = holdNear;
                if (near >= 0 && t - ~start - paused >= near) {
                    nearEnd(r, monitor, addr, enterSite, h, ~start, paused, guarded);
                    return;
                }
                enterSite = sampled(enterSite, guarded, t);
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
    private static int lateHash(OrcaRec r, Object monitor) {
        int h = r.hashLocked(monitor);
        r.name(monitor, h);
        return h;
    }

    /** A timed hold that reached the threshold: its MonitorHold line. */
    @DontInline
    private static void longHeld(OrcaRec r, int site, int h, long held, long t, long start) {
        longHold(r, site, h, held, t, start);
    }

    /**
     * The release of a hold not timed that the coarse clock says may have reached the
     * threshold: timed from the first tick after its coarse start `c0` to a precise end
     * (see exitRare).
     */
    @DontInline
    private static void nearEnd(OrcaRec r, Object monitor, long addr, int site, int h, long c0,
            long paused, boolean guarded) {
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
            longHold(r, deeper(site), h, held, t, start);
        }
        r.put(paused > 0 ? OrcaEvents.R_HOLD_WAITED : OrcaEvents.R_HOLD,
                sampled(site, guarded, t), h, t, -1);
    }

    /**
     * Every other release: reentrant, out of order (hand over hand), with trace=all, or of a
     * monitor whose enter was not seen.
     */
    @DontInline
    private static void exitRare(OrcaRec r, Object monitor, int site, boolean guarded) {
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
                    // Not timed (OrcaSampler.begin): the coarse clock at both ends, and the precise
                    // one at the end of a hold that may have reached the threshold, timed
                    // from the first tick after its coarse start (OrcaSampler.startedBy): never
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
                    longHold(r, deeper(enterSite), h, held, t, start);
                }
                // The outermost release: one record per hold is all a summary needs.
                if (!traceAll) {
                    r.put(paused > 0 ? OrcaEvents.R_HOLD_WAITED : OrcaEvents.R_HOLD,
                            sampled(enterSite, guarded, t), h, t, third);
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
            OrcaRec r = rec();
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
                    int how = OrcaLockCalls.semStart(r, subject, kind, site);
                    if (how == OrcaLockCalls.SEM_KEPT) {
                        r.quiet(d, true);
                        return;
                    }
                    if (how == OrcaLockCalls.SEM_TOLD) {
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
            OrcaRec r = current();
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
            OrcaRec r = rec();
            if (r != null) {
                r.hintObj = lock;
                r.hintSite = site;
            }
        } catch (Throwable t) {
        }
    }

    /** The caller's site (a call site that was not rewritten), by a walk of one frame: from
     * lockBegin (the agent's LOCK_ENTRY_FRAMES). */
    static native int callerSite();

    /** The same from methodEntry itself (HOOK_FRAMES): a hooked Semaphore call's. */
    private static native int hookCallerSite();

    /** The coarse clock was found stale (OrcaSampler.timed): the agent's ticker ticks again. */
    static native void wakeClock();
    /** The calling thread's CPU time in ns (the agent's clock_gettime): OrcaSampler.scaled. */
    static native long threadCpu();
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
    static native int lockOwner(int report, Object sync);
    /** A lock call written in full: its LockAcquire (at t0, owner as read) and its outcome
     * (at t, when the call returned: the hold's start). */
    static native void lockContended(int report, Object sync, long t0, long t,
            int owner, int outcome);
    /** A lock call kept in Java turned out contended: its LockAcquire now (at t0), its exit
     * line at lockEnd. */
    private static native void lockBlocked(int report, Object sync, long t0);
    /** trace=all: a lock call on synchronizer `sync` begins (at t0, the tracker's clock: the
     * summaries' too). */
    static native void lockEnter(int report, Object sync, long t0);
    /** trace=all: the lock call the agent was told of ended so, at t. */
    static native void lockEnd(int outcome, long t);
    /** Lock call `report` of `sync` ended by an exception: whether it took (an acquisition) or
     * released (an unlock) the lock all the same, the thread holding it once more or once less
     * than the `holds` of its held stack before the call. */
    static native boolean lockThrew(int report, Object sync, int holds);
    /** A j.u.c. hold that reached the threshold: written with the current stack. */
    static native void lockLongHold(int site, int hash, long nanos, long end, long start);
    /** Unlock call `report` (at t) of `sync` ended a hold this thread's held stack does not
     * have: taken before a recording attached to a running JVM (the agent writes it only
     * then, once per outermost hold). Rare: no cost on the hot path. */
    static native void lockHeldAtStart(int report, Object sync, int hash, boolean read, long t);

    // The reports of a lock call are split as the monitors' are (see above): the public ones
    // are small enough for the JIT to inline into the hooked method, and handle there the call
    // nested in the outermost one (AQS's release under ReentrantLock.unlock: one in each
    // unlock); the outermost call's report is out of line (lockBegin, lockDone), and what only
    // a rare call needs (a throw, a lost end, trace=all, contention) is further out of line,
    // so that the common path neither runs nor carries it.

    @Hidden
    public static void lockEntry(Object lock, Object sync, int report) {
        try {
            OrcaRec r = rec();
            if (r == null) {
                return;
            }
            int d = r.hookDepth;
            if (d > 0 && sync != null && r.lockOuter == sync && OrcaLockCalls.nests(r.lockReport)
                    && !OrcaLockCalls.nests(report)) {
                // the lock call its outer one runs on its synchronizer (AQS's release under
                // ReentrantLock.unlock): quiet, as lockBegin makes it, without a call
                r.hookDepth = d + 1;
                r.quiet(d, true);
                return;
            }
            OrcaLockCalls.lockBegin(r, lock, sync, report);
        } catch (Throwable t) {
        }
    }

    @Hidden
    public static void lockExit() {
        OrcaRec r = ending();
        if (r != null) {
            OrcaLockCalls.lockDone(r, OrcaEvents.O_RETURNED);
        }
    }

    @Hidden
    public static void lockExitZ(boolean returned) {
        OrcaRec r = ending();
        if (r != null) {
            OrcaLockCalls.lockDone(r, returned ? OrcaEvents.O_TRUE : OrcaEvents.O_FALSE);
        }
    }

    /** A StampedLock method returned a stamp (0: it failed). */
    @Hidden
    public static void lockExitJ(long stamp) {
        OrcaRec r = ending();
        if (r != null) {
            OrcaLockCalls.lockDone(r, stamp != 0 ? OrcaEvents.O_TRUE : OrcaEvents.O_FALSE);
        }
    }

    @Hidden
    public static void lockThrew() {
        OrcaRec r = ending();
        if (r != null) {
            OrcaLockCalls.lockDone(r, OrcaEvents.O_THREW);
        }
    }

    /**
     * The end of a hooked lock method, inline: one nested in another hooked call ends here
     * (null); the outermost is ended by lockDone, handed the thread's OrcaRec. The outermost's
     * depth is left to lockDone, so that an end lost as lockDone is called (a
     * StackOverflowError) leaves the call under way, for lockBegin to find.
     */
    @Hidden
    private static OrcaRec ending() {
        try {
            OrcaRec r = current();
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
     * and left OrcaRec.exitSkipped set. (A ThreadLocal lookup, beside the JNI call it precedes.)
     */
    private static void reported() {
        if (waiterSlots != 0) {
            OrcaRec r = current();
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
        OrcaRec r = current();
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
        OrcaRec r = rec();
        if (r != null) {
            r.inlineWaitObj = subject;
            r.inlineWaitSince = System.nanoTime();
        }
    }

    @Hidden
    public static void callExit() {
        try {
            OrcaRec r = current();
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
        OrcaRec r = current();
        if (r != null) {
            boolean found = false;
            for (int i = r.depth - 1; i >= 0; i--) {
                if (r.heldObj[i] == o) {
                    r.held[OrcaRec.HW * i + 2] += nanos;
                    found = true;
                }
            }
            if (!found) {
                // held by a guarded hold outside the sample (guardLongHold subtracts it)
                r.waitedUnheld(o, nanos);
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
}
