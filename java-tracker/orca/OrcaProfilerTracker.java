/*
 * OrcaProfilerTracker: the class that code rewritten by orca-rewriter calls.
 *
 * Source compatible with `javac --release 8`. It must be visible to every
 * class loader (the agent appends it to the boot class path) and is never
 * instrumented itself.
 *
 * NATIVE SURFACE (bind with RegisterNatives on class orca/OrcaProfilerTracker):
 *
 *     private static native void event(int kind, Object subject);
 *     JNI signature: "event", "(ILjava/lang/Object;)V"
 *
 * `kind` is one of the OrcaEvents.K_* constants; `subject` is the monitor, the
 * Object waited on / notified, the Thread started / joined, the Semaphore,
 * or null for Thread.sleep (the subject is then the calling thread). The
 * native runs on the thread the event happened on; it must not block, must
 * be reentrancy-safe, and may throw nothing (anything it throws is swallowed
 * here anyway). Until the natives are bound, every report is silently
 * dropped (the UnsatisfiedLinkError is caught).
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
import jdk.internal.vm.annotation.Hidden;

public final class OrcaProfilerTracker {
    private OrcaProfilerTracker() {}

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
    // and original bytecode index), so nothing here walks the stack. Each thread appends
    // fixed-size records to a buffer of its own (Rec.buf) and crosses into the agent only when
    // the buffer is full, or before an event the agent writes at once (a wait, a contention:
    // the agent flushes the buffer first, so a thread's lines stay in order). The agent turns
    // the records into per-site hold summaries and lock-order edges, or, with trace=all, into
    // one event line each.

    /** Set by the agent at start-up (before any rewritten class loads). */
    static volatile boolean ready;
    /** trace=all: MonitorEnter records too, with stacks. */
    static boolean traceAll;
    /** trace=all with stackdepth above 1: each block's stack is taken at its enter. */
    static boolean deepStacks;
    /** Holds at least this long (ns) are written as MonitorHold events with a stack; < 0: none. */
    static long holdThreshold = -1;

    private static final ThreadLocal<Rec> REC = new ThreadLocal<Rec>();

    private static Rec rec() {
        Rec r = REC.get();
        if (r == null) {
            if (!ready) {
                return null;
            }
            r = new Rec();
            REC.set(r);
            try {
                register(r);
            } catch (Throwable t) {
                // natives not bound: records are kept and dropped when the buffer is full
            }
        }
        return r;
    }

    private static native void register(Rec r);
    /** Hands the buffered records to the agent; the agent sets r.pos back to 0. */
    static native void flush(Rec r);
    /** trace=all: the current stack (the block's frame at `site`), interned; its ID. */
    private static native int stack(Rec r, int site);
    /** A hold that reached the threshold: written with the current stack. */
    private static native void longHold(Rec r, int site, int hash, long nanos, long end);

    @Hidden
    public static void monitorEnter(Object monitor) {
        monitorEnter(monitor, 0);
    }

    @Hidden
    public static void monitorEntered(Object monitor) {
        monitorEntered(monitor, 0);
    }

    @Hidden
    public static void monitorExit(Object monitor) {
        monitorExit(monitor, 0);
    }

    @Hidden
    public static void monitorEnter(Object monitor, int site) {
        if (monitor == null) {
            return; // monitorenter throws NullPointerException: nothing is entered
        }
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            // Hashed before it is locked: hashing a locked object would inflate its lock.
            int h = System.identityHashCode(monitor);
            r.pendingObj = monitor;
            r.pendingHash = h;
            if (traceAll) {
                int st = deepStacks ? stack(r, site) : 0;
                r.pendingStack = st;
                r.put(OrcaEvents.R_ENTER, site, h, System.nanoTime(), st);
            } else if (r.depth > 0) {
                // A nested acquisition: its lock orders count when attempted (a deadlock's
                // never completes). Not held yet, so no timestamp is needed.
                r.put(OrcaEvents.R_ENTER, site, h, 0, 0);
            }
        } catch (Throwable t) {
            // never throw into application code (StackOverflowError included)
        }
    }

    @Hidden
    public static void monitorEntered(Object monitor, int site) {
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            int h;
            int st = 0;
            if (r.pendingObj == monitor && monitor != null) {
                h = r.pendingHash;
                st = r.pendingStack;
            } else {
                // a synchronized method: no monitorenter before it
                h = System.identityHashCode(monitor);
                if (traceAll && deepStacks) {
                    st = stack(r, site);
                }
            }
            r.pendingObj = null;
            r.pendingStack = 0;
            long t = System.nanoTime();
            r.push(monitor, h, site, t);
            r.put(OrcaEvents.R_ENTERED, site, h, t, st);
        } catch (Throwable t) {
        }
    }

    @Hidden
    public static void monitorExit(Object monitor, int site) {
        try {
            Rec r = rec();
            if (r == null) {
                return;
            }
            long t = System.nanoTime();
            int i = r.find(monitor);
            int h;
            if (i >= 0) {
                h = r.heldHash[i];
                long held = t - r.heldStart[i];
                int enterSite = r.heldSite[i];
                r.remove(i);
                long threshold = holdThreshold;
                if (threshold >= 0 && held >= threshold && r.find(monitor) < 0) {
                    longHold(r, enterSite, h, held, t);
                }
            } else {
                // its enter was not seen (a report lost to a StackOverflowError)
                h = System.identityHashCode(monitor);
            }
            r.put(OrcaEvents.R_EXIT, site, h, t, 0);
        } catch (Throwable t) {
        }
    }

    // ---- JDK methods instrumented themselves (rewriter: Config::hooks) ----
    //
    // The hooked method calls methodEntry first and methodExit on every way out (returns, and
    // a catch-all handler that rethrows), so the agent sees every caller: subclasses, JDK
    // code, reflection, method handles. The agent keeps the nesting (Thread.join() runs
    // join(0)): only the outermost call is reported, as in JVMTI mode.

    private static native void hookEnter(int kind, Object subject);
    private static native void hookExit();

    @Hidden
    public static void methodEntry(Object subject, int kind) {
        try {
            Rec r = rec();
            if (r != null && r.hookDepth++ == 0 && kind == OrcaEvents.K_OBJECT_WAIT) {
                r.waitObj = subject;
                r.waitSince = System.nanoTime();
            }
            hookEnter(kind, subject);
        } catch (Throwable t) {
            // never throw into application code (also: natives not bound yet)
        }
    }

    @Hidden
    public static void methodExit() {
        try {
            Rec r = REC.get();
            if (r != null && r.hookDepth > 0 && --r.hookDepth == 0 && r.waitObj != null) {
                Object o = r.waitObj;
                r.waitObj = null;
                paused(o, System.nanoTime() - r.waitSince);
            }
            hookExit();
        } catch (Throwable t) {
        }
    }

    // ---- call sites of tracked natives (JDK 17: Object.wait(long), Thread.sleep(long);
    // every JDK: notify, notifyAll), reported inline: the call stays where it was, between
    // callEntry and callExit, so no frame of the tracker is under it while it blocks. No
    // handler is added for an exception: the agent ends the call at the thread's next report.

    private static native void callEnter(int kind, Object subject);
    private static native void callEnterVia(int kind, Class<?> owner);
    private static native void callExit0();

    /** `Owner.sleep(long)` with Owner not Thread: reported if it resolves to Thread.sleep. */
    @Hidden
    public static void callEntryVia(Class<?> owner, int kind) {
        try {
            callEnterVia(kind, owner);
        } catch (Throwable t) {
        }
    }

    @Hidden
    public static void callEntry(Object subject, int kind) {
        try {
            if (kind == OrcaEvents.K_OBJECT_WAIT) {
                Rec r = rec();
                if (r != null) {
                    r.inlineWaitObj = subject;
                    r.inlineWaitSince = System.nanoTime();
                }
            }
            callEnter(kind, subject);
        } catch (Throwable t) {
        }
    }

    @Hidden
    public static void callExit() {
        try {
            Rec r = REC.get();
            if (r != null && r.inlineWaitObj != null) {
                Object o = r.inlineWaitObj;
                r.inlineWaitObj = null;
                paused(o, System.nanoTime() - r.inlineWaitSince);
            }
            callExit0();
        } catch (Throwable t) {
        }
    }

    /** Object.wait releases the monitor: its hold pauses (as `orca report` counts it). */
    private static void paused(Object o, long nanos) {
        Rec r = REC.get();
        if (r != null) {
            int i = r.find(o);
            if (i >= 0) {
                r.heldStart[i] += nanos;
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
        /** Records of 3 longs: site << 32 | hash; nanos << 2 | kind; stack ID. */
        long[] buf = new long[3 * 32];
        /** Longs of buf in use. */
        int pos;
        /** Monitors held, innermost last. */
        Object[] heldObj = new Object[8];
        int[] heldHash = new int[8];
        int[] heldSite = new int[8];
        long[] heldStart = new long[8];
        int depth;
        /** An inline Object.wait under way: its monitor and start. */
        Object inlineWaitObj;
        long inlineWaitSince;
        /** Hooked JDK methods under way; the outermost Object.wait's monitor and start. */
        int hookDepth;
        Object waitObj;
        long waitSince;
        /** The monitorenter under way: its object, hash and (trace=all) stack. */
        Object pendingObj;
        int pendingHash;
        int pendingStack;

        void put(int kind, int site, int hash, long nanos, int stack) {
            int p = pos;
            if (p + 3 > buf.length) {
                flush(this);
                p = pos;
                if (p + 3 > buf.length) {
                    return; // the agent could not take them (natives not bound)
                }
            }
            long[] b = buf;
            b[p] = ((long) site << 32) | (hash & 0xFFFFFFFFL);
            b[p + 1] = (nanos << 2) | kind;
            b[p + 2] = stack;
            pos = p + 3;
        }

        void push(Object o, int hash, int site, long start) {
            int d = depth;
            if (d == heldObj.length) {
                heldObj = java.util.Arrays.copyOf(heldObj, d * 2);
                heldHash = java.util.Arrays.copyOf(heldHash, d * 2);
                heldSite = java.util.Arrays.copyOf(heldSite, d * 2);
                heldStart = java.util.Arrays.copyOf(heldStart, d * 2);
            }
            heldObj[d] = o;
            heldHash[d] = hash;
            heldSite[d] = site;
            heldStart[d] = start;
            depth = d + 1;
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

        /** Removes entry i; entries above it move down (hand-over-hand locking). */
        void remove(int i) {
            int d = depth - 1;
            for (int k = i; k < d; k++) {
                heldObj[k] = heldObj[k + 1];
                heldHash[k] = heldHash[k + 1];
                heldSite[k] = heldSite[k + 1];
                heldStart[k] = heldStart[k + 1];
            }
            heldObj[d] = null;
            depth = d;
        }
    }
}
