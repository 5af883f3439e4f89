/** Virtual threads (JDK 21+): a synchronized counter and sleeps on 100 virtual threads. */
import java.util.concurrent.*;
public class VThreads {
    static final Object lock = new Object();
    static int counter;
    public static void main(String[] args) throws Exception {
        try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 100; i++) {
                ex.submit(() -> {
                    for (int j = 0; j < 100; j++) { synchronized (lock) { counter++; } }
                    try { Thread.sleep(1); } catch (InterruptedException e) { }
                });
            }
        }
        System.out.println("counter=" + counter);
    }
}
