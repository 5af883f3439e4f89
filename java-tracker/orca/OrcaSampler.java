/*
 * OrcaSampler: which holds are timed (holdtiming=sampled) and which identified
 * (tracking=sampled), and the coarse clock they read.
 *
 * Part of the tracker (see OrcaProfilerTracker.java); compiled with it by agent/build.rs and
 * defined with it in the boot loader, as java.lang.OrcaSampler.
 */
package orca;

import static orca.OrcaProfilerTracker.coarseClock;

import jdk.internal.vm.annotation.DontInline;

/**
 * A thread's sample: its plans for the holds it times and identifies, the share of a core
 * that scales their budgets, the holds it left unidentified counted per site, and the reads
 * of the agent's coarse clock (agent/src/recorder/clock.rs, Coarse: its layout is generated
 * from the agent's, as OrcaEvents.CLOCK_*).
 *
 * One of the parts of a thread's OrcaRec, each a class of its own in one chain (OrcaHeld,
 * OrcaHashCache, OrcaSampler, OrcaOrderSlots, OrcaLockCalls, OrcaRec): one object per
 * thread, so that a hold reads its fields with no pointer between concerns (Derby's working
 * set evicts the cache lines a hold reads between its holds). Only its own thread writes it;
 * the agent reads it (see OrcaRec).
 */
abstract class OrcaSampler extends OrcaHashCache {
    /** null where java.base's Unsafe is out of reach (a test's copy on the class path). */
    static final jdk.internal.misc.Unsafe U;

    static {
        jdk.internal.misc.Unsafe u = null;
        try {
            u = jdk.internal.misc.Unsafe.getUnsafe();
        } catch (Throwable t) {
            u = null;
        }
        U = u;
    }

    /** The ticks the coarse clock keeps after its current value (a power of two: the coarse
     * time's low bits are its tick's number modulo TICKS), and the ticker's period (ns). */
    static final int TICKS = OrcaEvents.CLOCK_TICKS;
    static final long TICK = OrcaEvents.CLOCK_TICK;
    /** The coarse clock while the ticker does not tick (clock.rs, STALE): later than any time,
     * so it ends every sampling window (begin) and makes every hold not timed look long. */
    static final long STALE = OrcaEvents.CLOCK_STALE;
    /** The offsets of the clock's ring of ticks and of the word the tracker sets when it uses
     * the clock (clock.rs, Coarse.ring and Coarse.used), from its address. */
    static final long RING = OrcaEvents.CLOCK_RING;
    static final long USED = OrcaEvents.CLOCK_USED;
    /** The offset of the time from which guarded holds are sampled (clock.rs, Coarse.sampling:
     * STALE until then), from the clock's address. */
    static final long SAMPLING = OrcaEvents.CLOCK_SAMPLING;

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
    final int scaled(int budget, long c) {
        long wall = c - shareStart;
        if (wall >= WINDOW || wall < 0) {
            long cpu = -1;
            try {
                cpu = OrcaProfilerTracker.threadCpu();
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
    /** The thread's xorshift. Its seed is mixed (murmur3's finalizer) from the record's
     * identity hash and the clock: a new thread's first identity hashes come from HotSpot's
     * per-thread generator seeded in sequence, and taken raw they made a thread's first draw
     * of the guarded sites' sample land 17% too often (3,000 threads of one hold each: 3,504
     * estimated, every run). */
    int seed = mixed(System.identityHashCode(this) ^ (int) System.nanoTime()) | 1;

    private static int mixed(int h) {
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        h ^= h >>> 16;
        return h;
    }

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
    final long coarse(long addr) {
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
    final long startedBy(long addr, long c0, long t) {
        int next = (int) (c0 + 1) & (TICKS - 1);
        long v = U.getLongOpaque(null, addr + RING + 8L * next);
        return v > c0 && v - c0 < TICKS * TICK && v <= t ? v : c0;
    }

    /**
     * tracking=sampled: the monitor about to be held is left unidentified. Nested, when
     * the outermost entry was left so; outermost, unless it is its turn in a plan like
     * sampled timing's (timed): one outermost hold in `trackStride` at random is
     * identified, with everything nested in it, the stride set per window from the holds
     * the thread took in the last (all of them, nested too: `pushes`), so that it
     * identifies about TRACK_BUDGET holds per window, and every one while it takes fewer
     * (small programs and the tests stay exact). Why the holds and not the outermost ones:
     * Derby nests a statement's hundreds of holds in one (its connection's monitor).
     */
    final boolean untracked() {
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
            // The ticker is idle: identified, as such a hold is timed (timed), and the
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

    /**
     * Guarded sites (guards=on): outermost holds until the next one in the sample (this one
     * included), and the stride it was drawn with (see OrcaProfilerTracker, "Guarded
     * sites"). True when this outermost hold is outside the sample. Inline: a decrement and
     * a branch; the draw is out of line.
     */
    final boolean gateOut() {
        if (gateNest == 0 && (--gateSkip > 0 ? false : gateTurn())) {
            return false; // in the sample
        }
        if (coarseClock == 0) {
            return false;
        }
        gateNest++;
        return true;
    }

    /** Outermost holds after this one until the next in the sample is due (gateTurn). */
    int gateSkip;
    /** No draw made since the sample began for this thread (a new thread, or the budget
     * just passed): its next outermost hold takes its own chance first. */
    boolean gateFresh = true;
    /**
     * Guarded holds outside the sample the thread is inside (their exits count it down): a
     * hold nested in one is left out with it, as one nested in a followed hold is followed.
     * Why: the sample is of outermost holds; a reentrant acquisition drawn inside an outer one
     * left out would count as a hold of its own (a synchronized method calling another of its
     * object's), which it is not.
     */
    int gateNest;

    /**
     * The guarded sites' countdown ran out, or has not begun: whether this outermost hold is
     * in the sample. Before the agent's ticker says the program passed the exact budget
     * (clock.rs, Coarse.sampling), every hold is, and counts towards the budget; after it,
     * each is drawn on its own with probability 1/GATE_PERIOD, the gaps between drawn holds
     * geometric (gateGap), so that a thread's first hold and its thousandth have the same
     * chance (a thread that takes one hold in its life is counted as one, on average).
     * Out of line.
     */
    @DontInline
    private boolean gateTurn() {
        long a = coarseClock;
        boolean sampling = a != 0 && U != null && U.getLongOpaque(null, a + SAMPLING) != STALE;
        if (!sampling) {
            if (a != 0 && U != null && (++gateHolds & 255) == 0) {
                // the program's holds so far, for the ticker's budget (clock.rs, Coarse.holds)
                U.getAndAddLong(null, a + HOLDS, 256);
            }
            gateSkip = 1;
            gateFresh = true;
            return true;
        }
        if (gateFresh) {
            gateFresh = false;
            int g = gateGap();
            if (g > 1) {
                gateSkip = g - 1;
                return false;
            }
        }
        gateSkip = gateGap();
        return true;
    }

    /** The number of outermost holds until the next in the sample, this one excluded, 1 or
     * more: geometric with mean GATE_PERIOD (a power of two), from the thread's xorshift,
     * each group of its bits zero with probability 1/GATE_PERIOD. */
    private int gateGap() {
        final int bits = Integer.numberOfTrailingZeros(OrcaEvents.GATE_PERIOD);
        final int mask = OrcaEvents.GATE_PERIOD - 1;
        int n = 1;
        while (n < MAX_STRIDE) {
            int x = seed;
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            seed = x;
            for (int i = 0; i + bits <= 32; i += bits, x >>>= bits) {
                if ((x & mask) == 0) {
                    return n;
                }
                n++;
            }
        }
        return n;
    }

    /** Outermost holds at guarded sites before the sample began, modulo 256. */
    int gateHolds;
    static final long HOLDS = OrcaEvents.CLOCK_HOLDS;

    /** Holds identified per WINDOW per thread, about (tracking=sampled), as sampled
     * timing's BUDGET. */
    static final int TRACK_BUDGET = 500;
    /** Outermost holds until the next identified one (this one included), the plan's
     * stride and window start, and `pushes` then (see untracked). */
    int trackSkip;
    int trackStride = 1;
    long trackStart;
    int trackPushes;

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
    final boolean quietCount(int site) {
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
    final long quietBegin(long addr) {
        return ~coarse(addr);
    }

    /**
     * The start of an outermost hold: System.nanoTime() for a hold that is timed, or the
     * coarse clock's value inverted (negative) for one that is only counted.
     */
    final long begin(long addr) {
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
                    OrcaProfilerTracker.wakeClock();
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
}
