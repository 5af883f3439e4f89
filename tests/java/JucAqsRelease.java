import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * A program's own lock on AbstractQueuedSynchronizer whose tryRelease, once it has let the
 * lock go, logs under a monitor (as a logger's synchronized append does), and that monitor is
 * held by another thread: a contention inside `release` after the release. Meanwhile a second
 * thread takes the lock and releases it, and only then does the holder of the monitor let it
 * go. The first thread's `LockRelease` must still be stamped before the second thread's
 * `LockAcquired` (docs/FORMAT.md, "Exclusion"), although its contention's lines come after it.
 * Everything is forced: the taker starts once the lock is free, the monitor is let go once the
 * releaser is blocked on it and the taker is done. Prints `release done true`.
 */
public class JucAqsRelease {
    static final Object log = new Object();
    static volatile Thread releaser;
    static volatile boolean released, taken;
    static int logged;

    static final class Sync extends AbstractQueuedSynchronizer {
        @Override
        protected boolean tryAcquire(int acquires) {
            if (compareAndSetState(0, 1)) {
                setExclusiveOwnerThread(Thread.currentThread());
                return true;
            }
            return false;
        }

        @Override
        protected boolean tryRelease(int releases) {
            if (getState() == 0) {
                throw new IllegalMonitorStateException();
            }
            setExclusiveOwnerThread(null);
            setState(0);
            if (Thread.currentThread() == releaser) {
                released = true;
                synchronized (log) {
                    logged++;
                }
            }
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        Sync sync = new Sync();
        CountDownLatch blocking = new CountDownLatch(1);
        Thread r = new Thread(() -> {
            sync.acquire(1); // @releaser-lock
            sync.release(1); // @releaser-unlock
        }, "releaser");
        releaser = r;
        Thread blocker = new Thread(() -> {
            synchronized (log) {
                blocking.countDown();
                while (!taken || r.getState() != Thread.State.BLOCKED) {
                    Thread.onSpinWait();
                }
            }
        }, "blocker");
        blocker.start();
        blocking.await();
        Thread taker = new Thread(() -> {
            while (!released) {
                Thread.onSpinWait();
            }
            sync.acquire(1); // @taker-lock
            sync.release(1); // @taker-unlock
            taken = true;
        }, "taker");
        taker.start();
        r.start();
        r.join();
        taker.join();
        blocker.join();
        System.out.println("release done " + (logged == 1));
    }
}
