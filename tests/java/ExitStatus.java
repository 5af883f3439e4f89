/** Takes a lock once, prints a line, and exits with the status given in args[0]. */
public class ExitStatus {
    public static void main(String[] args) {
        Object lock = new Object();
        synchronized (lock) { // @lock
            System.out.println("exiting with " + args[0]);
        }
        System.exit(Integer.parseInt(args[0]));
    }
}
