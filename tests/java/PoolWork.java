import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.ArrayList;
import java.util.List;

/** A java.util.concurrent program: a pool, futures, a latch and a synchronized counter. */
public class PoolWork {
    static long counter;
    static final Object lock = new Object();

    public static void main(String[] args) throws Exception {
        ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        CountDownLatch done = new CountDownLatch(200);
        AtomicLong sum = new AtomicLong();
        List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < 200; t++) {
            final int task = t;
            results.add(pool.submit(() -> {
                for (int i = 0; i < 100; i++) {
                    synchronized (lock) {
                        counter++;
                    }
                }
                sum.addAndGet(task);
                done.countDown();
                return task * 2;
            }));
        }
        done.await();
        long total = 0;
        for (Future<Integer> f : results) total += f.get();
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        System.out.println("counter=" + counter + " sum=" + sum.get() + " total=" + total);
    }
}
