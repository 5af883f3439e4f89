/**
 * A missed wakeup, forced: main notifies `signal` while no thread waits on it (no other thread
 * exists yet), then starts "waiter", which waits on it with a timeout that nobody ends: the
 * notify came too early. Prints the signal's identity hash.
 */
public class MissedWakeup {
    static final Object signal = new Object();

    public static void main(String[] args) throws Exception {
        synchronized (signal) {
            signal.notify(); // @notify
        }
        Thread waiter = new Thread(() -> {
            synchronized (signal) {
                try {
                    signal.wait(200); // @wait
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "waiter");
        waiter.start();
        waiter.join();
        System.out.printf("signal=%08X%n", System.identityHashCode(signal));
    }
}
