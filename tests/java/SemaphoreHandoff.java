import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/** A semaphore hand-off whose per-thread sequences are fixed whatever the timing. */
public class SemaphoreHandoff {
    public static void main(String[] args) throws Exception {
        Semaphore s = new Semaphore(0);
        Semaphore done = new Semaphore(0);
        Thread taker = new Thread(() -> {
            try {
                s.acquire(); // @taker-acquire
            } catch (InterruptedException e) {
                return;
            }
            done.release(); // @taker-release
        }, "taker");
        taker.start();
        s.release(); // @main-release
        done.acquireUninterruptibly(); // @main-acquire
        boolean timedOut = !s.tryAcquire(20, TimeUnit.MILLISECONDS); // @main-tryacquire-timeout
        boolean none = !s.tryAcquire(); // @main-tryacquire
        taker.join();
        System.out.println("semaphore done " + timedOut + " " + none);
    }
}
