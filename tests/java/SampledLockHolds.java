import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Sampled hold timing of java.util.concurrent locks (holdtiming=sampled), as SampledHolds for
 * monitors: `main` takes a ReentrantLock TIGHT times in a loop (far more holds a second than
 * the agent times) and, every TIGHT/LONGS of them, holds a read-write lock's read view for
 * 100 ms, measuring that hold from outside (before lock(), after unlock() returned: the agent's
 * hold lies within). It prints how long the whole loop took. Thread `slow` takes a third lock
 * SLOW times, 1 ms apart: a rate at which every hold is timed.
 * Usage: SampledLockHolds TIGHT
 */
public class SampledLockHolds {
    static final ReentrantLock tight = new ReentrantLock(), slowLock = new ReentrantLock();
    static final ReentrantReadWriteLock held = new ReentrantReadWriteLock();
    static final int LONGS = 5, SLOW = 200;
    static long sum;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Thread slow = new Thread(() -> {
            for (int i = 0; i < SLOW; i++) {
                slowLock.lock(); // @slow
                try {
                    sum++;
                } finally {
                    slowLock.unlock();
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
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            tight.lock(); // @tight
            try {
                sum++;
            } finally {
                tight.unlock();
            }
            if (i % (n / LONGS) == 0) {
                long before = System.nanoTime();
                held.readLock().lock(); // @long
                try {
                    Thread.sleep(100);
                } finally {
                    held.readLock().unlock();
                }
                outer.append(' ').append(System.nanoTime() - before);
            }
        }
        long loop = System.nanoTime() - start;
        slow.join();
        System.out.println("outer_ns=" + outer.toString().trim() + " loop_ns=" + loop);
    }
}
