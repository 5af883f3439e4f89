/**
 * The agent's hot path, per event: one thread enters and leaves one uncontended monitor
 * 200,000 x SCALE times, 40 calls deep (so that stack traces of 32 frames have frames to
 * walk). Run with no agent and under mode=instrument at several stack depths; the extra wall
 * time over the run without agent, divided by the events, is the cost of one event.
 * Usage: java PerEvent SCALE
 */
public class PerEvent {
    static final Object lock = new Object();
    static long counter;

    static void deep(int depth, long n) {
        if (depth == 0) {
            for (long i = 0; i < n; i++) {
                synchronized (lock) {
                    counter += i & 3;
                }
            }
        } else {
            deep(depth - 1, n);
        }
    }

    public static void main(String[] args) {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        deep(40, 200_000L * scale);
        System.out.println("counter=" + counter);
    }
}
