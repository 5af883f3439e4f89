/*
 * OrcaOrderSlots: the lock-order slots the agent publishes to a thread, and the nested
 * acquisitions the thread counts in them itself.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaOrderSlots.
 */
package orca;

import static orca.OrcaProfilerTracker.sampleTracking;

/**
 * A thread's lock-order slots (OrcaRec.nested writes the record of an acquisition they do
 * not count).
 *
 * One of the parts of a thread's OrcaRec, each a class of its own in one chain (OrcaHeld,
 * OrcaHashCache, OrcaSampler, OrcaOrderSlots, OrcaLockCalls, OrcaRec): one object per
 * thread, so that a hold reads its fields with no pointer between concerns (Derby's working
 * set evicts the cache lines a hold reads between its holds). Only its own thread writes it;
 * the agent reads it (see OrcaRec).
 */
abstract class OrcaOrderSlots extends OrcaSampler {
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

    /** The slot of a pair of sites, before the mask: the agent's `order_slot`
     * (agent/src/events.rs), from the same constants (OrcaEvents.ORD_MUL_HELD, ORD_MUL,
     * ORD_SHIFT); rewriter/tests/tracker.rs runs this one against it. */
    static int orderSlot(int heldSite, int site) {
        return ((heldSite * OrcaEvents.ORD_MUL_HELD) ^ site) * OrcaEvents.ORD_MUL
                >>> OrcaEvents.ORD_SHIFT;
    }

    /**
     * Counts monitor `hash` taken at `site` while the held entries e0, e1, e2 (the first
     * n, in hold order) count as held, in their slots, when the slots tell where the
     * agent would count every one of its n lock-order occurrences; else (false) it is a
     * record. Rows are only ever added until the agent clears the slots, so a slot
     * published earlier is never wrong about a row it names or about rows being full.
     */
    final boolean orderCounted(int n, int e0, int e1, int e2, int site, int hash) {
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
                OrcaProfilerTracker.flush((OrcaRec) this);
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

    /** Whether held entry i is a lock-order edge's held end when o is acquired: an
     * outermost hold, not of o, and the first of its lock. */
    final boolean counts(int i, Object o) {
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
}
