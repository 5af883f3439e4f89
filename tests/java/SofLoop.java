/**
 * A recursion through nested synchronized blocks (a synchronized method and a block) into a
 * StackOverflowError, caught, args[0] times in one JVM: each overflow strikes the tracker's
 * reports at another point of a section (issue 47). Then another thread takes the monitor.
 */
public class SofLoop {
    static final Object lock = new Object();
    static int depth;
    static synchronized void recurse() {
        depth++;
        synchronized (lock) { recurse(); }
    }
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        for (int i = 0; i < n; i++) {
            try { recurse(); } catch (StackOverflowError e) { depth = 0; }
        }
        Thread t = new Thread(() -> { synchronized (lock) { System.out.println("free"); } });
        t.start(); t.join();
    }
}
