import java.util.concurrent.locks.ReentrantLock;

/**
 * Long holds around the times a program is idle, when the agent's coarse clock stops ticking
 * (holdtiming=sampled, agent/src/recorder/clock.rs): `main` first takes a monitor in a tight
 * loop for BUSY_MS (far more holds than the agent times, and the clock ticks), then
 *  - "span": takes another monitor and sleeps IDLE_MS inside it, the process idle meanwhile;
 *  - sleeps IDLE_MS holding nothing, takes the tight monitor BURST times (enough for the
 *    agent's sampler to stop timing every hold, were the clock not stale, in the few ms before
 *    the ticker looks again), then "after": a monitor held HOLD_MS;
 *  - the same again, "lock": a ReentrantLock held HOLD_MS.
 * Each long hold first sleeps LEAD_MS, then measures its sleep from inside ("inner") and the
 * whole hold from outside ("outer": before the enter, after the exit returned): the agent's
 * hold must lie within outer, and, as it is timed from at most a tick (plus the ticker's
 * lateness, under LEAD_MS) after its start, must contain inner. LEAD_MS is 20, not 5: the
 * test failed twice beside other tests' JVMs (bounds missed, which side not kept), and a
 * ticker late by more than the lead is the one way to measure a hold shorter than inner.
 * Usage: IdleHolds, or IdleHolds idle (main only prints "idle", sleeps 3 s, prints "done" and
 * sleeps half a second more before it returns: the test reads the ticker's CPU in between).
 */
public class IdleHolds {
    static final Object tight = new Object(), span = new Object(), after = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static final long BUSY_MS = 300, IDLE_MS = 1000, HOLD_MS = 300, LEAD_MS = 20;
    static final int BURST = 20_000;
    static long sum;

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("idle")) {
            System.out.println("idle");
            System.out.flush();
            Thread.sleep(3000);
            System.out.println("done");
            System.out.flush();
            Thread.sleep(500);
            return;
        }
        long until = System.nanoTime() + BUSY_MS * 1_000_000;
        while (System.nanoTime() < until) {
            burst(10_000);
        }
        StringBuilder out = new StringBuilder();
        long before = System.nanoTime();
        long inner;
        synchronized (span) { // @span
            Thread.sleep(LEAD_MS);
            long t = System.nanoTime();
            Thread.sleep(IDLE_MS);
            inner = System.nanoTime() - t;
        }
        out.append("span=").append(inner).append(',').append(System.nanoTime() - before);

        Thread.sleep(IDLE_MS);
        burst(BURST);
        before = System.nanoTime();
        synchronized (after) { // @after
            Thread.sleep(LEAD_MS);
            long t = System.nanoTime();
            Thread.sleep(HOLD_MS);
            inner = System.nanoTime() - t;
        }
        out.append(" after=").append(inner).append(',').append(System.nanoTime() - before);

        Thread.sleep(IDLE_MS);
        burst(BURST);
        before = System.nanoTime();
        lock.lock(); // @lock
        try {
            Thread.sleep(LEAD_MS);
            long t = System.nanoTime();
            Thread.sleep(HOLD_MS);
            inner = System.nanoTime() - t;
        } finally {
            lock.unlock();
        }
        out.append(" lock=").append(inner).append(',').append(System.nanoTime() - before);
        System.out.println(out + " sum=" + sum);
    }

    static void burst(int n) {
        for (int i = 0; i < n; i++) {
            synchronized (tight) { // @tight
                sum++;
            }
        }
    }
}
