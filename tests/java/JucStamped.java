import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.StampedLock;

/**
 * StampedLock with counts per line that do not depend on timing: its write and read locks
 * (plain, interruptible, try, timed try), releases by unlockWrite/unlockRead/unlock(stamp)/
 * tryUnlock*, the Lock views, and optimistic reads (not locks: nothing recorded). Every
 * hand-off waits (spinning, which records nothing) until the other thread is where it must be.
 * tests/e2e/juc.rs names the lines by their markers; arguments: threads, pairs per thread.
 */
public class JucStamped {
    static long counter;
    static volatile boolean held, done;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int pairs = Integer.parseInt(args[1]);
        StampedLock sl = new StampedLock();
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                for (int j = 0; j < pairs; j++) {
                    long w = sl.writeLock(); // @write-lock
                    try {
                        counter++;
                    } finally {
                        sl.unlockWrite(w); // @write-unlock
                    }
                    long r = sl.readLock(); // @read-lock
                    try {
                        if (counter < 0) {
                            throw new IllegalStateException();
                        }
                    } finally {
                        sl.unlockRead(r); // @read-unlock
                    }
                }
            }, "stamped-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long s = sl.writeLockInterruptibly(); // @write-intr
        sl.unlock(s); // @unlock-stamp
        s = sl.readLockInterruptibly(); // @read-intr
        sl.unlock(s); // @unlock-stamp-read
        s = sl.tryWriteLock(); // @try-write
        boolean released = sl.tryUnlockWrite(); // @try-unlock-write
        s = sl.tryReadLock(10, TimeUnit.MILLISECONDS); // @try-read-timed
        released &= sl.tryUnlockRead(); // @try-unlock-read
        released &= !sl.tryUnlockWrite(); // nothing held: false, nothing released
        Lock wv = sl.asWriteLock();
        wv.lock(); // @view-write-lock
        wv.unlock(); // @view-write-unlock
        Lock rv = sl.asReadLock();
        rv.lock(); // @view-read-lock
        rv.unlock(); // @view-read-unlock
        long o = sl.tryOptimisticRead();
        boolean valid = sl.validate(o);
        // Another thread holds the write lock: a failed tryReadLock, a timed-out tryWriteLock.
        Thread holder = new Thread(() -> {
            long h = sl.writeLock(); // @holder-lock
            held = true;
            while (!done) {
                Thread.onSpinWait();
            }
            sl.unlockWrite(h); // @holder-unlock
        }, "holder");
        holder.start();
        while (!held) {
            Thread.onSpinWait();
        }
        long f = sl.tryReadLock(); // @try-read-fails
        long t = sl.tryWriteLock(1, TimeUnit.MILLISECONDS); // @try-write-times-out
        done = true;
        holder.join();
        System.out.println("stamped done " + counter + " " + released + " " + valid + " " + f + " " + t);
    }
}
