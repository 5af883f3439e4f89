/*
 * OrcaHeld: the monitors and j.u.c. locks a thread holds, and its last releases.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaHeld.
 */
package orca;

import jdk.internal.vm.annotation.DontInline;

/**
 * A thread's held stack: every monitor and j.u.c. lock it holds, innermost last, with the
 * site, hash and start of each hold, and the ring of its last releases that names the owner
 * of a monitor at contention.
 *
 * One of the parts of a thread's OrcaRec, each a class of its own in one chain (OrcaHeld,
 * OrcaHashCache, OrcaSampler, OrcaOrderSlots, OrcaLockCalls, OrcaRec): one object per
 * thread, so that a hold reads its fields with no pointer between concerns (Derby's working
 * set evicts the cache lines a hold reads between its holds). Only its own thread writes it;
 * the agent reads it (see OrcaRec).
 */
abstract class OrcaHeld {
    /** Marks the held entry of a reentrant acquisition (in its site; site IDs are positive). */
    static final int INNER = 0x80000000;

    /** Monitors held, innermost last. */
    Object[] heldObj = new Object[8];
    /**
     * Their entries, HW longs each: site << 32 | hash (negative for a reentrant entry, its
     * site marked INNER), the hold's start (OrcaSampler.begin), and the time it spent in
     * Object.wait (for the long-hold threshold). Read by the agent (`holds` in
     * agent/src/recorder/buffers.rs). Why one array: an entry was spread over five (this
     * and heldObj's), five cache lines a release read, and Derby's working set evicts
     * them between a thread's holds (its tracker cost ~100 ns per hold against ~9 in a
     * loop); now the innermost entries share a line or two.
     */
    long[] held = new long[HW * 8];
    static final int HW = OrcaEvents.HELD_WORDS;
    int depth;

    /** Held entries pushed by this thread so far (wraps): its rate of holds, and its
     * GRACE_HOLDS. */
    int pushes;

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
     * The waits on a monitor the thread held by a guarded hold outside the sample (not in
     * its held stack): the monitor and their sum, so that such a hold's length at its end leaves them out (the tracker's
     * guardLongHold): Object.wait releases the monitor, and a producer that waits for room
     * in `synchronized (queue)` would otherwise read as a long hold.
     */
    Object unheldWaitObj;
    long unheldWaitSum;

    /** An Object.wait of `nanos` on `o`, ended now, that found no hold of `o` in the stack. */
    final void waitedUnheld(Object o, long nanos) {
        if (unheldWaitObj != o) {
            unheldWaitObj = o;
            unheldWaitSum = 0;
        }
        unheldWaitSum += nanos;
    }

    /**
     * The waits on `monitor` to leave out of a hold of it ending now, forgotten: all those
     * kept since the last hold that asked, whether they were in this hold or an earlier one
     * (the hold is then shorter than it was, never longer).
     */
    final long unheldWaited(Object monitor) {
        if (unheldWaitObj != monitor) {
            return 0;
        }
        long w = unheldWaitSum;
        unheldWaitObj = null;
        unheldWaitSum = 0;
        return w;
    }

    final void released(int hash, long start, long end) {
        int k = relPos++ & (OrcaEvents.RELEASED - 1);
        relHash[k] = hash;
        relStart[k] = start;
        relEnd[k] = end;
    }

    /** How many times this thread holds j.u.c. lock `sync` in the mode of `flags` (each
     * reentrant acquisition has its entry). */
    final int holds(Object sync, int flags) {
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
    final int findLock(Object sync, int flags) {
        int mask = OrcaEvents.S_LOCK | OrcaEvents.S_READ;
        for (int i = depth - 1; i >= 0; i--) {
            if (heldObj[i] == sync && (heldSite(i) & mask) == flags) {
                return i;
            }
        }
        return -1;
    }

    final int heldHash(int i) {
        return (int) held[HW * i];
    }

    final int heldSite(int i) {
        return (int) (held[HW * i] >> 32);
    }

    final long heldStart(int i) {
        return held[HW * i + 1];
    }

    final long heldPaused(int i) {
        return held[HW * i + 2];
    }

    final void push(Object o, int hash, int site, long start) {
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
    final int find(Object o) {
        for (int i = depth - 1; i >= 0; i--) {
            if (heldObj[i] == o) {
                return i;
            }
        }
        return -1;
    }

    /** Removes entry i (the innermost, unless locking is hand over hand). */
    final void remove(int i) {
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
