import java.lang.ref.Cleaner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

/**
 * Holds taken by threads whose ThreadLocals the JDK erases between tasks (its InnocuousThread).
 * `cleaner N M [collide]`: N cleanup actions of a Cleaner.create() cleaner (its own
 * InnocuousThread, which erases its ThreadLocals before each cleanup), each taking a monitor M
 * times; with `collide`, first a thread whose ID shares the cleaner thread's slot in the
 * tracker's table (OrcaRec.BY_THREAD, 256 slots) takes the slot and keeps it to the
 * end. `pool N M`: N tasks of ForkJoinPool.commonPool(), one at a time, each taking a monitor M
 * times (its workers are InnocuousForkJoinWorkerThreads on JDK 19 and later, which erase their
 * ThreadLocals when they go idle between tasks).
 */
public class Innocuous {
    static final Object LOCK = new Object();
    static long count;
    static volatile Thread cleanerThread;

    static void hold(int m) {
        for (int i = 0; i < m; i++) {
            synchronized (LOCK) { // @hold
                count++;
            }
        }
    }

    /** Makes `o` unreachable by returning, and collects until `done` reaches `left`. */
    static void collect(CountDownLatch done, long left) throws InterruptedException {
        for (int i = 0; done.getCount() > left; i++) {
            if (i > 6000) {
                throw new IllegalStateException("cleanups not run: " + done.getCount());
            }
            System.gc();
            done.await(10, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    static void register(Cleaner c, Runnable action) {
        c.register(new Object(), action);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        int m = Integer.parseInt(args[2]);
        if (args[0].equals("cleaner")) {
            Cleaner c = Cleaner.create();
            // Which thread is the cleaner's, found by an action that reports nothing to the
            // tracker (so that the collider can take the slot first).
            register(c, () -> cleanerThread = Thread.currentThread());
            for (int i = 0; cleanerThread == null; i++) {
                if (i > 6000) {
                    throw new IllegalStateException("the probe's cleanup did not run");
                }
                System.gc();
                Thread.sleep(10);
            }
            Thread t = cleanerThread;
            CountDownLatch end = new CountDownLatch(1);
            CountDownLatch taken = new CountDownLatch(1);
            if (args.length > 3 && args[3].equals("collide")) {
                Thread other;
                do {
                    other = new Thread(() -> {
                        hold(1);
                        taken.countDown();
                        try {
                            end.await();
                        } catch (InterruptedException e) {
                        }
                    }, "collider");
                } while ((other.getId() & 255) != (t.getId() & 255));
                other.setDaemon(true);
                other.start();
            } else {
                taken.countDown();
            }
            taken.await();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                register(c, () -> {
                    hold(m);
                    done.countDown();
                });
                collect(done, n - i - 1);
            }
            end.countDown();
            System.out.println("cleaner=" + t.getName() + " count=" + count);
        } else {
            for (int i = 0; i < n; i++) {
                CountDownLatch done = new CountDownLatch(1);
                ForkJoinPool.commonPool().execute(() -> {
                    hold(m);
                    done.countDown();
                });
                done.await();
            }
            System.out.println("count=" + count);
        }
    }
}
