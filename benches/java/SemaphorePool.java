import java.util.concurrent.Semaphore;

/**
 * A pool of 4 resources guarded by a Semaphore, used by 8 threads: each takes a permit,
 * works a little on a pooled buffer and gives it back, 20,000 x SCALE times in all.
 * Usage: java SemaphorePool SCALE, or java SemaphorePool steady WARMUP_S MEASURE_S (permits
 * taken per second after the warm-up; see Steady)
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
        boolean steady = Steady.requested(args, 0);
        int scale = steady ? 0 : args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int threads = 8;
        long per = steady ? Long.MAX_VALUE : 20_000L * scale / threads;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                for (long i = 0; i < per; i++) {
                    permits.acquireUninterruptibly();
                    int r = grab();
                    try {
                        long[] b = pool[r];
                        for (int k = 0; k < b.length; k++) b[k] += k ^ i;
                    } finally {
                        release(r);
                        permits.release();
                    }
                    Steady.done(id, i + 1);
                }
            }, "worker-" + t);
            ts[t].start();
        }
        if (steady) Steady.measure(args, 0, "permits taken");
        for (Thread t : ts) t.join();
        long s = 0;
        for (long[] b : pool) for (long v : b) s += v;
        System.out.println("sum=" + s);
    }
}
