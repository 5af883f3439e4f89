import java.util.concurrent.locks.ReentrantLock;

/**
 * ROUNDS forced contentions on a monitor and as many on a ReentrantLock, each with a known
 * owner and length: in every round main takes the lock, lets the worker try it, waits until
 * the worker is blocked on it (BLOCKED on the monitor, parked in the lock's queue: both are
 * reported as a contention first), holds it HOLD_MS longer, and releases it; it waits for
 * the worker's round to end before the next. So the worker contends exactly ROUNDS times at
 * each of its two sites, for about HOLD_MS (0: as short as the hand-over), and main never.
 * Prints main's identity hash.
 * Usage: ShortContentions ROUNDS HOLD_MS
 */
public class ShortContentions {
    static final Object lock = new Object();
    static final ReentrantLock juc = new ReentrantLock();
    static volatile int go, done;
    static int counter;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long hold = Long.parseLong(args[1]);
        Thread worker = new Thread(() -> {
            for (int i = 1; i <= rounds; i++) {
                while (go < 2 * i - 1) {
                    Thread.onSpinWait();
                }
                synchronized (lock) { // @contended-monitor
                    counter++;
                }
                done = 2 * i - 1;
                while (go < 2 * i) {
                    Thread.onSpinWait();
                }
                juc.lock(); // @contended-lock
                try {
                    counter++;
                } finally {
                    juc.unlock();
                }
                done = 2 * i;
            }
        }, "worker");
        worker.start();
        for (int i = 1; i <= rounds; i++) {
            synchronized (lock) {
                go = 2 * i - 1;
                while (worker.getState() != Thread.State.BLOCKED) {
                    Thread.onSpinWait();
                }
                if (hold > 0) {
                    Thread.sleep(hold);
                }
            }
            while (done < 2 * i - 1) {
                Thread.onSpinWait();
            }
            juc.lock();
            try {
                go = 2 * i;
                while (!juc.hasQueuedThread(worker)) {
                    Thread.onSpinWait();
                }
                if (hold > 0) {
                    Thread.sleep(hold);
                }
            } finally {
                juc.unlock();
            }
            while (done < 2 * i) {
                Thread.onSpinWait();
            }
        }
        worker.join();
        System.out.printf("main=%08X counter=%d%n",
                System.identityHashCode(Thread.currentThread()), counter);
    }
}
