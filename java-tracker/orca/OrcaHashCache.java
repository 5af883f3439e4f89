/*
 * OrcaHashCache: the identity hashes a thread takes, and which it had the agent name.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaHashCache.
 */
package orca;

import jdk.internal.vm.annotation.DontInline;

/**
 * The thread's cache of identity hashes (the last object hashed, and a ring of the ones
 * before it) and the table of the hashes it had the agent name (ObjectClass lines).
 *
 * One of the parts of a thread's OrcaRec, each a class of its own in one chain (OrcaHeld,
 * OrcaHashCache, OrcaSampler, OrcaOrderSlots, OrcaLockCalls, OrcaRec): one object per
 * thread, so that a hold reads its fields with no pointer between concerns (Derby's working
 * set evicts the cache lines a hold reads between its holds). Only its own thread writes it;
 * the agent reads it (see OrcaRec).
 */
abstract class OrcaHashCache extends OrcaHeld {
    /** The agent names no more objects (its table is full): no thread asks it again. */
    static boolean namesFull;

    /**
     * The object this thread hashed last and its identity hash. A lock that has been
     * contended stays inflated, and the JIT's inlined identityHashCode reads the hash
     * only from an unlocked object's header: for an inflated (or held) one every call
     * goes into the VM (JVM_IHashCode, a thread-state transition), which was 29% of a
     * two-thread contended counter's time. A thread mostly locks the same objects again,
     * so one compare saves it. This keeps the last object a thread locked reachable until
     * it locks another or ends (after a detach, until it ends, as its OrcaRec): one object per
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
    final int hash(Object o) {
        if (o == hashedObj) {
            return hashedHash;
        }
        int h = System.identityHashCode(o);
        remember(o, h);
        return h;
    }

    /** hash() of a monitor this thread has just locked: the ring is looked at first. */
    final int hashLocked(Object o) {
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

    final void name(Object o, int hash) {
        int[] n = named;
        int k = hash & (n.length - 1);
        if (n[k] != hash) {
            n[k] = hash;
            nameNew(this, o, hash);
        }
    }

    /** Never throws: a name lost (a StackOverflowError here) must not lose the hold. */
    @DontInline
    private static void nameNew(OrcaHashCache r, Object o, int hash) {
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
}
