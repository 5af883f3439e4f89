/**
 * notify with nobody waiting, and notify with a thread waiting, each forced: main first calls
 * notify COUNT times on an object nobody waits on (no other thread exists yet that touches it);
 * then a waiter thread takes the monitor, sets `ready` and waits until `done`, in one
 * synchronized block, so that main, which sees `ready` only once it holds the monitor, can
 * only see it while the waiter is inside wait(): its notifyAll then always has a waiter, and
 * the notifyAll right after it, in the same synchronized block, never has one (the first woke
 * the only waiter, which cannot return from wait() before main lets the monitor go).
 * Usage: Notifies COUNT
 */
public class Notifies {
    static final Object lock = new Object();
    static boolean ready, done;

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
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
