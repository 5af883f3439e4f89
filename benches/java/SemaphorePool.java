import java.util.concurrent.Semaphore;

/**
 * A pool of 4 resources guarded by a Semaphore, used by 8 threads: each takes a permit,
 * works a little on a pooled buffer and gives it back, 20,000 x SCALE times in all.
 * Usage: java SemaphorePool SCALE
 */
public class SemaphorePool {
    static final int RESOURCES = 4;
    static final Semaphore permits = new Semaphore(RESOURCES);
    static final long[][] pool = new long[RESOURCES][64];
    static final boolean[] inUse = new boolean[RESOURCES];

    static int grab() {
        synchronized (inUse) {
            for (int i = 0; i < RESOURCES; i++) {
                if (!inUse[i]) {
                    inUse[i] = true;
                    return i;
                }
            }
        }
        throw new IllegalStateException("no free resource with a permit held");
    }

    static void release(int i) {
        synchronized (inUse) {
            inUse[i] = false;
        }
    }

    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int threads = 8;
        int per = 20_000 * scale / threads;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < per; i++) {
                    permits.acquireUninterruptibly();
                    int r = grab();
                    try {
                        long[] b = pool[r];
                        for (int k = 0; k < b.length; k++) b[k] += k ^ i;
                    } finally {
                        release(r);
                        permits.release();
                    }
                }
            }, "worker-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long s = 0;
        for (long[] b : pool) for (long v : b) s += v;
        System.out.println("sum=" + s);
    }
}
