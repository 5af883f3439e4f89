/**
 * THREADS daemon threads (args[0]) take monitors in a loop that never ends, while main runs for
 * SECONDS (args[1]) and returns: the JVM exits with every one of them still running, so the
 * agent's exit drain has a batch or two of each to write. Prints only what does not depend on
 * timing.
 */
public class BusyExit {
    static final Object[] LOCKS = {new Object(), new Object(), new Object(), new Object()};
    static final long[] COUNTS = new long[LOCKS.length];

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread t = new Thread(() -> {
                int k = id;
                while (true) {
                    Object lock = LOCKS[k++ & 3];
                    synchronized (lock) {
                        COUNTS[(k - 1) & 3]++;
                    }
                }
            }, "busy-" + i);
            t.setDaemon(true);
            t.start();
        }
        while (System.nanoTime() < end) {
            Thread.sleep(10);
        }
        System.out.println("busy exit: " + threads + " threads still running");
        System.out.flush();
    }
}
