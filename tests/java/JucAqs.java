import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A program's own Lock built on AbstractQueuedSynchronizer (the non-reentrant mutex of AQS's
 * documentation): its exclusive acquisitions and releases are lock events like a
 * ReentrantLock's, at the lines of the mutex's methods that call AQS. A CountDownLatch (AQS in
 * shared mode) is no lock. Counts do not depend on timing; arguments: threads, pairs.
 */
public class JucAqs {
    static final class Mutex implements Lock {
        private static final class Sync extends AbstractQueuedSynchronizer {
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
                return true;
            }

            @Override
            protected boolean isHeldExclusively() {
                return getExclusiveOwnerThread() == Thread.currentThread();
            }

            Condition newCondition() {
                return new ConditionObject();
            }
        }

        private final Sync sync = new Sync();

        public void lock() {
            sync.acquire(1); // @mutex-lock
        }

        public void lockInterruptibly() throws InterruptedException {
            sync.acquireInterruptibly(1); // @mutex-lock-intr
        }

        public boolean tryLock() {
            return sync.tryAcquire(1); // not an AQS call a hook sees: not recorded
        }

        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return sync.tryAcquireNanos(1, unit.toNanos(time)); // @mutex-try-timed
        }

        public void unlock() {
            sync.release(1); // @mutex-unlock
        }

        public Condition newCondition() {
            return sync.newCondition();
        }

        boolean queued(Thread t) {
            return sync.isQueued(t);
        }
    }

    static long counter;
    static volatile boolean held, done;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int pairs = Integer.parseInt(args[1]);
        Mutex m = new Mutex();
        CountDownLatch start = new CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int j = 0; j < pairs; j++) {
                    m.lock();
                    try {
                        counter++;
                    } finally {
                        m.unlock();
                    }
                }
            }, "mutex-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        start.countDown();
        for (Thread t : ts) {
            t.join();
        }
        boolean took = m.tryLock(10, TimeUnit.MILLISECONDS);
        m.unlock();
        m.lockInterruptibly();
        m.unlock();
        // Held by another thread: a timed tryLock times out, a lockInterruptibly is interrupted.
        Thread holder = new Thread(() -> {
            m.lock();
            held = true;
            while (!done) {
                Thread.onSpinWait();
            }
            m.unlock();
        }, "holder");
        holder.start();
        while (!held) {
            Thread.onSpinWait();
        }
        boolean timedOut = !m.tryLock(1, TimeUnit.MILLISECONDS);
        Thread victim = new Thread(() -> {
            try {
                m.lockInterruptibly();
                m.unlock();
            } catch (InterruptedException e) {
                // expected
            }
        }, "victim");
        victim.start();
        while (!m.queued(victim)) {
            Thread.onSpinWait();
        }
        victim.interrupt();
        victim.join();
        done = true;
        holder.join();
        System.out.println("aqs done " + counter + " " + took + " " + timedOut);
    }
}
