/**
 * Contended synchronized counter: THREADS threads increment one counter under one monitor,
 * 400,000 x SCALE increments in all, with a little work between them.
 * Usage: java Contended THREADS SCALE, or java Contended THREADS steady WARMUP_S MEASURE_S
 * (increments per second after the warm-up; see Steady).
 */
public class Contended {
    static final Object lock = new Object();
    static long counter;

    static int work(int x) {
        return (x * 31) ^ (x >>> 3);
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        boolean steady = Steady.requested(args, 1);
        int scale = steady ? 0 : args.length > 1 ? Integer.parseInt(args[1]) : 1;
        long per = steady ? Long.MAX_VALUE : 400_000L * scale / threads;
        Thread[] ts = new Thread[threads];
        long[] accs = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                long acc = 0;
                for (long i = 0; i < per; i++) {
                    acc += work((int) i);
                    synchronized (lock) {
                        counter++;
                    }
                    Steady.done(id, i + 1);
                }
                accs[id] = acc;
            }, "counter-" + t);
            ts[t].start();
        }
        if (steady) Steady.measure(args, 1, "increments");
        for (Thread t : ts) t.join();
        if (counter != per * threads) throw new AssertionError(counter);
        System.out.println("counter=" + counter + " acc=" + accs[0]);
    }
}
