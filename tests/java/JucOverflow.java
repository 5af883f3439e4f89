import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * StackOverflowError inside held java.util.concurrent locks: a recursion that takes a
 * ReentrantLock at each level (lock; try { recurse } finally { unlock }) until the stack
 * overflows, caught at the bottom; then the same with the write view of a
 * ReentrantReadWriteLock. After each, the program says whether the lock is free and another
 * thread takes it.
 *
 * Each level first calls `probe` (args[0] frames deep, 40 by default), which needs more stack
 * than `lock()` and `unlock()` (with the agent's hooks) do, so that the overflow comes from the
 * probe, before the level's `lock()`, and every `unlock()` on the way back has room. With
 * args[0] = 0 the overflow strikes inside `lock()` and `unlock()` themselves (and inside an
 * agent's hooks in them), which can leave a hold behind with or without an agent: `lock()`
 * throws the JVM's delayed StackOverflowError after its reserved-stack critical section took
 * the lock, and an `unlock()` can throw before it released. Holds left are released at
 * @leak-unlock and counted on stderr, with the `lock()` calls that returned, for
 * tests/e2e/juc_faults.rs; stdout is the same in every run.
 */
public class JucOverflow {
    static final ReentrantLock lock = new ReentrantLock();
    static final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
    static int probe = 40;
    static int taken;
    static long sink;

    /** `n` frames deep, with locals, and a native call at the bottom. */
    static long probe(int n) {
        long a = n, b = a * 3, c = b ^ a, d = c + b;
        if (n == 0) {
            return Runtime.getRuntime().freeMemory() & 1;
        }
        return probe(n - 1) + ((a + b + c + d) & 1);
    }

    static void recurse(Lock l) {
        sink += probe(probe);
        l.lock(); // @sof-lock
        try {
            taken++;
            recurse(l);
        } finally {
            l.unlock(); // @sof-unlock
        }
    }

    static void overflow(String name, Lock l, ReentrantLock asReentrant) throws InterruptedException {
        taken = 0;
        try {
            recurse(l);
            System.out.println(name + ": no overflow?");
        } catch (StackOverflowError e) {
            System.out.println(name + ": caught " + e.getClass().getName() + " deep: " + (taken > 100));
        }
        boolean free = asReentrant != null ? !asReentrant.isLocked() : !rw.isWriteLocked();
        int leaked = 0;
        while (asReentrant != null ? asReentrant.isHeldByCurrentThread() : rw.isWriteLockedByCurrentThread()) {
            l.unlock(); // @leak-unlock
            leaked++;
        }
        System.err.println("JucOverflow " + name + " taken=" + taken + " leaked=" + leaked);
        if (probe > 0) {
            System.out.println(name + ": free after the overflow: " + free);
        } else {
            // Whether the overflow left holds depends on where it struck: not printed here.
            boolean now = asReentrant != null ? !asReentrant.isLocked() : !rw.isWriteLocked();
            System.out.println(name + ": free after releasing what the overflow left: " + now);
        }
        Thread checker = new Thread(() -> {
            l.lock(); // @checker-lock
            try {
                System.out.println(name + ": taken by " + Thread.currentThread().getName());
            } finally {
                l.unlock(); // @checker-unlock
            }
        }, name + "-checker");
        checker.start();
        checker.join(60_000);
        if (checker.isAlive()) {
            System.out.println(name + ": still held!");
            System.exit(9);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) {
            probe = Integer.parseInt(args[0]);
        }
        overflow("reentrant", lock, lock);
        overflow("write", rw.writeLock(), null);
        System.out.println("overflow done " + (sink >= 0));
    }
}
