/*
 * OrcaLockCalls: the java.util.concurrent calls a thread has under way (its lock call, its
 * Semaphore call, its Condition.await), and what the tracker does at their start and end.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaLockCalls.
 */
package orca;

import static orca.OrcaProfilerTracker.coarseClock;
import static orca.OrcaProfilerTracker.holdCaught;
import static orca.OrcaProfilerTracker.holdNear;
import static orca.OrcaProfilerTracker.holdThreshold;
import static orca.OrcaProfilerTracker.sampleTracking;
import static orca.OrcaProfilerTracker.traceAll;

import java.util.concurrent.Semaphore;
import jdk.internal.vm.annotation.DontInline;
import jdk.internal.vm.annotation.Hidden;

/**
 * A thread's j.u.c. call state: the site hint of its next lock call, its outermost lock call
 * and Semaphore call under way, its Condition.await. The static methods are the out-of-line
 * parts of the tracker's lock and Semaphore reports (OrcaProfilerTracker: lockEntry,
 * lockExit*, lockThrew, methodEntry), called one frame below them as before, so that the
 * agent's frame counts (LOCK_ENTRY_FRAMES, LOCK_EXIT_FRAMES) stay.
 *
 * One of the parts of a thread's OrcaRec, each a class of its own in one chain (OrcaHeld,
 * OrcaHashCache, OrcaSampler, OrcaOrderSlots, OrcaLockCalls, OrcaRec): one object per
 * thread, so that a hold reads its fields with no pointer between concerns (Derby's working
 * set evicts the cache lines a hold reads between its holds). Only its own thread writes it;
 * the agent reads it (see OrcaRec).
 */
abstract class OrcaLockCalls extends OrcaOrderSlots {
    /** Outcomes of a lock call: returned normally (void), true, false, threw (agent/src/
     * events.rs, LockOutcome). */
    static final int RETURNED = OrcaEvents.O_RETURNED, TRUE = OrcaEvents.O_TRUE,
            FALSE = OrcaEvents.O_FALSE, THREW = OrcaEvents.O_THREW;
    /** The call's bits of a lock report's number less H_LOCK (L_CALL_BITS). */
    static final int CALL_MASK = (1 << OrcaEvents.L_CALL_BITS) - 1;

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

    /** A hooked Semaphore call under way that the tracker keeps to itself (semStart). */
    boolean inSem;
    /** ... an acquisition of this semaphore (null: a release), at semSite, begun at
     * semSince (System.nanoTime); semWaiter: the agent was told of it (semEnter). */
    Object semObj;
    int semSite;
    long semSince;
    boolean semWaiter;

    /**
     * A Condition.await returned: the thread's j.u.c. holds paused. (Which lock's, the
     * tracker does not know: the agent subtracts only the awaits on the hold's own lock.
     * Both modes: await releases the synchronizer's whole state, a read hold taken under
     * the write lock included.)
     */
    final void awaited(long nanos) {
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
    final long unlockTime(Object sync, int flags) {
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

    /** What semStart did: nothing (the agent is told as before, hookEnter), kept the call
     * (inSem), or found a release the agent is to be told of at its site (semEnter). */
    static final int SEM_AGENT = 0, SEM_KEPT = 1, SEM_TOLD = 2;

    /**
     * The start of a hooked Semaphore call (kind K_SEMAPHORE_ACQUIRE or _RELEASE) at depth 0,
     * at `site` (see above): SEM_KEPT, SEM_TOLD (its site in semSite) or SEM_AGENT (no
     * site). Out of line.
     */
    @DontInline
    static int semStart(OrcaRec r, Object subject, int kind, int site) {
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

    /** lockEntry of every call but the one its outer call runs: the outermost (a lock call
     * the hooked method is), or one inside another hooked call. */
    @Hidden
    @DontInline
    static void lockBegin(OrcaRec r, Object lock, Object sync, int report) {
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
            boolean read = ((OrcaEvents.H_READ_CLASSES >> (v >> OrcaEvents.L_CALL_BITS)) & 1) != 0;
            boolean release = (v & CALL_MASK) >= OrcaEvents.L_UNLOCK;
            r.lockReport = report;
            r.lockSync = sync;
            r.lockRead = read;
            r.lockContended = false;
            if (!release) {
                int site = r.hintObj == lock ? r.hintSite : 0;
                if (site == 0) {
                    site = OrcaProfilerTracker.callerSite();
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
            // An unlock's hold ends now (as LockRelease's time; unlockTime). An
            // acquisition needs no time of its own unless it is written in full: it is then
            // taken where it turned out contended, or at its end (a tryLock that failed, an
            // interrupted call).
            long now = traceAll ? System.nanoTime()
                    : release ? r.unlockTime(sync, OrcaEvents.S_LOCK | (read ? OrcaEvents.S_READ : 0))
                    : 0;
            r.lockT0 = now;
            if (traceAll) {
                // (here, for the agent's frame count: LOCK_ENTRY_FRAMES)
                OrcaProfilerTracker.lockEnter(report, sync, now);
                r.lockTold = true;
            }
        } catch (Throwable t) {
        }
    }

    /** The agent was told of the last lock call but not of its end (its lockEnd itself
     * overflowed): that end now, as lockDone found it. */
    @DontInline
    private static void told(OrcaRec r) {
        OrcaProfilerTracker.lockEnd(r.lockOwed, r.lockOwedT != 0 ? r.lockOwedT : System.nanoTime());
        r.lockTold = false;
    }

    /** Whether lock call `report` runs a lock call of its synchronizer's (H_NESTING_CLASSES). */
    static boolean nests(int report) {
        return ((OrcaEvents.H_NESTING_CLASSES >> ((report - OrcaEvents.H_LOCK) >> OrcaEvents.L_CALL_BITS)) & 1) != 0;
    }

    /** The end of the outermost hooked call, a lock method (three frames above its caller, for
     * the natives that take a stack: LOCK_EXIT_FRAMES). */
    @Hidden
    @DontInline
    static void lockDone(OrcaRec r, int outcome) {
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
            if (((report - OrcaEvents.H_LOCK) & CALL_MASK) >= OrcaEvents.L_UNLOCK) {
                // unlock: the hold ends when unlock was called (as LockRelease's time); a
                // tryUnlock that returned false released nothing (AQS's release returns false
                // for a release that left the lock held: one level less all the same). A
                // StampedLock converted to the other mode (tryConvertTo*, not followed) ends
                // the hold it has.
                boolean none = outcome == THREW
                        || outcome == FALSE && ((report - OrcaEvents.H_LOCK) & CALL_MASK) == OrcaEvents.L_TRY_UNLOCK;
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
                        // timed (OrcaSampler.begin), whose ends are the coarse clock's, or for one
                        // that may be long a precise end (unlockTime) and a start at the
                        // first tick after its coarse one (OrcaSampler.startedBy), as for monitors.
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
                            OrcaProfilerTracker.lockLongHold(enterSite, h, held, end, start);
                        } else if (third < 0 && !r.lockPrecise && paused == 0
                                && (h == 0 && r.quietCount(enterSite)
                                        || r.counted(OrcaEvents.R_LOCK_HOLD, enterSite, h, end))) {
                            // counted in the record before it, as a monitor's (OrcaRec.counted)
                            return;
                        }
                        r.put(OrcaEvents.R_LOCK_HOLD,
                                enterSite | (paused > 0 ? OrcaEvents.S_WAITED : 0), h, end, third);
                    }
                } else if (!none) {
                    // a hold this recording did not see begin: unlockTime read no clock
                    int h = hashNamed(r, sync);
                    OrcaProfilerTracker.lockHeldAtStart(report, sync, h, read,
                            r.lockT0 != 0 ? r.lockT0 : System.nanoTime());
                }
                if (traceAll) {
                    endTold(r, outcome, r.lockT0);
                }
                return;
            }
            boolean acquired = outcome == RETURNED || outcome == TRUE;
            // The hold's start: timed or only counted as for monitors (OrcaSampler.begin), the sample
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
                OrcaProfilerTracker.lockContended(report, sync, t, t,
                        OrcaProfilerTracker.lockOwner(report, sync), outcome);
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
    private static int threw(OrcaRec r, int report, Object sync, int flags) {
        if (!OrcaProfilerTracker.lockThrew(report, sync, r.holds(sync, flags))) {
            return THREW;
        }
        int outcome = ((report - OrcaEvents.H_LOCK) & CALL_MASK) >= OrcaEvents.L_UNLOCK ? RETURNED : TRUE;
        r.lockOwed = outcome;
        return outcome;
    }

    /** The end of the lock call the agent was told of (lockEnter, lockBlocked): `outcome` at
     * `t`, also kept as owed until lockEnd returns (see lockBegin). */
    @DontInline
    private static void endTold(OrcaRec r, int outcome, long t) {
        r.lockOwedT = t;
        OrcaProfilerTracker.lockEnd(outcome, t);
        r.lockTold = false;
    }

    /** The hash of `sync`, named (lockDone's rare unlock of a hold begun before the
     * recording). */
    @DontInline
    private static int hashNamed(OrcaRec r, Object sync) {
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
    private static void lostEnd(OrcaRec r) {
        Object sync = r.lockSync;
        int report = r.lockReport;
        r.lockSync = null;
        boolean taken = ((report - OrcaEvents.H_LOCK) & CALL_MASK) < OrcaEvents.L_UNLOCK && !r.lockRead && sync != null
                && OrcaProfilerTracker.lockThrew(report, sync, r.holds(sync, OrcaEvents.S_LOCK));
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
            OrcaProfilerTracker.lockEnd(taken ? TRUE : THREW, t > 0 ? t : System.nanoTime());
        }
        r.lockTold = false;
    }
}
