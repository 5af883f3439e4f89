/** Runs `work` twice; with an argument, asks the other agent to retransform it in between. */
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
        if (args.length > 0) {
            Class.forName("Shift").getMethod("retransform", Class.class).invoke(null, OtherAgentTarget.class);
        }
        work();
        System.out.println("done");
    }
}
