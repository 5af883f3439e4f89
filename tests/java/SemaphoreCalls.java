import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Every overload of Semaphore's calls, each at a line of its own, ROUNDS times on a semaphore
 * only main uses (no acquisition can wait, no release can end a wait; two tryAcquires find no
 * permit and fail), then a long wait ended by a release while another thread is queued: main
 * holds the one permit of `pool`, `first` blocks on it, main sleeps SLEEP_MS, `second` queues
 * behind `first`, and only then main releases (first waited SLEEP_MS and more; second is
 * queued when main's release begins). Prints `semaphore calls ROUNDS FAILED`.
 * Usage: SemaphoreCalls ROUNDS SLEEP_MS
 */
public class SemaphoreCalls {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long sleep = Long.parseLong(args[1]);
        Semaphore s = new Semaphore(3);
        int failed = 0;
        for (int i = 0; i < rounds; i++) {
            s.acquire(); // @acquire
            s.acquire(2); // @acquire-int
            if (!s.tryAcquire()) { // @try-fails
                failed++;
            }
            if (!s.tryAcquire(1)) { // @try-int-fails
                failed++;
            }
            s.release(3); // @release-int
            s.acquireUninterruptibly(); // @uninterruptibly
            s.acquireUninterruptibly(2); // @uninterruptibly-int
            s.release(); // @release
            if (!s.tryAcquire(1, TimeUnit.SECONDS)) { // @try-timed
                throw new AssertionError("a permit was free");
            }
            s.release(3); // @release-end
            if (!s.tryAcquire(2, 1, TimeUnit.SECONDS)) { // @try-int-timed
                throw new AssertionError("permits were free");
            }
            s.release(2); // @release-last
        }
        if (s.availablePermits() != 3) {
            throw new AssertionError("permits " + s.availablePermits());
        }
        Semaphore pool = new Semaphore(1);
        pool.acquire(); // @main-acquire
        Thread first = new Thread(() -> {
            pool.acquireUninterruptibly(); // @first-acquire
            pool.release(); // @first-release
        }, "first");
        first.start();
        while (pool.getQueueLength() < 1) {
            Thread.onSpinWait();
        }
        Thread.sleep(sleep);
        Thread second = new Thread(() -> {
            pool.acquireUninterruptibly(); // @second-acquire
            pool.release(); // @second-release
        }, "second");
        second.start();
        while (pool.getQueueLength() < 2) {
            Thread.onSpinWait();
        }
        pool.release(); // @main-release
        first.join();
        second.join();
        System.out.println("semaphore calls " + rounds + " " + failed);
    }
}
