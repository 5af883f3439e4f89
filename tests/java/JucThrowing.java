import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * Lock calls that end by an exception after they did what they were for: a lock built on AQS
 * whose tryAcquire takes the lock and then throws, and whose tryRelease releases it and then
 * throws. The JDK's own locks do the same when a StackOverflowError is delayed to the end of
 * their @ReservedStackAccess sections (tests/java/JucOverflow.java), here by design, at marked
 * lines, in every run. Then an acquisition that throws before it took anything, a release of a
 * lock the thread does not hold (IllegalMonitorStateException), a plain pair, and another
 * thread that takes the lock: it was left free.
 */
public class JucThrowing {
    static final class Mutex extends AbstractQueuedSynchronizer {
        volatile boolean throwBefore;
        volatile boolean throwAfter;

        @Override
        protected boolean tryAcquire(int n) {
            if (throwBefore) {
                throw new IllegalStateException("before taking");
            }
            if (compareAndSetState(0, 1)) {
                setExclusiveOwnerThread(Thread.currentThread());
                if (throwAfter) {
                    throw new IllegalStateException("after taking");
                }
                return true;
            }
            return false;
        }

        @Override
        protected boolean tryRelease(int n) {
            if (getExclusiveOwnerThread() != Thread.currentThread()) {
                throw new IllegalMonitorStateException("not the owner");
            }
            setExclusiveOwnerThread(null);
            setState(0);
            if (throwAfter) {
                throw new IllegalStateException("after releasing");
            }
            return true;
        }

        boolean mine() {
            return getExclusiveOwnerThread() == Thread.currentThread();
        }
    }

    public static void main(String[] args) throws Exception {
        Mutex m = new Mutex();
        m.throwAfter = true;
        try {
            m.acquire(1); // @taken-lock
            System.out.println("acquire returned?");
        } catch (IllegalStateException e) {
            System.out.println("acquire threw " + e.getMessage() + ", held: " + m.mine());
        }
        try {
            m.release(1); // @released-unlock
            System.out.println("release returned?");
        } catch (IllegalStateException e) {
            System.out.println("release threw " + e.getMessage() + ", held: " + m.mine());
        }
        m.throwAfter = false;
        m.throwBefore = true;
        try {
            m.acquire(1); // @before-lock
            System.out.println("acquire returned?");
        } catch (IllegalStateException e) {
            System.out.println("acquire threw " + e.getMessage() + ", held: " + m.mine());
        }
        m.throwBefore = false;
        try {
            m.release(1); // @unheld-unlock
            System.out.println("release returned?");
        } catch (IllegalMonitorStateException e) {
            System.out.println("release threw " + e.getMessage());
        }
        m.acquire(1); // @plain-lock
        m.release(1); // @plain-unlock
        Thread other = new Thread(() -> {
            m.acquire(1); // @other-lock
            m.release(1); // @other-unlock
            System.out.println("taken by " + Thread.currentThread().getName());
        }, "other");
        other.start();
        other.join();
    }
}
