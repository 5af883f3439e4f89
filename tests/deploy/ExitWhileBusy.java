/**
 * Threads still running synchronized code, waits and notifies while main calls System.exit:
 * their events after the agent's last write must be counted, and what was written must be a
 * valid log.
 */
public class ExitWhileBusy {
    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 3; i++) {
            Object mine = new Object();
            Thread t = new Thread(() -> {
                long n = 0;
                while (true) {
                    synchronized (mine) {
                        n++;
                        if ((n & 63) == 0) {
                            mine.notify();
                        }
                    }
                }
            }, "busy-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(300);
        System.out.println("exiting");
        System.exit(0);
    }
}
