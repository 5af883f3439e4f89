/*
 * OrcaRec: a thread's record, the one object the tracker keeps per thread.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaRec.
 */
package orca;

import static orca.OrcaProfilerTracker.waiterBusy;
import static orca.OrcaProfilerTracker.waiterMask;
import static orca.OrcaProfilerTracker.waiterSlots;

import jdk.internal.vm.annotation.DontInline;

/**
 * One thread's buffer of records and its reports under way, and where each thread finds its
 * own. Only its own thread writes it; the agent reads it on that thread (flush) and, at JVM
 * exit, from the exiting thread, by the fields' JNI IDs (agent/src/recorder/buffers.rs,
 * RecFields: JNI finds a superclass's fields on this class too).
 *
 * Its concerns are its superclasses, one file each, in one object (no pointer between them:
 * a hold reads fields of most of them, and Derby's working set evicts the cache lines a hold
 * reads between its holds): OrcaHeld (the held stack, the last releases), OrcaHashCache (the
 * identity hashes and names), OrcaSampler (which holds are timed and identified; the coarse
 * clock), OrcaOrderSlots (the lock-order slots), OrcaLockCalls (the j.u.c. calls under way).
 * The agent defines them in that order, superclass first, before the tracker is initialized
 * (agent/src/engines/tracker.rs, define_classes; build.rs lists them).
 */
final class OrcaRec extends OrcaLockCalls {
    private static final ThreadLocal<OrcaRec> REC = new ThreadLocal<OrcaRec>();

    /**
     * Records of 3 longs: site << 32 | hash; nanos << KIND_BITS | kind; a third word whose meaning
     * depends on the kind (agent/src/events.rs, RecordKind).
     */
    long[] buf = new long[3 * 32];
    /** The recording it belongs to (OrcaProfilerTracker.session when made). */
    int session;
    /** Its thread (final: read by other threads in BY_THREAD). */
    final Thread thread;

    OrcaRec(Thread thread) {
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
    private static final long POS;

    static {
        long at = -1;
        try {
            at = U.objectFieldOffset(OrcaRec.class, "pos");
        } catch (Throwable t) {
            // no Unsafe (a test's copy on the class path): plain stores (setPos)
        }
        POS = at;
    }

    /**
     * The threads' OrcaRecs by the low bits of their thread ID (Thread.tid, read with Unsafe: a
     * subclass may override getId), each slot the OrcaRec of the first thread of this recording
     * that took it while it was free (empty, of an earlier recording, or of a thread that
     * ended). Why: every report looks up its thread's OrcaRec, a monitor hold twice and a j.u.c.
     * lock/unlock pair five times, and ThreadLocal.get was 2 ns each (JDK 17), this 1 (a
     * thread ID, a slot, a compare). A thread whose slot another holds uses REC (recSlow).
     * Keeps at most SLOTS OrcaRecs of ended threads (and their buffers) reachable until another
     * thread takes their slot. A thread whose ThreadLocals were erased (the JDK's
     * InnocuousThread) keeps its OrcaRec here; when another holds its slot, REC has lost it,
     * and newRec asks the agent for it. Here, not in the tracker: its static initializer
     * runs before the agent defines OrcaRec when it attaches.
     */
    static final OrcaRec[] BY_THREAD = new OrcaRec[SLOTS];
    /** Thread.tid's offset, or -1 (Unsafe or the field out of reach: REC alone). */
    static final long TID = offset("tid");

    private void setPos(int p) {
        if (POS >= 0) {
            U.putIntRelease(this, POS, p);
        } else {
            pos = p;
        }
    }

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

    /** Where `n` records fit in the buffer (flushed first if needed), or -1. */
    int room(int n) {
        int p = pos;
        if (p + 3 * n > buf.length) {
            OrcaProfilerTracker.flush(this);
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

    void quiet(int d, boolean on) {
        if (d < 64) {
            quietBits = on ? quietBits | (1L << d) : quietBits & ~(1L << d);
        }
    }

    boolean isQuiet(int d) {
        return d < 64 && (quietBits & (1L << d)) != 0;
    }

    /** The thread's OrcaRec from its slot, or null (not there: REC may have it). */
    static OrcaRec mine() {
        long at = TID;
        if (at < 0) {
            return null;
        }
        Thread t = Thread.currentThread();
        OrcaRec r = BY_THREAD[(int) U.getLong(t, at) & (SLOTS - 1)];
        return r != null && r.thread == t && r.session == OrcaProfilerTracker.session ? r : null;
    }

    /**
     * The OrcaRec in the thread's slot if it is the thread's, of whatever recording: for a
     * guarded exit's count of gateNest alone, which an earlier recording's OrcaRec may take
     * (a count above 0 only goes down). Cheaper than mine() by the session's compare.
     */
    static OrcaRec mineAnySession() {
        long at = TID;
        if (at < 0) {
            return null;
        }
        Thread t = Thread.currentThread();
        OrcaRec r = BY_THREAD[(int) U.getLong(t, at) & (SLOTS - 1)];
        return r != null && r.thread == t ? r : null;
    }

    /** rec() or current() of a thread whose OrcaRec is not in its slot. Out of line. */
    @DontInline
    static OrcaRec recSlow(boolean make) {
        OrcaRec r = REC.get();
        if (r != null && r.session == OrcaProfilerTracker.session) {
            claim(r, false);
            return r;
        }
        return make ? newRec() : null;
    }

    /** Puts `r` in its thread's slot if the slot is free (see BY_THREAD); `ended`: a slot of
     * a thread that ended is free too (Thread.isAlive, a native call on JDK 17: once per
     * thread). */
    private static void claim(OrcaRec r, boolean ended) {
        long at = TID;
        if (at < 0) {
            return;
        }
        int k = (int) U.getLong(r.thread, at) & (SLOTS - 1);
        OrcaRec o = BY_THREAD[k];
        if (o == null || o.session != r.session || o.thread == r.thread
                || ended && !o.thread.isAlive()) {
            BY_THREAD[k] = r;
        }
    }

    /**
     * The thread's first report of this recording, or its first since its ThreadLocals were
     * erased while another thread held its slot (out of line: rec() is inlined everywhere).
     * The agent keeps a thread's first OrcaRec and hands it back here: a thread that made a
     * second one (the JDK's InnocuousThread erases its ThreadLocals between tasks: the
     * Common-Cleaner, the common pool's workers on JDK 19 and later) wrote its records where
     * the agent never read them, and lost every hold after its first task.
     */
    @DontInline
    private static OrcaRec newRec() {
        if (!OrcaProfilerTracker.ready) {
            return null;
        }
        OrcaRec r = new OrcaRec(Thread.currentThread());
        r.session = OrcaProfilerTracker.session;
        try {
            OrcaRec had = OrcaProfilerTracker.register(r);
            if (had != null && had.session == OrcaProfilerTracker.session && had.thread == r.thread) {
                r = had;
            }
        } catch (Throwable t) {
            // natives not bound: records are kept and dropped when the buffer is full
        }
        REC.set(r);
        claim(r, true);
        return r;
    }
}
