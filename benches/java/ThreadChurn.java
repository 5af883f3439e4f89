/**
 * Thread churn: 5,000 x SCALE short threads, started 8 at a time and joined, each doing a
 * little work and one synchronized update. Usage: java ThreadChurn SCALE, or java ThreadChurn
 * steady WARMUP_S MEASURE_S (threads joined per second after the warm-up, the batches started
 * by a second thread; see Steady).
 */
public class ThreadChurn {
    static final Object lock = new Object();
    static long total;

    static void churn(long n) throws InterruptedException {
        int batch = 8;
        for (long i = 0; i < n; i += batch) {
            Thread[] ts = new Thread[batch];
            for (int t = 0; t < batch; t++) {
                final long seed = i + t;
                ts[t] = new Thread(() -> {
                    long acc = seed;
                    for (int k = 0; k < 1_000; k++) acc = acc * 6364136223846793005L + 1442695040888963407L;
                    synchronized (lock) {
                        total += acc & 0xff;
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) t.join();
            Steady.done(0, i + batch);
        }
    }

    public static void main(String[] args) throws Exception {
        if (Steady.requested(args, 0)) {
            new Thread(() -> {
                try {
                    churn(Long.MAX_VALUE - 8);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "churn").start();
            Steady.measure(args, 0, "threads");
        }
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        churn(5_000L * scale);
        System.out.println("total=" + total);
    }
}
