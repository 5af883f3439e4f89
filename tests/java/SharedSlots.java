import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads whose IDs share the tracker's slots (OrcaRec.BY_THREAD, 256 of them):
 * args[0] threads alive at once (more than the slots, so that live threads collide), then as
 * many again once those ended (their slots are taken over). Each worker, once all of its wave
 * have started, takes its own monitor around a synchronized method of its own cell (a nested
 * hold), and its own ReentrantLock, args[1] times each.
 */
public class SharedSlots {
    static final class Cell {
        long v;

        synchronized void inc(int i) {
            v += i;
        }
    }

    static void work(Object outer, Cell cell, ReentrantLock lock, int n) {
        for (int i = 0; i < n; i++) {
            synchronized (outer) {
                cell.inc(i);
            }
            lock.lock();
            try {
                cell.v++;
            } finally {
                lock.unlock();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        for (int wave = 0; wave < 2; wave++) {
            CountDownLatch started = new CountDownLatch(threads);
            Thread[] ts = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                ts[i] = new Thread(() -> {
                    started.countDown();
                    try {
                        started.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    work(new Object(), new Cell(), new ReentrantLock(), n);
                }, "worker-" + wave + "-" + i);
                ts[i].start();
            }
            for (Thread t : ts) {
                t.join();
            }
        }
        System.out.println("done " + 2 * threads);
    }
}
