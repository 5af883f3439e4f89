import java.util.concurrent.locks.ReentrantLock;

/**
 * A counter guarded by a ReentrantLock, incremented by 4 threads, 200,000 x SCALE times in
 * all, each increment a lock/unlock pair: the j.u.c. counterpart of Contended.
 * Usage: java ReentrantLockHeavy SCALE
 */
public class ReentrantLockHeavy {
    static final ReentrantLock lock = new ReentrantLock();
    static long counter;

    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int threads = 4;
        int per = 200_000 * scale / threads;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < per; i++) {
                    lock.lock();
                    try {
                        counter++;
                    } finally {
                        lock.unlock();
                    }
                }
            }, "worker-" + t);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (counter != (long) per * threads) {
            throw new IllegalStateException("lost increments: " + counter);
        }
        System.out.println("counter " + counter);
    }
}
