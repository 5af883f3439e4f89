/**
 * A synchronized method called once on each of a thousand fresh objects, nothing else
 * locked: without an agent no monitor is inflated for them.
 */
public class SyncMethods {
    private int n;

    synchronized void bump() {
        n++;
    }

    public static void main(String[] args) {
        int total = 0;
        for (int i = 0; i < 1000; i++) {
            SyncMethods s = new SyncMethods();
            s.bump();
            total += s.n;
        }
        System.out.println("total " + total);
    }
}
