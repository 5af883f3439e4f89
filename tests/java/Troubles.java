import java.util.ArrayList;
import java.util.List;

/**
 * Errors thrown inside instrumented regions: args[0] is `sof` (StackOverflowError in a deep
 * recursion through synchronized code), `imse` (notify and wait without the monitor) or `oom`
 * (OutOfMemoryError with the heap full, inside a synchronized block). Each case prints what
 * the program saw and then proves that no monitor stayed held: another thread takes it.
 */
public class Troubles {
    static final Object lock = new Object();
    static int depth;

    static synchronized void recurse() {
        depth++;
        synchronized (lock) {
            recurse();
        }
    }

    static void provesFree(Object o) throws InterruptedException {
        Thread t = new Thread(() -> {
            synchronized (o) {
                System.out.println("monitor free");
            }
        }, "checker");
        t.start();
        t.join(10_000);
        if (t.isAlive()) {
            System.out.println("monitor still held!");
            System.exit(9);
        }
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "sof":
                try {
                    recurse();
                } catch (StackOverflowError e) {
                    System.out.println("caught " + e.getClass().getName() + " deep=" + (depth > 100));
                }
                provesFree(lock);
                provesFree(Troubles.class);
                break;
            case "imse":
                try {
                    lock.notify();
                } catch (IllegalMonitorStateException e) {
                    System.out.println("caught notify " + e.getClass().getName());
                }
                try {
                    lock.wait(10);
                } catch (IllegalMonitorStateException e) {
                    System.out.println("caught wait " + e.getClass().getName());
                }
                provesFree(lock);
                break;
            case "oom": {
                // Everything printed afterwards exists before the heap fills up.
                String caught = "caught java.lang.OutOfMemoryError";
                System.out.println("filling the heap");
                List<long[]> hog = new ArrayList<>();
                try {
                    synchronized (lock) {
                        while (true) {
                            hog.add(new long[1 << 16]);
                        }
                    }
                } catch (OutOfMemoryError e) {
                    hog = null;
                    System.out.println(caught);
                }
                provesFree(lock);
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
