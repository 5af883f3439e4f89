import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * ROUNDS tasks on a one-thread executor, each a fresh FutureTask that main parks on in
 * Future.get: every task waits until main is parked (Thread.State.WAITING) before it
 * returns, so every get parks on its own FutureTask, a fresh blocker each time (as a server's
 * request futures are). Prints `futures done ROUNDS`.
 * Usage: FreshBlockers ROUNDS
 */
public class FreshBlockers {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        Thread main = Thread.currentThread();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        int done = 0;
        for (int i = 0; i < rounds; i++) {
            Future<Integer> f = pool.submit(() -> {
                while (main.getState() != Thread.State.WAITING) {
                    Thread.onSpinWait();
                }
                return 1;
            });
            done += f.get(); // @get
        }
        pool.shutdown();
        System.out.println("futures done " + done);
    }
}
