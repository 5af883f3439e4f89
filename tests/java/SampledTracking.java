import java.util.concurrent.locks.ReentrantLock;

/**
 * Sampled tracking (tracking=sampled): `main` locks a fresh pair of monitors per round, the
 * second nested in the first (a database's row, Derby's shape), and takes a long-lived
 * ReentrantLock in each round, far more holds a second than the agent identifies; every
 * ROUNDS/LONGS rounds it holds a fresh monitor for 100 ms, and waits 1 ms inside a fresh
 * monitor. Thread `slow` takes two long-lived monitors, b nested in a, SLOW times 1 ms apart:
 * a rate at which every hold is identified.
 * Usage: SampledTracking ROUNDS
 */
public class SampledTracking {
    static final Object a = new Object(), b = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static final int LONGS = 5, SLOW = 200;
    static long sum;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Thread slow = new Thread(() -> {
            for (int i = 0; i < SLOW; i++) {
                synchronized (a) { // @slowOuter
                    synchronized (b) { // @slowInner
                        sum++;
                    }
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "slow");
        slow.start();
        for (int i = 0; i < n; i++) {
            Object row = new Object(), cell = new Object();
            synchronized (row) { // @outer
                synchronized (cell) { // @inner
                    sum++;
                }
            }
            lock.lock(); // @lock
            try {
                sum++;
            } finally {
                lock.unlock();
            }
            if (i % (n / LONGS) == 0) {
                Object held = new Object();
                synchronized (held) { // @long
                    Thread.sleep(100);
                }
                Object waited = new Object();
                synchronized (waited) { // @waited
                    waited.wait(1);
                }
            }
        }
        slow.join();
        System.out.println("sum=" + sum);
    }
}
