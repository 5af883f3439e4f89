/**
 * Contentions whose owner releases the monitor as soon as the other thread blocks on it:
 * ROUNDS times, main holds the lock, lets "taker" try it, and releases it the moment the JVM
 * marks taker BLOCKED, which is just before the JVM reports the contention. So every
 * contention's owner is main, and by the time the agent handles the report (with trace=all,
 * after writing out taker's buffered holds of another monitor) main has released the lock.
 * Prints the hashes the test checks the log against.
 *
 * BLOCKED alone does not say on which monitor: a thread is also BLOCKED while it waits for a
 * class's initialisation or a class loader's lock, and a JDK 25 run of the suite once saw
 * taker BLOCKED so, main released the lock before taker came to it, and the round had no
 * contention. So main checks the monitor (ThreadMXBean's LockInfo) and names on stderr any
 * other it saw taker blocked on.
 * Usage: java Owners ROUNDS
 */
public class Owners {
    static final Object lock = new Object();
    static final Object mine = new Object();
    static volatile int round;
    static volatile int taken;
    static int counter;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        Thread taker = new Thread(() -> {
            for (int r = 1; r <= rounds; r++) {
                // Holds of a monitor of its own, buffered by the tracker: with trace=all the
                // agent writes them out before it handles taker's contention, by which time
                // main has long released the lock.
                for (int k = 0; k < 100; k++) {
                    synchronized (mine) {
                        counter++;
                    }
                }
                while (round != r) {
                    Thread.onSpinWait();
                }
                synchronized (lock) { // @taker-enter
                    counter++;
                }
                taken = r; // released: main's next round finds the lock free
            }
        }, "taker");
        java.lang.management.ThreadMXBean threads =
                java.lang.management.ManagementFactory.getThreadMXBean();
        int lockHash = System.identityHashCode(lock);
        java.util.Set<String> elsewhere = new java.util.TreeSet<>();
        taker.start();
        for (int r = 1; r <= rounds; r++) {
            synchronized (lock) {
                round = r;
                while (true) {
                    if (taker.getState() == Thread.State.BLOCKED) {
                        java.lang.management.ThreadInfo info =
                                threads.getThreadInfo(taker.getId());
                        java.lang.management.LockInfo on =
                                info == null ? null : info.getLockInfo();
                        if (on != null && on.getIdentityHashCode() == lockHash) {
                            break;
                        }
                        if (on != null) {
                            elsewhere.add(on.getClassName());
                        }
                    }
                    Thread.onSpinWait();
                }
            }
            while (taken != r) {
                Thread.onSpinWait();
            }
        }
        taker.join();
        if (!elsewhere.isEmpty()) {
            System.err.println("taker was also seen blocked on " + elsewhere);
        }
        System.out.printf("lock=%08X main=%08X taker=%08X rounds=%d%n",
                System.identityHashCode(lock), System.identityHashCode(Thread.currentThread()),
                System.identityHashCode(taker), rounds);
    }
}
