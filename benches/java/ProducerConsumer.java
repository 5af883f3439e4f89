/**
 * Producer/consumer with wait/notifyAll on a bounded buffer of 16 slots: 2 producers and
 * 2 consumers hand over 100,000 x SCALE items. Usage: java ProducerConsumer SCALE, or
 * java ProducerConsumer steady WARMUP_S MEASURE_S (items taken per second after the warm-up;
 * see Steady)
 */
public class ProducerConsumer {
    static final int CAP = 16;
    static final long[] buf = new long[CAP];
    static int head, count;

    static void put(long v) throws InterruptedException {
        synchronized (buf) {
            while (count == CAP) buf.wait();
            buf[(head + count) % CAP] = v;
            count++;
            buf.notifyAll();
        }
    }

    static long take() throws InterruptedException {
        synchronized (buf) {
            while (count == 0) buf.wait();
            long v = buf[head];
            head = (head + 1) % CAP;
            count--;
            buf.notifyAll();
            return v;
        }
    }

    public static void main(String[] args) throws Exception {
        boolean steady = Steady.requested(args, 0);
        int scale = steady ? 0 : args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long items = steady ? Long.MAX_VALUE : 100_000L * scale;
        int pairs = 2;
        long[] sums = new long[pairs];
        Thread[] ts = new Thread[2 * pairs];
        for (int p = 0; p < pairs; p++) {
            final int id = p;
            ts[p] = new Thread(() -> {
                try {
                    for (long i = 0; i < items / pairs; i++) put(i);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "producer-" + p);
            ts[pairs + p] = new Thread(() -> {
                try {
                    long s = 0;
                    for (long i = 0; i < items / pairs; i++) {
                        s += take();
                        Steady.done(id, i + 1);
                    }
                    sums[id] = s;
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "consumer-" + p);
        }
        for (Thread t : ts) t.start();
        if (steady) Steady.measure(args, 0, "items");
        for (Thread t : ts) t.join();
        System.out.println("sum=" + (sums[0] + sums[1]));
    }
}
