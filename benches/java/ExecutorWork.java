import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed pool of 4 threads running 20,000 x SCALE small tasks submitted by the main thread,
 * which waits for each batch of 100 with Future.get: the executor's work queue
 * (LinkedBlockingQueue: a ReentrantLock, conditions, parks) is where the threads meet.
 * Usage: java ExecutorWork SCALE
 */
public class ExecutorWork {
    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int tasks = 20_000 * scale;
        AtomicLong sum = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        Future<?>[] batch = new Future<?>[100];
        for (int i = 0; i < tasks; i += batch.length) {
            for (int j = 0; j < batch.length; j++) {
                int n = i + j;
                batch[j] = pool.submit(() -> {
                    long x = n;
                    for (int k = 0; k < 200; k++) {
                        x = x * 6364136223846793005L + 1442695040888963407L;
                    }
                    sum.addAndGet(x & 1);
                });
            }
            for (Future<?> f : batch) {
                f.get();
            }
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println("tasks " + tasks + " odd " + sum.get());
    }
}
