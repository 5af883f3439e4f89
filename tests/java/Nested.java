/** Tracked calls on a receiver while the thread owns several monitors. */
public class Nested {
    public static void main(String[] args) throws Exception {
        Object a = new Object();
        Object b = new Object();
        synchronized (a) {
            synchronized (b) {
                b.notify(); // @notify-b
                a.notifyAll(); // @notify-a
                b.wait(1); // @wait-b
            }
        }
        System.out.printf("a=%08X b=%08X%n", System.identityHashCode(a), System.identityHashCode(b));
    }
}
