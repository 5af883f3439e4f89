/**
 * Guarded sites under guards=on (issue 45): `N` holds of `lock` at one site in a tight loop,
 * then, past the agent's exact budget when N is large, one hold of `slow` that sleeps 30 ms
 * (a long hold, whether the sample follows it or not) and one of `waited` whose 40 ms is an
 * Object.wait that times out (the monitor is released meanwhile: no long hold); between them,
 * N / 4 holds of a synchronized method that calls another of its object's (reentrant).
 * Usage: GuardedSample N
 */
public class GuardedSample {
    static final Object lock = new Object();
    static final Object slow = new Object();
    static final Object waited = new Object();
    static long counter;

    static final class Reentrant {
        long sum;

        synchronized void outer(long i) {
            inner(i); // @outer (a synchronized method's site: its first line)
        }

        synchronized void inner(long i) {
            sum += i & 3; // @inner
        }

        /** A long hold whose time is spent in a reentrant call: one long hold, at its own site. */
        synchronized void slowOuter() throws InterruptedException {
            slowInner(); // @slow-outer
        }

        synchronized void slowInner() throws InterruptedException {
            Thread.sleep(30); // @slow-inner
        }
    }

    public static void main(String[] args) throws Exception {
        long n = Long.parseLong(args[0]);
        for (long i = 0; i < n; i++) {
            synchronized (lock) { // @loop
                counter += i & 7;
            }
        }
        // a synchronized method calling another of its object's: n / 4 outermost holds, each
        // with a reentrant acquisition inside, which is no hold of its own
        Reentrant r = new Reentrant();
        for (long i = 0; i < n / 4; i++) {
            r.outer(i);
        }
        // A thread's outermost holds are drawn one in 16: a few tries until one is left out
        // would be a test of luck; every one of these is long, followed or not.
        for (int k = 0; k < 4; k++) {
            synchronized (slow) { // @slow
                Thread.sleep(30); // @long
            }
            synchronized (waited) { // @waited
                waited.wait(40);
            }
            r.slowOuter();
        }
        System.out.println(counter);
    }
}
