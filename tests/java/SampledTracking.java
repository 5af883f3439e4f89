import java.util.concurrent.locks.ReentrantLock;

/**
 * Sampled tracking (tracking=sampled): `main` locks a fresh pair of monitors per round, the
 * second nested in the first (a database's row, Derby's shape), and takes a long-lived
 * ReentrantLock in each round, far more holds a second than the agent identifies; every
 * ROUNDS/LONGS rounds it holds a fresh monitor for 100 ms, and waits 1 ms inside a fresh
 * monitor. Once, in the second half, it wakes thread `waiter` with a notifyAll on monitor `w`,
 * which it takes every round; from then on, every NOTIFY_EVERY rounds it notifies the row's
 * monitor, which nobody waits on. Thread `slow` takes two long-lived monitors, b nested in a,
 * SLOW times 1 ms apart: a rate at which every hold is identified.
 * Usage: SampledTracking ROUNDS
 */
public class SampledTracking {
    static final Object a = new Object(), b = new Object(), w = new Object();
    static boolean ready, woken;
    static int rowNotifies;
    static final ReentrantLock lock = new ReentrantLock();
    static final int LONGS = 5, SLOW = 200, NOTIFY_EVERY = 1000;
    static long sum;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Thread slow = new Thread(() -> {
            for (int i = 0; i < SLOW; i++) {
                synchronized (a) { // @slowOuter
                    synchronized (b) { // @slowInner
                        sum++;
                    }
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "slow");
        slow.start();
        Thread waiter = new Thread(() -> {
            synchronized (w) {
                ready = true;
                while (!woken) {
                    try {
                        w.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "waiter");
        waiter.start();
        for (int i = 0; i < n; i++) {
            Object row = new Object(), cell = new Object();
            synchronized (row) { // @outer
                synchronized (cell) { // @inner
                    sum++;
                }
                if (woken && i % NOTIFY_EVERY == 0) {
                    // only once the waiter is woken, so that each of these finds nobody
                    // waiting on any object (Notifies.java covers a neighbour's while it waits)
                    row.notify(); // @notify
                    rowNotifies++;
                }
            }
            // main sees `ready` only while the waiter is inside wait(): the notifyAll, in
            // the second half of the loop (most of its holds unidentified), wakes it
            synchronized (w) { // @w
                if (ready && !woken && i >= n / 2) {
                    woken = true;
                    w.notifyAll(); // @wake
                }
            }
            lock.lock(); // @lock
            try {
                sum++;
            } finally {
                lock.unlock();
            }
            if (i % (n / LONGS) == 0) {
                Object held = new Object();
                synchronized (held) { // @long
                    Thread.sleep(100);
                }
                Object waited = new Object();
                synchronized (waited) { // @waited
                    waited.wait(1);
                }
            }
        }
        slow.join();
        synchronized (w) {
            if (!woken) {
                woken = true;
                w.notifyAll(); // (never, unless the waiter was not ready by half the loop)
            }
        }
        waiter.join();
        System.out.println("sum=" + sum + " row_notifies=" + rowNotifies);
    }
}
