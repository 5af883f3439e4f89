/** Starts and ends args[0] threads, 100 at a time; each makes one tracked call. */
public class ManyThreads {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Object lock = new Object();
        for (int base = 0; base < n; base += 100) {
            Thread[] batch = new Thread[Math.min(100, n - base)];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = new Thread(() -> {
                    synchronized (lock) {
                        lock.notifyAll();
                    }
                }, "worker-" + (base + i));
                batch[i].start();
            }
            for (Thread t : batch) t.join();
        }
        System.out.println("threads done " + n);
    }
}
