import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Steady-state measurement for the micro workloads (`PROGRAM steady WARMUP_S MEASURE_S`).
 *
 * A run of a few hundred milliseconds measures the JVM's start-up and the JIT, not what a
 * profiler costs a program that runs for days, so in steady mode a workload's threads loop
 * until the JVM exits and count the operations they complete; the main thread lets WARMUP_S
 * seconds pass, counts the operations completed in the next MEASURE_S seconds and prints them
 * per second as `throughput: N ops/s` (the line `orca bench --rate` reads), then ends the JVM.
 * A slow recorder is measured over the same window as a fast one, so no run takes longer than
 * its warm-up and window.
 *
 * Each counting thread owns a slot and publishes its running total with a release store (a
 * plain store on x86), padded to its own cache line, so counting costs every mode the same
 * and does not itself make the threads meet.
 */
final class Steady {
    private static final int PAD = 16;
    private static final int SLOTS = 64;
    private static final AtomicLongArray counts = new AtomicLongArray(SLOTS * PAD);

    private Steady() {}

    /** Whether the program was asked for steady mode: its arguments from `at` are `steady WARMUP_S MEASURE_S`. */
    static boolean requested(String[] args, int at) {
        return args.length == at + 3 && args[at].equals("steady");
    }

    /** Publishes that the thread owning `slot` has completed `total` operations in all. */
    static void done(int slot, long total) {
        counts.lazySet(slot * PAD, total);
    }

    private static long sum() {
        long s = 0;
        for (int i = 0; i < SLOTS; i++) s += counts.get(i * PAD);
        return s;
    }

    /**
     * Waits out the warm-up, measures the window, prints the throughput and ends the JVM (the
     * workload's threads loop for ever). `what` names the operation in the second line.
     */
    static void measure(String[] args, int at, String what) throws InterruptedException {
        long warmup = (long) (Double.parseDouble(args[at + 1]) * 1000);
        long window = (long) (Double.parseDouble(args[at + 2]) * 1000);
        Thread.sleep(warmup);
        long before = sum(), t0 = System.nanoTime();
        Thread.sleep(window);
        long after = sum(), t1 = System.nanoTime();
        double rate = (after - before) / ((t1 - t0) / 1e9);
        System.out.printf("throughput: %.1f ops/s%n", rate);
        System.out.printf("%d %s in %.1f s after %.1f s of warm-up%n", after - before, what, (t1 - t0) / 1e9, warmup / 1e3);
        System.out.flush();
        System.exit(0);
    }
}
