/** Produces events as fast as it can: args[0] synchronized notifies on main. */
public class Flood {
    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        Object lock = new Object();
        for (int i = 0; i < n; i++) {
            synchronized (lock) {
                lock.notify();
            }
        }
        System.out.println("flood done");
    }
}
