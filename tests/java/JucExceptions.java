import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Exceptions while java.util.concurrent locks are held, and unlocks that throw: a thread dies
 * of a RuntimeException of the program's own inside a ReentrantLock (unlocked in `finally`,
 * reported by its uncaught-exception handler), an ArithmeticException inside a write lock, an
 * exception with a cause through a ReentrantLock, a write lock and a read lock held together,
 * and IllegalMonitorStateException from `unlock()` by a thread that does not hold the lock
 * (free, or held by another thread), caught by the program. Every stack trace is printed to
 * stdout, which tests/e2e/juc_faults.rs compares byte for byte with a run without the agent.
 * Hand-offs spin on volatile flags (which records nothing), so the counts per marked line are
 * the same in every run.
 */
public class JucExceptions {
    static final ReentrantLock lock = new ReentrantLock();
    static final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
    static final Lock wl = rw.writeLock();
    static final Lock rl = rw.readLock();
    static volatile boolean held, done;
    static int zero;
    static int counter;

    public static void main(String[] args) throws Exception {
        thrownInAThread();
        arithmeticInsideTheWriteLock();
        causeThroughThreeLocks();
        unlockWithoutHolding();
        unlockHeldByAnother();
        System.out.println("free " + !lock.isLocked() + " " + !rw.isWriteLocked() + " " + rw.getReadLockCount());
        takenByAnother();
        System.out.println("exceptions done " + counter);
    }

    /** The stack trace through a string, printed as one write. */
    static void report(String what, Throwable e) {
        StringWriter s = new StringWriter();
        e.printStackTrace(new PrintWriter(s, true));
        System.out.print("caught " + what + ": " + s);
    }

    static void fail(String message) {
        throw new RuntimeException(message);
    }

    static void thrownInAThread() throws InterruptedException {
        Thread t = new Thread(() -> {
            lock.lock(); // @thread-lock
            try {
                counter++;
                fail("from the program, inside a ReentrantLock");
            } finally {
                lock.unlock(); // @thread-unlock
            }
        }, "thrower");
        t.setUncaughtExceptionHandler((th, e) -> {
            System.out.println("uncaught in " + th.getName() + ", lock held: " + lock.isHeldByCurrentThread());
            e.printStackTrace(System.out);
        });
        t.start();
        t.join();
    }

    static int divide(int a) {
        return a / zero;
    }

    static void arithmeticInsideTheWriteLock() {
        try {
            wl.lock(); // @arith-lock
            try {
                counter += divide(counter);
            } finally {
                wl.unlock(); // @arith-unlock
            }
        } catch (ArithmeticException e) {
            report("arithmetic, write lock held: " + rw.isWriteLockedByCurrentThread(), e);
        }
    }

    static void level(int n) {
        if (n == 0) {
            try {
                Object o = null;
                o.hashCode();
            } catch (NullPointerException npe) {
                throw new IllegalStateException("three locks held", npe);
            }
        }
        level(n - 1);
    }

    static void causeThroughThreeLocks() {
        try {
            lock.lock(); // @cause-lock
            try {
                wl.lock(); // @cause-write
                try {
                    rl.lock(); // @cause-read
                    try {
                        level(3);
                    } finally {
                        rl.unlock(); // @cause-read-unlock
                    }
                } finally {
                    wl.unlock(); // @cause-write-unlock
                }
            } finally {
                lock.unlock(); // @cause-unlock
            }
        } catch (IllegalStateException e) {
            report("with a cause, locks held: " + lock.isLocked() + " " + rw.isWriteLocked() + " " + rw.getReadLockCount(), e);
        }
    }

    static void unlockWithoutHolding() {
        try {
            lock.unlock(); // @imse-free
            System.out.println("unlocked a free lock?");
        } catch (IllegalMonitorStateException e) {
            report("unlock of a free ReentrantLock", e);
        }
        try {
            wl.unlock(); // @imse-free-write
            System.out.println("unlocked a free write lock?");
        } catch (IllegalMonitorStateException e) {
            report("unlock of a free write lock", e);
        }
        try {
            rl.unlock(); // @imse-free-read
            System.out.println("unlocked a free read lock?");
        } catch (IllegalMonitorStateException e) {
            report("unlock of a free read lock", e);
        }
    }

    static void unlockHeldByAnother() throws InterruptedException {
        Thread holder = new Thread(() -> {
            lock.lock(); // @holder-lock
            wl.lock(); // @holder-write
            held = true;
            while (!done) {
                Thread.onSpinWait();
            }
            wl.unlock(); // @holder-write-unlock
            lock.unlock(); // @holder-unlock
        }, "holder");
        holder.start();
        while (!held) {
            Thread.onSpinWait();
        }
        try {
            lock.unlock(); // @imse-other
            System.out.println("unlocked another thread's lock?");
        } catch (IllegalMonitorStateException e) {
            report("unlock of another thread's ReentrantLock, locked: " + lock.isLocked(), e);
        }
        try {
            wl.unlock(); // @imse-other-write
            System.out.println("unlocked another thread's write lock?");
        } catch (IllegalMonitorStateException e) {
            report("unlock of another thread's write lock, locked: " + rw.isWriteLocked(), e);
        }
        done = true;
        holder.join();
    }

    static void takenByAnother() throws InterruptedException {
        Thread checker = new Thread(() -> {
            lock.lock(); // @checker-lock
            try {
                wl.lock(); // @checker-write
                try {
                    counter++;
                    System.out.println("taken by checker");
                } finally {
                    wl.unlock(); // @checker-write-unlock
                }
            } finally {
                lock.unlock(); // @checker-unlock
            }
        }, "checker");
        checker.start();
        checker.join();
    }
}
