public class FixedHolds {
    static final Object lock = new Object();
    static long counter;
    public static void main(String[] args) {
        long n = Long.parseLong(args[0]);
        for (long k = 0; k < n; k += 65_536) {
            for (int i = 0; i < 65_536; i++) {
                synchronized (lock) {
                    counter += i & 7;
                }
            }
        }
        System.out.println(counter);
    }
}
