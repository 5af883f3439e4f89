import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed pool of 4 threads running 20,000 x SCALE small tasks submitted by the main thread,
 * which waits for each batch of 100 with Future.get: the executor's work queue
 * (LinkedBlockingQueue: a ReentrantLock, conditions, parks) is where the threads meet.
 * Usage: java ExecutorWork SCALE, or java ExecutorWork steady WARMUP_S MEASURE_S (tasks done
 * per second after the warm-up, submitted by a second thread; see Steady)
 */
public class ExecutorWork {
    static final AtomicLong sum = new AtomicLong();

    static void run(ExecutorService pool, long tasks) throws Exception {
        Future<?>[] batch = new Future<?>[100];
        for (long i = 0; i < tasks; i += batch.length) {
            for (int j = 0; j < batch.length; j++) {
                long n = i + j;
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
            Steady.done(0, i + batch.length);
        }
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        if (Steady.requested(args, 0)) {
            new Thread(() -> {
                try {
                    run(pool, Long.MAX_VALUE - 100);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "submitter").start();
            Steady.measure(args, 0, "tasks");
        }
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int tasks = 20_000 * scale;
        run(pool, tasks);
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println("tasks " + tasks + " odd " + sum.get());
    }
}
