import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * java.util.concurrent locks with counts per lock and per line that do not depend on timing:
 * every hand-off waits (spinning, which records nothing) until the other thread is where it
 * must be. tests/e2e/juc.rs names the lines by their markers and computes the counts from the
 * constants below (passed as arguments: threads, pairs, readers, reads, writes).
 */
public class JucLocks {
    static int counter;
    static volatile boolean held, done, awaiting, interrupted;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int pairs = Integer.parseInt(args[1]);
        int readers = Integer.parseInt(args[2]);
        int reads = Integer.parseInt(args[3]);
        int writes = Integer.parseInt(args[4]);
        pairs(threads, pairs);
        reentrant();
        tryLocks();
        interruptible();
        readWrite(readers, reads, writes);
        handOff();
        signalAll();
        latch();
        parkUnpark();
        stackTrace();
        System.out.println("juc done " + counter + " " + interrupted);
    }

    static String hash(Object o) {
        return String.format("%08X", System.identityHashCode(o));
    }

    static void pairs(int threads, int pairs) throws InterruptedException {
        ReentrantLock a = new ReentrantLock();
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                for (int j = 0; j < pairs; j++) {
                    a.lock(); // @pairs-lock
                    try {
                        counter++;
                    } finally {
                        a.unlock(); // @pairs-unlock
                    }
                }
            }, "pairs-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    static void reentrant() {
        ReentrantLock r = new ReentrantLock();
        r.lock(); // @reentrant-outer
        r.lock(); // @reentrant-inner
        r.unlock(); // @reentrant-inner-unlock
        r.unlock(); // @reentrant-outer-unlock
        System.out.println("main " + hash(Thread.currentThread()));
    }

    static void tryLocks() throws InterruptedException {
        ReentrantLock b = new ReentrantLock();
        Thread holder = new Thread(() -> {
            b.lock(); // @holder-lock
            held = true;
            while (!done) {
                Thread.onSpinWait();
            }
            b.unlock(); // @holder-unlock
        }, "holder");
        holder.start();
        while (!held) {
            Thread.onSpinWait();
        }
        boolean first = b.tryLock(); // @try-fails
        boolean second = b.tryLock(10, TimeUnit.MILLISECONDS); // @try-times-out
        done = true;
        holder.join();
        boolean third = b.tryLock(); // @try-succeeds
        b.unlock(); // @try-unlock
        System.out.println("holder " + hash(holder) + " " + first + " " + second + " " + third);
    }

    static void interruptible() throws InterruptedException {
        ReentrantLock c = new ReentrantLock();
        c.lock(); // @intr-main-lock
        Thread victim = new Thread(() -> {
            try {
                c.lockInterruptibly(); // @intr-victim
                c.unlock();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }, "victim");
        victim.start();
        while (!c.hasQueuedThread(victim)) {
            Thread.onSpinWait();
        }
        victim.interrupt();
        victim.join();
        c.unlock(); // @intr-main-unlock
    }

    static void readWrite(int readers, int reads, int writes) throws InterruptedException {
        ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        Lock rl = rw.readLock();
        Lock wl = rw.writeLock();
        Thread[] ts = new Thread[readers + 1];
        for (int i = 0; i < readers; i++) {
            ts[i] = new Thread(() -> {
                for (int j = 0; j < reads; j++) {
                    rl.lock(); // @read-lock
                    try {
                        if (counter < 0) {
                            throw new IllegalStateException();
                        }
                    } finally {
                        rl.unlock(); // @read-unlock
                    }
                }
            }, "reader-" + i);
        }
        ts[readers] = new Thread(() -> {
            for (int j = 0; j < writes; j++) {
                wl.lock(); // @write-lock
                try {
                    counter++;
                } finally {
                    wl.unlock(); // @write-unlock
                }
            }
        }, "writer");
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        // A downgrade: the read view taken while holding the write view.
        wl.lock(); // @downgrade-write
        rl.lock(); // @downgrade-read
        wl.unlock(); // @downgrade-write-unlock
        rl.unlock(); // @downgrade-read-unlock
    }

    static void handOff() throws InterruptedException {
        ReentrantLock d = new ReentrantLock();
        Condition ready = d.newCondition();
        Thread consumer = new Thread(() -> {
            d.lock(); // @cond-consumer-lock
            try {
                awaiting = true;
                ready.awaitUninterruptibly(); // @cond-await
            } finally {
                d.unlock(); // @cond-consumer-unlock
            }
        }, "consumer");
        consumer.start();
        while (!awaiting) {
            Thread.onSpinWait();
        }
        // The consumer holds d until its await releases it: this lock() returns only then.
        d.lock(); // @cond-producer-lock
        try {
            ready.signal(); // @cond-signal
        } finally {
            d.unlock(); // @cond-producer-unlock
        }
        consumer.join();
        System.out.println("condition " + hash(ready));
    }

    static void signalAll() throws InterruptedException {
        ReentrantLock d = new ReentrantLock();
        Condition go = d.newCondition();
        AtomicInteger waiting = new AtomicInteger();
        Thread[] ts = new Thread[2];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                d.lock(); // @all-consumer-lock
                try {
                    waiting.incrementAndGet();
                    go.awaitUninterruptibly(); // @all-await
                } finally {
                    d.unlock(); // @all-consumer-unlock
                }
            }, "all-" + i);
            ts[i].start();
        }
        while (waiting.get() < ts.length) {
            Thread.onSpinWait();
        }
        d.lock(); // @all-producer-lock
        try {
            go.signalAll(); // @all-signal
        } finally {
            d.unlock(); // @all-producer-unlock
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    static void latch() throws InterruptedException {
        CountDownLatch latch = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                latch.await(); // @latch-await
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }, "latch-waiter");
        waiter.start();
        // The blocker is set inside park, after the waiter queued itself.
        while (LockSupport.getBlocker(waiter) == null) {
            Thread.onSpinWait();
        }
        latch.countDown(); // @latch-countdown
        waiter.join();
        System.out.println("latch-waiter " + hash(waiter));
    }

    static void parkUnpark() throws InterruptedException {
        Object blocker = new Object();
        Thread parker = new Thread(() -> {
            LockSupport.park(blocker); // @park
        }, "parker");
        parker.start();
        while (LockSupport.getBlocker(parker) != blocker && parker.isAlive()) {
            Thread.onSpinWait();
        }
        LockSupport.unpark(parker); // @unpark
        parker.join();
        System.out.println("parker " + hash(parker) + " blocker " + hash(blocker));
    }

    static void stackTrace() {
        ReentrantLock e = new ReentrantLock();
        e.lock(); // @trace-lock
        try {
            new Throwable("inside a ReentrantLock").printStackTrace(System.out);
        } finally {
            e.unlock(); // @trace-unlock
        }
    }
}
