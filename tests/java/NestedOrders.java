/**
 * Nested acquisitions under one, two and three monitors held, of long-lived and fresh objects,
 * in one consistent order: the lock orders the tracker counts itself (agent/src/recorder/
 * summary.rs, OrderSlots) must be those the agent counts from records, every occurrence once.
 * Two threads each make ROUNDS rounds; per round one acquisition at `f` (under a), one at `g`
 * (under a and f) and one at `h` (under a, f and g), of a long-lived monitor (b) every other
 * round, else of a fresh one; and first one at `q` of b under a, both long-lived, a pair with a
 * row of its own that the tracker counts in (OrcaOrderSlots.edge's row index). Usage: NestedOrders ROUNDS
 */
public class NestedOrders {
    static final Object a = new Object(), b = new Object();
    static long sum;

    static void round(int i) {
        Object f = new Object();
        synchronized (a) { // @a
            synchronized (b) { // @q
                sum++;
            }
            synchronized (f) { // @f
                synchronized (new Object()) { // @g
                    synchronized (i % 2 == 0 ? b : new Object()) { // @h
                        sum++;
                    }
                }
            }
        }
    }

    static void work(int rounds) {
        for (int i = 0; i < rounds; i++) {
            round(i);
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        Thread other = new Thread(() -> work(rounds), "other");
        other.start();
        work(rounds);
        other.join();
        System.out.println("rounds " + 2L * rounds);
    }
}
