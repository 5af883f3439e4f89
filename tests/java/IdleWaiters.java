import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A thread pool's idle threads, as Jetty's are: WAITERS threads wait on one Condition (and,
 * after it, on one monitor) for a job; main hands out jobs one at a time for MILLIS ms, each
 * with a signal (notify) while a job is pending nobody took, so the waits are short and ended by
 * wake-ups, and there are waiters at every moment. Each waiter measures its own waits
 * (System.nanoTime around await and wait) and the program prints how many waits of each kind
 * it made and how many lasted at least LONG_NS (the test's bound: the agent can only have
 * taken a waiter for a long one if it had waited that long).
 * Usage: IdleWaiters WAITERS MILLIS LONG_NS
 * Prints: awaits A longAwaits LA waits W longWaits LW
 */
public class IdleWaiters {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition notEmpty = lock.newCondition();
    static final Object monitor = new Object();
    static int jobs, mjobs;
    static boolean done;
    static long awaits, longAwaits, waits, longWaits;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long millis = Long.parseLong(args[1]);
        long longNs = Long.parseLong(args[2]);
        Thread[] pool = new Thread[n];
        for (int i = 0; i < n; i++) {
            pool[i] = new Thread(() -> {
                while (true) {
                    lock.lock();
                    try {
                        while (jobs == 0 && !done) {
                            long t0 = System.nanoTime();
                            notEmpty.awaitUninterruptibly(); // @idle-await
                            long t = System.nanoTime() - t0;
                            awaits++;
                            if (t >= longNs) {
                                longAwaits++;
                            }
                        }
                        if (jobs == 0) {
                            break;
                        }
                        jobs--;
                    } finally {
                        lock.unlock();
                    }
                    synchronized (monitor) {
                        while (mjobs == 0 && !done) {
                            long t0 = System.nanoTime();
                            try {
                                monitor.wait(); // @idle-wait
                            } catch (InterruptedException e) {
                                return;
                            }
                            long t = System.nanoTime() - t0;
                            waits++;
                            if (t >= longNs) {
                                longWaits++;
                            }
                        }
                        if (mjobs == 0) {
                            break;
                        }
                        mjobs--;
                    }
                }
            }, "idle-" + i);
            pool[i].start();
        }
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            lock.lock();
            try {
                if (jobs == 0) {
                    jobs++;
                    notEmpty.signal(); // @job-signal
                }
            } finally {
                lock.unlock();
            }
            synchronized (monitor) {
                if (mjobs == 0) {
                    mjobs++;
                    monitor.notify(); // @job-notify
                }
            }
            Thread.yield();
        }
        lock.lock();
        try {
            done = true;
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
        synchronized (monitor) {
            done = true;
            monitor.notifyAll();
        }
        for (Thread t : pool) {
            t.join();
        }
        System.out.println("awaits " + awaits + " longAwaits " + longAwaits + " waits " + waits
                + " longWaits " + longWaits);
    }
}
