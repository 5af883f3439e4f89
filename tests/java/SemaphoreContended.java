import java.util.concurrent.Semaphore;

/**
 * THREADS threads share a Semaphore of PERMITS permits, each taking one ROUNDS times around a
 * little work (with more threads than permits, some acquisitions queue and some releases find
 * threads queued, as a pool's do). Prints `contended done TOTAL` (acquisitions made).
 * Usage: SemaphoreContended THREADS PERMITS ROUNDS
 */
public class SemaphoreContended {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        Semaphore pool = new Semaphore(Integer.parseInt(args[1]));
        int rounds = Integer.parseInt(args[2]);
        long[] done = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    pool.acquireUninterruptibly(); // @pool-acquire
                    long x = 0;
                    for (int k = 0; k < 200; k++) {
                        x += k ^ i;
                    }
                    sink = x;
                    done[id]++;
                    pool.release(); // @pool-release
                }
            }, "worker-" + t);
            ts[t].start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            total += done[t];
        }
        System.out.println("contended done " + total);
    }
}
