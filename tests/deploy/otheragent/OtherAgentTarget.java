/**
 * Runs `work` once, then, with an argument N, asks the other agent to retransform this class
 * N times, running `work` after each: 1 + N notify calls in all, each at the line marked.
 */
public class OtherAgentTarget {
    static final Object lock = new Object();

    static void work() {
        int x = 1;
        synchronized (lock) {
            x++;
            lock.notify(); // @notify
            x++;
        }
    }

    public static void main(String[] args) throws Exception {
        work();
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        for (int i = 0; i < rounds; i++) {
            Class.forName("Shift").getMethod("retransform", Class.class).invoke(null, OtherAgentTarget.class);
            work();
        }
        System.out.println("done");
    }
}
