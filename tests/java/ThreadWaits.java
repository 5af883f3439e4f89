/**
 * Thread calls that wait briefly or wake nobody, and two that are forced to wait long.
 * THREADS threads are started at one line, and each is joined once it has ended (main spins
 * on isAlive first, so the join returns at once); main then sleeps 1 ms SLEEPS times. Then a
 * thread "slow" is started and main joins it: slow spins until main is WAITING (in that
 * join) and only then sleeps LONG_MS, so the join and slow's sleep both last LONG_MS at
 * least. Prints `thread waits done THREADS SLEEPS`.
 * Usage: ThreadWaits THREADS SLEEPS LONG_MS
 */
public class ThreadWaits {
    static final Object lock = new Object();
    static int ran;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int sleeps = Integer.parseInt(args[1]);
        long longMs = Long.parseLong(args[2]);
        synchronized (lock) {
            // a monitor first: the thread's tracker state exists before its first call
        }
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                synchronized (lock) {
                    ran++;
                }
            });
            t.start(); // @start
            while (t.isAlive()) {
                Thread.onSpinWait();
            }
            t.join(); // @short-join
        }
        for (int i = 0; i < sleeps; i++) {
            Thread.sleep(1); // @short-sleep
        }
        Thread main = Thread.currentThread();
        Thread slow = new Thread(() -> {
            while (main.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
            try {
                Thread.sleep(longMs); // @long-sleep
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "slow");
        slow.start(); // @slow-start
        slow.join(); // @long-join
        System.out.println("thread waits done " + ran + " " + sleeps);
    }
}
