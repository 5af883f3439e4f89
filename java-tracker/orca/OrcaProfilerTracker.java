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
 * `kind` is one of the K_* constants below; `subject` is the monitor, the
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
 */
package orca;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

public final class OrcaProfilerTracker {
    private OrcaProfilerTracker() {}

    /** About to run monitorenter on subject. */
    public static final int K_MONITOR_ENTER = 1;
    /** monitorenter done (or synchronized method entered): subject is held. */
    public static final int K_MONITOR_ENTERED = 2;
    /** About to run monitorexit on subject (or leave a synchronized method). */
    public static final int K_MONITOR_EXIT = 3;
    public static final int K_OBJECT_WAIT = 4;
    /** wait returned, normally or by exception (the monitor is held again). */
    public static final int K_OBJECT_WAITED = 5;
    public static final int K_OBJECT_NOTIFY = 6;
    public static final int K_OBJECT_NOTIFY_ALL = 7;
    public static final int K_THREAD_START = 8;
    public static final int K_THREAD_JOIN = 9;
    /** join returned, normally or by exception. */
    public static final int K_THREAD_JOINED = 10;
    /** subject null: the calling thread sleeps. */
    public static final int K_THREAD_SLEEP = 11;
    public static final int K_THREAD_SLEPT = 12;
    public static final int K_SEMAPHORE_ACQUIRE = 13;
    /** permits obtained. */
    public static final int K_SEMAPHORE_ACQUIRED = 14;
    /** acquire gave up: tryAcquire returned false, or an exception was thrown. */
    public static final int K_SEMAPHORE_ACQUIRE_FAILED = 15;
    public static final int K_SEMAPHORE_RELEASE = 16;

    private static native void event(int kind, Object subject);

    private static void report(int kind, Object subject) {
        try {
            event(kind, subject);
        } catch (Throwable t) {
            // never throw into application code (also: natives not bound yet)
        }
    }

    // ---- monitors (monitorenter/monitorexit and synchronized methods) ----

    public static void monitorEnter(Object monitor) {
        report(K_MONITOR_ENTER, monitor);
    }

    public static void monitorEntered(Object monitor) {
        report(K_MONITOR_ENTERED, monitor);
    }

    public static void monitorExit(Object monitor) {
        report(K_MONITOR_EXIT, monitor);
    }

    // ---- java.lang.Object (any call-site owner: these methods are final) ----

    public static void objectWait(Object o) throws InterruptedException {
        report(K_OBJECT_WAIT, o);
        try {
            o.wait();
        } finally {
            report(K_OBJECT_WAITED, o);
        }
    }

    public static void objectWait(Object o, long millis) throws InterruptedException {
        report(K_OBJECT_WAIT, o);
        try {
            o.wait(millis);
        } finally {
            report(K_OBJECT_WAITED, o);
        }
    }

    public static void objectWait(Object o, long millis, int nanos) throws InterruptedException {
        report(K_OBJECT_WAIT, o);
        try {
            o.wait(millis, nanos);
        } finally {
            report(K_OBJECT_WAITED, o);
        }
    }

    public static void objectNotify(Object o) {
        report(K_OBJECT_NOTIFY, o);
        o.notify();
    }

    public static void objectNotifyAll(Object o) {
        report(K_OBJECT_NOTIFY_ALL, o);
        o.notifyAll();
    }

    // ---- java.lang.Thread (call sites naming java/lang/Thread) ----

    public static void threadStart(Thread t) {
        report(K_THREAD_START, t);
        t.start();
    }

    public static void threadJoin(Thread t) throws InterruptedException {
        report(K_THREAD_JOIN, t);
        try {
            t.join();
        } finally {
            report(K_THREAD_JOINED, t);
        }
    }

    public static void threadJoin(Thread t, long millis) throws InterruptedException {
        report(K_THREAD_JOIN, t);
        try {
            t.join(millis);
        } finally {
            report(K_THREAD_JOINED, t);
        }
    }

    public static void threadJoin(Thread t, long millis, int nanos) throws InterruptedException {
        report(K_THREAD_JOIN, t);
        try {
            t.join(millis, nanos);
        } finally {
            report(K_THREAD_JOINED, t);
        }
    }

    public static void threadSleep(long millis) throws InterruptedException {
        report(K_THREAD_SLEEP, null);
        try {
            Thread.sleep(millis);
        } finally {
            report(K_THREAD_SLEPT, null);
        }
    }

    public static void threadSleep(long millis, int nanos) throws InterruptedException {
        report(K_THREAD_SLEEP, null);
        try {
            Thread.sleep(millis, nanos);
        } finally {
            report(K_THREAD_SLEPT, null);
        }
    }

    // ---- call sites naming another class (maybe a Thread subclass): the
    // original call stays in place; these only report, and only when the
    // receiver really is a Thread. ----

    public static void threadStarting(Object t) {
        if (t instanceof Thread) {
            report(K_THREAD_START, t);
        }
    }

    public static void threadJoining(Object t) {
        if (t instanceof Thread) {
            report(K_THREAD_JOIN, t);
        }
    }

    /** Reported after a normal return only (see rewriter/README.md). */
    public static void threadJoined(Object t) {
        if (t instanceof Thread) {
            report(K_THREAD_JOINED, t);
        }
    }

    // ---- java.util.concurrent.Semaphore (call sites naming Semaphore) ----

    public static void semaphoreAcquire(Semaphore s) throws InterruptedException {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquire();
            ok = true;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static void semaphoreAcquire(Semaphore s, int permits) throws InterruptedException {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquire(permits);
            ok = true;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static void semaphoreAcquireUninterruptibly(Semaphore s) {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquireUninterruptibly();
            ok = true;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static void semaphoreAcquireUninterruptibly(Semaphore s, int permits) {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            s.acquireUninterruptibly(permits);
            ok = true;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static boolean semaphoreTryAcquire(Semaphore s) {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire();
            return ok;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static boolean semaphoreTryAcquire(Semaphore s, int permits) {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(permits);
            return ok;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static boolean semaphoreTryAcquire(Semaphore s, long timeout, TimeUnit unit) throws InterruptedException {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(timeout, unit);
            return ok;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static boolean semaphoreTryAcquire(Semaphore s, int permits, long timeout, TimeUnit unit)
            throws InterruptedException {
        report(K_SEMAPHORE_ACQUIRE, s);
        boolean ok = false;
        try {
            ok = s.tryAcquire(permits, timeout, unit);
            return ok;
        } finally {
            report(ok ? K_SEMAPHORE_ACQUIRED : K_SEMAPHORE_ACQUIRE_FAILED, s);
        }
    }

    public static void semaphoreRelease(Semaphore s) {
        report(K_SEMAPHORE_RELEASE, s);
        s.release();
    }

    public static void semaphoreRelease(Semaphore s, int permits) {
        report(K_SEMAPHORE_RELEASE, s);
        s.release(permits);
    }
}
