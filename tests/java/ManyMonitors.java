/**
 * A million distinct monitors taken in one consistent order: two threads each nest PAIRS pairs
 * of fresh objects (outer, then inner, always in that order), and both also nest the two
 * long-lived monitors `first` then `second`, in that order too. No lock-order cycle exists, so
 * none may be reported; the summaries of the fresh objects must stay a few lines per pair of
 * sites, not a line per object. Usage: ManyMonitors PAIRS
 */
public class ManyMonitors {
    static final Object first = new Object(), second = new Object();
    static long sum;

    static void nest(Object outer, Object inner) {
        synchronized (outer) { // @outer
            synchronized (inner) { // @inner
                sum++;
            }
        }
    }

    static void work(int pairs) {
        for (int i = 0; i < pairs; i++) {
            nest(new Object(), new Object());
            if (i % 1000 == 0) {
                nest(first, second);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int pairs = Integer.parseInt(args[0]);
        Thread other = new Thread(() -> work(pairs), "other");
        other.start();
        work(pairs);
        other.join();
        System.out.println("nested " + 2L * pairs + " pairs of fresh monitors");
    }
}
