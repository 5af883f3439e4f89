/**
 * Thread churn: 5,000 x SCALE short threads, started 8 at a time and joined, each doing a
 * little work and one synchronized update. Usage: java ThreadChurn SCALE
 */
public class ThreadChurn {
    static final Object lock = new Object();
    static long total;

    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int n = 5_000 * scale;
        int batch = 8;
        for (int i = 0; i < n; i += batch) {
            Thread[] ts = new Thread[batch];
            for (int t = 0; t < batch; t++) {
                final int seed = i + t;
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
        }
        System.out.println("total=" + total);
    }
}
