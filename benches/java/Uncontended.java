/**
 * Uncontended synchronized hot loop: one thread enters and leaves one monitor
 * 1,000,000 x SCALE times. Usage: java Uncontended SCALE, or java Uncontended steady
 * WARMUP_S MEASURE_S (blocks per second after the warm-up, counted by a second thread that
 * runs the loop; see Steady; HoldCost measures the same without the counting).
 */
public class Uncontended {
    static final Object lock = new Object();
    static long counter;

    static void loop(long n) {
        for (long i = 0; i < n; i++) {
            synchronized (lock) {
                counter += i & 7;
            }
            Steady.done(0, i + 1);
        }
    }

    public static void main(String[] args) throws Exception {
        if (Steady.requested(args, 0)) {
            new Thread(() -> loop(Long.MAX_VALUE), "uncontended").start();
            Steady.measure(args, 0, "synchronized blocks");
        }
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        loop(1_000_000L * scale);
        System.out.println("counter=" + counter);
    }
}
