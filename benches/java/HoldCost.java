import java.util.concurrent.locks.ReentrantLock;

/**
 * The cost of an uncontended `synchronized` block in steady state: one thread enters and leaves
 * one monitor (with `juc`, locks and unlocks one ReentrantLock) in a loop for WARMUP_S seconds
 * (the JIT settles), then for MEASURE_S more, and prints the holds completed in that second
 * window per second as `throughput: N ops/s` (the line `orca bench --rate` reads). 1e9 / N is the time per hold, loop included; the difference
 * between two modes' figures is what each hold costs in the one with the agent. The clock is
 * read once per 65,536 holds. With `notify`, each hold also calls `notifyAll` on its monitor,
 * which no thread waits on (Derby does so at every release of a page latch): the difference
 * from the plain figure is what such a call costs inside a critical section.
 * Usage: java HoldCost WARMUP_S MEASURE_S [juc|notify]
 */
public class HoldCost {
    static final Object lock = new Object();
    static final ReentrantLock juc = new ReentrantLock();
    static long counter;

    public static void main(String[] args) {
        long warmup = (long) (Double.parseDouble(args[0]) * 1e9);
        long measure = (long) (Double.parseDouble(args[1]) * 1e9);
        long start = System.nanoTime();
        long warmEnd = start + warmup, end = warmEnd + measure;
        boolean j = args.length > 2 && args[2].equals("juc");
        boolean n = args.length > 2 && args[2].equals("notify");
        long holds = 0, atWarmEnd = -1, t0 = 0, t1;
        while (true) {
            if (j) {
                jucHolds();
            } else if (n) {
                for (int i = 0; i < 65_536; i++) {
                    synchronized (lock) {
                        counter += i & 7;
                        lock.notifyAll();
                    }
                }
            } else {
                // Here, not in a method of its own: compiled as one, C2 unrolls the loop and
                // coarsens the blocks of consecutive iterations into one hold (2.8 ns per
                // "hold" without the agent, against 10.4 for a real one), which the agent's
                // calls between them prevent; compiled on stack replacement, as here, each
                // iteration takes the monitor.
                for (int i = 0; i < 65_536; i++) {
                    synchronized (lock) {
                        counter += i & 7;
                    }
                }
            }
            holds += 65_536;
            long now = System.nanoTime();
            if (atWarmEnd < 0 && now >= warmEnd) {
                atWarmEnd = holds;
                t0 = now;
            } else if (atWarmEnd >= 0 && now >= end) {
                t1 = now;
                break;
            }
        }
        double rate = (holds - atWarmEnd) / ((t1 - t0) / 1e9);
        System.out.printf("throughput: %.1f ops/s%n", rate);
        System.out.printf("%.2f ns per hold (loop included), counter=%d%n", 1e9 / rate, counter);
    }

    static void jucHolds() {
        for (int i = 0; i < 65_536; i++) {
            juc.lock();
            try {
                counter += i & 7;
            } finally {
                juc.unlock();
            }
        }
    }
}
