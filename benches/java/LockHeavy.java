/**
 * A lock-heavy workload: contended synchronized counters, a wait/notify producer/consumer,
 * and ordinary method calls between them. Prints its own elapsed time.
 */
public class LockHeavy {
    static final Object counterLock = new Object();
    static long counter;

    static int work(int x) {
        return (x * 31) ^ (x >>> 3);
    }

    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long start = System.nanoTime();
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                int acc = 0;
                for (int i = 0; i < 50_000 * scale; i++) {
                    acc += work(i);
                    synchronized (counterLock) {
                        counter++;
                    }
                }
                if (acc == 42) System.out.println();
            }, "counter-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();

        final Object q = new Object();
        final int[] box = {0, 0}; // {full, taken}
        int items = 5_000 * scale;
        Thread consumer = new Thread(() -> {
            for (int i = 0; i < items; i++) {
                synchronized (q) {
                    while (box[0] == 0) {
                        try { q.wait(); } catch (InterruptedException e) { return; }
                    }
                    box[0] = 0;
                    box[1]++;
                    q.notify();
                }
            }
        }, "consumer");
        consumer.start();
        for (int i = 0; i < items; i++) {
            synchronized (q) {
                while (box[0] == 1) q.wait();
                box[0] = 1;
                q.notify();
            }
        }
        consumer.join();
        System.out.printf("counter=%d taken=%d ms=%d%n", counter, box[1], (System.nanoTime() - start) / 1_000_000);
    }
}
