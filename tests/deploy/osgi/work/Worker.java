package work;

/**
 * Two threads taking turns through a monitor: synchronized blocks and a synchronized
 * method, wait and notifyAll, start and join. Its output is the same every run.
 */
public class Worker {
    private final Object lock = new Object();
    private int turn;

    synchronized void bump() {
        turn++;
    }

    public static String run() throws InterruptedException {
        Worker w = new Worker();
        Thread other = new Thread(() -> w.take(1), "worker-pong");
        other.start();
        w.take(0);
        other.join();
        return "done " + w.turn;
    }

    void take(int parity) {
        try {
            for (int i = 0; i < 5; i++) {
                synchronized (lock) {
                    while (turn % 2 != parity) {
                        lock.wait();
                    }
                    bump();
                    lock.notifyAll();
                }
            }
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }
}
