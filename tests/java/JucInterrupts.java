import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Interrupts of java.util.concurrent lock calls. Each victim is interrupted only once it is
 * blocked (queued on the lock, or waiting on the condition, and parked), or before it calls:
 * `lockInterruptibly` (a ReentrantLock and a read lock), a timed `tryLock`, `Condition.await`
 * and `await(long, TimeUnit)` interrupted while blocked; `lockInterruptibly`, the timed
 * `tryLock` and `await` called with the interrupt already pending; and the calls an interrupt
 * does not end: `lock()` and `awaitUninterruptibly()`, which return once the lock is free or
 * the condition signalled, with the interrupt status still set. Every exception's stack trace
 * is printed to stdout (compared byte for byte with a run without the agent by
 * tests/e2e/juc_faults.rs); the counts per marked line do not depend on timing.
 */
public class JucInterrupts {
    static volatile boolean awaiting;

    public static void main(String[] args) throws Exception {
        lockInterruptiblyWhileBlocked();
        readLockInterruptiblyWhileBlocked();
        timedTryLockWhileBlocked();
        awaitWhileBlocked();
        timedAwaitWhileBlocked();
        interruptedBeforeTheCalls();
        lockIgnoresTheInterrupt();
        awaitUninterruptiblyIgnoresTheInterrupt();
        System.out.println("interrupts done");
    }

    static void report(String what, Throwable e) {
        StringWriter s = new StringWriter();
        e.printStackTrace(new PrintWriter(s, true));
        System.out.print(Thread.currentThread().getName() + " caught " + what + " (interrupted: "
                + Thread.currentThread().isInterrupted() + "): " + s);
    }

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (InterruptedException e) {
                report("InterruptedException", e);
            }
        }, name);
        t.start();
        return t;
    }

    /** Until `t` is parked (WAITING or TIMED_WAITING) and `ready` holds. */
    static void untilBlocked(Thread t, java.util.function.BooleanSupplier ready) {
        while (!(ready.getAsBoolean()
                && (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING))) {
            Thread.onSpinWait();
        }
    }

    static void lockInterruptiblyWhileBlocked() throws InterruptedException {
        ReentrantLock a = new ReentrantLock();
        a.lock(); // @li-main-lock
        Thread v = start("li-victim", () -> {
            a.lockInterruptibly(); // @li-victim
            a.unlock();
            System.out.println("li-victim not interrupted?");
        });
        untilBlocked(v, () -> a.hasQueuedThread(v));
        v.interrupt();
        v.join();
        a.unlock(); // @li-main-unlock
    }

    static void readLockInterruptiblyWhileBlocked() throws InterruptedException {
        ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        Lock rl = rw.readLock();
        rw.writeLock().lock(); // @rli-main-lock
        Thread v = start("rli-victim", () -> {
            rl.lockInterruptibly(); // @rli-victim
            rl.unlock();
            System.out.println("rli-victim not interrupted?");
        });
        untilBlocked(v, () -> rw.hasQueuedThread(v));
        v.interrupt();
        v.join();
        rw.writeLock().unlock(); // @rli-main-unlock
    }

    static void timedTryLockWhileBlocked() throws InterruptedException {
        ReentrantLock b = new ReentrantLock();
        b.lock(); // @tt-main-lock
        Thread v = start("tt-victim", () -> {
            boolean got = b.tryLock(1, TimeUnit.HOURS); // @tt-victim
            System.out.println("tt-victim not interrupted? " + got);
        });
        untilBlocked(v, () -> b.hasQueuedThread(v));
        v.interrupt();
        v.join();
        b.unlock(); // @tt-main-unlock
    }

    static void awaitWhileBlocked() throws InterruptedException {
        ReentrantLock c = new ReentrantLock();
        Condition never = c.newCondition();
        Thread v = start("await-victim", () -> {
            c.lock(); // @await-lock
            try {
                never.await(); // @await-victim
                System.out.println("await-victim not interrupted?");
            } finally {
                c.unlock(); // @await-unlock
            }
        });
        // The condition is the blocker of the park inside await, set once the lock is released.
        untilBlocked(v, () -> LockSupport.getBlocker(v) == never);
        v.interrupt();
        v.join();
        System.out.println("await lock free: " + !c.isLocked());
    }

    static void timedAwaitWhileBlocked() throws InterruptedException {
        ReentrantLock c = new ReentrantLock();
        Condition never = c.newCondition();
        Thread v = start("tawait-victim", () -> {
            c.lock(); // @tawait-lock
            try {
                boolean signalled = never.await(1, TimeUnit.HOURS); // @tawait-victim
                System.out.println("tawait-victim not interrupted? " + signalled);
            } finally {
                c.unlock(); // @tawait-unlock
            }
        });
        untilBlocked(v, () -> LockSupport.getBlocker(v) == never);
        v.interrupt();
        v.join();
        System.out.println("timed await lock free: " + !c.isLocked());
    }

    static void interruptedBeforeTheCalls() throws InterruptedException {
        ReentrantLock d = new ReentrantLock();
        Condition never = d.newCondition();
        Thread v = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                d.lockInterruptibly(); // @pre-li
                d.unlock();
                System.out.println("pre-li acquired?");
            } catch (InterruptedException e) {
                report("InterruptedException", e);
            }
            Thread.currentThread().interrupt();
            try {
                boolean got = d.tryLock(1, TimeUnit.HOURS); // @pre-tt
                System.out.println("pre-tt not interrupted? " + got);
            } catch (InterruptedException e) {
                report("InterruptedException", e);
            }
            d.lock(); // @pre-await-lock
            try {
                Thread.currentThread().interrupt();
                never.await(); // @pre-await
                System.out.println("pre-await not interrupted?");
            } catch (InterruptedException e) {
                report("InterruptedException, lock held: " + d.isHeldByCurrentThread(), e);
            } finally {
                d.unlock(); // @pre-await-unlock
            }
        }, "pre-victim");
        v.start();
        v.join();
        System.out.println("pre lock free: " + !d.isLocked());
    }

    static void lockIgnoresTheInterrupt() throws InterruptedException {
        ReentrantLock e = new ReentrantLock();
        e.lock(); // @plain-main-lock
        Thread v = new Thread(() -> {
            e.lock(); // @plain-victim
            try {
                System.out.println("plain-victim acquired, interrupted: " + Thread.currentThread().isInterrupted());
            } finally {
                e.unlock(); // @plain-victim-unlock
            }
        }, "plain-victim");
        v.start();
        untilBlocked(v, () -> e.hasQueuedThread(v));
        // lock() takes the interrupt, parks again and returns with the interrupt status set.
        v.interrupt();
        e.unlock(); // @plain-main-unlock
        v.join();
    }

    static void awaitUninterruptiblyIgnoresTheInterrupt() throws InterruptedException {
        ReentrantLock f = new ReentrantLock();
        Condition go = f.newCondition();
        awaiting = false;
        Thread v = new Thread(() -> {
            f.lock(); // @unint-lock
            try {
                awaiting = true;
                go.awaitUninterruptibly(); // @unint-await
                System.out.println("unint-victim signalled, interrupted: " + Thread.currentThread().isInterrupted());
            } finally {
                f.unlock(); // @unint-unlock
            }
        }, "unint-victim");
        v.start();
        untilBlocked(v, () -> awaiting && LockSupport.getBlocker(v) == go);
        // awaitUninterruptibly takes the interrupt, waits on and returns with it set.
        v.interrupt();
        f.lock(); // @unint-main-lock
        try {
            go.signal(); // @unint-signal
        } finally {
            f.unlock(); // @unint-main-unlock
        }
        v.join();
    }
}
