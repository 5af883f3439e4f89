/**
 * Sampled hold timing (holdtiming=sampled): a thread that locks fast and one that locks slowly.
 * `main` takes one monitor TIGHT times in a loop (far more holds a second than the agent times)
 * and, every TIGHT/LONGS of them, holds another for 100 ms, measuring that hold from outside
 * the block (before it enters, after it leaves: the agent's hold lies within). Thread `slow`
 * holds a third monitor SLOW times, 1 ms apart: a rate at which every hold is timed.
 * Usage: SampledHolds TIGHT
 */
public class SampledHolds {
    static final Object tight = new Object(), held = new Object(), slowLock = new Object();
    static final int LONGS = 5, SLOW = 200;
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
        System.out.println("outer_ns=" + outer.toString().trim());
    }
}
