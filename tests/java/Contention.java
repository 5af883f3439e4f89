/**
 * Forced contention with a known owner: main holds the lock until "blocked" has been BLOCKED
 * on it for a while. Prints the identity hashes the test checks the log against.
 */
public class Contention {
    static final Object lock = new Object();
    static int counter;

    public static void main(String[] args) throws Exception {
        Thread blocked = new Thread(() -> {
            synchronized (lock) { // @blocked-enter
                counter++;
            }
        }, "blocked");
        synchronized (lock) {
            blocked.start();
            while (blocked.getState() != Thread.State.BLOCKED) {
                Thread.onSpinWait();
            }
            // The JVM marks a thread BLOCKED just before it reports the contention; hold the
            // lock a while longer so the agent sees main as the owner.
            Thread.sleep(300);
        }
        blocked.join();
        System.out.printf("lock=%08X main=%08X blocked=%08X counter=%d%n",
                System.identityHashCode(lock), System.identityHashCode(Thread.currentThread()),
                System.identityHashCode(blocked), counter);
    }
}
