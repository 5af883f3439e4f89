import java.util.concurrent.locks.ReentrantLock;

/**
 * A counter guarded by a ReentrantLock, incremented by 4 threads, 200,000 x SCALE times in
 * all, each increment a lock/unlock pair: the j.u.c. counterpart of Contended.
 * Usage: java ReentrantLockHeavy SCALE, or java ReentrantLockHeavy steady WARMUP_S MEASURE_S
 * (increments per second after the warm-up; see Steady)
 */
public class ReentrantLockHeavy {
    static final ReentrantLock lock = new ReentrantLock();
    static long counter;

    public static void main(String[] args) throws Exception {
        boolean steady = Steady.requested(args, 0);
        int scale = steady ? 0 : args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int threads = 4;
        long per = steady ? Long.MAX_VALUE : 200_000L * scale / threads;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                for (long i = 0; i < per; i++) {
                    lock.lock();
                    try {
                        counter++;
                    } finally {
                        lock.unlock();
                    }
                    Steady.done(id, i + 1);
                }
            }, "worker-" + t);
        }
        for (Thread t : ts) {
            t.start();
        }
        if (steady) {
            Steady.measure(args, 0, "increments");
        }
        for (Thread t : ts) {
            t.join();
        }
        if (counter != per * threads) {
            throw new IllegalStateException("lost increments: " + counter);
        }
        System.out.println("counter " + counter);
    }
}
