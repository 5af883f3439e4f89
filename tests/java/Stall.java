import java.util.concurrent.locks.ReentrantLock;

/**
 * THREADS threads (args[0]) for SECONDS (args[1]) take a monitor and a ReentrantLock in turn,
 * timing every acquisition and release: prints the longest one, in microseconds, and how many
 * there were. Every report to the agent happens inside a timed span, so the longest span
 * bounds how long the agent kept a program thread.
 */
public class Stall {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static long count;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        long[] longest = new long[threads];
        long[] spans = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int me = i;
            ts[i] = new Thread(() -> {
                long max = 0;
                long n = 0;
                long t0 = System.nanoTime();
                while (t0 < end) {
                    synchronized (monitor) {
                        count++;
                    }
                    lock.lock();
                    try {
                        count++;
                    } finally {
                        lock.unlock();
                    }
                    long t1 = System.nanoTime();
                    max = Math.max(max, t1 - t0);
                    n++;
                    t0 = t1;
                }
                longest[me] = max;
                spans[me] = n;
            }, "stall-" + i);
            ts[i].start();
        }
        long max = 0;
        long n = 0;
        for (int i = 0; i < threads; i++) {
            ts[i].join();
            max = Math.max(max, longest[i]);
            n += spans[i];
        }
        System.out.println("longest_us=" + max / 1000 + " spans=" + n);
    }
}
