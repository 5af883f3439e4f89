import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Notifies.java with a ReentrantLock's Condition: main calls signalAll COUNT times with
 * nobody awaiting, then once while a thread awaits for certain (it sets `ready` and awaits in
 * one locked section, so main sees `ready` only while it is inside await). Before that, COUNT
 * calls of signal and COUNT unparks of a thread that is not parked (main itself), which wake
 * nobody either.
 * Usage: Signals COUNT
 */
public class Signals {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition changed = lock.newCondition();
    static boolean ready, done;

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        for (int i = 0; i < count; i++) {
            lock.lock();
            try {
                changed.signal(); // @alone-signal
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(Thread.currentThread()); // @alone-unpark
        }
        for (int i = 0; i < count; i++) {
            lock.lock();
            try {
                changed.signalAll(); // @alone
            } finally {
                lock.unlock();
            }
        }
        Thread waiter = new Thread(() -> {
            lock.lock();
            try {
                ready = true;
                while (!done) {
                    changed.awaitUninterruptibly(); // @await
                }
            } finally {
                lock.unlock();
            }
        }, "waiter");
        waiter.start();
        while (true) {
            lock.lock();
            try {
                if (ready) {
                    done = true;
                    changed.signalAll(); // @wakes
                    break;
                }
            } finally {
                lock.unlock();
            }
            Thread.sleep(1);
        }
        waiter.join();
        System.out.println("signalled " + count + " times alone, once with a waiter");
    }
}
