import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A real deadlock across the two kinds of lock: thread "juc-first" holds a ReentrantLock and
 * enters synchronized (monitor); thread "monitor-first" holds the monitor and takes the lock.
 * Both are daemons: main waits until both are stuck, prints their identity hashes, and ends.
 */
public class MixedDeadlock {
    static final ReentrantLock lock = new ReentrantLock();
    static final Object monitor = new Object();
    static volatile boolean lockHeld, monitorHeld;

    public static void main(String[] args) {
        Thread a = new Thread(() -> {
            lock.lock(); // @juc-first-lock
            lockHeld = true;
            while (!monitorHeld) {
                Thread.onSpinWait();
            }
            synchronized (monitor) { // @juc-first-enter
                lock.unlock();
            }
        }, "juc-first");
        Thread b = new Thread(() -> {
            synchronized (monitor) { // @monitor-first-enter
                monitorHeld = true;
                while (!lockHeld) {
                    Thread.onSpinWait();
                }
                lock.lock(); // @monitor-first-lock
                lock.unlock();
            }
        }, "monitor-first");
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        b.start();
        while (a.getState() != Thread.State.BLOCKED || LockSupport.getBlocker(b) == null) {
            Thread.onSpinWait();
        }
        System.out.printf("deadlocked juc-first=%08X monitor-first=%08X%n",
                System.identityHashCode(a), System.identityHashCode(b));
    }
}
