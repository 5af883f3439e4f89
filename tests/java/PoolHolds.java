import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Holds of the program and of the JDK in one thread: a one-thread pool runs two tasks, each
 * holding a monitor of its own for 30 ms (the program's holds, past the default 10 ms
 * threshold), while the worker holds its own lock (ThreadPoolExecutor.runWorker) around each
 * task: JDK-internal holds at least as long.
 */
public class PoolHolds {
    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        for (int t = 0; t < 2; t++) {
            final Object mine = new Object();
            pool.submit(() -> {
                synchronized (mine) { // @held
                    try {
                        Thread.sleep(30);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
        }
        pool.shutdown();
        System.out.println("done=" + pool.awaitTermination(60, TimeUnit.SECONDS));
    }
}
