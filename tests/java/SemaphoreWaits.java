import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * ROUNDS acquisitions and releases of a semaphore with permits to spare (none of them can
 * wait: main is the only thread that uses it), then HANDOFFS hand-offs through a semaphore
 * with no permits, each forced to end a long wait: the taker blocks in acquire, main sees it
 * past its previous acquisition and queued (Semaphore.hasQueuedThreads: a woken taker stays
 * queued until it has the permit, so the count tells the rounds apart), sleeps SLEEP_MS and
 * only then releases the permit it waits for. Prints `semaphores done ROUNDS HANDOFFS`.
 * Usage: SemaphoreWaits ROUNDS HANDOFFS SLEEP_MS
 */
public class SemaphoreWaits {
    static final Object started = new Object();

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int handoffs = Integer.parseInt(args[1]);
        long sleep = Long.parseLong(args[2]);
        synchronized (started) {
            // a monitor first: the thread's tracker state exists before its first acquire
        }
        Semaphore spare = new Semaphore(2);
        int taken = 0;
        for (int i = 0; i < rounds; i++) {
            spare.acquire(); // @spare-acquire
            taken++;
            spare.release(); // @spare-release
        }
        Semaphore gate = new Semaphore(0);
        AtomicInteger passed = new AtomicInteger();
        Thread taker = new Thread(() -> {
            synchronized (started) {
            }
            for (int i = 0; i < handoffs; i++) {
                gate.acquireUninterruptibly(); // @gate-acquire
                passed.incrementAndGet();
            }
        }, "taker");
        taker.start();
        for (int i = 0; i < handoffs; i++) {
            while (passed.get() < i || !gate.hasQueuedThreads()) {
                Thread.onSpinWait();
            }
            Thread.sleep(sleep);
            gate.release(); // @gate-release
        }
        taker.join();
        System.out.println("semaphores done " + taken + " " + passed.get());
    }
}
