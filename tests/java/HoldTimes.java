/**
 * Holds one lock around Thread.sleep(50) a few times and prints the hold durations it measured
 * itself with System.nanoTime (the clock of the log's timestamps), inside the synchronized
 * block: the agent's MonitorEntered..MonitorExit interval encloses each of them. It also
 * prints each hold measured from just before the block to just after it ("outer"), which
 * encloses the agent's interval: program order forces both bounds, however busy the machine.
 */
public class HoldTimes {
    static final Object lock = new Object();
    static final int HOLDS = 5;

    public static void main(String[] args) throws Exception {
        long total = 0;
        long max = 0;
        long outerTotal = 0;
        long outerMax = 0;
        StringBuilder each = new StringBuilder();
        for (int i = 0; i < HOLDS; i++) {
            long start;
            long end;
            long outerStart = System.nanoTime();
            synchronized (lock) { // @hold
                start = System.nanoTime();
                Thread.sleep(50);
                end = System.nanoTime();
            }
            long outer = System.nanoTime() - outerStart;
            outerTotal += outer;
            outerMax = Math.max(outerMax, outer);
            long ns = end - start;
            total += ns;
            max = Math.max(max, ns);
            each.append(' ').append(ns);
        }
        System.out.printf("lock=%08X holds=%d total_ns=%d max_ns=%d outer_total_ns=%d outer_max_ns=%d each_ns=%s%n",
                System.identityHashCode(lock), HOLDS, total, max, outerTotal, outerMax,
                each.toString().trim());
    }
}
