import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * java.util.concurrent locks on virtual threads (JDK 21+), where a blocked thread parks (its
 * carrier runs other virtual threads) instead of blocking: args[0] virtual threads take one
 * ReentrantLock args[1] times each; args[2] rounds of a Condition hand-off between two
 * virtual threads (the consumer awaits, the producer's lock() returns only once the await
 * released the lock, then it signals); args[2] pairs of virtual threads where one parks with a
 * blocker and the other unparks it. Then, on virtual threads: `lockInterruptibly`, a timed
 * `tryLock` and `await` interrupted while parked, and a RuntimeException thrown inside a held
 * lock, the stack traces printed to stdout. Waits for the other thread spin with Thread.yield
 * (which records nothing and frees the carrier), so the counts per marked line do not depend
 * on timing. tests/e2e/juc_faults.rs names the lines by their markers.
 */
public class JucVThreads {
    static int counter;
    static volatile boolean awaiting;

    static void until(java.util.function.BooleanSupplier ready) {
        while (!ready.getAsBoolean()) {
            Thread.yield();
        }
    }

    static void joinAll(List<Thread> ts) throws InterruptedException {
        for (Thread t : ts) {
            t.join();
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int pairs = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        ReentrantLock lock = new ReentrantLock();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ts.add(Thread.ofVirtual().name("contender-" + i).start(() -> {
                for (int j = 0; j < pairs; j++) {
                    lock.lock(); // @vt-lock
                    try {
                        counter++;
                        if (j % 4 == 0) {
                            Thread.yield();
                        }
                    } finally {
                        lock.unlock(); // @vt-unlock
                    }
                }
            }));
        }
        joinAll(ts);
        System.out.println("counter " + counter + " free " + !lock.isLocked());

        int signalled = 0;
        for (int r = 0; r < rounds; r++) {
            ReentrantLock d = new ReentrantLock();
            Condition ready = d.newCondition();
            awaiting = false;
            Thread consumer = Thread.ofVirtual().name("consumer-" + r).start(() -> {
                d.lock(); // @cond-consumer-lock
                try {
                    awaiting = true;
                    ready.awaitUninterruptibly(); // @cond-await
                } finally {
                    d.unlock(); // @cond-consumer-unlock
                }
            });
            Thread producer = Thread.ofVirtual().name("producer-" + r).start(() -> {
                until(() -> awaiting);
                d.lock(); // @cond-producer-lock
                try {
                    ready.signal(); // @cond-signal
                } finally {
                    d.unlock(); // @cond-producer-unlock
                }
            });
            consumer.join();
            producer.join();
            signalled++;
        }
        System.out.println("hand-offs " + signalled);

        List<Thread> parkers = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            Object blocker = new Object();
            Thread parker = Thread.ofVirtual().name("parker-" + r).start(() -> {
                LockSupport.park(blocker); // @vt-park
            });
            Thread unparker = Thread.ofVirtual().name("unparker-" + r).start(() -> {
                until(() -> LockSupport.getBlocker(parker) == blocker || !parker.isAlive());
                LockSupport.unpark(parker); // @vt-unpark
            });
            parkers.add(parker);
            parkers.add(unparker);
        }
        joinAll(parkers);
        System.out.println("parks " + parkers.size() / 2);
        interrupts();
        exception();
        System.out.println("virtual done");
    }

    static void report(String what, Throwable e) {
        StringWriter s = new StringWriter();
        e.printStackTrace(new PrintWriter(s, true));
        System.out.print(Thread.currentThread().getName() + " caught " + what + ": " + s);
    }

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread virtual(String name, Body body) {
        return Thread.ofVirtual().name(name).start(() -> {
            try {
                body.run();
            } catch (InterruptedException e) {
                report("InterruptedException", e);
            }
        });
    }

    /** Until the virtual thread `t` is parked and `ready` holds. */
    static void untilParked(Thread t, java.util.function.BooleanSupplier ready) {
        while (!(ready.getAsBoolean()
                && (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING))) {
            Thread.onSpinWait();
        }
    }

    static void interrupts() throws InterruptedException {
        ReentrantLock a = new ReentrantLock();
        a.lock(); // @vt-li-main-lock
        Thread v = virtual("vt-li-victim", () -> {
            a.lockInterruptibly(); // @vt-li
            a.unlock();
            System.out.println("vt-li-victim not interrupted?");
        });
        untilParked(v, () -> a.hasQueuedThread(v));
        v.interrupt();
        v.join();
        a.unlock(); // @vt-li-main-unlock

        ReentrantLock b = new ReentrantLock();
        b.lock(); // @vt-tt-main-lock
        Thread w = virtual("vt-tt-victim", () -> {
            boolean got = b.tryLock(1, TimeUnit.HOURS); // @vt-tt
            System.out.println("vt-tt-victim not interrupted? " + got);
        });
        untilParked(w, () -> b.hasQueuedThread(w));
        w.interrupt();
        w.join();
        b.unlock(); // @vt-tt-main-unlock

        ReentrantLock c = new ReentrantLock();
        Condition never = c.newCondition();
        Thread x = virtual("vt-await-victim", () -> {
            c.lock(); // @vt-await-lock
            try {
                never.await(); // @vt-await
                System.out.println("vt-await-victim not interrupted?");
            } finally {
                c.unlock(); // @vt-await-unlock
            }
        });
        untilParked(x, () -> LockSupport.getBlocker(x) == never);
        x.interrupt();
        x.join();
        System.out.println("interrupted locks free: " + !a.isLocked() + " " + !b.isLocked() + " " + !c.isLocked());
    }

    static void exception() throws InterruptedException {
        ReentrantLock e = new ReentrantLock();
        Thread t = Thread.ofVirtual().name("vt-thrower").unstarted(() -> {
            e.lock(); // @vt-throw-lock
            try {
                throw new IllegalStateException("from a virtual thread, inside a ReentrantLock");
            } finally {
                e.unlock(); // @vt-throw-unlock
            }
        });
        t.setUncaughtExceptionHandler((th, ex) -> {
            System.out.println("uncaught in " + th.getName() + ", lock held: " + e.isLocked());
            ex.printStackTrace(System.out);
        });
        t.start();
        t.join();
    }
}
