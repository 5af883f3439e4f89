/**
 * A strict wait/notify hand-off: main holds the lock while it starts "pong", so every
 * per-thread event sequence is fixed (see tests/e2e/events.rs). Markers name the lines the
 * tests look up.
 */
public class PingPong {
    static final Object lock = new Object();
    static int turn = 0;
    static final int ROUNDS = 5;

    public static void main(String[] args) throws Exception {
        Thread pong = new Thread(PingPong::pong, "pong");
        synchronized (lock) {
            pong.start(); // @start
            for (int i = 0; i < ROUNDS; i++) {
                turn = 1;
                lock.notify(); // @ping-notify
                do {
                    lock.wait(); // @ping-wait
                } while (turn != 0);
            }
        }
        pong.join(); // @join
        Thread.sleep(1); // @sleep
        System.out.println("pingpong done");
    }

    static void pong() {
        synchronized (lock) {
            for (int i = 0; i < ROUNDS; i++) {
                while (turn != 1) {
                    try {
                        lock.wait(); // @pong-wait
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                turn = 0;
                lock.notify(); // @pong-notify
            }
        }
    }
}
