import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Locks that only summary lines name: no thread ever waits for one. main takes `list` then
 * `counter` (a synchronized method: no monitorenter) a thousand times, and an uncontended
 * ReentrantLock as often; after main is done, "other" takes `counter` then `list`. The log
 * names them in MonitorHolds, LockHolds and LockOrder lines only: a lock-order cycle that
 * never deadlocked, and holds nobody contended.
 */
public class HeldNames {
    static final List<Integer> list = new ArrayList<>();
    static final Counter counter = new Counter();
    static final ReentrantLock lock = new ReentrantLock();

    static final class Counter {
        int n;

        synchronized void bump() {
            n++;
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 1000; i++) {
            synchronized (list) { // @list-first
                list.add(i);
                counter.bump(); // @counter-second
            }
            lock.lock(); // @lock
            try {
                counter.n++;
            } finally {
                lock.unlock();
            }
        }
        Thread other = new Thread(() -> {
            synchronized (counter) { // @counter-first
                synchronized (list) { // @list-second
                    list.clear();
                }
            }
        }, "other");
        other.start();
        other.join();
        System.out.printf("list=%08X counter=%08X%n", System.identityHashCode(list),
                System.identityHashCode(counter));
    }
}
