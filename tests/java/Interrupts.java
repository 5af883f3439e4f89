/** Blocking calls that end by an exception: an interrupted wait, sleep, join and acquire. */
public class Interrupts {
    static final Object lock = new Object();

    static Thread blocking(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.start();
        return t;
    }

    static void awaitBlocked(Thread t) {
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
    }

    public static void main(String[] args) throws Exception {
        Thread waiter = blocking("waiter", () -> {
            synchronized (lock) {
                try {
                    lock.wait(); // @waiter-wait
                    System.out.println("not interrupted?");
                } catch (InterruptedException e) {
                    System.out.println("wait interrupted");
                }
            }
        });
        Thread sleeper = blocking("sleeper", () -> {
            try {
                Thread.sleep(60_000); // @sleeper-sleep
            } catch (InterruptedException e) {
                System.out.println("sleep interrupted");
            }
        });
        Thread joiner = blocking("joiner", () -> {
            try {
                Thread.currentThread().join(); // @joiner-join (joins itself: never returns by itself)
            } catch (InterruptedException e) {
                System.out.println("join interrupted");
            }
        });
        java.util.concurrent.Semaphore none = new java.util.concurrent.Semaphore(0);
        Thread acquirer = blocking("acquirer", () -> {
            try {
                none.acquire(); // @acquirer-acquire
            } catch (InterruptedException e) {
                System.out.println("acquire interrupted");
            }
        });
        for (Thread t : new Thread[] {waiter, sleeper, joiner, acquirer}) {
            awaitBlocked(t);
            t.interrupt();
            t.join();
        }
        System.out.println("interrupts done");
    }
}
