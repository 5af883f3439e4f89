/**
 * A `--rate` program for `orca bench --modes attach` (cli/tests/attach.rs): a worker thread
 * runs batches of calls of a method with a `synchronized` block, counting them; a batch
 * returns now and then, so that no frame that does the work runs across the attach or the
 * detach (such a frame keeps its old code, and HotSpot does not compile it again); the main thread waits WARMUP_MS, counts the
 * iterations of the next WINDOW_MS and prints `throughput: N ops/s`. With
 * `-Dorca.bench.windows=stdin` it measures one more window (after the warm-up again) per line
 * of its standard input, and exits at the end of it.
 */
public class AttachRate {
    static final Object lock = new Object();
    static volatile long count;

    static void step() {
        synchronized (lock) {
            count++;
        }
    }

    static void batch() {
        for (int i = 0; i < 100_000; i++) {
            step();
        }
    }

    public static void main(String[] args) throws Exception {
        long warmup = Long.parseLong(args[0]);
        long window = Long.parseLong(args[1]);
        Thread worker = new Thread(() -> {
            while (true) {
                batch();
            }
        }, "worker");
        worker.setDaemon(true);
        worker.start();
        boolean more = "stdin".equals(System.getProperty("orca.bench.windows"));
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        do {
            Thread.sleep(warmup);
            long before = count, t0 = System.nanoTime();
            Thread.sleep(window);
            long after = count, t1 = System.nanoTime();
            System.out.printf("throughput: %.1f ops/s%n", (after - before) / ((t1 - t0) / 1e9));
            System.out.flush();
        } while (more && in.readLine() != null);
        System.exit(0);
    }
}
