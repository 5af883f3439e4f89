package app.work;

/**
 * Two threads meeting five times at a barrier made of one monitor: synchronized blocks and a
 * synchronized method, wait and notifyAll, start and join. The calls are forced, not left to
 * the scheduler: in every round the first thread to arrive must wait (the round advances only
 * when the other arrives, which it cannot do while the first holds the monitor) and the second
 * must call notifyAll. So every run makes the same calls at the same lines, in both modes, and
 * prints the same output.
 */
public class Worker {
    private final Object lock = new Object();
    private int turn;
    private int arrived;
    private int round;

    synchronized void bump() {
        turn++;
    }

    public static String run() throws InterruptedException {
        Worker w = new Worker();
        Thread other = new Thread(w::meet, "worker-pong");
        other.start();
        w.meet();
        other.join();
        return "done " + w.turn;
    }

    void meet() {
        try {
            for (int i = 0; i < 5; i++) {
                synchronized (lock) {
                    int r = round;
                    if (++arrived == 2) {
                        arrived = 0;
                        round++;
                        lock.notifyAll();
                    } else {
                        while (round == r) {
                            lock.wait();
                        }
                    }
                    bump();
                }
            }
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }
}
