/**
 * Sampled hold timing (holdtiming=sampled): a thread that locks fast and one that locks slowly.
 * `main` takes one monitor TIGHT times in a loop (far more holds a second than the agent times)
 * and, every TIGHT/LONGS of them, holds another for 100 ms, measuring that hold from outside
 * the block (before it enters, after it leaves: the agent's hold lies within). Thread `slow`
 * holds a third monitor SLOW times, 1 ms apart: a rate at which every hold is timed. Thread
 * `bursts` takes a fourth BURST times in a row, then sleeps 20 ms, BURSTS times: fewer holds per
 * 10 ms than a thread that runs all the time has timed, but the thread runs a few percent of the
 * time, and after its first half-second its budget is scaled to that share.
 * Usage: SampledHolds TIGHT
 */
public class SampledHolds {
    static final Object tight = new Object(), held = new Object(), slowLock = new Object(),
            burstLock = new Object();
    static final int LONGS = 5, SLOW = 200, BURST = 400, BURSTS = 50;
    static long burstSum;
    static long sum;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Thread slow = new Thread(() -> {
            for (int i = 0; i < SLOW; i++) {
                synchronized (slowLock) { // @slow
                    sum++;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "slow");
        slow.start();
        Thread bursts = new Thread(() -> {
            for (int b = 0; b < BURSTS; b++) {
                for (int i = 0; i < BURST; i++) {
                    synchronized (burstLock) { // @burst
                        burstSum++;
                    }
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "bursts");
        bursts.start();
        StringBuilder outer = new StringBuilder();
        for (int i = 0; i < n; i++) {
            synchronized (tight) { // @tight
                sum++;
            }
            if (i % (n / LONGS) == 0) {
                long before = System.nanoTime();
                synchronized (held) { // @long
                    Thread.sleep(100);
                }
                outer.append(' ').append(System.nanoTime() - before);
            }
        }
        slow.join();
        bursts.join();
        System.out.println("outer_ns=" + outer.toString().trim());
    }
}
