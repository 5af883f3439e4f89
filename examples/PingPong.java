import java.util.concurrent.Semaphore;

/**
 * The example Orca profiles in the README: two threads hand a ball back and forth with
 * wait/notify, a referee keeps grabbing the same lock (so they contend), and a semaphore
 * guards a "printer".
 */
public class PingPong {
    static final Object table = new Object();
    static boolean pingsTurn = true;
    static final Semaphore printer = new Semaphore(1);

    static void play(boolean ping, int rounds) {
        for (int i = 0; i < rounds; i++) {
            synchronized (table) {
                while (pingsTurn != ping) {
                    try {
                        table.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                pingsTurn = !ping;
                table.notifyAll();
            }
        }
    }

    static void print(String line) throws InterruptedException {
        printer.acquire();
        try {
            System.out.println(line);
        } finally {
            printer.release();
        }
    }

    public static void main(String[] args) throws Exception {
        Thread ping = new Thread(() -> play(true, 100), "ping");
        Thread pong = new Thread(() -> play(false, 100), "pong");
        Thread referee = new Thread(() -> {
            for (int i = 0; i < 200; i++) {
                synchronized (table) {
                    long until = System.nanoTime() + 100_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
            }
        }, "referee");
        ping.start();
        pong.start();
        referee.start();
        ping.join();
        pong.join();
        referee.join();
        Thread.sleep(5);
        print("game over");
    }
}
