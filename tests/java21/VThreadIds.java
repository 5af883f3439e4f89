/**
 * Virtual threads (JDK 21+): THREADS (args[0]) of them, in batches of 5,000 (so that the
 * agent's queue keeps up), each taking one monitor once. Prints how many ran.
 */
public class VThreadIds {
    static final Object lock = new Object();
    static int ran;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int batch = 5000;
        for (int done = 0; done < threads; done += batch) {
            int n = Math.min(batch, threads - done);
            Thread[] ts = new Thread[n];
            for (int i = 0; i < n; i++) {
                ts[i] = Thread.ofVirtual().start(() -> {
                    synchronized (lock) {
                        ran++;
                    }
                });
            }
            for (Thread t : ts) {
                t.join();
            }
        }
        System.out.println("ran=" + ran);
    }
}
