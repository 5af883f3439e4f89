/**
 * Calls a {@code synchronized} method of a fresh object, again and again, on one thread: no
 * contention, so the JVM never needs to inflate these monitors. The agent names each monitor
 * by its identity hash, taken while the method holds it.
 */
public class FreshMonitors {
    static final class Cell {
        int n;

        synchronized int inc() {
            return ++n;
        }
    }

    public static void main(String[] args) {
        int count = Integer.parseInt(args[0]);
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += new Cell().inc();
        }
        System.out.println("calls: " + total);
    }
}
