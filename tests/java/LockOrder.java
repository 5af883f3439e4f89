/**
 * Two locks taken nested by two threads that run one after the other (the second starts when
 * the first has ended), so the program never deadlocks. args[0] = "cycle": thread "A" takes
 * a then b, thread "B" takes b then a, a lock-order cycle that can deadlock when the two run
 * at the same time. "ordered": both take a then b, which cannot.
 */
public class LockOrder {
    static final Object a = new Object();
    static final Object b = new Object();
    static int counter;

    static void aThenB() {
        synchronized (a) { // @a-outer
            synchronized (b) { // @b-inner
                counter++;
            }
        }
    }

    static void bThenA() {
        synchronized (b) { // @b-outer
            synchronized (a) { // @a-inner
                counter++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        boolean cycle = args[0].equals("cycle");
        Thread first = new Thread(LockOrder::aThenB, "A");
        Runnable second = cycle ? LockOrder::bThenA : LockOrder::aThenB;
        Thread other = new Thread(second, "B");
        first.start();
        first.join();
        other.start();
        other.join();
        System.out.printf("a=%08X b=%08X counter=%d%n",
                System.identityHashCode(a), System.identityHashCode(b), counter);
    }
}
