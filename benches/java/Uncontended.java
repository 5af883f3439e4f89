/**
 * Uncontended synchronized hot loop: one thread enters and leaves one monitor
 * 1,000,000 x SCALE times. Usage: java Uncontended SCALE
 */
public class Uncontended {
    static final Object lock = new Object();
    static long counter;

    public static void main(String[] args) {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long n = 1_000_000L * scale;
        for (long i = 0; i < n; i++) {
            synchronized (lock) {
                counter += i & 7;
            }
        }
        System.out.println("counter=" + counter);
    }
}
