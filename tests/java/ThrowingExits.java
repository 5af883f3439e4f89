/**
 * THREADS threads (args[0]) each leave a synchronized block on one monitor ROUNDS times
 * (args[1]) by an exception, so that every release is the exception path of javac's
 * synchronized block (its handler releases the monitor and rethrows), with the other threads
 * waiting to take the monitor next. Prints the monitor's hash and the counts (which do not
 * depend on timing).
 */
public class ThrowingExits {
    static final Object monitor = new Object();
    /** Thrown every time: no stack trace to fill, so the releases come close together. */
    static final RuntimeException LEAVE = new RuntimeException("leave", null, false, false) {};
    static long inMonitor;
    static long caught;
    static volatile boolean go;

    static void once() {
        synchronized (monitor) {
            inMonitor++;
            if (inMonitor >= 0) {
                throw LEAVE;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        Thread[] ts = new Thread[threads];
        long[] each = new long[threads];
        for (int i = 0; i < threads; i++) {
            int me = i;
            ts[i] = new Thread(() -> {
                while (!go) {
                    Thread.onSpinWait();
                }
                for (int r = 0; r < rounds; r++) {
                    try {
                        once();
                    } catch (RuntimeException e) {
                        each[me]++;
                    }
                }
            }, "worker-" + i);
            ts[i].start();
        }
        go = true;
        for (Thread t : ts) {
            t.join();
        }
        for (long c : each) {
            caught += c;
        }
        System.out.printf("monitor=%08X inMonitor=%d caught=%d%n",
                System.identityHashCode(monitor), inMonitor, caught);
    }
}
