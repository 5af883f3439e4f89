/**
 * Contended synchronized counter: THREADS threads increment one counter under one monitor,
 * 400,000 x SCALE increments in all, with a little work between them.
 * Usage: java Contended THREADS SCALE
 */
public class Contended {
    static final Object lock = new Object();
    static long counter;

    static int work(int x) {
        return (x * 31) ^ (x >>> 3);
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int scale = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int per = 400_000 * scale / threads;
        Thread[] ts = new Thread[threads];
        long[] accs = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                long acc = 0;
                for (int i = 0; i < per; i++) {
                    acc += work(i);
                    synchronized (lock) {
                        counter++;
                    }
                }
                accs[id] = acc;
            }, "counter-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        if (counter != (long) per * threads) throw new AssertionError(counter);
        System.out.println("counter=" + counter + " acc=" + accs[0]);
    }
}
