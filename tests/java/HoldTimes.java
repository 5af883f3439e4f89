/**
 * Holds one lock around Thread.sleep(50) a few times and prints the hold durations it measured
 * itself with System.nanoTime (the clock of the log's timestamps), inside the synchronized
 * block: the agent's MonitorEntered..MonitorExit interval encloses each of them.
 */
public class HoldTimes {
    static final Object lock = new Object();
    static final int HOLDS = 5;

    public static void main(String[] args) throws Exception {
        long total = 0;
        long max = 0;
        StringBuilder each = new StringBuilder();
        for (int i = 0; i < HOLDS; i++) {
            long start;
            long end;
            synchronized (lock) { // @hold
                start = System.nanoTime();
                Thread.sleep(50);
                end = System.nanoTime();
            }
            long ns = end - start;
            total += ns;
            max = Math.max(max, ns);
            each.append(' ').append(ns);
        }
        System.out.printf("lock=%08X holds=%d total_ns=%d max_ns=%d each_ns=%s%n",
                System.identityHashCode(lock), HOLDS, total, max, each.toString().trim());
    }
}
