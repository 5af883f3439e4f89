import java.util.concurrent.CountDownLatch;

/**
 * Guarded sites under guards=on past the agent's exact budget (issue 45) with many threads:
 * `main` first takes `warm` 1,500,000 times (a million holds pass the budget); then "many":
 * 300 threads alive at once (more than the tracker's 256 slots of threads' records), each
 * taking `shared` 10,000 times at one site; or "churn": 3,000 threads one after another, each
 * taking `shared` once (a thread's first hold). Every hold is drawn alike, whatever the thread.
 * Usage: GuardedThreads many|churn
 */
public class GuardedThreads {
    static final Object warm = new Object();
    static final Object shared = new Object();
    static long counter;

    static void hold(int n) {
        for (int i = 0; i < n; i++) {
            synchronized (shared) { // @shared
                counter++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 1_500_000; i++) {
            synchronized (warm) {
                counter += i & 3;
            }
        }
        if (args[0].equals("many")) {
            int n = 300;
            CountDownLatch alive = new CountDownLatch(n);
            CountDownLatch go = new CountDownLatch(1);
            Thread[] ts = new Thread[n];
            for (int k = 0; k < n; k++) {
                ts[k] = new Thread(() -> {
                    alive.countDown();
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    hold(10_000);
                }, "worker-" + k);
                ts[k].start();
            }
            alive.await();
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
        } else {
            for (int k = 0; k < 3_000; k++) {
                Thread t = new Thread(() -> hold(1), "churn-" + k);
                t.start();
                t.join();
            }
        }
        System.out.println(counter);
    }
}
