import java.util.HashMap;

/**
 * Two live objects with one identity hash (found among up to five million new objects, a
 * Box and an Object in turn: about 100,000 suffice with 31-bit hashes), each contended
 * once in turn (main holds it until another thread blocks on it). Prints their hash and
 * classes, in the order they were contended.
 */
public class SharedHash {
    static final class Box {}

    public static void main(String[] args) throws Exception {
        HashMap<Integer, Object> seen = new HashMap<>();
        Object first = null;
        Object second = null;
        for (int i = 0; i < 5_000_000 && first == null; i++) {
            Object o = i % 2 == 0 ? new Object() : new Box();
            Object before = seen.putIfAbsent(System.identityHashCode(o), o);
            if (before != null) {
                first = before;
                second = o;
            }
        }
        if (first == null) {
            System.out.println("no two objects share a hash");
            System.exit(3);
        }
        seen = null;
        contend(first);
        contend(second);
        System.out.printf("hash=%08X first=%s second=%s%n", System.identityHashCode(first),
                first.getClass().getName(), second.getClass().getName());
    }

    /** One contention on `o`: another thread blocks on it while main holds it. */
    static void contend(Object o) throws InterruptedException {
        Thread t = new Thread(() -> {
            synchronized (o) {
                o.hashCode();
            }
        }, "contender");
        synchronized (o) {
            t.start();
            while (t.getState() != Thread.State.BLOCKED) {
                Thread.sleep(1);
            }
        }
        t.join();
    }
}
