import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.LockSupport;

/**
 * Objects the tools must name by class: a HashMap whose monitor "contender" blocks on (main
 * holds it until the thread is BLOCKED), and a FutureTask that main parks on in get() (the
 * task is the park's blocker) until "runner" sees main parked on it and runs the task.
 */
public class ObjectNames {
    static final Map<String, Integer> map = new HashMap<>();

    public static void main(String[] args) throws Exception {
        Thread contender = new Thread(() -> {
            synchronized (map) { // @contended
                map.put("contender", 1);
            }
        }, "contender");
        synchronized (map) {
            contender.start();
            while (contender.getState() != Thread.State.BLOCKED) {
                Thread.onSpinWait();
            }
        }
        contender.join();

        FutureTask<String> task = new FutureTask<>(() -> "done");
        Thread main = Thread.currentThread();
        Thread runner = new Thread(() -> {
            while (LockSupport.getBlocker(main) != task) {
                Thread.onSpinWait();
            }
            task.run();
        }, "runner");
        runner.start();
        String r = task.get(); // @parked
        runner.join();
        System.out.printf("%s map=%08X task=%08X%n", r, System.identityHashCode(map),
                System.identityHashCode(task));
    }
}
