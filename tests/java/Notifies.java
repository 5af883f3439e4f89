/**
 * notify with nobody waiting, and notify with a thread waiting, each forced: main first calls
 * notify COUNT times on an object nobody waits on (no other thread exists yet that touches it);
 * then a waiter thread takes the monitor, sets `ready` and waits until `done`, in one
 * synchronized block, so that main, which sees `ready` only once it holds the monitor, can
 * only see it while the waiter is inside wait(): its notifyAll then always has a waiter, and
 * the notifyAll right after it, in the same synchronized block, never has one (the first woke
 * the only waiter, which cannot return from wait() before main lets the monitor go). Before
 * that notifyAll, with the waiter inside wait(), main calls notifyAll on NEIGHBOURS fresh
 * objects, nobody waiting on any: enough that some share the waiter's slot in the agent's
 * table of waiters (16,384 slots by identity hash), and none of those is a wake-up.
 * Usage: Notifies COUNT [NEIGHBOURS]
 */
public class Notifies {
    static final Object lock = new Object();
    static boolean ready, done;

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        int neighbours = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        for (int i = 0; i < count; i++) {
            synchronized (lock) {
                lock.notify(); // @alone
            }
        }
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                ready = true;
                while (!done) {
                    try {
                        lock.wait(); // @wait
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "waiter");
        waiter.start();
        while (true) {
            synchronized (lock) {
                if (ready) {
                    for (int i = 0; i < neighbours; i++) {
                        Object o = new Object();
                        synchronized (o) {
                            o.notifyAll(); // @neighbour
                        }
                    }
                    done = true;
                    lock.notifyAll(); // @wakes
                    lock.notifyAll(); // @again
                    break;
                }
            }
            Thread.sleep(1);
        }
        waiter.join();
        System.out.println("notified " + count + " times alone, once with a waiter, once after");
    }
}
