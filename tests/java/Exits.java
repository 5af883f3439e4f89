/**
 * Ends the JVM in the way args[0] names, after a known number of events (NOTIFIES notifies
 * on main): exit, exit-many, throw, halt, or wait (for SIGTERM / kill -9 from the test).
 */
public class Exits {
    static final int NOTIFIES = 2000;
    static final Object lock = new Object();

    public static void main(String[] args) throws Exception {
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                // ends the thread
            }
        }, "sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        for (int i = 0; i < NOTIFIES; i++) {
            synchronized (lock) {
                lock.notify();
            }
        }
        System.out.println("ready");
        System.out.flush();
        switch (args[0]) {
            case "exit":
                System.exit(3);
                break;
            case "exit-many": {
                Thread[] ts = new Thread[4];
                for (int i = 0; i < ts.length; i++) {
                    ts[i] = new Thread(() -> System.exit(4), "exiter-" + i);
                }
                for (Thread t : ts) t.start();
                Thread.sleep(600_000);
                break;
            }
            case "throw":
                throw new IllegalStateException("uncaught on purpose");
            case "halt":
                Runtime.getRuntime().halt(5);
                break;
            case "wait":
                Thread.sleep(600_000);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
