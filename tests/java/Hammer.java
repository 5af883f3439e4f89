/**
 * Load for scripts/stress: 16 threads hammer 4 monitors for SECONDS (args[0]); each increment
 * is a synchronized block, every 64th also a notifyAll. Prints only what does not depend on
 * timing, so the output is the same with and without the agent.
 */
public class Hammer {
    static final int THREADS = 16;
    static final Object[] LOCKS = {new Object(), new Object(), new Object(), new Object()};
    static final long[] COUNTS = new long[LOCKS.length];

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long[] mine = new long[THREADS];
        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                long n = 0;
                int k = id;
                while ((n & 1023) != 0 || System.nanoTime() < end) {
                    Object lock = LOCKS[k++ & 3];
                    synchronized (lock) {
                        COUNTS[(k - 1) & 3]++;
                        if ((n & 63) == 0) {
                            lock.notifyAll();
                        }
                    }
                    n++;
                }
                mine[id] = n;
            }, "hammer-" + i);
            ts[i].start();
        }
        long total = 0;
        for (int i = 0; i < THREADS; i++) {
            ts[i].join();
            total += mine[i];
        }
        long counted = 0;
        for (int i = 0; i < LOCKS.length; i++) {
            synchronized (LOCKS[i]) {
                counted += COUNTS[i];
            }
        }
        System.out.println("hammer: " + THREADS + " threads on " + LOCKS.length
                + " monitors, counts " + (total == counted ? "consistent" : "INCONSISTENT"));
        System.err.println("hammer: " + total + " synchronized blocks");
    }
}
