/**
 * Ends the JVM in the way args[0] names, after a known number of events (NOTIFIES notifies
 * on main): exit, exit-many (System.exit from EXITERS threads at once), throw, halt, oom (an
 * OutOfMemoryError nobody catches), oom-caught (one the program catches, then NOTIFIES more
 * notifies and a normal end), crash (an OutOfMemoryError with -XX:+CrashOnOutOfMemoryError:
 * a fatal error), or wait (for SIGTERM / kill -9 from the test). The heap is filled inside
 * synchronized blocks, so that the tracker runs while memory is short.
 */
public class Exits {
    static final int NOTIFIES = 2000;
    static final int EXITERS = 16;
    static final Object lock = new Object();

    /** Fills the heap, one synchronized block per allocation, until OutOfMemoryError. */
    static void fillHeap() {
        java.util.List<long[]> hog = new java.util.ArrayList<>();
        while (true) {
            synchronized (lock) {
                hog.add(new long[1 << 14]);
            }
        }
    }

    static void notifies() {
        for (int i = 0; i < NOTIFIES; i++) {
            synchronized (lock) {
                lock.notify();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                // ends the thread
            }
        }, "sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        notifies();
        System.out.println("ready");
        System.out.flush();
        switch (args[0]) {
            case "exit":
                System.exit(3);
                break;
            case "exit-many": {
                // Every exiter waits at one barrier, so that they call System.exit together.
                java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(EXITERS);
                Thread[] ts = new Thread[EXITERS];
                for (int i = 0; i < ts.length; i++) {
                    ts[i] = new Thread(() -> {
                        try {
                            go.await();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        System.exit(4);
                    }, "exiter-" + i);
                }
                for (Thread t : ts) t.start();
                Thread.sleep(600_000);
                break;
            }
            case "throw":
                throw new IllegalStateException("uncaught on purpose");
            case "halt":
                Runtime.getRuntime().halt(5);
                break;
            case "oom":
            case "crash":
                fillHeap();
                break;
            case "oom-caught":
                try {
                    fillHeap();
                } catch (OutOfMemoryError e) {
                    System.out.println("caught " + e.getClass().getName());
                }
                notifies();
                break;
            case "wait":
                Thread.sleep(600_000);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
