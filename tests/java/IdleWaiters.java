import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A thread pool's idle threads, as Jetty's are: WAITERS threads (half of them) wait on one
 * Condition, or (the other half) on one monitor, for a job; main hands out jobs one at a time for MILLIS ms, each
 * with a signal (notify) when no job is pending, then sleeps PAUSE_MS (0: yields), so the
 * waits are ended by wake-ups (short ones with no pause, long ones with a pause longer than
 * the threshold), and there are waiters at every moment. Each waiter measures its own waits
 * (System.nanoTime around await and wait) and the program prints how many waits of each kind
 * it made and how many lasted at least LONG_NS (the test's bound: the agent can only have
 * taken a waiter for a long one if it had waited that long).
 * Usage: IdleWaiters WAITERS MILLIS LONG_NS PAUSE_MS
 * Prints: awaits A longAwaits LA waits W longWaits LW
 */
public class IdleWaiters {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition notEmpty = lock.newCondition();
    static final Object monitor = new Object();
    static int jobs, mjobs;
    static boolean done;
    static long awaits, longAwaits, waits, longWaits, longNs;

    /** An idle thread of the pool whose queue is guarded by a ReentrantLock. */
    static void onCondition() {
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
                    return;
                }
                jobs--;
            } finally {
                lock.unlock();
            }
        }
    }

    /** An idle thread of the pool whose queue is guarded by a monitor. */
    static void onMonitor() {
        while (true) {
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
                    return;
                }
                mjobs--;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long millis = Long.parseLong(args[1]);
        longNs = Long.parseLong(args[2]);
        long pause = Long.parseLong(args[3]);
        Thread[] pool = new Thread[n];
        for (int i = 0; i < n; i++) {
            pool[i] = new Thread(i % 2 == 0 ? IdleWaiters::onCondition : IdleWaiters::onMonitor,
                    "idle-" + i);
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
            if (pause > 0) {
                Thread.sleep(pause);
            } else {
                Thread.yield();
            }
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
