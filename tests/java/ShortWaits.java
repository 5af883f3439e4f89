import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * ROUNDS hand-offs, each forced to wake a thread that is waiting: in every round the waiter
 * sets `ready` and waits in one synchronized block (one locked section for the Condition), so
 * main, which sees `ready` only once it holds the monitor (lock), can only see it while the
 * waiter is inside wait() (await()); main then sleeps SLEEP_MS, so the wait it ends lasts at
 * least that long, and wakes it with notify (signal). A third hand-off parks the waiter until
 * main unparks it (not forced: the unpark may come before the park). The program counts its
 * own wait, await and park calls (a spurious wake-up makes one more) and prints them.
 * Usage: ShortWaits ROUNDS SLEEP_MS
 */
public class ShortWaits {
    static final Object lock = new Object();
    static final ReentrantLock juc = new ReentrantLock();
    static final Condition turn = juc.newCondition();
    static boolean ready, go, jready, jgo;
    static volatile boolean pgo;
    static int waits, awaits, parks;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        long sleep = Long.parseLong(args[1]);
        Thread waiter = new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                synchronized (lock) {
                    ready = true;
                    while (!go) {
                        waits++;
                        try {
                            lock.wait(); // @wait
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    go = false;
                }
                juc.lock();
                try {
                    jready = true;
                    while (!jgo) {
                        awaits++;
                        turn.awaitUninterruptibly(); // @await
                    }
                    jgo = false;
                } finally {
                    juc.unlock();
                }
                while (!pgo) {
                    parks++;
                    LockSupport.park(lock); // @park
                }
                pgo = false;
            }
        }, "waiter");
        waiter.start();
        for (int i = 0; i < rounds; i++) {
            while (true) {
                synchronized (lock) {
                    if (ready) {
                        ready = false;
                        Thread.sleep(sleep);
                        go = true;
                        lock.notify(); // @notify
                        break;
                    }
                }
                Thread.sleep(1);
            }
            while (true) {
                juc.lock();
                try {
                    if (jready) {
                        jready = false;
                        Thread.sleep(sleep);
                        jgo = true;
                        turn.signal(); // @signal
                        break;
                    }
                } finally {
                    juc.unlock();
                }
                Thread.sleep(1);
            }
            pgo = true;
            LockSupport.unpark(waiter); // @unpark
            while (pgo) {
                Thread.sleep(1);
            }
        }
        waiter.join();
        System.out.println("waits " + waits + " awaits " + awaits + " parks " + parks);
    }
}
