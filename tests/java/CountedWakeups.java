import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Waits that a call woke while they were short, and that became long while their thread took
 * the lock back, forced: per round, "waiter" awaits `ready` (a plain await(), no timeout);
 * "signaller" signals it as soon as it waits (the agent counts a signal that finds only waits
 * shorter than its threshold, 10 ms by default) and then keeps the lock HOLD_MS longer, so the
 * await returns after HOLD_MS. The same with a monitor: wait() woken by notify(). No timeout
 * ends any of these waits, and a call woke each one. Args: [rounds] [holdMs]. Prints the
 * condition's and the monitor's identity hashes.
 */
public class CountedWakeups {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition ready = lock.newCondition();
    static final Object monitor = new Object();
    static boolean signalled;
    static boolean notified;
    static boolean monitorWaiting;

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int holdMs = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        Thread waiter = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        signalled = false;
                        while (!signalled) {
                            ready.await(); // @await
                        }
                    } finally {
                        lock.unlock();
                    }
                    synchronized (monitor) {
                        notified = false;
                        monitorWaiting = true;
                        while (!notified) {
                            monitor.wait(); // @wait
                        }
                    }
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "waiter");
        Thread signaller = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        // As soon as the waiter awaits: its await is still short.
                        while (!lock.hasWaiters(ready)) {
                            lock.unlock();
                            Thread.onSpinWait();
                            lock.lock();
                        }
                        signalled = true;
                        ready.signal(); // @signal
                        Thread.sleep(holdMs); // the lock stays held: the await becomes long
                    } finally {
                        lock.unlock();
                    }
                    synchronized (monitor) {
                        while (!monitorWaiting) {
                            monitor.wait(1);
                        }
                        monitorWaiting = false;
                        notified = true;
                        monitor.notify(); // @notify
                        Thread.sleep(holdMs);
                    }
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "signaller");
        waiter.start();
        signaller.start();
        waiter.join();
        signaller.join();
        System.out.printf("condition=%08X monitor=%08X%n",
                System.identityHashCode(ready), System.identityHashCode(monitor));
    }
}
