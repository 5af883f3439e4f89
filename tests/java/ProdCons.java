import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded buffer: PRODUCERS threads (args[0]) put ITEMS items each (args[1]) into a queue of
 * 4 guarded by a ReentrantLock and two Conditions, CONSUMERS threads (args[2]) take them and
 * count them in a synchronized counter. Every thread runs a lambda (a hidden class on JDK
 * 15+). Prints the totals, which do not depend on timing.
 */
public class ProdCons {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition notFull = lock.newCondition();
    static final Condition notEmpty = lock.newCondition();
    static final ArrayDeque<Integer> queue = new ArrayDeque<>();
    static final Object counterLock = new Object();
    static long consumed;
    static long sum;

    static void put(int v) throws InterruptedException {
        lock.lock();
        try {
            while (queue.size() == 4) {
                notFull.await();
            }
            queue.add(v);
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    static int take() throws InterruptedException {
        lock.lock();
        try {
            while (queue.isEmpty()) {
                notEmpty.await();
            }
            int v = queue.poll();
            notFull.signal();
            return v;
        } finally {
            lock.unlock();
        }
    }

    public static void main(String[] args) throws Exception {
        int producers = Integer.parseInt(args[0]);
        int items = Integer.parseInt(args[1]);
        int consumers = Integer.parseInt(args[2]);
        int total = producers * items;
        Thread[] ts = new Thread[producers + consumers];
        for (int p = 0; p < producers; p++) {
            ts[p] = new Thread(() -> {
                try {
                    for (int i = 1; i <= items; i++) {
                        put(i);
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "producer-" + p);
        }
        for (int c = 0; c < consumers; c++) {
            // Consumer c takes its share: the shares add up to the total.
            int share = total / consumers + (c < total % consumers ? 1 : 0);
            ts[producers + c] = new Thread(() -> {
                try {
                    for (int i = 0; i < share; i++) {
                        int v = take();
                        synchronized (counterLock) {
                            consumed++;
                            sum += v;
                        }
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "consumer-" + c);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.printf("consumed=%d sum=%d%n", consumed, sum);
    }
}
