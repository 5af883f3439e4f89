import java.util.concurrent.locks.ReentrantLock;

/**
 * THREADS threads (args[0]) each take one monitor ROUNDS times (args[1]), then one
 * ReentrantLock ROUNDS times, each hold a short increment: the contention HotSpot resolves by
 * spinning, which it reports with no MonitorContendedEnter. Prints the hashes of the monitor
 * and of the lock's synchronizer, and the counts (which do not depend on timing).
 */
public class Exclusive {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static long inMonitor;
    static long inLock;
    static volatile boolean go;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                while (!go) {
                    Thread.onSpinWait();
                }
                for (int r = 0; r < rounds; r++) {
                    synchronized (monitor) {
                        inMonitor++;
                    }
                }
                for (int r = 0; r < rounds; r++) {
                    lock.lock();
                    try {
                        inLock++;
                    } finally {
                        lock.unlock();
                    }
                }
            }, "worker-" + i);
            ts[i].start();
        }
        go = true;
        for (Thread t : ts) {
            t.join();
        }
        System.out.printf("monitor=%08X inMonitor=%d inLock=%d%n",
                System.identityHashCode(monitor), inMonitor, inLock);
    }
}
