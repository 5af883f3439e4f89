/** Redefined by Byte Buddy (BBRedefine) after Orca instrumented it and after it ran. */
public class BBTarget {
    static final Object lock = new Object();
    static int count;

    static void work() {
        synchronized (lock) { // @bbsync
            count++;
            lock.notify(); // @bbnotify
        }
    }
}
