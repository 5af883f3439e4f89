import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Uncontended j.u.c. lock/unlock pairs in a loop, long enough for C2 to compile `pairs` with
 * the hooked lock methods inlined: tests/e2e/jit.rs reads what C2 inlined into it (the
 * tracker's reports of the lock calls: their common path inline, the rest out of line).
 */
public class JucHotPath {
    static final ReentrantLock lock = new ReentrantLock();
    static final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
    static long counter;

    static void pairs(int n) {
        for (int i = 0; i < n; i++) {
            lock.lock();
            try {
                counter++;
            } finally {
                lock.unlock();
            }
            rw.writeLock().lock();
            try {
                counter++;
            } finally {
                rw.writeLock().unlock();
            }
        }
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        for (int r = 0; r < rounds; r++) {
            pairs(1000);
        }
        System.out.println("JucHotPath counter=" + counter);
    }
}
